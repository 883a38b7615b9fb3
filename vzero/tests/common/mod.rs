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

/// A small finished run (the tiny config, 8 games), made once per test binary; tests that
/// damage a run copy it first ([`copy_dir`]).
pub fn tiny_run() -> &'static std::path::Path {
    static RUN: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    RUN.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        let cfg = dir.join("tiny.toml");
        std::fs::write(&cfg, tiny_config("", "")).unwrap();
        let run = dir.join("run");
        let (code, out, err) = vzero(&["train", "--config", cfg.to_str().unwrap(), "--run", run.to_str().unwrap(), "--games", "8", "--quiet"]);
        assert_eq!(code, 0, "{out}{err}");
        run
    })
}

/// Copies the directory tree `src` to `dst`.
pub fn copy_dir(src: &std::path::Path, dst: &std::path::Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap().flatten() {
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), to).unwrap();
        }
    }
}

/// Every file and directory under `root`: (is a directory, size, modification time).
pub fn snapshot(root: &std::path::Path) -> std::collections::BTreeMap<std::path::PathBuf, (bool, u64, std::time::SystemTime)> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let m = e.metadata().unwrap();
            out.insert(e.path(), (m.is_dir(), m.len(), m.modified().unwrap()));
            if m.is_dir() {
                stack.push(e.path());
            }
        }
    }
    out
}

/// The newest checkpoint's metadata file of the run at `run`.
pub fn latest_checkpoint(run: &std::path::Path) -> std::path::PathBuf {
    let mut v: Vec<std::path::PathBuf> = std::fs::read_dir(run.join("checkpoints")).unwrap().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
    v.sort();
    v.pop().unwrap()
}
