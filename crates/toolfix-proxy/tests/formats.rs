//! Every format case of the library's corpus (`crates/toolfix/tests/fixtures/formats/`,
//! real model output in 40 formats) as an upstream answer, through the proxy: the calls
//! and prose it returns are what `fix_reply` gives for that reply, and the streamed answer
//! (content in small pieces, server calls in deltas) assembles to the same thing. The same
//! cases as OpenAI Responses answers (reasoning in a `reasoning` item, content in a
//! `message` item, server calls as `function_call` items): streamed equals not streamed,
//! reasoning moved out of the text included.

#![expect(clippy::unwrap_used, reason = "tests")]

mod common;

use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use toolfix::{FixOptions, Reply, ToolSet, fix_reply};
use toolfix_proxy::fake::{Canned, Seen, completion, responses_sse};

const FILES: [&str; 3] = ["cases.jsonl", "own_cases.jsonl", "own_markup_cases.jsonl"];

struct Case {
    id: String,
    message: Value,
    tools: Value,
}

fn cases() -> Vec<Case> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../toolfix/tests/fixtures/formats/");
    let mut out = Vec::new();
    for file in FILES {
        let text = std::fs::read_to_string(format!("{dir}{file}")).unwrap();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let row: Value = serde_json::from_str(line).unwrap();
            let input = &row["input"];
            let mut message = json!({"role": "assistant", "content": input["content"]});
            if let Some(r) = input["reasoning_content"].as_str() {
                message["reasoning_content"] = json!(r);
            }
            if let Some(calls) = input.get("tool_calls").filter(|c| c.is_array()) {
                message["tool_calls"] = calls.clone();
            }
            // The case's tools, or a schema-less tool per expected call (and one more, so
            // that a case without calls still offers tools).
            let mut tools: Vec<Value> = row["tools"].as_array().cloned().unwrap_or_default();
            if tools.is_empty() {
                for c in row["expected"]["tool_calls"].as_array().into_iter().flatten() {
                    let name = c["name"].as_str().unwrap_or("unnamed");
                    if !tools.iter().any(|t| t["function"]["name"] == name) {
                        tools.push(
                            json!({"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}),
                        );
                    }
                }
            }
            tools.push(
                json!({"type": "function", "function": {"name": "toolfix_noop", "parameters": {"type": "object"}}}),
            );
            out.push(Case { id: row["id"].as_str().unwrap().to_owned(), message, tools: Value::Array(tools) });
        }
    }
    out
}

/// The reply as stream chunks: reasoning and content in pieces of 7 bytes (on character
/// boundaries), server calls as a head delta and argument pieces.
fn chunks(message: &Value, finish: &str) -> Vec<Value> {
    let head = |delta: Value, finish: Value| {
        json!({"id": "f", "object": "chat.completion.chunk", "created": 1, "model": "fake-model",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut out = vec![head(json!({"role": "assistant"}), Value::Null)];
    for key in ["reasoning_content", "content"] {
        if let Some(text) = message[key].as_str() {
            for piece in pieces(text, 7) {
                out.push(head(json!({ key: piece }), Value::Null));
            }
        }
    }
    for (i, call) in message["tool_calls"].as_array().into_iter().flatten().enumerate() {
        let f = call.get("function").unwrap_or(call);
        let args = match &f["arguments"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let mut first = json!({"index": i, "type": "function", "function": {"name": f["name"], "arguments": ""}});
        if let Some(id) = call.get("id") {
            first["id"] = id.clone();
        }
        out.push(head(json!({"tool_calls": [first]}), Value::Null));
        for piece in pieces(&args, 5) {
            out.push(head(json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}), Value::Null));
        }
    }
    out.push(head(json!({}), json!(finish)));
    out
}

fn pieces(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

#[tokio::test]
async fn every_format_case_through_the_proxy_streaming_and_not() {
    let current: Arc<Mutex<Value>> = Arc::new(Mutex::new(Value::Null));
    let reply = current.clone();
    let script = move |seen: &Seen| {
        let message = reply.lock().unwrap().clone();
        if seen.json()["stream"] == true {
            Canned::sse(&chunks(&message, "stop"))
        } else {
            Canned::json(&completion(&message, "stop"))
        }
    };
    let h = common::start_with(script, |c| c.max_reprompts = 0).await;
    let mut streamed_differ = Vec::new();
    let all = cases();
    assert!(all.len() > 400);
    for case in &all {
        *current.lock().unwrap() = case.message.clone();
        let history = json!([{"role": "user", "content": "go"}]);
        let request = json!({"model": "m", "messages": history, "tools": case.tools});
        // What the library says.
        let (tools, _) = ToolSet::new_partial(case.tools.as_array().unwrap());
        let choice = json!({"message": case.message, "finish_reason": "stop"});
        let fixed =
            fix_reply(&Reply::from_choice(&choice), Some(&tools), Some(&history), &FixOptions::default()).unwrap();
        let expected: Vec<(String, String, String)> = fixed
            .calls
            .iter()
            .filter(|c| c.status.is_usable())
            .map(|c| (c.id.clone(), c.name.clone(), c.arguments_text().unwrap().to_owned()))
            .collect();
        // Not streaming.
        let (status, _, body) = h.chat(&request).await;
        assert_eq!(status, 200, "{}", case.id);
        let message = &body["choices"][0]["message"];
        let got: Vec<(String, String, String)> = message["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                (
                    c["id"].as_str().unwrap().to_owned(),
                    c["function"]["name"].as_str().unwrap().to_owned(),
                    c["function"]["arguments"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        assert_eq!(got, expected, "{}", case.id);
        // A call that cannot be used is left out, and the text says why.
        let gave_up = fixed.calls.iter().any(|c| !c.status.is_usable());
        let content = if gave_up { fixed.gave_up(&fixed.content) } else { fixed.content.clone() };
        assert_eq!(message["content"].as_str().unwrap_or(""), content, "{}", case.id);
        let finish = body["choices"][0]["finish_reason"].as_str().unwrap();
        // A reply the proxy leaves alone keeps the upstream's own finish reason (here "stop").
        let reply = Reply::from_choice(&choice);
        let natives = reply.tool_calls.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let untouched = !fixed.changed_calls()
            && fixed.calls.iter().all(|c| c.status.is_usable())
            && fixed.calls.len() == natives.len()
            && fixed.calls.iter().all(|c| {
                natives.iter().any(|o| {
                    o["id"] == c.id.as_str()
                        && o["function"]["name"] == c.name.as_str()
                        && o["function"]["arguments"].as_str() == c.arguments_text()
                })
            })
            && reply.content == fixed.content
            && reply.reasoning_content == fixed.reasoning_content.as_deref();
        let want = if expected.is_empty() || untouched { "stop" } else { "tool_calls" };
        assert_eq!(finish, want, "{}", case.id);
        // Streaming.
        let (status, _, seen) = h.stream(&request).await;
        assert_eq!(status, 200, "{}", case.id);
        assert_eq!(seen.calls, expected, "{} (streamed)", case.id);
        assert_eq!(seen.finish.as_deref(), Some(finish), "{} (streamed)", case.id);
        let reasoning = message["reasoning_content"].as_str().unwrap_or("");
        if seen.content != content || seen.reasoning != reasoning {
            // Only where the text sent as content turned out to be reasoning.
            assert_eq!(seen.report["content_was_reasoning"], true, "{}: {:?}", case.id, seen.content);
            streamed_differ.push(case.id.clone());
        }
        assert!(seen.done, "{}", case.id);
    }
    // Forced-open reasoning rows (R1, Qwen3, Kimi: the template opens `<think>`), one or
    // two per family.
    println!("{} cases, streamed differs from plain on {}: {streamed_differ:?}", all.len(), streamed_differ.len());
    assert!(streamed_differ.len() < 20, "{streamed_differ:?}");
}

/// A case as an OpenAI Responses answer, and its tools as Responses tools.
fn as_response(case: &Case) -> (Value, Value) {
    let m = &case.message;
    let mut output = Vec::new();
    if let Some(r) = m["reasoning_content"].as_str() {
        output.push(json!({"type": "reasoning", "id": "rs_1", "summary": [],
                           "content": [{"type": "reasoning_text", "text": r}]}));
    }
    if let Some(t) = m["content"].as_str().filter(|t| !t.is_empty()) {
        output.push(json!({"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                           "content": [{"type": "output_text", "text": t, "annotations": []}]}));
    }
    for (i, call) in m["tool_calls"].as_array().into_iter().flatten().enumerate() {
        let f = call.get("function").unwrap_or(call);
        let arguments = match &f["arguments"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let call_id = call.get("id").and_then(Value::as_str).map_or_else(|| format!("call_{i}"), str::to_owned);
        output.push(json!({"type": "function_call", "id": format!("fc_{i}"), "call_id": call_id, "name": f["name"],
                           "arguments": arguments, "status": "completed"}));
    }
    let response = json!({"id": "resp_case", "object": "response", "created_at": 1, "status": "completed",
                          "model": "m", "output": output});
    let tools: Vec<Value> = case
        .tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| json!({"type": "function", "name": t["function"]["name"], "parameters": t["function"]["parameters"]}))
        .collect();
    (response, Value::Array(tools))
}

/// The output a client acts on: message text, calls, reasoning items whole.
fn essence(r: &Value) -> Value {
    let items: Vec<Value> = r["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| match i["type"].as_str().unwrap() {
            "message" => json!({"text": i["content"][0]["text"]}),
            "function_call" => json!({"call": [i["call_id"], i["name"], i["arguments"]]}),
            _ => i.clone(),
        })
        .collect();
    Value::Array(items)
}

#[tokio::test]
async fn every_format_case_as_a_responses_answer_streamed_equals_not_streamed() {
    let current: Arc<Mutex<Value>> = Arc::new(Mutex::new(Value::Null));
    let reply = current.clone();
    let script = move |seen: &Seen| {
        let r = reply.lock().unwrap().clone();
        if seen.json()["stream"] == true { Canned::Sse(vec![responses_sse(&r).into()]) } else { Canned::json(&r) }
    };
    let h = common::start_with(script, |c| c.max_reprompts = 0).await;
    let mut streamed_differ = Vec::new();
    let mut moved = 0;
    let mut after_text = 0;
    let all = cases();
    for case in &all {
        let (response, tools) = as_response(case);
        *current.lock().unwrap() = response;
        let request = json!({"model": "m", "input": [{"role": "user", "content": "go"}], "tools": tools});
        let (status, _, body) = h.post_bytes("/v1/responses", request.to_string()).await;
        assert_eq!(status, 200, "{}", case.id);
        let plain: Value = serde_json::from_slice(&body).unwrap();
        // The proxy's reasoning item holds what the library moved out of the text.
        let (tools_set, _) = ToolSet::new_partial(case.tools.as_array().unwrap());
        let choice = json!({"message": case.message, "finish_reason": "stop"});
        let history = json!([{"role": "user", "content": "go"}]);
        let fixed =
            fix_reply(&Reply::from_choice(&choice), Some(&tools_set), Some(&history), &FixOptions::default()).unwrap();
        let own: Vec<&str> = plain["output"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["type"] == "reasoning" && i["id"].as_str().unwrap().starts_with("rs_toolfix"))
            .map(|i| i["content"][0]["text"].as_str().unwrap())
            .collect();
        if let Some(text) = own.first() {
            moved += 1;
            assert_eq!(own.len(), 1, "{}", case.id);
            // The library's reasoning is the reasoning item's text, a newline, what it moved.
            let all_reasoning = fixed.reasoning_content.as_deref().unwrap_or("");
            let want = match case.message["reasoning_content"].as_str() {
                Some(r) => all_reasoning.strip_prefix(r).and_then(|m| m.strip_prefix('\n')),
                None => Some(all_reasoning),
            };
            assert_eq!(want, Some(*text), "{}", case.id);
        }
        let mut streamed = request.clone();
        streamed["stream"] = json!(true);
        let (status, _, body) = h.post_bytes("/v1/responses", streamed.to_string()).await;
        assert_eq!(status, 200, "{}", case.id);
        let text = String::from_utf8_lossy(&body);
        let last = text.split("\n\n").filter(|e| e.contains("event: response.completed")).last().unwrap();
        let data: Value = serde_json::from_str(last.lines().find_map(|l| l.strip_prefix("data: ")).unwrap()).unwrap();
        let got = &data["response"];
        let (streamed_items, streamed_own) = without_own(&essence(got));
        let (plain_items, plain_own) = without_own(&essence(&plain));
        if streamed_items == plain_items && streamed_own == plain_own {
            // The same, or the proxy's reasoning item after the text: reasoning moved out of
            // the text after some text went out (text sent cannot be taken back).
            if essence(got) != essence(&plain) {
                after_text += 1;
            }
        } else {
            // Only where the text sent as content turned out to be reasoning.
            assert_eq!(got["x_toolfix"]["content_was_reasoning"], true, "{}: {got} vs {plain}", case.id);
            streamed_differ.push(case.id.clone());
        }
    }
    println!(
        "{} cases as Responses answers, {moved} with reasoning moved out of the text ({after_text} streamed after the text); streamed differs from plain on {}: {streamed_differ:?}",
        all.len(),
        streamed_differ.len()
    );
    assert!(moved > 20, "{moved}");
    assert!(streamed_differ.len() < 20, "{streamed_differ:?}");
}

/// The items without the proxy's reasoning items, and those items' text joined (streamed,
/// reasoning moved before and after some text goes out comes in two items).
fn without_own(items: &Value) -> (Vec<Value>, Option<String>) {
    let (own, rest): (Vec<Value>, Vec<Value>) = items
        .as_array()
        .unwrap()
        .iter()
        .cloned()
        .partition(|i| i["type"] == "reasoning" && i["id"].as_str().unwrap_or("").starts_with("rs_toolfix"));
    let text = (!own.is_empty()).then(|| own.iter().map(|i| i["content"][0]["text"].as_str().unwrap()).collect());
    (rest, text)
}
