//! An external UCI engine as a [`Player`] (Fairy-Stockfish conventions: `UCI_Variant`,
//! `VariantPath`, moves in FSF's UCI notation). The engine is a child process; a reader thread
//! forwards its output lines, so every wait has a timeout. A crash, a timeout, `bestmove (none)`
//! or an illegal move is an error, which forfeits the game; the process is killed when the
//! player is dropped.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use vzero_rules::{Game, Move, Position, Variant};

use crate::player::{Player, PvLine};
use vzero_engine::Score;

/// Fairy-Stockfish's variant definitions (`setoption name VariantPath`) for an engine.
#[derive(Clone, Debug, PartialEq)]
pub enum VariantIni {
    /// A file the user names.
    File(String),
    /// vzero's own definitions of its Fairy-Stockfish variants (empire, shogun:
    /// `scripts/fsf/variants.ini`, built into the binary), written once to the temporary directory.
    Vzero,
}

/// vzero's Fairy-Stockfish definitions of empire and shogun, as in `scripts/fsf/variants.ini`.
pub const VZERO_VARIANTS_INI: &str = include_str!("../../scripts/fsf/variants.ini");

impl VariantIni {
    /// Whether vzero's own definitions ([`VZERO_VARIANTS_INI`]) define `variant`.
    pub fn defines_vzero(variant: &str) -> bool {
        VZERO_VARIANTS_INI.lines().any(|l| l.strip_prefix('[').and_then(|l| l.split([':', ']']).next()) == Some(variant))
    }

    /// The path to give the engine (for [`VariantIni::Vzero`], the file written on first use:
    /// named after its content's hash, written to a temporary name and renamed, so concurrent
    /// engines never read half a file).
    pub fn path(&self) -> Result<String> {
        match self {
            VariantIni::File(p) => Ok(p.clone()),
            VariantIni::Vzero => {
                let hash = vzero_base::fnv1a64(VZERO_VARIANTS_INI.as_bytes());
                let path = std::env::temp_dir().join(format!("vzero-fsf-variants-{hash:016x}.ini"));
                if std::fs::read(&path).map_or(true, |b| b != VZERO_VARIANTS_INI.as_bytes()) {
                    // each write has a temporary name of its own: engines started at once by
                    // threads of one process never rename the same temporary file
                    vzero_base::write_atomic(&path, VZERO_VARIANTS_INI.as_bytes())?;
                }
                Ok(path.to_string_lossy().into_owned())
            }
        }
    }
}

/// Where [`find_fsf`] found Fairy-Stockfish.
#[derive(Clone, Debug, PartialEq)]
pub enum FsfSource {
    /// `$VZERO_FSF`.
    EnvVar,
    /// `fairy-stockfish` on the `PATH`.
    Path,
    /// `scripts/fairy-stockfish`: the engine compiled into the pinned `pyffish` wheel.
    Launcher,
    /// Nowhere: the command is plain `fairy-stockfish`, which will not start.
    Missing,
}

impl FsfSource {
    /// How the start notes name it.
    pub fn describe(&self) -> &'static str {
        match self {
            FsfSource::EnvVar => "$VZERO_FSF",
            FsfSource::Path => "fairy-stockfish on the PATH",
            FsfSource::Launcher => "the pyffish launcher",
            FsfSource::Missing => "not found",
        }
    }
}

/// The launcher's path inside a checkout.
const LAUNCHER: &str = "scripts/fairy-stockfish";

/// An executable file (not a directory).
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The pyffish launcher (`scripts/fairy-stockfish`) of the checkout this program was built in:
/// looked for above the running executable (`target/release/vzero`, a test binary in
/// `target/release/deps`), then above the working directory.
pub fn fsf_launcher() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok().and_then(|e| e.canonicalize().ok());
    let cwd = std::env::current_dir().ok();
    let starts = exe.as_deref().and_then(Path::parent).into_iter().chain(cwd.as_deref());
    for start in starts {
        for dir in start.ancestors() {
            let p = dir.join(LAUNCHER);
            if is_executable(&p) && dir.join("scripts/fsf/variants.ini").is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Fairy-Stockfish's command and where it came from: `$VZERO_FSF` (split on whitespace, like
/// `uci:CMD`) when set, else `fairy-stockfish` on the `PATH`, else the pyffish launcher
/// ([`fsf_launcher`]), else plain `fairy-stockfish` ([`FsfSource::Missing`]: starting it fails
/// with a message naming all three).
pub fn find_fsf() -> (Vec<String>, FsfSource) {
    let cmd: Vec<String> = std::env::var("VZERO_FSF").unwrap_or_default().split_whitespace().map(str::to_string).collect();
    if !cmd.is_empty() {
        return (cmd, FsfSource::EnvVar);
    }
    let on_path = std::env::var_os("PATH").and_then(|p| std::env::split_paths(&p).map(|d| d.join("fairy-stockfish")).find(|p| is_executable(p)));
    if let Some(p) = on_path {
        return (vec![p.to_string_lossy().into_owned()], FsfSource::Path);
    }
    match fsf_launcher() {
        Some(p) => (vec![p.to_string_lossy().into_owned()], FsfSource::Launcher),
        None => (vec!["fairy-stockfish".to_string()], FsfSource::Missing),
    }
}

/// The command `fsf` runs ([`find_fsf`]).
pub fn fsf_command() -> Vec<String> {
    find_fsf().0
}

/// What an engine is, from starting it ([`UciEngineSpec::identify`]).
#[derive(Clone, Debug, PartialEq)]
pub struct EngineInfo {
    /// The spec's display name (`fsf:nodes=1000`).
    pub name: String,
    /// Its `id name` (`Fairy-Stockfish 230826 LB`).
    pub id_name: Option<String>,
    /// The program and its arguments.
    pub command: String,
    /// Where Fairy-Stockfish came from, when the command is the one [`find_fsf`] gives.
    pub source: Option<FsfSource>,
}

impl std::fmt::Display for EngineInfo {
    /// `fsf:nodes=1000: Fairy-Stockfish 230826 LB (/repo/scripts/fairy-stockfish, the pyffish launcher)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} ({}", self.name, self.id_name.as_deref().unwrap_or("no id name"), self.command)?;
        if let Some(s) = &self.source {
            write!(f, ", {}", s.describe())?;
        }
        write!(f, ")")
    }
}

/// How an external engine is started and driven.
#[derive(Clone, Debug, PartialEq)]
pub struct UciEngineSpec {
    /// Program and arguments.
    pub command: Vec<String>,
    /// `go nodes N`.
    pub nodes: Option<u64>,
    /// `go movetime MS`.
    pub movetime: Option<u64>,
    /// `go depth D` (Fairy-Stockfish's training-data generator searches depth 2 or so).
    pub depth: Option<u32>,
    /// A game clock: base time and increment per move (`tc=S+INC`, seconds). Each game starts
    /// with the base; each move is charged the wall time from `go` to `bestmove`; an engine
    /// whose clock runs out loses the game on time.
    pub clock: Option<TimeControl>,
    /// `setoption name N value V`, in order.
    pub options: Vec<(String, String)>,
    /// `setoption name VariantPath value P`.
    pub variant_path: Option<VariantIni>,
    /// Display name (default: `uci:<program file name>`).
    pub label: Option<String>,
    /// Extra time per move before the engine forfeits, and the limit for `uciok`/`readyok`.
    pub timeout: Duration,
}

impl UciEngineSpec {
    /// Parses the part after `uci:` (see [`crate::player`] for the grammar).
    pub fn parse(s: &str) -> Result<UciEngineSpec> {
        let mut parts = s.split(':');
        let cmd = parts.next().unwrap_or("");
        let command: Vec<String> = cmd.split_whitespace().map(str::to_string).collect();
        if command.is_empty() {
            bail!("uci:CMD needs a command");
        }
        Self::with_options(command, None, parts)
    }

    /// Parses the part after `fsf` (`fsf:nodes=100`, or `fsf` alone): Fairy-Stockfish as
    /// [`fsf_command`] finds it, with vzero's variant definitions unless `variantpath=` names
    /// others, and the display name `fsf` plus the limit.
    pub fn parse_fsf(s: &str) -> Result<UciEngineSpec> {
        let parts = s.split(':').filter(|p| !p.is_empty());
        let mut spec = Self::with_options(fsf_command(), Some(VariantIni::Vzero), parts)?;
        if spec.label.is_none() {
            spec.label = Some(format!("fsf{}", spec.limits()));
        }
        Ok(spec)
    }

    fn with_options<'a>(command: Vec<String>, variant_path: Option<VariantIni>, parts: impl Iterator<Item = &'a str>) -> Result<UciEngineSpec> {
        let mut spec = UciEngineSpec {
            command,
            nodes: None,
            movetime: None,
            depth: None,
            clock: None,
            options: Vec::new(),
            variant_path,
            label: None,
            timeout: Duration::from_secs(10),
        };
        for p in parts {
            let (k, v) = p.split_once('=').ok_or_else(|| anyhow!("uci option '{p}' is not KEY=VALUE"))?;
            match k {
                "nodes" => spec.nodes = Some(v.parse().map_err(|_| anyhow!("uci nodes: '{v}' is not a number"))?),
                "movetime" => spec.movetime = Some(v.parse().map_err(|_| anyhow!("uci movetime: '{v}' is not a number"))?),
                "depth" => match v.parse() {
                    Ok(d @ 1..=64) => spec.depth = Some(d),
                    _ => bail!("uci depth: '{v}' is not a depth from 1 to 64"),
                },
                "tc" => spec.clock = Some(v.parse()?),
                "timeout" => spec.timeout = Duration::from_millis(v.parse().map_err(|_| anyhow!("uci timeout: '{v}' is not a number"))?),
                "opt" => {
                    let (n, val) = v.split_once('=').ok_or_else(|| anyhow!("uci opt=NAME=VALUE, got 'opt={v}'"))?;
                    spec.options.push((n.to_string(), val.to_string()));
                }
                "variantpath" => spec.variant_path = Some(VariantIni::File(v.to_string())),
                "name" => spec.label = Some(v.to_string()),
                _ => bail!("unknown uci option '{k}' (nodes, movetime, depth, tc, opt, variantpath, name, timeout)"),
            }
        }
        if spec.clock.is_some() && (spec.nodes.is_some() || spec.movetime.is_some() || spec.depth.is_some()) {
            bail!("uci tc= is a game clock: give it alone, without nodes=, movetime= or depth=");
        }
        if spec.nodes.is_none() && spec.movetime.is_none() && spec.depth.is_none() && spec.clock.is_none() {
            spec.nodes = Some(1000);
        }
        Ok(spec)
    }

    /// Starts the engine once (and stops it) to see what it is; an engine that cannot start
    /// for `variant` is the error [`UciEngine::start`] gives.
    pub fn identify(&self, variant: Variant) -> Result<EngineInfo> {
        let e = UciEngine::start(self, variant)?;
        let (cmd, source) = find_fsf();
        Ok(EngineInfo {
            name: self.name(),
            id_name: e.id_name().map(str::to_string),
            command: self.command.join(" "),
            source: (cmd == self.command).then_some(source),
        })
    }

    /// Display name.
    pub fn name(&self) -> String {
        if let Some(l) = &self.label {
            return l.clone();
        }
        let prog = std::path::Path::new(&self.command[0]).file_name().map_or(self.command[0].clone(), |f| f.to_string_lossy().to_string());
        format!("uci:{prog}{}", self.limits())
    }

    /// The search limits as written in a spec (`:nodes=1000`, `:depth=2`).
    fn limits(&self) -> String {
        let mut n = String::new();
        if let Some(x) = self.nodes {
            n += &format!(":nodes={x}");
        }
        if let Some(x) = self.movetime {
            n += &format!(":movetime={x}");
        }
        if let Some(x) = self.depth {
            n += &format!(":depth={x}");
        }
        if let Some(c) = self.clock {
            n += &format!(":tc={c}");
        }
        n
    }
}

/// A game clock for [`UciEngineSpec::clock`]: `S` or `S+INC` in seconds (`60+0.6`, `10`, `4+0.05`),
/// as cutechess and fastchess write it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeControl {
    /// Time on the clock at the start of a game.
    pub base: Duration,
    /// Added after each move.
    pub inc: Duration,
}

impl std::str::FromStr for TimeControl {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> Result<TimeControl> {
        let secs = |x: &str| -> Result<Duration> {
            match x.trim().parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 && v < 1e7 => Ok(Duration::from_secs_f64(v)),
                _ => bail!("uci tc: '{x}' is not a number of seconds (tc=S or tc=S+INC, e.g. tc=60+0.6)"),
            }
        };
        let (base, inc) = s.split_once('+').unwrap_or((s, "0"));
        let tc = TimeControl { base: secs(base)?, inc: secs(inc)? };
        if tc.base.is_zero() {
            bail!("uci tc: the base time of '{s}' must be above 0");
        }
        Ok(tc)
    }
}

impl std::fmt::Display for TimeControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.base.as_secs_f64())?;
        if !self.inc.is_zero() {
            write!(f, "+{}", self.inc.as_secs_f64())?;
        }
        Ok(())
    }
}

/// A running UCI engine.
pub struct UciEngine {
    spec: UciEngineSpec,
    name: String,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// The last lines the engine wrote to its standard error (for error messages).
    stderr: Arc<Mutex<VecDeque<String>>>,
    variant: Variant,
    id_name: Option<String>,
    /// Time left on this engine's clock in the current game (with `tc=`).
    clock_left: Duration,
}

/// Lines of the engine's standard error kept for error messages.
const STDERR_LINES: usize = 4;

impl UciEngine {
    /// Starts the engine, handshakes (`uci`/`uciok`), sets the variant and options, and waits for
    /// `readyok`. Fairy-Stockfish (its `id name` says so) must announce the variant
    /// (`info string variant V …`): it keeps playing chess when its `VariantPath` lacks V.
    pub fn start(spec: &UciEngineSpec, variant: Variant) -> Result<UciEngine> {
        let mut child = Command::new(&spec.command[0])
            .args(&spec.command[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| {
                let hint = match spec.variant_path {
                    Some(VariantIni::Vzero) => " (fsf: Fairy-Stockfish is $VZERO_FSF, else fairy-stockfish on the PATH, else scripts/fairy-stockfish with the pyffish that scripts/setup.sh installs)",
                    _ => "",
                };
                format!("cannot run '{}'{hint}", spec.command.join(" "))
            })?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let errout = child.stderr.take().expect("piped");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let tail = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(errout).lines() {
                let Ok(line) = line else { break };
                let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
                if t.len() == STDERR_LINES {
                    t.pop_front();
                }
                t.push_back(line);
            }
        });
        let clock_left = spec.clock.map_or(Duration::ZERO, |c| c.base);
        let mut e = UciEngine { spec: spec.clone(), name: spec.name(), child, stdin, lines: rx, stderr, variant, id_name: None, clock_left };
        e.send("uci")?;
        let mut id = None;
        e.wait_for(
            |l| {
                if let Some(n) = l.strip_prefix("id name ") {
                    id = Some(n.trim().to_string());
                }
                l == "uciok"
            },
            spec.timeout,
        )?;
        e.id_name = id;
        if let Some(ini) = &spec.variant_path {
            if *ini == VariantIni::Vzero && variant.name() != "chess" && !VariantIni::defines_vzero(variant.name()) {
                bail!("vzero's Fairy-Stockfish definitions hold empire and shogun, not {}: give variantpath= a file that defines it", variant.name());
            }
            let p = ini.path()?;
            e.send(&format!("setoption name VariantPath value {p}"))?;
        }
        if variant.name() != "chess" {
            e.send(&format!("setoption name UCI_Variant value {}", variant.name()))?;
        }
        for (n, v) in &spec.options {
            e.send(&format!("setoption name {n} value {v}"))?;
        }
        let announced = format!("info string variant {} ", variant.name());
        let mut seen = false;
        e.send("isready")?;
        e.wait_for(
            |l| {
                seen |= l.starts_with(&announced);
                l == "readyok"
            },
            spec.timeout,
        )?;
        let fsf = e.id_name.as_deref().is_some_and(|n| n.starts_with("Fairy-Stockfish"));
        if fsf && variant.name() != "chess" && !seen {
            let from = match &spec.variant_path {
                Some(ini) => format!("its VariantPath {}", ini.path().unwrap_or_default()),
                None => "its built-in variants (no variantpath=)".to_string(),
            };
            bail!("{}: Fairy-Stockfish does not know {} ({} lacks it, or cannot be read)", e.name, variant.name(), from);
        }
        Ok(e)
    }

    /// The engine's `id name` (e.g. `Fairy-Stockfish 230826 LB`), if it sent one.
    pub fn id_name(&self) -> Option<&str> {
        self.id_name.as_deref()
    }

    fn send(&mut self, line: &str) -> Result<()> {
        if let Err(e) = writeln!(self.stdin, "{line}").and_then(|_| self.stdin.flush()) {
            // a closed pipe is most often an engine that has exited: say so, as a read would
            return Err(match self.exit_status() {
                Some(status) => anyhow!("{}: engine terminated ({status}){}", self.name, self.last_words()),
                None => anyhow!("{}: engine closed its input ({e}){}", self.name, self.last_words()),
            });
        }
        Ok(())
    }

    /// The engine's exit status, waiting up to half a second for it to exit; `None` if it runs.
    fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        let t = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().ok().flatten() {
                return Some(s);
            }
            if t.elapsed() >= Duration::from_millis(500) {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// `; it said: …` with the last lines of the engine's standard error, or nothing.
    fn last_words(&self) -> String {
        // the reader thread may still be taking the last lines in
        std::thread::sleep(Duration::from_millis(20));
        let t = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        if t.is_empty() {
            String::new()
        } else {
            format!("; it said: {}", t.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" / "))
        }
    }

    /// Waits for a line satisfying `pred` (which sees every line), returning it.
    fn wait_for(&mut self, mut pred: impl FnMut(&str) -> bool, timeout: Duration) -> Result<String> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    if pred(l.trim()) {
                        return Ok(l.trim().to_string());
                    }
                }
                Err(RecvTimeoutError::Timeout) => bail!("{}: no answer within {:.1} s", self.name, timeout.as_secs_f64()),
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.exit_status().map_or("exited".to_string(), |s| s.to_string());
                    bail!("{}: engine terminated ({status}){}", self.name, self.last_words())
                }
            }
        }
    }

    fn sync(&mut self) -> Result<()> {
        self.send("isready")?;
        let t = self.spec.timeout;
        self.wait_for(|l| l == "readyok", t).map(|_| ())
    }
}

/// `position …` for a game: `startpos` when it starts from the variant's start position.
pub fn position_command(game: &Game) -> String {
    let start: &Position = game.start();
    let mut s = if start.fen() == Position::startpos(start.variant()).fen() {
        "position startpos".to_string()
    } else {
        format!("position fen {}", start.fen())
    };
    if !game.moves().is_empty() {
        s += " moves";
        let mut p = *start;
        for &m in game.moves() {
            s.push(' ');
            s += &p.uci(m);
            p.play(m);
        }
    }
    s
}

impl Player for UciEngine {
    fn name(&self) -> &str {
        &self.name
    }

    /// `ucinewgame`; an engine that has died since the last game (it forfeited that one) is
    /// started again first.
    fn new_game(&mut self) -> Result<()> {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            let fresh = UciEngine::start(&self.spec, self.variant)?;
            *self = fresh;
        }
        self.clock_left = self.spec.clock.map_or(Duration::ZERO, |c| c.base);
        self.send("ucinewgame")?;
        self.sync()
    }

    fn choose(&mut self, game: &Game) -> Result<Move> {
        Ok(self.judge(game)?.0)
    }

    /// The engine's `bestmove` and the score of its last `info … score` line for the first
    /// principal variation (`multipv 1` or no `multipv`), if it sent one.
    fn judge(&mut self, game: &Game) -> Result<(Move, Option<Score>)> {
        let (m, score, _) = self.judge_lines(game)?;
        Ok((m, score))
    }

    /// [`UciEngine::judge`] with the other principal variations the engine reported (with the
    /// `MultiPV` option above 1): each line's last report, lines whose moves do not parse left
    /// out.
    fn judge_lines(&mut self, game: &Game) -> Result<(Move, Option<Score>, Vec<PvLine>)> {
        debug_assert_eq!(game.position().variant().name(), self.variant.name());
        let (go, limit) = match (self.spec.clock, self.spec.movetime, self.spec.depth, self.spec.nodes) {
            // the engine sees its own clock on both sides: the opponent's is not known here
            (Some(c), ..) => {
                let (t, i) = (self.clock_left.as_millis(), c.inc.as_millis());
                (format!("go wtime {t} btime {t} winc {i} binc {i}"), self.clock_left + self.spec.timeout)
            }
            (None, Some(t), _, _) => (format!("go movetime {t}"), Duration::from_millis(t) + self.spec.timeout),
            (None, None, Some(d), _) => (format!("go depth {d}"), self.spec.timeout.max(Duration::from_secs(60))),
            (None, None, None, Some(n)) => (format!("go nodes {n}"), self.spec.timeout.max(Duration::from_secs(60))),
            (None, None, None, None) => ("go nodes 1000".to_string(), self.spec.timeout.max(Duration::from_secs(60))),
        };
        // one write (and one wake-up of the engine) for both lines: at shallow depths the
        // round trip, not the search, bounds a teacher's positions per second
        self.send(&format!("{}\n{go}", position_command(game)))?;
        let asked = Instant::now();
        let mut score = None;
        // the last report of each line after the first: (score, first move, reply)
        let mut others: Vec<Option<(Score, String, Option<String>)>> = Vec::new();
        let line = self.wait_for(
            |l| {
                if let Some(i) = InfoLine::parse(l) {
                    if i.multipv <= 1 {
                        score = Some(i.score);
                    } else if let Some(first) = i.pv.first() {
                        let k = i.multipv as usize - 2;
                        if others.len() <= k {
                            others.resize(k + 1, None);
                        }
                        others[k] = Some((i.score, first.to_string(), i.pv.get(1).map(|r| r.to_string())));
                    }
                }
                l.starts_with("bestmove")
            },
            limit,
        )?;
        if let Some(c) = self.spec.clock {
            let took = asked.elapsed();
            if took > self.clock_left {
                bail!("{}: lost on time ({} ms for a move with {} ms on the clock)", self.name, took.as_millis(), self.clock_left.as_millis());
            }
            self.clock_left = self.clock_left - took + c.inc;
        }
        let mv = line.split_whitespace().nth(1).ok_or_else(|| anyhow!("{}: empty bestmove", self.name))?;
        if mv == "(none)" {
            bail!("{}: bestmove (none) in a position with legal moves", self.name);
        }
        let pos = game.position();
        let m = pos.parse_uci(mv).map_err(|e| anyhow!("{}: illegal move '{mv}': {e}", self.name))?;
        let lines = others
            .into_iter()
            .flatten()
            .filter_map(|(score, first, reply)| {
                let first = pos.parse_uci(&first).ok().filter(|&f| f != m)?;
                let mut after = *pos;
                after.play(first);
                Some(PvLine { first, score, reply: reply.and_then(|r| after.parse_uci(&r).ok()) })
            })
            .collect();
        Ok((m, score, lines))
    }
}

/// What an `info` line with a score says: its principal variation's number (1 without
/// `multipv`), the score and the line's moves.
struct InfoLine<'a> {
    multipv: u32,
    score: Score,
    pv: Vec<&'a str>,
}

impl<'a> InfoLine<'a> {
    fn parse(line: &'a str) -> Option<InfoLine<'a>> {
        let t: Vec<&str> = line.split_whitespace().collect();
        if t.first() != Some(&"info") || t.get(1) == Some(&"string") {
            return None;
        }
        let multipv = match t.iter().position(|&x| x == "multipv") {
            Some(i) => t.get(i + 1)?.parse().ok()?,
            None => 1,
        };
        let i = t.iter().position(|&x| x == "score")?;
        let score = Score::parse_uci(&t[i + 1..])?;
        let pv = t.iter().position(|&x| x == "pv").map_or(Vec::new(), |i| t[i + 1..].to_vec());
        Some(InfoLine { multipv, score, pv })
    }
}

/// The score of a UCI `info` line of the first principal variation (`multipv 1` or none).
#[cfg(test)]
fn info_score(line: &str) -> Option<Score> {
    InfoLine::parse(line).filter(|i| i.multipv == 1).map(|i| i.score)
}

impl Drop for UciEngine {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        // Give it a moment to exit by itself, then kill it.
        let t = Instant::now();
        while t.elapsed() < Duration::from_millis(300) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_limits_parse_name_the_player_and_replace_the_default_nodes() {
        let s = UciEngineSpec::parse("stockfish:depth=2").unwrap();
        assert_eq!((s.depth, s.nodes, s.movetime), (Some(2), None, None));
        assert_eq!(s.name(), "uci:stockfish:depth=2");
        assert_eq!(UciEngineSpec::parse("stockfish").unwrap().nodes, Some(1000));
        for bad in ["stockfish:depth=0", "stockfish:depth=65", "stockfish:depth=two"] {
            let e = UciEngineSpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains("from 1 to 64"), "{bad}: {e}");
        }
    }

    #[test]
    fn clocks_parse_as_seconds_and_stand_alone() {
        let s = UciEngineSpec::parse("stockfish:tc=4+0.05").unwrap();
        assert_eq!(s.clock, Some(TimeControl { base: Duration::from_secs(4), inc: Duration::from_millis(50) }));
        assert_eq!((s.nodes, s.movetime, s.depth), (None, None, None));
        assert_eq!(s.name(), "uci:stockfish:tc=4+0.05");
        assert_eq!("10".parse::<TimeControl>().unwrap(), TimeControl { base: Duration::from_secs(10), inc: Duration::ZERO });
        for bad in ["x", "0+1", "-1", "5+", "5+x", "inf", "NaN+1"] {
            let e = format!("{:#}", bad.parse::<TimeControl>().unwrap_err());
            assert!(e.contains("uci tc"), "{bad}: {e}");
        }
        let e = UciEngineSpec::parse("stockfish:tc=4:nodes=10").unwrap_err().to_string();
        assert!(e.contains("alone"), "{e}");
    }

    #[test]
    fn info_lines_of_a_multi_pv_search() {
        let i = InfoLine::parse("info depth 2 seldepth 3 multipv 2 score cp -15 nodes 100 nps 1000 pv d2d4 d7d5").unwrap();
        assert_eq!((i.multipv, i.score, i.pv), (2, Score::Cp(-15), vec!["d2d4", "d7d5"]));
        let i = InfoLine::parse("info depth 3 score mate 2 pv e2e4").unwrap();
        assert_eq!((i.multipv, i.score, i.pv), (1, Score::Mate(2), vec!["e2e4"]));
        assert!(InfoLine::parse("info depth 3 multipv x score cp 1 pv e2e4").is_none());
        assert!(InfoLine::parse("info depth 3 multipv 3 nodes 5").is_none());
    }

    #[test]
    fn info_scores_of_the_first_line_only() {
        assert_eq!(info_score("info depth 5 score cp 31 nodes 900 pv e2e4"), Some(Score::Cp(31)));
        assert_eq!(info_score("info depth 5 multipv 1 score mate -2 pv e2e4"), Some(Score::Mate(-2)));
        assert_eq!(info_score("info depth 5 multipv 2 score cp 12 pv d2d4"), None);
        assert_eq!(info_score("info depth 9 score cp 40 lowerbound nodes 10"), Some(Score::Cp(40)));
        assert_eq!(info_score("info string score is great"), None);
        assert_eq!(info_score("info depth 3 nodes 10"), None);
        assert_eq!(info_score("bestmove e2e4"), None);
        assert_eq!(info_score("info score cp x"), None);
    }
}
