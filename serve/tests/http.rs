//! `vzero serve` at the HTTP level (the router itself, no browser): games of every built-in
//! variant follow the rules core, bad requests change nothing, the PGN replays, the Dictator's
//! second step and its pass are offered, analysis streams, a run's status and openings read.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{json, Value};
use tower::ServiceExt;
use vzero_rules::{Game, Position, Variant};
use vzero_serve::{router, App, ServeOptions};

fn app(opts: &ServeOptions) -> Arc<App> {
    Arc::new(App::new(opts).unwrap())
}

/// (status, body as JSON or as a string) of one request.
async fn call(app: &Arc<App>, method: &str, uri: &str, body: Option<String>) -> (StatusCode, Value) {
    let req = Request::builder().method(method).uri(uri).header("content-type", "application/json").body(body.map_or(Body::empty(), Body::from)).unwrap();
    let resp = router(app.clone()).oneshot(req).await.unwrap();
    let status = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), 64 << 20).await.unwrap();
    let v = serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, v)
}

async fn post(app: &Arc<App>, uri: &str, body: Value) -> (StatusCode, Value) {
    call(app, "POST", uri, Some(body.to_string())).await
}

fn error_of(v: &Value) -> &str {
    v["error"].as_str().unwrap_or_else(|| panic!("no JSON error in {v}"))
}

/// The state's legal moves are the rules core's, with its SAN.
fn check_state(state: &Value) {
    let variant = Variant::builtin(state["variant"].as_str().unwrap()).unwrap();
    let pos = Position::from_fen(variant, state["fen"].as_str().unwrap()).unwrap();
    let legal: Vec<String> = state["legal"].as_array().unwrap().iter().map(|m| m["uci"].as_str().unwrap().to_string()).collect();
    let mut want: Vec<String> = pos.legal_moves().into_iter().map(|m| pos.uci(m)).collect();
    let mut got = legal.clone();
    want.sort();
    got.sort();
    assert_eq!(got, want, "legal moves of {}", pos.fen());
    for m in state["legal"].as_array().unwrap() {
        let mv = pos.parse_uci(m["uci"].as_str().unwrap()).unwrap();
        assert_eq!(m["san"].as_str().unwrap(), pos.san(mv));
    }
    assert_eq!(state["check"].as_bool().unwrap(), pos.is_check());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_games_of_every_variant_follow_the_rules_core_and_their_pgn_replays() {
    let app = app(&ServeOptions::default());
    let mut seed = 7u64;
    let mut second_steps = 0;
    for name in vzero_rules::variant::builtin_names() {
        for game_no in 0..3 {
            // one spqr game starts with a Dictator (a king with the double move) for White
            let fen = (name == "spqr" && game_no == 0).then_some("5k6/pppp8/12/12/12/12/12/12/12/12/PPPP8/6K5 w - - 0 1 K");
            let (s, mut st) = post(&app, "/api/games", json!({ "variant": name, "fen": fen, "white": "human", "black": "human" })).await;
            assert_eq!(s, StatusCode::OK, "{st}");
            let id = st["id"].as_str().unwrap().to_string();
            for _ in 0..160 {
                check_state(&st);
                if !st["result"].is_null() {
                    break;
                }
                if !st["pending_second_step"].is_null() {
                    second_steps += 1;
                    let passes = st["legal"].as_array().unwrap().iter().filter(|m| m["pass"].as_bool().unwrap()).count();
                    assert_eq!(passes, 1, "a Dictator's second step may be skipped: {}", st["fen"]);
                }
                let legal = st["legal"].as_array().unwrap();
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let m = legal[(seed >> 33) as usize % legal.len()]["uci"].as_str().unwrap().to_string();
                let before = st["fen"].clone();
                let side = st["side_to_move"].clone();
                let (s, next) = post(&app, &format!("/api/games/{id}/move"), json!({ "uci": m })).await;
                assert_eq!(s, StatusCode::OK, "{next}");
                // a first Dictator step keeps the side to move
                if !next["pending_second_step"].is_null() {
                    assert_eq!(next["side_to_move"], side, "{before} {m}");
                }
                st = next;
            }
            // the PGN replays to the same position and result
            let (s, pgn) = call(&app, "GET", &format!("/api/games/{id}/pgn"), None).await;
            assert_eq!(s, StatusCode::OK);
            let games = vzero_rules::pgn::parse_pgn(pgn.as_str().unwrap(), "served").unwrap();
            let g = games[0].replay(Variant::builtin(name).unwrap()).unwrap();
            assert_eq!(g.position().fen(), st["fen"].as_str().unwrap(), "{name} game {game_no}");
            let want = st["result"]["result"].as_str().unwrap_or("*");
            assert_eq!(games[0].result, want);
            assert_eq!(st["moves"].as_array().unwrap().len(), g.moves().len());
        }
    }
    assert!(second_steps > 0, "random spqr games reach a Dictator's second step");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_clear_errors_and_change_nothing() {
    let app = app(&ServeOptions::default());
    let (_, st) = post(&app, "/api/games", json!({ "variant": "shogun", "black": "greedy" })).await;
    let id = st["id"].as_str().unwrap().to_string();
    let uri = format!("/api/games/{id}");
    let same = |app: Arc<App>, uri: String, want: Value| async move {
        let (s, now) = call(&app, "GET", &uri, None).await;
        assert_eq!(s, StatusCode::OK);
        assert_eq!(now["fen"], want["fen"]);
        assert_eq!(now["moves"], want["moves"]);
    };
    for (body, status, says) in [
        (json!({ "uci": "e2e5" }).to_string(), StatusCode::BAD_REQUEST, "e2e5"),
        (json!({ "uci": "a1a3" }).to_string(), StatusCode::BAD_REQUEST, "illegal move"),
        (json!({ "uci": "a1a9" }).to_string(), StatusCode::BAD_REQUEST, "a1a9"),
        (json!({ "uci": "zz" }).to_string(), StatusCode::BAD_REQUEST, "zz"),
        ("{not json".to_string(), StatusCode::BAD_REQUEST, "request body"),
        (json!({ "move": "e2e4" }).to_string(), StatusCode::BAD_REQUEST, "request body"),
        ("x".repeat(2 << 20), StatusCode::PAYLOAD_TOO_LARGE, "bytes"),
    ] {
        let (s, v) = call(&app, "POST", &format!("{uri}/move"), Some(body)).await;
        assert_eq!(s, status, "{v}");
        assert!(error_of(&v).contains(says), "{v}");
        same(app.clone(), uri.clone(), st.clone()).await;
    }
    // a person's move when the bot is to move, and the bot's when a person is
    let (s, v) = post(&app, &format!("{uri}/bot"), json!({})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    let legal = st["legal"][0]["uci"].as_str().unwrap();
    let (s, after) = post(&app, &format!("{uri}/move"), json!({ "uci": legal })).await;
    assert_eq!(s, StatusCode::OK);
    assert!(after["to_move_is_bot"].as_bool().unwrap());
    let next = after["legal"][0]["uci"].as_str().unwrap();
    let (s, v) = post(&app, &format!("{uri}/move"), json!({ "uci": next })).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(error_of(&v).contains("bot"), "{v}");
    // new games: a garbled FEN, an unknown variant, players the server does not offer
    for (body, says) in [
        (json!({ "variant": "empire", "fen": "rnbqk/ppp w - - 0 1" }), "FEN"),
        (json!({ "variant": "empire", "fen": "x".repeat(5000) }), "FEN"),
        (json!({ "variant": "chess960" }), "unknown variant"),
        (json!({ "variant": "empire", "white": "uci:/bin/sh" }), "not a player"),
        (json!({ "variant": "empire", "white": "net:/etc/passwd:64" }), "not a player"),
        (json!({ "variant": "empire", "white": "model:0:64" }), "no model 0"),
        (json!({ "variant": "spqr", "white": "fsf:skill=3" }), "does not play spqr"),
    ] {
        let (s, v) = post(&app, "/api/games", body.clone()).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}: {v}");
        assert!(error_of(&v).contains(says), "{body}: {v}");
    }
    // unknown games, runs and paths: 404, nothing reaches the file system
    for path in ["/api/games/g999", "/api/games/g999/pgn", "/api/runs/0/status", "/api/runs/x/openings", "/assets/..%2F..%2FCargo.toml", "/assets/../../Cargo.toml", "/etc/passwd", "/api/nothing"] {
        let (s, v) = call(&app, "GET", path, None).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{path}: {v}");
        assert!(!error_of(&v).is_empty());
    }
    let (s, v) = post(&app, "/api/games/g999/move", json!({ "uci": "e2e4" })).await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");
    // nothing to take back in a new game
    let (_, fresh) = post(&app, "/api/games", json!({ "variant": "empire" })).await;
    let (s, v) = post(&app, &format!("/api/games/{}/undo", fresh["id"].as_str().unwrap()), json!({})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    // the pages and their files
    for path in ["/", "/analyse", "/openings", "/run", "/assets/app.js", "/assets/style.css"] {
        let (s, _) = call(&app, "GET", path, None).await;
        assert_eq!(s, StatusCode::OK, "{path}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_play_whole_games_and_a_take_back_returns_to_the_persons_move() {
    let app = app(&ServeOptions::default());
    // two bots to the end
    let (_, st) = post(&app, "/api/games", json!({ "variant": "empire", "white": "greedy", "black": "alphabeta:1" })).await;
    let id = st["id"].as_str().unwrap().to_string();
    let mut st = st;
    for _ in 0..400 {
        if !st["result"].is_null() {
            break;
        }
        assert!(st["to_move_is_bot"].as_bool().unwrap());
        let (s, next) = post(&app, &format!("/api/games/{id}/bot"), json!({})).await;
        assert_eq!(s, StatusCode::OK, "{next}");
        check_state(&next);
        st = next;
    }
    // (a game of 400 plies without an end would stop here; empire games end far sooner)
    assert!(!st["result"].is_null(), "the bots' game ended");
    let (s, v) = post(&app, &format!("/api/games/{id}/bot"), json!({})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(error_of(&v).contains("over"), "{v}");
    // a person against a bot: the take back removes the bot's reply and the person's move
    let (_, st) = post(&app, "/api/games", json!({ "variant": "shogun", "white": "human", "black": "alphabeta:1" })).await;
    let id = st["id"].as_str().unwrap().to_string();
    let m = st["legal"][3]["uci"].as_str().unwrap();
    post(&app, &format!("/api/games/{id}/move"), json!({ "uci": m })).await;
    let (s, replied) = post(&app, &format!("/api/games/{id}/bot"), json!({})).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(replied["moves"].as_array().unwrap().len(), 2);
    assert!(!replied["last_move"].is_null());
    let (s, back) = post(&app, &format!("/api/games/{id}/undo"), json!({})).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(back["fen"], st["fen"]);
    assert_eq!(back["moves"].as_array().unwrap().len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analysis_streams_lines_until_done() {
    let app = app(&ServeOptions::default());
    let fen = Position::startpos(Variant::builtin("empire").unwrap()).fen();
    let uri = format!("/api/analyse?variant=empire&seconds=1&fen={}", fen.replace(' ', "%20").replace('/', "%2F"));
    let (s, body) = call(&app, "GET", &uri, None).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let events: Vec<Value> = body.as_str().unwrap().lines().filter_map(|l| l.strip_prefix("data: ")).map(|d| serde_json::from_str(d).unwrap()).collect();
    assert!(events.len() >= 2, "reports while it runs, then the last: {events:?}");
    let last = events.last().unwrap();
    assert_eq!(last["done"], json!(true), "{last}");
    let pos = Position::from_fen(Variant::builtin("empire").unwrap(), &fen).unwrap();
    let lines = last["lines"].as_array().unwrap();
    assert!(!lines.is_empty());
    for l in lines {
        let m = pos.parse_uci(l["uci"].as_str().unwrap()).unwrap();
        assert!(pos.legal_moves().contains(&m));
        assert_eq!(l["san"].as_str().unwrap(), pos.san(m));
        let wdl: u64 = l["wdl"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).sum();
        assert_eq!(wdl, 1000);
    }
    assert!(last["sims"].as_u64().unwrap() > events[0]["sims"].as_u64().unwrap_or(0) || events.len() == 1);
    for bad in ["/api/analyse?variant=empire&seconds=0", "/api/analyse?variant=empire&fen=garbage", "/api/analyse?variant=empire&model=3", "/api/analyse?seconds=2"] {
        let (s, v) = call(&app, "GET", bad, None).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{bad}: {v}");
        assert!(!error_of(&v).is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runs_status_and_openings_are_read_without_writing() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("tiny.toml");
    std::fs::write(&cfg, std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/tests/tiny-empire.toml")).unwrap()).unwrap();
    let run = dir.path().join("run");
    let session = vzero_pipeline::Session::open(&run, &vzero_pipeline::ConfigChoice { file: Some(cfg), ..Default::default() }).unwrap();
    let t = tokio::task::spawn_blocking(move || session.train(&vzero_pipeline::Limits { games: Some(12), minutes: Some(3.0), ..Default::default() }, &mut |_| {}).unwrap()).await.unwrap();
    assert!(t.generation > 0);
    let listing = |p: &std::path::Path| -> Vec<(String, u64)> {
        let mut out = Vec::new();
        for e in walk(p) {
            let m = std::fs::metadata(&e).unwrap();
            out.push((e.display().to_string(), m.len()));
        }
        out.sort();
        out
    };
    // an NNUE trainer's metrics beside the run's (the columns `vzero nnue train` writes)
    std::fs::create_dir_all(run.join("nnue")).unwrap();
    std::fs::write(run.join("nnue/metrics.csv"), format!("{}\n10,10240,0.2,0.25,0.001,5000\n20,20480,0.15,0.2,0.001,5000\n", vzero_pipeline::nnue::METRICS_HEADER)).unwrap();
    let before = listing(&run);
    let app = app(&ServeOptions { runs: vec![run.clone()], ..Default::default() });
    let (s, info) = call(&app, "GET", "/api/info", None).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(info["runs"][0]["variant"], json!("empire"));
    assert!(info["bots"].as_array().unwrap().iter().any(|b| b["spec"] == json!("model:0:64")), "the run's newest network is a bot");
    let (s, st) = call(&app, "GET", "/api/runs/0/status", None).await;
    assert_eq!(s, StatusCode::OK, "{st}");
    assert!(st["games"].as_u64().unwrap() >= 12, "{st}");
    // the tiny config never resigns (threshold -1): the counts are there, none resigned and no
    // would-be resigner; a share of games is still played through (resign_playthrough 0.1)
    let played_through = st["resigns"]["playthrough_games"].as_u64().unwrap_or_else(|| panic!("{st}"));
    assert!(played_through <= st["games"].as_u64().unwrap(), "{st}");
    assert_eq!((st["resigns"]["resigned"].as_u64(), st["resigns"]["would_resign"].as_u64()), (Some(0), Some(0)), "{st}");
    assert_eq!(st["generation"].as_u64().unwrap(), t.generation);
    assert!(!st["losses"].as_array().unwrap().is_empty());
    assert_eq!(st["nnue"]["train_step"], json!(20.0), "{}", st["nnue"]);
    assert_eq!(st["nnue"]["validation_loss"], json!(0.2));
    assert_eq!(st["nnue"]["losses"].as_array().unwrap().len(), 2);
    // the opening tree: the first moves' games add up to the run's games from the start
    let (s, root) = call(&app, "GET", "/api/runs/0/openings", None).await;
    assert_eq!(s, StatusCode::OK, "{root}");
    let moves = root["moves"].as_array().unwrap();
    let total: u64 = moves.iter().map(|m| m["games"].as_u64().unwrap()).sum();
    assert_eq!(total, st["games"].as_u64().unwrap(), "{root}");
    assert_eq!(root["games"].as_u64().unwrap(), total);
    let first = moves[0]["uci"].as_str().unwrap();
    let (s, deeper) = call(&app, "GET", &format!("/api/runs/0/openings?moves={first}"), None).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(deeper["games"], moves[0]["games"], "the line's games continue");
    let mut g = Game::startpos(Variant::builtin("empire").unwrap());
    g.play_uci(first).unwrap();
    assert_eq!(deeper["fen"].as_str().unwrap(), g.position().fen());
    let (s, v) = call(&app, "GET", "/api/runs/0/openings?moves=a1a9", None).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    // a model game with the run's network
    let (s, game) = post(&app, "/api/games", json!({ "variant": "empire", "white": "model:0:16", "black": "human" })).await;
    assert_eq!(s, StatusCode::OK, "{game}");
    let (s, moved) = post(&app, &format!("/api/games/{}/bot", game["id"].as_str().unwrap()), json!({})).await;
    assert_eq!(s, StatusCode::OK, "{moved}");
    assert_eq!(moved["moves"].as_array().unwrap().len(), 1);
    // the events stream starts with the status
    let resp = router(app.clone()).oneshot(Request::get("/api/runs/0/events").body(Body::empty()).unwrap()).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let mut body = resp.into_body().into_data_stream();
    use futures_util::StreamExt;
    let first = body.next().await.unwrap().unwrap();
    let text = String::from_utf8_lossy(&first);
    assert!(text.starts_with("data: "), "{text}");
    let v: Value = serde_json::from_str(text.trim_start_matches("data: ").trim()).unwrap();
    assert_eq!(v["games"], st["games"]);
    assert_eq!(listing(&run), before, "reading the run wrote nothing");
}

fn walk(p: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(p).unwrap() {
        let e = e.unwrap().path();
        if e.is_dir() {
            out.extend(walk(&e));
        } else {
            out.push(e);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thinking_bot_blocks_nothing_else_and_a_left_browser_leaves_a_whole_game() {
    // the committed spqr network searching 3,000 simulations: seconds on 2 cores
    let net = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../nets/spqr-p60/gen-000116-step-000005757.json"));
    let app = app(&ServeOptions { models: vec![net], ..Default::default() });
    let (s, st) = post(&app, "/api/games", json!({ "variant": "spqr", "white": "model:0:3000", "black": "human" })).await;
    assert_eq!(s, StatusCode::OK, "{st}");
    let id = st["id"].as_str().unwrap().to_string();
    // the bot's move is asked for, and the request dropped at once (a browser that leaves)
    let req = Request::post(format!("/api/games/{id}/bot")).body(Body::empty()).unwrap();
    let fut = router(app.clone()).oneshot(req);
    let _ = tokio::time::timeout(std::time::Duration::from_millis(50), fut).await;
    // while it thinks: the game reads, changes are refused, other games and pages answer
    let (s, now) = call(&app, "GET", &format!("/api/games/{id}"), None).await;
    assert_eq!(s, StatusCode::OK);
    assert!(now["thinking"].as_bool().unwrap(), "the bot thinks on after its page left");
    for (what, uri) in [("undo", format!("/api/games/{id}/undo")), ("bot", format!("/api/games/{id}/bot"))] {
        let (s, v) = post(&app, &uri, json!({})).await;
        assert_eq!(s, StatusCode::CONFLICT, "{what}: {v}");
        assert!(error_of(&v).contains("thinking"));
    }
    let many: Vec<_> = (0..16)
        .map(|i| {
            let app = app.clone();
            tokio::spawn(async move {
                let variant = ["empire", "spqr", "shogun-auto", "empire-faceoff"][i % 4];
                let (s, g) = post(&app, "/api/games", json!({ "variant": variant })).await;
                assert_eq!(s, StatusCode::OK);
                let m = g["legal"][0]["uci"].as_str().unwrap().to_string();
                let (s, _) = post(&app, &format!("/api/games/{}/move", g["id"].as_str().unwrap()), json!({ "uci": m })).await;
                assert_eq!(s, StatusCode::OK);
            })
        })
        .collect();
    for h in many {
        h.await.unwrap();
    }
    // the search ends on its own and its move is in the game
    let t = std::time::Instant::now();
    loop {
        let (_, now) = call(&app, "GET", &format!("/api/games/{id}"), None).await;
        if !now["thinking"].as_bool().unwrap() {
            assert_eq!(now["moves"].as_array().unwrap().len(), 1, "{now}");
            check_state(&now);
            break;
        }
        assert!(t.elapsed() < std::time::Duration::from_secs(120), "the bot never finished");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}
