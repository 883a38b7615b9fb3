//! Streaming game sources: run directories (HDF5 chunks, one chunk at a time) and PGN files
//! (one game at a time, by the rules core's PGN reader), each game replayed and checked with the
//! rules core.
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
    /// White's name (PGN `White` tag, record `white`).
    pub white: String,
    /// Black's name.
    pub black: String,
    /// Per move: prior of the played move (may be empty).
    pub priors: Vec<f32>,
    /// Per move: search value for the mover (may be empty).
    pub values: Vec<f32>,
    /// PGN: every tag pair in file order (empty for run-directory records).
    pub tags: Vec<(String, String)>,
}

impl RawGame {
    /// A game of PGN file `file` as a raw game: origins `file:line`, the variant (lower case),
    /// start FEN, network and players from its tags.
    pub fn from_pgn(file: &str, g: vzero_rules::pgn::PgnGameAt) -> RawGame {
        let tag = |n: &str| g.game.tag(n).map(str::to_string);
        RawGame {
            origin: format!("{file}:{}", g.line),
            variant: tag("Variant").map(|v| v.to_ascii_lowercase()),
            start_fen: tag("FEN"),
            move_origins: g.move_lines.iter().map(|l| format!("{file}:{l}")).collect(),
            network: tag("Network"),
            white: tag("White").unwrap_or_default(),
            black: tag("Black").unwrap_or_default(),
            priors: Vec::new(),
            values: Vec::new(),
            moves: g.game.moves,
            result: g.game.result,
            tags: g.game.tags,
        }
    }

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
            tags: Vec::new(),
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
    /// The game as read.
    pub raw: RawGame,
    /// Its start position.
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

    /// No move played.
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
    /// A run directory (or a remote one): the game records of its chunks.
    RunDir(PathBuf),
    /// A PGN file.
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

/// PGN games as raw games, one at a time: [`vzero_rules::pgn::PgnReader`] (which see for the
/// syntax), each game with its tags and the `file:line` of its first line and of every move; a
/// malformed game comes as `Err(Skipped)` at its `file:line` and reading goes on.
pub struct PgnReader<R: BufRead>(vzero_rules::pgn::PgnReader<R>);

impl<R: BufRead> PgnReader<R> {
    /// A reader of `input`; `file` names it in origins.
    pub fn new(input: R, file: impl Into<String>) -> Self {
        PgnReader(vzero_rules::pgn::PgnReader::new(input, file))
    }

    /// The next game, `Ok(None)` at the end of the file; I/O errors are errors.
    pub fn next_game(&mut self) -> Result<Option<std::result::Result<RawGame, Skipped>>> {
        Ok(self.0.next_game()?.map(|g| match g {
            Ok(g) => Ok(RawGame::from_pgn(self.0.file(), g)),
            Err(e) => Err(Skipped { origin: format!("{}:{}", e.file, e.line), reason: e.message, chunk: false }),
        }))
    }
}
