//! `vzero uci` over stdin/stdout, `vzero match` (built-in players and vzero itself as an external
//! UCI engine) and `vzero ratings`.

mod common;

use std::time::Duration;

use common::{bestmove, vzero, Session, BIN};
use vzero_rules::{Game, Variant};

#[test]
fn scripted_uci_session() {
    let mut s = Session::start(&[]);
    s.send("uci");
    let head = s.until("uciok", 10);
    let variant_opt = head.iter().find(|l| l.starts_with("option name UCI_Variant type combo")).expect("UCI_Variant option");
    for v in vzero_rules::variant::builtin_names() {
        assert!(variant_opt.contains(&format!(" var {v}")), "{variant_opt}");
    }
    assert!(head.iter().any(|l| l.starts_with("option name ModelPath")));
    assert!(head.iter().any(|l| l.starts_with("option name Simulations")));
    assert!(head.iter().any(|l| l.starts_with("option name Threads")));
    s.send("isready");
    assert_eq!(s.until("readyok", 10), ["readyok"]);

    // empire, after two moves
    let empire = Variant::builtin("empire").unwrap();
    let mut g = Game::startpos(empire);
    let m1 = g.position().uci(g.position().legal_moves()[3]);
    g.play_uci(&m1).unwrap();
    let m2 = g.position().uci(g.position().legal_moves()[5]);
    g.play_uci(&m2).unwrap();
    s.send("setoption name UCI_ShowWDL value true");
    s.send("ucinewgame");
    s.send(&format!("position startpos moves {m1} {m2}"));
    s.send("go nodes 200");
    let out = s.until("bestmove", 20);
    let info = out.iter().rev().find(|l| l.starts_with("info depth")).expect("an info line");
    for field in [" nodes ", " nps ", " score cp ", " wdl ", " pv "] {
        assert!(info.contains(field), "{info}");
    }
    let bm = bestmove(&out);
    g.position().parse_uci(&bm).unwrap_or_else(|e| panic!("bestmove {bm}: {e}"));

    // shogun from a FEN with hands, a drop and a promotion in the moves; clock times
    s.send("setoption name UCI_Variant value shogun");
    let fen = "4k3/P7/8/3N4/8/8/8/+N3K3[Pp] w - - 0 1";
    s.send(&format!("position fen {fen} moves a7a8+ e8d7 P@e4"));
    s.send("go wtime 2000 btime 2000 winc 10 binc 10");
    let bm = bestmove(&s.until("bestmove", 20));
    let mut g = Game::from_fen(Variant::builtin("shogun").unwrap(), fen).unwrap();
    for m in ["a7a8+", "e8d7", "P@e4"] {
        g.play_uci(m).unwrap();
    }
    g.position().parse_uci(&bm).unwrap_or_else(|e| panic!("bestmove {bm}: {e}"));

    // go infinite: no bestmove until stop, then one promptly
    s.send("go infinite");
    std::thread::sleep(Duration::from_millis(400));
    s.send("isready");
    let lines = s.until("readyok", 10);
    assert!(!lines.iter().any(|l| l.starts_with("bestmove")), "{lines:?}");
    s.send("stop");
    let bm = bestmove(&s.until("bestmove", 10));
    g.position().parse_uci(&bm).unwrap();
    s.send("quit");
    let status = s.child.wait().unwrap();
    assert!(status.success());
}

#[test]
fn match_and_ratings() {
    let dir = std::env::temp_dir().join(format!("vzero-arena-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pgn = dir.join("games.pgn");
    let _ = std::fs::remove_file(&pgn);
    let p = pgn.to_str().unwrap();
    let (rc, out, err) = vzero(&["match", "greedy", "random", "--games", "6", "--variant", "empire", "--concurrency", "2", "--pgn", p, "--no-progress"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("W/D/L") && out.contains("elo "), "{out}");
    let w: u32 = out.split("W/D/L ").nth(1).unwrap().split('/').next().unwrap().parse().unwrap();
    assert!(w >= 5, "{out}");

    // vzero itself as an external UCI engine against itself, small budgets
    let engine = format!("uci:{BIN} uci:nodes=30");
    let pgn2 = dir.join("self.pgn");
    let p2 = pgn2.to_str().unwrap();
    let (rc, out, err) = vzero(&["match", &engine, &engine, "--games", "2", "--variant", "shogun", "--max-plies", "30", "--pgn", p2, "--no-progress", "--sprt", "0,10,0.05,0.05"]);
    assert_eq!(rc, 0, "{err}");
    assert!(!out.contains("forfeit"), "{out}");
    assert!(out.contains("2 games") && out.contains("sprt elo0 0"), "{out}");

    let text = std::fs::read_to_string(&pgn).unwrap() + &std::fs::read_to_string(&pgn2).unwrap();
    let games = vzero_rules::pgn::parse_pgn(&text, p).unwrap();
    assert_eq!(games.len(), 8);
    assert!(games[6..].iter().all(|g| g.tag("Variant") == Some("shogun") && g.tag("White").unwrap().starts_with("uci:vzero")));
    for g in &games {
        let v = Variant::builtin(g.tag("Variant").unwrap()).unwrap();
        g.replay(v).unwrap();
    }

    let (rc, out, err) = vzero(&["ratings", p]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("greedy") && out.contains("random"), "{out}");
    // the self-play games are not connected to random: rate them on their own
    let (rc, _, err) = vzero(&["ratings", p, p2]);
    assert_eq!(rc, 1);
    assert!(err.contains("not connected"), "{err}");
    let (rc, out, err) = vzero(&["ratings", p2, "--anchor", "uci:vzero:nodes=30"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("uci:vzero:nodes=30#2"), "{out}");
    let (rc, _, err) = vzero(&["ratings", p, "--anchor", "nobody"]);
    assert_eq!(rc, 1);
    assert!(err.contains("anchor"), "{err}");
    let (rc, _, err) = vzero(&["match", "bogus", "random"]);
    assert_eq!(rc, 1);
    assert!(err.contains("unknown player"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Engines on game clocks (`tc=`): vzero against itself at 1 s + 20 ms a side plays its games
/// out with no forfeit; an engine that takes 0.4 s for its first move on a 0.1 s clock loses
/// every game on time, and the PGN says so.
#[test]
fn clock_matches_charge_time_and_flags_lose() {
    let dir = std::env::temp_dir().join(format!("vzero-arena-tc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pgn = dir.join("clock.pgn");
    let p = pgn.to_str().unwrap();
    let a = format!("uci:{BIN} uci:tc=1+0.02:name=a");
    let b = format!("uci:{BIN} uci:tc=1+0.02:name=b");
    let (rc, out, err) = vzero(&["match", &a, &b, "--games", "2", "--variant", "empire", "--max-plies", "60", "--concurrency", "2", "--pgn", p, "--no-progress"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("2 games"), "{out}");
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert!(!text.contains("forfeit"), "{text}");

    let slow = dir.join("slow.sh");
    std::fs::write(&slow, "#!/bin/sh\nwhile read l; do case \"$l\" in uci) echo uciok;; isready) echo readyok;; go*) sleep 0.4; echo bestmove a1a2;; quit) exit 0;; esac; done\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&slow, std::fs::Permissions::from_mode(0o755)).unwrap();
    let pgn2 = dir.join("flag.pgn");
    let p2 = pgn2.to_str().unwrap();
    let spec = format!("uci:{}:tc=0.1:name=slow", slow.display());
    let (rc, out, err) = vzero(&["match", &spec, "random", "--games", "2", "--variant", "empire", "--pgn", p2, "--no-progress"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("W/D/L 0/0/2"), "{out}");
    let text = std::fs::read_to_string(&pgn2).unwrap();
    assert_eq!(text.matches("lost on time").count(), 2, "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `vzero curve` on a small finished run: each point is a checkpoint against generation 0 with
/// its games in a PGN file; a second call finds the points measured and plays nothing; a broken
/// curve.csv is an error naming the file and line.
#[test]
fn curve_measures_checkpoints_against_generation_0_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    common::copy_dir(common::tiny_run(), &run);
    let run_s = run.to_str().unwrap();
    let args = ["curve", "--run", run_s, "--points", "2", "--games", "2", "--sims", "2", "--max-plies", "16", "--openings-plies", "2"];
    let (code, out, err) = vzero(&args);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("summary: 2 points, 4 games"), "{out}");
    let csv = std::fs::read_to_string(run.join("arena/curve.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    let newest = std::fs::read_dir(run.join("checkpoints"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".json").map(String::from))
        .max()
        .unwrap();
    assert!(rows[1].starts_with(&format!("{newest},")), "the newest checkpoint is the last point: {csv}");
    for r in &rows {
        let f: Vec<&str> = r.split(',').collect();
        assert!(!f[0].starts_with("gen-000000-"), "generation 0 is the yardstick, not a point: {csv}");
        let (w, d, l): (u32, u32, u32) = (f[6].parse().unwrap(), f[7].parse().unwrap(), f[8].parse().unwrap());
        assert_eq!((f[4], f[5], w + d + l), ("2", "2", 2), "{csv}");
        let pgn = std::fs::read_to_string(run.join(format!("arena/curve-{}.pgn", f[0]))).unwrap();
        assert_eq!(pgn.matches("[Event ").count(), 2, "{pgn}");
        assert!(pgn.contains("gen-000000-step-000000000"), "each game is against generation 0: {pgn}");
    }
    let svg = std::fs::read_to_string(run.join("plots/curve.svg")).unwrap();
    assert!(svg.contains("Elo against generation 0") && svg.contains(&newest), "{svg}");

    // Again: nothing is played, the rows stay as they were.
    let (code, out, err) = vzero(&args);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(out.matches("(measured before)").count(), 2, "{out}");
    assert_eq!(std::fs::read_to_string(run.join("arena/curve.csv")).unwrap(), csv);

    std::fs::write(run.join("arena/curve.csv"), format!("{}\nnot,a,row\n", csv.lines().next().unwrap())).unwrap();
    let (code, out, err) = vzero(&args);
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("curve.csv:2"), "{err}");
}
