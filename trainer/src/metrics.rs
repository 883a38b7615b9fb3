//! metrics.csv rows and the loss-curve plot (SVG: no fonts needed).

use std::fs;
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;

pub const METRICS_HEADER: &str = "step,samples,generation,total_rows,window_rows,loss_total,loss_policy,loss_value,loss_moves_left,policy_entropy,value_accuracy,lr,samples_per_s,unix";

/// One metrics.csv row. Losses are means over the steps since the previous row; entropy (nats,
/// of the network's policy) and value accuracy (argmax W/D/L prediction = argmax target) are
/// measured on the last batch with an eval-mode forward pass.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricsRow {
    pub step: u64,
    pub samples: u64,
    pub generation: u64,
    pub total_rows: u64,
    pub window_rows: u64,
    pub loss_total: f64,
    pub loss_policy: f64,
    pub loss_value: f64,
    pub loss_moves_left: f64,
    pub policy_entropy: f64,
    pub value_accuracy: f64,
    pub lr: f64,
    pub samples_per_s: f64,
    pub unix: u64,
}

impl MetricsRow {
    pub fn to_csv(&self) -> String {
        format!(
            "{},{},{},{},{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.4},{:.6e},{:.1},{}",
            self.step,
            self.samples,
            self.generation,
            self.total_rows,
            self.window_rows,
            self.loss_total,
            self.loss_policy,
            self.loss_value,
            self.loss_moves_left,
            self.policy_entropy,
            self.value_accuracy,
            self.lr,
            self.samples_per_s,
            self.unix
        )
    }

    pub fn parse(line: &str) -> Option<MetricsRow> {
        let f: Vec<&str> = line.trim().split(',').collect();
        if f.len() != 14 {
            return None;
        }
        let u = |i: usize| f[i].parse::<u64>().ok();
        let x = |i: usize| f[i].parse::<f64>().ok();
        Some(MetricsRow {
            step: u(0)?,
            samples: u(1)?,
            generation: u(2)?,
            total_rows: u(3)?,
            window_rows: u(4)?,
            loss_total: x(5)?,
            loss_policy: x(6)?,
            loss_value: x(7)?,
            loss_moves_left: x(8)?,
            policy_entropy: x(9)?,
            value_accuracy: x(10)?,
            lr: x(11)?,
            samples_per_s: x(12)?,
            unix: u(13)?,
        })
    }
}

/// Reads metrics.csv (missing file = no rows; unparsable lines are skipped).
pub fn read_metrics(path: &Path) -> Result<Vec<MetricsRow>> {
    match fs::read_to_string(path) {
        Ok(s) => Ok(s.lines().skip(1).filter_map(MetricsRow::parse).collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Rewrites metrics.csv with `rows` (atomic: tmp + rename).
pub(crate) fn rewrite_metrics(path: &Path, rows: &[MetricsRow]) -> Result<()> {
    let mut s = String::from(METRICS_HEADER);
    s.push('\n');
    for r in rows {
        s.push_str(&r.to_csv());
        s.push('\n');
    }
    let tmp = path.with_extension(format!("csv.{}.tmp", std::process::id()));
    fs::write(&tmp, s).with_context(|| format!("writing {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))?;
    Ok(())
}

pub(crate) fn append_metrics(path: &Path, row: &MetricsRow) -> Result<()> {
    let new = !path.exists();
    let mut f = fs::OpenOptions::new().create(true).append(true).open(path).with_context(|| format!("opening {}", path.display()))?;
    if new {
        writeln!(f, "{METRICS_HEADER}")?;
    }
    writeln!(f, "{}", row.to_csv()).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// Draws total/policy/value(/moves-left) losses and value accuracy against the step into an
/// SVG file (written to a temporary file, then renamed).
pub fn draw_plot(path: &Path, rows: &[MetricsRow]) -> Result<()> {
    let tmp = path.with_extension(format!("svg.{}.tmp", std::process::id()));
    {
        let root = SVGBackend::new(&tmp, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        let (top, bottom) = root.split_vertically(380);
        let max_step = rows.iter().map(|r| r.step).max().unwrap_or(1).max(1) as f64;
        let series: [(&str, RGBColor, fn(&MetricsRow) -> f64); 4] = [
            ("total", BLACK, |r| r.loss_total),
            ("policy", BLUE, |r| r.loss_policy),
            ("value (W/D/L)", RED, |r| r.loss_value),
            ("moves left", GREEN, |r| r.loss_moves_left),
        ];
        let max_loss = rows.iter().map(|r| r.loss_total.max(r.loss_policy).max(r.loss_value)).fold(0.0f64, f64::max).max(1e-3) * 1.05;
        let mut chart = ChartBuilder::on(&top)
            .caption("training losses", ("sans-serif", 20))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(0f64..max_step, 0f64..max_loss)
            .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        chart.configure_mesh().x_desc("step").y_desc("loss").draw().map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        for (name, color, f) in series {
            chart
                .draw_series(LineSeries::new(rows.iter().map(|r| (r.step as f64, f(r))), color.stroke_width(2)))
                .map_err(|e| anyhow::anyhow!("plot: {e}"))?
                .label(name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        let mut acc = ChartBuilder::on(&bottom)
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(0f64..max_step, 0f64..1f64)
            .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        acc.configure_mesh().x_desc("step").y_desc("value acc.").draw().map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        acc.draw_series(LineSeries::new(rows.iter().map(|r| (r.step as f64, r.value_accuracy)), MAGENTA.stroke_width(2)))
            .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        root.present().map_err(|e| anyhow::anyhow!("plot: {e}"))?;
    }
    fs::rename(&tmp, path).with_context(|| format!("renaming plot to {}", path.display()))?;
    Ok(())
}
