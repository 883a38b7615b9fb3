//! A gauntlet on a tiny run: a fresh tiny checkpoint against random and greedy, then a second
//! checkpoint that also meets the first; files checked.

use vzero_arena::gauntlet::{read_elo_csv, GauntletConfig};
use vzero_arena::run_gauntlet;
use vzero_rules::pgn::read_pgn_file;
use vzero_data::{checkpoint_name, RunDir};
use vzero_model::{checkpoint, checkpoint_info, fresh_model, net_config, Device};
use vzero_rules::Variant;

#[test]
fn gauntlet_on_a_tiny_run() {
    let v = Variant::builtin("empire").unwrap();
    vzero_model::set_threads(1);
    let dir = std::env::temp_dir().join(format!("vzero-gauntlet-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let run = RunDir::create_or_open(&dir).unwrap();
    std::fs::create_dir_all(run.checkpoints_dir()).unwrap();
    let net = net_config(v, 1, 8).unwrap();
    let save = |generation: u64, step: u64, seed: u64| {
        let model = fresh_model(v, &net, Device::Cpu, seed).unwrap();
        let stem = run.checkpoints_dir().join(checkpoint_name(generation, step));
        checkpoint::save(&model, &stem, &checkpoint_info(v, step, 0, None)).unwrap();
        stem.with_extension("json")
    };
    let cfg = GauntletConfig { every: 1, games: 2, sims: 8, opponents: vec!["random".into(), "greedy".into()], previous: 1, max_plies: 40, ..GauntletConfig::default() };

    let first = save(1, 10, 1);
    let s = run_gauntlet(&run, v, &first, &cfg, 1.5).unwrap();
    assert_eq!(s.games, 4);
    assert_eq!(s.results.len(), 2);
    assert_eq!(s.row.checkpoint, "gen-000001-step-000000010");
    assert_eq!((s.row.generation, s.row.step), (1, 10));
    assert!(s.row.lo <= s.row.elo && s.row.elo <= s.row.hi, "{:?}", s.row);
    assert!(s.line().contains("gen-000001-step-000000010"));

    let second = save(2, 20, 2);
    let s2 = run_gauntlet(&run, v, &second, &cfg, 3.0).unwrap();
    assert_eq!(s2.games, 6, "random, greedy and the previous checkpoint");
    assert!(s2.results.iter().any(|r| r.opponent == "net:gen-000001-step-000000010:8"));
    // Elo relative to the baselines only (not to the earlier checkpoint); against the anchor it
    // is the checkpoint's own Elo.
    let vs = s2.elo_vs_opponents();
    assert_eq!(vs.iter().map(|v| v.0.as_str()).collect::<Vec<_>>(), ["random", "greedy"]);
    assert_eq!(vs[0].1, s2.row.elo);
    let greedy = s2.ratings.iter().find(|r| r.player == "greedy").unwrap().elo;
    assert!((vs[1].1 - (s2.row.elo - greedy)).abs() < 1e-9);

    let arena = dir.join("arena");
    let games = read_pgn_file(&arena.join("games.pgn")).unwrap();
    assert_eq!(games.len(), 10);
    for g in &games {
        g.replay(v).unwrap();
        assert!(g.white_score().is_some());
        assert_eq!(g.tag("Variant"), Some("empire"));
    }
    let ratings = std::fs::read_to_string(arena.join("ratings.csv")).unwrap();
    let lines: Vec<&str> = ratings.lines().collect();
    assert_eq!(lines[0], "player,games,score,elo,margin95");
    assert_eq!(lines.len(), 1 + 4, "{ratings}");
    assert!(lines.iter().any(|l| l.starts_with("random,") && l.contains(",0.0,0.0")), "{ratings}");
    let rows = read_elo_csv(&arena.join("elo.csv")).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!((rows[0].generation, rows[0].minutes), (1, 1.5));
    assert_eq!((rows[1].generation, rows[1].step, rows[1].minutes), (2, 20, 3.0));
    let svg = std::fs::read_to_string(run.plots_dir().join("elo.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("polygon") && svg.contains("gen-000002-step-000000020"));
    // no temporary files left behind
    assert!(std::fs::read_dir(&arena).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().ends_with(".tmp")));
    let _ = std::fs::remove_dir_all(&dir);
}
