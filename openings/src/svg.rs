//! The top lines of the tree as an SVG: one row per line (depth-first order, indented by ply,
//! rows striped), a stacked bar of White wins / draws / Black wins with each part's percentage
//! written in it when it is wide enough, and the number of games with the share of the games
//! that reached the line's parent. Checked as a picture by rasterising it (`rsvg-convert
//! tree.svg -o tree.png`, Debian's librsvg2-bin).

use std::fmt::Write as _;

use crate::tree::TreeRow;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// An SVG picture of at most `max_rows` rows.
pub fn tree_svg(rows: &[TreeRow], title: &str, max_rows: usize) -> String {
    let rows = &rows[..rows.len().min(max_rows)];
    let row_h = 22.0;
    let label_w = 360.0;
    let bar_w = 400.0;
    let top = 48.0;
    let width = label_w + bar_w + 170.0;
    let height = top + row_h * rows.len() as f64 + 40.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="monospace" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="10" y="20" font-size="15" font-weight="bold">{}</text>"#, esc(title));
    let legend = [("#f4f4f4", "White wins"), ("#9e9e9e", "draws"), ("#303030", "Black wins")];
    for (i, (c, t)) in legend.iter().enumerate() {
        let x = label_w + 10.0 + i as f64 * 120.0;
        let _ = writeln!(s, r##"<rect x="{x}" y="28" width="12" height="12" fill="{c}" stroke="#555"/><text x="{}" y="38">{t}</text>"##, x + 16.0);
    }
    let _ = writeln!(s, r##"<text x="{}" y="38" fill="#333">games · % of parent</text>"##, label_w + bar_w + 8.0);
    for (i, r) in rows.iter().enumerate() {
        let y = top + row_h * i as f64;
        if i % 2 == 1 {
            let _ = writeln!(s, r##"<rect x="0" y="{y}" width="{width}" height="{row_h}" fill="#eef2f8"/>"##);
        }
        let indent = 14.0 * (r.ply - 1) as f64;
        // the whole line at the first ply, then the move alone with its turn's number
        let label = if r.ply == 1 {
            r.line.clone()
        } else if r.mover == "black" {
            format!("{}… {}", r.turn, r.san)
        } else {
            format!("{}. {}", r.turn, r.san)
        };
        let _ = writeln!(s, r#"<text x="{}" y="{}">{}</text>"#, 10.0 + indent, y + 15.0, esc(&label));
        let g = r.games.max(1) as f64;
        let parts = [(r.white_wins, "#f4f4f4", "black"), (r.draws, "#9e9e9e", "black"), (r.black_wins, "#303030", "white")];
        let mut x = label_w;
        for (n, c, ink) in parts {
            let w = bar_w * n as f64 / g;
            if w > 0.0 {
                let _ = writeln!(s, r##"<rect x="{x:.1}" y="{:.1}" width="{w:.1}" height="{:.1}" fill="{c}" stroke="#444" stroke-width="0.8"><title>{n} of {} games</title></rect>"##, y + 3.0, row_h - 6.0, r.games);
                if w >= 34.0 {
                    let _ = writeln!(s, r#"<text x="{:.1}" y="{}" text-anchor="middle" font-size="11" fill="{ink}">{:.0}%</text>"#, x + w / 2.0, y + 15.0, 100.0 * n as f64 / g);
                }
            }
            x += w;
        }
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}">{} {} · {:.0}%</text>"#,
            label_w + bar_w + 8.0,
            y + 15.0,
            r.games,
            if r.games == 1 { "game" } else { "games" },
            100.0 * r.frequency
        );
    }
    s.push_str("</svg>\n");
    s
}
