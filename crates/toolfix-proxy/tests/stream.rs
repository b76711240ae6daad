//! Streaming chat completions through the proxy: what a client assembles from the deltas
//! is what a non-streaming call gives, whatever pieces the upstream sends.

mod common;

use bytes::Bytes;
use common::{ask, calls_of, request, sse_body, start};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use toolfix_proxy::fake::{Canned, completion, content_chunks, demo};

fn chunk(delta: &Value, finish: Option<&str>) -> Value {
    json!({"id": "s", "object": "chat.completion.chunk", "created": 1, "model": "fake-model",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

#[tokio::test]
async fn a_leaked_call_streams_out_as_a_repaired_tool_call_like_the_non_streaming_answer() {
    let h = start(demo).await;
    let (status, headers, seen) = h.stream(&ask("weather in Paris?")).await;
    assert_eq!(status, 200);
    assert!(headers["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    let (_, _, whole) = h.chat(&ask("weather in Paris?")).await;
    assert_eq!(seen.content, whole["choices"][0]["message"]["content"].as_str().unwrap());
    let streamed: Vec<(String, Value)> =
        seen.calls.iter().map(|c| (c.1.clone(), serde_json::from_str(&c.2).unwrap())).collect();
    assert_eq!(streamed, calls_of(&whole));
    assert_eq!(seen.calls[0].0, whole["choices"][0]["message"]["tool_calls"][0]["id"].as_str().unwrap());
    assert_eq!(seen.finish.as_deref(), Some("tool_calls"));
    assert_eq!(seen.report["calls"][0]["outcome"], "repaired");
    assert!(seen.done);
}

#[tokio::test]
async fn the_upstream_body_in_one_byte_pieces_gives_the_same_stream() {
    let calls = [
        json!({"index": 0, "id": "a", "type": "function", "function": {"name": "tag_files", "arguments": "{\"paths\": \"[\\\"x\\\"]\","}}),
        json!({"index": 0, "function": {"arguments": " \"tag\": \"t\"}"}}),
    ];
    let mut chunks = vec![chunk(&json!({"role": "assistant", "content": "Tagging "}), None)];
    chunks.push(chunk(&json!({"content": "now."}), None));
    chunks.extend(calls.iter().map(|c| chunk(&json!({"tool_calls": [c]}), None)));
    chunks.push(chunk(&json!({}), Some("tool_calls")));
    let body = sse_body(&chunks);
    let whole = Canned::Sse(vec![Bytes::from(body.clone())]);
    let bytes = Canned::Sse(body.iter().map(|b| Bytes::copy_from_slice(&[*b])).collect());
    let h1 = start(move |_| whole.clone()).await;
    let h2 = start(move |_| bytes.clone()).await;
    let (_, _, a) = h1.stream(&ask("tag x")).await;
    let (_, _, b) = h2.stream(&ask("tag x")).await;
    assert_eq!(a, b);
    assert_eq!(a.content, "Tagging now.");
    assert_eq!(a.calls, [("a".to_owned(), "tag_files".to_owned(), "{\"paths\": [\"x\"], \"tag\": \"t\"}".to_owned())]);
}

#[tokio::test]
async fn usage_chunks_and_done_are_kept_in_order() {
    let mut chunks = content_chunks(&["Hello"], "stop");
    chunks.push(json!({"id": "s", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [],
                       "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}));
    let canned = Canned::sse(&chunks);
    let h = start(move |_| canned.clone()).await;
    let mut req = ask("hi");
    req["stream"] = json!(true);
    let (_, _, body) = h.post_bytes("/v1/chat/completions", req.to_string()).await;
    let text = String::from_utf8(body.to_vec()).unwrap();
    let finish = text.find("\"finish_reason\":\"stop\"").unwrap();
    let usage = text.find("\"usage\"").unwrap();
    let done = text.find("data: [DONE]").unwrap();
    assert!(finish < usage && usage < done, "{text}");
}

#[tokio::test]
async fn a_refused_streamed_call_is_reprompted_before_any_call_byte_is_sent() {
    let n = Arc::new(AtomicUsize::new(0));
    let script = move |_: &toolfix_proxy::fake::Seen| {
        if n.fetch_add(1, Ordering::SeqCst) == 0 {
            let call = json!({"index": 0, "id": "c1", "type": "function", "function": {"name": "send_money", "arguments": "{}"}});
            Canned::sse(&[
                chunk(&json!({"role": "assistant", "content": "Paying."}), None),
                chunk(&json!({"tool_calls": [call]}), None),
                chunk(&json!({}), Some("tool_calls")),
            ])
        } else {
            let call = json!({"id": "c2", "type": "function", "function": {"name": "send_money", "arguments": "{\"to\": \"bob\", \"amount\": 3}"}});
            Canned::json(&completion(
                &json!({"role": "assistant", "content": null, "tool_calls": [call]}),
                "tool_calls",
            ))
        }
    };
    let h = start(script).await;
    let (_, _, seen) = h.stream(&ask("pay bob 3")).await;
    assert_eq!(seen.content, "Paying.");
    assert_eq!(seen.calls, [("c2".to_owned(), "send_money".to_owned(), "{\"to\": \"bob\", \"amount\": 3}".to_owned())]);
    assert_eq!(seen.finish.as_deref(), Some("tool_calls"));
    assert_eq!(seen.report["calls"][0]["outcome"], "reprompted");
    let second = h.upstream.requests()[1].json();
    assert!(second.get("stream").is_none());
    assert_eq!(second["messages"][2]["role"], "tool");
}

#[tokio::test]
async fn a_streamed_storm_repeat_is_suppressed_and_reported() {
    let mut history = vec![json!({"role": "user", "content": "weather?"})];
    for i in 0..2 {
        history.push(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": format!("w{i}"), "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}]}));
        history.push(json!({"role": "tool", "tool_call_id": format!("w{i}"), "content": "sunny"}));
    }
    let call = json!({"index": 0, "id": "w2", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}});
    let streamed = Canned::sse(&[
        chunk(&json!({"role": "assistant"}), None),
        chunk(&json!({"tool_calls": [call]}), None),
        chunk(&json!({}), Some("tool_calls")),
    ]);
    let again = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "w3", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}]});
    let again = Canned::json(&completion(&again, "tool_calls"));
    let n = Arc::new(AtomicUsize::new(0));
    let h = start(move |_| if n.fetch_add(1, Ordering::SeqCst) == 0 { streamed.clone() } else { again.clone() }).await;
    let (_, _, seen) = h.stream(&request(Value::Array(history))).await;
    assert!(seen.calls.is_empty());
    assert_eq!(seen.finish.as_deref(), Some("stop"));
    assert_eq!(seen.report["calls"][0]["outcome"], "suppressed");
    assert_eq!(h.upstream.requests().len(), 2);
}

#[tokio::test]
async fn a_stream_without_tools_passes_through_byte_for_byte() {
    let body = sse_body(&content_chunks(&["<tool_call>{\"name\": \"x\"}</tool_call>"], "stop"));
    let canned = Canned::Sse(vec![Bytes::from(body.clone())]);
    let h = start(move |_| canned.clone()).await;
    let req = json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    let (status, _, got) = h.post_bytes("/v1/chat/completions", req.to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(got, body);
}
