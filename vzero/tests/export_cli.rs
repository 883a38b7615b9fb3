//! `vzero export --format torchscript`: the traced network, loaded in Python (`.venv-py`, made
//! by scripts/setup.sh) by scripts/check_export.py, gives `vzero eval --json`'s outputs (f32
//! inference) on three positions of every built-in variant, within 1e-4; and its ONNX export
//! (when onnx and onnxruntime are installed) gives the same through onnxruntime.

mod common;

use std::path::Path;
use std::process::Command;

use common::vzero;
use vzero_rules::{Game, Variant};

#[test]
fn torchscript_export_matches_eval_in_python() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = root.join(".venv-py/bin/python");
    assert!(python.exists(), "{} missing: run scripts/setup.sh (it creates .venv-py with Python torch)", python.display());
    let dir = std::env::temp_dir().join(format!("vzero-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in vzero_rules::variant::builtin_names() {
        let ckpt = dir.join(name);
        let ckpt = ckpt.to_str().unwrap();
        let (rc, _, err) = vzero(&["init", "--variant", name, "--out", ckpt, "--blocks", "2", "--channels", "16", "--seed", "7"]);
        assert_eq!(rc, 0, "{err}");
        let net = dir.join(format!("{name}.pt"));
        let (rc, out, err) = vzero(&["export", "--model", ckpt, "--format", "torchscript", "--out", net.to_str().unwrap()]);
        assert_eq!(rc, 0, "{err}");
        assert!(out.contains("TorchScript"), "{out}");
        let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(format!("{}.json", net.display())).unwrap()).unwrap();
        assert_eq!(meta["variant"], name);
        // three positions: the start, and 7 and 20 plies into a game of spread-out moves
        let variant = Variant::builtin(name).unwrap();
        let mut jsons = Vec::new();
        for plies in [0usize, 7, 20] {
            let mut g = Game::startpos(variant);
            let mut moves = Vec::new();
            for p in 0..plies {
                let legal = g.position().legal_moves();
                let m = legal[(p * 7 + 3) % legal.len()];
                let mut next = g.clone();
                next.play(m);
                if next.result().is_over() {
                    break;
                }
                moves.push(g.position().uci(m));
                g = next;
            }
            let out = Command::new(common::BIN)
                .args(["eval", "--variant", name, "--model", ckpt, "--device", "cpu", "--json", "--moves", &moves.join(" ")])
                .env("VZERO_INFERENCE_PRECISION", "f32")
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let path = dir.join(format!("{name}-{plies}.json"));
            std::fs::write(&path, &out.stdout).unwrap();
            jsons.push(path);
        }
        let out = Command::new(&python).arg(root.join("scripts/check_export.py")).arg(&net).args(&jsons).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {text}");
        assert!(text.contains("torchscript ok"), "{name}: {text}");
        eprintln!("{name}: {}", text.trim());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
