//! The HTTP handlers: chat completions (fixed), everything else (passed through),
//! `/healthz` and `/metrics`.

use crate::adapter::Adapter;
use crate::adapter::chat::ChatCompletions;
use crate::error::ApiError;
use crate::recover::{self, Ctx, Fixed};
use crate::state::AppState;
use crate::summary::Summary;
use crate::upstream::{X_TOOLFIX, response_headers};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::{Stream, StreamExt as _};
use serde_json::Value;
use serde_json::value::RawValue;
use std::sync::Arc;
use std::time::Instant;
use tracing::Instrument as _;

pub(crate) type Shared = Arc<AppState>;

pub(crate) async fn healthz() -> impl IntoResponse {
    (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], "{\"status\":\"ok\"}")
}

pub(crate) async fn metrics(State(state): State<Shared>) -> impl IntoResponse {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")],
        state.metrics.render(),
    )
}

/// Read a request body of at most `limit` bytes: a declared length over it is refused
/// before reading, a body that grows past it is refused as soon as it does.
async fn read_body(headers: &HeaderMap, body: Body, limit: usize) -> Result<Bytes, ApiError> {
    if declared_length(headers).is_some_and(|n| n > limit) {
        return Err(ApiError::too_large(limit));
    }
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        if std::error::Error::source(&e).is_some_and(is_length_limit) {
            ApiError::too_large(limit)
        } else {
            ApiError::bad_request("body_unreadable", format!("the request body could not be read: {e}"))
        }
    })
}

fn is_length_limit(e: &(dyn std::error::Error + 'static)) -> bool {
    e.is::<http_body_util::LengthLimitError>()
}

fn declared_length(headers: &HeaderMap) -> Option<usize> {
    headers.get(header::CONTENT_LENGTH)?.to_str().ok()?.parse().ok()
}

/// `POST /v1/chat/completions`.
pub(crate) async fn chat(State(state): State<Shared>, request: Request) -> Response {
    let started = Instant::now();
    let (parts, body) = request.into_parts();
    let bytes = match read_body(&parts.headers, body, state.config.body_limit).await {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let request: Value = match serde_json::from_slice(&bytes) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) => {
            return ApiError::bad_request("invalid_json", "the request body must be a JSON object").into_response();
        }
        Err(e) => {
            return ApiError::bad_request("invalid_json", format!("the request body is not valid JSON: {e}"))
                .into_response();
        }
    };
    let Some(definitions) = ChatCompletions::tools(&request) else {
        // No tools: nothing to fix; the request goes as it came, the answer comes back as
        // it is.
        return forward(&state, parts.method, &path_of(&parts.uri), &parts.headers, reqwest::Body::from(bytes)).await;
    };
    let model = request.get("model").and_then(Value::as_str).unwrap_or("");
    let span =
        tracing::info_span!("chat", model, stream = ChatCompletions::is_stream(&request), tools = definitions.len());
    let raw_tools = raw_tools(&bytes);
    let tools = state.tool_set(raw_tools.as_deref().unwrap_or(""), definitions);
    with_tools(state, parts.headers, request, bytes, tools, started).instrument(span).await
}

async fn with_tools(
    state: Shared,
    headers: HeaderMap,
    mut request: Value,
    bytes: Bytes,
    tools: toolfix::ToolSet,
    started: Instant,
) -> Response {
    let history = if state.config.repair_history {
        ChatCompletions::repair_history(&mut request, &state.config.limits)
    } else {
        Vec::new()
    };
    let outgoing =
        if history.is_empty() { bytes } else { Bytes::from(serde_json::to_vec(&request).unwrap_or_default()) };
    let summary = Summary::new(history);
    summary.record_history(&state.metrics);
    if ChatCompletions::is_stream(&request) {
        return crate::adapter::chat_stream::handle(state, headers, request, outgoing, tools, summary, started).await;
    }
    non_streaming(&state, &headers, &request, outgoing, &tools, summary, started).await
}

async fn non_streaming(
    state: &AppState,
    headers: &HeaderMap,
    request: &Value,
    outgoing: Bytes,
    tools: &toolfix::ToolSet,
    mut summary: Summary,
    started: Instant,
) -> Response {
    let mut ctx =
        Ctx { state, headers, tools, history: ChatCompletions::history(request), waited: std::time::Duration::ZERO };
    let asked = Instant::now();
    let answer = match state.upstream.post_json(ChatCompletions::PATH, headers, outgoing).await {
        Ok(a) => a,
        Err(e) => return upstream_failure(state, e),
    };
    let status = answer.status;
    let upstream_headers = response_headers(&answer.headers);
    let body = match state.upstream.read_all(answer.response, state.config.response_limit).await {
        Ok(b) => b,
        Err(e) => return upstream_failure(state, e),
    };
    ctx.waited += asked.elapsed();
    if !status.is_success() {
        state.metrics.upstream_error(status.as_str());
        return (status, upstream_headers, body).into_response();
    }
    let Ok(response) = serde_json::from_slice::<Value>(&body) else {
        // Not JSON: nothing to fix; given back as it came.
        return (status, upstream_headers, body).into_response();
    };
    let first = ctx.fix::<ChatCompletions>(response, Some(body), &mut summary);
    let answer = recover::recover::<ChatCompletions>(&mut ctx, request, first, &mut summary).await;
    let late = recover::answered_late(&summary);
    let model = model_of(&answer.response, request);
    for (i, f) in answer.replies.iter().enumerate() {
        if let Some(f) = f {
            summary.calls(i, f, late, &state.metrics, &model);
        }
    }
    let response = respond(answer, &summary, late, status, upstream_headers);
    state.metrics.added_latency(started.elapsed().saturating_sub(ctx.waited));
    response
}

/// The answer: the upstream's bytes when nothing changed, else the fixed response with
/// its `x_toolfix` report.
fn respond(answer: Fixed, summary: &Summary, late: bool, status: StatusCode, mut headers: HeaderMap) -> Response {
    headers.insert(X_TOOLFIX.clone(), summary.header());
    let changed = late
        || answer
            .replies
            .iter()
            .enumerate()
            .any(|(i, f)| f.as_ref().is_some_and(|f| ChatCompletions::changes(&answer.response, i, f)));
    let size_hint = answer.bytes.as_ref().map_or(0, Bytes::len);
    if !changed && let Some(bytes) = answer.bytes {
        return (status, headers, bytes).into_response();
    }
    let mut response = answer.response;
    for (i, f) in answer.replies.iter().enumerate() {
        if let Some(f) = f {
            ChatCompletions::apply(&mut response, i, f);
        }
    }
    if let Some(obj) = response.as_object_mut() {
        obj.insert("x_toolfix".to_owned(), summary.to_value());
    }
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let mut body = Vec::with_capacity(size_hint + 1024);
    if serde_json::to_writer(&mut body, &response).is_err() {
        body.clear();
    }
    (status, headers, body).into_response()
}

pub(crate) fn model_of(response: &Value, request: &Value) -> String {
    response.get("model").or_else(|| request.get("model")).and_then(Value::as_str).unwrap_or("").to_owned()
}

pub(crate) fn upstream_failure(state: &AppState, e: ApiError) -> Response {
    if let Some(label) = e.upstream_label() {
        state.metrics.upstream_error(label);
    }
    tracing::warn!(code = e.code, "upstream failure");
    e.into_response()
}

/// The raw text of the request's `tools`, the tool-set cache key.
fn raw_tools(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Peek<'a> {
        #[serde(borrow)]
        tools: Option<&'a RawValue>,
    }
    let peek: Peek<'_> = serde_json::from_slice(body).ok()?;
    peek.tools.map(|t| t.get().to_owned())
}

fn path_of(uri: &axum::http::Uri) -> String {
    uri.path_and_query().map_or_else(|| uri.path().to_owned(), |p| p.as_str().to_owned())
}

/// Everything else: passed through, bodies streamed both ways.
pub(crate) async fn passthrough(State(state): State<Shared>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let limit = state.config.body_limit;
    if declared_length(&parts.headers).is_some_and(|n| n > limit) {
        return ApiError::too_large(limit).into_response();
    }
    let body = reqwest::Body::wrap_stream(limited(body.into_data_stream(), limit));
    forward(&state, parts.method, &path_of(&parts.uri), &parts.headers, body).await
}

/// Forward a request unchanged; stream the answer back unchanged.
async fn forward(state: &AppState, method: Method, path: &str, headers: &HeaderMap, body: reqwest::Body) -> Response {
    let url = state.upstream.url(path);
    let headers = state.upstream.request_headers(headers, false);
    let answer = match state.upstream.send(method, url, headers, body).await {
        Ok(a) => a,
        Err(e) => return upstream_failure(state, e),
    };
    if !answer.status.is_success() {
        state.metrics.upstream_error(answer.status.as_str());
    }
    let headers = response_headers(&answer.headers);
    let body = Body::from_stream(idle_timeout(answer.response.bytes_stream(), state.upstream.idle));
    (answer.status, headers, body).into_response()
}

/// A body stream that fails when the upstream is silent for longer than `idle`.
pub(crate) fn idle_timeout<S>(stream: S, idle: std::time::Duration) -> impl Stream<Item = Result<Bytes, std::io::Error>>
where
    S: Stream<Item = Result<Bytes, reqwest::Error>> + Send + 'static,
{
    futures_util::stream::unfold((Box::pin(stream), false), move |(mut stream, done)| async move {
        if done {
            return None;
        }
        match tokio::time::timeout(idle, stream.next()).await {
            Ok(Some(Ok(b))) => Some((Ok(b), (stream, false))),
            Ok(Some(Err(e))) => Some((Err(std::io::Error::other(e.without_url())), (stream, true))),
            Ok(None) => None,
            Err(_) => Some((Err(std::io::Error::other("the upstream went silent")), (stream, true))),
        }
    })
}

/// A request body stream that fails past `limit` bytes.
fn limited(
    stream: axum::body::BodyDataStream,
    limit: usize,
) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    futures_util::stream::unfold((stream, 0usize), move |(mut stream, seen)| async move {
        match stream.next().await {
            Some(Ok(b)) => {
                let seen = seen + b.len();
                if seen > limit {
                    Some((Err(std::io::Error::other("the request body is over the limit")), (stream, usize::MAX / 2)))
                } else {
                    Some((Ok(b), (stream, seen)))
                }
            }
            Some(Err(e)) => Some((Err(std::io::Error::other(e)), (stream, seen))),
            None => None,
        }
    })
}
