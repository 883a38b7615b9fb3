//! Rules commands: `perft`, `moves`, `result`, `replay`, `variants`. They use no network: the
//! `vzero` binary (`src/front.rs`) runs them without loading LibTorch, and so does `vzero-torch`.

use anyhow::{bail, Context, Result};
use std::io::Write;
use clap::Args;
use vzero_rules::{Game, Position, Variant};

/// The names of the rules commands.
#[allow(dead_code)] // used by the front binary (src/front.rs) only
pub const COMMANDS: [&str; 5] = ["perft", "moves", "result", "replay", "variants"];

/// The rules commands, as both binaries parse them.
#[derive(clap::Subcommand, Debug)]
pub enum RulesCommand {
    /// Count the leaves of the legal move tree; the last line is the total.
    Perft(PerftArgs),
    /// List the legal moves, one per line, in UCI notation.
    Moves(MovesArgs),
    /// Print the game state as `<ongoing|win|loss|draw> <reason>` for the side to move.
    Result(MovesArgs),
    /// Replay a game: one JSON line per position (the start and after each move) with its FEN,
    /// check, result, sorted legal moves and the SAN of the move played from it.
    Replay(MovesArgs),
    /// List the variants with a description and the rules file each follows.
    Variants,
}

impl RulesCommand {
    /// Runs the command.
    pub fn run(self) -> Result<()> {
        match self {
            RulesCommand::Perft(a) => perft(a),
            RulesCommand::Moves(a) => moves(a),
            RulesCommand::Result(a) => result(a),
            RulesCommand::Replay(a) => replay(a),
            RulesCommand::Variants => variants(),
        }
    }
}

/// Parses the command line as clap's `parse` does (help and version on stdout, exit 0; a
/// mistake as `error: …` then the usage on stderr, exit 2), with every line of an error bounded:
/// clap repeats an invalid value whole, and a 20 KB argument must not come back whole.
pub fn parse_args<C: clap::Parser>() -> C {
    match C::try_parse() {
        Ok(c) => c,
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            for line in e.render().to_string().lines() {
                eprintln!("{}", vzero_rules::echo_within(line, vzero_rules::MESSAGE_MAX));
            }
            std::process::exit(e.exit_code());
        }
    }
}

/// Prints `error: …` and exits with status 1 on an error; a closed pipe (`vzero moves | head`)
/// is the reader's choice, not an error.
pub fn exit_on_error(result: Result<()>) {
    if let Err(e) = result {
        if e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) {
            return;
        }
        // a safety net under the bounded echoes of the inputs: no error line is unbounded
        eprintln!("error: {}", vzero_rules::echo_within(&format!("{e:#}"), vzero_rules::MESSAGE_MAX));
        std::process::exit(1);
    }
}

/// Where a position comes from: variant, FEN and moves played from it.
#[derive(Args, Debug, Clone)]
pub struct PositionArgs {
    /// Variant name, or a path to a variant definition (.toml).
    #[arg(long, default_value = "empire")]
    pub variant: String,
    /// Start from this FEN instead of the variant's start position.
    #[arg(long)]
    pub fen: Option<String>,
    /// Moves to play first, in UCI notation, separated by spaces.
    #[arg(long, default_value = "")]
    pub moves: String,
    /// A game from a PGN file (its first game, as `vzero match` and `vzero serve` write it):
    /// its `Variant` and `FEN` tags and its moves, in place of --variant, --fen and --moves.
    #[arg(long, conflicts_with_all = ["fen", "moves"])]
    pub pgn: Option<std::path::PathBuf>,
}

impl PositionArgs {
    /// The variant, start FEN and moves these arguments name (from `--pgn` when given).
    pub fn resolve(&self) -> Result<(Variant, Option<String>, Vec<String>)> {
        let Some(path) = &self.pgn else {
            return Ok((Variant::load(&self.variant)?, self.fen.clone(), self.moves.split_whitespace().map(str::to_string).collect()));
        };
        let games = vzero_rules::pgn::read_pgn_file(path)?;
        let Some(g) = games.into_iter().next() else { bail!("{}: no game in the file", path.display()) };
        let v = Variant::load(g.tag("Variant").unwrap_or(&self.variant)).with_context(|| format!("{}: its Variant tag", path.display()))?;
        Ok((v, g.tag("FEN").map(str::to_string), g.moves))
    }

    /// Builds the game: the position after the moves, with its history.
    pub fn game(&self) -> Result<Game> {
        let (v, fen, moves) = self.resolve()?;
        let mut game = match &fen {
            Some(f) => Game::from_fen(v, f)?,
            None => Game::startpos(v),
        };
        for m in &moves {
            game.play_uci(m)?;
        }
        Ok(game)
    }
}

/// Arguments of `vzero perft`.
#[derive(Args, Debug)]
pub struct PerftArgs {
    #[command(flatten)]
    pos: PositionArgs,
    /// Depth in plies.
    #[arg(long)]
    depth: u32,
    /// Print the count below each legal move first.
    #[arg(long)]
    divide: bool,
    /// Threads (1 to 64): the legal moves of the root are counted in parallel (rayon); the
    /// counts and the output are the same as on one thread. `scripts/bench.sh perft` measures
    /// one thread, whatever this is.
    #[arg(long, default_value_t = 1)]
    threads: usize,
}

/// Arguments of `vzero moves` and `vzero result`.
#[derive(Args, Debug)]
pub struct MovesArgs {
    #[command(flatten)]
    pos: PositionArgs,
}

/// `vzero perft`.
pub fn perft(a: PerftArgs) -> Result<()> {
    if a.depth > 20 {
        bail!("--depth {} is too deep (at most 20)", a.depth);
    }
    if a.threads == 0 || a.threads > 64 {
        bail!("--threads must be 1 to 64, not {}", a.threads);
    }
    let pos: Position = *a.pos.game()?.position();
    let mut out = std::io::stdout().lock();
    if a.divide && a.depth > 0 {
        let mut total = 0;
        for (m, n) in divided(&pos, a.depth, a.threads)? {
            writeln!(out, "{}: {n}", pos.uci(m))?;
            total += n;
        }
        writeln!(out)?;
        writeln!(out, "{total}")?;
    } else if a.threads > 1 && a.depth > 2 {
        writeln!(out, "{}", divided(&pos, a.depth, a.threads)?.iter().map(|(_, n)| n).sum::<u64>())?;
    } else {
        writeln!(out, "{}", pos.perft(a.depth))?;
    }
    Ok(())
}

/// The leaves below each legal move of `pos` (depth >= 1), in the order of
/// [`Position::legal_moves`]: on this thread, or with `threads > 1` the moves shared out over a
/// rayon pool of that many threads (one task per root move; the order is kept).
fn divided(pos: &Position, depth: u32, threads: usize) -> Result<Vec<(vzero_rules::Move, u64)>> {
    let below = |m: &vzero_rules::Move| {
        let mut next = *pos;
        next.play(*m);
        (*m, next.perft(depth - 1))
    };
    let moves = pos.legal_moves();
    if threads <= 1 {
        return Ok(moves.iter().map(below).collect());
    }
    use rayon::prelude::*;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    Ok(pool.install(|| moves.par_iter().map(below).collect()))
}

/// `vzero moves`.
pub fn moves(a: MovesArgs) -> Result<()> {
    let game = a.pos.game()?;
    let pos = game.position();
    let mut out = std::io::stdout().lock();
    for m in pos.legal_moves() {
        writeln!(out, "{}", pos.uci(m))?;
    }
    Ok(())
}

/// `vzero result`.
pub fn result(a: MovesArgs) -> Result<()> {
    println!("{}", a.pos.game()?.result());
    Ok(())
}

/// `vzero replay`: for each position of the game — the start (`--fen` or the variant's), then
/// the position after each of `--moves` (or the game of `--pgn FILE`) — one line of JSON:
///
/// `{"ply":0,"fen":"…","check":false,"result":"ongoing","reason":"none","moves":["a3a4",…],"move":"e2e4","san":"e4"}`
///
/// `fen` as Fairy-Stockfish writes it, `check` whether the side to move is in check, `result`
/// and `reason` as `vzero result` prints them (the game's history counts, for repetition),
/// `moves` the legal moves in UCI notation sorted as strings, `move` and `san` the next move of
/// `--moves` and its SAN in Fairy-Stockfish's form (both `null` at the last position). Moves
/// after the end of the game are played all the same. An illegal move ends the output after its
/// position's line with `error: …` and exit status 1. The rules differential test
/// (`scripts/fsf_diff.py`) reads this.
pub fn replay(a: MovesArgs) -> Result<()> {
    let (v, fen, moves) = a.pos.resolve()?;
    let mut game = match &fen {
        Some(f) => Game::from_fen(v, f)?,
        None => Game::startpos(v),
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut played = moves.iter().map(String::as_str);
    let mut ply = 0usize;
    loop {
        let pos = *game.position();
        let mut moves: Vec<String> = pos.legal_moves().into_iter().map(|m| pos.uci(m)).collect();
        moves.sort();
        let next = played.next();
        let r = game.result();
        // a move that cannot be played (after the end: "the game is over"): the line shows the
        // position reached, without it, and the error follows
        let parsed = next.map(|t| pos.parse_uci(t).map_err(|e| game.over_or(e, t)));
        let shown = if matches!(parsed, Some(Err(_))) { None } else { next };
        let san = match &parsed {
            Some(Ok(m)) => Some(pos.san(*m)),
            _ => None,
        };
        let line = serde_json::json!({
            "ply": ply,
            "fen": pos.fen(),
            "check": pos.is_check(),
            "result": r.outcome.to_string(),
            "reason": r.reason.to_string(),
            "moves": moves,
            "move": shown,
            "san": san,
        });
        writeln!(out, "{line}")?;
        match parsed {
            None => break,
            Some(Ok(m)) => game.play(m),
            Some(Err(e)) => {
                out.flush()?;
                return Err(e.into());
            }
        }
        ply += 1;
    }
    out.flush()?;
    Ok(())
}

/// `vzero variants`.
pub fn variants() -> Result<()> {
    for name in vzero_rules::variant::builtin_names() {
        let v = Variant::builtin(name)?;
        let d = v.def();
        writeln!(std::io::stdout(), "{:<16} {:>2}x{:<2} {:<18} {}", d.name, d.files, d.ranks, d.rules_file, d.description)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perft_on_threads_divides_as_on_one() {
        for name in ["empire", "shogun"] {
            let pos = Position::startpos(Variant::builtin(name).unwrap());
            let one = divided(&pos, 3, 1).unwrap();
            assert_eq!(one, divided(&pos, 3, 3).unwrap());
            assert_eq!(one.iter().map(|(_, n)| n).sum::<u64>(), pos.perft(3));
        }
    }
}
