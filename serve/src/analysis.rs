//! `GET /api/analyse`: the engine's search of one position, streamed as server-sent events
//! while it runs (W/D/L, simulations, the best lines with their principal variations in SAN).

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::Stream;
use serde::Deserialize;
use serde_json::{json, Value};
use vzero_engine::{Evaluator, GoLimits, Report, ThinkConfig, Thinker};
use vzero_rules::{Game, Position};

use crate::{query, ApiError, ApiResult, App};

/// Searches at once (each takes a core); more wait for none: they are refused.
pub const MAX_ANALYSES: usize = 2;

/// Longest analysis a page may ask for.
const MAX_SECONDS: f64 = 120.0;

/// Lines reported.
const LINES: usize = 5;

/// Query of `GET /api/analyse`.
#[derive(Deserialize)]
pub struct AnalyseQuery {
    variant: String,
    #[serde(default)]
    fen: Option<String>,
    /// Index of a model; none: the variant's heuristics (no network).
    #[serde(default)]
    model: Option<usize>,
    #[serde(default)]
    seconds: Option<f64>,
}

/// A search report as the page reads it.
pub fn report_json(pos: &Position, r: &Report, done: bool) -> Value {
    let lines: Vec<Value> = r
        .lines
        .iter()
        .take(LINES)
        .map(|l| {
            let mut p = *pos;
            let mut pv = Vec::new();
            for &m in &l.pv {
                if !p.legal_moves().contains(&m) {
                    break;
                }
                pv.push(p.san(m));
                p.play(m);
            }
            json!({ "uci": pos.uci(l.mv), "san": pos.san(l.mv), "visits": l.visits, "wdl": l.wdl(), "score": score_text(l.score()), "pv": pv })
        })
        .collect();
    let best = r.lines.first();
    json!({
        "sims": r.sims,
        "nps": r.nps(),
        "done": done,
        "wdl": best.map(|l| l.wdl()),
        "score": best.map(|l| score_text(l.score())),
        "lines": lines,
    })
}

fn score_text(s: vzero_engine::Score) -> String {
    match s {
        vzero_engine::Score::Cp(c) => format!("cp {c}"),
        vzero_engine::Score::Mate(m) => format!("mate {m}"),
    }
}

/// Stops the search when the page goes away (the stream is dropped).
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// `GET /api/analyse?variant=V&fen=F&model=I&seconds=S`.
pub async fn analyse(
    State(app): State<Arc<App>>,
    q: std::result::Result<Query<AnalyseQuery>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let q = query(q)?;
    let variant = app.variant(&q.variant)?;
    let game = match q.fen.as_deref().map(str::trim).filter(|f| !f.is_empty()) {
        None => Game::startpos(variant),
        Some(f) => Game::from_fen(variant, f).map_err(|e| ApiError::bad(format!("FEN: {e}")))?,
    };
    if game.result().is_over() {
        return Err(ApiError::bad("the game is over in this position: nothing to search"));
    }
    let seconds = q.seconds.unwrap_or(10.0);
    if !(seconds > 0.0 && seconds <= MAX_SECONDS) {
        return Err(ApiError::bad(format!("seconds must be in (0, {MAX_SECONDS}]")));
    }
    let model = match q.model {
        None => None,
        Some(i) => {
            let m = app.models.get(i).ok_or_else(|| ApiError::bad(format!("no model {i}: this server has {}", app.models.len())))?;
            if m.variant.name() != variant.name() {
                return Err(ApiError::bad(format!("model {i} ({}) plays {}, not {}", m.name, m.variant.name(), variant.name())));
            }
            Some(m.path.clone())
        }
    };
    let permit = app.analyses.clone().try_acquire_owned().map_err(|_| ApiError::busy(format!("{MAX_ANALYSES} analyses are running: try again when one ends")))?;
    let (tx, rx) = tokio::sync::mpsc::channel::<Value>(4);
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let eval = match &model {
            None => Evaluator::Knowledge(vzero_mcts::Knowledge::heuristic_only()),
            Some(p) => match vzero_model::NetEvaluator::load(p, variant, vzero_model::Device::Cpu) {
                Ok((net, _)) => Evaluator::Net(Box::new(net)),
                Err(e) => {
                    let _ = tx.blocking_send(json!({ "error": format!("loading {}: {e}", p.display()), "done": true }));
                    return;
                }
            },
        };
        let mut thinker = Thinker::new(vec![eval], ThinkConfig { multipv: LINES, ..ThinkConfig::default() }, 1);
        let limits = GoLimits { movetime: Some(Duration::from_secs_f64(seconds)), ..GoLimits::default() };
        let pos = *game.position();
        let result = thinker.think(&game, &limits, &stop2, None, Duration::from_millis(300), &mut |r| {
            // a full channel (a slow page) skips a report; a closed one (the page left) stops
            match tx.try_send(report_json(&pos, r, false)) {
                Err(tokio::sync::mpsc::error::TrySendError::Closed(_)) => stop2.store(true, Ordering::Relaxed),
                _ => {}
            }
        });
        let last = match result {
            Ok(Some(r)) => report_json(&pos, &r, true),
            Ok(None) => json!({ "done": true, "lines": [] }),
            Err(e) => json!({ "error": format!("{e:#}"), "done": true }),
        };
        let _ = tx.blocking_send(last);
    });
    let guard = StopOnDrop(stop);
    let stream = futures_util::stream::unfold((rx, guard), |(mut rx, guard)| async move {
        let v = rx.recv().await?;
        Some((Ok(Event::default().data(v.to_string())), (rx, guard)))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}
