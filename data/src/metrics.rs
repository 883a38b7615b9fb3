//! A run's metrics files: CSV rows appended under a header, and line charts of their columns
//! (SVG, no fonts needed). The learner's `metrics.csv` and `vzero nnue train`'s both go through
//! here, as do their plots; every chart is written atomically.

use std::io::Write;
use std::path::Path;

use plotters::prelude::*;

use crate::error::{io_err, DataError, Result};

/// Appends `line` to the CSV file at `path`, with `header` first when the file is new or empty.
/// One write per call, so a reader never sees half a row.
pub fn append_csv_row(path: &Path, header: &str, line: &str) -> Result<()> {
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(io_err(path))?;
    let new = f.metadata().map_err(io_err(path))?.len() == 0;
    let text = if new { format!("{header}\n{line}\n") } else { format!("{line}\n") };
    f.write_all(text.as_bytes()).map_err(io_err(path))
}

/// One named series of (x, y) points.
pub type Series<'a> = (&'a str, Vec<(f64, f64)>);

/// Draws `series` as lines on one chart (x from 0, y from 0, legend) into the SVG file `path`,
/// atomically. Non-finite points are left out.
pub fn draw_lines(path: &Path, title: &str, x_desc: &str, y_desc: &str, series: &[Series]) -> Result<()> {
    let finite = |s: &Vec<(f64, f64)>| s.iter().copied().filter(|p| p.0.is_finite() && p.1.is_finite()).collect::<Vec<_>>();
    let series: Vec<Series> = series.iter().map(|(n, s)| (*n, finite(s))).collect();
    let max_x = series.iter().flat_map(|s| s.1.iter().map(|p| p.0)).fold(1.0f64, f64::max);
    let max_y = series.iter().flat_map(|s| s.1.iter().map(|p| p.1)).fold(1e-6f64, f64::max) * 1.05;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 420)).into_drawing_area();
        let err = |e: &dyn std::fmt::Display| DataError::Invalid { path: path.to_path_buf(), msg: format!("plot: {e}") };
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..max_x, 0f64..max_y)
            .map_err(|e| err(&e))?;
        chart.configure_mesh().x_desc(x_desc).y_desc(y_desc).draw().map_err(|e| err(&e))?;
        let colors = [BLUE, RED, GREEN, BLACK, MAGENTA];
        for ((name, points), color) in series.into_iter().zip(colors.into_iter().cycle()) {
            chart
                .draw_series(LineSeries::new(points, color.stroke_width(2)))
                .map_err(|e| err(&e))?
                .label(name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        }
        chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw().map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(vzero_base::write_atomic(path, svg.as_bytes())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_append_under_one_header_and_charts_are_whole_svg() {
        let dir = std::env::temp_dir().join(format!("vzero-metrics-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let csv = dir.join("metrics.csv");
        append_csv_row(&csv, "step,loss", "1,0.5").unwrap();
        append_csv_row(&csv, "step,loss", "2,0.4").unwrap();
        assert_eq!(std::fs::read_to_string(&csv).unwrap(), "step,loss\n1,0.5\n2,0.4\n");
        let svg = dir.join("loss.svg");
        draw_lines(&svg, "loss", "step", "loss", &[("training", vec![(1.0, 0.5), (2.0, f64::NAN), (3.0, 0.3)]), ("validation", vec![])]).unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>") && text.contains("validation"), "{text}");
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(draw_lines(&dir.join("missing/x.svg"), "t", "x", "y", &[]).unwrap_err().to_string().contains("missing"));
    }
}
