//! A training session driven through the library alone (no command line): train with a game
//! limit, events reported, the config stored, then learn and self-play halves on the same run.

use vzero_pipeline::{ConfigChoice, Event, Limits, RunConfig, Session};

/// The whole-loop tests' tiny config with a gauntlet after every generation.
fn tiny() -> String {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/tests/tiny-empire.toml")).unwrap();
    format!("{text}\n[gauntlet]\nevery = 1\ngames = 2\nsims = 4\nopponents = [\"random\"]\nprevious = 0\nmax_plies = 40\n")
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
