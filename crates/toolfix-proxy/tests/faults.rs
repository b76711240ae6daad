//! Faults and bad input: upstream errors keep their status (also one sent before the
//! upstream read the request body, which it then left unread), an unreachable or silent
//! upstream is a 502 or 504, a broken stream ends with an error event, oversize and
//! malformed requests are refused, a client that leaves cancels the upstream request,
//! shutdown drains, the API key guards the proxy.

#![expect(clippy::unwrap_used, reason = "tests")]

mod common;

use bytes::Bytes;
use common::{ask, proxy_for, start, start_with};
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use toolfix_proxy::Config;
use toolfix_proxy::fake::{Canned, FakeUpstream, content_chunks, sse_events};

fn error_of(body: &[u8]) -> Value {
    let v: Value = serde_json::from_slice(body).unwrap();
    let e = v["error"].clone();
    assert!(e["message"].is_string() && e["type"].is_string() && e["code"].is_string(), "{v}");
    e
}

#[tokio::test]
async fn an_upstream_error_keeps_its_status_body_and_retry_after() {
    let body = "{\"error\": {\"message\": \"overloaded\", \"type\": \"server_error\"}}";
    let h = start(move |_| Canned::status(503, &[("retry-after", "7")], body)).await;
    for stream in [false, true] {
        let mut req = ask("x");
        req["stream"] = json!(stream);
        let (status, headers, got) = h.post_bytes("/v1/chat/completions", req.to_string()).await;
        assert_eq!(status, 503);
        assert_eq!(headers["retry-after"], "7");
        assert_eq!(got, body.as_bytes());
    }
    let metrics = h.client.get(h.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("toolfix_upstream_errors_total{api=\"chat\",status=\"503\"} 2"), "{metrics}");
}

#[tokio::test]
async fn an_unreachable_upstream_is_a_502() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port();
    drop(free);
    let upstream = FakeUpstream::start("127.0.0.1:0", |_| Canned::Hang).await.unwrap();
    let config = Config::new(&format!("http://127.0.0.1:{port}/v1")).unwrap();
    let h = proxy_for(upstream, config).await;
    for (path, body) in [("/v1/chat/completions", ask("x").to_string()), ("/v1/embeddings", "{}".to_owned())] {
        let (status, _, got) = h.post_bytes(path, body).await;
        assert_eq!(status, 502);
        assert_eq!(error_of(&got)["code"], "upstream_unreachable");
    }
}

#[tokio::test]
async fn a_silent_upstream_is_a_504_and_the_request_is_cancelled() {
    let h = start_with(|_| Canned::Hang, |c| c.timeouts.request = Duration::from_millis(200)).await;
    let (status, _, got) = h.post_bytes("/v1/chat/completions", ask("x").to_string()).await;
    assert_eq!(status, 504);
    assert_eq!(error_of(&got)["code"], "upstream_timeout");
    h.upstream.wait_cancellations(1).await;
}

#[tokio::test]
async fn a_stream_that_breaks_ends_with_an_error_event() {
    let mut pieces = sse_events(&content_chunks(&["Hello ", "there"], "stop"));
    pieces.truncate(2); // the role chunk and one content chunk, then the connection breaks
    let gate = Arc::new(tokio::sync::Notify::new());
    let open = gate.clone();
    let h = start(move |_| Canned::SseThenBreak(pieces.clone(), Some(gate.clone()))).await;
    let mut req = ask("x");
    req["stream"] = json!(true);
    let r = h.client.post(h.url("/v1/chat/completions")).body(req.to_string()).send().await.unwrap();
    assert_eq!(r.status(), 200);
    open.notify_one();
    let seen = common::assemble(&r.bytes().await.unwrap());
    assert_eq!(seen.error.unwrap()["code"], "upstream_stream_broken");
    assert!(!seen.done);
    assert!(seen.calls.is_empty());
}

#[tokio::test]
async fn a_stream_that_goes_silent_ends_with_an_error_event() {
    let pieces = sse_events(&content_chunks(&["Hello"], "stop"))[..1].to_vec();
    let h = start_with(
        move |_| Canned::SseThenHang(pieces.clone()),
        |c| {
            c.timeouts.stream_idle = Duration::from_millis(200);
        },
    )
    .await;
    let (_, _, seen) = h.stream(&ask("x")).await;
    assert!(seen.error.unwrap()["message"].as_str().unwrap().contains("silent"));
    h.upstream.wait_cancellations(1).await;
}

#[tokio::test]
async fn a_stream_closed_before_its_first_event_is_a_502() {
    let h = start(|_| Canned::Sse(Vec::new())).await;
    let (status, _, got) = h
        .post_bytes(
            "/v1/chat/completions",
            json!({"stream": true, "tools": common::tools(), "messages": []}).to_string(),
        )
        .await;
    assert_eq!(status, 502);
    assert_eq!(error_of(&got)["code"], "upstream_empty_stream");
}

#[tokio::test]
async fn a_body_over_the_limit_is_a_413_before_it_is_read() {
    let h = start_with(|_| Canned::status(200, &[], "{}"), |c| c.body_limit = 1000).await;
    for path in ["/v1/chat/completions", "/v1/embeddings"] {
        // Declared too long: refused with most of the body never sent.
        let mut socket = tokio::net::TcpStream::connect(h.proxy).await.unwrap();
        let head = format!(
            "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 10000000\r\n\r\n{{\"a\":"
        );
        socket.write_all(head.as_bytes()).await.unwrap();
        let mut answer = vec![0u8; 4096];
        let n = socket.read(&mut answer).await.unwrap();
        let answer = String::from_utf8_lossy(&answer[..n]);
        assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    }
    // Chunked (no declared length), growing past the limit.
    let big = Bytes::from(vec![b' '; 5000]);
    let chunks = futures_util::stream::iter((0..4).map(move |_| Ok::<_, std::io::Error>(big.clone())));
    let r = h.client.post(h.url("/v1/chat/completions")).body(reqwest::Body::wrap_stream(chunks)).send().await.unwrap();
    assert_eq!(r.status(), 413);
    assert_eq!(error_of(&r.bytes().await.unwrap())["code"], "request_too_large");
    assert!(h.upstream.requests().is_empty());
}

#[tokio::test]
async fn malformed_json_is_a_400_that_names_the_problem() {
    let h = start(|_| Canned::status(200, &[], "{}")).await;
    let (status, _, got) = h.post_bytes("/v1/chat/completions", "{\"model\": \"m\", \"messages\": [}").await;
    assert_eq!(status, 400);
    let e = error_of(&got);
    assert_eq!(e["type"], "invalid_request_error");
    let m = e["message"].as_str().unwrap();
    assert!(m.contains("not valid JSON") && m.contains("line 1 column"), "{m}");
    let (status, _, _) = h.post_bytes("/v1/chat/completions", "[1, 2]").await;
    assert_eq!(status, 400);
    assert!(h.upstream.requests().is_empty());
}

/// Send a request on a raw socket and leave once the upstream has it.
async fn leave_after_upstream_has_it(h: &common::Harness, body: &Value, read_first: bool) {
    let mut socket = tokio::net::TcpStream::connect(h.proxy).await.unwrap();
    let body = body.to_string();
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    socket.write_all(body.as_bytes()).await.unwrap();
    h.upstream.wait_requests(1).await;
    if read_first {
        let mut buf = vec![0u8; 1024];
        let n = socket.read(&mut buf).await.unwrap();
        assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    }
    drop(socket);
}

#[tokio::test]
async fn a_client_that_leaves_cancels_the_upstream_request() {
    let h = start(|_| Canned::Hang).await;
    leave_after_upstream_has_it(&h, &ask("x"), false).await;
    h.upstream.wait_cancellations(1).await;
    let h = start(|_| Canned::Hang).await;
    leave_after_upstream_has_it(&h, &json!({"model": "m", "messages": []}), false).await;
    h.upstream.wait_cancellations(1).await;
}

#[tokio::test]
async fn a_client_that_leaves_a_stream_cancels_the_upstream_stream() {
    let pieces = sse_events(&content_chunks(&["Hello"], "stop"))[..2].to_vec();
    let h = start(move |_| Canned::SseThenHang(pieces.clone())).await;
    let mut req = ask("x");
    req["stream"] = json!(true);
    leave_after_upstream_has_it(&h, &req, true).await;
    h.upstream.wait_cancellations(1).await;
}

#[tokio::test]
async fn shutdown_drains_requests_in_flight() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let open = gate.clone();
    let answer = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "done"}, "finish_reason": "stop"}]});
    let h = start(move |_| Canned::Gated(gate.clone(), Box::new(Canned::json(&answer)))).await;
    let client = h.client.clone();
    let url = h.url("/v1/chat/completions");
    let pending = tokio::spawn(async move {
        let r = client.post(url).body(ask("x").to_string()).send().await.unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    });
    h.upstream.wait_requests(1).await;
    let proxy = h.proxy;
    let upstream_gate = open.clone();
    let drained = tokio::spawn(h.shutdown());
    upstream_gate.notify_one();
    let (status, body) = pending.await.unwrap();
    assert_eq!(status, 200);
    assert!(body.contains("done"));
    drained.await.unwrap();
    assert!(tokio::net::TcpStream::connect(proxy).await.is_err());
}

#[tokio::test]
async fn the_api_key_guards_the_proxy_and_stays_here() {
    let h = start_with(
        |_| Canned::status(200, &[], "{\"data\": []}"),
        |c| {
            c.api_key = Some("proxy-key".into());
            c.upstream_api_key = Some("upstream-key".into());
        },
    )
    .await;
    let r = h.client.get(h.url("/v1/models")).send().await.unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(error_of(&r.bytes().await.unwrap())["code"], "invalid_api_key");
    let r = h.client.get(h.url("/v1/models")).bearer_auth("wrong").send().await.unwrap();
    assert_eq!(r.status(), 401);
    let r = h.client.get(h.url("/v1/models")).bearer_auth("proxy-key").send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(h.upstream.requests()[0].headers["authorization"], "Bearer upstream-key");
    assert_eq!(h.client.get(h.url("/healthz")).send().await.unwrap().status(), 200);
}

#[tokio::test]
async fn listening_beyond_loopback_needs_a_key_or_an_explicit_yes() {
    let mut config = Config::new("http://127.0.0.1:1/v1").unwrap();
    config.listen = "0.0.0.0:0".parse().unwrap();
    let err = toolfix_proxy::app(config.clone()).unwrap_err();
    assert!(err.to_string().contains("--api-key"), "{err}");
    config.allow_remote = true;
    assert!(toolfix_proxy::app(config).is_ok());
}

#[tokio::test]
async fn a_malformed_upstream_event_ends_the_stream_with_an_error_event() {
    for bad in ["data: {\"choices\": [{\"delta\": {\"content\": \"x\"\n\n", "data: garbage\n\n"] {
        let mut pieces = sse_events(&content_chunks(&["Hello"], "stop"));
        pieces.insert(2, Bytes::from(bad));
        let h = start(move |_| Canned::Sse(pieces.clone())).await;
        let (status, _, seen) = h.stream(&ask("x")).await;
        assert_eq!(status, 200);
        assert_eq!(seen.content, "Hello");
        assert_eq!(seen.error.unwrap()["code"], "upstream_bad_event", "{bad}");
        assert!(!seen.done);
        // The proxy stays healthy.
        assert_eq!(h.client.get(h.url("/healthz")).send().await.unwrap().status(), 200);
    }
}

#[tokio::test]
async fn text_held_as_possible_markup_is_not_flushed_before_the_error_event() {
    let mut pieces = sse_events(&content_chunks(&["Checking ", "<tool_call>{\"name\": "], "stop"));
    pieces.truncate(3);
    for end in ["break", "silence"] {
        let pieces = pieces.clone();
        let gate = Arc::new(tokio::sync::Notify::new());
        let open = gate.clone();
        let h = start_with(
            move |_| {
                if end == "break" {
                    Canned::SseThenBreak(pieces.clone(), Some(gate.clone()))
                } else {
                    Canned::SseThenHang(pieces.clone())
                }
            },
            |c| c.timeouts.stream_idle = Duration::from_millis(if end == "break" { 60_000 } else { 300 }),
        )
        .await;
        let mut req = ask("x");
        req["stream"] = json!(true);
        let r = h.client.post(h.url("/v1/chat/completions")).body(req.to_string()).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let mut stream = r.bytes_stream();
        let mut body = Vec::new();
        // The text before the markup arrives; then the upstream breaks (or goes silent).
        while common::assemble(&body[..body.windows(2).rposition(|w| w == b"\n\n").map_or(0, |i| i + 2)]).content
            != "Checking "
        {
            let Some(piece) = stream.next().await else { panic!("{end}: {}", String::from_utf8_lossy(&body)) };
            body.extend_from_slice(&piece.unwrap());
        }
        open.notify_one();
        while let Some(piece) = stream.next().await {
            body.extend_from_slice(&piece.unwrap());
        }
        let text = String::from_utf8_lossy(&body);
        assert!(!text.contains("tool_call"), "{end}: {text}");
        let seen = common::assemble(&body);
        assert_eq!(seen.content, "Checking ", "{end}");
        assert!(seen.error.is_some(), "{end}");
        assert_eq!(text.matches("\"error\"").count(), 1, "{end}: one error event");
    }
}

/// A long answer of `size` bytes of prose in events of `piece` bytes.
fn long_chunks(size: usize, piece: usize) -> (String, Vec<Value>) {
    let line = "All work and no play makes a long answer. ";
    let text: String = line.repeat(size / line.len() + 1)[..size].to_owned();
    let pieces: Vec<&str> = text.as_bytes().chunks(piece).map(|c| std::str::from_utf8(c).unwrap()).collect();
    let chunks = content_chunks(&pieces, "stop");
    (text, chunks)
}

#[tokio::test]
async fn long_answers_pass_intact_or_end_with_an_error_streamed_and_not() {
    for mib in [16usize, 64] {
        let (text, chunks) = long_chunks(mib << 20, 256 << 10);
        let body = toolfix_proxy::fake::completion(&json!({"role": "assistant", "content": text}), "stop");
        let whole = Canned::json(&body);
        let streamed = Canned::sse(&chunks);
        let h = start(move |seen| if seen.json()["stream"] == true { streamed.clone() } else { whole.clone() }).await;
        // Not streamed: under the response limit (64 MiB) the bytes pass intact; over it,
        // a 502 that says so.
        let (status, _, got) = h.post_bytes("/v1/chat/completions", ask("x").to_string()).await;
        if mib < 64 {
            assert_eq!(status, 200);
            let got: Value = serde_json::from_slice(&got).unwrap();
            assert_eq!(got["choices"][0]["message"]["content"].as_str().unwrap().len(), text.len());
        } else {
            assert_eq!(status, 502);
            assert_eq!(error_of(&got)["code"], "upstream_response_too_large");
        }
        // Streamed: past the fixer's cap the rest passes through; nothing is lost.
        let (status, _, seen) = h.stream(&ask("x")).await;
        assert_eq!(status, 200);
        assert!(seen.error.is_none());
        assert_eq!(seen.content.len(), text.len(), "{mib} MiB streamed");
        assert!(seen.content == text, "{mib} MiB streamed: altered");
        assert!(seen.done);
        assert!(seen.report["unfixed"].is_array(), "{}", seen.report);
    }
}

#[tokio::test]
async fn an_upstream_event_over_the_limit_ends_the_stream_with_an_error() {
    let (_, chunks) = long_chunks(64 << 10, 32 << 10);
    let canned = Canned::sse(&chunks);
    let h = start_with(move |_| canned.clone(), |c| c.response_limit = 16 << 10).await;
    let (status, _, got) = h
        .post_bytes("/v1/chat/completions", {
            let mut r = ask("x");
            r["stream"] = json!(true);
            r.to_string()
        })
        .await;
    // The first event is small: the stream starts, then ends with an error event.
    assert_eq!(status, 200);
    let seen = common::assemble(&got);
    assert_eq!(seen.error.unwrap()["code"], "upstream_bad_event");
}

#[tokio::test]
async fn an_upstream_that_refuses_a_large_body_before_reading_it_is_heard() {
    // An upstream (or a reverse proxy before it) that answers 413 as soon as it has the
    // request's head and closes without reading the body: the client gets that answer as
    // the upstream sent it (an OpenAI error, passed on as every upstream error is), not a
    // 502.
    let error = "{\"error\":{\"message\":\"the request is too large for this server\",\
                 \"type\":\"invalid_request_error\",\"code\":\"request_too_large\"}}";
    // A small receive buffer (inherited by the accepted connections), so that the body
    // cannot all go into the kernel's buffers over loopback: writing it fails once the
    // upstream closed.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(16).unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                let mut got = Vec::new();
                let mut buf = [0u8; 4096];
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                }
                let answer = format!(
                    "HTTP/1.1 413 Payload Too Large\r\ncontent-type: application/json\r\n\
                     content-length: {}\r\nconnection: close\r\n\r\n{error}",
                    error.len()
                );
                socket.write_all(answer.as_bytes()).await.unwrap();
            });
        }
    });
    let unused = FakeUpstream::start("127.0.0.1:0", |_| Canned::Hang).await.unwrap();
    let h = proxy_for(unused, Config::new(&url).unwrap()).await;
    // 1 MiB is a long agent prompt; over loopback it all fits in the kernel's send buffer
    // (about 2.5 MiB with loopback's 64 KiB segments), so writing it succeeds before the
    // upstream closes. 8 MiB does not fit: writing it fails, and the answer is read then.
    for (size, stream) in [(1 << 20, false), (1 << 20, true), (8 << 20, false), (8 << 20, true)] {
        let mut req = ask(&"long history ".repeat(size / 13));
        req["stream"] = json!(stream);
        let (status, headers, got) = h.post_bytes("/v1/chat/completions", req.to_string()).await;
        assert_eq!(status, 413, "{}", String::from_utf8_lossy(&got));
        assert_eq!(headers["content-type"], "application/json");
        assert_eq!(got, error.as_bytes());
        assert_eq!(error_of(&got)["code"], "request_too_large");
    }
}
