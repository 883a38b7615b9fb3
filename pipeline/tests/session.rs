//! A training session driven through the library alone (no command line): train with a game
//! limit, events reported, the config stored, then learn and self-play halves on the same run.

use vzero_pipeline::{ConfigChoice, Event, Limits, RunConfig, Session};

/// The whole-loop tests' tiny config with a gauntlet after every generation.
fn tiny() -> String {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/tests/tiny-empire.toml")).unwrap();
    format!("{text}\n[gauntlet]\nevery = 1\ngames = 2\nsims = 4\nopponents = [\"random\"]\nprevious = 0\nmax_plies = 40\n")
}

/// The tiny config with the line `from` replaced by `to`, written as `dir/tiny.toml`.
fn tiny_file(dir: &std::path::Path, from: &str, to: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/tests/tiny-empire.toml")).unwrap();
    assert!(text.contains(from), "the tiny config has no line {from:?}");
    let path = dir.join("tiny.toml");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    path
}

#[test]
fn a_session_trains_selfplays_and_learns_without_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("tiny.toml");
    std::fs::write(&cfg, tiny()).unwrap();
    let run = dir.path().join("run");
    let choice = ConfigChoice { file: Some(cfg), variant: Some("empire".into()), ..Default::default() };
    let session = Session::open(&run, &choice).unwrap();
    assert!(!run.join("config.toml").exists(), "opening a session writes nothing");
    let (mut progress, mut notes, mut gauntlets) = (0, Vec::new(), 0);
    let t = session
        .train(&Limits { games: Some(4), minutes: Some(3.0), ..Default::default() }, &mut |e| match e {
            Event::Progress(_) => progress += 1,
            Event::Note(n) => notes.push(n.to_string()),
            Event::Gauntlet(_) => gauntlets += 1,
        })
        .unwrap();
    assert_eq!(RunConfig::load(&run.join("config.toml")).unwrap(), *session.config());
    assert!(t.selfplay.starts_with("games "), "{}", t.selfplay);
    assert!(t.steps > 0 && t.generation > 0, "{t:?}");
    assert!(progress > 0);
    assert!(notes.iter().any(|n| n.starts_with("learner device: Cpu")), "{notes:?}");
    assert_eq!(gauntlets > 0, t.latest_gauntlet.is_some());
    assert_eq!(gauntlets > 0, t.elo_csv.exists());

    // the halves, reopened from the stored config
    let again = Session::open(&run, &ConfigChoice::default()).unwrap();
    let s = again.selfplay(&Limits { games: Some(2), minutes: Some(2.0), ..Default::default() }, &mut |_| {}).unwrap();
    let games: u64 = s.selfplay.split_whitespace().nth(1).and_then(|g| g.parse().ok()).unwrap_or(0);
    assert!(games >= 2, "{}", s.selfplay);
    // (the new games' rows give the learner a budget beyond the reuse cap it stopped at)
    let l = again.learn(&Limits { steps: Some(t.step + 2), minutes: Some(1.0), ..Default::default() }, &mut |_| {}).unwrap();
    assert_eq!(l.step, t.step + 2);
    // a run holds one variant
    let e = Session::open(&run, &ConfigChoice { variant: Some("shogun".into()), ..Default::default() }).err().unwrap().to_string();
    assert!(e.contains("shogun"), "{e}");
}

/// The tiny config with a knowledge blend (value 0.5, prior 1.0, then the lines `knowledge`) and
/// a switch check after every generation needing `min_score`, written as `dir/switch.toml`.
fn tiny_with_switch(dir: &std::path::Path, knowledge: &str, min_score: f64) -> std::path::PathBuf {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/tests/tiny-empire.toml")).unwrap();
    let path = dir.join("switch.toml");
    let switch = format!("[switch]\nevery = 1\ngames = 2\nsims = 4\nmax_plies = 40\nmin_score = {min_score:?}\n");
    std::fs::write(&path, format!("{text}\n[learn.knowledge]\nvalue_weight = 0.5\nprior_weight = 1.0\n{knowledge}\n{switch}")).unwrap();
    path
}

#[test]
fn switch_checks_are_recorded_and_a_release_holds_in_every_later_checkpoint() {
    // measured checks (55% needed), and checks that always release (a score of 0 is enough)
    for min_score in [0.55, 0.0] {
        switch_run(min_score);
    }
}

fn switch_run(min_score: f64) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = tiny_with_switch(dir.path(), "anneal_steps = 100000\n", min_score);
    let run = dir.path().join("run");
    let session = Session::open(&run, &ConfigChoice { file: Some(cfg), ..Default::default() }).unwrap();
    let mut notes = Vec::new();
    let mut note = |e: Event<'_>| {
        if let Event::Note(n) = e {
            notes.push(n.to_string())
        }
    };
    // (a step limit: the learner publishes generations 1 and 2 at steps 3 and 6, and checks them,
    // while self-play runs; the minutes only bound a hang, the checks never depend on them)
    let t = session.train(&Limits { steps: Some(6), minutes: Some(5.0), ..Default::default() }, &mut note).unwrap();
    assert_eq!(t.step, 6, "{t:?}");
    let csv = std::fs::read_to_string(run.join("arena/switch.csv")).unwrap();
    let checks = csv.lines().count() - 1;
    assert!(checks > 0, "{csv}");
    let open = csv.matches(",true").count() < 2;
    // `vzero learn` (a learner beside self-play processes) checks too
    session.selfplay(&Limits { games: Some(2), minutes: Some(2.0), ..Default::default() }, &mut |_| {}).unwrap();
    session.learn(&Limits { steps: Some(t.step + 6), minutes: Some(1.0), ..Default::default() }, &mut note).unwrap();
    let csv = std::fs::read_to_string(run.join("arena/switch.csv")).unwrap();
    assert_eq!(csv.lines().count() - 1 > checks, open, "{csv}");
    let rows: Vec<Vec<String>> = csv.lines().skip(1).map(|l| l.split(',').map(String::from).collect()).collect();
    assert!(!rows.is_empty(), "{notes:?}");
    assert_eq!(rows.len(), notes.iter().filter(|n| n.starts_with("switch check of ")).count(), "{notes:?}");
    // the prior is tested until it is released, then the value
    let released_prior = rows.iter().find(|r| r[2] == "prior" && r[6] == "true").map(|r| r[1].parse::<u64>().unwrap());
    if min_score == 0.0 {
        assert_eq!(rows[0][6], "true", "{csv}");
        assert!(rows.len() >= 2 && rows[1][2] == "value" && rows[1][6] == "true", "{csv}");
        assert_eq!(rows.len(), 2, "nothing left to check after both parts, in train or learn: {csv}");
    }
    for r in &rows {
        assert_eq!(r[3..6].iter().map(|x| x.parse::<u32>().unwrap()).sum::<u32>(), 2, "{r:?}");
        let step: u64 = r[1].parse().unwrap();
        let expect = if released_prior.is_some_and(|s| step > s) { "value" } else { "prior" };
        assert_eq!(r[2], expect, "{csv}");
    }
    // every checkpoint published after the release records the learned policy alone
    let dir_ck = run.join("checkpoints");
    for e in std::fs::read_dir(&dir_ck).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let meta = vzero_model::checkpoint::read_meta(&p).unwrap();
            let prior = meta.knowledge.map_or(0.0, |k| k.prior_weight);
            match released_prior {
                Some(s) if meta.step > s => assert_eq!((prior, meta.release.prior_step), (0.0, Some(s)), "{}", p.display()),
                _ => assert!(prior > 0.9 && meta.release.prior_step.is_none(), "{}", p.display()),
            }
        }
    }
}

#[test]
fn workers_sharing_one_evaluator_play_learn_and_pick_up_new_networks() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = tiny_file(dir.path(), "workers = 1\n", "workers = 3\nevaluator = \"shared\"\nevaluator_threads = 2\nevaluator_wait_ms = 1.0\n");
    let run = dir.path().join("run");
    let session = Session::open(&run, &ConfigChoice { file: Some(cfg), ..Default::default() }).unwrap();
    assert_eq!(session.config().selfplay.evaluator, vzero_selfplay::EvaluatorMode::Shared);
    // a generation is published every 3 steps while the three workers play on
    let t = session.train(&Limits { games: Some(40), minutes: Some(5.0), ..Default::default() }, &mut |_| {}).unwrap();
    assert!(t.generation >= 1, "{t:?}");
    // the progress line's batch is the server's: the three workers' leaves share passes
    let batch: f64 = t.selfplay.split("batch ").nth(1).and_then(|s| s.split_whitespace().next()).and_then(|b| b.parse().ok()).unwrap();
    assert!(batch >= 1.0 && batch <= 12.0, "{}", t.selfplay);
    let rd = vzero_data::RunDir::open_existing(&run).unwrap();
    let chunks = rd.list_chunks().unwrap();
    let mut networks = std::collections::BTreeSet::new();
    for c in &chunks {
        let chunk = vzero_data::Chunk::open(c).unwrap();
        assert!(!chunk.read_all().unwrap().is_empty());
        networks.insert(chunk.meta.network.clone());
    }
    let workers: std::collections::BTreeSet<_> = chunks.iter().map(|c| vzero_data::Chunk::open(c).unwrap().meta.worker).collect();
    assert!(workers.len() >= 2, "chunks of several workers: {workers:?}");
    // the workers switched networks through the server (gen 0 first, a published one later)
    assert!(networks.len() >= 2, "games of one network only: {networks:?}");
}

/// The rows (counted) and game records of every chunk of the run at `run`.
fn rows_and_games(run: &std::path::Path) -> (usize, Vec<vzero_data::GameRecord>) {
    let rd = vzero_data::RunDir::open_existing(run).unwrap();
    let (mut rows, mut records) = (0, Vec::new());
    for c in rd.list_chunks().unwrap() {
        let chunk = vzero_data::Chunk::open(&c).unwrap();
        rows += chunk.read_all().unwrap().len();
        records.extend(chunk.games().unwrap());
    }
    (rows, records)
}

/// The plies at the start of `g` that were played without a search (a random opening, a
/// branch's replayed moves): one prior and value per move, NaN for those plies, which come
/// first, and finite for every searched one.
fn unsearched_plies(g: &vzero_data::GameRecord) -> usize {
    assert_eq!((g.priors.len(), g.values.len()), (g.moves.len(), g.moves.len()));
    let n = g.priors.iter().take_while(|p| p.is_nan()).count();
    assert!(g.priors[n..].iter().chain(&g.values[n..]).all(|x| x.is_finite()));
    n
}

#[test]
fn random_openings_start_games_apart_and_make_no_rows() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = tiny_file(dir.path(), "max_plies = 60\n", "max_plies = 60\nopening_random_plies = 10\n");
    let run = dir.path().join("run");
    let session = Session::open(&run, &ConfigChoice { file: Some(cfg), ..Default::default() }).unwrap();
    assert_eq!(session.config().selfplay.opening_random_plies, 10);
    session.train(&Limits { games: Some(12), minutes: Some(4.0), ..Default::default() }, &mut |_| {}).unwrap();
    let (rows, records) = rows_and_games(&run);
    let (mut searched, mut openings, games) = (0usize, std::collections::BTreeSet::new(), records.len());
    for g in &records {
        let opening = unsearched_plies(g);
        assert!(opening <= 10, "{opening}");
        searched += g.moves.len() - opening;
        openings.insert(g.moves[..opening].to_vec());
    }
    assert!(games >= 12, "{games}");
    // every searched move is a row, no opening move is
    assert_eq!(rows, searched);
    assert!(openings.len() >= games / 2, "{} different openings in {games} games", openings.len());
}

/// Branching (`branch_prob`): new games start from positions of the worker's earlier games,
/// replayed with their moves; the replayed moves are in the record but make no rows, and the
/// cap still counts from the start.
#[test]
fn branched_games_start_inside_earlier_games_and_make_rows_only_after_the_branch() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = tiny_file(dir.path(), "max_plies = 60\n", "max_plies = 60\nbranch_prob = 1.0\n");
    let run = dir.path().join("run");
    let session = Session::open(&run, &ConfigChoice { file: Some(cfg), ..Default::default() }).unwrap();
    assert_eq!(session.config().selfplay.branch_prob, 1.0);
    session.train(&Limits { games: Some(16), minutes: Some(4.0), ..Default::default() }, &mut |_| {}).unwrap();
    let (rows, records) = rows_and_games(&run);
    assert!(records.len() >= 16, "{}", records.len());
    let (mut searched, mut branched) = (0usize, 0);
    for g in &records {
        assert!(g.moves.len() <= 60, "the cap counts from the start: {} plies", g.moves.len());
        let replayed = unsearched_plies(g);
        assert!(replayed < g.moves.len(), "a branched game searches at least one move");
        searched += g.moves.len() - replayed;
        if replayed > 0 {
            branched += 1;
            // the replayed moves are the start of another game of the run
            let prefix = &g.moves[..replayed];
            assert!(
                records.iter().any(|e| !std::ptr::eq(e, g) && e.moves.len() > replayed && e.moves[..replayed] == *prefix),
                "a branch from no earlier game: {prefix:?}"
            );
        }
    }
    // every game after the first four (one per slot) branches, at ply 0 now and then
    assert!(branched >= (records.len() - 4) / 2, "{branched} of {} games branched", records.len());
    // every searched move is a row, no replayed move is
    assert_eq!(rows, searched);
}

/// A product capture prior (`prior_mode = "product"`) is the network's parametrisation: a run
/// records it in every checkpoint with its weight unannealed, and the measured switch, which
/// would release a mixed prior first, tests the value instead and never releases the prior.
#[test]
fn a_product_prior_stays_in_every_checkpoint_and_no_switch_releases_it() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = tiny_with_switch(dir.path(), "anneal_steps = 10\nprior_mode = \"product\"\n", 0.0);
    let run = dir.path().join("run");
    let session = Session::open(&run, &ConfigChoice { file: Some(cfg), ..Default::default() }).unwrap();
    assert_eq!(session.config().learn.knowledge.prior_mode, vzero_mcts::PriorMode::Product);
    let t = session.train(&Limits { steps: Some(12), minutes: Some(5.0), ..Default::default() }, &mut |_| {}).unwrap();
    assert_eq!(t.step, 12, "{t:?}");
    let mut metas = 0;
    for e in std::fs::read_dir(run.join("checkpoints")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let meta = vzero_model::checkpoint::read_meta(&p).unwrap();
            let k = meta.knowledge.unwrap_or_else(|| panic!("{} records no blend", p.display()));
            assert_eq!((k.prior_mode, k.prior_weight, meta.release.prior_step), (vzero_mcts::PriorMode::Product, 1.0, None), "{}", p.display());
            // the value still anneals (to 0 at step 10), unless the switch released it
            let value = if meta.release.value_step.is_some() { 0.0 } else { 0.5 * (1.0 - meta.step.min(10) as f32 / 10.0) };
            assert!((k.value_weight - value).abs() < 1e-6, "{}: {k:?}", p.display());
            metas += 1;
        }
    }
    assert!(metas >= 3, "{metas} checkpoints");
    // the checks (every one releases at min_score 0) tested the value: the prior is not a part
    let csv = std::fs::read_to_string(run.join("arena/switch.csv")).unwrap();
    assert!(csv.lines().count() > 1 && csv.lines().skip(1).all(|l| l.split(',').nth(2) == Some("value")), "{csv}");
}

/// Starts from an opening list (`start_book`, e.g. games `alphabeta:2` played): with
/// `start_book_prob = 1` every game starts at a ply of one of the book's lines (a FEN line at its
/// own position), the replayed moves in the record but no rows; a book that cannot be read
/// stops the session before anything runs, naming the file and line.
#[test]
fn games_start_inside_the_lines_of_a_start_book_and_make_rows_only_after_it() {
    use rand::{seq::SliceRandom, SeedableRng};
    let dir = tempfile::tempdir().unwrap();
    let variant = vzero_rules::Variant::builtin("empire").unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut lines = Vec::new();
    for _ in 0..3 {
        let mut g = vzero_rules::Game::startpos(variant);
        assert!(g.play_opening(30, |m| *m.choose(&mut rng).unwrap()));
        lines.push(g.uci_moves());
    }
    let mut fen_game = vzero_rules::Game::startpos(variant);
    fen_game.play_opening(6, |m| *m.choose(&mut rng).unwrap());
    let fen = fen_game.position().fen();
    let book = dir.path().join("starts.txt");
    let text: Vec<String> = lines.iter().map(|l| l.join(" ")).chain([format!("# a position\n{fen}")]).collect();
    std::fs::write(&book, text.join("\n")).unwrap();
    let start = format!("max_plies = 60\nstart_book = {:?}\nstart_book_prob = 1.0\n", book.display().to_string());
    let cfg = tiny_file(dir.path(), "max_plies = 60\n", &start);
    let run = dir.path().join("run");
    let session = Session::open(&run, &ConfigChoice { file: Some(cfg.clone()), ..Default::default() }).unwrap();
    session.train(&Limits { games: Some(12), minutes: Some(4.0), ..Default::default() }, &mut |_| {}).unwrap();
    let (rows, records) = rows_and_games(&run);
    assert!(records.len() >= 12, "{}", records.len());
    let startpos = vzero_rules::Game::startpos(variant).position().fen();
    let (mut searched, mut inside, mut at_fen) = (0usize, 0, 0);
    for g in &records {
        let replayed = unsearched_plies(g);
        assert!(replayed < g.moves.len(), "a game from the book searches at least one move");
        searched += g.moves.len() - replayed;
        if g.start_fen == fen {
            assert_eq!(replayed, 0, "the FEN line has no moves to replay");
            at_fen += 1;
        } else {
            assert_eq!(g.start_fen, startpos);
            assert!(lines.iter().any(|l| l[..replayed] == g.moves[..replayed]), "replayed moves from no line: {:?}", &g.moves[..replayed]);
            inside += usize::from(replayed > 0);
        }
    }
    assert!(at_fen > 0 && inside > 0, "{at_fen} games from the FEN line, {inside} inside the move lines");
    assert_eq!(rows, searched);

    // a broken line stops the session, naming the book and the line
    std::fs::write(&book, format!("{}\n{} z9z9\n", lines[0].join(" "), lines[1].join(" "))).unwrap();
    let e = format!("{:#}", Session::open(&dir.path().join("run2"), &ConfigChoice { file: Some(cfg), ..Default::default() }).err().unwrap());
    assert!(e.contains("start_book") && e.contains("starts.txt:2"), "{e}");
}

/// Resignations reach the heartbeat, `vzero status` and the progress line: the games resigned
/// there are the games whose records say `resign`, and the playthrough games (never resigned)
/// are counted with their would-be resigners, so the false-resign rate can be read from the run.
#[test]
fn resignations_and_false_resigns_are_reported_from_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = tiny_file(
        dir.path(),
        "resign_threshold = -1.0\n",
        "resign_threshold = 0.0\nresign_consecutive = 1\nresign_playthrough = 0.5\n",
    );
    let run = dir.path().join("run");
    let session = Session::open(&run, &ConfigChoice { file: Some(cfg), ..Default::default() }).unwrap();
    let s = session.train(&Limits { games: Some(16), minutes: Some(4.0), ..Default::default() }, &mut |_| {}).unwrap();
    let (_, records) = rows_and_games(&run);
    let resigned = records.iter().filter(|g| g.reason == "resign").count() as u64;
    assert!(resigned > 0, "no game resigned at a threshold of 0: {}", s.selfplay);
    let status = vzero_pipeline::status::RunStatus::read(&run).unwrap();
    let r = status.resigns();
    assert_eq!(r.resigned, resigned, "{r:?}");
    // every finished game is a playthrough game or may resign; a playthrough game never resigns
    assert!(r.playthrough_games > 0 && r.playthrough_games + resigned <= records.len() as u64, "{r:?} of {} games", records.len());
    assert!(r.would_resign <= r.playthrough_games && r.resigner_won + r.resigner_drew <= r.would_resign, "{r:?}");
    assert!(r.would_resign > 0, "no playthrough game had a would-be resigner at a threshold of 0: {r:?}");
    let lines = status.lines();
    let line = lines.iter().find(|l| l.starts_with("resigns ")).unwrap_or_else(|| panic!("{lines:?}"));
    assert!(line.contains(&format!("resigned {resigned}")) && line.contains("false resigns"), "{line}");
    assert!(lines.iter().any(|l| l.trim_start().starts_with("train") && l.contains(&format!("{resigned} resigned"))), "{lines:?}");
    assert!(s.selfplay.contains(&format!("resigned {resigned}")), "{}", s.selfplay);
}
