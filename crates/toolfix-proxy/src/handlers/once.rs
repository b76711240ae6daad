//! A non-streamed request: forward, fix the answer, recover upstream when a call cannot be
//! used, answer. An answer the proxy does not change goes out as the upstream's bytes,
//! read without being built into a value.

use super::tail::{self, Ctx, Settled};
use super::{Job, failure};
use crate::adapter::{Adapter, Fixed, spliced};
use crate::summary::Summary;
use crate::upstream::X_TOOLFIX;
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use serde_json::Value;
use std::time::{Duration, Instant};
use toolfix::ReplyOutcome;

pub(super) async fn handle<A: Adapter>(job: Job) -> Response {
    let Job { state, headers, request, tools, mut summary, started, model } = job;
    let history = request.history::<A>();
    let mut ctx =
        Ctx { state: &state, headers: &headers, tools: &tools, history: history.as_deref(), waited: Duration::ZERO };
    let asked = Instant::now();
    let answer = match state.upstream.post_json(A::PATH, &headers, request.bytes.clone()).await {
        Ok(a) => a,
        Err(e) => return failure::<A>(&state, &e),
    };
    let status = answer.status;
    // The upstream's headers (no hop-by-hop ones: see `Answer::headers`), moved.
    let mut upstream_headers = answer.headers;
    let body = match state.upstream.read_all(answer.response, state.config.response_limit).await {
        Ok(b) => b,
        Err(e) => return failure::<A>(&state, &e),
    };
    ctx.waited += asked.elapsed();
    if !status.is_success() {
        state.metrics.upstream_error(A::API, status.as_str());
        return bytes_answer(status, upstream_headers, body);
    }
    // Fix each reply from a borrowed read of the body.
    let mut unfixed = Vec::new();
    let Some(lazy) = A::fix_body(&body, &mut |reply| ctx.fix_one(reply, &mut unfixed)) else {
        // Not this API's JSON: nothing to fix; given back as it came.
        return bytes_answer(status, upstream_headers, body);
    };
    summary.unfixed = unfixed;
    let settled = lazy.replies.iter().all(|f| f.as_ref().is_none_or(|f| f.outcome() != ReplyOutcome::Refused));
    if !lazy.read.changed && settled {
        // Left alone: the upstream's bytes (no report in them: the calls are counted only).
        for f in lazy.replies.iter().flatten() {
            summary.count_calls(A::API, f, false, &state.metrics, &model);
        }
        upstream_headers.insert(X_TOOLFIX.clone(), summary.header());
        state.metrics.added_latency(A::API, started.elapsed().saturating_sub(ctx.waited));
        return bytes_answer(status, upstream_headers, body);
    }
    // Nothing to recover and no detail to report: the body is written back without being
    // built, when the adapter can.
    let mut read = lazy.read;
    let first = if read.edits.is_some() && settled && !state.config.detail {
        Fixed { response: Value::Null, bytes: Some(body), replies: lazy.replies, read: Some(read) }
    } else {
        read.edits = None;
        let Ok(response) = serde_json::from_slice::<Value>(&body) else {
            return bytes_answer(status, upstream_headers, body);
        };
        Fixed { response, bytes: Some(body), replies: lazy.replies, read: Some(read) }
    };
    let settled = tail::settle::<A>(&mut ctx, &request, first, &mut summary, &model).await;
    let response = respond::<A>(settled, &summary, status, upstream_headers);
    state.metrics.added_latency(A::API, started.elapsed().saturating_sub(ctx.waited));
    response
}

/// The answer: the upstream's bytes when nothing changed, else the fixed response with
/// its report.
fn respond<A: Adapter>(settled: Settled, summary: &Summary, status: StatusCode, mut headers: HeaderMap) -> Response {
    let Settled { fixed, later, unusable } = settled;
    headers.insert(X_TOOLFIX.clone(), summary.header());
    // The first read knows whether its body changes (a later attempt's is not read so).
    let changed = later
        || summary.gave_up()
        || fixed.read.as_ref().is_some_and(|r| r.changed)
        || fixed.replies.iter().enumerate().any(|(i, f)| f.as_ref().is_some_and(|f| A::changes(&fixed.response, i, f)));
    let size_hint = fixed.bytes.as_ref().map_or(0, Bytes::len);
    if !changed && let Some(bytes) = fixed.bytes {
        return bytes_answer(status, headers, bytes);
    }
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let mut response = fixed.response;
    if let Some(edits) = fixed.read.and_then(|r| r.edits) {
        let bytes = fixed.bytes.unwrap_or_default();
        if let Some(body) = spliced(&bytes, edits, &summary.to_json()) {
            return bytes_answer(status, headers, body);
        }
        // Not a body the edits fit: built after all.
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(v) => response = v,
            Err(_) => return bytes_answer(status, headers, bytes),
        }
    }
    for (i, f) in fixed.replies.iter().enumerate() {
        if let Some(f) = f {
            A::apply(&mut response, i, f, unusable);
        }
    }
    A::report(&mut response, summary.to_value());
    let mut body = Vec::with_capacity(size_hint + 1024);
    crate::adapter::compact::write(&mut body, &response);
    bytes_answer(status, headers, body)
}

/// `(status, headers, body).into_response()` with the map moved in whole: axum's
/// conversion starts from a map holding only `content-type: application/octet-stream` and
/// extends it with `headers` header by header (an upstream `content-type` replaces the
/// default, every other header is added), so the answer holds `headers`' fields, and that
/// `content-type` only when `headers` has none. Here the map is kept in the upstream's
/// order and the default put after it (the order of different fields carries no meaning
/// in HTTP), without hashing and inserting every header again. `B`: bytes, which axum
/// answers so.
fn bytes_answer<B: Into<Body>>(status: StatusCode, mut headers: HeaderMap, body: B) -> Response {
    if !headers.contains_key(header::CONTENT_TYPE) {
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"));
    }
    let mut response = Response::new(body.into());
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::response::IntoResponse;

    /// Status, every header value by name (in the order of its values) and body of an answer.
    async fn parts(response: Response) -> (StatusCode, Vec<(String, Vec<Vec<u8>>)>, Vec<u8>) {
        let status = response.status();
        let mut names: Vec<String> = response.headers().keys().map(|k| k.as_str().to_owned()).collect();
        names.sort();
        let headers = names
            .into_iter()
            .map(|n| {
                let values = response.headers().get_all(&n).iter().map(|v| v.as_bytes().to_vec()).collect();
                (n, values)
            })
            .collect();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap_or_default();
        (status, headers, body.to_vec())
    }

    fn map(fields: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in fields {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    /// The answer holds the same fields as axum's conversion's, whatever the upstream's
    /// order: a `date`-first map (as uvicorn sends), a `content-type`-first one (the fake
    /// upstream's), none, and repeated fields.
    #[tokio::test]
    async fn bytes_answer_holds_what_axums_conversion_does() {
        let maps = [
            map(&[
                ("date", "Fri, 27 Nov 2026 21:00:00 GMT"),
                ("server", "uvicorn"),
                ("content-length", "5"),
                ("content-type", "application/json"),
            ]),
            map(&[("content-type", "application/json"), ("x-request-id", "a")]),
            map(&[("date", "Fri, 27 Nov 2026 21:00:00 GMT"), ("server", "uvicorn")]),
            map(&[]),
            map(&[("set-cookie", "a=1"), ("content-type", "text/plain"), ("set-cookie", "b=2")]),
        ];
        for headers in maps {
            for status in [StatusCode::OK, StatusCode::BAD_GATEWAY] {
                let body = Bytes::from_static(b"{\"a\"}");
                let ours = parts(bytes_answer(status, headers.clone(), body.clone())).await;
                let axums = parts((status, headers.clone(), body).into_response()).await;
                assert_eq!(ours, axums, "{headers:?}");
                let first = bytes_answer(status, headers.clone(), b"x".to_vec());
                let names: Vec<_> = first.headers().keys().filter(|k| *k != header::CONTENT_TYPE).collect();
                let upstream: Vec<_> = headers.keys().filter(|k| *k != header::CONTENT_TYPE).collect();
                assert_eq!(names, upstream, "the upstream's order is kept");
            }
        }
    }
}
