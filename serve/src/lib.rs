//! `vzero serve`: a local web server where people play vzero's bots on a board of any variant
//! vzero knows, analyse positions with a network, explore a run's openings and watch a run.
//!
//! Everything about the rules (legal moves, check, results, SAN) comes from the rules core; the
//! page (assets/, embedded in the binary, no framework and nothing fetched from the internet)
//! only draws what the server says and offers only the legal moves it lists. The HTTP API is
//! described in `serve/README.md`.
//!
//! Safe by default: it binds to 127.0.0.1 unless told otherwise, serves only the runs and
//! models named on its command line (no path from the browser reaches the file system), reads
//! runs without writing to them, and answers every bad request (an illegal move, a garbled FEN,
//! an unknown game, a huge body) with a JSON error that changes nothing.

mod analysis;
mod bots;
mod games;
mod runs;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;

pub use bots::BotSpec;

/// What `vzero serve` serves.
#[derive(Clone, Debug, Default)]
pub struct ServeOptions {
    /// Run directories (or `s3://` runs) whose openings and progress the pages show; their
    /// newest checkpoints are bots too.
    pub runs: Vec<PathBuf>,
    /// Checkpoints to play against and analyse with.
    pub models: Vec<PathBuf>,
    /// Variants besides the built-in ones: names or definition files.
    pub variants: Vec<String>,
}

/// The largest request body read (a FEN and a move are a few hundred bytes).
pub const MAX_BODY: usize = 64 * 1024;

/// An API error: a status and a message, answered as `{"error": message}`.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    /// A bad request (400).
    pub fn bad(message: impl Into<String>) -> ApiError {
        ApiError { status: StatusCode::BAD_REQUEST, message: message.into() }
    }

    /// Nothing of that name (404).
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError { status: StatusCode::NOT_FOUND, message: message.into() }
    }

    /// Busy: try again (409).
    pub fn busy(message: impl Into<String>) -> ApiError {
        ApiError { status: StatusCode::CONFLICT, message: message.into() }
    }

    /// Something failed on the server's side (500).
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError { status: StatusCode::INTERNAL_SERVER_ERROR, message: message.into() }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "error": self.message }))).into_response()
    }
}

/// Handlers' result.
pub type ApiResult<T> = std::result::Result<T, ApiError>;

/// The server's state, shared by all requests.
pub struct App {
    variants: Vec<vzero_rules::Variant>,
    models: Vec<bots::ModelEntry>,
    runs: Vec<runs::RunEntry>,
    games: games::Games,
    analyses: Arc<tokio::sync::Semaphore>,
}

impl App {
    /// Loads what the options name (variants, model metadata, run variants); fails on a name
    /// that does not resolve, before anything is served.
    pub fn new(opts: &ServeOptions) -> Result<App> {
        let mut variants: Vec<vzero_rules::Variant> = vzero_rules::variant::builtin_names().into_iter().map(vzero_rules::Variant::builtin).collect::<Result<_, _>>()?;
        let add = |v: vzero_rules::Variant, variants: &mut Vec<vzero_rules::Variant>| {
            if !variants.iter().any(|w| w.name() == v.name()) {
                variants.push(v);
            }
        };
        for name in &opts.variants {
            let v = vzero_rules::Variant::load(name).with_context(|| format!("--variant {name}"))?;
            add(v, &mut variants);
        }
        let mut runs = Vec::new();
        let mut models = Vec::new();
        for (i, path) in opts.runs.iter().enumerate() {
            let dir = vzero_data::RunDir::open_existing(path).with_context(|| format!("--run {}", path.display()))?;
            let run = runs::RunEntry::new(path, &dir).with_context(|| format!("--run {}", path.display()))?;
            if let Some(v) = run.variant {
                add(v, &mut variants);
                if let Some(m) = bots::ModelEntry::run_latest(i, &dir, v)? {
                    models.push(m);
                }
            }
            runs.push(run);
        }
        for path in &opts.models {
            let m = bots::ModelEntry::open(path, &variants).with_context(|| format!("--model {}", path.display()))?;
            add(m.variant, &mut variants);
            models.push(m);
        }
        Ok(App { variants, models, runs, games: games::Games::default(), analyses: Arc::new(tokio::sync::Semaphore::new(analysis::MAX_ANALYSES)) })
    }

    /// The variant named `name` among those served.
    fn variant(&self, name: &str) -> ApiResult<vzero_rules::Variant> {
        self.variants.iter().copied().find(|v| v.name() == name).ok_or_else(|| {
            ApiError::bad(format!("unknown variant '{}': this server plays {}", vzero_rules::echo(name), self.variants.iter().map(|v| v.name()).collect::<Vec<_>>().join(", ")))
        })
    }
}

/// The router of every page and API endpoint.
pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/play", get(page))
        .route("/analyse", get(page))
        .route("/openings", get(page))
        .route("/run", get(page))
        .route("/assets/{file}", get(asset))
        .route("/api/info", get(info))
        .route("/api/games", post(games::create))
        .route("/api/games/{id}", get(games::show))
        .route("/api/games/{id}/move", post(games::play))
        .route("/api/games/{id}/bot", post(games::bot))
        .route("/api/games/{id}/undo", post(games::undo))
        .route("/api/games/{id}/pgn", get(games::pgn))
        .route("/api/analyse", get(analysis::analyse))
        .route("/api/runs/{id}/status", get(runs::status))
        .route("/api/runs/{id}/events", get(runs::events))
        .route("/api/runs/{id}/openings", get(runs::openings))
        .fallback(|| async { ApiError::not_found("no such page") })
        .with_state(app)
}

/// Serves on `listener` until the process ends.
pub async fn serve(listener: tokio::net::TcpListener, app: Arc<App>) -> Result<()> {
    axum::serve(listener, router(app)).await.context("serving HTTP")
}

/// Binds `host:port` (port 0: any free port), calls `on_listen` with the address bound, and
/// serves until the process ends (a runtime of its own: call it from a plain thread).
pub fn run(opts: &ServeOptions, host: &str, port: u16, on_listen: impl FnOnce(SocketAddr)) -> Result<()> {
    let app = Arc::new(App::new(opts)?);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().context("starting the server's runtime")?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind((host, port)).await.with_context(|| format!("binding {host}:{port}"))?;
        on_listen(listener.local_addr()?);
        serve(listener, app).await
    })
}

const INDEX_HTML: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const STYLE_CSS: &str = include_str!("../assets/style.css");

/// Set to a folder (`serve/assets`) to serve the page's files from disk instead of the copies
/// built in: for working on the page without rebuilding.
pub const ASSETS_ENV: &str = "VZERO_SERVE_ASSETS";

/// One of the page's files (`index.html`, `app.js`, `style.css`), built in or from
/// [`ASSETS_ENV`]'s folder.
fn asset_text(name: &'static str, built_in: &'static str) -> std::borrow::Cow<'static, str> {
    match std::env::var_os(ASSETS_ENV) {
        Some(dir) => std::fs::read_to_string(PathBuf::from(dir).join(name)).map_or(built_in.into(), Into::into),
        None => built_in.into(),
    }
}

async fn page() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")], asset_text("index.html", INDEX_HTML))
}

async fn asset(UrlPath(file): UrlPath<String>) -> Response {
    let (name, text, kind) = match file.as_str() {
        "app.js" => ("app.js", APP_JS, "text/javascript; charset=utf-8"),
        "style.css" => ("style.css", STYLE_CSS, "text/css; charset=utf-8"),
        _ => return ApiError::not_found(format!("no asset '{}'", vzero_rules::echo(&file))).into_response(),
    };
    ([(header::CONTENT_TYPE, kind), (header::CACHE_CONTROL, "no-cache")], asset_text(name, text)).into_response()
}

async fn info(State(app): State<Arc<App>>) -> Json<serde_json::Value> {
    let variants: Vec<_> = app.variants.iter().map(|v| json!({ "name": v.name(), "files": v.files(), "ranks": v.ranks(), "drops": v.has_drops() })).collect();
    let models: Vec<_> = app.models.iter().enumerate().map(|(i, m)| json!({ "id": i, "name": m.name, "variant": m.variant.name(), "source": m.source })).collect();
    let runs: Vec<_> = app.runs.iter().enumerate().map(|(i, r)| json!({ "id": i, "name": r.name, "variant": r.variant.map(|v| v.name()) })).collect();
    Json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "variants": variants,
        "bots": bots::menu(&app.models),
        "models": models,
        "runs": runs,
    }))
}

/// Reads a JSON request body of at most [`MAX_BODY`] bytes.
async fn json_body<T: serde::de::DeserializeOwned>(body: axum::body::Body) -> ApiResult<T> {
    let bytes = axum::body::to_bytes(body, MAX_BODY)
        .await
        .map_err(|_| ApiError { status: StatusCode::PAYLOAD_TOO_LARGE, message: format!("request body over {MAX_BODY} bytes") })?;
    serde_json::from_slice(&bytes).map_err(|e| ApiError::bad(format!("request body: {e}")))
}

/// `Query` with a JSON error for a garbled query string.
fn query<T: serde::de::DeserializeOwned>(q: std::result::Result<Query<T>, axum::extract::rejection::QueryRejection>) -> ApiResult<T> {
    q.map(|Query(t)| t).map_err(|e| ApiError::bad(format!("query: {}", e.body_text())))
}
