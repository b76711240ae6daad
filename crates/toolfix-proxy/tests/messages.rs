//! Anthropic Messages (`POST /v1/messages`) through the proxy, streamed and not. The wire
//! fixtures follow the public API reference (docs.anthropic.com: "Messages" for the
//! request and response shapes, "Streaming Messages" for the event sequence:
//! `message_start`, `content_block_start` / `content_block_delta` (`text_delta`,
//! `input_json_delta`, `thinking_delta`, `signature_delta`) / `content_block_stop`,
//! `message_delta`, `message_stop`, `ping`).

#![expect(clippy::unwrap_used, clippy::panic, clippy::needless_pass_by_value, reason = "tests")]

mod common;

use bytes::Bytes;
use common::start;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use toolfix_proxy::fake::{Canned, Seen, messages_sse};

fn tools() -> Value {
    json!([
        {"name": "get_weather", "description": "Weather forecast", "input_schema": {"type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"],
            "x-toolfix": {"read_only": true}}},
        {"name": "send_money", "description": "Pay someone", "input_schema": {"type": "object",
            "properties": {"to": {"type": "string"}, "amount": {"type": "integer"}}, "required": ["to", "amount"]}},
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 1}
    ])
}

fn ask(text: &str) -> Value {
    json!({"model": "claude-fake", "max_tokens": 1024, "tools": tools(),
           "messages": [{"role": "user", "content": text}]})
}

fn message(content: Value, stop: &str) -> Value {
    json!({"id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-fake", "content": content,
           "stop_reason": stop, "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 20}})
}

/// What a client assembles from the events (as the SDK's message accumulator does).
fn assemble(body: &[u8]) -> Value {
    let text = String::from_utf8_lossy(body);
    let mut message = json!({});
    let mut blocks: Vec<Value> = Vec::new();
    let mut partial: Vec<String> = Vec::new();
    for event in text.split("\n\n").filter(|e| !e.trim().is_empty()) {
        assert!(event.starts_with("event: "), "every event has its name: {event}");
        let data: Value = serde_json::from_str(event.lines().find_map(|l| l.strip_prefix("data: ")).unwrap()).unwrap();
        let i = data["index"].as_u64().map(|i| usize::try_from(i).unwrap());
        match data["type"].as_str().unwrap() {
            "message_start" => message = data["message"].clone(),
            "content_block_start" => {
                assert_eq!(i, Some(blocks.len()), "blocks are numbered in order");
                blocks.push(data["content_block"].clone());
                partial.push(String::new());
            }
            "content_block_delta" => {
                let (b, d) = (&mut blocks[i.unwrap()], &data["delta"]);
                match d["type"].as_str().unwrap() {
                    "text_delta" => {
                        b["text"] = json!(format!("{}{}", b["text"].as_str().unwrap(), d["text"].as_str().unwrap()));
                    }
                    "thinking_delta" => {
                        b["thinking"] =
                            json!(format!("{}{}", b["thinking"].as_str().unwrap(), d["thinking"].as_str().unwrap()));
                    }
                    "signature_delta" => b["signature"] = d["signature"].clone(),
                    "citations_delta" => match b["citations"].as_array_mut() {
                        Some(list) => list.push(d["citation"].clone()),
                        None => b["citations"] = json!([d["citation"]]),
                    },
                    "input_json_delta" => {
                        let p = d["partial_json"].as_str().unwrap();
                        assert!(!p.is_empty(), "the proxy sends no empty partial_json");
                        partial[i.unwrap()].push_str(p);
                    }
                    other => panic!("unknown delta {other}"),
                }
            }
            "content_block_stop" => {
                let i = i.unwrap();
                if blocks[i]["type"] == "tool_use" {
                    let p = if partial[i].is_empty() { "{}" } else { &partial[i] };
                    blocks[i]["input"] = serde_json::from_str(p).unwrap();
                }
            }
            "message_delta" => {
                message["stop_reason"] = data["delta"]["stop_reason"].clone();
                message["x_toolfix"] = data["x_toolfix"].clone();
            }
            "message_stop" | "ping" => {}
            "error" => message["error"] = data["error"].clone(),
            other => panic!("unknown event {other}"),
        }
    }
    message["content"] = Value::Array(blocks);
    message
}

/// An upstream that answers with `m`, streamed when asked.
fn serving(m: Value) -> impl Fn(&Seen) -> Canned + Send + Sync + 'static {
    move |seen: &Seen| {
        if seen.json()["stream"] == true { Canned::Sse(vec![Bytes::from(messages_sse(&m))]) } else { Canned::json(&m) }
    }
}

async fn both(h: &common::Harness, request: &Value) -> (Value, Value) {
    let (status, _, body) = h.post_bytes("/v1/messages", request.to_string()).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let plain: Value = serde_json::from_slice(&body).unwrap();
    let mut r = request.clone();
    r["stream"] = json!(true);
    let (status, headers, body) = h.post_bytes("/v1/messages", r.to_string()).await;
    assert_eq!(status, 200);
    assert!(headers["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    (plain, assemble(&body))
}

/// The parts a client acts on.
fn essence(m: &Value) -> Value {
    let blocks: Vec<Value> = m["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| match b["type"].as_str().unwrap() {
            "text" => json!({"text": b["text"]}),
            "tool_use" => json!({"tool_use": [b["id"], b["name"], b["input"]]}),
            "thinking" => json!({"thinking": b["thinking"], "signature": b["signature"]}),
            _ => b.clone(),
        })
        .collect();
    json!({"content": blocks, "stop_reason": m["stop_reason"]})
}

/// `m` from an upstream that sends it whole when not streamed and streamed in two pieces
/// cut at every 7th byte: the streamed answer, whole and at each cut, reads as the plain
/// one, which is returned.
async fn streamed_as_plain_at_every_cut(m: &Value) -> Value {
    let body = messages_sse(m);
    let current: Arc<Mutex<Vec<Bytes>>> = Arc::new(Mutex::new(vec![Bytes::from(body.clone())]));
    let pieces = current.clone();
    let plain_answer = m.clone();
    let h = start(move |seen: &Seen| {
        if seen.json()["stream"] == true {
            Canned::Sse(pieces.lock().unwrap().clone())
        } else {
            Canned::json(&plain_answer)
        }
    })
    .await;
    let (plain, whole) = both(&h, &ask("go")).await;
    assert_eq!(essence(&whole), essence(&plain));
    let mut r = ask("go");
    r["stream"] = json!(true);
    for cut in (1..body.len()).step_by(7) {
        if !body.is_char_boundary(cut) {
            continue;
        }
        *current.lock().unwrap() = vec![Bytes::from(body[..cut].to_owned()), Bytes::from(body[cut..].to_owned())];
        let (_, _, got) = h.post_bytes("/v1/messages", r.to_string()).await;
        assert_eq!(essence(&assemble(&got)), essence(&plain), "cut at {cut}");
    }
    plain
}

#[tokio::test]
async fn a_call_in_text_becomes_a_tool_use_block_streamed_and_not() {
    let text = "Let me check.\n<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}</tool_call>";
    let h = start(serving(message(json!([{"type": "text", "text": text}]), "end_turn"))).await;
    let (plain, streamed) = both(&h, &ask("weather")).await;
    let content = plain["content"].as_array().unwrap();
    assert_eq!(content[0], json!({"type": "text", "text": "Let me check.\n"}));
    assert_eq!(content[1]["type"], "tool_use");
    assert!(content[1]["id"].as_str().unwrap().starts_with("toolu_"));
    assert_eq!(content[1]["input"], json!({"city": "Paris", "days": 3}));
    assert_eq!(plain["stop_reason"], "tool_use");
    assert_eq!(plain["x_toolfix"]["calls"][0]["outcome"], "repaired");
    assert_eq!(essence(&streamed), essence(&plain));
    assert_eq!(streamed["x_toolfix"]["calls"][0]["outcome"], "repaired");
}

#[tokio::test]
async fn broken_tool_use_input_is_repaired_and_thinking_is_untouched() {
    let m = message(
        json!([{"type": "thinking", "thinking": "The user wants Paris.", "signature": "sig-abc"},
               {"type": "text", "text": "Checking."},
               {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": "{\"city\": \"Paris\", \"days\": \"3\",}"}]),
        "tool_use",
    );
    let h = start(serving(m)).await;
    let (plain, streamed) = both(&h, &ask("weather")).await;
    let content = plain["content"].as_array().unwrap();
    assert_eq!(content[0], json!({"type": "thinking", "thinking": "The user wants Paris.", "signature": "sig-abc"}));
    assert_eq!(
        content[2],
        json!({"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris", "days": 3}})
    );
    assert_eq!(essence(&streamed), essence(&plain));
}

#[tokio::test]
async fn an_untouched_answer_is_the_upstreams_bytes() {
    let m = message(
        json!([{"type": "text", "text": "Checking."},
               {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}}]),
        "tool_use",
    );
    let bytes = m.to_string();
    let h = start(serving(m)).await;
    let (status, headers, body) = h.post_bytes("/v1/messages", ask("weather").to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(body, bytes.as_bytes());
    assert!(headers["x-toolfix"].to_str().unwrap().starts_with("untouched=1"));
}

#[tokio::test]
async fn a_call_cut_by_max_tokens_is_not_run_and_the_turn_says_why() {
    let m = message(
        json!([{"type": "text", "text": "Paying.<tool_call>{\"name\": \"send_money\", \"arguments\": {\"to\": \"bob\", \"amount\": 5"}]),
        "max_tokens",
    );
    let h = common::start_with(serving(m), |c| {
        c.max_reprompts = 0;
        c.length_recovery = toolfix_proxy::LengthRecovery::Off;
    })
    .await;
    let (plain, streamed) = both(&h, &ask("pay bob")).await;
    let content = plain["content"].as_array().unwrap();
    assert_eq!(content.len(), 1);
    let text = content[0]["text"].as_str().unwrap();
    assert!(text.starts_with("Paying.\n\n[toolfix] "), "{text}");
    assert_eq!(plain["stop_reason"], "max_tokens");
    assert_eq!(essence(&streamed), essence(&plain));
}

#[tokio::test]
async fn streamed_equals_not_streamed_at_every_chunk_boundary() {
    let m = message(
        json!([{"type": "thinking", "thinking": "Hmm.", "signature": "s1"},
               {"type": "text", "text": "Sure. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call> Done."},
               {"type": "tool_use", "id": "toolu_9", "name": "send_money", "input": "{'to': 'bob', 'amount': '5'}"}]),
        "tool_use",
    );
    let plain = streamed_as_plain_at_every_cut(&m).await;
    assert_eq!(plain["content"].as_array().unwrap().iter().filter(|b| b["type"] == "tool_use").count(), 2);
}

#[tokio::test]
async fn the_history_is_repaired_before_it_is_forwarded() {
    let h = start(serving(message(json!([{"type": "text", "text": "ok"}]), "end_turn"))).await;
    let request = json!({"model": "claude-fake", "max_tokens": 100, "tools": tools(), "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "get_weather", "input": "{\"city\": \"Rome\"}"},
                                          {"type": "tool_use", "id": "b", "name": "get_weather", "input": {"city": "Oslo"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "sunny"},
                                     {"type": "tool_result", "tool_use_id": "zz", "content": "stray"}]}]});
    let (status, headers, _) = h.post_bytes("/v1/messages", request.to_string()).await;
    assert_eq!(status, 200);
    let sent = h.upstream.requests()[0].json();
    assert_eq!(sent["messages"][1]["content"][0]["input"], json!({"city": "Rome"}));
    let ids: Vec<&str> =
        sent["messages"][2]["content"].as_array().unwrap().iter().map(|b| b["tool_use_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["b", "a"]);
    // Input decoded, orphan dropped, missing result added.
    assert!(headers["x-toolfix"].to_str().unwrap().ends_with("history=3"), "{headers:?}");
}

#[tokio::test]
async fn a_refused_call_is_reprompted_with_tool_results_and_the_failed_tool_forced() {
    let n = Arc::new(Mutex::new(0));
    let h = start(move |_: &Seen| {
        let mut k = n.lock().unwrap();
        *k += 1;
        if *k == 1 {
            Canned::json(&message(json!([{"type": "tool_use", "id": "toolu_1", "name": "send_money", "input": {"to": "bob"}}]), "tool_use"))
        } else {
            Canned::json(&message(json!([{"type": "tool_use", "id": "toolu_2", "name": "send_money", "input": {"to": "bob", "amount": 3}}]), "tool_use"))
        }
    })
    .await;
    let (status, _, body) = h.post_bytes("/v1/messages", ask("pay bob 3").to_string()).await;
    assert_eq!(status, 200);
    let plain: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(plain["content"][0]["input"], json!({"to": "bob", "amount": 3}));
    assert_eq!(plain["x_toolfix"]["calls"][0]["outcome"], "reprompted");
    let second = h.upstream.requests()[1].json();
    let last = second["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"][0]["type"], "tool_result");
    assert_eq!(last["content"][0]["tool_use_id"], "toolu_1");
    assert!(last["content"][0]["content"].as_str().unwrap().contains("/amount"));
    assert_eq!(second["tool_choice"], json!({"type": "tool", "name": "send_money"}));
}

#[tokio::test]
async fn an_upstream_that_refuses_a_named_tool_choice_is_asked_without_it_and_not_again() {
    let h = start(move |seen: &Seen| {
        let body = seen.json();
        if body["tool_choice"]["type"] == "tool" {
            return Canned::status(400, &[], "{\"type\": \"error\", \"error\": {\"type\": \"invalid_request_error\", \"message\": \"tool_choice\"}}");
        }
        let last = body["messages"].as_array().unwrap().last().unwrap().clone();
        if last["role"] == "user" && last["content"].is_string() {
            Canned::json(&message(json!([{"type": "tool_use", "id": "toolu_1", "name": "send_money", "input": {"to": "bob"}}]), "tool_use"))
        } else {
            Canned::json(&message(json!([{"type": "tool_use", "id": "toolu_2", "name": "send_money", "input": {"to": "bob", "amount": 3}}]), "tool_use"))
        }
    })
    .await;
    for round in 0..2 {
        let (status, _, body) = h.post_bytes("/v1/messages", ask("pay bob 3").to_string()).await;
        assert_eq!(status, 200);
        let plain: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(plain["content"][0]["input"], json!({"to": "bob", "amount": 3}), "round {round}");
    }
    let forced: Vec<bool> = h.upstream.requests().iter().map(|r| r.json()["tool_choice"]["type"] == "tool").collect();
    // First request: the call, the forced re-prompt (400), the re-prompt without; the
    // second request does not force again.
    assert_eq!(forced, [false, true, false, false, false]);
}

#[tokio::test]
async fn a_stream_that_breaks_ends_with_one_error_event_in_anthropics_shape() {
    let m = message(json!([{"type": "text", "text": "Checking <tool_call>{\"name\": \"get_weather\""}]), "end_turn");
    let body = messages_sse(&m);
    // Cut inside the text: the upstream goes away mid-answer.
    let cut = body.find("content_block_stop").unwrap();
    let head = Bytes::from(body[..cut].rsplit_once("\n\n").unwrap().0.to_owned() + "\n\n");
    let gate = Arc::new(tokio::sync::Notify::new());
    let open = gate.clone();
    let h = start(move |_: &Seen| Canned::SseThenBreak(vec![head.clone()], Some(gate.clone()))).await;
    let mut r = ask("x");
    r["stream"] = json!(true);
    let response = h.client.post(h.url("/v1/messages")).body(r.to_string()).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let mut stream = response.bytes_stream();
    let mut got = Vec::new();
    // The text before the markup arrives; then the upstream breaks.
    while !String::from_utf8_lossy(&got).contains("\"ing \"") {
        got.extend_from_slice(&futures_util::StreamExt::next(&mut stream).await.unwrap().unwrap());
    }
    open.notify_one();
    while let Some(piece) = futures_util::StreamExt::next(&mut stream).await {
        got.extend_from_slice(&piece.unwrap());
    }
    let text = String::from_utf8_lossy(&got);
    assert!(!text.contains("tool_call"), "{text}");
    if text.contains("event: error") {
        assert_eq!(text.matches("event: error").count(), 1, "{text}");
        let data = text.split("event: error\ndata: ").nth(1).unwrap().split("\n\n").next().unwrap();
        let e: Value = serde_json::from_str(data).unwrap();
        assert_eq!(e["type"], "error");
        assert!(e["error"]["type"].is_string() && e["error"]["message"].is_string(), "{e}");
    } else {
        // The break came before the first event: an HTTP error in Anthropic's shape.
        panic!("no error event: {text}");
    }
}

/// The mark the proxy puts in the `signature` of a thinking block it wrote (the API
/// reference requires the field; the proxy cannot sign).
const PROXY_SIGNATURE: &str = "toolfix-unsigned";

#[tokio::test]
async fn reasoning_moved_out_of_the_text_comes_back_as_a_thinking_block() {
    // A local model behind an Anthropic-compatible server writes its reasoning in the text.
    let text = "<think>The user wants Paris.</think>Checking.<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>";
    let h = start(serving(message(json!([{"type": "text", "text": text}]), "end_turn"))).await;
    let (plain, streamed) = both(&h, &ask("weather")).await;
    let content = plain["content"].as_array().unwrap();
    assert_eq!(
        content[0],
        json!({"type": "thinking", "thinking": "The user wants Paris.", "signature": PROXY_SIGNATURE}),
        "{plain}"
    );
    assert_eq!(content[1], json!({"type": "text", "text": "Checking."}));
    assert_eq!(content[2]["type"], "tool_use");
    assert_eq!(content[2]["input"], json!({"city": "Paris"}));
    assert_eq!(essence(&streamed), essence(&plain));
}

#[tokio::test]
async fn moved_reasoning_without_a_call_comes_back_after_the_upstreams_thinking() {
    let m = message(
        json!([{"type": "thinking", "thinking": "Signed.", "signature": "sig-abc"},
               {"type": "text", "text": "<think>Just greet.</think>Hello!"}]),
        "end_turn",
    );
    let h = start(serving(m)).await;
    let (plain, streamed) = both(&h, &ask("hi")).await;
    let content = plain["content"].as_array().unwrap();
    assert_eq!(content.len(), 3, "{plain}");
    assert_eq!(content[0], json!({"type": "thinking", "thinking": "Signed.", "signature": "sig-abc"}));
    assert_eq!(content[1], json!({"type": "thinking", "thinking": "Just greet.", "signature": PROXY_SIGNATURE}));
    assert_eq!(content[2], json!({"type": "text", "text": "Hello!"}));
    assert_eq!(plain["stop_reason"], "end_turn");
    assert_eq!(essence(&streamed), essence(&plain));
}

#[tokio::test]
async fn a_call_left_in_a_think_block_is_found_and_the_block_comes_back() {
    let text = "<think>I will call <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\", \"days\": \"2\"}}</tool_call></think>";
    let h = start(serving(message(json!([{"type": "text", "text": text}]), "end_turn"))).await;
    let (plain, streamed) = both(&h, &ask("weather")).await;
    let content = plain["content"].as_array().unwrap();
    assert_eq!(content[0]["type"], "thinking", "{plain}");
    assert_eq!(content[0]["signature"], PROXY_SIGNATURE);
    let call = content.iter().find(|b| b["type"] == "tool_use").unwrap();
    assert_eq!(call["input"], json!({"city": "Oslo", "days": 2}));
    assert_eq!(plain["stop_reason"], "tool_use");
    assert_eq!(essence(&streamed), essence(&plain));
}

#[tokio::test]
async fn moved_reasoning_streamed_equals_not_streamed_at_every_chunk_boundary() {
    let m = message(
        json!([{"type": "thinking", "thinking": "Hmm.", "signature": "s1"},
               {"type": "text", "text": "<think>Oslo, then pay.</think>Sure. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>"},
               {"type": "tool_use", "id": "toolu_9", "name": "send_money", "input": "{'to': 'bob', 'amount': '5'}"}]),
        "tool_use",
    );
    let plain = streamed_as_plain_at_every_cut(&m).await;
    assert_eq!(
        plain["content"][1],
        json!({"type": "thinking", "thinking": "Oslo, then pay.", "signature": PROXY_SIGNATURE})
    );
}

#[tokio::test]
async fn a_thinking_block_the_proxy_wrote_is_dropped_from_the_history() {
    let h = start(serving(message(json!([{"type": "text", "text": "ok"}]), "end_turn"))).await;
    let signed = json!({"type": "thinking", "thinking": "Signed.", "signature": "sig-abc"});
    let request = json!({"model": "claude-fake", "max_tokens": 100, "tools": tools(), "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [
            signed,
            {"type": "thinking", "thinking": "Moved.", "signature": PROXY_SIGNATURE},
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "a", "name": "get_weather", "input": {"city": "Rome"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "sunny"}]},
        // Alone in its turn: kept (an empty turn would be refused too).
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "Only.", "signature": PROXY_SIGNATURE}]},
        {"role": "user", "content": "and?"}]});
    let (status, headers, _) = h.post_bytes("/v1/messages", request.to_string()).await;
    assert_eq!(status, 200);
    let sent = h.upstream.requests()[0].json();
    let turn = sent["messages"][1]["content"].as_array().unwrap();
    assert_eq!(turn.len(), 3);
    assert_eq!(turn[0], signed, "a signed thinking block is untouched");
    assert_eq!(turn[1]["type"], "text");
    assert_eq!(sent["messages"][3]["content"][0]["signature"], PROXY_SIGNATURE);
    assert!(headers["x-toolfix"].to_str().unwrap().ends_with("history=1"), "{headers:?}");
}

#[tokio::test]
async fn reasoning_moved_after_text_went_out_streams_after_the_text() {
    // Streamed, text already sent cannot be taken back: the thinking block comes after it
    // (not streamed, before it); nothing is lost or sent twice.
    let m = message(json!([{"type": "text", "text": "Hello there. <think>Was that rude?</think>"}]), "end_turn");
    let h = start(serving(m)).await;
    let (plain, streamed) = both(&h, &ask("hi")).await;
    let thinking = json!({"thinking": "Was that rude?", "signature": PROXY_SIGNATURE});
    let plain_blocks = essence(&plain)["content"].as_array().unwrap().clone();
    let streamed_blocks = essence(&streamed)["content"].as_array().unwrap().clone();
    assert_eq!(plain_blocks.len(), 2, "{plain}");
    assert_eq!(plain_blocks[0], thinking);
    assert_eq!(streamed_blocks, [plain_blocks[1].clone(), thinking]);
}

#[tokio::test]
async fn two_thinking_blocks_are_read_alike_streamed_and_not() {
    // The blocks' texts are read joined by a newline both ways (the stream feeds the
    // newline between blocks): a call that ends the first block, with prose in the second,
    // is a call shown in prose, never used, streamed and not.
    let m = message(
        json!([{"type": "thinking", "thinking": "Plan: <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>", "signature": "s1"},
               {"type": "thinking", "thinking": "No, ask first.", "signature": "s2"},
               {"type": "text", "text": "Which city?"}]),
        "end_turn",
    );
    let bytes = m.to_string();
    let h = start(serving(m)).await;
    let (status, _, body) = h.post_bytes("/v1/messages", ask("weather").to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(body, bytes.as_bytes(), "left alone");
    let (plain, streamed) = both(&h, &ask("weather")).await;
    assert!(plain["content"].as_array().unwrap().iter().all(|b| b["type"] != "tool_use"));
    assert_eq!(essence(&streamed), essence(&plain));
}

#[tokio::test]
async fn a_reprompted_answer_streams_its_moved_reasoning_only_when_none_went_out() {
    // First a refused call after reasoning in the text; the re-prompt's answer has its own.
    let first = message(
        json!([{"type": "text", "text": "<think>Pay him.</think><tool_call>{\"name\": \"send_money\", \"arguments\": {\"to\": \"bob\"}}</tool_call>"}]),
        "end_turn",
    );
    let second = message(
        json!([{"type": "text", "text": "<think>Now with the amount.</think><tool_call>{\"name\": \"send_money\", \"arguments\": {\"to\": \"bob\", \"amount\": 3}}</tool_call>"}]),
        "end_turn",
    );
    let h = start(move |seen: &Seen| {
        let m = if seen.json()["messages"].as_array().unwrap().len() == 1 { &first } else { &second };
        if seen.json()["stream"] == true { Canned::Sse(vec![Bytes::from(messages_sse(m))]) } else { Canned::json(m) }
    })
    .await;
    let (plain, streamed) = both(&h, &ask("pay bob 3")).await;
    // Not streamed: the answer given is the re-prompt's, with its reasoning.
    let content = plain["content"].as_array().unwrap();
    assert_eq!(content[0]["thinking"], "Now with the amount.", "{plain}");
    assert_eq!(content[1]["input"], json!({"to": "bob", "amount": 3}));
    // Streamed: the first attempt's reasoning went out as it came; the re-prompt's is not
    // sent after it (as `reasoning_content` in Chat Completions).
    let blocks = streamed["content"].as_array().unwrap();
    let thinking: Vec<&Value> = blocks.iter().filter(|b| b["type"] == "thinking").collect();
    assert_eq!(thinking.len(), 1, "{streamed}");
    assert_eq!(thinking[0]["thinking"], "Pay him.");
    assert_eq!(thinking[0]["signature"], PROXY_SIGNATURE);
    let call = blocks.iter().find(|b| b["type"] == "tool_use").unwrap();
    assert_eq!(call["input"], json!({"to": "bob", "amount": 3}));
}

#[tokio::test]
async fn a_reprompted_answer_streams_its_moved_reasoning_when_nothing_went_out() {
    // First a refused server call (nothing goes out before it is decided); the re-prompt's
    // answer writes its reasoning in the text.
    let first = message(
        json!([{"type": "tool_use", "id": "toolu_1", "name": "send_money", "input": {"to": "bob"}}]),
        "tool_use",
    );
    let second = message(
        json!([{"type": "text", "text": "<think>Now with the amount.</think><tool_call>{\"name\": \"send_money\", \"arguments\": {\"to\": \"bob\", \"amount\": 3}}</tool_call>"}]),
        "end_turn",
    );
    let h = start(move |seen: &Seen| {
        let m = if seen.json()["messages"].as_array().unwrap().len() == 1 { &first } else { &second };
        if seen.json()["stream"] == true { Canned::Sse(vec![Bytes::from(messages_sse(m))]) } else { Canned::json(m) }
    })
    .await;
    let (plain, streamed) = both(&h, &ask("pay bob 3")).await;
    let thinking = json!({"type": "thinking", "thinking": "Now with the amount.", "signature": PROXY_SIGNATURE});
    assert_eq!(plain["content"][0], thinking, "{plain}");
    assert_eq!(plain["content"][1]["input"], json!({"to": "bob", "amount": 3}));
    assert_eq!(essence(&streamed), essence(&plain));
}

/// A citation of a text block (docs.anthropic.com, "Citations": a plain text document's
/// `char_location`).
fn citation(text: &str) -> Value {
    json!({"type": "char_location", "cited_text": text, "document_index": 0, "document_title": "Forecast",
           "start_char_index": 0, "end_char_index": text.len()})
}

/// Regression (issue 21): a repaired call's block and a text block kept as it was keep
/// every member the upstream gave (`caller`, `cache_control`, `citations`), streamed and
/// not; nothing is reported dropped.
#[tokio::test]
async fn members_of_a_repaired_answer_are_kept_streamed_and_not() {
    let m = message(
        json!([{"type": "text", "text": "Checking.", "citations": [citation("Paris is sunny")]},
               {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": "{\"city\": \"Paris\", \"days\": \"3\"}",
                "caller": {"type": "direct"}, "cache_control": {"type": "ephemeral"}}]),
        "tool_use",
    );
    let h = start(serving(m.clone())).await;
    let (plain, streamed) = both(&h, &ask("weather")).await;
    let mut want = m["content"].clone();
    want[1]["input"] = json!({"city": "Paris", "days": 3});
    assert_eq!(plain["content"], want);
    assert_eq!(streamed["content"], want);
    assert_eq!(plain["x_toolfix"]["calls"][0]["outcome"], "repaired");
    assert!(plain["x_toolfix"].get("dropped").is_none(), "{plain}");
    assert!(streamed["x_toolfix"].get("dropped").is_none(), "{streamed}");
}

/// Regression (issue 21): a text block whose text the proxy changes (a call taken out of
/// it) keeps its members but its `citations`, which point at the text as it was: dropped
/// and reported (`x_toolfix.dropped`), streamed and not.
#[tokio::test]
async fn citations_of_text_that_changed_are_dropped_and_reported() {
    let text =
        "Let me check.\n<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>";
    let m = message(
        json!([{"type": "text", "text": text, "citations": [citation("Paris")], "x_label": "kept"}]),
        "end_turn",
    );
    let h = start(serving(m)).await;
    let (plain, streamed) = both(&h, &ask("weather")).await;
    assert_eq!(plain["content"][0], json!({"type": "text", "text": "Let me check.\n", "x_label": "kept"}));
    assert_eq!(plain["content"][1]["type"], "tool_use");
    let dropped = json!([{"block": 0, "member": "citations", "reason": "text_changed"}]);
    assert_eq!(plain["x_toolfix"]["dropped"], dropped);
    assert_eq!(streamed["content"][0], plain["content"][0]);
    assert_eq!(essence(&streamed), essence(&plain));
    assert_eq!(streamed["x_toolfix"]["dropped"], dropped);
}

/// Regression (issue 21): text blocks joined into one (the first keeps its members, its
/// citations dropped: its text changed; the second's have no block left) and a call whose
/// name was resolved (its `toolset_name`, the family of the name as written, dropped; its
/// `caller` kept): each member dropped is reported, streamed and not. The message's own
/// members (its id, usage, one the proxy does not know) are kept.
#[tokio::test]
async fn members_of_joined_blocks_and_of_a_renamed_call_are_reported() {
    let mut m = message(
        json!([{"type": "text", "text": "Part one. ", "citations": [citation("one")]},
               {"type": "text", "text": "Part two.", "citations": [citation("two")]},
               {"type": "tool_use", "id": "toolu_01", "name": "GetWeather", "input": {"city": "Paris"},
                "toolset_name": "weather", "caller": {"type": "direct"}}]),
        "tool_use",
    );
    m["container"] = json!({"id": "container_1"});
    let h = start(serving(m.clone())).await;
    let (plain, streamed) = both(&h, &ask("weather")).await;
    for key in ["id", "model", "usage", "container"] {
        assert_eq!(plain[key], m[key], "{key}");
    }
    assert_eq!(streamed["container"], m["container"]);
    assert_eq!(
        plain["content"],
        json!([{"type": "text", "text": "Part one. Part two."},
               {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"},
                "caller": {"type": "direct"}}])
    );
    let dropped = json!([{"block": 0, "member": "citations", "reason": "text_changed"},
                         {"block": 1, "member": "citations", "reason": "merged"},
                         {"block": 2, "member": "toolset_name", "reason": "renamed"}]);
    assert_eq!(plain["x_toolfix"]["dropped"], dropped);
    assert_eq!(streamed["content"], plain["content"]);
    assert_eq!(streamed["x_toolfix"]["dropped"], dropped);
}

/// Regression (issue 21): streamed, the citations of an untouched answer's text block
/// were dropped without a word (the proxy sends the text in a block of its own); they come
/// as `citations_delta`s now. Several text blocks go out as one block in a stream: their
/// citations, which belong to each block's own text, are dropped then, and reported.
#[tokio::test]
async fn a_stream_keeps_the_citations_of_its_one_text_block_and_reports_those_it_joins() {
    let one =
        message(json!([{"type": "text", "text": "Paris is sunny.", "citations": [citation("sunny")]}]), "end_turn");
    let h = start(serving(one.clone())).await;
    let (plain, streamed) = both(&h, &ask("weather")).await;
    assert_eq!(plain["content"], one["content"]);
    assert_eq!(streamed["content"], one["content"]);
    assert!(streamed["x_toolfix"].get("dropped").is_none(), "{streamed}");

    let two = message(
        json!([{"type": "text", "text": "Part one. ", "citations": [citation("one")]},
               {"type": "text", "text": "Part two.", "citations": [citation("two")]}]),
        "end_turn",
    );
    let h = start(serving(two.clone())).await;
    let (plain, streamed) = both(&h, &ask("weather")).await;
    assert_eq!(plain["content"], two["content"]);
    assert_eq!(streamed["content"], json!([{"type": "text", "text": "Part one. Part two."}]));
    let note = json!({"member": "citations", "reason": "streamed"});
    assert_eq!(streamed["x_toolfix"]["dropped"], json!([note, note]));
}
