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

/// The tiny empire training config of the whole-loop tests (`configs/tests/tiny-empire.toml`):
/// `net` adds lines to `[net]`, `extra` appends tables.
pub fn tiny_config(net: &str, extra: &str) -> String {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/tests/tiny-empire.toml")).expect("the tiny test config");
    format!("{}\n{extra}\n", text.replace("channels = 8\n", &format!("channels = 8\n{net}\n")))
}
