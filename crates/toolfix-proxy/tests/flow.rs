//! Streams that flow: text reaches the client as the upstream sends it (only a possible
//! start of call markup waits, and only until the next bytes decide it), a re-prompt
//! mid-stream sends no text twice, a reply whose calls cannot be used says why (or is
//! passed on as sent), streamed and not.

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use bytes::Bytes;
use common::{Streamed, ask, assemble, start, start_with};
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Notify;
use toolfix_proxy::GiveUp;
use toolfix_proxy::fake::{Canned, Seen, completion, content_chunks, sse_events};

fn chunk(delta: &Value, finish: Option<&str>) -> Value {
    json!({"id": "s", "object": "chat.completion.chunk", "created": 1, "model": "fake-model",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

/// The SSE events of `pieces` as content deltas (after a role delta), then a pause at the
/// gate, then `after` as content deltas, a finish and `[DONE]`.
fn paused(before: &[&str], gate: &Arc<Notify>, after: &[&str], finish: &str) -> Canned {
    let mut first = vec![chunk(&json!({"role": "assistant", "content": ""}), None)];
    first.extend(before.iter().map(|p| chunk(&json!({"content": p}), None)));
    let mut rest: Vec<Value> = after.iter().map(|p| chunk(&json!({"content": p}), None)).collect();
    rest.push(chunk(&json!({}), Some(finish)));
    let first: Vec<Bytes> = first.iter().map(|c| Bytes::from(format!("data: {c}\n\n"))).collect();
    Canned::SsePaused(first, gate.clone(), sse_events(&rest))
}

/// Read a streamed answer until `until` holds for what the complete events assemble to;
/// then open the gate and read the rest. Fails (rather than hangs) when the text never
/// comes while the upstream is paused.
async fn read_through_pause(
    h: &common::Harness,
    body: &Value,
    gate: &Arc<Notify>,
    until: impl Fn(&Streamed) -> bool,
) -> (Streamed, Streamed) {
    let mut body = body.clone();
    body["stream"] = json!(true);
    let r = h.client.post(h.url("/v1/chat/completions")).body(body.to_string()).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let mut stream = r.bytes_stream();
    let mut got = Vec::new();
    let before = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let complete = got.windows(2).rposition(|w| w == b"\n\n").map_or(0, |i| i + 2);
            let seen = assemble(&got[..complete]);
            if until(&seen) {
                return seen;
            }
            let piece = stream.next().await.expect("the stream ended during the pause").unwrap();
            got.extend_from_slice(&piece);
        }
    })
    .await
    .expect("the text before the pause never reached the client");
    gate.notify_one();
    while let Some(piece) = stream.next().await {
        got.extend_from_slice(&piece.unwrap());
    }
    (before, assemble(&got))
}

#[tokio::test]
async fn text_reaches_the_client_before_an_upstream_pause() {
    let gate = Arc::new(Notify::new());
    let canned = paused(&["Let me think", " about this question", " carefully."], &gate, &[" Done."], "stop");
    let h = start(move |_| canned.clone()).await;
    let want = "Let me think about this question carefully.";
    let (before, after) = read_through_pause(&h, &ask("think"), &gate, |s| s.content == want).await;
    assert_eq!(before.content, want);
    assert_eq!(after.content, "Let me think about this question carefully. Done.");
    assert!(after.done);
}

#[tokio::test]
async fn text_that_turns_into_markup_after_a_pause_becomes_a_call() {
    let gate = Arc::new(Notify::new());
    let canned = paused(
        &["I'll check", " the weather. <tool"],
        &gate,
        &["_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}</tool_call>"],
        "stop",
    );
    let h = start(move |_| canned.clone()).await;
    // Everything but the possible start of markup is out during the pause.
    let (before, after) =
        read_through_pause(&h, &ask("weather"), &gate, |s| s.content == "I'll check the weather. ").await;
    assert!(before.calls.is_empty());
    assert_eq!(after.content, "I'll check the weather. ");
    assert_eq!(after.calls.len(), 1);
    assert_eq!(after.calls[0].1, "get_weather");
    assert_eq!(after.calls[0].2, "{\"city\": \"Paris\", \"days\": 3}");
    assert_eq!(after.finish.as_deref(), Some("tool_calls"));
}

#[tokio::test]
async fn a_reprompt_mid_stream_sends_no_text_twice() {
    let n = Arc::new(AtomicUsize::new(0));
    let prose = "I'll help you check the weather.";
    let script = move |_: &Seen| {
        if n.fetch_add(1, Ordering::SeqCst) == 0 {
            // A call to a tool that may change things, cut short: refused.
            let text = format!(
                "{prose}<tool_call>{{\"name\": \"send_money\", \"arguments\": {{\"to\": \"bob\"}}}}</tool_call>"
            );
            Canned::sse(&content_chunks(&[&text[..20], &text[20..]], "stop"))
        } else {
            let call = json!({"id": "c2", "type": "function",
                              "function": {"name": "send_money", "arguments": "{\"to\": \"bob\", \"amount\": 3}"}});
            Canned::json(&completion(
                &json!({"role": "assistant", "content": prose, "tool_calls": [call]}),
                "tool_calls",
            ))
        }
    };
    let h = start(script).await;
    let (_, _, seen) = h.stream(&ask("pay bob 3")).await;
    assert_eq!(seen.content, prose);
    assert_eq!(seen.calls, [("c2".to_owned(), "send_money".to_owned(), "{\"to\": \"bob\", \"amount\": 3}".to_owned())]);
    assert_eq!(seen.report["calls"][0]["outcome"], "reprompted");
    // The re-prompt's text is not sent either when the first attempt sent none.
    let h = start({
        let n = Arc::new(AtomicUsize::new(0));
        move |_: &Seen| {
            if n.fetch_add(1, Ordering::SeqCst) == 0 {
                let call = json!({"index": 0, "id": "c1", "type": "function",
                                  "function": {"name": "send_money", "arguments": "{}"}});
                Canned::sse(&[
                    chunk(&json!({"role": "assistant", "tool_calls": [call]}), None),
                    chunk(&json!({}), Some("tool_calls")),
                ])
            } else {
                let call = json!({"id": "c2", "type": "function",
                                  "function": {"name": "send_money", "arguments": "{\"to\": \"bob\", \"amount\": 3}"}});
                Canned::json(&completion(
                    &json!({"role": "assistant", "content": "Paying bob.", "tool_calls": [call]}),
                    "tool_calls",
                ))
            }
        }
    })
    .await;
    let (_, _, seen) = h.stream(&ask("pay bob 3")).await;
    assert_eq!(seen.content, "Paying bob.");
    assert_eq!(seen.calls.len(), 1);
}

/// A reply whose one call cannot be used (a payment with no amount), every time.
fn always_refused(stream: bool) -> Canned {
    let text = "Paying bob now.<tool_call>{\"name\": \"send_money\", \"arguments\": {\"to\": \"alice\"}}</tool_call>";
    let native =
        json!({"id": "c1", "type": "function", "function": {"name": "send_money", "arguments": "{\"to\": \"bob\"}"}});
    if stream {
        Canned::sse(&[
            chunk(&json!({"role": "assistant", "content": text}), None),
            chunk(
                &json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                "function": {"name": "send_money", "arguments": "{\"to\": \"bob\"}"}}]}),
                None,
            ),
            chunk(&json!({}), Some("tool_calls")),
        ])
    } else {
        Canned::json(&completion(&json!({"role": "assistant", "content": text, "tool_calls": [native]}), "tool_calls"))
    }
}

#[tokio::test]
async fn giving_up_says_why_streamed_and_not() {
    let h = start(|seen: &Seen| always_refused(seen.json()["stream"] == true)).await;
    let (_, headers, body) = h.chat(&ask("pay bob")).await;
    let message = &body["choices"][0]["message"];
    let content = message["content"].as_str().unwrap();
    assert!(content.starts_with("Paying bob now.\n\n[toolfix] "), "{content}");
    assert!(content.contains("/amount"), "{content}");
    assert!(message.get("tool_calls").is_none());
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    assert!(headers["x-toolfix"].to_str().unwrap().contains("gave_up=2"));
    assert_eq!(body["x_toolfix"]["calls"][0]["outcome"], "gave_up");
    let (_, _, seen) = h.stream(&ask("pay bob")).await;
    assert_eq!(seen.content, content);
    assert!(seen.calls.is_empty());
    assert_eq!(seen.finish.as_deref(), Some("stop"));
    let metrics = h.client.get(h.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("toolfix_reprompts_total{api=\"chat\",result=\"failed\"} 2"), "{metrics}");
    assert!(metrics.contains("outcome=\"gave_up\""), "{metrics}");
}

#[tokio::test]
async fn giving_up_as_sent_passes_the_call_on_unrepaired() {
    let h = start_with(
        |seen: &Seen| always_refused(seen.json()["stream"] == true),
        |c| {
            c.on_give_up = GiveUp::AsSent;
            c.max_reprompts = 0;
        },
    )
    .await;
    let (_, _, body) = h.chat(&ask("pay bob")).await;
    let message = &body["choices"][0]["message"];
    // The server's call as it came; the call in the text left in the text.
    assert_eq!(message["tool_calls"][0]["function"]["arguments"], "{\"to\": \"bob\"}");
    assert!(message["content"].as_str().unwrap().contains("<tool_call>"));
    assert_eq!(body["x_toolfix"]["calls"][0]["outcome"], "gave_up");
    let (_, _, seen) = h.stream(&ask("pay bob")).await;
    assert_eq!(seen.calls, [("c1".to_owned(), "send_money".to_owned(), "{\"to\": \"bob\"}".to_owned())]);
    assert_eq!(seen.finish.as_deref(), Some("tool_calls"));
}

#[tokio::test]
async fn a_reprompt_answered_without_calls_is_a_give_up() {
    let n = Arc::new(AtomicUsize::new(0));
    let h = start(move |_: &Seen| {
        if n.fetch_add(1, Ordering::SeqCst) == 0 {
            always_refused(false)
        } else {
            Canned::json(&completion(
                &json!({"role": "assistant", "content": "I cannot pay without an amount."}),
                "stop",
            ))
        }
    })
    .await;
    let (_, headers, body) = h.chat(&ask("pay bob")).await;
    assert_eq!(body["choices"][0]["message"]["content"], "I cannot pay without an amount.");
    assert!(headers["x-toolfix"].to_str().unwrap().contains("gave_up=2"), "{headers:?}");
    let metrics = h.client.get(h.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("toolfix_reprompts_total{api=\"chat\",result=\"no_calls\"} 1"), "{metrics}");
    assert!(!metrics.contains("result=\"fixed\""), "{metrics}");
}

#[tokio::test]
async fn the_reprompt_never_sends_null_content_without_calls() {
    let n = Arc::new(AtomicUsize::new(0));
    let text = "<tool_call>{\"name\": \"send_money\", \"arguments\": {\"to\": \"bob\"}}</tool_call>";
    let h = start(move |_: &Seen| {
        if n.fetch_add(1, Ordering::SeqCst) == 0 {
            Canned::json(&completion(&json!({"role": "assistant", "content": text}), "stop"))
        } else {
            Canned::json(&completion(&json!({"role": "assistant", "content": "ok"}), "stop"))
        }
    })
    .await;
    h.chat(&ask("pay bob")).await;
    let second = h.upstream.requests()[1].json();
    for m in second["messages"].as_array().unwrap() {
        let no_calls = m.get("tool_calls").is_none_or(|c| c.as_array().is_none_or(Vec::is_empty));
        assert!(!(m["content"].is_null() && no_calls), "{m}");
    }
    assert_eq!(second["messages"][1]["content"], text);
}
