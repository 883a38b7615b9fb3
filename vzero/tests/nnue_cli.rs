//! `vzero nnue`: the material net written and evaluated end to end with Fairy-Stockfish's
//! known answers, and one-line refusals.

use std::process::Command;

fn vzero(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_vzero")).args(args).output().expect("run vzero");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn material_net_gives_fairy_stockfish_s_eval() {
    let dir = std::env::temp_dir().join(format!("vzero-nnue-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let empire = dir.join("empire-material.nnue");
    let empire = empire.to_str().unwrap();
    let (code, out, err) = vzero(&["nnue", "material", "--variant", "empire", "--out", empire]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("86016 features"), "{out}");
    let (code, out, err) = vzero(&["nnue", "eval", "--net", empire, "--variant", "empire"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().next(), Some("NNUE evaluation        +6.64 (white side)"));
    assert!(out.lines().nth(1).unwrap().starts_with("internal 1381 (white side)"), "{out}");
    let shogun = dir.join("shogun-material.nnue");
    let shogun = shogun.to_str().unwrap();
    let (code, _, err) = vzero(&["nnue", "material", "--variant", "shogun", "--out", shogun]);
    assert_eq!(code, 0, "{err}");
    let fen = "1nb+fkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB+FKBNR[RR] b Kk - 0 1";
    let (code, out, err) = vzero(&["nnue", "eval", "--net", shogun, "--variant", "shogun", "--fen", fen]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().next(), Some("NNUE evaluation        +18.40 (white side)"));
    // Another variant's file, a variant Fairy-Stockfish cannot hold: one line, non-zero exit.
    let (code, _, err) = vzero(&["nnue", "eval", "--net", shogun, "--variant", "empire"]);
    assert_eq!(code, 1);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("not a net for empire") && err.contains("a net for shogun"), "{err}");
    let (code, _, err) = vzero(&["nnue", "info", "--variant", "spqr"]);
    assert_eq!(code, 1);
    assert_eq!(err.trim(), "error: variant 'spqr' cannot have a Fairy-Stockfish net: its board has 12 ranks; Fairy-Stockfish holds at most 12 files and 10 ranks");
    std::fs::remove_dir_all(&dir).unwrap();
}
