//! `vzero nnue …`: Fairy-Stockfish NNUE nets (`HalfKAv2Variants`) for a variant: evaluate a
//! `.nnue` file exactly as Fairy-Stockfish does, write the material net, show the layout.

use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;
use vzero_nnue::{format, Arithmetic, Evaluator, FsfMapping, Network};
use vzero_rules::Variant;

use crate::cmd::rules::PositionArgs;

/// The `nnue` subcommands.
#[derive(Subcommand, Debug)]
pub enum NnueCommand {
    /// Evaluate a position with a .nnue file as Fairy-Stockfish's `eval` does; the first line is
    /// its `NNUE evaluation        +X.XX (white side)`, the second the raw integer terms.
    Eval(EvalArgs),
    /// Write a variant's material net (PSQT rows = piece values, every other weight 0): its
    /// evaluation is the material balance, to check a Fairy-Stockfish build by hand.
    Material(MaterialArgs),
    /// Show a variant's feature layout: Fairy-Stockfish piece types in plane order, features,
    /// file size, the build it needs.
    Info(InfoArgs),
}

/// How the hidden layers add (`--arithmetic`).
#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum ArithmeticArg {
    /// Fairy-Stockfish's x86 builds with SSSE3 and no VNNI (modern, avx2, bmi2, avx512).
    Ssse3,
    /// Its scalar, SSE2, NEON and VNNI builds.
    Exact,
}

/// `vzero nnue eval`.
#[derive(Args, Debug)]
pub struct EvalArgs {
    /// The .nnue file.
    #[arg(long)]
    pub net: PathBuf,
    #[command(flatten)]
    pub position: PositionArgs,
    /// Hidden-layer arithmetic of the Fairy-Stockfish build to reproduce (they differ only for
    /// nets whose sums of four products leave the 16-bit range).
    #[arg(long, value_enum, default_value = "ssse3")]
    pub arithmetic: ArithmeticArg,
}

/// `vzero nnue material`.
#[derive(Args, Debug)]
pub struct MaterialArgs {
    /// Variant name, or a path to a variant definition (.toml).
    #[arg(long)]
    pub variant: String,
    /// Output file (.nnue); its name should start with the variant's for Fairy-Stockfish.
    #[arg(long)]
    pub out: PathBuf,
}

/// `vzero nnue info`.
#[derive(Args, Debug)]
pub struct InfoArgs {
    /// Variant name, or a path to a variant definition (.toml).
    #[arg(long)]
    pub variant: String,
}

/// Runs an `nnue` subcommand.
pub fn run(c: NnueCommand) -> Result<()> {
    match c {
        NnueCommand::Eval(a) => eval(a),
        NnueCommand::Material(a) => material(a),
        NnueCommand::Info(a) => info(a),
    }
}

fn mapping(variant: &str) -> Result<FsfMapping> {
    Ok(FsfMapping::for_variant(Variant::load(variant)?)?)
}

fn eval(a: EvalArgs) -> Result<()> {
    let game = a.position.game()?;
    let pos = game.position();
    let m = FsfMapping::for_variant(pos.variant())?;
    let net = format::read_file(&a.net, &m)?;
    let arithmetic = match a.arithmetic {
        ArithmeticArg::Ssse3 => Arithmetic::Ssse3,
        ArithmeticArg::Exact => Arithmetic::Exact,
    };
    let e = Evaluator::new(m, net)?.with_arithmetic(arithmetic).evaluate(pos)?;
    println!("{}", e.fsf_line());
    println!(
        "internal {} (white side): ({} psqt + {} positional) / 16 = {} for {} to move, bucket {}",
        e.white_value(),
        e.psqt,
        e.positional,
        e.value,
        if e.side_to_move == vzero_rules::Color::White { "White" } else { "Black" },
        e.bucket.index()
    );
    if pos.is_check() {
        println!("note: the side to move is in check; Fairy-Stockfish's eval prints only \"Final evaluation: none (in check)\" here");
    }
    Ok(())
}

fn material(a: MaterialArgs) -> Result<()> {
    let m = mapping(&a.variant)?;
    let net = Network::material(&m);
    format::write_file(&a.out, &net)?;
    let size = std::fs::metadata(&a.out).with_context(|| format!("reading {}", a.out.display()))?.len();
    println!("wrote {} ({size} bytes, {} features): the {} material net", a.out.display(), m.dimensions(), m.name());
    Ok(())
}

fn info(a: InfoArgs) -> Result<()> {
    let m = mapping(&a.variant)?;
    let v = m.variant();
    let letters: Vec<String> = (0..v.pieces().len())
        .map(|pt| vzero_rules::PieceType(pt as u8))
        .map(|pt| (m.slot(pt).unwrap_or(0), pt))
        .collect::<std::collections::BTreeMap<_, _>>()
        .into_values()
        .map(|pt| {
            format!(
                "{}={}",
                v.pieces()[pt.index()].fen(vzero_rules::Color::Black),
                m.fsf_type(pt).map_or("?", |t| t.name())
            )
        })
        .collect();
    println!("variant        {}", m.name());
    println!("piece types    {} (Fairy-Stockfish order, king last)", letters.join(" "));
    println!(
        "squares        {} ({} files x {} ranks), Black's ranks {}",
        m.squares(),
        m.files(),
        m.ranks(),
        if m.flips_black() { "flipped" } else { "not flipped" }
    );
    println!(
        "hands          {}",
        if m.uses_hands() { format!("{} slots per type and colour", m.pockets()) } else { "none".into() }
    );
    println!("king blocks    {}", m.king_blocks());
    println!("features       {} ({} per king block)", m.dimensions(), m.piece_indices());
    println!("max pieces     {} (bucket = min((pieces - 1) * 8 / {}, 7))", m.max_pieces(), m.max_pieces());
    println!("file size      {} bytes (empty description)", format::file_size(m.dimensions(), 0));
    println!(
        "build          {}",
        if m.fits_standard_build() {
            "any Fairy-Stockfish build"
        } else {
            "Fairy-Stockfish built with largeboards=yes"
        }
    );
    Ok(())
}
