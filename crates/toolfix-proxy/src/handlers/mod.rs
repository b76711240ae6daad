//! The HTTP handlers. [`api`] serves every API the proxy fixes, through its adapter:
//! `once` answers a non-streamed request, `stream` a streamed one, `tail` is the
//! recovery, labels and metrics both share. Everything else is passed through;
//! `/healthz` and `/metrics` are the proxy's own.

mod once;
mod stream;
pub(crate) mod tail;

use crate::adapter::{Adapter, Known};
use crate::error::ApiError;
use crate::state::AppState;
use crate::summary::Summary;
use crate::upstream::Payload;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::{Arc, OnceLock};
use std::time::Instant;
use toolfix::ToolSet;
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

/// A route of an API the proxy fixes (`POST /v1/chat/completions`, ...): a request with
/// tools is fixed, streamed or not; one without passes through byte for byte.
pub(crate) async fn api<A: Adapter>(State(state): State<Shared>, request: Request) -> Response {
    let started = Instant::now();
    let (parts, body) = request.into_parts();
    let bytes = match read_body(&parts.headers, body, state.config.body_limit).await {
        Ok(b) => b,
        Err(e) => return shaped::<A>(&e),
    };
    api_read::<A>(state, Head { method: parts.method, uri: parts.uri, headers: parts.headers }, bytes, started).await
}

/// What [`api_read`] needs of a request's head.
pub(crate) struct Head {
    pub(crate) method: Method,
    pub(crate) uri: axum::http::Uri,
    pub(crate) headers: HeaderMap,
}

/// [`api`] once the body is read (within the body limit): the front calls it directly.
pub(crate) async fn api_read<A: Adapter>(state: Shared, parts: Head, bytes: Bytes, started: Instant) -> Response {
    let known = state.known_tools(A::API);
    let told = known.as_ref().map(|k| Known { text: &k.text, here: k.here });
    let peek = match A::peek_known(&bytes, told) {
        Ok(p) => p,
        Err(e) => {
            return shaped::<A>(&ApiError::bad_request(
                "invalid_json",
                format!("the request body is not valid JSON (or not an object): {e}"),
            ));
        }
    };
    let (Some(raw_tools), stream) = (peek.tools, peek.stream) else {
        // No tools: nothing to fix; the request goes as it came, the answer comes back as
        // it is.
        return forward(&state, parts.method, &parts.uri, parts.headers, Payload::Bytes(bytes)).await;
    };
    // Text, as a value read would require (the peek skips what it does not read).
    if !peek.utf8 && std::str::from_utf8(&bytes).is_err() {
        return shaped::<A>(&ApiError::bad_request("invalid_json", "the request body must be a JSON object"));
    }
    let model = peek.model.as_str().unwrap_or("").to_owned();
    let (request, history) = if let Some(n) = peek.plain {
        // Nothing in the conversation to repair or read: forwarded as it came.
        (ClientRequest { bytes: bytes.clone(), value: OnceLock::new(), plain: Some(n) }, Vec::new())
    } else {
        let mut value: Value = match serde_json::from_slice(&bytes) {
            Ok(v @ Value::Object(_)) => v,
            _ => {
                return shaped::<A>(&ApiError::bad_request("invalid_json", "the request body must be a JSON object"));
            }
        };
        let history =
            if state.config.repair_history { A::repair_history(&mut value, &state.config.limits) } else { Vec::new() };
        let outgoing = if history.is_empty() {
            bytes.clone()
        } else {
            Bytes::from(serde_json::to_vec(&value).unwrap_or_default())
        };
        (ClientRequest { bytes: outgoing, value: OnceLock::from(value), plain: None }, history)
    };
    let tools = match known {
        // The last request's text, to the same API: its set, which it still is.
        Some(last) if peek.known && last.here => last.set,
        _ => {
            let tools = state.tool_set(A::API, raw_tools, || A::definitions(request.value()));
            state.remember_tools(A::API, raw_tools, told.map(|k| k.text), &tools);
            tools
        }
    };
    let span = tracing::info_span!("fix", api = A::API, model, stream, tools = tools.tools().len());
    async move {
        let summary = Summary::new(history);
        summary.record_history(&state.metrics);
        let job = Job { state, headers: parts.headers, request, tools, summary, started, model };
        if stream { stream::handle::<A>(job).await } else { once::handle::<A>(job).await }
    }
    .instrument(span)
    .await
}

/// The client's request as forwarded (its history repaired): its bytes, and its JSON
/// value, read only when something needs it (a recovery request, a tool set not in the
/// cache) when the conversation holds nothing to repair or read.
#[derive(Debug)]
pub(crate) struct ClientRequest {
    /// The body sent upstream.
    pub(crate) bytes: Bytes,
    value: OnceLock<Value>,
    /// See [`crate::adapter::Peek::plain`].
    plain: Option<usize>,
}

impl ClientRequest {
    /// The request as a value (`null` if it cannot be read, which the peek rules out).
    pub(crate) fn value(&self) -> &Value {
        self.value.get_or_init(|| serde_json::from_slice(&self.bytes).unwrap_or(Value::Null))
    }

    /// The conversation as the storm guard reads it: for a plain one, as many `null`s as
    /// it has messages (the guard reads none of them; the ids of new calls depend on how
    /// many there are).
    pub(crate) fn history<A: Adapter>(&self) -> Option<Cow<'_, Value>> {
        match self.plain {
            Some(n) => Some(nulls(n)),
            None => A::history(self.value()),
        }
    }
}

/// `[null; n]`: one made once for a short conversation (the usual), not per request.
fn nulls(n: usize) -> Cow<'static, Value> {
    /// `[null; n]` for each `n` below this.
    const MADE: usize = 64;
    static NULLS: OnceLock<Vec<Value>> = OnceLock::new();
    match NULLS.get_or_init(|| (0..MADE).map(|n| Value::Array(vec![Value::Null; n])).collect()).get(n) {
        Some(made) => Cow::Borrowed(made),
        None => Cow::Owned(Value::Array(vec![Value::Null; n])),
    }
}

/// A request being answered.
pub(crate) struct Job {
    pub(crate) state: Shared,
    pub(crate) headers: HeaderMap,
    pub(crate) request: ClientRequest,
    pub(crate) tools: ToolSet,
    pub(crate) summary: Summary,
    pub(crate) started: Instant,
    pub(crate) model: String,
}

pub(crate) fn upstream_failure(state: &AppState, api: &str, e: ApiError) -> Response {
    if let Some(label) = e.upstream_label() {
        state.metrics.upstream_error(api, label);
    }
    tracing::warn!(code = e.code, "upstream failure");
    e.into_response()
}

/// An upstream failure answered in API `A`'s error shape.
pub(crate) fn failure<A: Adapter>(state: &AppState, e: &ApiError) -> Response {
    if let Some(label) = e.upstream_label() {
        state.metrics.upstream_error(A::API, label);
    }
    tracing::warn!(code = e.code, "upstream failure");
    shaped::<A>(e)
}

/// A proxy error in API `A`'s error shape.
pub(crate) fn shaped<A: Adapter>(e: &ApiError) -> Response {
    let body = A::error_body(e.kind, e.code, &e.message).to_string();
    let mut response = (e.status, body).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, axum::http::HeaderValue::from_static("application/json"));
    response
}

/// Everything else: passed through, bodies streamed both ways.
pub(crate) async fn passthrough(State(state): State<Shared>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let limit = state.config.body_limit;
    if declared_length(&parts.headers).is_some_and(|n| n > limit) {
        return ApiError::too_large(limit).into_response();
    }
    let body = Body::new(http_body_util::Limited::new(body, limit));
    forward(&state, parts.method, &parts.uri, parts.headers, Payload::Stream(body)).await
}

/// Forward a request unchanged; stream the answer back unchanged.
async fn forward(
    state: &AppState,
    method: Method,
    uri: &axum::http::Uri,
    headers: HeaderMap,
    body: Payload,
) -> Response {
    let path = uri.path_and_query().map_or_else(|| uri.path(), axum::http::uri::PathAndQuery::as_str);
    let target = match state.upstream.target(path) {
        Ok(t) => t,
        Err(e) => return e.into_response(),
    };
    let headers = state.upstream.forwarded_headers(headers);
    let answer = match state.upstream.send(method, target, headers, body).await {
        Ok(a) => a,
        Err(e) => return upstream_failure(state, "passthrough", e),
    };
    if !answer.status.is_success() {
        state.metrics.upstream_error("passthrough", answer.status.as_str());
    }
    let mut response = Response::new(answer.response.with_idle_timeout(state.upstream.idle));
    *response.status_mut() = answer.status;
    // No hop-by-hop ones in them (see `Answer::headers`).
    *response.headers_mut() = answer.headers;
    response
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    /// A plain conversation's stand-in is `[null; n]` whether made once or per request.
    #[test]
    fn nulls_are_as_many_as_the_messages() {
        for n in [0, 1, 2, 63, 64, 65, 200] {
            assert_eq!(*super::nulls(n), Value::Array(vec![Value::Null; n]), "{n}");
        }
    }
}
