//! Every row of the Fairy-Stockfish oracle in `../shared/oracle/`: perft counts and game results.
//!
//! Perft rows up to `VZERO_PERFT_MAX` nodes run (default 50,000,000: all of them); set it lower
//! for a quick run.

use std::path::PathBuf;
use vzero_rules::{Game, Position, Variant};

fn oracle_dir() -> PathBuf {
    match std::env::var("VZERO_SHARED") {
        Ok(d) => PathBuf::from(d).join("oracle"),
        Err(_) => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/oracle"),
    }
}

fn read_csv(name: &str) -> Vec<Vec<String>> {
    let path = oracle_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines().skip(1).filter(|l| !l.trim().is_empty()).map(|l| l.split(',').map(str::to_string).collect()).collect()
}

fn perft_rows(variant: &str) {
    let v = Variant::builtin(variant).unwrap();
    let max: u64 = std::env::var("VZERO_PERFT_MAX").ok().and_then(|s| s.parse().ok()).unwrap_or(50_000_000);
    let rows = read_csv(&format!("{variant}-perft.csv"));
    assert!(rows.len() > 100, "oracle file too short");
    let mut failures = Vec::new();
    let mut run = 0;
    for row in &rows {
        let (fen, depth, nodes): (&str, u32, u64) = (&row[0], row[1].parse().unwrap(), row[2].parse().unwrap());
        if nodes > max {
            continue;
        }
        run += 1;
        let pos = Position::from_fen(v, fen).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(pos.fen(), fen, "FEN round trip");
        let got = pos.perft(depth);
        if got != nodes {
            failures.push(format!("{fen} depth {depth}: expected {nodes}, got {got}"));
        }
    }
    assert!(failures.is_empty(), "{} of {run} perft rows wrong:\n{}", failures.len(), failures.join("\n"));
    eprintln!("{variant}: {run} perft rows matched");
}

fn result_rows(variant: &str) {
    let v = Variant::builtin(variant).unwrap();
    let rows = read_csv(&format!("{variant}-results.csv"));
    assert!(rows.len() > 10);
    let mut failures = Vec::new();
    for row in &rows {
        let (fen, moves, result, reason) = (&row[0], &row[1], &row[2], &row[3]);
        let mut game = Game::from_fen(v, fen).unwrap();
        for m in moves.split_whitespace() {
            game.play_uci(m).unwrap_or_else(|e| panic!("{e} (row {fen} / {moves})"));
        }
        let got = game.result().to_string();
        let want = format!("{result} {reason}");
        if got != want {
            failures.push(format!("{fen} + [{moves}]: expected {want}, got {got}"));
        }
    }
    assert!(failures.is_empty(), "{} result rows wrong:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn empire_perft() {
    perft_rows("empire");
}

#[test]
fn shogun_perft() {
    perft_rows("shogun");
}

#[test]
fn empire_results() {
    result_rows("empire");
}

#[test]
fn shogun_results() {
    result_rows("shogun");
}
