//! Prints the encoding layout of every built-in variant as Markdown (used for the README):
//! `cargo run -p vzero-encoding --example layout`.

use vzero_encoding::{fingerprint, InputEncoder, MoveEncoder, ENCODING_VERSION};
use vzero_rules::variant::builtin_names;
use vzero_rules::Variant;

fn main() {
    println!("Encoding version {ENCODING_VERSION}.\n");
    println!("| variant | board | input planes | policy size | board moves | promotions | `+` promotions | drops | pass | fingerprint |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for name in builtin_names() {
        let v = Variant::builtin(name).expect("built-in");
        let (inp, mv) = (InputEncoder::new(v), MoveEncoder::new(v));
        let [b, p, s, d, pass] = mv.section_sizes();
        println!(
            "| {name} | {}×{} | {} | {} | {b} | {p} | {s} | {d} | {pass} | `{:016x}` |",
            v.files(),
            v.ranks(),
            inp.num_planes(),
            mv.len(),
            fingerprint(v)
        );
    }
    for name in builtin_names() {
        let v = Variant::builtin(name).expect("built-in");
        let inp = InputEncoder::new(v);
        let mv = MoveEncoder::new(v);
        println!("\n### {name}\n");
        println!("| plane | content |\n|---|---|");
        for (i, n) in inp.plane_names().iter().enumerate() {
            println!("| {i} | {n} |");
        }
        let [b, p, s, d, pass] = mv.section_sizes();
        let mut start = 0;
        println!("\n| policy indices | section | first … last |\n|---|---|---|");
        for (label, n) in [("board moves", b), ("promotions", p), ("`+` promotions", s), ("drops", d), ("pass", pass)] {
            if n > 0 {
                println!("| {}–{} | {label} | `{}` … `{}` |", start, start + n - 1, mv.describe(start), mv.describe(start + n - 1));
            }
            start += n;
        }
    }
}
