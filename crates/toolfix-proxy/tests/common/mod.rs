//! Shared by the integration tests: a fake upstream and the proxy in front of it, both on
//! loopback port 0.

#![allow(dead_code, reason = "each test binary uses a part")]
#![expect(clippy::unwrap_used, clippy::needless_pass_by_value, reason = "tests")]

use bytes::Bytes;
use serde_json::{Value, json};
use std::net::SocketAddr;
use toolfix_proxy::Config;
use toolfix_proxy::fake::{Canned, FakeUpstream, Seen};

pub(crate) struct Harness {
    pub(crate) upstream: FakeUpstream,
    pub(crate) proxy: SocketAddr,
    pub(crate) client: reqwest::Client,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    pub(crate) served: tokio::task::JoinHandle<()>,
}

impl Drop for Harness {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

pub(crate) async fn start(script: impl Fn(&Seen) -> Canned + Send + Sync + 'static) -> Harness {
    start_with(script, |_| {}).await
}

pub(crate) async fn start_with(
    script: impl Fn(&Seen) -> Canned + Send + Sync + 'static,
    tweak: impl FnOnce(&mut Config),
) -> Harness {
    let upstream = FakeUpstream::start("127.0.0.1:0", script).await.unwrap();
    let mut config = Config::new(&upstream.url()).unwrap();
    tweak(&mut config);
    proxy_for(upstream, config).await
}

pub(crate) async fn proxy_for(upstream: FakeUpstream, mut config: Config) -> Harness {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy = listener.local_addr().unwrap();
    config.listen = proxy;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(async move {
        toolfix_proxy::serve(listener, config, async move {
            let _ = stopped.await;
        })
        .await
        .unwrap();
    });
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    Harness { upstream, proxy, client, stop: Some(stop), served }
}

impl Harness {
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.proxy)
    }

    pub(crate) async fn post_bytes(
        &self,
        path: &str,
        body: impl Into<Bytes>,
    ) -> (u16, reqwest::header::HeaderMap, Bytes) {
        let r = self
            .client
            .post(self.url(path))
            .header("content-type", "application/json")
            .header("authorization", "Bearer sk-client")
            .body(body.into())
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        (status, headers, r.bytes().await.unwrap())
    }

    pub(crate) async fn chat(&self, body: &Value) -> (u16, reqwest::header::HeaderMap, Value) {
        let (s, h, b) = self.post_bytes("/v1/chat/completions", body.to_string()).await;
        (s, h, serde_json::from_slice(&b).unwrap_or(Value::Null))
    }

    /// Stop accepting; wait for the in-flight requests.
    pub(crate) async fn shutdown(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        (&mut self.served).await.unwrap();
    }
}

pub(crate) fn tools() -> Value {
    json!([
        {"type": "function", "function": {"name": "get_weather", "description": "Weather forecast",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"], "x-toolfix": {"read_only": true}}}},
        {"type": "function", "function": {"name": "send_money", "description": "Pay someone",
            "parameters": {"type": "object", "properties": {"to": {"type": "string"}, "amount": {"type": "integer"}},
                "required": ["to", "amount"]}}},
        {"type": "function", "function": {"name": "tag_files", "description": "Tag files",
            "parameters": {"type": "object", "properties": {"paths": {"type": "array", "items": {"type": "string"}},
                "tag": {"type": "string"}}, "required": ["paths", "tag"]}}}
    ])
}

pub(crate) fn request(messages: Value) -> Value {
    json!({"model": "fake-model", "messages": messages, "tools": tools()})
}

pub(crate) fn ask(text: &str) -> Value {
    request(json!([{"role": "user", "content": text}]))
}

/// A server-parsed call.
pub(crate) fn native(id: &str, name: &str, arguments: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

pub(crate) fn message(content: Option<&str>, calls: Option<Value>) -> Value {
    let mut m = json!({"role": "assistant", "content": content});
    if let Some(c) = calls {
        m["tool_calls"] = c;
    }
    m
}

/// The calls of choice 0 as (name, arguments as a value).
pub(crate) fn calls_of(response: &Value) -> Vec<(String, Value)> {
    response["choices"][0]["message"]["tool_calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .map(|c| {
                    let args = c["function"]["arguments"].as_str().unwrap();
                    (c["function"]["name"].as_str().unwrap().to_owned(), serde_json::from_str(args).unwrap())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A streamed answer as a client assembling deltas sees it (as the official SDK does).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Streamed {
    pub(crate) content: String,
    pub(crate) reasoning: String,
    /// (id, name, arguments) by index.
    pub(crate) calls: Vec<(String, String, String)>,
    pub(crate) finish: Option<String>,
    pub(crate) report: Value,
    pub(crate) error: Option<Value>,
    pub(crate) usage: bool,
    pub(crate) done: bool,
}

pub(crate) fn assemble(body: &[u8]) -> Streamed {
    let text = String::from_utf8_lossy(body);
    let mut seen = Streamed::default();
    for event in text.split("\n\n") {
        let data: String = event
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect::<Vec<_>>()
            .join("\n");
        if data.is_empty() {
            continue;
        }
        if data == "[DONE]" {
            seen.done = true;
            continue;
        }
        let v: Value = serde_json::from_str(&data).unwrap();
        if v.get("error").is_some() {
            seen.error = Some(v["error"].clone());
            continue;
        }
        seen.usage |= v.get("usage").is_some_and(|u| !u.is_null());
        if let Some(r) = v.get("x_toolfix") {
            seen.report = r.clone();
        }
        for c in v["choices"].as_array().unwrap() {
            let d = &c["delta"];
            seen.content += d["content"].as_str().unwrap_or("");
            seen.reasoning += d["reasoning_content"].as_str().unwrap_or("");
            for call in d["tool_calls"].as_array().into_iter().flatten() {
                let i = usize::try_from(call["index"].as_u64().unwrap()).unwrap();
                if seen.calls.len() <= i {
                    seen.calls.resize(i + 1, Default::default());
                }
                let slot = &mut seen.calls[i];
                slot.0 += call["id"].as_str().unwrap_or("");
                slot.1 += call["function"]["name"].as_str().unwrap_or("");
                slot.2 += call["function"]["arguments"].as_str().unwrap_or("");
            }
            if let Some(f) = c["finish_reason"].as_str() {
                seen.finish = Some(f.to_owned());
            }
        }
    }
    seen
}

impl Harness {
    /// A streaming chat request: status, headers, what the client assembles.
    pub(crate) async fn stream(&self, body: &Value) -> (u16, reqwest::header::HeaderMap, Streamed) {
        let mut body = body.clone();
        body["stream"] = json!(true);
        let (s, h, b) = self.post_bytes("/v1/chat/completions", body.to_string()).await;
        (s, h, assemble(&b))
    }
}

/// SSE events for these chunks, `[DONE]` last, as one body.
pub(crate) fn sse_body(chunks: &[Value]) -> Vec<u8> {
    toolfix_proxy::fake::sse_events(chunks).iter().flat_map(|b| b.to_vec()).collect()
}
