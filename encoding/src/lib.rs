//! Position and move encodings for vzero's networks, generated from the variant definition.
//!
//! * [`InputEncoder`]: a position (plus its repetition count) as `C × H × W` `f32` planes, from
//!   the side to move's point of view (H = ranks, W = files).
//! * [`MoveEncoder`]: a fixed policy index space per variant covering every move any legal
//!   position can have, and the maps move ↔ index.
//!
//! Both work in the **mover's frame**: when Black is to move, ranks are flipped (rank `r`
//! becomes `ranks - 1 - r`; files are kept), so the mover always plays "up" and one index or
//! plane square means the same thing for both sides. Since armies may differ (Empire), the
//! colour of the side to move is an input plane; colour symmetry is never assumed.
//!
//! The layout is versioned by [`ENCODING_VERSION`]; [`InputEncoder::plane_names`] and
//! [`MoveEncoder::describe`] document it, and [`fingerprint`] condenses the whole layout of a
//! variant into one number that checkpoints and data files can store and compare.
//!
//! ```
//! use vzero_encoding::{InputEncoder, MoveEncoder};
//! use vzero_rules::{Game, Variant};
//! let v = Variant::builtin("empire").unwrap();
//! let (inp, mv) = (InputEncoder::new(v), MoveEncoder::new(v));
//! let game = Game::startpos(v);
//! let planes = inp.encode_game(&game);
//! assert_eq!(planes.len(), inp.num_planes() * 8 * 8);
//! let legal = mv.legal_indices(game.position());
//! assert_eq!(legal.len(), 30);
//! assert!(legal.iter().all(|&(i, _)| i < mv.len()));
//! ```

mod capture;
mod input;
mod moves;

pub use capture::CaptureMap;
pub use input::{InputEncoder, Plane};
pub use moves::{MoveEncoder, MoveEntry};

use vzero_rules::{Color, Variant};

/// Version of both encodings (plane layout and move index layout). Bump it whenever the layout
/// that a given variant definition produces changes.
pub const ENCODING_VERSION: u32 = 1;

/// A square index in the mover's frame: ranks flipped when `mover` is Black. Its own inverse.
#[inline]
pub fn frame_square(sq: usize, mover: Color, files: usize, ranks: usize) -> usize {
    match mover {
        Color::White => sq,
        Color::Black => (ranks - 1 - sq / files) * files + sq % files,
    }
}

/// A 64-bit FNV-1a hash of the encoding version, the variant name, the plane names and the
/// move index layout: equal fingerprints mean interchangeable encodings.
pub fn fingerprint(variant: Variant) -> u64 {
    let inp = InputEncoder::new(variant);
    let mv = MoveEncoder::new(variant);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |s: &str| {
        for b in s.bytes().chain(std::iter::once(0u8)) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(&ENCODING_VERSION.to_string());
    eat(variant.name());
    eat(&format!("{}x{}", variant.files(), variant.ranks()));
    for n in inp.plane_names() {
        eat(&n);
    }
    for i in 0..mv.len() {
        eat(&mv.describe(i));
    }
    h
}

pub(crate) use vzero_rules::variant::letter_list;

/// Piece type by token (`q`, `+n`).
pub(crate) fn lookup(variant: Variant, token: &str) -> Option<vzero_rules::PieceType> {
    let (promoted, rest) = match token.strip_prefix('+') {
        Some(r) => (true, r),
        None => (false, token),
    };
    let c = rest.chars().next()?;
    variant
        .pieces()
        .iter()
        .position(|p| p.letter == c && p.promoted == promoted)
        .map(|i| vzero_rules::PieceType(i as u8))
}

/// The layout of every built-in variant as Markdown: a summary table, then per variant the
/// plane table and the policy sections (the README's "Generated layout").
pub fn layout_markdown() -> String {
    use std::fmt::Write;
    use vzero_rules::variant::builtin_names;
    let mut out = String::new();
    macro_rules! w {
        ($($t:tt)*) => { writeln!(out, $($t)*).expect("writing to a String") };
    }
    w!("Encoding version {ENCODING_VERSION}.\n");
    w!("| variant | board | input planes | policy size | board moves | promotions | `+` promotions | drops | pass | fingerprint |");
    w!("|---|---|---|---|---|---|---|---|---|---|");
    for name in builtin_names() {
        let v = Variant::builtin(name).expect("built-in");
        let (inp, mv) = (InputEncoder::new(v), MoveEncoder::new(v));
        let [b, p, s, d, pass] = mv.section_sizes();
        w!(
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
        w!("\n### {name}\n");
        w!("| plane | content |\n|---|---|");
        for (i, n) in inp.plane_names().iter().enumerate() {
            w!("| {i} | {n} |");
        }
        let [b, p, s, d, pass] = mv.section_sizes();
        let mut start = 0;
        w!("\n| policy indices | section | first … last |\n|---|---|---|");
        for (label, n) in [("board moves", b), ("promotions", p), ("`+` promotions", s), ("drops", d), ("pass", pass)] {
            if n > 0 {
                w!("| {}–{} | {label} | `{}` … `{}` |", start, start + n - 1, mv.describe(start), mv.describe(start + n - 1));
            }
            start += n;
        }
    }
    out
}
