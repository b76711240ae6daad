//! The whole-reply API and its streaming counterpart: what each front end relies on, and
//! the streaming result equal to the whole-reply result for any chunking, over every format
//! case and with server-parsed calls split into deltas.

#![expect(clippy::unwrap_used, reason = "tests")]

use serde_json::{Value, json};
use toolfix::guard::GuardConfig;
use toolfix::{
    CallStatus, FixOptions, FixedReply, Reply, ReplyEvent, ReplyOutcome, ReplyStream, ToolCallDelta, ToolSet, fix_reply,
};

fn weather() -> ToolSet {
    ToolSet::new(&[
        json!({"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]},
            "x-toolfix": {"read_only": true}}),
        json!({"name": "send_money", "parameters": {"type": "object",
            "properties": {"to": {"type": "string"}, "amount": {"type": "integer"}}, "required": ["to", "amount"]}}),
    ])
    .unwrap()
}

fn fix(reply: &Reply<'_>, tools: Option<&ToolSet>) -> FixedReply {
    fix_reply(reply, tools, None, &FixOptions::default()).unwrap()
}

#[test]
fn a_call_in_content_moves_out_repaired_with_its_canonical_name() {
    let tools = weather();
    let text = "Checking.\n<tool_call>{\"name\": \"GetWeather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}</tool_call>";
    let fixed = fix(&Reply::new(text), Some(&tools));
    assert_eq!(fixed.content, "Checking.\n");
    assert_eq!(fixed.outcome(), ReplyOutcome::Usable);
    let call = &fixed.calls[0];
    assert_eq!((call.name.as_str(), call.written_name.as_str()), ("get_weather", "GetWeather"));
    assert_eq!(call.status, CallStatus::Repaired);
    assert_eq!(call.arguments_text(), Some(r#"{"city": "Paris", "days": 3}"#));
    assert!(call.id.starts_with("call_"));
    assert!(fixed.changed_calls());
}

#[test]
fn server_calls_valid_as_sent_are_untouched_byte_for_byte() {
    let tools = weather();
    let calls = json!([{"id": "call_A", "type": "function",
        "function": {"name": "get_weather", "arguments": "{\"city\":  \"Oslo\"}"}}]);
    let fixed = fix(&Reply::new("").with_tool_calls(&calls), Some(&tools));
    let call = &fixed.calls[0];
    assert_eq!(call.id, "call_A");
    assert_eq!(call.status, CallStatus::Untouched);
    assert_eq!(call.arguments_text(), Some("{\"city\":  \"Oslo\"}"));
    assert!(!fixed.changed_calls());
}

#[test]
fn written_arguments_are_the_models_text_whatever_became_of_the_call() {
    let tools = weather();
    let written = [
        r#"{"city": "Paris",  "days": 3}"#,
        r#"{"city": "Paris", "days": "3"}"#,
        r#"{"days": 3}"#,
        "{'city': 'Paris'",
        "",
    ];
    for (i, args) in written.iter().enumerate() {
        let calls = json!([{"id": format!("c{i}"), "function": {"name": "get_weather", "arguments": args}},
                           {"function": {"name": "send_money", "arguments": args}}]);
        let text = format!("<tool_call>{{\"name\": \"get_weather\", \"arguments\": {args}}}</tool_call>");
        // In text, arguments a format reads as written (complete objects).
        let closed = args.ends_with('}');
        let replies = [Some(Reply::new("").with_tool_calls(&calls)), closed.then(|| Reply::new(&text))];
        for reply in replies.iter().flatten() {
            let fixed = fix(reply, Some(&tools));
            for call in &fixed.calls {
                let status = call.status;
                assert_eq!(call.written_arguments(), *args, "{args} {status:?}");
                if status == CallStatus::Untouched {
                    assert_eq!(call.arguments_text(), Some(*args));
                }
            }
        }
    }
}

#[test]
fn unknown_and_refused_calls_carry_a_message() {
    let tools = weather();
    let calls = json!([{"id": "a", "function": {"name": "send_money", "arguments": "{\"to\": \"bob\"}"}},
                       {"id": "b", "function": {"name": "delete_all", "arguments": "{}"}}]);
    let fixed = fix(&Reply::new("").with_tool_calls(&calls), Some(&tools));
    assert_eq!(fixed.outcome(), ReplyOutcome::Refused);
    assert!(fixed.calls.iter().all(|c| c.status == CallStatus::Refused));
    assert!(fixed.calls[0].message().unwrap().contains("/amount"));
    assert!(fixed.calls[1].message().unwrap().contains("delete_all"));
    assert!(fixed.calls[0].arguments_text().is_none());
}

#[test]
fn prose_alone_is_a_valid_answer() {
    let fixed = fix(&Reply::new("Paris is sunny."), Some(&weather()));
    assert_eq!(fixed.outcome(), ReplyOutcome::NoCalls);
    assert_eq!(fixed.content, "Paris is sunny.");
}

#[test]
fn without_tools_arguments_are_salvaged_only() {
    let fixed = fix(&Reply::new("<tool_call>{\"name\": \"x\", \"arguments\": {'a': True,}}</tool_call>"), None);
    assert_eq!(fixed.calls[0].status, CallStatus::Repaired);
    assert_eq!(fixed.calls[0].arguments_text(), Some(r#"{"a": true}"#));
}

#[test]
fn a_call_repeated_in_another_channel_is_kept_once() {
    let tools = weather();
    let text = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}</tool_call>";
    let calls = json!([{"id": "srv", "function": {"name": "get_weather", "arguments": "{\"city\":\"Rome\"}"}}]);
    let fixed = fix(&Reply::new(text).with_tool_calls(&calls), Some(&tools));
    assert_eq!(fixed.calls.len(), 1);
    assert_eq!(fixed.notes.len(), 1);
}

#[test]
fn calls_in_reasoning_are_used_only_when_no_other_channel_has_one() {
    let tools = weather();
    let think = "I will call <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}</tool_call>";
    let alone = fix(&Reply::new("").with_reasoning_content(think), Some(&tools));
    assert_eq!(alone.calls.len(), 1);
    assert_eq!(alone.calls[0].channel, toolfix::extract::Channel::Reasoning);
    let calls = json!([{"id": "srv", "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}}]);
    let both = fix(&Reply::new("").with_reasoning_content(think).with_tool_calls(&calls), Some(&tools));
    assert_eq!(both.calls.len(), 1);
    assert_eq!(both.calls[0].id, "srv");
}

#[test]
fn storms_are_stopped_from_the_history_alone() {
    let tools = weather();
    let call = json!({"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}});
    let mut history = vec![json!({"role": "user", "content": "weather?"})];
    for i in 0..2 {
        let mut c = call.clone();
        c["id"] = json!(format!("c{i}"));
        history.push(json!({"role": "assistant", "content": null, "tool_calls": [c]}));
        history.push(json!({"role": "tool", "tool_call_id": format!("c{i}"), "content": "sunny"}));
    }
    let history = Value::Array(history);
    let calls = json!([call]);
    let fixed =
        fix_reply(&Reply::new("").with_tool_calls(&calls), Some(&tools), Some(&history), &FixOptions::default())
            .unwrap();
    assert_eq!(fixed.calls[0].status, CallStatus::Suppressed);
    assert!(fixed.calls[0].suppressed().unwrap().message.contains("get_weather"));
    assert_eq!(fixed.outcome(), ReplyOutcome::Refused);
    let off = FixOptions::default().with_guard(None);
    let fixed = fix_reply(&Reply::new("").with_tool_calls(&calls), Some(&tools), Some(&history), &off).unwrap();
    assert_eq!(fixed.calls[0].status, CallStatus::Untouched);
    let lax = FixOptions::default().with_guard(Some(GuardConfig::default().with_threshold(5)));
    let fixed = fix_reply(&Reply::new("").with_tool_calls(&calls), Some(&tools), Some(&history), &lax).unwrap();
    assert_eq!(fixed.calls[0].status, CallStatus::Untouched);
}

#[test]
fn fresh_ids_differ_between_turns_and_agree_within_one() {
    let tools = weather();
    let text = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}</tool_call>";
    let reply = Reply::new(text);
    let h1 = json!([{"role": "user", "content": "a"}]);
    let h2 = json!([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]);
    let o = FixOptions::default();
    let a = fix_reply(&reply, Some(&tools), Some(&h1), &o).unwrap();
    let b = fix_reply(&reply, Some(&tools), Some(&h1), &o).unwrap();
    let c = fix_reply(&reply, Some(&tools), Some(&h2), &o).unwrap();
    assert_eq!(a.calls[0].id, b.calls[0].id);
    assert_ne!(a.calls[0].id, c.calls[0].id);
    let two = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}</tool_call>\
               <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>";
    let d = fix(&Reply::new(two), Some(&tools));
    assert_ne!(d.calls[0].id, d.calls[1].id);
}

#[test]
fn a_reply_over_the_size_limit_is_an_error() {
    let big = "x".repeat(300 * 1024);
    let err = fix_reply(&Reply::new(&big), None, None, &FixOptions::default()).unwrap_err();
    assert_eq!(err.kind(), toolfix::ErrorKind::InputTooLarge);
    assert!(err.message().contains("too large"), "{}", err.message());
    let mut stream = ReplyStream::new(None, None, FixOptions::default());
    assert!(stream.push_content(&big).is_err());
}

#[test]
fn fixed_reply_serializes_with_raw_arguments() {
    let tools = weather();
    let calls =
        json!([{"id": "a", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\", \"days\": 1.0}"}}]);
    let fixed = fix(&Reply::new("ok").with_tool_calls(&calls), Some(&tools));
    let text = serde_json::to_string(&fixed).unwrap();
    assert!(text.contains(r#""arguments":{"city":"Oslo","days":1.0}"#), "{text}");
    assert!(text.contains(r#""outcome":"refused""#) || text.contains(r#""status":"untouched""#), "{text}");
}

// ---- streaming equals whole ----

/// A call as compared: id, name, status, arguments, message.
type CallSummary = (String, String, CallStatus, Option<String>, Option<String>);

#[derive(Debug, PartialEq)]
struct Summary {
    content: String,
    reasoning: Option<String>,
    calls: Vec<CallSummary>,
}

fn summary(f: &FixedReply) -> Summary {
    Summary {
        content: f.content.clone(),
        reasoning: f.reasoning_content.clone(),
        calls: f
            .calls
            .iter()
            .map(|c| {
                (
                    c.id.clone(),
                    c.name.clone(),
                    c.status,
                    c.arguments_text().map(str::to_owned),
                    c.message().map(str::to_owned),
                )
            })
            .collect(),
    }
}

/// Split `text` into pieces at the given char-boundary cuts.
fn pieces(text: &str, cuts: &[usize]) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = 0;
    for &c in cuts {
        if c > at && c < text.len() && text.is_char_boundary(c) {
            out.push(text[at..c].to_owned());
            at = c;
        }
    }
    out.push(text[at..].to_owned());
    out
}

struct Rng(u64);
impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
    fn cuts(&mut self, len: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..self.next(6)).map(|_| self.next(len + 1)).collect();
        v.sort_unstable();
        v
    }
}

/// Stream a reply: reasoning, then content, then each server call as deltas, each text cut
/// at `cut` positions (byte by byte when `None`).
fn streamed(reply: &Reply<'_>, tools: Option<&ToolSet>, rng: Option<&mut Rng>, history: Option<&Value>) -> FixedReply {
    let mut stream = ReplyStream::new(tools, history, FixOptions::default());
    let split = |text: &str, rng: &mut Option<&mut Rng>| match rng {
        Some(r) => {
            let cuts = r.cuts(text.len());
            pieces(text, &cuts)
        }
        None => text.chars().map(String::from).collect(),
    };
    let mut rng = rng;
    let mut calls_seen = 0;
    let mut count = |events: Vec<ReplyEvent>| {
        calls_seen += events.iter().filter(|e| matches!(e, ReplyEvent::Call(_))).count();
    };
    if let Some(r) = reply.reasoning_content {
        for p in split(r, &mut rng) {
            count(stream.push_reasoning(&p).unwrap());
        }
    }
    for p in split(reply.content, &mut rng) {
        count(stream.push_content(&p).unwrap());
    }
    for (i, call) in reply.tool_calls.and_then(Value::as_array).into_iter().flatten().enumerate() {
        let f = call.get("function").filter(|f| f.is_object()).unwrap_or(call);
        let name = f.get("name").and_then(Value::as_str).unwrap_or("");
        let mut first = ToolCallDelta::new(i).with_name(name);
        if let Some(id) = call.get("id").and_then(Value::as_str) {
            first = first.with_id(id);
        }
        let args = match f.get("arguments") {
            Some(Value::String(s)) => Some(s.clone()),
            None | Some(Value::Null) => None,
            Some(v) => Some(v.to_string()),
        };
        count(stream.push_tool_call(first));
        if let Some(args) = args {
            for p in split(&args, &mut rng) {
                count(stream.push_tool_call(ToolCallDelta::new(i).with_arguments(&p)));
            }
        }
    }
    let (events, fixed) = stream.finish(reply.finish_reason);
    count(events);
    assert_eq!(calls_seen, fixed.calls.len(), "every call is sent once as an event");
    fixed
}

fn check_equal(id: &str, reply: &Reply<'_>, tools: Option<&ToolSet>, rng: &mut Rng) {
    let fixed = fix_reply(reply, tools, None, &FixOptions::default()).unwrap();
    // Content said to be as given is, byte for byte; said otherwise, it differs unless the
    // extractor copied it for another reason (never in these cases: checked here too).
    assert_eq!(fixed.content_as_given(), fixed.content == reply.content, "{id}: content_as_given");
    let whole = summary(&fixed);
    assert_eq!(summary(&streamed(reply, tools, None, None)), whole, "{id}: byte by byte");
    for _ in 0..3 {
        assert_eq!(summary(&streamed(reply, tools, Some(&mut *rng), None)), whole, "{id}: random chunks");
    }
}

#[test]
fn streaming_equals_whole_on_every_format_case() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut n = 0;
    for file in ["cases.jsonl", "own_cases.jsonl", "own_markup_cases.jsonl"] {
        let text = std::fs::read_to_string(format!("tests/fixtures/formats/{file}")).unwrap();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: Value = serde_json::from_str(line).unwrap();
            let id = v["id"].as_str().unwrap_or("?").to_owned();
            let tools = v.get("tools").and_then(Value::as_array).map(|t| ToolSet::new_partial(t).0);
            let content = v["input"]["content"].as_str().unwrap_or("");
            let mut reply = Reply::new(content);
            if let Some(r) = v["input"]["reasoning_content"].as_str() {
                reply = reply.with_reasoning_content(r);
            }
            if let Some(calls) = v["input"].get("tool_calls").filter(|c| c.is_array()) {
                reply = reply.with_tool_calls(calls);
            }
            for finish in [None, Some("length")] {
                let mut r = reply;
                r.finish_reason = finish;
                check_equal(&id, &r, tools.as_ref(), &mut rng);
                check_equal(&id, &r, None, &mut rng);
            }
            n += 1;
        }
    }
    assert!(n > 400, "{n} cases");
}

#[test]
fn streaming_equals_whole_with_server_calls_and_text_calls_together() {
    let tools = weather();
    let mut rng = Rng(7);
    let calls = json!([
        {"id": "s1", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\", \"days\": \"2\"}"}},
        {"function": {"name": "send_money", "arguments": "{\"to\": \"bob\", \"amount\": 5"}},
        {"id": "s3", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}},
        {"id": "s4", "function": {"name": "get_weather"}}
    ]);
    let content = "Sure. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call> and\n<tool_call>{\"name\": \"send_money\", \"arguments\": {\"to\": \"al\", \"amount\": 1";
    for finish in [None, Some("stop"), Some("length")] {
        for with_calls in [false, true] {
            let mut reply = Reply::new(content).with_reasoning_content(
                "think <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Nice\"}}</tool_call>",
            );
            if with_calls {
                reply = reply.with_tool_calls(&calls);
            }
            reply.finish_reason = finish;
            check_equal("mixed", &reply, Some(&tools), &mut rng);
        }
    }
}

/// Every single split point of the content (and of each server call's arguments).
#[test]
fn streaming_equals_whole_at_every_split_point() {
    let tools = weather();
    let calls = json!([{"id": "s1", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\", \"days\": \"2\"}"}}]);
    let contents = [
        "Sure. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call> done",
        "<think>plan <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Nice\"}}</tool_call></think>ok",
        "[TOOL_CALLS][{\"name\": \"send_money\", \"arguments\": {\"to\": \"al\", \"amount\": 10}}]",
        "<tool_call>{\"name\": \"send_money\", \"arguments\": {\"to\": \"al\", \"amount\": 1",
    ];
    for content in contents {
        for with_calls in [false, true] {
            for finish in [None, Some("length")] {
                let mut reply = Reply::new(content);
                if with_calls {
                    reply = reply.with_tool_calls(&calls);
                }
                reply.finish_reason = finish;
                let whole = summary(&fix_reply(&reply, Some(&tools), None, &FixOptions::default()).unwrap());
                for k in (1..content.len()).filter(|&k| content.is_char_boundary(k)) {
                    let mut stream = ReplyStream::new(Some(&tools), None, FixOptions::default());
                    stream.push_content(&content[..k]).unwrap();
                    stream.push_content(&content[k..]).unwrap();
                    if with_calls {
                        let args = calls[0]["function"]["arguments"].as_str().unwrap();
                        let j = k.min(args.len());
                        stream.push_tool_call(ToolCallDelta::new(0).with_id("s1").with_name("get_weather"));
                        stream.push_tool_call(ToolCallDelta::new(0).with_arguments(&args[..j]));
                        stream.push_tool_call(ToolCallDelta::new(0).with_arguments(&args[j..]));
                    }
                    let (_, fixed) = stream.finish(finish);
                    assert_eq!(summary(&fixed), whole, "{content:?} split at {k}");
                }
            }
        }
    }
}

#[test]
fn the_stream_can_cross_await_points() {
    fn assert_send<T: Send>() {}
    assert_send::<ReplyStream>();
    assert_send::<FixedReply>();
}

#[test]
fn calls_moved_out_of_text_are_repaired_and_the_servers_copy_wins() {
    let tools = weather();
    // An envelope that was not strict JSON: salvaged, its fixes reported.
    let text = "<tool_call>{'name': 'get_weather', 'arguments': {\"city\": \"Paris\"}}</tool_call>";
    let fixed = fix(&Reply::new(text), Some(&tools));
    let call = &fixed.calls[0];
    assert_eq!(call.status, CallStatus::Repaired);
    assert!(call.report().envelope_fixes.iter().any(|f| f.kind.as_str() == "single_quotes"));
    assert_eq!(call.arguments_text(), Some(r#"{"city":"Paris"}"#));
    // Valid markup, but moved out of `content`: repaired, not untouched.
    let text = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>";
    let fixed = fix(&Reply::new(text), Some(&tools));
    assert_eq!(fixed.calls[0].status, CallStatus::Repaired);
    assert!(fixed.calls[0].report().envelope_fixes.is_empty());
    // The server parsed the call and left its markup in `content` too: the server's call
    // and id are kept, the copy is dropped with a note.
    let server = json!([{"id": "srv_1", "type": "function",
        "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]);
    let fixed = fix(&Reply::new(text).with_tool_calls(&server), Some(&tools));
    assert_eq!(fixed.calls.len(), 1);
    assert_eq!((fixed.calls[0].id.as_str(), fixed.calls[0].status), ("srv_1", CallStatus::Untouched));
    assert!(fixed.notes.iter().any(|n| n.kind == toolfix::extract::NoteKind::Duplicate));
}

/// Server calls given borrowed (`NativeCall`, what a front end that reads the response
/// itself passes) are read as the same calls in a `tool_calls` value: untouched, repaired,
/// refused, split, unnamed, without ids, repeated, beside content calls, cut by the limit,
/// and with a storm in the history.
#[test]
fn borrowed_server_calls_read_as_the_tool_calls_value() {
    let tools = weather();
    let call = |id: Option<&str>, name: &str, arguments: &str| match id {
        Some(id) => json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}),
        None => json!({"type": "function", "function": {"name": name, "arguments": arguments}}),
    };
    let cases: Vec<(&str, Vec<Value>, Option<&str>)> = vec![
        ("", vec![call(Some("c1"), "get_weather", r#"{"city": "Paris", "days": 3}"#)], None),
        ("Hi", vec![call(Some("c1"), "get_weather", r#"{"city": "Paris", "days": "3"}"#)], Some("tool_calls")),
        ("", vec![call(None, "GetWeather", r#"{"city": "Oslo"}"#), call(None, "send_money", "{}")], None),
        ("", vec![call(Some("c1"), "get_weather", r#"{"city": "a"}{"city": "b"}"#)], None),
        ("", vec![call(Some("c1"), "", r#"{"to": "x", "amount": 2}"#)], None),
        (
            "",
            vec![
                call(Some("a"), "get_weather", r#"{"city": "Rome"}"#),
                call(Some("b"), "get_weather", r#"{"city":"Rome"}"#),
            ],
            None,
        ),
        (
            "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lima\"}}</tool_call>",
            vec![call(Some("c1"), "get_weather", r#"{"city": "Lima"}"#)],
            None,
        ),
        ("", vec![call(Some("c1"), "send_money", r#"{"to": "x", "amount": 1"#)], Some("length")),
        ("", vec![call(Some("c1"), "send_money", r#"{"to": "bob", "amount": 5}"#)], None),
    ];
    let history = json!([
        {"role": "assistant", "tool_calls": [{"id": "h1", "function": {"name": "send_money", "arguments": "{\"to\": \"bob\", \"amount\": 5}"}}]},
        {"role": "tool", "tool_call_id": "h1", "content": "sent"},
        {"role": "assistant", "tool_calls": [{"id": "h2", "function": {"name": "send_money", "arguments": "{\"amount\": 5, \"to\": \"bob\"}"}}]},
        {"role": "tool", "tool_call_id": "h2", "content": "sent"},
    ]);
    for (content, calls, finish) in &cases {
        let value = Value::Array(calls.clone());
        let natives: Vec<toolfix::NativeCall<'_>> = calls
            .iter()
            .map(|c| {
                let f = &c["function"];
                let n = toolfix::NativeCall::new(f["name"].as_str().unwrap(), f["arguments"].as_str().unwrap());
                match c.get("id").and_then(Value::as_str) {
                    Some(id) => n.with_id(id),
                    None => n,
                }
            })
            .collect();
        for history in [None, Some(&history)] {
            let mut by_value = Reply::new(content).with_tool_calls(&value);
            let mut borrowed = Reply::new(content).with_native_calls(&natives);
            if let Some(f) = finish {
                by_value = by_value.with_finish_reason(f);
                borrowed = borrowed.with_finish_reason(f);
            }
            let options = FixOptions::default();
            let a = fix_reply(&by_value, Some(&tools), history, &options).unwrap();
            let b = fix_reply(&borrowed, Some(&tools), history, &options).unwrap();
            assert_eq!(serde_json::to_value(&a).unwrap(), serde_json::to_value(&b).unwrap(), "{calls:?}");
        }
    }
}
