//! The HTTP front over real sockets: the common request shape answered by the front,
//! everything else handed to the general server with the bytes already read replayed
//! (`expect`, a chunked body, HTTP/1.0, odd lengths), pipelining across the two,
//! smuggling attempts refused, a head that never ends cut off.

#![expect(clippy::unwrap_used, reason = "tests")]

mod common;

use common::{start, start_with};
use serde_json::json;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use toolfix_proxy::fake::Canned;

const PATH: &str = "/v1/chat/completions";

/// A request without tools (passed through): `{"model": MODEL, "messages": []}`.
fn body(model: &str) -> String {
    json!({"model": model, "messages": []}).to_string()
}

/// A plain request: `content-length`, and `extra` header lines.
fn plain(model: &str, extra: &str) -> String {
    let b = body(model);
    format!(
        "POST {PATH} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\n\r\n{b}",
        b.len()
    )
}

/// A request with a chunked body (two chunks).
fn chunked(model: &str, extra: &str) -> String {
    let b = body(model);
    let (first, second) = b.split_at(5);
    format!(
        "POST {PATH} HTTP/1.1\r\nhost: x\r\n{extra}transfer-encoding: chunked\r\n\r\n{:x}\r\n{first}\r\n{:x}\r\n{second}\r\n0\r\n\r\n",
        first.len(),
        second.len()
    )
}

/// Write `bytes` in one go, read until the proxy closes.
async fn exchange(proxy: SocketAddr, bytes: &str) -> String {
    let mut socket = tokio::net::TcpStream::connect(proxy).await.unwrap();
    socket.write_all(bytes.as_bytes()).await.unwrap();
    read_all(&mut socket).await
}

/// Everything until the proxy closes (a reset, when it closes with bytes unread, ends it
/// too).
async fn read_all(socket: &mut tokio::net::TcpStream) -> String {
    let mut answer = Vec::new();
    let mut piece = [0u8; 4096];
    while let Ok(n @ 1..) = socket.read(&mut piece).await {
        answer.extend_from_slice(&piece[..n]);
    }
    String::from_utf8(answer).unwrap()
}

/// The upstream's answer to every request: its model echoed back.
fn echo() -> impl Fn(&toolfix_proxy::fake::Seen) -> Canned + Send + Sync + 'static {
    |seen| Canned::json(&json!({"model": seen.json()["model"], "choices": []}))
}

fn models(h: &common::Harness) -> Vec<String> {
    h.upstream.requests().iter().map(|s| s.json()["model"].as_str().unwrap_or("?").to_owned()).collect()
}

#[tokio::test]
async fn pipelined_requests_are_answered_in_order() {
    let h = start(echo()).await;
    let requests = format!("{}{}{}", plain("m1", ""), plain("m2", ""), plain("m3", "connection: close\r\n"));
    let answer = exchange(h.proxy, &requests).await;
    assert_eq!(answer.matches("HTTP/1.1 200 OK\r\n").count(), 3, "{answer}");
    let at = |m: &str| answer.find(&format!("\"model\":\"{m}\"")).unwrap();
    assert!(at("m1") < at("m2") && at("m2") < at("m3"), "{answer}");
    assert!(answer.contains("connection: close\r\n"), "{answer}");
    assert_eq!(models(&h), ["m1", "m2", "m3"]);
}

#[tokio::test]
async fn a_chunked_request_is_handed_over_mid_connection_with_what_was_read() {
    let h = start(echo()).await;
    // A plain request, then a chunked one in the same write: the second is read by the
    // front, handed over, and read again by the general server.
    let requests = format!("{}{}", plain("m1", ""), chunked("m2", "connection: close\r\n"));
    let answer = exchange(h.proxy, &requests).await;
    assert_eq!(answer.matches("HTTP/1.1 200 OK\r\n").count(), 2, "{answer}");
    assert_eq!(models(&h), ["m1", "m2"]);
    // The upstream got the chunked body whole.
    assert_eq!(h.upstream.requests()[1].body, body("m2"));
}

#[tokio::test]
async fn expect_100_continue_is_answered_by_the_general_server() {
    let h = start(echo()).await;
    let b = body("m1");
    let mut socket = tokio::net::TcpStream::connect(h.proxy).await.unwrap();
    let head = format!(
        "POST {PATH} HTTP/1.1\r\nhost: x\r\nexpect: 100-continue\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
        b.len()
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    let mut interim = vec![0u8; 64];
    let n = socket.read(&mut interim).await.unwrap();
    assert!(String::from_utf8_lossy(&interim[..n]).starts_with("HTTP/1.1 100 Continue"));
    socket.write_all(b.as_bytes()).await.unwrap();
    let answer = read_all(&mut socket).await;
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert_eq!(models(&h), ["m1"]);
}

#[tokio::test]
async fn http_1_0_is_answered_in_http_1_0_and_closed() {
    let h = start(echo()).await;
    let request = plain("m1", "").replacen("HTTP/1.1", "HTTP/1.0", 1);
    let answer = exchange(h.proxy, &request).await;
    assert!(answer.starts_with("HTTP/1.0 200 OK\r\n"), "{answer}");
    assert_eq!(models(&h), ["m1"]);
}

#[tokio::test]
async fn a_head_in_pieces_and_a_body_in_pieces_are_read_whole() {
    let h = start(echo()).await;
    let request = plain("m1", "connection: close\r\n");
    let mut socket = tokio::net::TcpStream::connect(h.proxy).await.unwrap();
    socket.set_nodelay(true).unwrap();
    for piece in request.as_bytes().chunks(7) {
        socket.write_all(piece).await.unwrap();
        socket.flush().await.unwrap();
        tokio::task::yield_now().await;
    }
    let answer = read_all(&mut socket).await;
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert_eq!(models(&h), ["m1"]);
}

#[tokio::test]
async fn answers_carry_a_length_a_date_and_the_upstreams_headers_less_hop_by_hop_ones() {
    let h = start(|_| Canned::status(200, &[("x-upstream", "1"), ("connection", "close")], "{\"choices\": []}")).await;
    let answer = exchange(h.proxy, &plain("m1", "connection: close\r\n")).await;
    let (head, rest) = answer.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(head.contains("\r\nx-upstream: 1\r\n") && head.contains("\r\ndate: "), "{head}");
    assert!(head.contains("\r\ncontent-length: 15"), "{head}");
    assert_eq!(head.matches("connection:").count(), 1, "{head}");
    assert_eq!(rest, "{\"choices\": []}");
}

#[tokio::test]
async fn smuggling_attempts_never_reach_the_upstream_as_a_second_request() {
    let h = start(echo()).await;
    // Both a length and chunked: the general server decides; the "body" that looks
    // like a second request must not become one.
    let hidden = "POST /v1/smuggled HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n";
    let b = body("m1");
    let both = format!(
        "POST {PATH} HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{b}\r\n0\r\n\r\n{hidden}",
        b.len() + 5,
        b.len()
    );
    let answer = exchange(h.proxy, &both).await;
    assert!(!answer.is_empty());
    // Two lengths that disagree, a length that is not a number: 400, nothing sent.
    let twice = format!("POST {PATH} HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\n{{}}");
    let answer = exchange(h.proxy, &twice).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    let signed = format!("POST {PATH} HTTP/1.1\r\nhost: x\r\ncontent-length: +2\r\n\r\n{{}}");
    let answer = exchange(h.proxy, &signed).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(h.upstream.requests().iter().all(|s| !s.path.contains("smuggled")), "{:?}", h.upstream.requests());
    assert!(h.upstream.requests().len() <= 1);
}

#[tokio::test]
async fn a_body_shorter_than_declared_sends_nothing_upstream() {
    let h = start(echo()).await;
    let b = body("m1");
    let request = format!("POST {PATH} HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\n\r\n{b}", b.len() + 10);
    let mut socket = tokio::net::TcpStream::connect(h.proxy).await.unwrap();
    socket.write_all(request.as_bytes()).await.unwrap();
    socket.shutdown().await.unwrap();
    let answer = read_all(&mut socket).await;
    assert!(answer.is_empty(), "{answer}");
    assert!(h.upstream.requests().is_empty());
}

#[tokio::test]
async fn the_key_is_checked_on_both_paths() {
    let h = start_with(echo(), |c| c.api_key = Some("sk-proxy".into())).await;
    // The front: no key, a wrong key, the key.
    let answer = exchange(h.proxy, &plain("m1", "connection: close\r\n")).await;
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    let answer = exchange(h.proxy, &plain("m1", "authorization: Bearer sk-other\r\nconnection: close\r\n")).await;
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    let answer = exchange(h.proxy, &plain("m2", "authorization: Bearer sk-proxy\r\nconnection: close\r\n")).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // The general server (a chunked body): the same.
    let answer = exchange(h.proxy, &chunked("m3", "connection: close\r\n")).await;
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    let answer = exchange(h.proxy, &chunked("m4", "x-api-key: sk-proxy\r\nconnection: close\r\n")).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!(models(&h), ["m2", "m4"]);
}

#[tokio::test]
async fn a_request_without_the_key_is_refused_before_its_body_is_read() {
    let h = start_with(echo(), |c| {
        c.api_key = Some("sk-proxy".into());
        c.timeouts.client_head = Duration::from_millis(300);
    })
    .await;
    // A head announcing a large body, and no body: the refusal comes without waiting for it.
    let mut socket = tokio::net::TcpStream::connect(h.proxy).await.unwrap();
    let head = format!("POST {PATH} HTTP/1.1\r\nhost: x\r\ncontent-length: 1000000\r\n\r\n");
    socket.write_all(head.as_bytes()).await.unwrap();
    let mut first = [0u8; 12];
    tokio::time::timeout(Duration::from_secs(5), socket.read_exact(&mut first)).await.unwrap().unwrap();
    assert_eq!(&first, b"HTTP/1.1 401");
    // Then the connection ends (the body is not waited for past the head timeout).
    let rest = tokio::time::timeout(Duration::from_secs(5), read_all(&mut socket)).await.unwrap();
    assert!(rest.contains("connection: close"), "{rest}");
    assert!(h.upstream.requests().is_empty());
}

#[tokio::test]
async fn a_head_that_never_ends_is_cut_off_on_both_paths() {
    let h = start_with(echo(), |c| c.timeouts.client_head = Duration::from_millis(200)).await;
    // The front's, then the general server's (HTTP/1.0 goes there from its first line).
    for first in [format!("POST {PATH} HTTP/1.1\r\nhost: x\r\n"), format!("POST {PATH} HTTP/1.0\r\nhost: x\r\n")] {
        let mut socket = tokio::net::TcpStream::connect(h.proxy).await.unwrap();
        socket.write_all(first.as_bytes()).await.unwrap();
        // Nothing more comes: past the head timeout the proxy closes (with no answer, or
        // the general server's 408).
        let answer = tokio::time::timeout(Duration::from_secs(20), read_all(&mut socket)).await.unwrap();
        assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 408"), "{answer}");
    }
    assert!(h.upstream.requests().is_empty());
}
