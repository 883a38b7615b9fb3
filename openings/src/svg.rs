//! The top lines of the tree as an SVG: one row per line (depth-first order, indented by ply),
//! a stacked bar of White wins / draws / Black wins and the number of games.

use std::fmt::Write as _;

use crate::tree::{numbered_line, TreeRow};

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// An SVG picture of at most `max_rows` rows.
pub fn tree_svg(rows: &[TreeRow], title: &str, max_rows: usize) -> String {
    let rows = &rows[..rows.len().min(max_rows)];
    let row_h = 22.0;
    let label_w = 360.0;
    let bar_w = 420.0;
    let top = 48.0;
    let width = label_w + bar_w + 120.0;
    let height = top + row_h * rows.len() as f64 + 40.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="monospace" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="10" y="20" font-size="15" font-weight="bold">{}</text>"#, esc(title));
    let legend = [("#f0f0f0", "White wins"), ("#9e9e9e", "draws"), ("#303030", "Black wins")];
    for (i, (c, t)) in legend.iter().enumerate() {
        let x = label_w + 10.0 + i as f64 * 120.0;
        let _ = writeln!(s, r##"<rect x="{x}" y="28" width="12" height="12" fill="{c}" stroke="#555"/><text x="{}" y="38">{t}</text>"##, x + 16.0);
    }
    for (i, r) in rows.iter().enumerate() {
        let y = top + row_h * i as f64;
        let indent = 14.0 * (r.ply - 1) as f64;
        let label = if r.ply == 1 { numbered_line(&r.line_san) } else {
            // the move with its number only
            let full = numbered_line(&r.line_san);
            let prefix = numbered_line(&r.line_san[..r.ply - 1]);
            let last = full[prefix.len()..].trim().to_string();
            if r.ply % 2 == 0 { format!("{}… {last}", r.ply.div_ceil(2)) } else { last }
        };
        let _ = writeln!(s, r#"<text x="{}" y="{}">{}</text>"#, 10.0 + indent, y + 15.0, esc(&label));
        let g = r.games.max(1) as f64;
        let parts = [(r.white_wins, "#f0f0f0"), (r.draws, "#9e9e9e"), (r.black_wins, "#303030")];
        let mut x = label_w;
        for (n, c) in parts {
            let w = bar_w * n as f64 / g;
            if w > 0.0 {
                let _ = writeln!(s, r##"<rect x="{x:.1}" y="{:.1}" width="{w:.1}" height="{:.1}" fill="{c}" stroke="#555" stroke-width="0.5"><title>{n} of {} games</title></rect>"##, y + 3.0, row_h - 6.0, r.games);
            }
            x += w;
        }
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}">{} ({:.0}%)</text>"#,
            label_w + bar_w + 8.0,
            y + 15.0,
            r.games,
            100.0 * r.frequency
        );
    }
    s.push_str("</svg>\n");
    s
}
