//! A streamed request: the I/O around the adapter's [`StreamFixer`], the same for every
//! API.
//!
//! The status waits for the upstream's first event (an upstream error keeps its status
//! and body). Then frames go out as the fixer releases them, through a bounded channel (a
//! slow client slows the upstream read; a client that leaves cancels the upstream
//! request). When the upstream stream ends, the recovery tail runs (its requests are not
//! streamed) and the fixer writes the closing frames from the answer settled on. A fault
//! (silence past `stream_idle_secs`, a broken connection, an event that is not the API's
//! JSON or is over the size limit, a stream that ends before its reply did) ends the
//! stream with one error event in the API's shape; text held back as possible markup is
//! not sent then.

use super::tail::{self, Ctx};
use super::{Job, failure};
use crate::adapter::{Adapter, Fault, StreamFixer};
use crate::error::ApiError;
use crate::sse;
use crate::upstream::{X_TOOLFIX, classify};
use axum::body::Body;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::{Stream, StreamExt as _};
use std::pin::Pin;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tracing::Instrument as _;

/// Frames buffered between the upstream reader and the client.
const CHANNEL: usize = 8;

type Upstream = Pin<Box<dyn Stream<Item = Result<Bytes, crate::upstream::BodyError>> + Send>>;
type Tx = mpsc::Sender<Result<Bytes, std::io::Error>>;

pub(super) async fn handle<A: Adapter>(job: Job) -> Response {
    let state = job.state.clone();
    let asked = Instant::now();
    let outgoing = job.request.bytes.clone();
    let answer = match state.upstream.post_json(A::PATH, &job.headers, outgoing).await {
        Ok(a) => a,
        Err(e) => return failure::<A>(&state, &e),
    };
    let status = answer.status;
    // No hop-by-hop ones in them (see `Answer::headers`).
    let mut out_headers = answer.headers;
    if !status.is_success() {
        state.metrics.upstream_error(A::API, status.as_str());
        return match state.upstream.read_all(answer.response, state.config.response_limit).await {
            Ok(body) => (status, out_headers, body).into_response(),
            Err(e) => failure::<A>(&state, &e),
        };
    }
    let mut upstream: Upstream = Box::pin(answer.response.bytes_stream());
    // Wait for the first event, so that an early failure is still an HTTP error.
    let mut probe = sse::Parser::new(state.config.response_limit);
    let mut first = Vec::new();
    let deadline = tokio::time::Instant::now() + state.upstream.timeout.saturating_sub(asked.elapsed());
    loop {
        match tokio::time::timeout_at(deadline, upstream.next()).await {
            Err(_) => return failure::<A>(&state, &ApiError::timeout()),
            Ok(None) if first.is_empty() => {
                let e =
                    ApiError::bad_gateway("upstream_empty_stream", "the upstream closed the stream before any event");
                return failure::<A>(&state, &e);
            }
            Ok(None) => break,
            Ok(Some(Err(e))) => return failure::<A>(&state, &classify(&e)),
            Ok(Some(Ok(piece))) => {
                let seen = probe.push(&piece);
                first.push(piece);
                match seen {
                    Err(sse::TooLong) => {
                        let e = ApiError::bad_gateway("upstream_event_too_large", Fault::TooLarge.message());
                        return failure::<A>(&state, &e);
                    }
                    Ok(events) if !events.is_empty() => break,
                    Ok(_) => {}
                }
            }
        }
    }
    let waited = asked.elapsed();
    let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(CHANNEL);
    let span = tracing::Span::current();
    tokio::spawn(run::<A>(job, first, upstream, tx, waited).instrument(span));
    out_headers.insert(X_TOOLFIX.clone(), HeaderValue::from_static("stream; see x_toolfix in the last event"));
    let body = Body::from_stream(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|frame| (frame, rx))
    }));
    (status, out_headers, body).into_response()
}

async fn send(tx: &Tx, frames: Vec<Bytes>) -> bool {
    for f in frames {
        if tx.send(Ok(f)).await.is_err() {
            return false;
        }
    }
    true
}

/// Why the stream stopped early.
struct Broke {
    /// The metric label.
    label: &'static str,
    code: &'static str,
    message: &'static str,
}

impl Broke {
    fn fault(f: Fault) -> Broke {
        Broke { label: "bad_response", code: "upstream_bad_event", message: f.message() }
    }
}

async fn run<A: Adapter>(job: Job, first: Vec<Bytes>, mut upstream: Upstream, tx: Tx, mut waited: Duration) {
    let Job { state, headers, request, tools, mut summary, model, .. } = job;
    let history = request.history::<A>();
    let mut fixer = A::stream(&tools, history.as_deref(), &state.options, state.config.response_limit);
    let mut busy = Duration::ZERO;
    let mut broke = None;
    let mut pieces = first.into_iter();
    while broke.is_none() && !fixer.is_done() {
        let piece = if let Some(p) = pieces.next() {
            p
        } else {
            let t = Instant::now();
            let next = tokio::select! {
                () = tx.closed() => return, // the client left: dropping the upstream body cancels it
                next = tokio::time::timeout(state.upstream.idle, upstream.next()) => next,
            };
            waited += t.elapsed();
            match next {
                Err(_) => {
                    broke = Some(Broke {
                        label: "timeout",
                        code: "upstream_timeout",
                        message: "the upstream stream went silent",
                    });
                    continue;
                }
                Ok(None) => break,
                Ok(Some(Err(_))) => {
                    broke = Some(Broke {
                        label: "stream_broken",
                        code: "upstream_stream_broken",
                        message: "the upstream stream broke",
                    });
                    continue;
                }
                Ok(Some(Ok(piece))) => piece,
            }
        };
        let t = Instant::now();
        let out = fixer.push(&piece);
        busy += t.elapsed();
        match out {
            Ok(frames) => {
                if !send(&tx, frames).await {
                    return;
                }
            }
            Err(f) => broke = Some(Broke::fault(f)),
        }
    }
    drop(upstream);
    if let Some(b) = broke {
        // Nothing held back goes out: it may be the start of a call.
        state.metrics.upstream_error(A::API, b.label);
        let _ = send(&tx, vec![fixer.error_frame(b.code, b.message)]).await;
        return;
    }
    let t = Instant::now();
    let ended = fixer.finish();
    busy += t.elapsed();
    summary.unfixed.extend(fixer.unfixed());
    if ended.errored {
        return; // the upstream's own error event went out
    }
    if !ended.complete {
        state.metrics.upstream_error(A::API, "stream_broken");
        let message = "the upstream stream ended before the reply was complete";
        let _ = send(&tx, vec![fixer.error_frame("upstream_stream_broken", message)]).await;
        return;
    }
    if !send(&tx, ended.frames).await {
        return;
    }
    summary.content_was_reasoning = ended.content_was_reasoning;
    let mut ctx = Ctx { state: &state, headers: &headers, tools: &tools, history: history.as_deref(), waited };
    let settled = tokio::select! {
        () = tx.closed() => return,
        s = tail::settle::<A>(&mut ctx, &request, ended.fixed, &mut summary, &model) => s,
    };
    let t = Instant::now();
    let frames = fixer.closing(&settled.fixed, settled.later, &summary, settled.unusable);
    busy += t.elapsed();
    state.metrics.added_latency(A::API, busy);
    let _ = send(&tx, frames).await;
}
