//! A randomized campaign against bad input (issue 35): the UCI server fed random and mutated
//! command streams (pychess's and variantfishtest's real sequences with numbers, option names
//! and FENs mutated, plus noise), the command line fed random arguments, and damaged run
//! directories read by every read-only command. Asserted for every input: no panic, no hang (a
//! bounded time), errors as one `error:`/`info string error:` line, bounded output lines, and a
//! run directory unchanged by commands that only read.
//!
//! The short form runs in `cargo test` (`scripts/test.sh`); the long one by hand:
//! `VZERO_CAMPAIGN=20 cargo test --release -p vzero --test campaign -- --nocapture` multiplies
//! the case counts by 20. Each test prints how many inputs it tried (docs/reliability.md).

mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{copy_dir, latest_checkpoint, snapshot, tiny_run as pristine_run, BIN};

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// Case-count multiplier: `VZERO_CAMPAIGN` (default 1).
fn scale() -> usize {
    std::env::var("VZERO_CAMPAIGN").ok().and_then(|v| v.parse().ok()).unwrap_or(1).max(1)
}

/// Seed: `VZERO_CAMPAIGN_SEED`, else a fixed one (a failure prints the seed and case).
fn seed() -> u64 {
    std::env::var("VZERO_CAMPAIGN_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(35)
}

/// What a process did: exit code (None: killed at the deadline), stdout, stderr.
struct Outcome {
    code: Option<i32>,
    out: String,
    err: String,
}

/// Runs `vzero args` with `input` on stdin, killed after `limit`.
fn run(args: &[String], input: &str, limit: Duration) -> Outcome {
    let mut child = Command::new(BIN).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("run vzero");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_string();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let mut out_pipe = child.stdout.take().unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out_pipe.read_to_end(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err_pipe.read_to_end(&mut s);
        s
    });
    let t0 = Instant::now();
    let code = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st.code();
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let _ = writer.join();
    let out = String::from_utf8_lossy(&out_t.join().unwrap()).into_owned();
    let err = String::from_utf8_lossy(&err_t.join().unwrap()).into_owned();
    Outcome { code, out, err }
}

/// The properties every case must have.
fn check(what: &str, o: &Outcome, codes: &[i32]) {
    let code = o.code.unwrap_or_else(|| panic!("{what}: no exit within the time limit (a hang); stderr: {}", tail(&o.err)));
    assert!(!o.err.contains("panicked") && !o.out.contains("panicked"), "{what}: a panic: {}", tail(&o.err));
    assert!(codes.contains(&code), "{what}: exit {code}; stderr: {}", tail(&o.err));
    if code != 0 {
        let first = o.err.lines().find(|l| !l.starts_with("warning:") && !l.starts_with("note:")).unwrap_or("");
        assert!(first.starts_with("error: "), "{what}: exit {code} without an error line first: {}", tail(&o.err));
    }
    for l in o.err.lines().chain(o.out.lines()) {
        assert!(l.len() <= 2000, "{what}: an output line of {} bytes: {}…", l.len(), &l[..200]);
    }
}

fn tail(s: &str) -> String {
    let t: Vec<&str> = s.lines().rev().take(6).collect();
    t.into_iter().rev().collect::<Vec<_>>().join(" | ")
}

// ---------------------------------------------------------------- UCI command streams

/// Real sequences: pychess's analysis client (fairyfishnet) and variantfishtest.
const SCRIPTS: &[&[&str]] = &[
    &[
        "uci",
        "setoption name UCI_Variant value empire",
        "setoption name Threads value 1",
        "setoption name Hash value 16",
        "setoption name Skill Level value 5",
        "setoption name UCI_ShowWDL value true",
        "isready",
        "ucinewgame",
        "position startpos moves e3e4 e7e5",
        "go movetime 50 depth 3",
        "isready",
    ],
    &[
        "uci",
        "setoption name UCI_Variant value shogun",
        "setoption name MultiPV value 3",
        "isready",
        "position fen rnb+fkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1 moves e2e4",
        "go nodes 200",
        "stop",
        "position startpos",
        "go wtime 1000 btime 1000 winc 10 binc 10",
    ],
    &["uci", "isready", "ucinewgame", "position startpos", "go infinite", "stop", "go ponder nodes 50", "ponderhit", "d", "quit"],
];

/// A random token: numbers at the edges, option names, FEN fragments, noise.
fn noise(rng: &mut StdRng) -> String {
    let pool: &[&str] = &[
        "-1", "0", "-100", "abc", "99999999999999999999", "1e9", "", " ", "value", "name", "<empty>", "fen", "moves", "startpos", "e3e4", "a1a1", "zz",
        "h8h7", "P@e4", "+", "[", "]", "8/8/8/8/8/8/8/8", "Skill Level", "ModelPath", "/nonexistent", "UCI_Variant", "spqr", "nosuch", "true", "maybe",
        "nodes", "depth", "movetime", "wtime", "searchmoves", "infinite", "\u{1F600}", "\t",
    ];
    match rng.gen_range(0..10) {
        0 => rng.gen_range(i64::MIN / 2..i64::MAX / 2).to_string(),
        1 => (0..rng.gen_range(1..40)).map(|_| rng.gen_range(b'!'..=b'~') as char).collect(),
        2 => "x".repeat(rng.gen_range(1..20_000)),
        _ => pool.choose(rng).unwrap().to_string(),
    }
}

/// Mutates one command of a real sequence: a number, a word, or a whole new token.
fn mutate(line: &str, rng: &mut StdRng) -> String {
    let mut toks: Vec<String> = line.split(' ').map(str::to_string).collect();
    for _ in 0..rng.gen_range(1..3) {
        let i = rng.gen_range(0..toks.len().max(1));
        match rng.gen_range(0..4) {
            0 if !toks.is_empty() => toks[i] = noise(rng),
            1 => toks.insert(i.min(toks.len()), noise(rng)),
            2 if toks.len() > 1 => {
                toks.remove(i);
            }
            _ => {
                if let Some(t) = toks.get_mut(i) {
                    if t.parse::<i64>().is_ok() {
                        *t = ["-5", "0", "abc", "-100", "18446744073709551616"].choose(rng).unwrap().to_string();
                    }
                }
            }
        }
    }
    toks.join(" ")
}

fn uci_stream(rng: &mut StdRng) -> String {
    let base = SCRIPTS.choose(rng).unwrap();
    let mut lines: Vec<String> = Vec::new();
    for l in base.iter() {
        // searches stay short: the campaign is about answers, not strength
        let l = l.replace("go infinite", "go nodes 100").replace("go movetime 50 depth 3", "go nodes 100 depth 3");
        lines.push(if rng.gen_bool(0.35) { mutate(&l, rng) } else { l });
        if rng.gen_bool(0.1) {
            lines.push((0..rng.gen_range(1..5)).map(|_| noise(rng)).collect::<Vec<_>>().join(" "));
        }
    }
    // every `go` is bounded (an `infinite` or `ponder` one needs a `stop`, added below)
    // the engine leaves at a `quit`: only the final one ends the stream
    let mut out: Vec<String> = lines
        .into_iter()
        .filter(|l| l.split_whitespace().next() != Some("quit"))
        .map(|l| if l.starts_with("go") && !l.contains("nodes") { format!("{l} nodes 100") } else { l })
        .collect();
    out.push("stop".into());
    out.push("isready".into());
    out.push("quit".into());
    out.join("\n") + "\n"
}

#[test]
fn uci_survives_random_and_mutated_command_streams() {
    let mut rng = StdRng::seed_from_u64(seed());
    let cases = 30 * scale();
    let mut lines_sent = 0;
    for case in 0..cases {
        let input = uci_stream(&mut rng);
        lines_sent += input.lines().count();
        let o = run(&["uci".into(), "--sims".into(), "64".into()], &input, Duration::from_secs(60));
        let what = format!("uci case {case} (seed {})", seed());
        check(&what, &o, &[0]);
        assert!(o.out.lines().any(|l| l == "readyok"), "{what}: no readyok to the final isready:\n{input}\n{}", tail(&o.out));
        for l in o.out.lines().filter(|l| l.starts_with("info string error")) {
            assert!(l.len() < 400, "{what}: an unbounded error line: {l}");
        }
    }
    println!("campaign: uci: {cases} command streams, {lines_sent} lines");
}

// ---------------------------------------------------------------- command-line arguments

#[test]
fn the_command_line_survives_random_arguments() {
    let mut rng = StdRng::seed_from_u64(seed() + 1);
    let run = pristine_run();
    let ckpt = latest_checkpoint(run);
    let scratch = tempfile::tempdir().unwrap();
    let before = snapshot(run);
    let commands: &[&[&str]] = &[
        &["perft", "--variant", "V", "--depth", "D"],
        &["moves", "--variant", "V", "--fen", "F", "--moves", "M"],
        &["result", "--variant", "V", "--moves", "M"],
        &["replay", "--variant", "V", "--moves", "M"],
        &["eval", "--model", "CKPT", "--variant", "V", "--fen", "F"],
        &["search", "--variant", "V", "--sims", "S", "--moves", "M"],
        &["status", "--run", "RUN"],
        &["check", "--run", "RUN"],
        &["openings", "--from", "RUN", "--plies", "D", "--format", "FMT", "--no-progress"],
        &["init", "--variant", "V", "--out", "OUT", "--blocks", "D", "--channels", "D"],
        &["nnue", "info", "--net", "CKPT"],
        &["variants"],
    ];
    let values = |slot: &str, rng: &mut StdRng| -> String {
        let pick = |v: &[&str], rng: &mut StdRng| v.choose(rng).unwrap().to_string();
        match (slot, rng.gen_bool(0.7)) {
            ("V", true) => pick(&["empire", "shogun", "spqr", "empire-faceoff", "shogun-auto"], rng),
            ("D", true) => rng.gen_range(0..4).to_string(),
            ("S", true) => rng.gen_range(1..64).to_string(),
            ("FMT", true) => pick(&["md", "csv", "json"], rng),
            ("M", true) => pick(&["", "e3e4", "e3e4 e7e5", "e2e4", "a1a1 b2b3", "P@e5"], rng),
            ("F", true) => pick(&["rnbqkbnr/pppppppp/8/8/8/PPPSSPPP/8/TECDKCET w kq - 0 1", "8/8/8/8/8/k7/q7/K7 w - - 0 1"], rng),
            ("RUN", true) => run.display().to_string(),
            ("CKPT", true) => ckpt.display().to_string(),
            ("OUT", _) => scratch.path().join(format!("n{}", rng.gen_range(0..3))).display().to_string(),
            _ => noise(rng),
        }
    };
    let cases = 80 * scale();
    for case in 0..cases {
        let template = commands.choose(&mut rng).unwrap();
        let mut args: Vec<String> = template.iter().map(|t| if t.chars().all(|c| c.is_ascii_uppercase()) { values(t, &mut rng) } else { t.to_string() }).collect();
        if rng.gen_bool(0.2) && args.len() > 1 {
            let i = rng.gen_range(1..args.len());
            args.remove(i);
        }
        if rng.gen_bool(0.15) {
            let i = rng.gen_range(1..=args.len());
            args.insert(i, ["--nosuch", "--depth", "-", "--", "--json"].choose(&mut rng).unwrap().to_string());
        }
        // perft deeper than 3 on a random variant is slow, not wrong: keep the campaign short
        if args[0] == "perft" {
            if let Some(i) = args.iter().position(|a| a == "--depth") {
                if args.get(i + 1).and_then(|d| d.parse::<u32>().ok()).is_some_and(|d| d > 3) {
                    args[i + 1] = "3".into();
                }
            }
        }
        let o = self::run(&args, "", Duration::from_secs(60));
        check(&format!("case {case} (seed {}): vzero {}", seed() + 1, args.join(" ").chars().take(300).collect::<String>()), &o, &[0, 1, 2]);
    }
    assert_eq!(snapshot(run), before, "a read-only command changed the run");
    println!("campaign: command line: {cases} invocations");
}

// ---------------------------------------------------------------- damaged run directories

fn files_under(root: &Path) -> Vec<PathBuf> {
    snapshot(root).into_iter().map(|(p, _)| p).filter(|p| p.is_file()).collect()
}

/// One random kind of damage to the run at `run`; says what it did.
fn damage(run: &Path, rng: &mut StdRng) -> String {
    let files = files_under(run);
    let f = files.choose(rng).unwrap().clone();
    let name = f.strip_prefix(run).unwrap().display().to_string();
    match rng.gen_range(0..6) {
        0 => {
            let len = std::fs::metadata(&f).unwrap().len();
            let keep = rng.gen_range(0..=len);
            std::fs::write(&f, &std::fs::read(&f).unwrap()[..keep as usize]).unwrap();
            format!("{name} truncated to {keep} of {len} bytes")
        }
        1 => {
            let junk: Vec<u8> = (0..rng.gen_range(0..4096)).map(|_| rng.gen()).collect();
            std::fs::write(&f, junk).unwrap();
            format!("{name} replaced by random bytes")
        }
        2 => {
            std::fs::remove_file(&f).unwrap();
            format!("{name} removed")
        }
        3 => {
            std::fs::write(run.join("config.toml"), ["variant = [[", "variant = \"nosuch\"", "", "[net]\nblocks = -1"].choose(rng).unwrap()).unwrap();
            "config.toml garbled".into()
        }
        4 => {
            let mut bytes = std::fs::read(&f).unwrap();
            for _ in 0..rng.gen_range(1..16) {
                if !bytes.is_empty() {
                    let i = rng.gen_range(0..bytes.len());
                    bytes[i] ^= 1 << rng.gen_range(0..8);
                }
            }
            std::fs::write(&f, bytes).unwrap();
            format!("{name}: bits flipped")
        }
        _ => {
            std::fs::write(run.join("metrics.csv"), "step,samples\n1,abc\n\u{0}\u{1}").unwrap();
            "metrics.csv garbled".into()
        }
    }
}

#[test]
fn read_only_commands_survive_damaged_runs_and_change_nothing() {
    let mut rng = StdRng::seed_from_u64(seed() + 2);
    let cases = 10 * scale();
    let mut runs = 0;
    for case in 0..cases {
        let t = tempfile::tempdir().unwrap();
        let run = t.path().join("run");
        copy_dir(pristine_run(), &run);
        let what: Vec<String> = (0..rng.gen_range(1..4)).map(|_| damage(&run, &mut rng)).collect();
        let before = snapshot(&run);
        let r = run.display().to_string();
        for cmd in [&["status", "--run", &r][..], &["check", "--run", &r], &["openings", "--from", &r, "--no-progress"]] {
            let args: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
            let o = self::run(&args, "", Duration::from_secs(60));
            check(&format!("damaged run case {case} ({}): vzero {}", what.join("; "), cmd[0]), &o, &[0, 1]);
            runs += 1;
            assert_eq!(snapshot(&run), before, "case {case} ({}): vzero {} changed the run", what.join("; "), cmd[0]);
        }
    }
    println!("campaign: damaged runs: {cases} runs, {runs} commands");
}
