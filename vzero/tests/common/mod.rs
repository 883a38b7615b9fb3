//! Helpers shared by the command-line tests: a `vzero uci` session driven line by line.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// The `vzero` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_vzero");

/// A running `vzero uci` process.
pub struct Session {
    pub child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Session {
    /// Starts `vzero uci` with extra arguments.
    pub fn start(args: &[&str]) -> Session {
        let mut child = Command::new(BIN).arg("uci").args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("run vzero uci");
        let stdin = child.stdin.take().unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Session { child, stdin, lines }
    }

    /// Sends one line.
    pub fn send(&mut self, s: &str) {
        writeln!(self.stdin, "{s}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Lines up to and including the first starting with `prefix`.
    pub fn until(&mut self, prefix: &str, secs: u64) -> Vec<String> {
        let mut v = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let l = self.lines.recv_timeout(left).unwrap_or_else(|_| panic!("no '{prefix}' within {secs} s; got {v:?}"));
            let done = l.starts_with(prefix);
            v.push(l);
            if done {
                return v;
            }
        }
    }

    /// Lines already printed, waiting at most `ms` for each.
    pub fn drain(&mut self, ms: u64) -> Vec<String> {
        let mut v = Vec::new();
        while let Ok(l) = self.lines.recv_timeout(Duration::from_millis(ms)) {
            v.push(l);
        }
        v
    }

    /// Sends `quit` and checks the exit status.
    pub fn quit(mut self) {
        self.send("quit");
        assert!(self.child.wait().unwrap().success());
    }
}

/// The move of a `bestmove` line (the last of `lines`).
pub fn bestmove(lines: &[String]) -> String {
    lines.last().unwrap().split_whitespace().nth(1).unwrap().to_string()
}

/// Runs `vzero` with arguments: exit code, stdout, stderr.
pub fn vzero(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN).args(args).output().expect("run vzero");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// A tiny empire training config for whole-loop tests (1x8 network, 4 games per worker, 8/4
/// simulations, batches of 32): `net` adds lines to `[net]`, `extra` appends tables.
pub fn tiny_config(net: &str, extra: &str) -> String {
    format!(
        r#"
variant = "empire"
device = "cpu"
[net]
blocks = 1
channels = 8
{net}
[selfplay]
short_term_horizons = [2, 6]
workers = 1
games_per_worker = 4
leaves_per_game = 1
full_sims = 8
cheap_sims = 4
full_prob = 0.5
gumbel = true
considered = 4
max_plies = 60
rows_per_chunk = 40
poll_seconds = 0.2
resign_threshold = -1.0
[learn]
batch_size = 32
optimizer = "sgd"
lr = 0.02
lr_warmup_steps = 0
lr_schedule = {{ kind = "constant" }}
weight_decay = 0.0001
max_reuse = 4.0
min_rows = 40
window_min = 200
window_exponent = 0.65
window_scale = 8.0
publish_every = 3
threads = 1
{extra}
"#
    )
}
