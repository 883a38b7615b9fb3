//! Import and labelling, end to end on real files: rows replay to the games, skipped games
//! name their lines, labels are legal moves whose values follow the teacher's scores, jobs
//! resume without duplicates, and supervised steps learn from labels.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use vzero_arena::{PlayerSpec, Score};
use vzero_data::{Chunk, RunDir, Source, TeacherScore};
use vzero_encoding::{InputEncoder, MoveEncoder};
use vzero_rules::{Color, Game, Variant};
use vzero_teacher::*;

fn empire() -> Variant {
    Variant::load("empire").unwrap()
}

/// Chunks of `run` with their batch numbers (from the job's worker name), by batch.
fn chunks_by_batch(run: &RunDir) -> BTreeMap<usize, Chunk> {
    let mut out = BTreeMap::new();
    for p in run.list_chunks().unwrap() {
        let c = Chunk::open(&p).unwrap();
        let w = &c.meta.worker;
        let b: usize = w[w.rfind("_b").unwrap() + 2..].parse().unwrap();
        assert!(out.insert(b, c).is_none(), "batch {b} written twice");
    }
    out
}

const PGN: &str = r#"[Event "good 1"]
[Variant "empire"]
[Result "1-0"]

1. a3a4 a7a6 2. h3h4 h7h6 3. b3b4 1-0

[Event "illegal"]
[Variant "empire"]
[Result "0-1"]

1. a3a4 a7a6
2. a4a9 0-1

[Event "good 2, a draw"]
[Variant "empire"]
[Result "1/2-1/2"]

1. h3h4 h7h5 1/2-1/2

[Event "unfinished"]
[Variant "empire"]
[Result "*"]

1. a3a4 *
"#;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn imported_rows_replay_to_the_games_and_bad_games_are_skipped_at_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = write(dir.path(), "games.pgn", PGN);
    let run = RunDir::create_or_open(dir.path().join("run")).unwrap();
    let v = empire();
    let s = import_games(&run, v, &[pgn.clone()], &ImportOptions::default()).unwrap();
    assert_eq!((s.games, s.imported, s.rows, s.chunks), (4, 2, 7, 1));
    assert_eq!(s.skipped.len(), 2, "{:?}", s.skipped);
    let illegal = s.skipped[0].to_string();
    assert!(illegal.starts_with(&format!("{}:12:", pgn.display())), "{illegal}");
    assert!(illegal.contains("a4a9"), "{illegal}");
    assert!(s.skipped[1].to_string().contains("*"), "{}", s.skipped[1]);

    let chunks = chunks_by_batch(&run);
    let c = &chunks[&0];
    assert_eq!(c.meta.source, Source::Import);
    let rows = c.read_all().unwrap();
    let (inp, mv) = (InputEncoder::new(v), MoveEncoder::new(v));
    let games: [(&[&str], f32); 2] = [(&["a3a4", "a7a6", "h3h4", "h7h6", "b3b4"], 1.0), (&["h3h4", "h7h5"], 0.5)];
    let mut r = rows.iter();
    for (moves, white) in games {
        let mut g = Game::startpos(v);
        for (t, m) in moves.iter().enumerate() {
            let row = r.next().unwrap();
            assert_eq!(row.planes, inp.encode_game(&g), "planes of ply {t}");
            assert_eq!(row.policy.len(), 1);
            let played = mv.decode(g.position(), row.policy[0].0 as usize).unwrap();
            assert_eq!(g.position().uci(played), *m);
            let side = g.position().side_to_move();
            let expect = if white == 0.5 { [0.0, 1.0, 0.0] } else if (white == 1.0) == (side == Color::White) { [1.0, 0.0, 0.0] } else { [0.0, 0.0, 1.0] };
            assert_eq!(row.wdl, expect, "result at ply {t}");
            assert_eq!(row.moves_left, (moves.len() - t) as f32);
            assert_eq!(row.opponent_weight, if t + 1 < moves.len() { 1.0 } else { 0.0 });
            g.play_uci(m).unwrap();
        }
    }
    assert!(r.next().is_none());

    // the same file again: nothing written
    let again = import_games(&run, v, &[pgn], &ImportOptions::default()).unwrap();
    assert_eq!((again.rows, again.chunks, again.already_imported.len()), (0, 0, 1));
    assert_eq!(run.list_chunks().unwrap().len(), 1);
}

#[test]
fn smoothed_policy_targets_cover_the_legal_moves() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = write(dir.path(), "g.pgn", "[Variant \"empire\"]\n[Result \"0-1\"]\n\n1. a3a4 a7a6 0-1\n");
    let run = RunDir::create_or_open(dir.path().join("run")).unwrap();
    let v = empire();
    import_games(&run, v, &[pgn], &ImportOptions { label_smoothing: 0.1, ..ImportOptions::default() }).unwrap();
    let rows = chunks_by_batch(&run)[&0].read_all().unwrap();
    let g = Game::startpos(v);
    let legal = g.position().legal_moves().len();
    assert_eq!(rows[0].policy.len(), legal);
    assert!((rows[0].policy.iter().map(|p| p.1).sum::<f32>() - 1.0).abs() < 1e-5);
    let best = rows[0].policy.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
    assert!((best.1 - 0.9).abs() < 1e-6);
    assert_eq!(g.position().uci(MoveEncoder::new(v).decode(g.position(), best.0 as usize).unwrap()), "a3a4");
}

#[test]
fn an_interrupted_import_writes_only_the_missing_batches() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = write(dir.path(), "games.pgn", PGN);
    let run = RunDir::create_or_open(dir.path().join("run")).unwrap();
    let opts = ImportOptions { rows_per_chunk: 2, ..ImportOptions::default() };
    let s = import_games(&run, empire(), &[pgn.clone()], &opts).unwrap();
    assert_eq!((s.rows, s.chunks), (7, 4));
    // a kill before batch 2 was written: it is missing
    let chunks = chunks_by_batch(&run);
    std::fs::remove_file(&chunks[&2].path).unwrap();
    drop(chunks);
    let s = import_games(&run, empire(), &[pgn], &opts).unwrap();
    assert_eq!((s.rows, s.chunks, s.rows_already_there), (2, 1, 5));
    let total: usize = chunks_by_batch(&run).values().map(|c| c.rows).sum();
    assert_eq!(total, 7);
}

/// Positions where one side has a queen more (White to move up a queen, Black to move down
/// one), as games of one move so that the position before it is labelled.
fn lopsided_pgn(dir: &Path) -> PathBuf {
    let up = "rnb1kbnr/pppppppp/8/8/8/PPPSSPPP/8/TECDKCET w kq - 0 1";
    let down = "rnb1kbnr/pppppppp/8/8/8/PPPSSPPP/8/TECDKCET b kq - 0 1";
    let text = format!(
        "[Variant \"empire\"]\n[FEN \"{up}\"]\n[SetUp \"1\"]\n[Result \"1-0\"]\n\n1. a3a4 1-0\n\n[Variant \"empire\"]\n[FEN \"{down}\"]\n[SetUp \"1\"]\n[Result \"1-0\"]\n\n1... a7a6 1-0\n"
    );
    write(dir, "lopsided.pgn", &text)
}

/// Labels `positions` with `teacher` into a fresh run and checks every row: a legal one-hot
/// policy target, a value target whose sign follows `expected_sign` (when given), and a W/D/L
/// that sums to 1. Returns the rows by position.
fn label_and_check(teacher: &str, positions: &[LabelPosition], expected_sign: &dyn Fn(&LabelPosition) -> Option<f32>) {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path()).unwrap();
    let v = empire();
    let opts = LabelOptions {
        teacher: teacher.into(),
        concurrency: 2,
        cp_scale: DEFAULT_CP_SCALE,
        rows_per_chunk: 4,
        seed: 3,
        job: "test".into(),
        progress: false,
    };
    let s = label_positions(&run, v, positions, &opts).unwrap();
    assert_eq!(s.labelled, positions.len(), "{s:?}");
    let (inp, mv) = (InputEncoder::new(v), MoveEncoder::new(v));
    let mut k = 0;
    for (b, c) in chunks_by_batch(&run) {
        assert_eq!(c.meta.source, Source::Label);
        let scored = c.scored_positions().unwrap();
        assert_eq!(scored.len(), c.rows, "one raw score per labelled row");
        for (i, row) in c.read_all().unwrap().iter().enumerate() {
            let p = &positions[b * 4 + i];
            // the raw score is kept with the row: same position (with its history), same move,
            // and the W/D/L is the logistic of that score
            let sp = &scored[i];
            let mut g = Game::from_fen(v, &sp.start_fen).unwrap();
            for m in &sp.moves {
                g.play_uci(m).unwrap();
            }
            assert_eq!(g.position().fen(), p.game.position().fen());
            assert_eq!(g.moves().len(), p.game.moves().len());
            let score = match sp.score {
                TeacherScore::Cp(c) => Score::Cp(c),
                TeacherScore::Mate(m) => Score::Mate(m),
            };
            assert_eq!(row.wdl, score_to_wdl(score, DEFAULT_CP_SCALE));
            assert_eq!(sp.result, p.white_result);
            assert_eq!(row.planes, inp.encode_game(&p.game));
            assert_eq!(row.policy.len(), 1);
            let m = mv.decode(p.game.position(), row.policy[0].0 as usize).expect("a legal move");
            assert!(p.game.position().legal_moves().contains(&m));
            assert_eq!(p.game.position().uci(m), sp.best);
            assert!((row.wdl.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            let value = row.wdl[0] - row.wdl[2];
            if let Some(sign) = expected_sign(p) {
                assert!(value * sign > 0.0, "value {value} at {} (expected sign {sign})", p.game.position().fen());
            }
            k += 1;
        }
    }
    assert_eq!(k, positions.len());
}

#[test]
fn alphabeta_labels_are_legal_and_follow_its_scores() {
    let v = empire();
    let (mut positions, _) = collect_positions(v, &PositionSource::Random { plies: 16 }, Some(14), 5).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (lopsided, _) = collect_positions(v, &PositionSource::Games(vec![lopsided_pgn(dir.path())]), None, 1).unwrap();
    positions.extend(lopsided);
    // the sign of alphabeta:2's own score (its value does not depend on its tie breaks)
    let mut ab = PlayerSpec::parse("alphabeta:2").unwrap().build(v, 9).unwrap();
    let signs: Vec<Option<f32>> = positions
        .iter()
        .map(|p| match ab.judge(&p.game).unwrap().1.unwrap() {
            Score::Cp(0) => None,
            Score::Cp(c) => Some(c.signum() as f32),
            Score::Mate(n) => Some(if n > 0 { 1.0 } else { -1.0 }),
        })
        .collect();
    assert!(signs.iter().filter(|s| s.is_some()).count() >= 2);
    let fens: Vec<String> = positions.iter().map(|p| p.game.position().fen()).collect();
    label_and_check("alphabeta:2", &positions, &|p| signs[fens.iter().position(|f| *f == p.game.position().fen()).unwrap()]);
}

#[test]
fn a_teacher_without_scores_is_refused() {
    let v = empire();
    let (positions, _) = collect_positions(v, &PositionSource::Random { plies: 4 }, Some(2), 1).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path()).unwrap();
    let opts = LabelOptions { teacher: "greedy".into(), concurrency: 1, cp_scale: 100.0, rows_per_chunk: 10, seed: 0, job: "x".into(), progress: false };
    let e = label_positions(&run, v, &positions, &opts).unwrap_err().to_string();
    assert!(e.contains("gives no score"), "{e}");
    assert!(run.list_chunks().unwrap().is_empty());
}

#[test]
fn a_crashing_uci_teacher_is_skipped_with_a_reason_and_nothing_is_lost() {
    // `sh` answers the handshake, then dies at the first `go`
    let dir = tempfile::tempdir().unwrap();
    let script = write(
        dir.path(),
        "dying-engine.sh",
        "while read l; do case \"$l\" in uci) echo uciok;; isready) echo readyok;; go*) exit 3;; esac; done\n",
    );
    let v = empire();
    let (positions, _) = collect_positions(v, &PositionSource::Random { plies: 6 }, Some(3), 2).unwrap();
    let run = RunDir::create_or_open(dir.path().join("run")).unwrap();
    let opts = LabelOptions {
        teacher: format!("uci:sh {}:timeout=2000", script.display()),
        concurrency: 1,
        cp_scale: 100.0,
        rows_per_chunk: 10,
        seed: 0,
        job: "x".into(),
        progress: false,
    };
    let s = label_positions(&run, v, &positions, &opts).unwrap();
    assert_eq!(s.labelled, 0);
    assert_eq!(s.skipped.values().sum::<usize>(), 3, "{s:?}");
    assert!(s.skipped.keys().all(|k| k.contains("teacher failed twice")), "{s:?}");
    assert_eq!(s.restarts, 6);
}

#[test]
fn supervised_steps_lower_the_policy_loss_on_held_out_labels() {
    use vzero_model::{Device, NetConfig, TrainConfig, Trainer};
    use vzero_trainer::{LearnConfig, Learner};
    let v = empire();
    let dir = tempfile::tempdir().unwrap();
    let (train_run, held_run) = (RunDir::create_or_open(dir.path().join("a")).unwrap(), RunDir::create_or_open(dir.path().join("b")).unwrap());
    let (all, _) = collect_positions(v, &PositionSource::Random { plies: 30 }, Some(3300), 11).unwrap();
    let opts = |job: &str| LabelOptions { teacher: "alphabeta:1".into(), concurrency: 2, cp_scale: DEFAULT_CP_SCALE, rows_per_chunk: 500, seed: 0, job: job.into(), progress: false };
    label_positions(&train_run, v, &all[..3000], &opts("train")).unwrap();
    label_positions(&held_run, v, &all[3000..], &opts("held")).unwrap();

    let inp = InputEncoder::new(v);
    let [c, h, w] = inp.shape();
    let net = NetConfig::with_size(c, h, w, MoveEncoder::new(v).len(), 1, 16);
    let mut cfg = LearnConfig::cpu_default();
    cfg.batch_size = 64;
    cfg.optimizer = "adamw".into();
    cfg.lr = 3e-3;
    cfg.lr_warmup_steps = 0;
    cfg.min_rows = 100;
    cfg.threads = 1;
    cfg.publish_every = 1000;
    let mut learner = Learner::open(&train_run, v, &net, cfg, Device::Cpu).unwrap();
    assert_eq!(learner.window().external_rows(), 3000);
    assert_eq!(learner.window().external_share(), 1.0);

    // held-out rows as a batch
    let mut held = vzero_data::RowBlock::default();
    for p in held_run.list_chunks().unwrap() {
        let b = Chunk::open(&p).unwrap().read_block().unwrap();
        if held.plane_len == 0 {
            held = b;
        } else {
            for i in 0..b.len() {
                held.push_from(&b, i);
            }
        }
    }
    let policy = vzero_model::PolicyTargets::from_rows(&(0..held.len()).map(|i| {
        let (idx, p) = held.policy(i);
        idx.iter().copied().zip(p.iter().copied()).collect::<Vec<_>>()
    }).collect::<Vec<_>>());
    let loss = |learner: &Learner| {
        let t = Trainer::new(learner.model(), TrainConfig::sgd()).unwrap();
        let batch = vzero_model::TrainBatch {
            planes: &held.planes,
            globals: None,
            policy: &policy,
            wdl: &held.wdl,
            moves_left: None,
            weights: None,
            aux: Default::default(),
        };
        t.evaluate(learner.model(), &batch).unwrap().policy
    };
    let before = loss(&learner);
    let steps = std::cell::Cell::new(0);
    learner.run(&|| steps.get() < 150, &mut |s| steps.set(s.step)).unwrap();
    assert!(learner.step() >= 150, "trained only {} steps", learner.step());
    let after = loss(&learner);
    eprintln!("held-out policy loss {before:.3} -> {after:.3}");
    assert!(after < before - 0.5, "held-out policy loss {before:.3} -> {after:.3}");
    let distinct: HashSet<String> = all.iter().map(|p| p.game.position().fen()).collect();
    assert_eq!(distinct.len(), 3300);
}

/// The teacher's games of one `play_games` call: per chunk, its games and scored positions.
fn played(run: &RunDir) -> Vec<(Vec<vzero_data::GameRecord>, Vec<vzero_data::ScoredPosition>, usize)> {
    run.list_chunks().unwrap().iter().map(|p| {
        let c = Chunk::open(p).unwrap();
        assert_eq!(c.meta.source, Source::Label);
        (c.games().unwrap(), c.scored_positions().unwrap(), c.rows)
    }).collect()
}

#[test]
fn teacher_games_keep_every_searched_position_with_its_score_and_result() {
    let v = empire();
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path()).unwrap();
    let opts = PlayOptions {
        teacher: "alphabeta:1".into(),
        concurrency: 2,
        games: 6,
        random_moves: 3,
        random_until: 8,
        write_from: 4,
        max_plies: 60,
        adjudicate_cp: 0,
        games_per_chunk: 2,
        job: "t".into(),
        ..PlayOptions::default()
    };
    let s = play_games(&run, v, &opts).unwrap();
    assert_eq!(s.games, 6, "{s:?}");
    assert!(s.abandoned.is_empty());
    let chunks = played(&run);
    assert_eq!(chunks.iter().map(|c| c.0.len()).sum::<usize>(), 6);
    assert_eq!(chunks.iter().map(|c| c.1.len()).sum::<usize>(), s.positions);
    assert!(s.positions > 6 * 20, "{s:?}");
    let mut first_moves = HashSet::new();
    for (games, scored, rows) in &chunks {
        assert_eq!(scored.len(), *rows, "a row per scored position");
        let mut next = scored.iter();
        for (gi, g) in games.iter().enumerate() {
            let white = match g.result.as_str() {
                "1-0" => Some(1.0),
                "0-1" => Some(-1.0),
                _ if g.reason == "max-plies" => None,
                _ => Some(0.0),
            };
            let mut game = Game::from_fen(v, &g.start_fen).unwrap();
            let mut last_score = None;
            // exactly `random_moves` random plies, all before `random_until`
            let random: Vec<usize> = g.priors.iter().enumerate().filter(|(_, &p)| p < 1.0).map(|(i, _)| i).collect();
            assert_eq!(random.len(), 3, "{:?}", g.priors);
            assert!(random.iter().all(|&i| i < 8));
            first_moves.insert(g.moves[..8.min(g.moves.len())].to_vec());
            for (ply, m) in g.moves.iter().enumerate() {
                if ply >= 4 && !random.contains(&ply) {
                    // the teacher's move was kept with its position, the game's history and result
                    let sp = next.next().expect("a scored position for every searched ply");
                    assert_eq!(sp.start_fen, g.start_fen);
                    assert_eq!(sp.moves, g.moves[..ply].to_vec());
                    assert_eq!(sp.game, Some(gi as u32), "the position names its game in the chunk");
                    assert_eq!(&sp.best, m);
                    assert_eq!(sp.result, white);
                    last_score = Some(sp.score);
                }
                game.play_uci(m).unwrap();
            }
            if g.reason == "adjudication" && g.moves.len() >= 4 {
                // the decisive search is kept too: its position is the game's last
                let sp = next.next().expect("the decisive position");
                assert_eq!(sp.moves, g.moves);
                assert_eq!(sp.result, white);
                last_score = Some(sp.score);
            }
            // the game ended by a rule, at max_plies, or when the teacher saw a mate (no
            // adjudication by centipawns was asked for)
            match g.reason.as_str() {
                "max-plies" => assert_eq!(g.moves.len(), 60),
                "adjudication" => assert!(matches!(last_score, Some(TeacherScore::Mate(_))), "{last_score:?}"),
                r => assert_eq!(game.result().reason.to_string(), r),
            }
        }
        assert!(next.next().is_none());
    }
    // a second call of the same job plays other games, not the same ones again
    let again = play_games(&run, v, &PlayOptions { games: 2, concurrency: 1, ..opts.clone() }).unwrap();
    assert_eq!(again.games, 2);
    let all: Vec<Vec<String>> = played(&run).iter().flat_map(|c| c.0.iter().map(|g| g.moves[..8.min(g.moves.len())].to_vec())).collect();
    assert_eq!(all.len(), 8);
    assert_eq!(all.iter().collect::<HashSet<_>>().len(), 8, "eight different openings");
    assert_eq!(first_moves.len(), 6);
}

#[test]
fn teacher_games_are_written_in_chunks_of_positions_with_a_label_heartbeat() {
    let v = empire();
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path()).unwrap();
    let opts = PlayOptions {
        teacher: "alphabeta:1".into(),
        concurrency: 1,
        games: 6,
        random_moves: 2,
        random_until: 6,
        write_from: 2,
        max_plies: 40,
        adjudicate_cp: 0,
        positions_per_chunk: 50,
        job: "sized".into(),
        ..PlayOptions::default()
    };
    let s = play_games(&run, v, &opts).unwrap();
    assert_eq!(s.games, 6, "{s:?}");
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let chunks = played(&run);
    assert_eq!(chunks.len(), s.chunks);
    assert!(chunks.len() >= 2, "{} positions in {} chunks", s.positions, chunks.len());
    // every chunk but the last is written as soon as its games hold 50 positions
    // (and not later: before its last game it held fewer than 50, and a game keeps < 40)
    for (_, kept, _) in &chunks[..chunks.len() - 1] {
        assert!((50..50 + 40).contains(&kept.len()), "{}", kept.len());
    }
    // names say what the chunks hold
    for name in run.list_chunk_names().unwrap() {
        let counts = vzero_data::ChunkName::parse(&name).and_then(|n| n.counts).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(counts.source, Source::Label);
    }
    // the job's heartbeat: a label process, stopped, with every game and kept position
    let beats = vzero_data::heartbeat::read_heartbeats(&run).unwrap();
    assert_eq!(beats.len(), 1, "{beats:?}");
    assert_eq!((beats[0].role.as_str(), beats[0].state.as_str()), ("label", "stopped"));
    assert_eq!((beats[0].games, beats[0].rows), (6, s.positions as u64));
}

#[test]
fn teacher_games_are_adjudicated_at_the_score_limit() {
    let v = empire();
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path()).unwrap();
    // alphabeta's scores are material in its centipawns: 1 cp adjudicates at the first capture
    let opts = PlayOptions { teacher: "alphabeta:2".into(), games: 3, random_moves: 0, random_until: 0, write_from: 0, max_plies: 200, adjudicate_cp: 1, job: "adj".into(), ..PlayOptions::default() };
    let s = play_games(&run, v, &opts).unwrap();
    assert_eq!(s.games, 3);
    for (games, scored, _) in played(&run) {
        for g in &games {
            assert_eq!(g.reason, "adjudication", "{g:?}");
            assert_ne!(g.result, "1/2-1/2");
        }
        // the last scored position of each game is the decisive one: its score has the winner's sign
        let last = scored.last().unwrap();
        let mut game = Game::from_fen(v, &last.start_fen).unwrap();
        for m in &last.moves {
            game.play_uci(m).unwrap();
        }
        let mover_white = game.position().side_to_move() == Color::White;
        let won = match last.score { TeacherScore::Cp(c) => c > 0, TeacherScore::Mate(m) => m > 0 };
        assert_eq!(last.result, Some(if won == mover_white { 1.0 } else { -1.0 }));
    }
}

#[test]
fn a_teacher_that_cannot_start_stops_the_games_with_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path()).unwrap();
    let opts = PlayOptions { teacher: "uci:/nonexistent/fairy-stockfish".into(), games: 2, ..PlayOptions::default() };
    let e = format!("{:#}", play_games(&run, empire(), &opts).unwrap_err());
    assert!(e.contains("fairy-stockfish"), "{e}");
    assert!(run.list_chunks().unwrap().is_empty());
}
