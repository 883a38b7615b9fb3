//! `vzero init`, `vzero eval` and `vzero search --model`: a fresh network end to end, and the
//! checks that refuse a checkpoint of another variant or a damaged one.

use std::process::Command;

fn vzero(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_vzero")).args(args).output().expect("run vzero");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn init_eval_and_search_with_a_network() {
    let dir = std::env::temp_dir().join(format!("vzero-net-cli-{}", std::process::id()));
    let stem = dir.join("nets/empire0");
    let stem = stem.to_str().unwrap();
    let (code, out, err) = vzero(&["init", "--variant", "empire", "--out", stem, "--blocks", "2", "--channels", "16"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("parameters"));
    let (code, out, err) = vzero(&["eval", "--variant", "empire", "--model", stem, "--top", "30", "--device", "cpu"]);
    assert_eq!(code, 0, "{err}");
    // model, fen, the network's W/D/L, the search's (with the knowledge blend), the column heads
    let probs: Vec<f32> = out.lines().skip(5).map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap()).collect();
    assert_eq!(probs.len(), 30, "all 30 legal moves listed");
    assert!((probs.iter().sum::<f32>() - 1.0).abs() < 1e-3, "policy over legal moves sums to 1");
    assert!(out.lines().nth(2).unwrap().starts_with("wdl network "), "{out}");
    let wdl: Vec<f32> = out.lines().nth(2).unwrap().split_whitespace().skip(2).take(3).map(|x| x.parse().unwrap()).collect();
    assert!((wdl.iter().sum::<f32>() - 1.0).abs() < 1e-3);
    let (code, out, err) = vzero(&["search", "--variant", "empire", "--model", stem, "--sims", "50", "--device", "cpu"]);
    assert_eq!(code, 0, "{err}");
    let best = out.lines().last().unwrap().strip_prefix("bestmove ").unwrap().to_string();
    let (_, moves, _) = vzero(&["moves", "--variant", "empire"]);
    assert!(moves.lines().any(|m| m == best));
    // Another variant's checkpoint is refused, naming the mismatch.
    let (code, _, err) = vzero(&["eval", "--variant", "shogun", "--model", stem]);
    assert_ne!(code, 0);
    assert!(err.contains("variant") && err.contains("empire") && err.contains("shogun"), "{err}");
    // A truncated weights file is refused.
    let weights = format!("{stem}.safetensors");
    let bytes = std::fs::read(&weights).unwrap();
    std::fs::write(&weights, &bytes[..bytes.len() / 2]).unwrap();
    let (code, _, err) = vzero(&["eval", "--variant", "empire", "--model", stem]);
    assert_ne!(code, 0);
    assert!(err.contains("truncated"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
