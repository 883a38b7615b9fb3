//! Streaming game sources: run directories (HDF5 chunks, one chunk at a time) and PGN files
//! (one game at a time), each game replayed and checked with the rules core.
//!
//! Every game is either delivered as a [`ReplayedGame`] or reported as a [`Skipped`] naming its
//! origin (`file:line` for PGN, `chunk-file#game-index` for run directories).

use std::io::BufRead;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use vzero_rules::{Color, Move, Position, Variant};

/// A game as read, before replaying.
#[derive(Clone, Debug, Default)]
pub struct RawGame {
    /// Where it came from: `file:line` (PGN) or `chunk.h5#index` (run directory).
    pub origin: String,
    /// Variant name (`None`: assume the requested one; PGN files without a `Variant` tag).
    pub variant: Option<String>,
    /// Start FEN (`None`: the variant's start position).
    pub start_fen: Option<String>,
    /// UCI moves with the origin of each (PGN: `file:line` of the move).
    pub moves: Vec<String>,
    /// Origin of each move (same length as `moves`; empty: use `origin`).
    pub move_origins: Vec<String>,
    /// `1-0`, `0-1`, `1/2-1/2` (anything else is skipped).
    pub result: String,
    /// Network (checkpoint name) or `None`.
    pub network: Option<String>,
    pub white: String,
    pub black: String,
    /// Per move: prior of the played move (may be empty).
    pub priors: Vec<f32>,
    /// Per move: search value for the mover (may be empty).
    pub values: Vec<f32>,
}

impl RawGame {
    /// A self-play game record of a chunk (`origin`: `chunk.h5#index`) as a raw game.
    pub fn from_record(origin: String, g: vzero_data::GameRecord) -> RawGame {
        RawGame {
            origin,
            variant: Some(g.variant),
            start_fen: Some(g.start_fen),
            moves: g.moves,
            move_origins: Vec::new(),
            result: g.result,
            network: Some(g.network).filter(|n| !n.is_empty()),
            white: g.white,
            black: g.black,
            priors: g.priors,
            values: g.values,
        }
    }

    /// The network generation: from `network` (`gen-NNNNNN-…`), else the first `gen-NNNNNN` in
    /// the White, then the Black player's name.
    pub fn generation(&self) -> Option<u64> {
        [self.network.as_deref(), Some(self.white.as_str()), Some(self.black.as_str())]
            .into_iter()
            .flatten()
            .find_map(parse_generation)
    }
}

/// The first `gen-<digits>` in `s`.
pub fn parse_generation(s: &str) -> Option<u64> {
    let mut rest = s;
    while let Some(i) = rest.find("gen-") {
        let digits: String = rest[i + 4..].chars().take_while(|c| c.is_ascii_digit()).collect();
        if !digits.is_empty() {
            return digits.parse().ok();
        }
        rest = &rest[i + 4..];
    }
    None
}

/// A game replayed with the rules core: every move legal.
#[derive(Clone, Debug)]
pub struct ReplayedGame {
    pub raw: RawGame,
    pub start: Position,
    /// The played moves.
    pub moves: Vec<Move>,
    /// White's score: 1, 0.5 or 0.
    pub white_score: f64,
}

impl ReplayedGame {
    /// Plies of the whole game.
    pub fn len(&self) -> usize {
        self.moves.len()
    }

    pub fn is_empty(&self) -> bool {
        self.moves.is_empty()
    }
}

/// A game that was not counted, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Skipped {
    /// `file:line` or `chunk.h5#index` (or a file name for unreadable files).
    pub origin: String,
    pub reason: String,
    /// A whole unreadable chunk: its games, however many, are lost (not one game).
    pub chunk: bool,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.origin, self.reason)
    }
}

/// White's score of a result token.
pub fn white_score(result: &str) -> Option<f64> {
    match result {
        "1-0" => Some(1.0),
        "0-1" => Some(0.0),
        "1/2-1/2" => Some(0.5),
        _ => None,
    }
}

/// Replays `raw` in `variant`: checks the variant name, the FEN, every move and the result.
pub fn replay(raw: RawGame, variant: Variant) -> std::result::Result<ReplayedGame, Skipped> {
    let skip = |origin: &str, reason: String| Skipped { origin: origin.to_string(), reason, chunk: false };
    if let Some(v) = &raw.variant {
        if v != variant.name() {
            return Err(skip(&raw.origin, format!("variant '{v}', not '{}'", variant.name())));
        }
    }
    let Some(ws) = white_score(&raw.result) else {
        return Err(skip(&raw.origin, format!("result '{}' is not 1-0, 0-1 or 1/2-1/2", raw.result)));
    };
    let start = match raw.start_fen.as_deref().filter(|f| !f.trim().is_empty()) {
        Some(f) => Position::from_fen(variant, f).map_err(|e| skip(&raw.origin, format!("bad FEN '{f}': {e}")))?,
        None => Position::startpos(variant),
    };
    let mut pos = start;
    let mut moves = Vec::with_capacity(raw.moves.len());
    for (i, text) in raw.moves.iter().enumerate() {
        match parse_move(&pos, text) {
            Ok(m) => {
                pos.play(m);
                moves.push(m);
            }
            Err(e) => {
                let at = raw.move_origins.get(i).unwrap_or(&raw.origin);
                return Err(skip(at, format!("ply {} ({text}): {e}", i + 1)));
            }
        }
    }
    Ok(ReplayedGame { raw, start, moves, white_score: ws })
}

/// `Position::parse_uci`, faster: only legal moves to the text's target square are written out
/// for comparison (the errors are `parse_uci`'s).
pub fn parse_move(pos: &Position, text: &str) -> vzero_rules::Result<Move> {
    let v = pos.variant();
    let wanted = text.strip_suffix('=').unwrap_or(text);
    // target square: the last letter + digits group
    let b = wanted.as_bytes();
    let mut end = b.len();
    while end > 0 && !b[end - 1].is_ascii_digit() {
        end -= 1;
    }
    let mut start = end;
    while start > 0 && b[start - 1].is_ascii_digit() {
        start -= 1;
    }
    let target = (start > 0 && end > start && b[start - 1].is_ascii_lowercase())
        .then(|| {
            let file = (b[start - 1] - b'a') as usize;
            let rank = wanted[start..end].parse::<usize>().ok()?.checked_sub(1)?;
            (file < v.files() && rank < v.ranks()).then(|| vzero_rules::Square::new(file, rank, v.files()).index())
        })
        .flatten();
    if let (Some(t), false) = (target, wanted == "0000") {
        let mut list = vzero_rules::MoveList::new();
        pos.legal_moves_into(&mut list);
        if let Some(&m) = list.as_slice().iter().filter(|m| m.to() == t).find(|&&m| pos.uci(m) == wanted) {
            return Ok(m);
        }
    }
    pos.parse_uci(text)
}

/// The mover of each ply of a replayed game (Dictator double moves do not alternate).
pub fn movers(start: &Position, moves: &[Move]) -> Vec<Color> {
    let mut pos = *start;
    moves
        .iter()
        .map(|&m| {
            let c = pos.side_to_move();
            pos.play(m);
            c
        })
        .collect()
}

/// An input: a run directory or a PGN file.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    RunDir(PathBuf),
    Pgn(PathBuf),
}

impl Input {
    /// A directory is a run directory; anything else is read as PGN.
    pub fn detect(path: &Path) -> Input {
        if path.is_dir() || vzero_data::remote::is_remote_spec(path) {
            Input::RunDir(path.to_path_buf())
        } else {
            Input::Pgn(path.to_path_buf())
        }
    }
}

/// Streams every game of `inputs` to `f`: chunk by chunk, PGN game by game. Unreadable chunks
/// and malformed PGN games come as `Err(Skipped)`. Stops early when `f` returns `false`.
pub fn for_each_game(inputs: &[Input], mut f: impl FnMut(std::result::Result<RawGame, Skipped>) -> bool) -> Result<()> {
    for input in inputs {
        match input {
            Input::RunDir(dir) => {
                if !vzero_data::remote::is_remote_spec(dir) && !dir.join("data").is_dir() {
                    bail!("{}: not a run directory (no data/ folder)", dir.display());
                }
                let run = vzero_data::RunDir::open_existing(dir).with_context(|| format!("opening run directory {}", dir.display()))?;
                for chunk in run.list_chunks()? {
                    let name = run.describe(&chunk);
                    let games = vzero_data::Chunk::open(&chunk).and_then(|c| c.games());
                    let games = match games {
                        Ok(g) => g,
                        Err(e) => {
                            if !f(Err(Skipped { origin: name, reason: format!("unreadable chunk, its games are lost: {e}"), chunk: true })) {
                                return Ok(());
                            }
                            continue;
                        }
                    };
                    for (i, g) in games.into_iter().enumerate() {
                        if !f(Ok(RawGame::from_record(format!("{name}#{i}"), g))) {
                            return Ok(());
                        }
                    }
                }
            }
            Input::Pgn(path) => {
                let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
                let mut reader = PgnReader::new(std::io::BufReader::new(file), path.display().to_string());
                while let Some(g) = reader.next_game()? {
                    if !f(g) {
                        return Ok(());
                    }
                }
            }
        }
    }
    Ok(())
}

/// A streaming PGN reader: one game at a time, each with the line of its first tag/move and of
/// every move. Movetext: move numbers, comments (`{…}`, `; …`), NAGs, variations (skipped),
/// ended by a result token. A malformed game is returned as `Err(Skipped)` and reading goes on
/// with the next game.
pub struct PgnReader<R: BufRead> {
    input: R,
    file: String,
    line_no: usize,
    eof: bool,
    /// A tag line that ended a game without a result token; it starts the next game.
    pending_tag: Option<(usize, String)>,
}

#[derive(Default)]
struct Partial {
    start_line: usize,
    tags: Vec<(String, String)>,
    moves: Vec<String>,
    move_lines: Vec<usize>,
    error: Option<(usize, String)>,
    in_moves: bool,
    started: bool,
}

impl<R: BufRead> PgnReader<R> {
    pub fn new(input: R, file: impl Into<String>) -> Self {
        PgnReader { input, file: file.into(), line_no: 0, eof: false, pending_tag: None }
    }

    fn finish(&self, p: Partial, result: String) -> std::result::Result<RawGame, Skipped> {
        if let Some((line, msg)) = p.error {
            return Err(Skipped { origin: format!("{}:{line}", self.file), reason: msg, chunk: false });
        }
        let tag = |n: &str| p.tags.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        if let Some(t) = tag("Result") {
            if t != result && t != "*" {
                return Err(Skipped {
                    origin: format!("{}:{}", self.file, p.start_line),
                    reason: format!("result token {result} differs from the Result tag {t}"),
                    chunk: false,
                });
            }
        }
        Ok(RawGame {
            origin: format!("{}:{}", self.file, p.start_line),
            variant: tag("Variant").map(|v| v.to_ascii_lowercase()),
            start_fen: tag("FEN"),
            move_origins: p.move_lines.iter().map(|l| format!("{}:{l}", self.file)).collect(),
            moves: p.moves,
            result,
            network: tag("Network"),
            white: tag("White").unwrap_or_default(),
            black: tag("Black").unwrap_or_default(),
            priors: Vec::new(),
            values: Vec::new(),
        })
    }

    /// The next game, `Ok(None)` at the end of the file; I/O errors are errors.
    pub fn next_game(&mut self) -> Result<Option<std::result::Result<RawGame, Skipped>>> {
        let mut p = Partial::default();
        let mut comment = false;
        let mut var_depth = 0usize;
        let mut buf = String::new();
        if let Some((ln, t)) = self.pending_tag.take() {
            p.start_line = ln;
            p.started = true;
            parse_tag(&t, ln, &mut p);
        }
        loop {
            if self.eof {
                return Ok(None);
            }
            buf.clear();
            let n = self.input.read_line(&mut buf).with_context(|| format!("reading {}", self.file))?;
            if n == 0 {
                self.eof = true;
                if p.started {
                    let msg = if comment {
                        "unterminated '{' comment".to_string()
                    } else {
                        format!("game has no result token (1-0, 0-1, 1/2-1/2 or *) before the end of the file at line {}", self.line_no)
                    };
                    let line = p.error.as_ref().map_or(p.start_line, |e| e.0);
                    return Ok(Some(Err(Skipped { origin: format!("{}:{line}", self.file), reason: p.error.map_or(msg, |e| e.1), chunk: false })));
                }
                return Ok(None);
            }
            self.line_no += 1;
            let ln = self.line_no;
            let line = buf.trim_end_matches(['\n', '\r']);
            let trimmed = line.trim();
            if !comment && var_depth == 0 && trimmed.starts_with('[') {
                if p.in_moves {
                    // A new game's tags after movetext without a result token: report the broken
                    // game; this line starts the next one (re-read it by hand).
                    let bad = Skipped {
                        origin: format!("{}:{}", self.file, p.start_line),
                        reason: format!("missing result token (next game's tags begin on line {ln})"),
                        chunk: false,
                    };
                    self.pending_tag = Some((ln, trimmed.to_string()));
                    return Ok(Some(Err(bad)));
                }
                if !p.started {
                    p.start_line = ln;
                    p.started = true;
                }
                parse_tag(trimmed, ln, &mut p);
                continue;
            }
            if trimmed.starts_with('%') {
                continue;
            }
            let mut token = String::new();
            let mut done: Option<String> = None;
            for c in line.chars() {
                if comment {
                    if c == '}' {
                        comment = false;
                    }
                    continue;
                }
                let sep = match c {
                    '{' => {
                        comment = true;
                        true
                    }
                    ';' => {
                        if let Some(r) = flush(&mut token, &mut p, ln) {
                            done = Some(r);
                        }
                        break;
                    }
                    '(' => {
                        var_depth += 1;
                        true
                    }
                    ')' => {
                        if var_depth == 0 {
                            p.error.get_or_insert((ln, "')' without '('".into()));
                        } else {
                            var_depth -= 1;
                        }
                        token.clear();
                        continue;
                    }
                    c if c.is_whitespace() => true,
                    c => {
                        if var_depth == 0 {
                            token.push(c);
                        }
                        false
                    }
                };
                if sep {
                    if var_depth > 0 && c != '(' {
                        token.clear();
                    } else if let Some(r) = flush(&mut token, &mut p, ln) {
                        done = Some(r);
                        break;
                    }
                }
            }
            if done.is_none() && var_depth == 0 && !comment {
                if let Some(r) = flush(&mut token, &mut p, ln) {
                    done = Some(r);
                }
            }
            if let Some(result) = done {
                return Ok(Some(self.finish(p, result)));
            }
        }
    }
}

fn parse_tag(trimmed: &str, ln: usize, p: &mut Partial) {
    match vzero_rules::pgn::parse_tag_pair(trimmed) {
        Ok((name, value)) => p.tags.push((name.to_string(), value)),
        Err(e) => {
            p.error.get_or_insert((ln, e));
        }
    }
}

/// Consumes a movetext token; returns the result when it is a result token.
fn flush(token: &mut String, p: &mut Partial, ln: usize) -> Option<String> {
    if token.is_empty() {
        return None;
    }
    let t = std::mem::take(token);
    if matches!(t.as_str(), "1-0" | "0-1" | "1/2-1/2" | "*") {
        if !p.started {
            p.start_line = ln;
        }
        return Some(t);
    }
    if !p.started {
        p.start_line = ln;
        p.started = true;
    }
    p.in_moves = true;
    if t.starts_with('$') {
        return None;
    }
    let body: &str = match t.find('.') {
        Some(i) if i > 0 && t[..i].bytes().all(|b| b.is_ascii_digit()) => t[i..].trim_start_matches('.'),
        _ if t.bytes().all(|b| b.is_ascii_digit()) => "",
        _ => &t,
    };
    let mv = body.trim_end_matches(['!', '?']);
    if !mv.is_empty() {
        p.moves.push(mv.to_string());
        p.move_lines.push(ln);
    }
    None
}
