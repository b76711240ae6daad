//! OpenAI Responses (`POST /v1/responses`) through the proxy, streamed and not. The wire
//! fixtures follow the public API reference (platform.openai.com: "Responses" for the
//! request and the response object, "Streaming events" for `response.created`,
//! `response.output_item.added`, `response.content_part.added`,
//! `response.output_text.delta`, `response.function_call_arguments.delta/.done`,
//! `response.output_item.done`, `response.completed`, each with its `sequence_number`).

#![expect(clippy::unwrap_used, clippy::needless_pass_by_value, reason = "tests")]

mod common;

use bytes::Bytes;
use common::start;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use toolfix_proxy::fake::{Canned, Seen, responses_sse};

fn tools() -> Value {
    json!([
        {"type": "function", "name": "get_weather", "description": "Weather forecast", "strict": false,
         "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"], "x-toolfix": {"read_only": true}}},
        {"type": "function", "name": "send_money", "description": "Pay someone",
         "parameters": {"type": "object", "properties": {"to": {"type": "string"}, "amount": {"type": "integer"}},
            "required": ["to", "amount"]}},
        {"type": "custom", "name": "apply_patch", "description": "Apply a patch",
         "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"}},
        {"type": "web_search"}
    ])
}

fn ask(text: &str) -> Value {
    json!({"model": "gpt-fake", "tools": tools(), "input": [{"role": "user", "content": text}]})
}

fn response(output: Value) -> Value {
    json!({"id": "resp_fake", "object": "response", "created_at": 1, "status": "completed", "model": "gpt-fake",
           "output": output, "usage": {"input_tokens": 10, "output_tokens": 20, "total_tokens": 30}})
}

fn text_item(text: &str) -> Value {
    json!({"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
           "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

fn call_item(id: &str, name: &str, arguments: &str) -> Value {
    json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": id, "name": name, "arguments": arguments,
           "status": "completed"})
}

/// What a client reads from the events: the final response, checking on the way that
/// sequence numbers and output indices are consistent, that the arguments agree in the
/// three places a client may read them, and that the proxy's reasoning items are their
/// `response.reasoning_text.delta`s.
fn assemble(body: &[u8]) -> Value {
    let text = String::from_utf8_lossy(body);
    let mut last_seq: Option<u64> = None;
    let mut done_args: Vec<(u64, String)> = Vec::new();
    let mut items: Vec<(u64, Value)> = Vec::new();
    let mut text_deltas = String::new();
    let mut reasoning_deltas: Vec<(String, String)> = Vec::new();
    let mut final_response = Value::Null;
    for event in text.split("\n\n").filter(|e| !e.trim().is_empty()) {
        let name = event.lines().find_map(|l| l.strip_prefix("event: ")).unwrap();
        let data: Value = serde_json::from_str(event.lines().find_map(|l| l.strip_prefix("data: ")).unwrap()).unwrap();
        assert_eq!(name, data["type"].as_str().unwrap());
        let seq = data["sequence_number"].as_u64().unwrap();
        assert!(last_seq.is_none_or(|l| seq == l + 1), "sequence numbers in order: {last_seq:?} then {seq}");
        last_seq = Some(seq);
        match name {
            "response.output_text.delta" => text_deltas.push_str(data["delta"].as_str().unwrap()),
            "response.reasoning_text.delta" => {
                let id = data["item_id"].as_str().unwrap().to_owned();
                let delta = data["delta"].as_str().unwrap();
                match reasoning_deltas.iter_mut().find(|(i, _)| *i == id) {
                    Some((_, text)) => text.push_str(delta),
                    None => reasoning_deltas.push((id, delta.to_owned())),
                }
            }
            "response.function_call_arguments.done" => {
                done_args
                    .push((data["output_index"].as_u64().unwrap(), data["arguments"].as_str().unwrap().to_owned()));
            }
            "response.output_item.done" => items.push((data["output_index"].as_u64().unwrap(), data["item"].clone())),
            "response.completed" | "response.incomplete" => final_response = data["response"].clone(),
            _ => {}
        }
    }
    assert!(!text.contains("[DONE]"));
    let output = final_response["output"].as_array().unwrap().clone();
    assert_eq!(output.len(), items.len(), "every item is done once");
    for (k, item) in &items {
        assert_eq!(&output[usize::try_from(*k).unwrap()], item, "item {k} as done and as completed");
        if item["type"] == "function_call" {
            let done = done_args.iter().find(|(i, _)| i == k).unwrap();
            assert_eq!(item["arguments"].as_str().unwrap(), done.1, "arguments agree");
        }
        let id = item["id"].as_str().unwrap_or("");
        if item["type"] == "reasoning" && id.starts_with(PROXY_REASONING_ID) {
            let deltas = reasoning_deltas.iter().find(|(i, _)| i == id).unwrap();
            assert_eq!(item["content"][0]["text"].as_str().unwrap(), deltas.1, "the deltas make the reasoning");
        }
    }
    let joined: String = output
        .iter()
        .filter(|i| i["type"] == "message")
        .map(|i| i["content"][0]["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(joined, text_deltas, "the deltas make the message text");
    final_response
}

fn serving(r: Value) -> impl Fn(&Seen) -> Canned + Send + Sync + 'static {
    move |seen: &Seen| {
        if seen.json()["stream"] == true { Canned::Sse(vec![Bytes::from(responses_sse(&r))]) } else { Canned::json(&r) }
    }
}

/// `first` to the client's request, `second` to what follows it (a re-prompt: its input
/// holds more than the one user item).
fn serving_then(first: Value, second: Value) -> impl Fn(&Seen) -> Canned + Send + Sync + 'static {
    let (first, second) = (serving(first), serving(second));
    move |seen: &Seen| if seen.json()["input"].as_array().unwrap().len() == 1 { first(seen) } else { second(seen) }
}

async fn both(h: &common::Harness, request: &Value) -> (Value, Value) {
    let (status, _, body) = h.post_bytes("/v1/responses", request.to_string()).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let plain: Value = serde_json::from_slice(&body).unwrap();
    let mut r = request.clone();
    r["stream"] = json!(true);
    let (status, _, body) = h.post_bytes("/v1/responses", r.to_string()).await;
    assert_eq!(status, 200);
    (plain, assemble(&body))
}

/// The output a client acts on (item ids of messages aside).
fn essence(r: &Value) -> Value {
    let items: Vec<Value> = r["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| match i["type"].as_str().unwrap() {
            "message" => json!({"text": i["content"][0]["text"]}),
            "function_call" => json!({"call": [i["id"], i["call_id"], i["name"], i["arguments"]]}),
            _ => i.clone(),
        })
        .collect();
    json!({"output": items, "status": r["status"]})
}

/// `r` from an upstream that sends it whole when not streamed and streamed in two pieces
/// cut at every 11th byte: the streamed answer, whole and at each cut, reads as the plain
/// one, which is returned.
async fn streamed_as_plain_at_every_cut(r: &Value) -> Value {
    let body = responses_sse(r);
    let current: Arc<Mutex<Vec<Bytes>>> = Arc::new(Mutex::new(vec![Bytes::from(body.clone())]));
    let pieces_now = current.clone();
    let plain_answer = r.clone();
    let h = start(move |seen: &Seen| {
        if seen.json()["stream"] == true {
            Canned::Sse(pieces_now.lock().unwrap().clone())
        } else {
            Canned::json(&plain_answer)
        }
    })
    .await;
    let (plain, whole) = both(&h, &ask("go")).await;
    assert_eq!(essence(&whole), essence(&plain));
    let mut req = ask("go");
    req["stream"] = json!(true);
    for cut in (1..body.len()).step_by(11) {
        if !body.is_char_boundary(cut) {
            continue;
        }
        *current.lock().unwrap() = vec![Bytes::from(body[..cut].to_owned()), Bytes::from(body[cut..].to_owned())];
        let (_, _, got) = h.post_bytes("/v1/responses", req.to_string()).await;
        assert_eq!(essence(&assemble(&got)), essence(&plain), "cut at {cut}");
    }
    plain
}

#[tokio::test]
async fn a_call_in_output_text_becomes_a_function_call_streamed_and_not() {
    let text = "Checking.\n<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}</tool_call>";
    let h = start(serving(response(json!([text_item(text)])))).await;
    let (plain, streamed) = both(&h, &ask("weather")).await;
    let output = plain["output"].as_array().unwrap();
    assert_eq!(output[0]["content"][0]["text"], "Checking.\n");
    assert_eq!(output[1]["type"], "function_call");
    assert!(output[1]["id"].as_str().unwrap().starts_with("fc_"));
    assert!(output[1]["call_id"].as_str().unwrap().starts_with("call_"));
    assert_eq!(output[1]["arguments"], "{\"city\": \"Paris\", \"days\": 3}");
    assert_eq!(plain["x_toolfix"]["calls"][0]["outcome"], "repaired");
    assert_eq!(essence(&streamed), essence(&plain));
    assert_eq!(streamed["x_toolfix"]["calls"][0]["outcome"], "repaired");
}

#[tokio::test]
async fn broken_arguments_are_repaired_and_custom_tool_calls_untouched() {
    let patch = json!({"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_p", "name": "apply_patch",
                       "input": "*** Begin Patch\n*** Add File: a.txt\n+{not json,\n*** End Patch", "status": "completed"});
    let r = response(json!([
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Thinking."}]},
        patch,
        call_item("call_w", "get_weather", "{\"city\": \"Paris\", \"days\": \"3\",}"),
    ]));
    let h = start(serving(r)).await;
    let (plain, streamed) = both(&h, &ask("go")).await;
    let output = plain["output"].as_array().unwrap();
    assert_eq!(output[0]["type"], "reasoning");
    assert_eq!(output[1], patch);
    assert_eq!(output[2]["arguments"], "{\"city\": \"Paris\", \"days\": 3}");
    assert_eq!(output[2]["call_id"], "call_w");
    assert_eq!(output[2]["id"], "fc_call_w");
    assert_eq!(essence(&streamed), essence(&plain));
}

#[tokio::test]
async fn an_untouched_response_is_the_upstreams_bytes() {
    let r = response(json!([text_item("Sure."), call_item("call_1", "get_weather", "{\"city\": \"Paris\"}")]));
    let bytes = r.to_string();
    let h = start(serving(r)).await;
    let (status, _, body) = h.post_bytes("/v1/responses", ask("weather").to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(body, bytes.as_bytes());
}

/// A repaired answer goes out as the upstream's bytes (its formatting, its members the
/// proxy does not read, a float as written) with the call's `arguments` replaced and the
/// report added as the last member.
#[tokio::test]
async fn a_repaired_response_is_the_upstreams_bytes_with_the_arguments_replaced() {
    let mut r = response(json!([
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
        text_item("Sure \u{e9}."),
        call_item("call_1", "get_weather", "{\"city\": \"Paris\", \"days\": \"3\"}"),
    ]));
    r["usage"]["cost"] = json!(1.0e-3);
    let pretty = serde_json::to_string_pretty(&r).unwrap();
    let sent = pretty.clone();
    let h = start(move |_: &Seen| Canned::status(200, &[("content-type", "application/json")], &sent)).await;
    let (status, _, body) = h.post_bytes("/v1/responses", ask("weather").to_string()).await;
    assert_eq!(status, 200);
    let body = String::from_utf8(body.to_vec()).unwrap();
    let broken = r#""{\"city\": \"Paris\", \"days\": \"3\"}""#;
    let repaired = r#""{\"city\": \"Paris\", \"days\": 3}""#;
    assert!(pretty.contains(broken), "{pretty}");
    let want = pretty.replace(broken, repaired);
    let kept = want.trim_end().strip_suffix('}').unwrap();
    assert!(body.starts_with(kept), "{body}");
    assert!(body[kept.len()..].starts_with(",\"x_toolfix\":"), "{body}");
    let value: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(value["x_toolfix"]["calls"][0]["outcome"], "repaired");
    assert_eq!(value["output"][2]["arguments"], "{\"city\": \"Paris\", \"days\": 3}");
}

#[tokio::test]
async fn an_incomplete_response_cuts_unclosed_calls() {
    let mut r = response(json!([text_item(
        "Paying.<tool_call>{\"name\": \"send_money\", \"arguments\": {\"to\": \"bob\", \"amount\": 5"
    )]));
    r["status"] = json!("incomplete");
    r["incomplete_details"] = json!({"reason": "max_output_tokens"});
    let h = common::start_with(serving(r), |c| {
        c.max_reprompts = 0;
        c.length_recovery = toolfix_proxy::LengthRecovery::Off;
    })
    .await;
    let (plain, streamed) = both(&h, &ask("pay")).await;
    let output = plain["output"].as_array().unwrap();
    assert_eq!(output.len(), 1);
    assert!(output[0]["content"][0]["text"].as_str().unwrap().starts_with("Paying.\n\n[toolfix] "));
    assert_eq!(essence(&streamed), essence(&plain));
}

#[tokio::test]
async fn streamed_equals_not_streamed_at_every_chunk_boundary() {
    let r = response(json!([
        {"type": "reasoning", "id": "rs_1", "summary": []},
        text_item("On it. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>"),
        call_item("call_s", "send_money", "{'to': 'bob', 'amount': '5'}"),
    ]));
    let plain = streamed_as_plain_at_every_cut(&r).await;
    assert_eq!(plain["output"].as_array().unwrap().iter().filter(|i| i["type"] == "function_call").count(), 2);
}

#[tokio::test]
async fn the_input_is_repaired_before_it_is_forwarded() {
    let h = start(serving(response(json!([text_item("ok")])))).await;
    let request = json!({"model": "gpt-fake", "tools": tools(), "input": [
        {"role": "user", "content": "go"},
        call_item("call_a", "get_weather", "{\"city\": \"Rome\",}"),
        {"type": "function_call_output", "call_id": "call_a", "output": "sunny"},
        {"type": "function_call_output", "call_id": "call_zz", "output": "stray"}]});
    let (status, headers, _) = h.post_bytes("/v1/responses", request.to_string()).await;
    assert_eq!(status, 200);
    let sent = h.upstream.requests()[0].json();
    let input = sent["input"].as_array().unwrap();
    assert_eq!(input.len(), 3);
    assert_eq!(input[1]["arguments"], "{\"city\": \"Rome\"}");
    assert!(headers["x-toolfix"].to_str().unwrap().ends_with("history=2"), "{headers:?}");
}

#[tokio::test]
async fn a_refused_call_is_reprompted_with_its_output_and_the_tool_forced() {
    let n = Arc::new(Mutex::new(0));
    let h = start(move |_: &Seen| {
        let mut k = n.lock().unwrap();
        *k += 1;
        if *k == 1 {
            Canned::json(&response(json!([call_item("call_1", "send_money", "{\"to\": \"bob\"}")])))
        } else {
            Canned::json(&response(json!([call_item("call_2", "send_money", "{\"to\": \"bob\", \"amount\": 3}")])))
        }
    })
    .await;
    let (_, _, body) = h.post_bytes("/v1/responses", ask("pay bob 3").to_string()).await;
    let plain: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(plain["output"][0]["arguments"], "{\"to\": \"bob\", \"amount\": 3}");
    let second = h.upstream.requests()[1].json();
    let input = second["input"].as_array().unwrap();
    let output = input.iter().find(|i| i["type"] == "function_call_output").unwrap();
    assert_eq!(output["call_id"], "call_1");
    assert!(output["output"].as_str().unwrap().contains("/amount"));
    assert_eq!(second["tool_choice"], json!({"type": "function", "name": "send_money"}));
}

#[tokio::test]
async fn a_malformed_event_ends_the_stream_with_one_error_event() {
    let r = response(json!([text_item("Hello there.")]));
    let body = responses_sse(&r);
    let at = body.find("event: response.output_text.delta").unwrap();
    let broken = format!("{}event: response.output_text.delta\ndata: {{not json\n\n{}", &body[..at], &body[at..]);
    let h = start(move |_: &Seen| Canned::Sse(vec![Bytes::from(broken.clone())])).await;
    let mut req = ask("x");
    req["stream"] = json!(true);
    let (status, _, got) = h.post_bytes("/v1/responses", req.to_string()).await;
    assert_eq!(status, 200);
    let text = String::from_utf8_lossy(&got);
    assert_eq!(text.matches("event: error").count(), 1, "{text}");
    assert!(!text.contains("response.completed"), "{text}");
    let data = text.split("event: error\ndata: ").nth(1).unwrap().split("\n\n").next().unwrap();
    let e: Value = serde_json::from_str(data).unwrap();
    assert_eq!(e["code"], "upstream_bad_event");
}

/// A `reasoning` item as gpt-oss behind vLLM writes it: the chain of thought in `content`
/// (`reasoning_text`; platform.openai.com, "Responses": the reasoning item), streamed as
/// `response.reasoning_text.delta`.
fn reasoning_item(text: &str) -> Value {
    json!({"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": text}]})
}

#[tokio::test]
async fn a_call_left_in_reasoning_becomes_a_function_call_and_the_reasoning_item_is_untouched() {
    let thought = reasoning_item(
        "I should check. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\", \"days\": \"2\"}}</tool_call>",
    );
    let h = start(serving(response(json!([thought.clone()])))).await;
    let (plain, streamed) = both(&h, &ask("weather")).await;
    let output = plain["output"].as_array().unwrap();
    assert_eq!(output.len(), 2, "{plain}");
    assert_eq!(output[0], thought, "the reasoning item passes through untouched");
    assert_eq!(output[1]["type"], "function_call");
    assert_eq!(output[1]["name"], "get_weather");
    assert_eq!(output[1]["arguments"], "{\"city\": \"Oslo\", \"days\": 2}");
    assert!(output[1]["call_id"].as_str().unwrap().starts_with("call_"));
    assert_eq!(plain["x_toolfix"]["calls"][0]["channel"], "reasoning");
    assert_eq!(essence(&streamed), essence(&plain));
    assert_eq!(streamed["x_toolfix"]["calls"][0]["channel"], "reasoning");
}

#[tokio::test]
async fn a_call_in_a_reasoning_summary_is_found_too() {
    let thought = json!({"type": "reasoning", "id": "rs_1", "summary": [
        {"type": "summary_text", "text": "Planning."},
        {"type": "summary_text", "text": "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}</tool_call>"}]});
    let h = start(serving(response(json!([thought.clone()])))).await;
    let (plain, streamed) = both(&h, &ask("weather")).await;
    let output = plain["output"].as_array().unwrap();
    assert_eq!(output[0], thought);
    assert_eq!(output[1]["arguments"], "{\"city\": \"Rome\"}");
    assert_eq!(essence(&streamed), essence(&plain));
}

#[tokio::test]
async fn a_call_drafted_in_reasoning_is_not_used_when_the_answer_has_one() {
    // The default policy (as for `reasoning_content` in Chat Completions): reasoning calls
    // only when no other channel has a call.
    let r = response(json!([
        reasoning_item(
            "Maybe <tool_call>{\"name\": \"send_money\", \"arguments\": {\"to\": \"eve\", \"amount\": 9}}</tool_call>"
        ),
        call_item("call_1", "get_weather", "{\"city\": \"Paris\"}"),
    ]));
    let bytes = r.to_string();
    let h = start(serving(r)).await;
    let (status, _, body) = h.post_bytes("/v1/responses", ask("weather").to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(body, bytes.as_bytes(), "left alone");
    let (plain, streamed) = both(&h, &ask("weather")).await;
    let calls: Vec<&Value> =
        plain["output"].as_array().unwrap().iter().filter(|i| i["type"] == "function_call").collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["name"], "get_weather");
    assert_eq!(essence(&streamed), essence(&plain));
}

#[tokio::test]
async fn a_reasoning_item_streamed_whole_without_deltas_is_read_too() {
    // Some servers send a reasoning item only in `response.output_item.added` / `.done`.
    let thought =
        reasoning_item("<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lima\"}}</tool_call>");
    let r = response(json!([thought.clone()]));
    let body: String =
        responses_sse(&r).split_inclusive("\n\n").filter(|e| !e.contains("response.reasoning_")).collect();
    let h = start(move |seen: &Seen| {
        if seen.json()["stream"] == true { Canned::Sse(vec![Bytes::from(body.clone())]) } else { Canned::json(&r) }
    })
    .await;
    let (plain, streamed) = both(&h, &ask("weather")).await;
    assert_eq!(plain["output"][1]["arguments"], "{\"city\": \"Lima\"}");
    assert_eq!(essence(&streamed), essence(&plain));
}

#[tokio::test]
async fn reasoning_streamed_equals_not_streamed_at_every_chunk_boundary() {
    let r = response(json!([
        {"type": "reasoning", "id": "rs_1", "summary": [],
         "content": [{"type": "reasoning_text", "text": "First I think. <tool_call>{\"name\": \"get_weather\", "},
                     {"type": "reasoning_text", "text": "\"arguments\": {\"city\": \"Kyiv\", \"days\": \"1\"}}</tool_call>"}]},
    ]));
    let plain = streamed_as_plain_at_every_cut(&r).await;
    // The parts are joined by a newline: the call spans two parts and is read as written.
    assert_eq!(plain["x_toolfix"]["calls"].as_array().map(Vec::len), Some(1), "{plain}");
}

/// The start of the id of a `reasoning` item the proxy wrote (reasoning it moved out of the
/// text; the proxy cannot write `encrypted_content`).
const PROXY_REASONING_ID: &str = "rs_toolfix";

/// The proxy's reasoning item for the fake upstream's response (`resp_fake`).
fn own_reasoning(text: &str) -> Value {
    json!({"type": "reasoning", "id": format!("{PROXY_REASONING_ID}_fake"), "summary": [],
           "content": [{"type": "reasoning_text", "text": text}]})
}

#[tokio::test]
async fn reasoning_moved_out_of_the_text_comes_back_as_a_reasoning_item() {
    // A local model behind a Responses server writes its reasoning in the output text.
    let text = "<think>The user wants Paris.</think>Checking.<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>";
    let h = start(serving(response(json!([text_item(text)])))).await;
    let (plain, streamed) = both(&h, &ask("weather")).await;
    let output = plain["output"].as_array().unwrap();
    assert_eq!(output.len(), 3, "{plain}");
    assert_eq!(output[0], own_reasoning("The user wants Paris."));
    assert_eq!(output[1]["content"][0]["text"], "Checking.");
    assert_eq!(output[2]["type"], "function_call");
    assert_eq!(output[2]["arguments"], "{\"city\": \"Paris\"}");
    assert_eq!(essence(&streamed), essence(&plain));
}

#[tokio::test]
async fn moved_reasoning_without_a_call_comes_back_after_the_upstreams_reasoning() {
    let upstream = json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Greeting."}],
                          "encrypted_content": "gAAAA"});
    let h = start(serving(response(json!([upstream.clone(), text_item("<think>Just greet.</think>Hello!")])))).await;
    let (plain, streamed) = both(&h, &ask("hi")).await;
    let output = plain["output"].as_array().unwrap();
    assert_eq!(output.len(), 3, "{plain}");
    assert_eq!(output[0], upstream, "the upstream's own reasoning item is untouched");
    assert_eq!(output[1], own_reasoning("Just greet."));
    assert_eq!(output[2]["content"][0]["text"], "Hello!");
    assert_eq!(essence(&streamed), essence(&plain));
}

#[tokio::test]
async fn a_call_left_in_a_think_block_is_found_and_the_item_comes_back() {
    let text = "<think>I will call <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\", \"days\": \"2\"}}</tool_call></think>";
    let h = start(serving(response(json!([text_item(text)])))).await;
    let (plain, streamed) = both(&h, &ask("weather")).await;
    let output = plain["output"].as_array().unwrap();
    assert_eq!(output[0]["type"], "reasoning", "{plain}");
    assert!(output[0]["id"].as_str().unwrap().starts_with(PROXY_REASONING_ID));
    let call = output.iter().find(|i| i["type"] == "function_call").unwrap();
    assert_eq!(call["arguments"], "{\"city\": \"Oslo\", \"days\": 2}");
    assert_eq!(essence(&streamed), essence(&plain));
}

#[tokio::test]
async fn moved_reasoning_streamed_equals_not_streamed_at_every_chunk_boundary() {
    let r = response(json!([
        {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "Hmm."}]},
        text_item("<think>Oslo, then pay.</think>Sure. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>"),
        call_item("call_s", "send_money", "{'to': 'bob', 'amount': '5'}"),
    ]));
    let plain = streamed_as_plain_at_every_cut(&r).await;
    assert_eq!(plain["output"][1], own_reasoning("Oslo, then pay."), "{plain}");
}

#[tokio::test]
async fn reasoning_moved_after_text_went_out_streams_after_the_text() {
    // Streamed, text already sent cannot be taken back: the reasoning item comes after it
    // (not streamed, before it); nothing is lost or sent twice.
    let h = start(serving(response(json!([text_item("Hello there. <think>Was that rude?</think>")])))).await;
    let (plain, streamed) = both(&h, &ask("hi")).await;
    let plain_items = essence(&plain)["output"].as_array().unwrap().clone();
    let streamed_items = essence(&streamed)["output"].as_array().unwrap().clone();
    assert_eq!(plain_items.len(), 2, "{plain}");
    assert_eq!(plain_items[0], own_reasoning("Was that rude?"));
    assert_eq!(streamed_items, [plain_items[1].clone(), plain_items[0].clone()]);
}

#[tokio::test]
async fn a_reasoning_item_the_proxy_wrote_is_dropped_from_the_input() {
    let h = start(serving(response(json!([text_item("ok")])))).await;
    let upstream = json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA"});
    let request = json!({"model": "gpt-fake", "tools": tools(), "input": [
        {"role": "user", "content": "go"},
        upstream,
        own_reasoning("Moved."),
        text_item("Checking."),
        call_item("call_a", "get_weather", "{\"city\": \"Rome\"}"),
        {"type": "function_call_output", "call_id": "call_a", "output": "sunny"}]});
    let (status, headers, _) = h.post_bytes("/v1/responses", request.to_string()).await;
    assert_eq!(status, 200);
    let sent = h.upstream.requests()[0].json();
    let input = sent["input"].as_array().unwrap();
    assert_eq!(input.len(), 5, "{sent}");
    assert_eq!(input[1], upstream, "the upstream's own reasoning item is untouched");
    assert_eq!(input[2]["type"], "message");
    let report = headers["x-toolfix"].to_str().unwrap();
    assert!(report.ends_with("history=1"), "{headers:?}");
}

#[tokio::test]
async fn a_reprompted_answer_streams_its_moved_reasoning_only_when_none_went_out() {
    // First a refused call after reasoning in the text; the re-prompt's answer has its own.
    let first = response(json!([text_item(
        "<think>Pay him.</think><tool_call>{\"name\": \"send_money\", \"arguments\": {\"to\": \"bob\"}}</tool_call>"
    )]));
    let second = response(json!([text_item(
        "<think>Now with the amount.</think><tool_call>{\"name\": \"send_money\", \"arguments\": {\"to\": \"bob\", \"amount\": 3}}</tool_call>"
    )]));
    let h = start(serving_then(first, second)).await;
    let (plain, streamed) = both(&h, &ask("pay bob 3")).await;
    // Not streamed: the answer given is the re-prompt's, with its reasoning.
    let output = plain["output"].as_array().unwrap();
    assert_eq!(output[0], own_reasoning("Now with the amount."), "{plain}");
    assert_eq!(output[1]["arguments"], "{\"to\": \"bob\", \"amount\": 3}");
    // Streamed: the first attempt's reasoning went out as it came; the re-prompt's is not
    // sent after it (as `reasoning_content` in Chat Completions).
    let items = streamed["output"].as_array().unwrap();
    let reasoning: Vec<&Value> = items.iter().filter(|i| i["type"] == "reasoning").collect();
    assert_eq!(reasoning, [&own_reasoning("Pay him.")], "{streamed}");
    let call = items.iter().find(|i| i["type"] == "function_call").unwrap();
    assert_eq!(call["arguments"], "{\"to\": \"bob\", \"amount\": 3}");
}

#[tokio::test]
async fn a_reprompted_answer_streams_its_moved_reasoning_when_nothing_went_out() {
    // First a refused server call (nothing goes out before it is decided); the re-prompt's
    // answer writes its reasoning in the text.
    let first = response(json!([call_item("call_1", "send_money", "{\"to\": \"bob\"}")]));
    let second = response(json!([text_item(
        "<think>Now with the amount.</think><tool_call>{\"name\": \"send_money\", \"arguments\": {\"to\": \"bob\", \"amount\": 3}}</tool_call>"
    )]));
    let h = start(serving_then(first, second)).await;
    let (plain, streamed) = both(&h, &ask("pay bob 3")).await;
    assert_eq!(plain["output"][0], own_reasoning("Now with the amount."), "{plain}");
    assert_eq!(plain["output"][1]["arguments"], "{\"to\": \"bob\", \"amount\": 3}");
    assert_eq!(essence(&streamed), essence(&plain));
}

#[tokio::test]
async fn reasoning_moved_before_and_after_text_went_out_streams_in_two_items() {
    let text = "<think>First.</think>Hello there. <think>Was that rude?</think>";
    let h = start(serving(response(json!([text_item(text)])))).await;
    let (plain, streamed) = both(&h, &ask("hi")).await;
    let plain_items = essence(&plain)["output"].as_array().unwrap().clone();
    assert_eq!(plain_items, [own_reasoning("First.\nWas that rude?"), json!({"text": "Hello there. "})], "{plain}");
    // Streamed: the first part as it came, the rest after the text, in an item of its own
    // id (items of one response differ), the text the same.
    let mut second = own_reasoning("\nWas that rude?");
    second["id"] = json!(format!("{PROXY_REASONING_ID}_fake_2"));
    let streamed_items = essence(&streamed)["output"].as_array().unwrap().clone();
    assert_eq!(streamed_items, [own_reasoning("First."), plain_items[1].clone(), second], "{streamed}");
}

#[tokio::test]
async fn a_reply_too_large_to_fix_keeps_its_moved_reasoning_and_passes_the_rest() {
    // Past the library's input cap the rest of the stream passes through; reasoning moved
    // out of the text before that still comes in the proxy's item, once, and no item is
    // opened twice.
    let long = "All work and no play. ".repeat(100);
    for text in [format!("<think>Plan.</think>{long}"), format!("Hi. <think>Plan.</think>{long}")] {
        let r = response(json!([text_item(&text)]));
        let h = common::start_with(serving(r), |c| c.limits = c.limits.with_max_input_bytes(1000)).await;
        let mut req = ask("go");
        req["stream"] = json!(true);
        let (status, _, body) = h.post_bytes("/v1/responses", req.to_string()).await;
        assert_eq!(status, 200);
        let got = assemble(&body);
        let output = got["output"].as_array().unwrap();
        let own: Vec<&Value> = output.iter().filter(|i| i["type"] == "reasoning").collect();
        assert_eq!(own, [&own_reasoning("Plan.")], "{got}");
        let messages: Vec<&Value> = output.iter().filter(|i| i["type"] == "message").collect();
        assert_eq!(messages.len(), 1, "{got}");
        assert_eq!(messages[0]["content"][0]["text"], text.replace("<think>Plan.</think>", ""));
        assert!(got["x_toolfix"]["unfixed"].is_array(), "{got}");
    }
}

/// A URL citation of an `output_text` part, over bytes `start..end` of its text
/// (platform.openai.com, "Responses": `annotations`).
fn url_citation(start: usize, end: usize) -> Value {
    json!({"type": "url_citation", "start_index": start, "end_index": end, "title": "Forecast",
           "url": "https://example.com/forecast"})
}

/// Regression (issue 21): a repaired call's item and a message item kept as it was keep
/// every member the upstream gave (the message's `phase`, its part's `annotations` and
/// `logprobs`, the call's `caller` and `namespace`), streamed and not; nothing is
/// reported dropped.
#[tokio::test]
async fn members_of_a_repaired_answer_are_kept_streamed_and_not() {
    let mut message = text_item("Checking Paris.");
    message["phase"] = json!("commentary");
    message["content"][0]["annotations"] = json!([url_citation(9, 14)]);
    message["content"][0]["logprobs"] =
        json!([{"token": "Checking", "bytes": [67], "logprob": -0.5, "top_logprobs": []}]);
    let mut call = call_item("call_1", "get_weather", "{\"city\": \"Paris\", \"days\": \"3\"}");
    call["caller"] = json!({"type": "direct"});
    call["namespace"] = json!("weather");
    let r = response(json!([message, call]));
    let h = start(serving(r.clone())).await;
    let (plain, streamed) = both(&h, &ask("weather")).await;
    let mut want = r["output"].clone();
    want[1]["arguments"] = json!("{\"city\": \"Paris\", \"days\": 3}");
    assert_eq!(plain["output"], want);
    assert_eq!(streamed["output"], want);
    assert_eq!(plain["x_toolfix"]["calls"][0]["outcome"], "repaired");
    assert!(plain["x_toolfix"].get("dropped").is_none(), "{plain}");
    assert!(streamed["x_toolfix"].get("dropped").is_none(), "{streamed}");
}

/// Regression (issue 21): a message whose text the proxy changes (a call taken out of it)
/// keeps its members (`phase`) and its part's, but the part's `annotations` (offsets into
/// the text as it was) and `logprobs` (its tokens): dropped and reported
/// (`x_toolfix.dropped`), streamed and not.
#[tokio::test]
async fn annotations_of_text_that_changed_are_dropped_and_reported() {
    let text =
        "Checking Paris.<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>";
    let mut message = text_item(text);
    message["phase"] = json!("commentary");
    message["content"][0]["annotations"] = json!([url_citation(9, 14)]);
    message["content"][0]["logprobs"] =
        json!([{"token": "Checking", "bytes": [67], "logprob": -0.5, "top_logprobs": []}]);
    let h = start(serving(response(json!([message])))).await;
    let (plain, streamed) = both(&h, &ask("weather")).await;
    assert_eq!(
        plain["output"][0],
        json!({"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "phase": "commentary",
               "content": [{"type": "output_text", "text": "Checking Paris.", "annotations": []}]})
    );
    assert_eq!(plain["output"][1]["type"], "function_call");
    let dropped = json!([{"output": 0, "content": 0, "member": "annotations", "reason": "text_changed"},
                         {"output": 0, "content": 0, "member": "logprobs", "reason": "text_changed"}]);
    assert_eq!(plain["x_toolfix"]["dropped"], dropped);
    assert_eq!(streamed["output"][0], plain["output"][0]);
    assert_eq!(essence(&streamed), essence(&plain));
    assert_eq!(streamed["x_toolfix"]["dropped"], dropped);
}

/// Regression (issue 21): message items joined into one (the second's id and members have
/// no item left) and a call whose name was resolved (its `namespace`, that of the name as
/// written, dropped; its `caller` kept): each member dropped is reported, streamed and not.
/// The response's own members (its id, usage, metadata) are kept.
#[tokio::test]
async fn members_of_joined_items_and_of_a_renamed_call_are_reported() {
    let mut second = text_item("Part two.");
    second["id"] = json!("msg_2");
    second["content"][0]["annotations"] = json!([url_citation(0, 4)]);
    let mut call = call_item("call_1", "GetWeather", "{\"city\": \"Paris\"}");
    call["caller"] = json!({"type": "direct"});
    call["namespace"] = json!("weather");
    let mut r = response(json!([text_item("Part one. "), second, call]));
    r["metadata"] = json!({"run": "7"});
    let h = start(serving(r.clone())).await;
    let (plain, streamed) = both(&h, &ask("weather")).await;
    for key in ["id", "created_at", "model", "usage", "metadata"] {
        assert_eq!(plain[key], r[key], "{key}");
        assert_eq!(streamed[key], r[key], "{key}");
    }
    assert_eq!(
        plain["output"],
        json!([{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": "Part one. Part two.", "annotations": []}]},
               {"type": "function_call", "id": "fc_call_1", "call_id": "call_1", "name": "get_weather",
                "arguments": "{\"city\": \"Paris\"}", "status": "completed", "caller": {"type": "direct"}}])
    );
    let dropped = json!([{"output": 1, "member": "id", "reason": "merged"},
                         {"output": 1, "content": 0, "member": "annotations", "reason": "merged"},
                         {"output": 2, "member": "namespace", "reason": "renamed"}]);
    assert_eq!(plain["x_toolfix"]["dropped"], dropped);
    assert_eq!(streamed["output"][1], plain["output"][1]);
    assert_eq!(essence(&streamed), essence(&plain));
    assert_eq!(streamed["x_toolfix"]["dropped"], dropped);
}

/// Regression (issue 21): streamed, an untouched answer's message item went out with
/// neither its members (`phase`) nor its part's `annotations`; both are kept now. Several
/// message items go out as one item in a stream: the members that belong to each item's
/// own text are dropped then, and reported.
#[tokio::test]
async fn a_stream_keeps_the_members_of_its_one_message_item_and_reports_those_it_joins() {
    let mut one = text_item("Paris is sunny.");
    one["phase"] = json!("final_answer");
    one["content"][0]["annotations"] = json!([url_citation(9, 14)]);
    let r = response(json!([one]));
    let h = start(serving(r.clone())).await;
    let (plain, streamed) = both(&h, &ask("weather")).await;
    assert_eq!(plain["output"], r["output"]);
    assert_eq!(streamed["output"], r["output"]);
    assert!(streamed["x_toolfix"].get("dropped").is_none(), "{streamed}");

    let mut second = text_item("Part two.");
    second["id"] = json!("msg_2");
    second["content"][0]["annotations"] = json!([url_citation(0, 4)]);
    let mut first = text_item("Part one. ");
    first["content"][0]["annotations"] = json!([url_citation(0, 4)]);
    let r = response(json!([first, second]));
    let h = start(serving(r.clone())).await;
    let (plain, streamed) = both(&h, &ask("weather")).await;
    assert_eq!(plain["output"], r["output"]);
    assert_eq!(essence(&streamed)["output"], json!([{"text": "Part one. Part two."}]));
    let dropped = json!([{"member": "annotations", "reason": "streamed"}, {"member": "id", "reason": "streamed"},
                         {"member": "annotations", "reason": "streamed"}]);
    assert_eq!(streamed["x_toolfix"]["dropped"], dropped);
}
