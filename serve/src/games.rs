//! Games in progress: created, moved, taken back and exported by the pages. Every legal move,
//! check and result comes from the rules core.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Path as UrlPath, State};
use axum::http::header;
use axum::response::IntoResponse;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use vzero_arena::Player;
use vzero_rules::pgn::PgnGame;
use vzero_rules::{Color, Game, MoveKind, Outcome, Position, Square, Variant};

use crate::bots::BotSpec;
use crate::{json_body, ApiError, ApiResult, App};

/// Games kept at once; the least recently used goes when a new one needs room.
pub const MAX_GAMES: usize = 1000;

/// Longest FEN accepted.
const MAX_FEN: usize = 512;

/// One game and its players.
struct Entry {
    variant: Variant,
    game: Game,
    specs: [BotSpec; 2],
    /// Bots by colour (none for a person); taken out while one thinks.
    players: [Option<Box<dyn Player>>; 2],
    /// A bot is thinking: other changes wait.
    thinking: bool,
    last_used: Instant,
}

/// The games of the server.
#[derive(Default)]
pub struct Games {
    map: Mutex<HashMap<String, Arc<Mutex<Entry>>>>,
    next: AtomicU64,
}

impl Games {
    fn get(&self, id: &str) -> ApiResult<Arc<Mutex<Entry>>> {
        let map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.get(id).cloned().ok_or_else(|| ApiError::not_found(format!("no game '{}'", vzero_rules::echo(id))))
    }

    fn insert(&self, entry: Entry) -> String {
        let id = format!("g{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= MAX_GAMES {
            let oldest = map.iter().min_by_key(|(_, e)| e.lock().map(|e| e.last_used).unwrap_or_else(|_| Instant::now())).map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                map.remove(&k);
            }
        }
        map.insert(id.clone(), Arc::new(Mutex::new(entry)));
        id
    }
}

fn lock(e: &Mutex<Entry>) -> std::sync::MutexGuard<'_, Entry> {
    e.lock().unwrap_or_else(|p| p.into_inner())
}

fn color_letter(c: Color) -> &'static str {
    if c == Color::White {
        "w"
    } else {
        "b"
    }
}

fn square_name(pos: &Position, s: usize) -> String {
    Square(s as u8).name(pos.variant().files())
}

/// The page's view of a position: board, hands, legal moves with SAN.
pub fn position_json(pos: &Position) -> Value {
    let v = pos.variant();
    let pieces = v.pieces();
    let mut board = Vec::new();
    for s in 0..v.files() * v.ranks() {
        if let Some(p) = pos.piece_at(Square(s as u8)) {
            let info = &pieces[p.kind.index()];
            board.push(json!({ "sq": square_name(pos, s), "piece": info.letter.to_ascii_uppercase().to_string(), "color": color_letter(p.color), "promoted": info.promoted }));
        }
    }
    let hand = |c: Color| -> Vec<Value> {
        v.hand_types().iter().filter(|&&t| pos.hand_count(c, t) > 0).map(|&t| json!({ "piece": pieces[t.index()].letter.to_ascii_uppercase().to_string(), "count": pos.hand_count(c, t) })).collect()
    };
    let legal: Vec<Value> = pos
        .legal_moves()
        .into_iter()
        .map(|m| {
            let pass = m.kind() == MoveKind::Pass;
            let drop = m.is_drop();
            let promotion = match m.kind() {
                MoveKind::Promotion => Some(pieces[m.piece().index()].letter.to_ascii_uppercase().to_string()),
                MoveKind::PiecePromotion => Some("+".to_string()),
                _ => None,
            };
            json!({
                "uci": pos.uci(m),
                "san": pos.san(m),
                "from": (!pass && !drop).then(|| square_name(pos, m.from())),
                "to": (!pass).then(|| square_name(pos, m.to())),
                "drop": drop.then(|| pieces[m.piece().index()].letter.to_ascii_uppercase().to_string()),
                "promotion": promotion,
                "pass": pass,
            })
        })
        .collect();
    json!({
        "variant": v.name(),
        "files": v.files(),
        "ranks": v.ranks(),
        "fen": pos.fen(),
        "side_to_move": color_letter(pos.side_to_move()),
        "board": board,
        "hands": { "w": hand(Color::White), "b": hand(Color::Black) },
        "has_drops": v.has_drops(),
        "check": pos.is_check(),
        "pending_second_step": pos.pending_second_step().map(|s| s.name(v.files())),
        "legal": legal,
    })
}

/// (`1-0` / `0-1` / `1/2-1/2`, reason, winner) of a finished game.
fn result_of(game: &Game) -> Option<(&'static str, String, Option<Color>)> {
    let r = game.result();
    if !r.is_over() {
        return None;
    }
    let mover = game.position().side_to_move();
    let winner = match r.outcome {
        Outcome::Win => Some(mover),
        Outcome::Loss => Some(mover.flip()),
        _ => None,
    };
    let text = match winner {
        Some(Color::White) => "1-0",
        Some(Color::Black) => "0-1",
        None => "1/2-1/2",
    };
    Some((text, r.reason.to_string(), winner))
}

fn state(id: &str, e: &Entry) -> Value {
    let pos = e.game.position();
    let mut out = position_json(pos);
    let mut replay = *e.game.start();
    let mut moves = Vec::new();
    let mut last = None;
    for &m in e.game.moves() {
        moves.push(json!({ "uci": replay.uci(m), "san": replay.san(m), "color": color_letter(replay.side_to_move()) }));
        last = (m.kind() != MoveKind::Pass).then(|| json!({ "from": (!m.is_drop()).then(|| square_name(&replay, m.from())), "to": square_name(&replay, m.to()) }));
        replay.play(m);
    }
    let result = result_of(&e.game).map(|(r, reason, w)| json!({ "result": r, "reason": reason, "winner": w.map(color_letter) }));
    let to_move = pos.side_to_move().index();
    let o = out.as_object_mut().expect("an object");
    o.insert("id".into(), json!(id));
    o.insert("start_fen".into(), json!(e.game.start().fen()));
    o.insert("white".into(), json!(e.specs[0].label()));
    o.insert("black".into(), json!(e.specs[1].label()));
    o.insert("to_move_is_bot".into(), json!(!e.specs[to_move].is_human() && result.is_none()));
    o.insert("thinking".into(), json!(e.thinking));
    o.insert("moves".into(), json!(moves));
    o.insert("result".into(), result.unwrap_or(Value::Null));
    o.insert("last_move".into(), last.unwrap_or(Value::Null));
    out
}

/// Body of `POST /api/games`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewGame {
    variant: String,
    #[serde(default)]
    fen: Option<String>,
    #[serde(default = "human")]
    white: String,
    #[serde(default = "human")]
    black: String,
}

fn human() -> String {
    "human".into()
}

/// `POST /api/games`: a new game.
pub async fn create(State(app): State<Arc<App>>, body: Body) -> ApiResult<Json<Value>> {
    let req: NewGame = json_body(body).await?;
    let variant = app.variant(&req.variant)?;
    let game = match req.fen.as_deref().map(str::trim).filter(|f| !f.is_empty()) {
        None => Game::startpos(variant),
        Some(f) if f.len() > MAX_FEN => return Err(ApiError::bad(format!("FEN of {} characters (at most {MAX_FEN})", f.len()))),
        Some(f) => Game::from_fen(variant, f).map_err(|e| ApiError::bad(format!("FEN: {e}")))?,
    };
    let specs = [BotSpec::parse(&req.white)?, BotSpec::parse(&req.black)?];
    let seed = app.games.next.load(Ordering::Relaxed) ^ vzero_base::now_unix();
    let app2 = app.clone();
    let specs2 = specs.clone();
    // building a network player loads a checkpoint: off the async threads
    let players = tokio::task::spawn_blocking(move || -> ApiResult<[Option<Box<dyn Player>>; 2]> {
        Ok([specs2[0].player(variant, &app2.models, seed)?, specs2[1].player(variant, &app2.models, seed.wrapping_add(1))?])
    })
    .await
    .map_err(|e| ApiError::internal(format!("starting the players: {e}")))??;
    let entry = Entry { variant, game, specs, players, thinking: false, last_used: Instant::now() };
    let view = state("", &entry);
    let id = app.games.insert(entry);
    let mut view = view;
    view["id"] = json!(id);
    Ok(Json(view))
}

/// `GET /api/games/{id}`.
pub async fn show(State(app): State<Arc<App>>, UrlPath(id): UrlPath<String>) -> ApiResult<Json<Value>> {
    let g = app.games.get(&id)?;
    let mut e = lock(&g);
    e.last_used = Instant::now();
    Ok(Json(state(&id, &e)))
}

/// Body of `POST /api/games/{id}/move`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoveBody {
    uci: String,
}

fn changeable(id: &str, e: &Entry) -> ApiResult<()> {
    if e.thinking {
        return Err(ApiError::busy(format!("game {id}: a bot is thinking")));
    }
    Ok(())
}

/// `POST /api/games/{id}/move`: a person's move.
pub async fn play(State(app): State<Arc<App>>, UrlPath(id): UrlPath<String>, body: Body) -> ApiResult<Json<Value>> {
    let g = app.games.get(&id)?;
    let req: MoveBody = json_body(body).await?;
    let mut e = lock(&g);
    changeable(&id, &e)?;
    if let Some((r, reason, _)) = result_of(&e.game) {
        return Err(ApiError::bad(format!("game {id} is over ({r}, {reason})")));
    }
    let side = e.game.position().side_to_move();
    if !e.specs[side.index()].is_human() {
        return Err(ApiError::bad(format!("game {id}: {} is to move, a bot ({})", if side == Color::White { "White" } else { "Black" }, e.specs[side.index()].label())));
    }
    // parse_uci refuses an illegal move as well as a garbled one
    let m = e.game.position().parse_uci(&req.uci).map_err(|err| ApiError::bad(format!("move '{}': {err}", vzero_rules::echo(&req.uci))))?;
    e.game.play(m);
    e.last_used = Instant::now();
    Ok(Json(state(&id, &e)))
}

/// `POST /api/games/{id}/bot`: the bot to move plays.
pub async fn bot(State(app): State<Arc<App>>, UrlPath(id): UrlPath<String>) -> ApiResult<Json<Value>> {
    let g = app.games.get(&id)?;
    let (mut player, game, side) = {
        let mut e = lock(&g);
        changeable(&id, &e)?;
        if let Some((r, reason, _)) = result_of(&e.game) {
            return Err(ApiError::bad(format!("game {id} is over ({r}, {reason})")));
        }
        let side = e.game.position().side_to_move();
        let Some(player) = e.players[side.index()].take() else {
            return Err(ApiError::bad(format!("game {id}: a person is to move")));
        };
        e.thinking = true;
        (player, e.game.clone(), side)
    };
    // The search runs on a blocking thread, which also hands the player back and plays the
    // move: a browser that leaves mid-search leaves a consistent game. The game stays readable
    // meanwhile.
    let g2 = g.clone();
    let id2 = id.clone();
    tokio::task::spawn_blocking(move || -> ApiResult<Json<Value>> {
        let chosen = player.choose(&game);
        let mut e = lock(&g2);
        e.players[side.index()] = Some(player);
        e.thinking = false;
        e.last_used = Instant::now();
        let m = chosen.map_err(|err| ApiError::internal(format!("game {id2}: the bot ({}) failed: {err:#}", e.specs[side.index()].label())))?;
        if !e.game.position().legal_moves().contains(&m) {
            return Err(ApiError::internal(format!("game {id2}: the bot chose an illegal move {}", e.game.position().uci(m))));
        }
        e.game.play(m);
        Ok(Json(state(&id2, &e)))
    })
    .await
    .map_err(|err| ApiError::internal(format!("game {id}: the bot stopped: {err}")))?
}

/// `POST /api/games/{id}/undo`: takes back the last move, and the bots' moves before it until a
/// person is to move.
pub async fn undo(State(app): State<Arc<App>>, UrlPath(id): UrlPath<String>) -> ApiResult<Json<Value>> {
    let g = app.games.get(&id)?;
    let mut e = lock(&g);
    changeable(&id, &e)?;
    if e.game.moves().is_empty() {
        return Err(ApiError::bad(format!("game {id}: no move to take back")));
    }
    e.game.undo();
    let any_human = e.specs.iter().any(BotSpec::is_human);
    while any_human && !e.game.moves().is_empty() && !e.specs[e.game.position().side_to_move().index()].is_human() {
        e.game.undo();
    }
    for p in e.players.iter_mut().flatten() {
        let _ = p.new_game();
    }
    e.last_used = Instant::now();
    Ok(Json(state(&id, &e)))
}

/// The game as PGN (UCI movetext, as `vzero match` writes it and `vzero replay` reads it).
fn pgn_text(e: &Entry) -> String {
    let start = e.game.start();
    let mut p = PgnGame::default();
    p.set_tag("Event", "vzero serve");
    p.set_tag("Site", "vzero");
    p.set_tag("White", e.specs[0].label());
    p.set_tag("Black", e.specs[1].label());
    let result = result_of(&e.game);
    p.set_tag("Result", result.as_ref().map_or("*", |r| r.0));
    p.set_tag("Variant", e.variant.name());
    if start.fen() != Position::startpos(e.variant).fen() {
        p.set_tag("FEN", start.fen());
        p.set_tag("SetUp", "1");
    }
    if let Some((_, reason, _)) = &result {
        p.set_tag("Termination", reason.clone());
    }
    p.set_tag("PlyCount", e.game.moves().len().to_string());
    let mut pos = *start;
    for &m in e.game.moves() {
        p.moves.push(pos.uci(m));
        pos.play(m);
    }
    p.result = result.map_or("*", |r| r.0).to_string();
    p.to_pgn_from(start)
}

/// `GET /api/games/{id}/pgn`.
pub async fn pgn(State(app): State<Arc<App>>, UrlPath(id): UrlPath<String>) -> ApiResult<impl IntoResponse> {
    let g = app.games.get(&id)?;
    let e = lock(&g);
    Ok(([(header::CONTENT_TYPE, "application/x-chess-pgn; charset=utf-8")], pgn_text(&e)))
}
