//! The scripts in `scripts/` are read whole before they run: bash reads a plain script as it
//! goes, so editing one during a run — a `git pull` while `scripts/nnue.sh` labels for two
//! hours — ran the rest of the new text from the old offset (it once ended a 91-minute labelling
//! run with a syntax error instead of a net). Each executed script holds its body in one `{ … }`
//! block, which bash parses to the end before running any of it.

use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// The executed scripts (those with a `#!` line; the sourced helpers have none).
fn executed_scripts() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("scripts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sh"))
        .filter(|p| std::fs::read_to_string(p).unwrap().starts_with("#!"))
        .collect();
    out.sort();
    out
}

/// The block's first line as the scripts write it (after the header comments).
fn block_opening(text: &str) -> &str {
    text.lines().skip(1).find(|l| !l.starts_with('#')).unwrap_or("")
}

#[test]
fn every_script_holds_its_body_in_one_block() {
    let scripts = executed_scripts();
    assert!(scripts.len() >= 10, "{scripts:?}");
    for p in scripts {
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(block_opening(&text).starts_with("{ "), "{}: the first line after the header must open the block", p.display());
        assert!(text.ends_with("\nexit\n}\n"), "{}: must end with `exit` and the block's `}}`", p.display());
        let out = Command::new("bash").arg("-n").arg(&p).output().unwrap();
        assert!(out.status.success(), "{}: {}", p.display(), String::from_utf8_lossy(&out.stderr));
    }
}

/// Runs a script that rewrites itself while it sleeps; returns its exit code and output.
fn run_while_rewritten(dir: &Path, text: &str) -> (Option<i32>, String) {
    let path = dir.join("s.sh");
    std::fs::write(&path, text).unwrap();
    let mut child = Command::new("bash").arg(&path).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    // once it has said its first line, bash has read what it runs before its `sleep 1` (the whole
    // block, where there is one): rewrite it then, not after a guessed delay
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut first).unwrap();
    // a different script of another length, as a pull would leave
    std::fs::write(&path, format!("#!/usr/bin/env bash\necho new-first-line\n{}\necho 'new tail' )\n", "# changed\n".repeat(3))).unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    (out.status.code(), format!("{first}{rest}{}", String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn a_script_in_the_block_runs_as_it_was_when_started() {
    let dir = std::env::temp_dir().join(format!("vzero-scripts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let opening = block_opening(&std::fs::read_to_string(Path::new(ROOT).join("scripts/nnue.sh")).unwrap()).to_string();
    let body = "set -euo pipefail\necho first\nsleep 1\necho second\n";
    // the scripts' own pattern: the old text runs to its end
    let (code, out) = run_while_rewritten(&dir, &format!("#!/usr/bin/env bash\n# header\n{opening}\n{body}exit\n}}\n"));
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(out, "first\nsecond\n");
    // without it, bash goes on reading the new text from the old offset (what the block prevents)
    let (code, out) = run_while_rewritten(&dir, &format!("#!/usr/bin/env bash\n# header\n{body}"));
    assert!(code != Some(0) || out != "first\nsecond\n", "{code:?} {out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// scripts/test.sh names every failure from cargo's own output (scripts/test-failures.sh): a
/// real `cargo test --no-fail-fast` over a scratch crate with a passing, a failing and an
/// aborting test binary, and a doc test that fails.
#[test]
fn test_failures_names_failed_tests_and_crashed_binaries_from_cargo_output() {
    let dir = tempfile::tempdir().unwrap();
    let krate = dir.path().join("scratch");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    std::fs::create_dir_all(krate.join("tests")).unwrap();
    std::fs::write(krate.join("Cargo.toml"), "[package]\nname = \"scratch-crate\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n").unwrap();
    std::fs::write(
        krate.join("src/lib.rs"),
        "/// ```\n/// assert_eq!(scratch_crate::one(), 2);\n/// ```\npub fn one() -> u32 { 1 }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn holds() {}\n    #[test]\n    fn breaks() { assert_eq!(super::one(), 2); }\n}\n",
    )
    .unwrap();
    std::fs::write(krate.join("tests/aborts.rs"), "#[test]\nfn first() {}\n#[test]\nfn dies() { std::process::abort(); }\n").unwrap();
    std::fs::write(krate.join("tests/fine.rs"), "#[test]\nfn a() {}\n#[test]\nfn b() {}\n").unwrap();
    // one file for both streams, in order, as test.sh's `2>&1 | tee` keeps them
    let log = dir.path().join("cargo.log");
    let file = std::fs::File::create(&log).unwrap();
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["test", "--offline", "--no-fail-fast", "--", "--test-threads=1"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", dir.path().join("target"))
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .status()
        .unwrap();
    assert!(!status.success());
    let summary = Command::new("bash").arg(Path::new(ROOT).join("scripts/test-failures.sh")).arg(&log).output().unwrap();
    assert!(summary.status.success(), "{}", String::from_utf8_lossy(&summary.stderr));
    let mut lines: Vec<String> = String::from_utf8_lossy(&summary.stdout).lines().map(String::from).collect();
    let passed = lines.remove(0);
    lines.sort();
    let log_text = std::fs::read_to_string(&log).unwrap();
    // holds, fine::a, fine::b (aborts' `first` ran, but its binary never printed a result)
    assert_eq!(passed, "passed 3", "{log_text}");
    assert_eq!(
        lines,
        ["failed aborts (ended without a test result: crashed or killed)", "failed scratch_crate (doc)::src/lib.rs - one (line 1)", "failed scratch_crate::tests::breaks"],
        "{log_text}"
    );
    // a missing log is refused with its usage
    let missing = Command::new("bash").arg(Path::new(ROOT).join("scripts/test-failures.sh")).arg(dir.path().join("none.log")).output().unwrap();
    assert_eq!(missing.status.code(), Some(2));
}
