//! The runs named on the command line: their progress (`vzero status`'s figures, losses, the
//! gauntlet's Elo per generation) and their opening trees. Read only, and cached: many pages
//! refreshing cost the run one read per few seconds.

use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use axum::extract::{Path as UrlPath, Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::Json;
use futures_util::stream::Stream;
use serde::Deserialize;
use serde_json::{json, Value};
use vzero_openings::{OpeningTree, TreeRow};
use vzero_rules::{Position, Variant};

use crate::{query, ApiError, ApiResult, App};

/// A run's status is read again at most this often.
const STATUS_EVERY: Duration = Duration::from_secs(3);
/// …and its opening tree.
const OPENINGS_EVERY: Duration = Duration::from_secs(60);
/// Plies of the opening tree.
const OPENING_PLIES: usize = 16;
/// How often a run page's stream looks for news.
const EVENTS_EVERY: Duration = Duration::from_secs(2);

/// One run the server shows.
pub struct RunEntry {
    pub path: PathBuf,
    pub name: String,
    pub variant: Option<Variant>,
    status: Mutex<Option<(Instant, Arc<Value>)>>,
    openings: Mutex<Option<(Instant, Arc<Vec<TreeRow>>)>>,
}

impl RunEntry {
    /// The run at `path`, already opened as `dir` (a directory or `s3://` run that exists).
    pub fn new(path: &Path, dir: &vzero_data::RunDir) -> Result<RunEntry> {
        let variant = match dir.stored_variant()? {
            Some(v) => Some(Variant::load(&v).with_context(|| format!("the run's variant '{v}'"))?),
            None => match dir.data_variant()? {
                Some((v, _)) => Some(Variant::load(&v).with_context(|| format!("the run's variant '{v}'"))?),
                None => None,
            },
        };
        Ok(RunEntry { path: path.to_path_buf(), name: dir.location(), variant, status: Mutex::new(None), openings: Mutex::new(None) })
    }

    /// The run's figures, read again when older than [`STATUS_EVERY`].
    async fn status(&self) -> ApiResult<Arc<Value>> {
        if let Some((t, v)) = self.status.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            if t.elapsed() < STATUS_EVERY {
                return Ok(v.clone());
            }
        }
        let path = self.path.clone();
        let v = tokio::task::spawn_blocking(move || read_status(&path))
            .await
            .map_err(|e| ApiError::internal(format!("reading the run: {e}")))?
            .map_err(|e| ApiError::internal(format!("reading {}: {e:#}", self.name)))?;
        let v = Arc::new(v);
        *self.status.lock().unwrap_or_else(|e| e.into_inner()) = Some((Instant::now(), v.clone()));
        Ok(v)
    }

    /// The opening tree's rows, built again when older than [`OPENINGS_EVERY`].
    async fn tree(&self) -> ApiResult<Arc<Vec<TreeRow>>> {
        if let Some((t, rows)) = self.openings.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            if t.elapsed() < OPENINGS_EVERY {
                return Ok(rows.clone());
            }
        }
        let Some(variant) = self.variant else { return Err(ApiError::bad(format!("{}: no games yet", self.name))) };
        let path = self.path.clone();
        let rows = tokio::task::spawn_blocking(move || -> Result<Vec<TreeRow>> {
            let mut tree = OpeningTree::new(OPENING_PLIES);
            vzero_openings::for_each_game(&[vzero_openings::Input::RunDir(path)], |g| {
                if let Ok(raw) = g {
                    if let Ok(r) = vzero_openings::replay(raw, variant) {
                        tree.add(&r);
                    }
                }
                true
            })?;
            Ok(tree.rows(1))
        })
        .await
        .map_err(|e| ApiError::internal(format!("reading the run's games: {e}")))?
        .map_err(|e| ApiError::internal(format!("reading the games of {}: {e:#}", self.name)))?;
        let rows = Arc::new(rows);
        *self.openings.lock().unwrap_or_else(|e| e.into_inner()) = Some((Instant::now(), rows.clone()));
        Ok(rows)
    }
}

/// What the run page shows, from `vzero status`'s reading of the run, its metrics and its
/// gauntlet ratings.
fn read_status(path: &Path) -> Result<Value> {
    let s = vzero_pipeline::RunStatus::read(path)?;
    let local = !vzero_data::remote::is_remote_spec(path);
    let metrics = if local { vzero_trainer::read_metrics(&path.join("metrics.csv")).unwrap_or_default() } else { Vec::new() };
    let every = (metrics.len() / 400).max(1);
    let losses: Vec<Value> = metrics
        .iter()
        .enumerate()
        .filter(|(i, _)| i % every == 0 || *i + 1 == metrics.len())
        .map(|(_, m)| json!({ "step": m.step, "total": m.loss_total, "policy": m.loss_policy, "value": m.loss_value }))
        .collect();
    let elo = if local { vzero_arena::gauntlet::read_elo_csv(&path.join("arena").join("elo.csv")).unwrap_or_default() } else { Vec::new() };
    let elo: Vec<Value> = elo.iter().map(|r| json!({ "generation": r.generation, "step": r.step, "minutes": r.minutes, "elo": r.elo, "lo": r.lo, "hi": r.hi, "checkpoint": r.checkpoint })).collect();
    let procs: Vec<Value> = s
        .processes
        .iter()
        .map(|b| {
            json!({ "kind": b.role, "host": b.host, "pid": b.pid, "state": b.state, "age_s": b.age(s.now), "games": b.games, "rows": b.rows,
                    "step": b.step, "generation": b.generation, "games_per_min": b.games_per_min, "steps_per_min": b.steps_per_min, "rows_per_min": b.rows_per_min,
                    "resigned": b.resigns.resigned, "false_resign_rate": b.resigns.false_resign_rate() })
        })
        .collect();
    let last = metrics.last();
    let resigns = s.resigns();
    let nnue = if local { read_nnue(path, &s)? } else { Value::Null };
    Ok(json!({
        "name": s.location,
        "variant": s.variant,
        "games": s.games,
        "rows": s.rows,
        "external_rows": s.external_rows,
        "chunks": s.chunks,
        "games_per_min": s.games_per_min,
        "rows_per_min": s.rows_per_min,
        "external_rows_per_min": s.external_rows_per_min,
        // games resigned and the playthrough games' would-be resigners, over every process
        "resigns": resigns,
        "false_resign_rate": resigns.false_resign_rate(),
        "steps_per_min": s.steps_per_min,
        // the newest of metrics.csv and the newest checkpoint (metrics rows come every few steps)
        "steps": last.map(|m| m.step).max(s.checkpoint.as_ref().map(|c| c.step)),
        "generation": s.checkpoint.as_ref().map(|c| c.generation),
        "checkpoint": s.checkpoint.as_ref().map(|c| c.name.clone()),
        "loss": last.map(|m| m.loss_total),
        "losses": losses,
        "elo": elo,
        "processes": procs,
        "nnue": nnue,
        "lines": s.lines(),
        "warnings": s.warnings,
        "updated_unix": s.now,
    }))
}

/// The NNUE half of a run (`vzero nnue play`, `train`, `loop`), when it has one: positions
/// labelled, the NNUE trainer's losses (train and held-out) and the nets published with their
/// gates.
fn read_nnue(path: &Path, s: &vzero_pipeline::RunStatus) -> Result<Value> {
    let dir = path.join("nnue");
    if !dir.is_dir() && s.external_rows == 0 {
        return Ok(Value::Null);
    }
    let run = vzero_data::RunDir::open_existing(path)?;
    let nets = vzero_pipeline::nnue::published_nets(&run).unwrap_or_default();
    // nnue/metrics.csv: step,positions,train_loss,validation_loss,lr,positions_per_s
    let text = std::fs::read_to_string(dir.join("metrics.csv")).unwrap_or_default();
    let rows: Vec<Vec<&str>> = text.lines().skip(1).map(|l| l.split(',').collect()).filter(|f: &Vec<&str>| f.len() >= 6).collect();
    let every = (rows.len() / 400).max(1);
    let num = |f: &str| f.trim().parse::<f64>().ok();
    let losses: Vec<Value> = rows
        .iter()
        .enumerate()
        .filter(|(i, _)| i % every == 0 || *i + 1 == rows.len())
        .map(|(_, f)| json!({ "step": num(f[0]), "train": num(f[2]), "validation": num(f[3]) }))
        .collect();
    let last = rows.last();
    let newest = nets.last();
    Ok(json!({
        "positions_labelled": s.external_rows,
        "positions_per_min": newest.filter(|n| n.play_seconds > 0.0).map(|n| n.positions as f64 / n.play_seconds * 60.0),
        "train_step": last.and_then(|f| num(f[0])),
        "train_loss": last.and_then(|f| num(f[2])),
        "validation_loss": last.and_then(|f| num(f[3])),
        "losses": losses,
        "nets": nets.iter().map(|n| json!({
            "round": n.round, "net": n.net, "games": n.games, "positions": n.positions,
            "positions_per_s": if n.play_seconds > 0.0 { n.positions as f64 / n.play_seconds } else { 0.0 },
            "validation_loss": n.validation_loss, "gate_score": n.gate_score, "teacher": n.teacher,
        })).collect::<Vec<_>>(),
    }))
}

fn run<'a>(app: &'a App, id: &str) -> ApiResult<&'a RunEntry> {
    id.parse::<usize>().ok().and_then(|i| app.runs.get(i)).ok_or_else(|| ApiError::not_found(format!("no run '{}': this server shows {}", vzero_rules::echo(id), app.runs.len())))
}

/// `GET /api/runs/{id}/status`.
pub async fn status(State(app): State<Arc<App>>, UrlPath(id): UrlPath<String>) -> ApiResult<Json<Value>> {
    let r = run(&app, &id)?;
    Ok(Json((*r.status().await?).clone()))
}

/// `GET /api/runs/{id}/events`: the status at once, then whenever it changes.
pub async fn events(State(app): State<Arc<App>>, UrlPath(id): UrlPath<String>) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let index: usize = run(&app, &id).map(|_| id.parse().unwrap_or(0))?;
    // the first status goes out at once; after it, one look per EVENTS_EVERY
    let stream = futures_util::stream::unfold((app, index, None::<String>), |(app, index, last)| async move {
        loop {
            if last.is_some() {
                tokio::time::sleep(EVENTS_EVERY).await;
            }
            let text = match app.runs[index].status().await {
                Ok(v) => v.to_string(),
                Err(e) => json!({ "error": e.message }).to_string(),
            };
            if last.as_deref() != Some(text.as_str()) {
                return Some((Ok(Event::default().data(text.clone())), (app, index, Some(text))));
            }
        }
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// Query of `GET /api/runs/{id}/openings`.
#[derive(Deserialize)]
pub struct OpeningsQuery {
    /// The line so far: UCI moves separated by commas.
    #[serde(default)]
    moves: String,
}

/// `GET /api/runs/{id}/openings?moves=a,b`: the continuations of a line, most played first.
pub async fn openings(
    State(app): State<Arc<App>>,
    UrlPath(id): UrlPath<String>,
    q: std::result::Result<Query<OpeningsQuery>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Json<Value>> {
    let q = query(q)?;
    let r = run(&app, &id)?;
    let variant = r.variant.ok_or_else(|| ApiError::bad(format!("{}: no games yet", r.name)))?;
    let line: Vec<String> = q.moves.split(',').map(str::trim).filter(|m| !m.is_empty()).map(str::to_string).collect();
    if line.len() > OPENING_PLIES {
        return Err(ApiError::bad(format!("the tree holds the first {OPENING_PLIES} plies")));
    }
    let rows = r.tree().await?;
    // the start position with the most games (a run may also start games elsewhere)
    let mut starts: Vec<(&str, u64)> = Vec::new();
    for row in rows.iter().filter(|row| row.ply == 1) {
        match starts.iter_mut().find(|(f, _)| *f == row.start_fen) {
            Some(s) => s.1 += row.games,
            None => starts.push((&row.start_fen, row.games)),
        }
    }
    let start_fen = starts.iter().max_by_key(|s| s.1).map_or_else(|| Position::startpos(variant).fen(), |s| s.0.to_string());
    let mut pos = Position::from_fen(variant, &start_fen).map_err(|e| ApiError::internal(format!("start position: {e}")))?;
    let mut sans = Vec::new();
    for m in &line {
        // parse_uci refuses an illegal move as well as a garbled one
        let mv = pos.parse_uci(m).map_err(|e| ApiError::bad(format!("move '{}' after '{}': {e}", vzero_rules::echo(m), sans.join(" "))))?;
        sans.push(pos.san(mv));
        pos.play(mv);
    }
    let mut next: Vec<&TreeRow> = rows.iter().filter(|row| row.start_fen == start_fen && row.line_uci.len() == line.len() + 1 && row.line_uci[..line.len()] == line[..]).collect();
    next.sort_by(|a, b| b.games.cmp(&a.games));
    let games: u64 = next.iter().map(|r| r.games).sum();
    // SAN as the Play page writes it (the rules core's, not the opening tree's own)
    let san = |uci: &str| pos.parse_uci(uci).map(|m| pos.san(m)).unwrap_or_else(|_| uci.to_string());
    let moves: Vec<Value> = next
        .iter()
        .map(|r| json!({ "uci": r.uci, "san": san(&r.uci), "games": r.games, "white": r.white_wins, "draws": r.draws, "black": r.black_wins, "score": r.score, "frequency": r.frequency }))
        .collect();
    let mut view = crate::games::position_json(&pos);
    let o = view.as_object_mut().expect("an object");
    o.insert("line".into(), json!(line));
    o.insert("line_san".into(), json!(sans));
    o.insert("games".into(), json!(games));
    o.insert("moves".into(), json!(moves));
    Ok(Json(view))
}
