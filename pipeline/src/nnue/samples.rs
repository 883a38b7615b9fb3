//! The NNUE trainer's samples: every game of the runs (targets: the search values of self-play
//! rows and the games' results) and of PGN files (results only), and every position a teacher
//! scored ([`vzero_data::ScoredPosition`]) with its raw score and the game's result, split into
//! training and validation by a hash of each game's name (stable as the data grows).

use std::path::{Path, PathBuf};

use anyhow::Result;
use rayon::prelude::*;
use vzero_data::{Chunk, GameRecord, RunDir, ScoredPosition, TeacherScore};
use vzero_nnue::dataset::{game_samples, scored_sample, white_result, DataOptions, SampleCounts, ScoredReplay, UciScore};
use vzero_nnue::train::Sample;
use vzero_nnue::FsfMapping;

/// The `.h5` chunks of a run (data/ and its archive), oldest first.
fn run_chunks(run: &RunDir) -> Result<Vec<PathBuf>> {
    let mut chunks = run.list_chunks()?;
    if let Ok(rd) = std::fs::read_dir(run.archive_dir()) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.ends_with(".h5") && !n.starts_with('.') {
                chunks.push(e.path());
            }
        }
    }
    Ok(chunks)
}

/// The variant of a run: its config's, else its data's.
pub(crate) fn run_variant(run: &RunDir) -> Result<Option<String>> {
    if let Some(v) = run.stored_variant()? {
        return Ok(Some(v));
    }
    Ok(run.data_variant()?.map(|(v, _)| v))
}

/// Training and validation samples.
pub(crate) struct Data {
    pub train: Vec<Sample>,
    pub validation: Vec<Sample>,
    pub games: usize,
    pub counts: SampleCounts,
    /// Samples from teacher scores, from search values, and from PGN games (results only).
    pub scored: usize,
    pub searched: usize,
    pub from_pgn: usize,
}

/// One unit of data: a game, or a chunk's scored positions. `name` says where it is (in
/// errors); `key` is what [`holdout_split`] hashes ([`holdout_key`]).
enum Item {
    /// A game of a run (its values: the search's) or of a PGN file (`pgn`; its values: the
    /// game's result from each mover's side).
    Game { name: String, key: String, record: vzero_data::GameRecord, pgn: bool },
    /// A chunk's positions with teacher scores, and how many games it holds.
    Scored { name: String, key: String, positions: Vec<vzero_data::ScoredPosition>, games: usize },
}

#[cfg(test)]
impl Item {
    fn key(&self) -> &str {
        match self {
            Item::Game { key, .. } | Item::Scored { key, .. } => key,
        }
    }
}

/// An item's holdout key: `what` (e.g. `game 3`; empty for a whole file) and the file's name
/// without its directory, so that the key is the same on every machine and cache.
fn holdout_key(what: &str, path: &str) -> String {
    format!("{what}|{}", path.rsplit('/').next().unwrap_or(path))
}

/// Which items are held out for validation: those whose key ([`holdout_key`]: file name and
/// index, not the directory) hashes below `holdout`, so that an item keeps its side as the data
/// grows (a trainer resumed on more data, e.g. each round of the loop, never trains on what it
/// validated on before); at least one when there are two or more items, and never every item
/// (a run of one chunk trains on it, with no validation, rather than on nothing).
fn holdout_split(keys: &[&str], holdout: f64) -> Vec<bool> {
    let cut = (holdout.clamp(0.0, 1.0) * u64::MAX as f64) as u64;
    let mut held: Vec<bool> = keys.iter().map(|k| holdout > 0.0 && vzero_base::fnv1a64(k.as_bytes()) < cut).collect();
    if holdout > 0.0 && keys.len() >= 2 && !held.contains(&true) {
        held[keys.len() - 1] = true;
    }
    if !held.is_empty() && !held.contains(&false) {
        held[0] = false;
    }
    held
}

/// One item's samples and counts, before the split.
struct Loaded {
    key: String,
    samples: Vec<Sample>,
    counts: SampleCounts,
    games: usize,
    scored: usize,
    searched: usize,
    from_pgn: usize,
}

/// The samples of one item (consumed: its records are dropped as soon as they are replayed).
fn item_samples(item: Item, mapping: &FsfMapping, opts: &DataOptions) -> Result<Loaded> {
    let mut out = Vec::new();
    match item {
        Item::Game { name, key, record: g, pgn } => {
            let c = game_samples(mapping, &name, &g.start_fen, &g.moves, white_result(&g.result, &g.reason), &g.values, opts, &mut out)?;
            let (searched, from_pgn) = if pgn { (0, c.kept) } else { (c.kept, 0) };
            Ok(Loaded { key, samples: out, counts: c, games: 1, scored: 0, searched, from_pgn })
        }
        Item::Scored { name, key, positions, games } => {
            let mut replay = ScoredReplay::default();
            let mut counts = SampleCounts::default();
            for (j, sp) in positions.iter().enumerate() {
                let score = match sp.score {
                    TeacherScore::Cp(c) => UciScore::Cp(c),
                    TeacherScore::Mate(m) => UciScore::Mate(m),
                };
                let what = format!("scored position {} of {name}", j + 1);
                let pos = replay.position(mapping, &what, &sp.start_fen, &sp.moves)?;
                counts.add(scored_sample(mapping, &what, pos, score, &sp.best, sp.result, opts, &mut out)?);
            }
            Ok(Loaded { key, samples: out, scored: counts.kept, counts, games, searched: 0, from_pgn: 0 })
        }
    }
}

/// A chunk's scored positions split by the game they come from, in order. Each group comes with
/// its game's index and the number of the chunk's games it stands for (games without kept
/// positions count with the group before them, or the first). Positions that name their game
/// ([`ScoredPosition::game`], every `nnue play` chunk) are grouped by it; older chunks by
/// [`scored_by_path`].
fn scored_by_game(scored: Vec<ScoredPosition>, games: &[GameRecord]) -> Vec<(usize, Vec<ScoredPosition>, usize)> {
    let named = scored.iter().map(|sp| sp.game.map(|g| g as usize)).collect::<Option<Vec<usize>>>();
    let groups = match named {
        Some(index) if index.iter().all(|&g| g < games.len()) && index.windows(2).all(|w| w[0] <= w[1]) => {
            let mut groups: Vec<(usize, Vec<ScoredPosition>)> = Vec::new();
            for (sp, g) in scored.into_iter().zip(index) {
                match groups.last_mut() {
                    Some(last) if last.0 == g => last.1.push(sp),
                    _ => groups.push((g, vec![sp])),
                }
            }
            groups
        }
        _ => scored_by_path(scored, games),
    };
    let starts: Vec<usize> = groups.iter().map(|g| g.0).collect();
    groups
        .into_iter()
        .enumerate()
        .map(|(k, (game, positions))| {
            let begin = if k == 0 { 0 } else { starts[k] };
            let end = starts.get(k + 1).copied().unwrap_or(games.len()).max(begin);
            (game, positions, end - begin)
        })
        .collect()
}

/// The game of each scored position read off its moves, for chunks whose positions do not name
/// it. A teacher's chunk holds its games' positions game after game, each on its game's path or
/// one move off it (a multi-PV line), their move counts never falling within a game: a position
/// that does not fit the current game, or has fewer moves than one before it, starts the next
/// game that it fits. Positions that fit no later game stay in the current group.
fn scored_by_path(scored: Vec<ScoredPosition>, games: &[GameRecord]) -> Vec<(usize, Vec<ScoredPosition>)> {
    let fits = |sp: &ScoredPosition, g: &GameRecord| {
        let path = sp.moves.len().saturating_sub(1);
        sp.start_fen == g.start_fen && path <= g.moves.len() && sp.moves[..path] == g.moves[..path]
    };
    // (game, positions, most moves so far)
    let mut groups: Vec<(usize, Vec<ScoredPosition>, usize)> = Vec::new();
    for sp in scored {
        let len = sp.moves.len();
        let game = match groups.last() {
            Some(&(at, _, most)) if len >= most && games.get(at).is_some_and(|g| fits(&sp, g)) => Some(at),
            Some(&(at, _, _)) => (at + 1..games.len()).find(|&i| fits(&sp, &games[i])),
            None => (0..games.len()).find(|&i| fits(&sp, &games[i])),
        };
        match (game, groups.last_mut()) {
            (Some(i), Some(last)) if i == last.0 => {
                last.1.push(sp);
                last.2 = len;
            }
            (Some(i), _) => groups.push((i, vec![sp], len)),
            (None, Some(last)) => last.1.push(sp),
            (None, None) => groups.push((0, vec![sp], len)),
        }
    }
    groups.into_iter().map(|(game, positions, _)| (game, positions)).collect()
}

/// The items of one chunk of `mapping`'s variant: its scored positions, an item per game they
/// come from (so that the held-out share does not depend on how many games a chunk holds),
/// else each of its games.
fn chunk_items(path: &Path, mapping: &FsfMapping) -> Result<Vec<Item>> {
    let c = Chunk::open(path)?;
    if c.meta.variant != mapping.name() {
        return Ok(Vec::new());
    }
    let scored = c.scored_positions()?;
    let file = path.display().to_string();
    if !scored.is_empty() {
        let games = c.games()?;
        if games.is_empty() {
            return Ok(vec![Item::Scored { key: holdout_key("", &file), name: file, positions: scored, games: c.games }]);
        }
        return Ok(scored_by_game(scored, &games)
            .into_iter()
            .map(|(game, positions, games)| {
                let what = format!("scored game {}", game + 1);
                Item::Scored { key: holdout_key(&what, &file), name: format!("{what} of {file}"), positions, games }
            })
            .collect());
    }
    let mut items = Vec::new();
    for (i, g) in c.games()?.into_iter().enumerate() {
        if g.variant == mapping.name() {
            let what = format!("game {}", i + 1);
            items.push(Item::Game { name: format!("{what} of {file}"), key: holdout_key(&what, &file), record: g, pgn: false });
        }
    }
    Ok(items)
}

/// Every game and scored position of the runs as samples; the items [`holdout_split`] picks go
/// to validation. Chunks are read, replayed and turned into samples in parallel (rayon), each
/// chunk's records dropped as soon as its samples are made, so that memory holds samples, not
/// records (a scored position's record repeats its game's moves).
pub(crate) fn load_data(runs: &[RunDir], pgns: &[PathBuf], mapping: &FsfMapping, opts: &DataOptions, holdout: f64) -> Result<Data> {
    let mut items = Vec::new();
    for path in pgns {
        items.extend(pgn_items(path, mapping)?);
    }
    let mut loaded: Vec<Loaded> = items.into_par_iter().map(|it| item_samples(it, mapping, opts)).collect::<Result<_>>()?;
    let mut chunks = Vec::new();
    for run in runs {
        chunks.extend(run_chunks(run)?);
    }
    let per_chunk: Vec<Vec<Loaded>> = chunks
        .par_iter()
        .map(|path| chunk_items(path, mapping)?.into_iter().map(|it| item_samples(it, mapping, opts)).collect::<Result<Vec<_>>>())
        .collect::<Result<_>>()?;
    loaded.extend(per_chunk.into_iter().flatten());
    let held = holdout_split(&loaded.iter().map(|l| l.key.as_str()).collect::<Vec<_>>(), holdout);
    let mut d = Data { train: Vec::new(), validation: Vec::new(), games: 0, counts: SampleCounts::default(), scored: 0, searched: 0, from_pgn: 0 };
    let kept: usize = loaded.iter().map(|l| l.samples.len()).sum();
    d.train.reserve(kept);
    for (l, held) in loaded.into_iter().zip(held) {
        if held { d.validation.extend(l.samples) } else { d.train.extend(l.samples) }
        d.games += l.games;
        d.scored += l.scored;
        d.searched += l.searched;
        d.from_pgn += l.from_pgn;
        d.counts.add(l.counts);
    }
    Ok(d)
}

/// The decided games of a PGN file as items whose "search values" are the game's result from
/// each mover's side (a PGN game has no scores: both targets are its result). Games that do
/// not parse or replay, of another variant or without a result are skipped with a warning
/// naming their `file:line`.
fn pgn_items(path: &Path, mapping: &FsfMapping) -> Result<Vec<Item>> {
    let mut items = Vec::new();
    let mut skipped = 0usize;
    vzero_openings::for_each_game(&[vzero_openings::Input::Pgn(path.to_path_buf())], |g| {
        // (replay refuses games of other variants, bad FENs, illegal moves and no result)
        match g.and_then(|raw| vzero_openings::replay(raw, mapping.variant())) {
            Ok(g) => {
                let white = 2.0 * g.white_score as f32 - 1.0;
                let mut pos = g.start;
                let mut moves = Vec::with_capacity(g.moves.len());
                let mut values = Vec::with_capacity(g.moves.len());
                for m in &g.moves {
                    values.push(if pos.side_to_move() == vzero_rules::Color::White { white } else { -white });
                    moves.push(pos.uci(*m));
                    pos.play(*m);
                }
                let record = vzero_data::GameRecord {
                    variant: mapping.name().to_string(),
                    start_fen: g.start.fen(),
                    moves,
                    result: g.raw.result.clone(),
                    reason: "pgn".to_string(),
                    network: String::new(),
                    white: g.raw.white.clone(),
                    black: g.raw.black.clone(),
                    priors: Vec::new(),
                    values,
                };
                let origin = g.raw.origin.clone();
                items.push(Item::Game { key: holdout_key("", &origin), name: origin, record, pgn: true });
            }
            Err(s) => {
                if skipped < 10 {
                    eprintln!("skipped {s}");
                }
                skipped += 1;
            }
        }
        true
    })?;
    if skipped > 0 {
        eprintln!("{}: {} games read, {skipped} skipped", path.display(), items.len() + skipped);
    }
    Ok(items)
}

/// The targets of a net in words, for its checkpoint and description.
pub(crate) fn targets_of(d: &Data, lambda: f32) -> String {
    let mut parts = Vec::new();
    if d.scored > 0 {
        parts.push(format!("teacher scores ({} positions)", d.scored));
    }
    if d.searched > 0 {
        parts.push(format!("search values ({} positions)", d.searched));
    }
    if d.from_pgn > 0 {
        parts.push(format!("PGN results as scores ({} positions)", d.from_pgn));
    }
    format!("lambda {lambda}: {} + game results", if parts.is_empty() { "none".to_string() } else { parts.join(", ") })
}


#[cfg(test)]
mod tests {
    use super::*;

    fn game(what: &str, file: &str) -> Item {
        let g = vzero_data::GameRecord {
            variant: "empire".into(),
            start_fen: String::new(),
            moves: Vec::new(),
            result: String::new(),
            reason: String::new(),
            network: String::new(),
            white: String::new(),
            black: String::new(),
            priors: Vec::new(),
            values: Vec::new(),
        };
        Item::Game { name: format!("{what} of {file}"), key: holdout_key(what, file), record: g, pgn: false }
    }

    /// An item keeps its side as data is added, whatever directory holds the run.
    #[test]
    fn holdout_is_stable_as_the_data_grows_and_across_machines() {
        let items = |dir: &str, n: usize| (0..n).map(|i| game(&format!("game {}", i % 4 + 1), &format!("{dir}/data/{:04}.h5", i / 4))).collect::<Vec<_>>();
        let split = |items: Vec<Item>, holdout: f64| holdout_split(&items.iter().map(|i| i.key()).collect::<Vec<_>>(), holdout);
        let small = split(items("/a", 400), 0.1);
        let big = split(items("/other machine/cache", 4000), 0.1);
        assert_eq!(small[..], big[..400], "the first 400 items keep their side");
        let share = big.iter().filter(|&&h| h).count() as f64 / big.len() as f64;
        assert!((0.07..0.13).contains(&share), "{share}");
        assert_eq!(split(items("/a", 2), 0.0), vec![false, false]);
        let two = split(items("/a", 2), 0.01);
        assert!(two.contains(&true) && two.contains(&false), "{two:?}");
        // a single item (a run of one chunk) is trained on, whatever its hash: never all held out
        assert_eq!(split(items("/a", 1), 1.0), vec![false]);
        assert_eq!(split(items("/a", 2), 1.0), vec![false, true]);
    }

    fn record(fen: &str, moves: &[&str]) -> GameRecord {
        GameRecord { start_fen: fen.into(), moves: moves.iter().map(|m| m.to_string()).collect(), ..match game("", "") { Item::Game { record, .. } => record, _ => unreachable!() } }
    }

    fn pos(fen: &str, moves: &[&str]) -> ScoredPosition {
        ScoredPosition { start_fen: fen.into(), moves: moves.iter().map(|m| m.to_string()).collect(), score: TeacherScore::Cp(0), best: String::new(), result: None, game: None }
    }

    /// A teacher's chunk is split into its games' positions, multi-PV siblings (one move off the
    /// path) included, whatever the chunk's size; every game is counted once.
    #[test]
    fn scored_positions_are_held_out_by_game() {
        let games = [record("s", &["a", "b", "c"]), record("s", &["a", "x", "y", "z"]), record("s", &["q"]), record("t", &["a", "b"])];
        let scored = vec![
            pos("s", &["a"]),
            pos("s", &["a", "b"]),
            pos("s", &["a", "b", "d"]), // a sibling of game 1
            pos("s", &["a", "x"]),      // game 2 leaves game 1's path at its second move
            pos("s", &["a", "x", "y", "z"]),
            // game 3 kept nothing
            pos("t", &["a"]),
            pos("t", &["a", "b"]), // the decisive position: the game's whole path
        ];
        let groups = scored_by_game(scored, &games);
        let shape: Vec<(usize, usize, usize)> = groups.iter().map(|(g, p, n)| (*g, p.len(), *n)).collect();
        assert_eq!(shape, vec![(0, 3, 1), (1, 2, 2), (3, 2, 1)]);
        // positions that fit no game stay with the group before them; no records: one group
        let groups = scored_by_game(vec![pos("s", &["a"]), pos("u", &["z"])], &games[..1]);
        assert_eq!(groups.iter().map(|(g, p, n)| (*g, p.len(), *n)).collect::<Vec<_>>(), vec![(0, 2, 1)]);
        assert_eq!(scored_by_game(vec![pos("s", &["a"])], &[]).iter().map(|(g, p, n)| (*g, p.len(), *n)).collect::<Vec<_>>(), vec![(0, 1, 0)]);
    }

    /// Positions that name their game are grouped by it, even where their moves would say
    /// otherwise (two games with the same opening); a name out of range or out of order falls
    /// back to the moves.
    #[test]
    fn scored_positions_that_name_their_game_are_grouped_by_it() {
        let games = [record("s", &["a", "b"]), record("s", &["a", "b", "c"]), record("s", &["q"])];
        let named = |fen: &str, moves: &[&str], g: u32| ScoredPosition { game: Some(g), ..pos(fen, moves) };
        // by the moves alone all three would join game 0 (each fits it and grows)
        let scored = vec![named("s", &["a"], 0), named("s", &["a", "b"], 1), named("s", &["a", "b", "c"], 1)];
        let shape = |g: Vec<(usize, Vec<ScoredPosition>, usize)>| g.iter().map(|(g, p, n)| (*g, p.len(), *n)).collect::<Vec<_>>();
        assert_eq!(shape(scored_by_game(scored.clone(), &games)), vec![(0, 1, 1), (1, 2, 2)]);
        assert_eq!(shape(scored_by_game(scored.iter().cloned().map(|s| ScoredPosition { game: None, ..s }).collect(), &games)), vec![(0, 3, 3)]);
        let mut bad = scored.clone();
        bad[2].game = Some(7);
        assert_eq!(shape(scored_by_game(bad, &games)), vec![(0, 3, 3)]);
    }
}
