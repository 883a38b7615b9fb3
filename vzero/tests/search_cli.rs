//! `vzero search`: output shape and one-line errors for bad input.

use std::process::Command;

fn vzero(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_vzero")).args(args).output().expect("run vzero");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn prints_moves_then_bestmove_last() {
    for extra in [&[][..], &["--gumbel"][..], &["--eval", "rollout"][..], &["--eval", "uniform"][..]] {
        let mut args = vec!["search", "--variant", "shogun", "--fen", "6rk/6pp/8/6N1/8/8/8/4K3[] w - - 0 1", "--sims", "400"];
        args.extend_from_slice(extra);
        let (rc, out, err) = vzero(&args);
        assert_eq!(rc, 0, "{err}");
        let last = out.lines().last().unwrap();
        assert!(last == "bestmove g5f7" || last == "bestmove g5f7+", "{extra:?}: {out}");
        // One row per legal move; the mate in one is proven before any simulation.
        let rows: Vec<&str> =
            out.lines().filter(|l| l.starts_with(|c: char| c.is_ascii_lowercase()) && l.split_whitespace().count() == 6).skip(1).collect();
        assert!(out.contains("\nmove ") && out.lines().any(|l| l.starts_with("move ") && l.ends_with(" proof")), "{out}");
        assert!(rows.len() > 10, "{out}");
        assert!(out.lines().any(|l| l.starts_with("root value +1.0000 ") && l.ends_with(" proven win in 1 ply")), "{out}");
        // Nf7# and its promoting twin Nf7+# are both marked, nothing else is proven.
        let won: Vec<&&str> = rows.iter().filter(|r| r.ends_with(" win:1")).collect();
        assert!(!won.is_empty() && won.iter().all(|r| r.starts_with("g5f7")), "{out}");
        assert_eq!(rows.iter().filter(|r| r.ends_with(" -")).count(), rows.len() - won.len(), "{out}");
    }
}

#[test]
fn prints_proven_losses_and_draws() {
    // Every king move reaches the 50-move limit: a proven draw in one ply, each move marked.
    let (rc, out, err) = vzero(&["search", "--variant", "empire", "--fen", "4k3/8/8/8/8/8/8/3K4 w - - 99 80", "--sims", "50"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.lines().any(|l| l.starts_with("root value +0.0000 ") && l.ends_with(" proven draw in 1 ply")), "{out}");
    let rows: Vec<&str> = out.lines().filter(|l| l.split_whitespace().count() == 6 && l.starts_with("d1")).collect();
    assert!(!rows.is_empty() && rows.iter().all(|r| r.ends_with(" draw:1")), "{out}");
}

#[test]
fn bad_input_is_a_one_line_error() {
    let cases: &[&[&str]] = &[
        &["search", "--variant", "nope", "--sims", "10"],
        &["search", "--sims", "0"],
        &["search", "--fen", "xyz", "--sims", "10"],
        &["search", "--moves", "e2e5", "--sims", "10"],
        &["search", "--moves", "zz", "--sims", "10"],
        &["search", "--sims", "10", "--model", "net.pt"],
        &["search", "--variant", "empire", "--fen", "k7/2K5/S7/8/8/8/8/8 b - - 0 1", "--sims", "10"],
    ];
    for args in cases {
        let (rc, out, err) = vzero(args);
        assert_eq!(rc, 1, "{args:?}: {out} {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(!err.contains("panicked"));
    }
    let (_, _, err) = vzero(&["search", "--sims", "10", "--model", "net.pt"]);
    assert!(err.contains("net.pt") && err.contains("No such file"), "{err}");
}
