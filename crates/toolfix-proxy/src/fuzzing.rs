//! The proxy's pure parts driven from arbitrary bytes, each run checked against the
//! invariants its shortcuts rely on: for the fuzz targets (`fuzz/`, feature `fuzzing`)
//! and the property tests below. Not part of the proxy's API: nothing outside the fuzz
//! targets calls it, and its items may change with any release.
//!
//! - [`answer`]: an upstream's non-streamed answer, through each API's borrowed read
//!   (`Adapter::fix_body`), the value path (`apply`, `report`, written compact) and, where
//!   the read offers one, the splice. The read must see the replies the value read sees;
//!   "unchanged" must mean the value path leaves the body as it is (else a broken call
//!   would go out as the upstream sent it: the handler passes such a body on unread); a
//!   splice must read as the value path's body; every body written must be JSON.
//! - [`stream`]: an upstream's SSE bytes, cut in pieces, through each API's
//!   `StreamFixer`: every frame sent is an SSE event whose data is JSON (or `[DONE]`).
//! - [`request`]: a client's request body, through each API's peek and history repair:
//!   a history changed is a history reported, a repaired one needs no second pass, and a
//!   request the peek forwards as its bytes is one the history repair leaves alone.
//!
//! The property tests below build answers, streams and requests from pieces that need every
//! kind of handling and run them through the three; they also check that an answer
//! streamed, in pieces of any size, is fixed as it is when not streamed.
#![expect(clippy::panic, reason = "an invariant that does not hold is what a fuzzer looks for: a panic")]

use crate::adapter::chat::ChatCompletions;
use crate::adapter::messages::Messages;
use crate::adapter::responses::Responses;
use crate::adapter::{Adapter, StreamFixer, Unusable, compact, spliced};
use crate::summary::Summary;
use bytes::Bytes;
use serde_json::{Value, json};
use std::sync::LazyLock;
use toolfix::{FixOptions, FixedReply, Limits, Reply, ReplyOutcome, ToolSet, fix_reply};

/// The tools every run declares: a required string and an integer (the common repairs), a
/// tool with no parameters, one whose name other formats write with a prefix.
static TOOLS: LazyLock<ToolSet> = LazyLock::new(|| {
    let (tools, _) = ToolSet::new_partial(&[
        json!({"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}),
        json!({"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}),
        json!({"name": "noop", "parameters": {"type": "object"}}),
        json!({"name": "functions.lookup", "parameters": {"type": "object",
            "properties": {"q": {"type": "string"}}, "additionalProperties": false}}),
    ]);
    tools
});

/// Which API a run reads as: the selector modulo 3 (chat, messages, responses).
fn api(selector: u8) -> u8 {
    selector % 3
}

/// An upstream's non-streamed answer `body`, read as API `selector` (see the module
/// docs for what is checked).
///
/// # Panics
///
/// When an invariant does not hold: that is what the fuzzer looks for.
pub fn answer(selector: u8, body: &[u8]) {
    match api(selector) {
        0 => answer_as::<ChatCompletions>(body),
        1 => answer_as::<Messages>(body),
        _ => answer_as::<Responses>(body),
    }
}

/// An upstream's SSE `bytes`, pushed `chunk` bytes at a time (at least one), read as API
/// `selector`.
///
/// # Panics
///
/// When a frame is not an SSE event with JSON data.
pub fn stream(selector: u8, chunk: usize, bytes: &[u8]) {
    match api(selector) {
        0 => stream_as::<ChatCompletions>(chunk, bytes),
        1 => stream_as::<Messages>(chunk, bytes),
        _ => stream_as::<Responses>(chunk, bytes),
    }
}

/// A client's request `body`, read as API `selector`.
///
/// # Panics
///
/// When the peek forwards as bytes a request the history repair would change.
pub fn request(selector: u8, body: &[u8]) {
    match api(selector) {
        0 => request_as::<ChatCompletions>(body),
        1 => request_as::<Messages>(body),
        _ => request_as::<Responses>(body),
    }
}

fn fix(reply: &Reply<'_>) -> Option<FixedReply> {
    fix_reply(reply, Some(&*TOOLS), None, &FixOptions::default()).ok()
}

/// A fixed reply as data, for comparing two reads of one reply.
fn seen(fixed: Option<&FixedReply>) -> Value {
    fixed.map_or(Value::Null, |f| serde_json::to_value(f).unwrap_or(Value::Null))
}

fn answer_as<A: Adapter>(body: &[u8]) {
    // Not this API's JSON (a Responses body without `"object": "response"`, say): passed on
    // as it came, which puts no guess in front of a tool.
    let Some(lazy) = A::fix_body(body, &mut |r| fix(r)) else { return };
    // The handler builds the value only for a body the read says changes; one that is not
    // JSON is then passed on as it came.
    let Ok(response) = serde_json::from_slice::<Value>(body) else { return };
    let mut replies = Vec::new();
    A::each_reply(&response, &mut |r| replies.push(fix(r)));
    assert_eq!(replies.len(), lazy.replies.len(), "the reads disagree on the replies");
    for (lazy, value) in lazy.replies.iter().zip(&replies) {
        assert_eq!(seen(lazy.as_ref()), seen(value.as_ref()), "the reads disagree on a reply");
    }
    let changes = lazy.replies.iter().enumerate().any(|(i, f)| f.as_ref().is_some_and(|f| A::changes(&response, i, f)));
    let settled = lazy.replies.iter().flatten().all(|f| f.outcome() != ReplyOutcome::Refused);
    if !lazy.read.changed {
        assert!(lazy.read.edits.is_none(), "edits for a body that does not change");
        if settled {
            // Passed on unread: the value path must agree that nothing changes.
            assert!(!changes, "the read says unchanged, the value path changes the body");
            let mut applied = response.clone();
            for (i, f) in lazy.replies.iter().enumerate() {
                if let Some(f) = f {
                    A::apply(&mut applied, i, f, Unusable::Explain);
                }
            }
            let mut again = Vec::new();
            A::each_reply(&applied, &mut |r| again.push(seen(fix(r).as_ref())));
            let before: Vec<Value> = replies.iter().map(Option::as_ref).map(seen).collect();
            assert_eq!(again, before, "the read says unchanged, `apply` changes a reply");
        }
    }
    let report = json!({"summary": "s", "calls": []});
    let value_path = |unusable: Unusable| {
        let mut value = response.clone();
        for (i, f) in lazy.replies.iter().enumerate() {
            if let Some(f) = f {
                A::apply(&mut value, i, f, unusable);
            }
        }
        A::report(&mut value, report.clone());
        let mut out = Vec::new();
        compact::write(&mut out, &value);
        let back: Value = serde_json::from_slice(&out).unwrap_or_else(|e| panic!("the value path wrote no JSON: {e}"));
        assert_eq!(back, value, "the body written does not read back as its value");
        value
    };
    let explained = value_path(Unusable::Explain);
    value_path(Unusable::AsSent);
    if let Some(edits) = lazy.read.edits
        && settled
        && let Some(out) = spliced(body, edits, &report.to_string())
    {
        let out: Value = serde_json::from_slice(&out).unwrap_or_else(|e| panic!("a spliced body is no JSON: {e}"));
        assert_eq!(out, explained, "the splice differs from the value path");
    }
}

/// One SSE frame as the proxy sends it: a whole event (a blank line after it) whose data
/// (its `data:` lines joined) is JSON or `[DONE]`, read as the event-stream format says (UTF-8, invalid
/// bytes replaced). Other lines are not checked: an event the proxy does
/// not read (a `ping`) is passed on as the upstream wrote it, and a client ignores a field
/// it does not know.
fn check_frame(frame: &Bytes) {
    // A line end, then another: the blank line that ends an event.
    let line_end = |b: &[u8]| -> Option<usize> {
        if b.ends_with(b"\r\n") {
            Some(b.len() - 2)
        } else if b.ends_with(b"\n") || b.ends_with(b"\r") {
            Some(b.len() - 1)
        } else {
            None
        }
    };
    let whole = line_end(frame).and_then(|n| line_end(frame.get(..n)?)).is_some();
    assert!(whole, "a frame does not end its event: {frame:?}");
    let mut data: Option<String> = None;
    // Lines end at `\n`, `\r\n` or `\r` (a `\r\n` read as two ends makes an empty line
    // more, which changes no data).
    for line in frame.split(|b| *b == b'\n' || *b == b'\r') {
        if let Some(d) = line.strip_prefix(b"data:") {
            let d = String::from_utf8_lossy(d.strip_prefix(b" ").unwrap_or(d));
            match &mut data {
                Some(all) => {
                    all.push('\n');
                    all.push_str(&d);
                }
                None => data = Some(d.into_owned()),
            }
        }
    }
    if let Some(data) = data.filter(|d| d != "[DONE]") {
        serde_json::from_str::<Value>(&data).unwrap_or_else(|e| panic!("a frame's data is no JSON ({e}): {frame:?}"));
    }
}

fn stream_as<A: Adapter>(chunk: usize, bytes: &[u8]) {
    let options = FixOptions::default();
    let mut fixer = A::stream(&TOOLS, None, &options, 1 << 16);
    let mut frames = Vec::new();
    for piece in bytes.chunks(chunk.max(1)) {
        match fixer.push(piece) {
            Ok(out) => frames.extend(out),
            Err(fault) => {
                frames.push(fixer.error_frame("upstream_bad_event", fault.message()));
                frames.iter().for_each(check_frame);
                return;
            }
        }
        if fixer.is_done() {
            break;
        }
    }
    // As the handler ends a stream: an upstream error event went out as it came; a stream
    // cut short ends with an error event; else the text held back, then the closing
    // frames (here from the first attempt: recovery needs the upstream).
    let ended = fixer.finish();
    if ended.errored {
    } else if ended.complete {
        frames.extend(ended.frames.iter().cloned());
        let summary = Summary::new(Vec::new());
        for unusable in [Unusable::Explain, Unusable::AsSent] {
            let closing = fixer.closing(&ended.fixed, false, &summary, unusable);
            closing.iter().for_each(check_frame);
        }
    } else {
        frames.push(fixer.error_frame("upstream_stream_broken", "cut"));
    }
    frames.iter().for_each(check_frame);
}

fn request_as<A: Adapter>(body: &[u8]) {
    let Ok(peek) = A::peek_known(body, None) else { return };
    let Ok(mut value) = serde_json::from_slice::<Value>(body) else { return };
    let _ = A::definitions(&value);
    let plain = peek.plain;
    let before = value.clone();
    let changes = A::repair_history(&mut value, &Limits::default());
    // A history left alone is forwarded byte for byte: unchanged means unreported.
    if changes.is_empty() {
        assert_eq!(value, before, "the history repair changed a request and reported nothing");
    }
    // A repaired history needs no second repair.
    let repaired = value.clone();
    let again = A::repair_history(&mut value, &Limits::default());
    assert!(again.is_empty(), "the history repair is not done after one pass: {again:?}");
    assert_eq!(value, repaired, "the history repair is not done after one pass");
    if let Some(n) = plain {
        assert!(changes.is_empty(), "a request forwarded as its bytes has history to repair");
        assert_eq!(value, before, "a request forwarded as its bytes has history to repair");
        let history = A::history(&value);
        let len = history.as_deref().and_then(Value::as_array).map(Vec::len);
        assert_eq!(len, Some(n), "the peek and the value read count the conversation differently");
    }
}

#[cfg(test)]
mod tests {
    use super::{Adapter, ChatCompletions, Messages, Responses, Unusable};
    use proptest::prelude::*;
    use serde_json::{Value, json};

    /// Text with and without call markup, and arguments broken and not.
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(String::new()),
            Just("Sure.".to_owned()),
            Just("<think>Paris?</think>Sure.".to_owned()),
            Just("<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>".to_owned()),
            Just(
                "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\", \"days\": \"2\"".to_owned()
            ),
            Just("[TOOL_CALLS]f{\"a\": 1}".to_owned()),
            Just("```json\n{\"name\": \"f\", \"arguments\": {\"a\": \"1\",}}\n```".to_owned()),
            "[ -~]{0,40}",
        ]
    }

    fn arguments() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("{\"city\": \"Paris\"}".to_owned()),
            Just("{\"city\": \"Paris\", \"days\": \"3\"}".to_owned()),
            Just("{\"city\": \"Paris\", \"city\": \"Rome\"}".to_owned()),
            Just("{'city': 'Paris',}".to_owned()),
            Just("{\"days\": 2}".to_owned()),
            Just("{\"a\": 1}".to_owned()),
            Just("{\"a\": 1.5e".to_owned()),
            Just(String::new()),
            Just("\"{\\\"a\\\": 2}\"".to_owned()),
            Just("{\"q\": \"x\", \"extra\": 1}".to_owned()),
        ]
    }

    fn name() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("get_weather".to_owned()),
            Just("f".to_owned()),
            Just("noop".to_owned()),
            Just("lookup".to_owned()),
            Just("functions.lookup".to_owned()),
            Just("unknown".to_owned()),
            Just(String::new()),
        ]
    }

    /// A call: (id, name, arguments as text).
    fn calls() -> impl Strategy<Value = Vec<(String, String, String)>> {
        prop::collection::vec((prop_oneof![Just("c1".to_owned()), Just("c2".to_owned())], name(), arguments()), 0..3)
    }

    /// Arguments as a Messages `input` (an object when they are one, else the text).
    fn input(arguments: &str) -> Value {
        match serde_json::from_str::<Value>(arguments) {
            Ok(v @ Value::Object(_)) => v,
            _ => json!(arguments),
        }
    }

    /// An answer of API `api` holding `text`, `reasoning` and `calls`, with members that
    /// vary: a stop reason or none, an extra member, a report already there.
    fn body(api: u8, text: &str, reasoning: Option<&str>, calls: &[(String, String, String)], extra: u8) -> Value {
        let stop = ["stop", "tool_calls", "length"][usize::from(extra % 3)];
        let mut v = match api % 3 {
            0 => {
                let tool_calls: Vec<Value> = calls
                    .iter()
                    .map(|(id, n, a)| json!({"id": id, "type": "function", "function": {"name": n, "arguments": a}}))
                    .collect();
                let mut message = json!({"role": "assistant", "content": text});
                if let Some(r) = reasoning {
                    message["reasoning_content"] = json!(r);
                }
                if !tool_calls.is_empty() || extra & 4 != 0 {
                    message["tool_calls"] = Value::Array(tool_calls);
                }
                json!({"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": stop}]})
            }
            1 => {
                let mut content = Vec::new();
                if let Some(r) = reasoning {
                    content.push(json!({"type": "thinking", "thinking": r, "signature": "s"}));
                }
                if !text.is_empty() || extra & 4 != 0 {
                    content.push(json!({"type": "text", "text": text}));
                }
                for (id, n, a) in calls {
                    content.push(json!({"type": "tool_use", "id": id, "name": n, "input": input(a)}));
                }
                let stop = ["end_turn", "tool_use", "max_tokens"][usize::from(extra % 3)];
                json!({"id": "msg", "type": "message", "role": "assistant", "content": content, "stop_reason": stop})
            }
            _ => {
                let mut output = Vec::new();
                if let Some(r) = reasoning {
                    output.push(json!({"type": "reasoning", "id": "rs_1", "summary": [],
                        "content": [{"type": "reasoning_text", "text": r}]}));
                }
                if !text.is_empty() || extra & 4 != 0 {
                    output.push(json!({"type": "message", "id": "m1", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]}));
                }
                for (id, n, a) in calls {
                    output.push(json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": id,
                        "name": n, "arguments": a, "status": "completed"}));
                }
                let status = if extra % 3 == 2 { "incomplete" } else { "completed" };
                json!({"id": "resp", "object": "response", "status": status, "output": output})
            }
        };
        if extra & 8 != 0 {
            v["x_toolfix"] = json!(1);
        }
        if extra & 16 != 0 {
            v["usage"] = json!({"total_tokens": 1.0e2});
        }
        v
    }

    /// `text` in pieces of at most `n` bytes, cut at character boundaries.
    fn pieces(text: &str, n: usize) -> Vec<&str> {
        let mut out = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let mut at = n.min(rest.len());
            while !rest.is_char_boundary(at) {
                at += 1;
            }
            let (piece, tail) = rest.split_at(at);
            out.push(piece);
            rest = tail;
        }
        out
    }

    /// A chat completion as the chunks a server streams: reasoning and content in pieces of
    /// 5 bytes, each call's id and name first, its arguments in pieces of 7, the finish
    /// reason last, then `[DONE]`.
    fn chat_sse(v: &Value) -> String {
        let choice = &v["choices"][0];
        let message = &choice["message"];
        let chunk = |delta: Value, finish: Value| {
            let c = json!({"id": "x", "object": "chat.completion.chunk",
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
            format!("data: {c}\n\n")
        };
        let mut out = chunk(json!({"role": "assistant", "content": ""}), Value::Null);
        for key in ["reasoning_content", "content"] {
            for p in pieces(message[key].as_str().unwrap_or(""), 5) {
                out += &chunk(json!({ key: p }), Value::Null);
            }
        }
        for (i, c) in message["tool_calls"].as_array().into_iter().flatten().enumerate() {
            let f = &c["function"];
            out += &chunk(
                json!({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                                       "function": {"name": f["name"], "arguments": ""}}]}),
                Value::Null,
            );
            for p in pieces(f["arguments"].as_str().unwrap_or(""), 7) {
                out += &chunk(json!({"tool_calls": [{"index": i, "function": {"arguments": p}}]}), Value::Null);
            }
        }
        out += &chunk(json!({}), choice["finish_reason"].clone());
        out + "data: [DONE]\n\n"
    }

    fn sse(api: u8, v: &Value) -> String {
        match api % 3 {
            0 => chat_sse(v),
            1 => crate::fake::messages_sse(v),
            _ => crate::fake::responses_sse(v),
        }
    }

    /// A conversation message of API `api`: prose, a call, its result, a call whose
    /// arguments are broken, reasoning sent back.
    fn turn(api: u8, kind: u8) -> Value {
        let broken = "{\"city\": \"Paris\", \"days\": \"3\",}";
        match (api % 3, kind % 8) {
            (0, 5) => json!({"role": "assistant", "content": "x", "tool_calls": []}),
            (0, 6) => json!({"role": "assistant", "tool_calls": [{"id": "c3", "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]}),
            (0, 7) => json!({"role": "tool", "tool_call_id": "nobody", "content": "orphan"}),
            (1, 5) => json!({"role": "assistant", "content": [{"type": "thinking", "thinking": "x",
                "signature": "toolfix-unsigned"}, {"type": "text", "text": "ok"}]}),
            (1, 6) => json!({"role": "assistant", "content": [{"type": "tool_use", "id": "c3", "name": "get_weather",
                "input": "{'city': 'Oslo',}"}]}),
            (1, 7) => {
                json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "nobody", "content": "x"}]})
            }
            (2, 5) => {
                json!({"type": "function_call", "call_id": "c3", "name": "get_weather", "arguments": "{'city': 'Oslo'"})
            }
            (2, 6) => json!({"type": "function_call_output", "call_id": "nobody", "output": "x"}),
            (2, 7) => json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "x"}]}),
            (_, 0) => json!({"role": "user", "content": "hi"}),
            (0, 1) => json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]}),
            (0, 2) => json!({"role": "tool", "tool_call_id": "c1", "content": "sunny"}),
            (0, 3) => json!({"role": "assistant", "content": "", "tool_calls": [{"id": "c2", "type": "function",
                "function": {"name": "get_weather", "arguments": broken}}]}),
            (0, _) => json!({"role": "assistant", "content": "<think>x</think>ok"}),
            (1, 1) => json!({"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "get_weather",
                "input": {"city": "Oslo"}}]}),
            (1, 2) => {
                json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "sunny"}]})
            }
            (1, 3) => json!({"role": "assistant", "content": [{"type": "tool_use", "id": "c2", "name": "get_weather",
                "input": broken}]}),
            (1, _) => json!({"role": "assistant", "content": [{"type": "thinking", "thinking": "x", "signature": ""},
                {"type": "text", "text": "ok"}]}),
            (_, 1) => {
                json!({"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"})
            }
            (_, 2) => json!({"type": "function_call_output", "call_id": "c1", "output": "sunny"}),
            (_, 3) => json!({"type": "function_call", "call_id": "c2", "name": "get_weather", "arguments": broken}),
            (_, _) => json!({"type": "reasoning", "id": "rs_toolfix_1", "summary": [],
                "content": [{"type": "reasoning_text", "text": "x"}]}),
        }
    }

    /// The names of the calls a response holds after the value path, read back.
    fn names_after_apply<A: Adapter>(body: &Value) -> Vec<String> {
        let mut response = body.clone();
        let mut fixed = Vec::new();
        A::each_reply(&response, &mut |r| fixed.push(super::fix(r).expect("fixed")));
        for (i, f) in fixed.iter().enumerate() {
            A::apply(&mut response, i, f, Unusable::Explain);
        }
        let mut names = Vec::new();
        A::each_reply(&response, &mut |r| {
            let f = super::fix(r).expect("fixed");
            names.extend(f.calls.iter().map(|c| c.name.clone()));
        });
        names.sort();
        names
    }

    /// Regression (found by the fuzzing property test): two server calls sharing an id and
    /// their arguments, to two tools, beside a call the proxy repairs (so the value path
    /// writes the answer). Messages and Responses kept an untouched call's block or item
    /// by id and arguments, not name: the `get_weather` call went out as a second `noop`,
    /// a call the model never made in that place.
    #[test]
    fn an_untouched_call_keeps_its_own_tool_when_another_shares_its_id_and_arguments() {
        let same = "{\"city\": \"Paris\"}";
        let calls = [
            ("c1".to_owned(), "noop".to_owned(), same.to_owned()),
            ("c1".to_owned(), "get_weather".to_owned(), same.to_owned()),
            ("c2".to_owned(), "get_weather".to_owned(), "{\"city\": \"Rome\", \"days\": \"3\"}".to_owned()),
        ];
        let want = ["get_weather", "get_weather", "noop"];
        assert_eq!(names_after_apply::<ChatCompletions>(&body(0, "Sure.", None, &calls, 1)), want);
        assert_eq!(names_after_apply::<Messages>(&body(1, "Sure.", None, &calls, 1)), want);
        assert_eq!(names_after_apply::<Responses>(&body(2, "Sure.", None, &calls, 1)), want);
    }

    /// The replies a stream of API `A` ends with, fixed (`None`: it did not end whole).
    fn streamed<A: Adapter>(chunk: usize, bytes: &[u8]) -> Option<Vec<Value>> {
        let options = toolfix::FixOptions::default();
        let mut fixer = A::stream(&super::TOOLS, None, &options, 1 << 16);
        for piece in bytes.chunks(chunk) {
            crate::adapter::StreamFixer::push(&mut fixer, piece).ok()?;
        }
        let ended = crate::adapter::StreamFixer::finish(&mut fixer);
        ended.complete.then(|| ended.fixed.replies.iter().map(|f| super::seen(f.as_ref())).collect())
    }

    fn plain<A: Adapter>(body: &Value) -> Vec<Value> {
        let mut out = Vec::new();
        A::each_reply(body, &mut |r| out.push(super::seen(super::fix(r).as_ref())));
        out
    }

    /// Regression (found by `a_stream_is_fixed_as_the_answer_is`): a Responses call whose
    /// arguments stay empty (`""`) was read streamed as a call that sent none (`{}`,
    /// untouched), and not streamed as `""` repaired to `{}`: the labels and the report
    /// differed between the two.
    #[test]
    fn a_responses_call_with_empty_arguments_streams_as_it_reads() {
        let calls = [("c1".to_owned(), "f".to_owned(), String::new())];
        let v = body(2, "", None, &calls, 0);
        let streamed = streamed::<Responses>(7, sse(2, &v).as_bytes()).expect("a whole stream");
        assert_eq!(streamed, plain::<Responses>(&v));
        assert_eq!(streamed[0]["tool_calls"][0]["status"], "repaired");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// An answer streamed, in pieces of any size, is fixed as it is when not streamed.
        #[test]
        fn a_stream_is_fixed_as_the_answer_is(
            api in 0u8..3, text in text(), reasoning in prop::option::of(text()), calls in calls(),
            extra in any::<u8>(), chunk in 1usize..80,
        ) {
            // Empty reasoning is no reasoning to a stream (nothing to send a delta for).
            let v = body(api, &text, reasoning.as_deref().filter(|r| !r.is_empty()), &calls, extra & !8);
            let bytes = sse(api, &v).into_bytes();
            let (s, p) = match api {
                0 => (streamed::<ChatCompletions>(chunk, &bytes), plain::<ChatCompletions>(&v)),
                1 => (streamed::<Messages>(chunk, &bytes), plain::<Messages>(&v)),
                _ => (streamed::<Responses>(chunk, &bytes), plain::<Responses>(&v)),
            };
            // A note's span counts native calls by their place in the stream (Messages
            // numbers its text block too): the rest must be the same.
            let spanless = |mut replies: Vec<Value>| {
                for n in replies.iter_mut().filter_map(|r| r.get_mut("notes")).filter_map(Value::as_array_mut).flatten() {
                    if let Some(n) = n.as_object_mut() {
                        n.remove("span");
                    }
                }
                replies
            };
            prop_assert_eq!(s.map(spanless), Some(spanless(p)));
        }

        /// Streams of the same answers, pushed in pieces of any size, cut or flipped at a
        /// byte.
        #[test]
        fn streams_keep_the_invariants(
            api in 0u8..3, text in text(), reasoning in prop::option::of(text()), calls in calls(),
            extra in any::<u8>(), chunk in 1usize..80, cut in any::<prop::sample::Index>(),
            flip in any::<Option<(prop::sample::Index, u8)>>(), end in 0u8..3, eol in 0u8..3,
        ) {
            let v = body(api, &text, reasoning.as_deref(), &calls, extra & !8);
            // Every line end the format allows (the JSON holds none: strings escape theirs).
            let mut text = match eol {
                0 => sse(api, &v),
                1 => sse(api, &v).replace('\n', "\r\n"),
                _ => sse(api, &v).replace('\n', "\r"),
            };
            // The stream's end as sloppy servers write it: no blank line after the last
            // event, or no `[DONE]` and no blank line before the connection closes.
            if end == 2 {
                let done = text.rfind("data: [DONE]").unwrap_or(text.len());
                text.truncate(done);
            }
            if end > 0 {
                text.truncate(text.trim_end_matches(['\n', '\r']).len());
            }
            let mut bytes = text.into_bytes();
            super::stream(api, chunk, &bytes);
            if let Some((at, byte)) = flip {
                let i = at.index(bytes.len());
                bytes[i] = byte;
                super::stream(api, chunk, &bytes);
            }
            bytes.truncate(cut.index(bytes.len() + 1));
            super::stream(api, chunk, &bytes);
        }

        /// Requests whose conversations hold calls, results, broken arguments and
        /// reasoning, or none of them.
        #[test]
        fn requests_keep_the_invariants(
            api in 0u8..3, turns in prop::collection::vec(any::<u8>(), 0..5), tools in any::<bool>(),
            cut in any::<prop::sample::Index>(),
        ) {
            let turns: Vec<Value> = turns.iter().map(|k| turn(api, *k)).collect();
            let key = if api % 3 == 2 { "input" } else { "messages" };
            let mut request = json!({"model": "m", key: turns, "stream": false});
            if tools {
                request["tools"] = json!([{"type": "function", "name": "get_weather",
                    "function": {"name": "get_weather", "parameters": {"type": "object"}}}]);
            }
            let mut bytes = serde_json::to_vec(&request).unwrap();
            super::request(api, &bytes);
            bytes.truncate(cut.index(bytes.len() + 1));
            super::request(api, &bytes);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Answers built from pieces that need every kind of handling, compact and pretty,
        /// and cut or flipped at a byte.
        #[test]
        fn answers_keep_the_invariants(
            api in 0u8..3, text in text(), reasoning in prop::option::of(text()), calls in calls(),
            extra in any::<u8>(), pretty in any::<bool>(), cut in any::<prop::sample::Index>(),
            flip in any::<Option<(prop::sample::Index, u8)>>(), decoy in prop::option::of((text(), calls())),
        ) {
            let v = body(api, &text, reasoning.as_deref(), &calls, extra);
            let mut bytes = if pretty { serde_json::to_vec_pretty(&v).unwrap() } else { serde_json::to_vec(&v).unwrap() };
            super::answer(api, &bytes);
            // The answer's replies given twice, another answer's first: a client's reader
            // keeps the last (or refuses), and so must every read of the proxy.
            if let Some((text, calls)) = decoy {
                let other = body(api, &text, None, &calls, extra);
                let key = ["choices", "content", "output"][usize::from(api % 3)];
                let mut twice = format!("{{{:?}:{},", key, other[key]).into_bytes();
                twice.extend_from_slice(bytes.get(1..).unwrap_or_default());
                super::answer(api, &twice);
            }
            if let Some((at, byte)) = flip {
                let i = at.index(bytes.len());
                bytes[i] = byte;
                super::answer(api, &bytes);
            }
            bytes.truncate(cut.index(bytes.len() + 1));
            super::answer(api, &bytes);
        }
    }
}
