//! Non-streaming chat completions through the proxy: calls moved out of the text and
//! repaired, untouched answers byte for byte, pass-through without tools, request-side
//! repair, bounded recovery upstream, the report.

#![expect(clippy::unwrap_used, clippy::needless_pass_by_value, reason = "tests")]

mod common;

use common::{ask, calls_of, message, native, request, start, start_with};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use toolfix_proxy::LengthRecovery;
use toolfix_proxy::fake::{Canned, completion};

fn answer(message: Value, finish: &str) -> Canned {
    Canned::json(&completion(&message, finish))
}

#[tokio::test]
async fn a_hermes_call_left_in_content_comes_back_in_tool_calls_repaired() {
    let text = "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}\n</tool_call>";
    let h = start(move |_| answer(message(Some(text), None), "stop")).await;
    let (status, headers, body) = h.chat(&ask("weather in Paris?")).await;
    assert_eq!(status, 200);
    let choice = &body["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(choice["message"]["content"], "Let me check.\n");
    assert_eq!(calls_of(&body), [("get_weather".to_owned(), json!({"city": "Paris", "days": 3}))]);
    let call = &choice["message"]["tool_calls"][0];
    assert_eq!(call["type"], "function");
    assert!(call["id"].as_str().unwrap().starts_with("call_"));
    assert_eq!(body["x_toolfix"]["calls"][0]["outcome"], "repaired");
    assert_eq!(body["x_toolfix"]["calls"][0]["channel"], "content");
    assert_eq!(body["x_toolfix"]["calls"][0]["repairs"], json!(["coerced_scalar"]));
    let header = headers["x-toolfix"].to_str().unwrap();
    assert!(header.contains("repaired=1"), "{header}");
    // The client's key went to the upstream.
    assert_eq!(h.upstream.requests()[0].headers["authorization"], "Bearer sk-client");
}

#[tokio::test]
async fn server_calls_with_broken_arguments_are_repaired_in_place() {
    let calls = json!([
        native("c1", "tag_files", "{\"paths\": \"[\\\"a.txt\\\", \\\"b.txt\\\"]\", \"tag\": \"x\"}"),
        native("c2", "send_money", "{\"to\": \"bob\", \"amount\": \"42\",}"),
    ]);
    let h = start(move |_| answer(message(None, Some(calls.clone())), "tool_calls")).await;
    let (status, _, body) = h.chat(&ask("do it")).await;
    assert_eq!(status, 200);
    assert_eq!(
        calls_of(&body),
        [
            ("tag_files".to_owned(), json!({"paths": ["a.txt", "b.txt"], "tag": "x"})),
            ("send_money".to_owned(), json!({"to": "bob", "amount": 42}))
        ]
    );
    let ids: Vec<&str> = body["choices"][0]["message"]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["c1", "c2"]);
    assert_eq!(body["x_toolfix"]["calls"][1]["text_fixes"], json!(["trailing_comma"]));
}

#[tokio::test]
async fn an_untouched_answer_comes_back_byte_for_byte() {
    let raw = "{\"id\":\"x\",  \"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":  \\\"Oslo\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"total_tokens\":1}}";
    let h = start(move |_| Canned::status(200, &[], raw)).await;
    let (status, headers, body) = h.post_bytes("/v1/chat/completions", ask("x").to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(body, raw.as_bytes());
    assert!(headers["x-toolfix"].to_str().unwrap().contains("untouched=1"));
    let prose = "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Sunny.\"},\"finish_reason\":\"stop\"}]}";
    let h = start(move |_| Canned::status(200, &[], prose)).await;
    let (_, _, body) = h.post_bytes("/v1/chat/completions", ask("x").to_string()).await;
    assert_eq!(body, prose.as_bytes());
}

#[tokio::test]
async fn a_request_without_tools_passes_through_byte_for_byte_both_ways() {
    let raw_answer = "{\"weird\":  [1, 2.50, \"<tool_call>{}</tool_call>\"]}";
    let h = start(move |_| Canned::status(200, &[("x-upstream", "yes")], raw_answer)).await;
    let raw_request = "{\"model\": \"m\",   \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"n\": 1.0}";
    let (status, headers, body) = h.post_bytes("/v1/chat/completions", raw_request).await;
    assert_eq!(status, 200);
    assert_eq!(body, raw_answer.as_bytes());
    assert_eq!(headers["x-upstream"], "yes");
    assert!(headers.get("x-toolfix").is_none());
    let seen = &h.upstream.requests()[0];
    assert_eq!(seen.body, raw_request.as_bytes());
    assert_eq!(seen.path, "/v1/chat/completions");
}

#[tokio::test]
async fn other_routes_pass_through_with_method_path_query_and_body() {
    let h = start(|seen| Canned::status(201, &[], &format!("{{\"path\":\"{}\"}}", seen.path))).await;
    let r = h.client.get(h.url("/v1/models?limit=2")).send().await.unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(r.text().await.unwrap(), "{\"path\":\"/v1/models?limit=2\"}");
    let r = h.client.post(h.url("/v1/embeddings")).body("{\"input\": \"x\"}").send().await.unwrap();
    assert_eq!(r.status(), 201);
    let seen = h.upstream.requests();
    assert_eq!(seen[1].method, "POST");
    assert_eq!(seen[1].body, "{\"input\": \"x\"}".as_bytes());
    // Outside /v1: the upstream's origin.
    let r = h.client.get(h.url("/tokenize")).send().await.unwrap();
    assert_eq!(r.text().await.unwrap(), "{\"path\":\"/tokenize\"}");
}

#[tokio::test]
async fn the_history_is_repaired_before_it_is_forwarded() {
    let h = start(|_| answer(message(Some("Done."), None), "stop")).await;
    let messages = json!([
        {"role": "user", "content": "pay bob"},
        {"role": "assistant", "content": null, "tool_calls": [
            native("a", "send_money", "{'to': 'bob', 'amount': 5,}"),
            {"id": "b", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]},
        {"role": "tool", "tool_call_id": "a", "content": "paid"},
        {"role": "tool", "tool_call_id": "nope", "content": "stray"},
        {"role": "user", "content": "thanks"}
    ]);
    let (status, headers, body) = h.chat(&request(messages)).await;
    assert_eq!(status, 200);
    let sent = h.upstream.requests()[0].json();
    let calls = &sent["messages"][1]["tool_calls"];
    assert_eq!(calls[0]["function"]["arguments"], "{\"to\": \"bob\", \"amount\": 5}");
    assert_eq!(calls[1]["function"]["arguments"], "{\"city\":\"Oslo\"}");
    let roles: Vec<&str> = sent["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "tool", "user"]);
    assert_eq!(sent["messages"][3]["tool_call_id"], "b");
    assert!(headers["x-toolfix"].to_str().unwrap().contains("history=4"));
    // The answer itself was not changed: the report is in the header only.
    assert!(body.get("x_toolfix").is_none());
}

#[tokio::test]
async fn history_repair_can_be_turned_off() {
    let h = start_with(|_| answer(message(Some("ok"), None), "stop"), |c| c.repair_history = false).await;
    let req = request(json!([{"role": "tool", "tool_call_id": "x", "content": "stray"}]));
    let raw = req.to_string();
    h.post_bytes("/v1/chat/completions", raw.clone()).await;
    assert_eq!(h.upstream.requests()[0].body, raw.as_bytes());
}

/// A script answering each request in turn.
fn sequence(answers: Vec<Canned>) -> impl Fn(&toolfix_proxy::fake::Seen) -> Canned + Send + Sync + 'static {
    let n = Arc::new(AtomicUsize::new(0));
    move |_| {
        let i = n.fetch_add(1, Ordering::SeqCst);
        answers.get(i).or(answers.last()).cloned().unwrap()
    }
}

#[tokio::test]
async fn a_refused_call_is_reprompted_with_the_refusal_and_the_fixed_answer_returned() {
    let h = start(sequence(vec![
        answer(message(None, Some(json!([native("c1", "send_money", "{}")]))), "tool_calls"),
        answer(
            message(None, Some(json!([native("c2", "send_money", "{\"to\": \"bob\", \"amount\": 3}")]))),
            "tool_calls",
        ),
    ]))
    .await;
    let (status, headers, body) = h.chat(&ask("pay bob 3")).await;
    assert_eq!(status, 200);
    assert_eq!(calls_of(&body), [("send_money".to_owned(), json!({"to": "bob", "amount": 3}))]);
    assert_eq!(body["x_toolfix"]["calls"][0]["outcome"], "reprompted");
    assert_eq!(body["x_toolfix"]["attempts"][1]["kind"], "reprompt");
    assert!(headers["x-toolfix"].to_str().unwrap().contains("reprompted=1"));
    let seen = h.upstream.requests();
    assert_eq!(seen.len(), 2);
    let second = seen[1].json();
    let msgs = second["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 4);
    assert_eq!(msgs[1]["role"], "assistant");
    assert_eq!(msgs[3]["role"], "user");
    assert_eq!(msgs[3]["content"], toolfix::FixedReply::default().reprompt());
    assert_eq!(msgs[1]["tool_calls"][0]["id"], "c1");
    assert_eq!(msgs[2]["role"], "tool");
    assert_eq!(msgs[2]["tool_call_id"], "c1");
    let refusal = msgs[2]["content"].as_str().unwrap();
    assert!(refusal.contains("/to") && refusal.contains("/amount"), "{refusal}");
}

#[tokio::test]
async fn reprompts_are_bounded_and_the_last_answer_reports_the_refusal() {
    for max in [0u8, 1, 3] {
        let h = start_with(
            |_| answer(message(None, Some(json!([native("c1", "send_money", "{\"to\": 1}")]))), "tool_calls"),
            |c| c.max_reprompts = max,
        )
        .await;
        let (status, _, body) = h.chat(&ask("pay")).await;
        assert_eq!(status, 200);
        assert_eq!(h.upstream.requests().len(), 1 + usize::from(max));
        // The unusable call is not passed on; the report says why.
        assert!(body["choices"][0]["message"].get("tool_calls").is_none());
        assert_eq!(body["choices"][0]["finish_reason"], "stop");
        assert_eq!(body["x_toolfix"]["calls"][0]["outcome"], "gave_up");
        assert!(body["x_toolfix"]["calls"][0]["message"].as_str().unwrap().contains("/amount"));
    }
}

#[tokio::test]
async fn a_call_cut_off_by_the_token_limit_is_retried_with_more_tokens() {
    let cut = "<tool_call>{\"name\": \"send_money\", \"arguments\": {\"to\": \"bob\", \"amou";
    let whole = "<tool_call>{\"name\": \"send_money\", \"arguments\": {\"to\": \"bob\", \"amount\": 1000}}</tool_call>";
    let h =
        start(sequence(vec![answer(message(Some(cut), None), "length"), answer(message(Some(whole), None), "stop")]))
            .await;
    let mut req = ask("pay bob 1000");
    req["max_tokens"] = json!(100);
    let (_, _, body) = h.chat(&req).await;
    assert_eq!(calls_of(&body), [("send_money".to_owned(), json!({"to": "bob", "amount": 1000}))]);
    assert_eq!(body["x_toolfix"]["attempts"][1]["kind"], "retry_longer");
    let seen = h.upstream.requests();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].json()["max_tokens"], 256 + 100);
}

#[tokio::test]
async fn a_cut_off_call_can_be_continued_where_the_upstream_allows_it() {
    let cut = "Paying.<tool_call>{\"name\": \"send_money\", \"arguments\": {\"to\": \"bob\", \"amo";
    let rest = "unt\": 7}}</tool_call>";
    let h = start_with(
        sequence(vec![answer(message(Some(cut), None), "length"), answer(message(Some(rest), None), "stop")]),
        |c| c.length_recovery = LengthRecovery::Continue,
    )
    .await;
    let (_, _, body) = h.chat(&ask("pay bob 7")).await;
    assert_eq!(calls_of(&body), [("send_money".to_owned(), json!({"to": "bob", "amount": 7}))]);
    assert_eq!(body["choices"][0]["message"]["content"], "Paying.");
    let second = h.upstream.requests()[1].json();
    assert_eq!(second["continue_final_message"], true);
    assert_eq!(second["add_generation_prompt"], false);
    assert_eq!(second["messages"].as_array().unwrap().last().unwrap()["content"], cut);
}

fn storm_history() -> Value {
    let mut messages = vec![json!({"role": "user", "content": "weather?"})];
    for i in 0..2 {
        messages.push(message(None, Some(json!([native(&format!("w{i}"), "get_weather", "{\"city\": \"Rome\"}")]))));
        messages.push(json!({"role": "tool", "tool_call_id": format!("w{i}"), "content": "sunny"}));
    }
    Value::Array(messages)
}

#[tokio::test]
async fn a_storm_repeat_is_not_passed_on_but_reprompted_with_a_reflection_note() {
    let repeat =
        answer(message(None, Some(json!([native("w2", "get_weather", "{\"city\": \"Rome\"}")]))), "tool_calls");
    let h = start(sequence(vec![repeat, answer(message(Some("It is sunny in Rome."), None), "stop")])).await;
    let (_, _, body) = h.chat(&request(storm_history())).await;
    assert_eq!(body["choices"][0]["message"]["content"], "It is sunny in Rome.");
    let seen = h.upstream.requests();
    assert_eq!(seen.len(), 2);
    let msgs = seen[1].json()["messages"].as_array().unwrap().clone();
    let note = &msgs[msgs.len() - 2];
    assert_eq!(note["role"], "tool");
    let text = note["content"].as_str().unwrap();
    assert!(text.contains("get_weather") && text.contains('3'), "{text}");
}

#[tokio::test]
async fn a_storm_that_persists_is_reported_suppressed() {
    let repeat =
        answer(message(None, Some(json!([native("w2", "get_weather", "{\"city\": \"Rome\"}")]))), "tool_calls");
    let h = start(move |_| repeat.clone()).await;
    let (_, headers, body) = h.chat(&request(storm_history())).await;
    assert_eq!(h.upstream.requests().len(), 2);
    assert!(body["choices"][0]["message"].get("tool_calls").is_none());
    assert_eq!(body["x_toolfix"]["calls"][0]["outcome"], "suppressed");
    assert!(headers["x-toolfix"].to_str().unwrap().contains("suppressed=1"));
}

#[tokio::test]
async fn storm_exempt_tools_are_never_stopped() {
    let repeat =
        answer(message(None, Some(json!([native("w2", "get_weather", "{\"city\": \"Rome\"}")]))), "tool_calls");
    let h = start_with(
        move |_| repeat.clone(),
        |c| {
            c.tools.insert("get_weather".into(), {
                let mut t = toolfix_proxy::ToolConfig::default();
                t.storm_exempt = true;
                t
            });
        },
    )
    .await;
    let (_, _, body) = h.chat(&request(storm_history())).await;
    assert_eq!(h.upstream.requests().len(), 1);
    assert_eq!(calls_of(&body).len(), 1);
}

#[tokio::test]
async fn detail_keeps_the_original_message() {
    let text = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>";
    let h = start_with(move |_| answer(message(Some(text), None), "stop"), |c| c.detail = true).await;
    let (_, _, body) = h.chat(&ask("x")).await;
    assert_eq!(body["x_toolfix"]["attempts"][0]["original"][0]["content"], text);
}

#[tokio::test]
async fn health_and_metrics() {
    let text =
        "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\", \"days\": \"2\"}}</tool_call>";
    let h = start(move |_| answer(message(Some(text), None), "stop")).await;
    let r = h.client.get(h.url("/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    h.chat(&ask("x")).await;
    let metrics = h.client.get(h.url("/metrics")).send().await.unwrap().text().await.unwrap();
    for needle in [
        "toolfix_tool_calls_total{api=\"chat\",outcome=\"repaired\",tool=\"get_weather\",model=\"fake-model\"} 1",
        "toolfix_repairs_total{kind=\"coerced_scalar\"} 1",
        "toolfix_repairs_total{kind=\"moved_from_content\"} 1",
        "toolfix_added_latency_seconds_count{api=\"chat\"} 1",
    ] {
        assert!(metrics.contains(needle), "{needle} not in\n{metrics}");
    }
}

/// A call the model only shows is not a call: the answer passes unchanged (no call, the
/// text as written), the report names the shown markup and its signals; streamed alike.
#[tokio::test]
async fn a_call_the_model_only_shows_stays_text_streamed_and_not() {
    let text = "I will not send anything yet. For reference, a payment call looks like this:\n```\n<tool_call>{\"name\": \"send_money\", \"arguments\": {\"to\": \"bob\", \"amount\": 5}}</tool_call>\n```\nShall I go ahead?";
    let h = start(move |seen: &toolfix_proxy::fake::Seen| {
        if seen.json()["stream"] == true {
            Canned::sse(&toolfix_proxy::fake::content_chunks(&[&text[..40], &text[40..]], "stop"))
        } else {
            answer(message(Some(text), None), "stop")
        }
    })
    .await;
    let (status, _, body) = h.chat(&ask("pay bob?")).await;
    assert_eq!(status, 200);
    let choice = &body["choices"][0];
    assert_eq!(choice["message"]["content"], text);
    assert!(choice["message"]["tool_calls"].is_null() || choice["message"]["tool_calls"] == json!([]));
    assert_eq!(choice["finish_reason"], "stop");
    assert_eq!(h.upstream.requests().len(), 1, "no re-prompt for prose");
    let (status, _, streamed) = h.stream(&ask("pay bob?")).await;
    assert_eq!(status, 200);
    assert_eq!(streamed.content, text);
    assert!(streamed.calls.is_empty());
}

/// Markup that reads as shown yet ends the reply is uncertain: refused for a tool that may
/// change things (re-prompted with a message that says so), while a read-only tool runs.
#[tokio::test]
async fn an_uncertain_call_is_refused_for_a_tool_that_changes_things_and_runs_read_only() {
    let pay = "For example:\n<tool_call>{\"name\": \"send_money\", \"arguments\": {\"to\": \"bob\", \"amount\": 5}}</tool_call>";
    let h = start(move |_| answer(message(Some(pay), None), "stop")).await;
    let (_, _, body) = h.chat(&ask("pay bob")).await;
    let requests = h.upstream.requests();
    assert_eq!(requests.len(), 2, "one corrective re-prompt");
    let reprompt = requests[1].json().to_string();
    assert!(reprompt.contains("reads as shown, not made"), "{reprompt}");
    assert!(calls_of(&body).is_empty());
    assert_eq!(body["x_toolfix"]["calls"][0]["intent"], "uncertain");
    assert_eq!(body["x_toolfix"]["calls"][0]["signals"], json!(["example", "ends_reply"]));

    let weather =
        "For example:\n<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>";
    let h = start(move |_| answer(message(Some(weather), None), "stop")).await;
    let (_, _, body) = h.chat(&ask("weather?")).await;
    assert_eq!(calls_of(&body), [("get_weather".to_owned(), json!({"city": "Paris"}))]);
}
