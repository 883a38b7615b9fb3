//! metrics.csv rows and the loss-curve plot (SVG: no fonts needed).

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;
use vzero_model::{AuxHeads, Losses};

/// The base columns of metrics.csv (always present, in this order).
pub const METRICS_HEADER: &str = "step,samples,generation,total_rows,window_rows,loss_total,loss_policy,loss_value,loss_moves_left,policy_entropy,value_accuracy,lr,samples_per_s,unix";

/// Number of base columns ([`METRICS_HEADER`]).
const BASE_COLUMNS: usize = 14;

/// Loss columns of the auxiliary heads: appended after the base columns, for the heads the
/// network has, in this order (so readers of the base columns are unaffected).
pub const AUX_LOSS_COLUMNS: [&str; 4] = ["loss_opponent_policy", "loss_soft_policy", "loss_short_term_value", "loss_material"];

/// Columns about external rows (imported, labelled: `[learn.external]`), appended after the
/// auxiliary losses in runs that have such rows: the rows in the external pool and their share
/// of the batches.
pub const EXTERNAL_COLUMNS: [&str; 2] = ["external_rows", "external_share"];

/// True when the metrics.csv at `path` has the [`EXTERNAL_COLUMNS`].
pub fn metrics_has_external(path: &Path) -> bool {
    fs::read_to_string(path).ok().and_then(|s| s.lines().next().map(|h| h.split(',').any(|c| c == EXTERNAL_COLUMNS[0]))).unwrap_or(false)
}

/// The auxiliary loss columns of a network with heads `aux`.
pub fn aux_loss_columns(aux: &AuxHeads) -> Vec<&'static str> {
    let has = [aux.opponent_policy, aux.soft_policy, !aux.short_term_horizons.is_empty(), aux.material];
    AUX_LOSS_COLUMNS.iter().zip(has).filter(|(_, h)| *h).map(|(c, _)| *c).collect()
}

/// The value of auxiliary loss column `column` (one of [`AUX_LOSS_COLUMNS`]) in `l`.
pub fn aux_loss(l: &Losses, column: &str) -> f64 {
    match column {
        "loss_opponent_policy" => l.opponent_policy,
        "loss_soft_policy" => l.soft_policy,
        "loss_short_term_value" => l.short_term_value,
        "loss_material" => l.material,
        _ => 0.0,
    }
}

/// The header line for rows with auxiliary loss columns `aux`.
pub fn metrics_header(aux: &[&str]) -> String {
    let mut h = String::from(METRICS_HEADER);
    for c in aux {
        h.push(',');
        h.push_str(c);
    }
    h
}

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
    /// Mean losses of the auxiliary heads the network has, as (column, value), in
    /// [`AUX_LOSS_COLUMNS`] order, then the [`EXTERNAL_COLUMNS`] in runs with external rows;
    /// written after the base columns.
    pub aux_losses: Vec<(&'static str, f64)>,
}

impl MetricsRow {
    /// The row as one CSV line (no newline): the base columns, then the auxiliary losses.
    pub fn to_csv(&self) -> String {
        let mut line = format!(
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
        );
        for (_, v) in &self.aux_losses {
            line.push_str(&format!(",{v:.6}"));
        }
        line
    }

    /// Parses a line of the base columns only (see [`MetricsRow::parse_with`]).
    pub fn parse(line: &str) -> Option<MetricsRow> {
        Self::parse_with(line, &[])
    }

    /// Parses a line whose columns after the base ones are the auxiliary loss columns `aux`
    /// (from the file's header); None when the line does not have exactly those columns.
    pub fn parse_with(line: &str, aux: &[&'static str]) -> Option<MetricsRow> {
        let f: Vec<&str> = line.trim().split(',').collect();
        if f.len() != BASE_COLUMNS + aux.len() {
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
            aux_losses: aux.iter().enumerate().map(|(k, &c)| Some((c, x(BASE_COLUMNS + k)?))).collect::<Option<_>>()?,
        })
    }
}

/// Reads metrics.csv (missing file = no rows; unparsable lines, and auxiliary columns this
/// version does not know, are skipped).
pub fn read_metrics(path: &Path) -> Result<Vec<MetricsRow>> {
    match fs::read_to_string(path) {
        Ok(s) => {
            let mut lines = s.lines();
            let header: Vec<&str> = lines.next().unwrap_or_default().trim().split(',').collect();
            let extra = header.get(BASE_COLUMNS..).unwrap_or_default();
            let aux: Vec<&'static str> =
                extra.iter().filter_map(|c| AUX_LOSS_COLUMNS.iter().chain(&EXTERNAL_COLUMNS).find(|k| *k == c).copied()).collect();
            if aux.len() != extra.len() {
                // Unknown columns: keep the base columns of each line.
                return Ok(lines.filter_map(|l| MetricsRow::parse(&l.split(',').take(BASE_COLUMNS).collect::<Vec<_>>().join(","))).collect());
            }
            Ok(lines.filter_map(|l| MetricsRow::parse_with(l, &aux)).collect())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Rewrites metrics.csv with `rows` (atomic: tmp + rename), with auxiliary loss columns `aux`.
pub(crate) fn rewrite_metrics(path: &Path, rows: &[MetricsRow], aux: &[&str]) -> Result<()> {
    let mut s = metrics_header(aux);
    s.push('\n');
    for r in rows {
        s.push_str(&r.to_csv());
        s.push('\n');
    }
    Ok(vzero_base::write_atomic(path, s.as_bytes())?)
}

/// Appends `row` to metrics.csv (with a header naming its columns when the file is new).
pub(crate) fn append_metrics(path: &Path, row: &MetricsRow) -> Result<()> {
    let aux: Vec<&str> = row.aux_losses.iter().map(|(c, _)| *c).collect();
    Ok(vzero_data::metrics::append_csv_row(path, &metrics_header(&aux), &row.to_csv())?)
}

/// Draws total/policy/value/moves-left losses (and those of the auxiliary heads, thinner) and
/// value accuracy against the step into an SVG file (atomically).
pub fn draw_plot(path: &Path, rows: &[MetricsRow]) -> Result<()> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        let (top, bottom) = root.split_vertically(380);
        let max_step = rows.iter().map(|r| r.step).max().unwrap_or(1).max(1) as f64;
        let series: [(&str, RGBColor, fn(&MetricsRow) -> f64); 4] = [
            ("total", BLACK, |r| r.loss_total),
            ("policy", BLUE, |r| r.loss_policy),
            ("value (W/D/L)", RED, |r| r.loss_value),
            ("moves left", GREEN, |r| r.loss_moves_left),
        ];
        let max_loss = rows
            .iter()
            .map(|r| r.aux_losses.iter().filter(|a| a.0.starts_with("loss_")).map(|a| a.1).fold(r.loss_total.max(r.loss_policy).max(r.loss_value), f64::max))
            .fold(0.0f64, f64::max)
            .max(1e-3)
            * 1.05;
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
        let aux_colors = [RGBColor(230, 140, 0), RGBColor(0, 170, 170), RGBColor(150, 80, 200), RGBColor(120, 120, 120)];
        let columns: Vec<&'static str> =
            rows.last().map(|r| r.aux_losses.iter().map(|a| a.0).filter(|c| c.starts_with("loss_")).collect()).unwrap_or_default();
        for (name, color) in columns.into_iter().zip(aux_colors) {
            let points = rows.iter().filter_map(|r| r.aux_losses.iter().find(|a| a.0 == name).map(|a| (r.step as f64, a.1)));
            chart
                .draw_series(LineSeries::new(points, color.stroke_width(1)))
                .map_err(|e| anyhow::anyhow!("plot: {e}"))?
                .label(name.trim_start_matches("loss_").replace('_', " "))
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
    Ok(vzero_base::write_atomic(path, svg.as_bytes())?)
}
