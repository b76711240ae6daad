//! A scripted upstream for tests, demos and benchmarks: an OpenAI-style server on
//! loopback that answers each request with what a script returns — JSON, SSE sent in given
//! pieces, a stream that breaks or hangs — and records what it received and which
//! requests were cancelled.
//!
//! [`demo`] is the script of the README walkthrough: a model that leaks a Hermes-style
//! call into `content` with an integer written as a string.
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! use toolfix_proxy::fake::{FakeUpstream, demo};
//! let upstream = FakeUpstream::start("127.0.0.1:0", demo).await?;
//! println!("fake upstream at {}", upstream.url());
//! # Ok(()) }
//! ```

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

/// What the fake upstream answers.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Canned {
    /// A whole body with a status and extra headers.
    Body {
        /// The HTTP status.
        status: u16,
        /// Extra headers (`content-type` is `application/json` unless given).
        headers: Vec<(String, String)>,
        /// The body.
        body: Bytes,
    },
    /// An SSE body sent in these pieces, one write each.
    Sse(Vec<Bytes>),
    /// These SSE pieces, then the connection breaks (once the gate is opened, when
    /// there is one).
    SseThenBreak(Vec<Bytes>, Option<Arc<Notify>>),
    /// These SSE pieces, then nothing, until the client goes away.
    SseThenHang(Vec<Bytes>),
    /// These SSE pieces, then a pause until the gate is opened, then the rest (a server
    /// that stalls mid-answer: prefill, a slow token).
    SsePaused(Vec<Bytes>, Arc<Notify>, Vec<Bytes>),
    /// These SSE pieces, one every `interval` (a server generating tokens).
    SsePaced(Vec<Bytes>, std::time::Duration),
    /// No answer at all, until the client goes away.
    Hang,
    /// This answer, once the gate is opened (`Notify::notify_one`).
    Gated(Arc<Notify>, Box<Canned>),
}

impl Canned {
    /// A 200 JSON answer.
    #[must_use]
    pub fn json(body: &Value) -> Canned {
        Canned::Body { status: 200, headers: Vec::new(), body: Bytes::from(body.to_string()) }
    }

    /// An answer with this status, headers and body.
    #[must_use]
    pub fn status(status: u16, headers: &[(&str, &str)], body: &str) -> Canned {
        Canned::Body {
            status,
            headers: headers.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
            body: Bytes::from(body.to_owned()),
        }
    }

    /// An SSE answer: one `data:` event per chunk, then `[DONE]`, sent in one piece per
    /// event.
    #[must_use]
    pub fn sse(chunks: &[Value]) -> Canned {
        Canned::Sse(sse_events(chunks))
    }
}

/// The SSE events for these chunks, `[DONE]` last.
#[must_use]
pub fn sse_events(chunks: &[Value]) -> Vec<Bytes> {
    let mut out: Vec<Bytes> = chunks.iter().map(|c| Bytes::from(format!("data: {c}\n\n"))).collect();
    out.push(Bytes::from_static(b"data: [DONE]\n\n"));
    out
}

/// A request the fake upstream received.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Seen {
    /// The method.
    pub method: Method,
    /// The path and query.
    pub path: String,
    /// The headers.
    pub headers: HeaderMap,
    /// The body, as received.
    pub body: Bytes,
}

impl Seen {
    /// The body as JSON (`null` when it is not).
    #[must_use]
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

type Script = dyn Fn(&Seen) -> Canned + Send + Sync;

struct Shared {
    script: Box<Script>,
    seen: Mutex<Vec<Seen>>,
    cancelled: AtomicUsize,
    notify: Notify,
}

/// A running fake upstream; stops when dropped.
pub struct FakeUpstream {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for FakeUpstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeUpstream").field("addr", &self.addr).finish_non_exhaustive()
    }
}

impl Drop for FakeUpstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeUpstream {
    /// Listen on `addr` (`127.0.0.1:0` for any free port) and answer with `script`.
    ///
    /// # Errors
    ///
    /// When the address cannot be bound.
    pub async fn start(
        addr: &str,
        script: impl Fn(&Seen) -> Canned + Send + Sync + 'static,
    ) -> std::io::Result<FakeUpstream> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            script: Box::new(script),
            seen: Mutex::new(Vec::new()),
            cancelled: AtomicUsize::new(0),
            notify: Notify::new(),
        });
        let app = Router::new().fallback(answer).with_state(shared.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(FakeUpstream { addr, shared, task })
    }

    /// The base URL to give the proxy: `http://ADDR/v1`.
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The address listened on.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in order.
    #[must_use]
    pub fn requests(&self) -> Vec<Seen> {
        self.shared.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// How many answers were cancelled: the client went away while the answer was
    /// pending or streaming.
    #[must_use]
    pub fn cancellations(&self) -> usize {
        self.shared.cancelled.load(Ordering::SeqCst)
    }

    /// Wait until at least `n` requests arrived.
    pub async fn wait_requests(&self, n: usize) {
        loop {
            let notified = self.shared.notify.notified();
            if self.requests().len() >= n {
                return;
            }
            notified.await;
        }
    }

    /// Wait until at least `n` answers were cancelled.
    pub async fn wait_cancellations(&self, n: usize) {
        loop {
            let notified = self.shared.notify.notified();
            if self.cancellations() >= n {
                return;
            }
            notified.await;
        }
    }
}

/// Counts a cancellation when dropped before `done`.
struct Guard {
    shared: Arc<Shared>,
    done: bool,
}

impl Guard {
    /// The answer was sent whole: not a cancellation.
    fn finish(mut self) {
        self.done = true;
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if !self.done {
            self.shared.cancelled.fetch_add(1, Ordering::SeqCst);
            self.shared.notify.notify_waiters();
        }
    }
}

async fn answer(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, 64 << 20).await.unwrap_or_default();
    let seen = Seen {
        method: parts.method,
        path: parts.uri.path_and_query().map_or_else(|| parts.uri.path().to_owned(), |p| p.as_str().to_owned()),
        headers: parts.headers,
        body,
    };
    let mut canned = (shared.script)(&seen);
    if let Ok(mut s) = shared.seen.lock() {
        s.push(seen);
    }
    shared.notify.notify_waiters();
    if let Canned::Gated(gate, then) = canned {
        let guard = Guard { shared: shared.clone(), done: false };
        gate.notified().await;
        let mut guard = guard;
        guard.done = true;
        canned = *then;
    }
    let sse = |body: Body| {
        let mut r = (StatusCode::OK, body).into_response();
        r.headers_mut().insert("content-type", axum::http::HeaderValue::from_static("text/event-stream"));
        r
    };
    match canned {
        Canned::Body { status, headers, body } => {
            let mut r = (StatusCode::from_u16(status).unwrap_or(StatusCode::OK), body).into_response();
            r.headers_mut().insert("content-type", axum::http::HeaderValue::from_static("application/json"));
            for (k, v) in headers {
                if let (Ok(k), Ok(v)) =
                    (axum::http::HeaderName::try_from(k.as_str()), axum::http::HeaderValue::try_from(v.as_str()))
                {
                    r.headers_mut().insert(k, v);
                }
            }
            r
        }
        Canned::Sse(pieces) => sse(Body::from_stream(pieces_stream(pieces, End::Finish, shared))),
        Canned::SseThenBreak(pieces, gate) => sse(Body::from_stream(pieces_stream(pieces, End::Break(gate), shared))),
        Canned::SseThenHang(pieces) => sse(Body::from_stream(pieces_stream(pieces, End::Hang, shared))),
        Canned::SsePaced(pieces, interval) => sse(Body::from_stream(paced(pieces, interval, shared))),
        Canned::SsePaused(pieces, gate, rest) => {
            sse(Body::from_stream(pieces_stream(pieces, End::Then(gate, rest), shared)))
        }
        Canned::Hang => {
            let _guard = Guard { shared, done: false };
            std::future::pending::<()>().await;
            StatusCode::OK.into_response()
        }
        Canned::Gated(..) => StatusCode::OK.into_response(),
    }
}

#[derive(Clone)]
enum End {
    Finish,
    Break(Option<Arc<Notify>>),
    Hang,
    /// Wait for the gate, then send these pieces and finish.
    Then(Arc<Notify>, Vec<Bytes>),
}

fn pieces_stream(
    pieces: Vec<Bytes>,
    end: End,
    shared: Arc<Shared>,
) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> + Send {
    let guard = Guard { shared, done: false };
    futures_util::stream::unfold((pieces.into_iter(), Some(guard), Some(end)), move |(mut it, guard, end)| async move {
        let mut guard = guard?;
        if let Some(p) = it.next() {
            return Some((Ok(p), (it, Some(guard), end)));
        }
        match end? {
            End::Then(gate, rest) => {
                gate.notified().await;
                let mut rest = rest.into_iter();
                let first = rest.next()?;
                Some((Ok(first), (rest, Some(guard), Some(End::Finish))))
            }
            End::Finish => {
                guard.done = true;
                None
            }
            End::Break(gate) => {
                if let Some(g) = gate {
                    g.notified().await;
                }
                guard.done = true;
                Some((Err(std::io::Error::other("the fake upstream broke the stream")), (it, None, None)))
            }
            End::Hang => {
                std::future::pending::<()>().await;
                None
            }
        }
    })
}

fn paced(
    pieces: Vec<Bytes>,
    interval: std::time::Duration,
    shared: Arc<Shared>,
) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> + Send {
    let guard = Guard { shared, done: false };
    futures_util::stream::unfold((pieces.into_iter(), guard, true), move |(mut it, guard, first)| async move {
        if !first {
            tokio::time::sleep(interval).await;
        }
        if let Some(p) = it.next() {
            Some((Ok(p), (it, guard, false)))
        } else {
            guard.finish();
            None
        }
    })
}

/// A chat completion with one choice holding `message`.
#[must_use]
pub fn completion(message: &Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "fake-model",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}
    })
}

/// A streamed chat completion of `content` sent in `pieces` (content deltas, as a server
/// would send tokens), then `finish_reason`; the chunks, without `[DONE]`.
#[must_use]
pub fn content_chunks(pieces: &[&str], finish_reason: &str) -> Vec<Value> {
    let head = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1_700_000_000,
               "model": "fake-model", "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
    };
    let mut out = vec![head(json!({"role": "assistant", "content": ""}), Value::Null)];
    out.extend(pieces.iter().map(|p| head(json!({"content": p}), Value::Null)));
    out.push(head(json!({}), json!(finish_reason)));
    out
}

/// The README's model: asked with tools, it writes a Hermes-style `get_weather` call into
/// `content`, `days` as a string; asked again after a tool result, it answers in prose.
/// Streams when asked to. The same model behind `/v1/messages` (Anthropic) sends a
/// `tool_use` whose `input` is a string holding JSON with `days` as a string, and behind
/// `/v1/responses` a `function_call` whose `arguments` have a trailing comma and `days` as
/// a string. Model `fake-overloaded` answers 503 with `Retry-After`;
/// `fake-refused` always calls `get_weather` without its required `city` (a call that
/// can never be used); `fake-malformed`, streamed, sends an event that is not JSON;
/// `fake-thinking` behind `/v1/messages` writes its reasoning in the text (`<think>…</think>`)
/// and the call as Hermes text, and behind `/v1/responses` leaves the call in a `reasoning`
/// item's text (as gpt-oss does); `fake-thinking-text` behind `/v1/responses` writes its
/// reasoning in the `output_text` (`<think>…</think>`) and the call as Hermes text;
/// `/v1/models` lists `fake-model`. Behind `/v1/messages` it checks signatures as the real
/// API does: a `thinking` block sent back is refused (400), as it signs none; behind
/// `/v1/responses`, a `reasoning` item sent back that it did not write (its id not
/// `rs_fake…`) is refused (400).
pub fn demo(seen: &Seen) -> Canned {
    let request = seen.json();
    let path = seen.path.as_str();
    if path.ends_with("/models") {
        return Canned::json(
            &json!({"object": "list", "data": [{"id": "fake-model", "object": "model", "created": 0, "owned_by": "toolfix"}]}),
        );
    }
    if request.get("model").and_then(Value::as_str) == Some("fake-overloaded") {
        let error =
            "{\"error\": {\"message\": \"the fake model is overloaded\", \"type\": \"server_error\", \"code\": null}}";
        return Canned::status(503, &[("retry-after", "1")], error);
    }
    let stream = request.get("stream").and_then(Value::as_bool) == Some(true);
    if path.ends_with("/messages") {
        return demo_messages(&request, stream);
    }
    if path.ends_with("/responses") {
        return demo_responses(&request, stream);
    }
    if request.get("model").and_then(Value::as_str) == Some("fake-malformed") && stream {
        // A stream with an event that is not JSON, after some text.
        let mut pieces = sse_events(&content_chunks(&["Let me ", "check."], "stop"));
        pieces.insert(2, Bytes::from_static(b"data: {not json\n\n"));
        return Canned::Sse(pieces);
    }
    if request.get("model").and_then(Value::as_str) == Some("fake-refused") {
        // A call that can never be used: `city` is required and missing.
        let call = json!({"id": "call_refused", "type": "function",
                          "function": {"name": "get_weather", "arguments": "{\"days\": 3}"}});
        if stream {
            let head = |delta: Value, finish: Value| {
                json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1_700_000_000,
                       "model": "fake-refused", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            };
            let mut delta = call.clone();
            delta["index"] = json!(0);
            return Canned::sse(&[
                head(json!({"role": "assistant", "content": "Checking."}), Value::Null),
                head(json!({"tool_calls": [delta]}), Value::Null),
                head(json!({}), json!("tool_calls")),
            ]);
        }
        let message = json!({"role": "assistant", "content": "Checking.", "tool_calls": [call]});
        return Canned::json(&completion(&message, "tool_calls"));
    }
    let last_is_tool = request
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())
        .and_then(|m| m.get("role"))
        .and_then(Value::as_str)
        == Some("tool");
    let has_tools = request.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty());
    let text = if has_tools && !last_is_tool {
        "Let me check the weather.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}\n</tool_call>"
    } else {
        "It will be sunny in Paris for the next three days."
    };
    if stream {
        let pieces: Vec<&str> = split_tokens(text);
        return Canned::sse(&content_chunks(&pieces, "stop"));
    }
    Canned::json(&completion(&json!({"role": "assistant", "content": text}), "stop"))
}

fn named_event(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// An Anthropic message as the events a server streams (docs.anthropic.com, "Streaming
/// Messages"): text in pieces of 5 bytes, `tool_use` input in pieces of 7 (after an empty
/// first `partial_json`, as the real API sends), thinking with its signature.
#[must_use]
pub fn messages_sse(m: &Value) -> String {
    let mut head = m.clone();
    head["content"] = json!([]);
    head["stop_reason"] = Value::Null;
    let mut out = named_event("message_start", &json!({"type": "message_start", "message": head}));
    out += &named_event("ping", &json!({"type": "ping"}));
    for (i, b) in m["content"].as_array().into_iter().flatten().enumerate() {
        let kind = b["type"].as_str().unwrap_or("");
        // A block's other members on its start (as the API sends them), but a text
        // block's `citations`: those come as `citations_delta`s after its text.
        let mut start = b.clone();
        match kind {
            "text" => {
                start["text"] = json!("");
                if let Some(o) = start.as_object_mut() {
                    o.remove("citations");
                }
            }
            "thinking" => start = json!({"type": "thinking", "thinking": ""}),
            "tool_use" => start["input"] = json!({}),
            _ => {}
        }
        out += &named_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": i, "content_block": start}),
        );
        let piece = |text: &str, n: usize| -> Vec<String> {
            let mut v = Vec::new();
            let mut s = 0;
            while s < text.len() {
                let mut e = (s + n).min(text.len());
                while !text.is_char_boundary(e) {
                    e += 1;
                }
                v.push(text[s..e].to_owned());
                s = e;
            }
            v
        };
        match kind {
            "text" => {
                for p in piece(b["text"].as_str().unwrap_or(""), 5) {
                    out += &named_event(
                        "content_block_delta",
                        &json!({"type": "content_block_delta", "index": i,
                        "delta": {"type": "text_delta", "text": p}}),
                    );
                }
                for c in b["citations"].as_array().into_iter().flatten() {
                    out += &named_event(
                        "content_block_delta",
                        &json!({"type": "content_block_delta", "index": i,
                        "delta": {"type": "citations_delta", "citation": c}}),
                    );
                }
            }
            "thinking" => {
                for p in piece(b["thinking"].as_str().unwrap_or(""), 5) {
                    out += &named_event(
                        "content_block_delta",
                        &json!({"type": "content_block_delta", "index": i,
                        "delta": {"type": "thinking_delta", "thinking": p}}),
                    );
                }
                out += &named_event(
                    "content_block_delta",
                    &json!({"type": "content_block_delta", "index": i,
                    "delta": {"type": "signature_delta", "signature": b["signature"]}}),
                );
            }
            "tool_use" => {
                let input = match &b["input"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let mut parts = vec![String::new()];
                parts.extend(piece(&input, 7));
                for p in parts {
                    out += &named_event(
                        "content_block_delta",
                        &json!({"type": "content_block_delta", "index": i,
                        "delta": {"type": "input_json_delta", "partial_json": p}}),
                    );
                }
            }
            _ => {}
        }
        out += &named_event("content_block_stop", &json!({"type": "content_block_stop", "index": i}));
    }
    out += &named_event(
        "message_delta",
        &json!({"type": "message_delta",
        "delta": {"stop_reason": m["stop_reason"], "stop_sequence": null}, "usage": {"output_tokens": 20}}),
    );
    out += &named_event("message_stop", &json!({"type": "message_stop"}));
    out
}

fn seq_event(seq: &mut u64, data: Value) -> String {
    let mut data = data;
    data["sequence_number"] = json!(*seq);
    *seq += 1;
    format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap_or(""))
}

fn text_pieces(text: &str, n: usize) -> Vec<String> {
    let mut v = Vec::new();
    let mut s = 0;
    while s < text.len() {
        let mut e = (s + n).min(text.len());
        while !text.is_char_boundary(e) {
            e += 1;
        }
        v.push(text[s..e].to_owned());
        s = e;
    }
    v
}

/// An OpenAI Responses response as the events a server streams (platform.openai.com,
/// "Streaming events"), with sequence numbers: text in pieces of 5 bytes, arguments in
/// pieces of 7, reasoning text and summaries in pieces of 5.
#[must_use]
pub fn responses_sse(r: &Value) -> String {
    let mut seq = 0;
    let mut head = r.clone();
    head["output"] = json!([]);
    head["status"] = json!("in_progress");
    let mut out = seq_event(&mut seq, json!({"type": "response.created", "response": head}));
    out += &seq_event(&mut seq, json!({"type": "response.in_progress", "response": head}));
    for (k, item) in r["output"].as_array().into_iter().flatten().enumerate() {
        let mut added = item.clone();
        match item["type"].as_str().unwrap_or("") {
            "message" => {
                added["content"] = json!([]);
                added["status"] = json!("in_progress");
                out += &seq_event(
                    &mut seq,
                    json!({"type": "response.output_item.added", "output_index": k, "item": added}),
                );
                out += &seq_event(
                    &mut seq,
                    json!({"type": "response.content_part.added", "item_id": item["id"], "output_index": k,
                    "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}),
                );
                let text = item["content"][0]["text"].as_str().unwrap_or("");
                for p in text_pieces(text, 5) {
                    out += &seq_event(
                        &mut seq,
                        json!({"type": "response.output_text.delta", "item_id": item["id"], "output_index": k,
                        "content_index": 0, "delta": p}),
                    );
                }
                out += &seq_event(
                    &mut seq,
                    json!({"type": "response.output_text.done", "item_id": item["id"], "output_index": k,
                    "content_index": 0, "text": text}),
                );
                out += &seq_event(
                    &mut seq,
                    json!({"type": "response.content_part.done", "item_id": item["id"], "output_index": k,
                    "content_index": 0, "part": item["content"][0]}),
                );
            }
            "function_call" => {
                added["arguments"] = json!("");
                added["status"] = json!("in_progress");
                out += &seq_event(
                    &mut seq,
                    json!({"type": "response.output_item.added", "output_index": k, "item": added}),
                );
                let args = item["arguments"].as_str().unwrap_or("");
                for p in text_pieces(args, 7) {
                    out += &seq_event(
                        &mut seq,
                        json!({"type": "response.function_call_arguments.delta", "item_id": item["id"],
                        "output_index": k, "delta": p}),
                    );
                }
                out += &seq_event(
                    &mut seq,
                    json!({"type": "response.function_call_arguments.done", "item_id": item["id"],
                    "output_index": k, "arguments": args}),
                );
            }
            "reasoning" => {
                // Added empty, then each part's text in deltas: `content` parts
                // (`response.reasoning_text.*`), then `summary` parts
                // (`response.reasoning_summary_part.*`, `response.reasoning_summary_text.*`).
                added["summary"] = json!([]);
                if added.get("content").is_some() {
                    added["content"] = json!([]);
                }
                out += &seq_event(
                    &mut seq,
                    json!({"type": "response.output_item.added", "output_index": k, "item": added}),
                );
                for (c, part) in item["content"].as_array().into_iter().flatten().enumerate() {
                    let text = part["text"].as_str().unwrap_or("");
                    for p in text_pieces(text, 5) {
                        out += &seq_event(
                            &mut seq,
                            json!({"type": "response.reasoning_text.delta", "item_id": item["id"],
                            "output_index": k, "content_index": c, "delta": p}),
                        );
                    }
                    out += &seq_event(
                        &mut seq,
                        json!({"type": "response.reasoning_text.done", "item_id": item["id"],
                        "output_index": k, "content_index": c, "text": text}),
                    );
                }
                for (n, part) in item["summary"].as_array().into_iter().flatten().enumerate() {
                    let text = part["text"].as_str().unwrap_or("");
                    out += &seq_event(
                        &mut seq,
                        json!({"type": "response.reasoning_summary_part.added", "item_id": item["id"],
                        "output_index": k, "summary_index": n, "part": {"type": "summary_text", "text": ""}}),
                    );
                    for p in text_pieces(text, 5) {
                        out += &seq_event(
                            &mut seq,
                            json!({"type": "response.reasoning_summary_text.delta", "item_id": item["id"],
                            "output_index": k, "summary_index": n, "delta": p}),
                        );
                    }
                    out += &seq_event(
                        &mut seq,
                        json!({"type": "response.reasoning_summary_text.done", "item_id": item["id"],
                        "output_index": k, "summary_index": n, "text": text}),
                    );
                    out += &seq_event(
                        &mut seq,
                        json!({"type": "response.reasoning_summary_part.done", "item_id": item["id"],
                        "output_index": k, "summary_index": n, "part": part}),
                    );
                }
            }
            _ => {
                out += &seq_event(
                    &mut seq,
                    json!({"type": "response.output_item.added", "output_index": k, "item": added}),
                );
            }
        }
        out += &seq_event(&mut seq, json!({"type": "response.output_item.done", "output_index": k, "item": item}));
    }
    let end = if r["status"] == "incomplete" { "response.incomplete" } else { "response.completed" };
    out += &seq_event(&mut seq, json!({"type": end, "response": r}));
    out
}

/// A model for real agent clients (Claude Code over `/v1/messages`, Codex over
/// `/v1/responses`): its first reply is a broken call to one of the client's own tools,
/// reading the file named after `FILE=` in the prompt — for Claude Code, Qwen-style XML in
/// the text calling `Read`; for Codex, its shell tool with a trailing comma in the
/// arguments. Once the tool's result is in the conversation, it answers `The file says:`
/// and the result. Any other request gets a short text.
pub fn agents(seen: &Seen) -> Canned {
    let request = seen.json();
    let stream = request.get("stream").and_then(Value::as_bool) == Some(true);
    let text = String::from_utf8_lossy(&seen.body);
    let file = text.find("FILE=").map(|i| {
        text[i + 5..].chars().take_while(|c| !c.is_whitespace() && *c != '"' && *c != '\\').collect::<String>()
    });
    if seen.path.ends_with("/messages") {
        let result = request
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .flat_map(|m| m.get("content").and_then(Value::as_array).into_iter().flatten())
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            .map(|b| match b.get("content") {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            })
            .next_back();
        let has_read = request
            .get("tools")
            .and_then(Value::as_array)
            .is_some_and(|t| t.iter().any(|t| t.get("name").and_then(Value::as_str) == Some("Read")));
        let say = match (result, &file) {
            (Some(r), _) => format!("The file says: {r}"),
            (None, Some(f)) if has_read => format!(
                "I'll read the file.\n<tool_call>\n<function=Read>\n<parameter=file_path>\n{f}\n</parameter>\n</function>\n</tool_call>"
            ),
            _ => "ok".to_owned(),
        };
        let message = json!({"id": "msg_agent", "type": "message", "role": "assistant", "model": "fake-model",
            "content": [{"type": "text", "text": say}], "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 20}});
        return if stream { Canned::Sse(vec![Bytes::from(messages_sse(&message))]) } else { Canned::json(&message) };
    }
    if seen.path.ends_with("/responses") {
        let items = request.get("input").and_then(Value::as_array).cloned().unwrap_or_default();
        let result =
            items.iter().rfind(|i| i.get("type").and_then(Value::as_str) == Some("function_call_output")).map(|i| {
                match i.get("output") {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                }
            });
        // The client's shell tool: a function whose parameters have `command` (a list or
        // a string) or `cmd`.
        let mut tools: Vec<&Value> = Vec::new();
        for t in request.get("tools").and_then(Value::as_array).into_iter().flatten() {
            tools.push(t);
            tools.extend(t.get("tools").and_then(Value::as_array).into_iter().flatten());
        }
        let shell = tools.iter().find_map(|t| {
            let props = t.get("parameters")?.get("properties")?;
            let name = t.get("name")?.as_str()?;
            if let Some(c) = props.get("command") {
                Some((name.to_owned(), "command", c.get("type").and_then(Value::as_str) == Some("array")))
            } else {
                props.get("cmd").map(|_| (name.to_owned(), "cmd", false))
            }
        });
        let output = match (result, &file, shell) {
            (Some(r), _, _) => {
                json!([{"type": "message", "id": "msg_agent", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": format!("The file says: {r}"), "annotations": []}]}])
            }
            (None, Some(f), Some((name, key, list))) => {
                let value = if list { json!(["cat", f]).to_string() } else { json!(format!("cat {f}")).to_string() };
                let arguments = format!("{{\"{key}\": {value},}}");
                json!([{"type": "function_call", "id": "fc_agent1", "call_id": "call_agent1", "name": name,
                        "arguments": arguments, "status": "completed"}])
            }
            _ => json!([{"type": "message", "id": "msg_agent", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": "ok", "annotations": []}]}]),
        };
        let response = json!({"id": "resp_agent", "object": "response", "created_at": 1_700_000_000, "status": "completed",
            "model": "fake-model", "output": output, "usage": {"input_tokens": 10, "output_tokens": 20, "total_tokens": 30}});
        return if stream { Canned::Sse(vec![Bytes::from(responses_sse(&response))]) } else { Canned::json(&response) };
    }
    demo(seen)
}

/// The demo model as Anthropic Messages.
fn demo_messages(request: &Value, stream: bool) -> Canned {
    // A strict upstream: it signed no thinking block, so any sent back is refused.
    let unsigned = request.get("messages").and_then(Value::as_array).into_iter().flatten().any(|m| {
        m.get("content")
            .and_then(Value::as_array)
            .is_some_and(|blocks| blocks.iter().any(|b| b.get("type").and_then(Value::as_str) == Some("thinking")))
    });
    if unsigned {
        let error = json!({"type": "error", "error": {"type": "invalid_request_error",
                           "message": "Invalid `signature` in `thinking` block"}});
        return Canned::status(400, &[("content-type", "application/json")], &error.to_string());
    }
    let thinking = request.get("model").and_then(Value::as_str) == Some("fake-thinking");
    let answered = request
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .is_some_and(|blocks| blocks.iter().any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result")));
    let (content, stop) = if answered {
        (json!([{"type": "text", "text": "It will be sunny in Paris for the next three days."}]), "end_turn")
    } else if thinking {
        let text = "<think>The user wants Paris, 3 days.</think>Let me check the weather.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}\n</tool_call>";
        (json!([{"type": "text", "text": text}]), "end_turn")
    } else if request.get("model").and_then(Value::as_str) == Some("fake-cited") {
        // Members the proxy keeps on blocks it writes anew: a text block's citations, a
        // call's caller.
        (
            json!([{"type": "text", "text": "Paris will be sunny.", "citations": [{"type": "char_location",
                     "cited_text": "Sunny in Paris all week.", "document_index": 0, "document_title": "Forecast",
                     "start_char_index": 0, "end_char_index": 24}]},
                   {"type": "tool_use", "id": "toolu_fake1", "name": "get_weather", "caller": {"type": "direct"},
                    "input": "{\"city\": \"Paris\", \"days\": \"3\"}"}]),
            "tool_use",
        )
    } else {
        (
            json!([{"type": "text", "text": "Let me check the weather."},
                   {"type": "tool_use", "id": "toolu_fake1", "name": "get_weather",
                    "input": "{\"city\": \"Paris\", \"days\": \"3\"}"}]),
            "tool_use",
        )
    };
    let message = json!({"id": "msg_fake", "type": "message", "role": "assistant", "model": "fake-model",
        "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 20}});
    if stream { Canned::Sse(vec![Bytes::from(messages_sse(&message))]) } else { Canned::json(&message) }
}

/// The demo model as OpenAI Responses.
fn demo_responses(request: &Value, stream: bool) -> Canned {
    let input = request.get("input").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    // A strict upstream: a reasoning item it did not write is refused.
    let foreign = input.iter().any(|i| {
        i.get("type").and_then(Value::as_str) == Some("reasoning")
            && !i.get("id").and_then(Value::as_str).is_some_and(|id| id.starts_with("rs_fake"))
    });
    if foreign {
        let error = json!({"error": {"message": "Item of type `reasoning` was not produced by this server",
                                     "type": "invalid_request_error", "param": "input", "code": null}});
        return Canned::status(400, &[("content-type", "application/json")], &error.to_string());
    }
    let answered = input.iter().any(|i| i.get("type").and_then(Value::as_str) == Some("function_call_output"));
    let model = request.get("model").and_then(Value::as_str);
    let thinking = model == Some("fake-thinking");
    let output = if answered {
        json!([{"type": "message", "id": "msg_fake", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": "It will be sunny in Paris for the next three days.", "annotations": []}]}])
    } else if model == Some("fake-thinking-text") {
        let text = "<think>The user wants Paris, 3 days.</think>Let me check the weather.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}\n</tool_call>";
        json!([{"type": "message", "id": "msg_fake", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}])
    } else if model == Some("fake-cited") {
        // Members the proxy keeps on items it writes anew: a message's phase, its part's
        // annotations, a call's caller.
        json!([{"type": "message", "id": "msg_fake", "status": "completed", "role": "assistant", "phase": "commentary",
                "content": [{"type": "output_text", "text": "Paris will be sunny.", "annotations": [{"type": "url_citation",
                             "start_index": 0, "end_index": 5, "title": "Forecast", "url": "https://example.com/paris"}]}]},
               {"type": "function_call", "id": "fc_fake1", "call_id": "call_fake1", "name": "get_weather",
                "caller": {"type": "direct"}, "arguments": "{\"city\": \"Paris\", \"days\": \"3\",}", "status": "completed"}])
    } else if thinking {
        let text = "The user wants Paris. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}</tool_call>";
        json!([{"type": "reasoning", "id": "rs_fake1", "summary": [],
                "content": [{"type": "reasoning_text", "text": text}]}])
    } else {
        json!([{"type": "function_call", "id": "fc_fake1", "call_id": "call_fake1", "name": "get_weather",
                "arguments": "{\"city\": \"Paris\", \"days\": \"3\",}", "status": "completed"}])
    };
    let response = json!({"id": "resp_fake", "object": "response", "created_at": 1_700_000_000, "status": "completed",
        "model": "fake-model", "output": output, "usage": {"input_tokens": 10, "output_tokens": 20, "total_tokens": 30}});
    if stream { Canned::Sse(vec![Bytes::from(responses_sse(&response))]) } else { Canned::json(&response) }
}

/// Cut text into small pieces (about a token each) on character boundaries.
fn split_tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if i > start && (c == ' ' || c == '"' || c == '<' || c == '\n' || i - start >= 6) {
            out.push(text.get(start..i).unwrap_or(""));
            start = i;
        }
    }
    out.push(text.get(start..).unwrap_or(""));
    out
}
