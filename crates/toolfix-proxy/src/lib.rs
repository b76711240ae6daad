//! An OpenAI-compatible HTTP proxy that repairs LLM tool calls: the library behind
//! `toolfix serve`.
//!
//! Point a client's base URL at the proxy instead of the model server; tool calls in the
//! answers come back repaired — calls left in `content` or `reasoning_content` moved into
//! `tool_calls`, arguments repaired against each tool's schema, cut-off calls retried,
//! unusable calls re-prompted with a message the model can act on, storms of repeated calls
//! stopped — with no code change in the agent. The repairs are the `toolfix` library's
//! ([`toolfix::fix_reply`] and [`toolfix::ReplyStream`]); this crate is transport.
//!
//! ```no_run
//! # async fn run() -> Result<(), toolfix_proxy::Error> {
//! let config = toolfix_proxy::Config::new("http://127.0.0.1:8000/v1")?;
//! let listener = tokio::net::TcpListener::bind(config.listen).await
//!     .map_err(|source| toolfix_proxy::Error::Io { context: "bind".into(), source })?;
//! toolfix_proxy::serve(listener, config, std::future::pending()).await
//! # }
//! ```
//!
//! Routes: `POST /v1/chat/completions` (fixed, streaming and not), `GET /healthz`,
//! `GET /metrics` (Prometheus text), and everything else passed through unchanged. See
//! `docs/proxy.md` for the behaviour in full.

mod adapter;
mod auth;
mod config;
mod error;
#[cfg(feature = "fake")]
pub mod fake;
mod front;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
mod handlers;
pub mod head;
mod metrics;
mod sse;
mod state;
mod summary;
mod upstream;

pub use config::{Config, GiveUp, LengthRecovery, MAX_REPROMPTS, StormConfig, Timeouts, ToolConfig};
pub use error::Error;

use adapter::chat::ChatCompletions;
use adapter::messages::Messages;
use adapter::responses::Responses;
use axum::Router;
use axum::routing::{get, post};
use std::future::Future;
use std::sync::Arc;

/// The proxy as an `axum` router.
///
/// Layers, outermost first: tracing (one span per request, when the log level records
/// `tower_http` at `debug`; no headers or bodies logged),
/// then the API-key check (when the proxy has a key), then the routes.
///
/// # Errors
///
/// When the settings are invalid ([`Config::validate`]) or the HTTP client cannot be built.
pub fn app(config: Config) -> Result<Router, Error> {
    Ok(build(config)?.router)
}

/// The router, its state and whether it has the tracing layer.
struct Built {
    router: Router,
    state: handlers::Shared,
    traced: bool,
}

fn build(config: Config) -> Result<Built, Error> {
    config.validate()?;
    let keyed = config.api_key.is_some();
    let state = Arc::new(state::AppState::new(config)?);
    let mut router = Router::new()
        .route("/healthz", get(handlers::healthz))
        .route("/metrics", get(handlers::metrics))
        .route(front::CHAT, post(handlers::api::<ChatCompletions>))
        .route(front::MESSAGES, post(handlers::api::<Messages>))
        .route(front::RESPONSES, post(handlers::api::<Responses>))
        .fallback(handlers::passthrough);
    // Without a key of its own the proxy lets every request in: no check layer at all.
    if keyed {
        router = router.layer(axum::middleware::from_fn_with_state(state.clone(), auth::require_key));
    }
    // One span per request, when something would record it: the layer costs every request
    // its bookkeeping even when the log level drops what it writes.
    let traced = tracing::enabled!(target: "tower_http::trace::make_span", tracing::Level::DEBUG);
    if traced {
        router = router.layer(tower_http::trace::TraceLayer::new_for_http());
    }
    Ok(Built { router: router.with_state(state.clone()), state, traced })
}

/// Serve the proxy on `listener` until `shutdown` completes; then stop accepting and
/// let in-flight requests finish (graceful shutdown).
///
/// The same routes as [`app`], served by a narrow HTTP/1.1 front for the common request
/// shape (`POST` to an API route with a `content-length`) and by `hyper` with the router
/// for every other request, as `axum::serve` would.
///
/// # Errors
///
/// As [`app`]; and when serving fails.
pub async fn serve(
    listener: tokio::net::TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    let built = build(config)?;
    // The front serves the common request shape itself and hands everything else to the
    // router; with the tracing layer on, the router serves everything (see `front`).
    front::serve(listener, built.router, built.state, !built.traced, shutdown).await;
    Ok(())
}
