//! Streaming chat completions (SSE).
//!
//! Text deltas pass through as they arrive (call markup held back by
//! [`ReplyStream`]); an event the proxy does not change goes out byte for byte. Tool calls
//! are held until the reply ends, so a corrective re-prompt is still possible then (no
//! tool-call byte has been sent); they go out fixed, one delta per call (id, type, name and
//! the whole arguments), indices from 0, before the last choice chunk, which carries the
//! `finish_reason` a non-streaming answer would have and the `x_toolfix` report. Usage
//! chunks are held and sent after it, then `[DONE]`.
//!
//! A re-prompt runs non-streaming upstream; its reply goes out as SSE after the text
//! already sent (its own text first, then its calls). When the reply's text turns out to
//! have been reasoning (only a closing `</think>` appeared), the text already sent as
//! content stays sent: the report says `content_was_reasoning`.
//!
//! [`fixer::Fixer`] is the pure core (bytes in, bytes out); [`handle`] is the I/O around it.

mod fixer;
#[cfg(test)]
mod tests;

pub(crate) use fixer::Fixer;

use super::Adapter;
use super::chat::ChatCompletions;
use crate::error::ApiError;
use crate::handlers::{Shared, model_of, upstream_failure};
use crate::recover::{self, Ctx, Fixed};
use crate::sse;
use crate::summary::Summary;
use crate::upstream::{X_TOOLFIX, classify, response_headers};
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::{Stream, StreamExt as _};
use serde_json::{Value, json};
use std::pin::Pin;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use toolfix::ToolSet;
use tracing::Instrument as _;

/// Frames buffered between the upstream reader and the client: a slow client slows the
/// upstream read.
const CHANNEL: usize = 8;

type Upstream = Pin<Box<dyn Stream<Item = Result<Bytes, reqwest::Error>> + Send>>;

/// Answer a streaming request: wait for the upstream's first event (so an upstream error
/// keeps its status), then stream.
pub(crate) async fn handle(
    state: Shared,
    headers: HeaderMap,
    request: Value,
    outgoing: Bytes,
    tools: ToolSet,
    summary: Summary,
    started: Instant,
) -> Response {
    let asked = Instant::now();
    let answer = match state.upstream.post_json(ChatCompletions::PATH, &headers, outgoing).await {
        Ok(a) => a,
        Err(e) => return upstream_failure(&state, e),
    };
    let status = answer.status;
    let mut out_headers = response_headers(&answer.headers);
    if !status.is_success() {
        state.metrics.upstream_error(status.as_str());
        return match state.upstream.read_all(answer.response, state.config.response_limit).await {
            Ok(body) => (status, out_headers, body).into_response(),
            Err(e) => upstream_failure(&state, e),
        };
    }
    let mut upstream: Upstream = Box::pin(answer.response.bytes_stream());
    let mut probe = sse::Parser::new(state.config.response_limit);
    let mut first = Vec::new();
    let deadline = tokio::time::Instant::now() + state.upstream.timeout.saturating_sub(asked.elapsed());
    loop {
        match tokio::time::timeout_at(deadline, upstream.next()).await {
            Err(_) => return upstream_failure(&state, ApiError::timeout()),
            Ok(None) if first.is_empty() => {
                let e =
                    ApiError::bad_gateway("upstream_empty_stream", "the upstream closed the stream before any event");
                return upstream_failure(&state, e);
            }
            Ok(None) => break,
            Ok(Some(Err(e))) => return upstream_failure(&state, classify(e)),
            Ok(Some(Ok(piece))) => {
                let seen = probe.push(&piece);
                first.push(piece);
                match seen {
                    Err(sse::TooLong) => {
                        let e = ApiError::bad_gateway("upstream_event_too_large", "an upstream event is too large");
                        return upstream_failure(&state, e);
                    }
                    Ok(events) if !events.is_empty() => break,
                    Ok(_) => {}
                }
            }
        }
    }
    let waited = asked.elapsed();
    let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(CHANNEL);
    let job = Job { state, headers, request, tools, summary, started, waited };
    let span = tracing::Span::current();
    let pool = job.state.clone();
    pool.streams.spawn(move || job.run(first, upstream, tx).instrument(span));
    out_headers.insert(X_TOOLFIX.clone(), HeaderValue::from_static("stream; see x_toolfix in the last chunk"));
    let body = Body::from_stream(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|frame| (frame, rx))
    }));
    (status, out_headers, body).into_response()
}

/// One stream being answered.
struct Job {
    state: Shared,
    headers: HeaderMap,
    request: Value,
    tools: ToolSet,
    summary: Summary,
    started: Instant,
    waited: Duration,
}

type Tx = mpsc::Sender<Result<Bytes, std::io::Error>>;

async fn send(tx: &Tx, frames: Vec<Bytes>) -> bool {
    for f in frames {
        if tx.send(Ok(f)).await.is_err() {
            return false;
        }
    }
    true
}

impl Job {
    async fn run(self, first: Vec<Bytes>, mut upstream: Upstream, tx: Tx) {
        let Job { state, headers, request, tools, mut summary, started, mut waited } = self;
        let history = ChatCompletions::history(&request);
        let mut fixer = Fixer::new(&tools, history, state.options.clone(), state.config.response_limit);
        let mut busy = Duration::ZERO;
        let mut broke = None;
        for piece in first {
            let t = Instant::now();
            let out = fixer.push(&piece);
            busy += t.elapsed();
            match out {
                Ok(frames) => {
                    if !send(&tx, frames).await {
                        return;
                    }
                }
                Err(sse::TooLong) => broke = Some(("stream_broken", "an upstream event is too large")),
            }
        }
        while broke.is_none() && !fixer.done {
            let t = Instant::now();
            let next = tokio::select! {
                () = tx.closed() => return, // the client left: dropping the upstream body cancels it
                next = tokio::time::timeout(state.upstream.idle, upstream.next()) => next,
            };
            waited += t.elapsed();
            match next {
                Err(_) => broke = Some(("timeout", "the upstream stream went silent")),
                Ok(None) => break,
                Ok(Some(Err(_))) => broke = Some(("stream_broken", "the upstream stream broke")),
                Ok(Some(Ok(piece))) => {
                    let t = Instant::now();
                    let out = fixer.push(&piece);
                    busy += t.elapsed();
                    match out {
                        Ok(frames) => {
                            if !send(&tx, frames).await {
                                return;
                            }
                        }
                        Err(sse::TooLong) => broke = Some(("stream_broken", "an upstream event is too large")),
                    }
                }
            }
        }
        drop(upstream);
        summary.unfixed.extend(fixer.unfixed().iter().cloned());
        let t = Instant::now();
        let ended = fixer.finish();
        busy += t.elapsed();
        if !send(&tx, ended.text).await {
            return;
        }
        if let Some((label, message)) = broke.or((!ended.complete && !ended.errored)
            .then_some(("stream_broken", "the upstream stream ended before the reply was complete")))
        {
            state.metrics.upstream_error(label);
            let _ = send(&tx, vec![error_frame(message)]).await;
            return;
        }
        if !ended.complete {
            return; // the upstream's own error event went out
        }
        summary.content_was_reasoning = ended.content_was_reasoning;
        let mut ctx = Ctx { state: &state, headers: &headers, tools: &tools, history, waited };
        let first = Fixed { response: ended.response, bytes: None, replies: ended.fixed };
        let answer = tokio::select! {
            () = tx.closed() => return,
            a = recover::recover::<ChatCompletions>(&mut ctx, &request, first, &mut summary) => a,
        };
        let late = recover::answered_late(&summary);
        let model = model_of(&answer.response, &request);
        for (i, f) in answer.replies.iter().enumerate() {
            if let Some(f) = f {
                summary.calls(i, f, late, &state.metrics, &model);
            }
        }
        let t = Instant::now();
        let frames = ended.closing.frames(&answer, late, &summary);
        busy += t.elapsed();
        let _ = started;
        state.metrics.added_latency(busy);
        let _ = send(&tx, frames).await;
    }
}

/// An SSE error event, as OpenAI sends them (the SDK raises it).
fn error_frame(message: &str) -> Bytes {
    let body = json!({"error": {"message": message, "type": "upstream_error", "code": "upstream_stream_broken"}});
    sse::frame(&body.to_string())
}
