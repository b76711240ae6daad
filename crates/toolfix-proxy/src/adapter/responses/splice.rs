//! A Responses response written back by editing the upstream's bytes (a splice), as
//! Messages and Chat Completions do (`Read::edits`): a repaired call's `arguments` (a JSON
//! string) and any `status` that `apply` writes as `completed` are replaced where they
//! are, the report is added; the rest (the text, reasoning items, calls left alone,
//! members the proxy does not read) goes out as the upstream sent it, instead of the body
//! being read as a value, `apply`'d and written out (most of the proxy's work on a
//! repaired answer). Whenever the edits would not give what `apply` gives, there are none
//! and the value path runs.

use super::{ItemView, PartView, Parts, ResponseView, moved};
use crate::adapter::Edit;
use crate::adapter::view::{Raw, Text, span_of, string_span};
use toolfix::extract::Channel;
use toolfix::{CallStatus, FixedCall, FixedReply};

/// The keys of a `message` item as `apply` writes it (`type`, `id`, `status`, `role`,
/// `content`), as bits of [`ItemView::seen`].
const MESSAGE_KEYS: u64 = 0b0_1110_0011;
/// The keys of a `function_call` item as `apply` writes it (`type`, `id`, `call_id`,
/// `name`, `arguments`, `status`).
const FUNCTION_CALL_KEYS: u64 = 0b0_0011_1111;
/// The keys of an `output_text` part as `apply` writes it (`type`, `text`, `annotations`),
/// as bits of [`PartView::seen`].
const OUTPUT_TEXT_KEYS: u64 = 0b111;

/// The edits `apply` would make to the response (with every call usable), when each
/// replaces a value that is there: a rewritten call's `arguments`, a `status` that is not
/// `completed`. `None` for any other change `apply` would make (the text or its item
/// written, an item added, dropped or moved, a member added or dropped), a call not
/// usable or found in the text, reasoning moved out of the text, a member repeated, or a
/// report already there: the response is then built as a value.
///
/// `apply` writes the output as: the items other than messages and calls where they were,
/// the text left in one `message` item where the first was (`{"type", "id", "status":
/// "completed", "role": "assistant", "content": [{"type": "output_text", "text",
/// "annotations": []}]}`; none when empty), then each usable call: an untouched server
/// call as its own item (the one with its call id, name and the same `arguments` string),
/// another as `{"type": "function_call", "id", "call_id", "name", "arguments",
/// "status": "completed"}`. So a body is spliced when its calls come last, one item per
/// fixed call in order (same call id and name, no call id twice), its one message item
/// (if any) is that shape holding the text left, and a call written anew has exactly the
/// members `apply` writes: only its `arguments` and `status` then change.
pub(super) fn edits(body: &[u8], view: &ResponseView<'_>, parts: &Parts<'_>, fixed: &FixedReply) -> Option<Vec<Edit>> {
    if view.dup || view.report.0.is_some() {
        return None;
    }
    // No output: `apply` adds it.
    let items = view.output.0.as_deref()?;
    if fixed.calls.iter().any(|c| !c.status.is_usable() || c.channel != Channel::ToolCalls)
        || moved(parts.reasoning.as_deref(), fixed.reasoning_content.as_deref()).is_some()
    {
        return None;
    }
    let is_call = |i: &ItemView<'_>| i.kind.as_str() == Some("function_call");
    let first_call = items.iter().position(is_call).unwrap_or(items.len());
    let (others, calls) = items.split_at(first_call);
    let mut edits = Vec::new();
    let mut messages = 0;
    for item in others {
        if item.dup {
            return None;
        }
        if item.kind.as_str() == Some("message") {
            messages += 1;
            if messages > 1 || fixed.content.is_empty() {
                return None;
            }
            message_edits(body, item, &fixed.content, &mut edits)?;
        }
    }
    if (messages == 0 && !fixed.content.is_empty()) || calls.len() != fixed.calls.len() {
        return None;
    }
    for (i, (item, call)) in calls.iter().zip(&fixed.calls).enumerate() {
        let id = Some(call.id.as_str());
        if item.dup || !is_call(item) || item.call_id.as_str() != id || item.name.as_str() != Some(call.name.as_str()) {
            return None;
        }
        // One item per call id (`apply` looks an untouched call's item up by it): this
        // one, or no splice.
        if calls.iter().position(|o| o.call_id.as_str() == id) != Some(i) {
            return None;
        }
        if call.status == CallStatus::Untouched && same_string(item, call) {
            continue;
        }
        // Its other members `apply` keeps (its name is unchanged).
        if item.seen & FUNCTION_CALL_KEYS != FUNCTION_CALL_KEYS || item.id.as_str().is_none() {
            return None;
        }
        let (start, end) = span_of(body, Raw(item.arguments.raw.0?))?;
        let mut text = Vec::new();
        crate::summary::push_json_str(&mut text, call.arguments_text().unwrap_or("{}"));
        edits.push(Edit { start, end, text: String::from_utf8(text).ok()? });
        completed(body, &item.status, &mut edits)?;
    }
    Some(edits)
}

/// The edits that make the `message` item what `apply` writes for `text`; `None` when it
/// cannot be made so by editing a value in place.
fn message_edits(body: &[u8], item: &ItemView<'_>, text: &str, edits: &mut Vec<Edit>) -> Option<()> {
    // Its other members, and its part's, `apply` keeps (the text is unchanged).
    if item.seen & MESSAGE_KEYS != MESSAGE_KEYS || item.id.as_str().is_none() || item.role.as_str() != Some("assistant")
    {
        return None;
    }
    let [part] = item.content.as_slice() else { return None };
    let kept = |p: &PartView<'_>| {
        !p.dup
            && p.seen & OUTPUT_TEXT_KEYS == OUTPUT_TEXT_KEYS
            && p.kind.as_str() == Some("output_text")
            && p.text.as_str() == Some(text)
    };
    if !kept(part) {
        return None;
    }
    completed(body, &item.status, edits)
}

/// An edit that makes `status` `"completed"` when it is another string (found in the
/// body); none when it is that already; `None` when it is no string, or one with escapes.
fn completed(body: &[u8], status: &Text<'_>, edits: &mut Vec<Edit>) -> Option<()> {
    if status.as_str() != Some("completed") {
        let (start, end) = string_span(body, status)?;
        edits.push(Edit { start, end, text: "\"completed\"".to_owned() });
    }
    Some(())
}

/// True when the item's `arguments` are a string and the call's arguments text (`apply`
/// then keeps the item as it is).
fn same_string(item: &ItemView<'_>, call: &FixedCall) -> bool {
    let Some(raw) = item.arguments.raw.0 else { return false };
    raw.starts_with('"') && serde_json::from_str::<Text<'_>>(raw).is_ok_and(|t| t.as_str() == call.arguments_text())
}

#[cfg(test)]
mod tests {
    use super::super::Responses;
    use crate::adapter::splice_check::{Tally, for_each_format_case, rows};
    use serde_json::{Value, json};
    use toolfix::ToolSet;

    fn both_ways(body: &str, tools: &ToolSet) -> Option<(Option<Value>, Value)> {
        crate::adapter::splice_check::both_ways::<Responses>(body, tools)
    }

    fn response(output: &Value) -> Value {
        json!({"id": "resp_1", "object": "response", "created_at": 1, "status": "completed", "model": "m",
               "output": output, "usage": {"input_tokens": 10, "output_tokens": 20, "total_tokens": 30}})
    }

    fn message(text: &str) -> Value {
        json!({"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
               "content": [{"type": "output_text", "text": text, "annotations": []}]})
    }

    fn call(call_id: &str, arguments: &str) -> Value {
        json!({"type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id, "name": "get_weather",
               "arguments": arguments, "status": "completed"})
    }

    /// A reply as the items a Responses upstream would send: its reasoning as a
    /// `reasoning` item, its text in a `message` item, its server calls as `function_call`
    /// items (`arguments` the text they are).
    fn items(reasoning: Option<&str>, text: &str, calls: &[(&str, &str, &str)]) -> Value {
        let mut out = Vec::new();
        if let Some(r) = reasoning {
            out.push(json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": r}]}));
        }
        if !text.is_empty() {
            out.push(message(text));
        }
        for (i, (id, name, arguments)) in calls.iter().enumerate() {
            out.push(json!({"type": "function_call", "id": format!("fc_{i}"), "call_id": id, "name": name,
                            "arguments": arguments, "status": "completed"}));
        }
        Value::Array(out)
    }

    /// Every format case of the library's corpus (as `tests/formats.rs` sends it), as a
    /// Responses answer: a splice, where taken, gives what the value path gives.
    #[test]
    fn a_splice_is_the_value_path_over_the_format_corpus() {
        let mut tally = Tally::default();
        for_each_format_case(|reasoning, text, calls, tools| {
            tally.check::<Responses>(&response(&items(reasoning, text, calls)), tools);
        });
        // Its server calls are renamed, split or kept once, its calls found in text: each
        // is built (none spliced), and none may differ.
        println!("{tally:?}");
        assert!(tally.built >= 1000, "{tally:?}");
    }

    /// Every case of the library's repair corpus (one tool, one call's arguments) as a
    /// `function_call` item after a message, with a reasoning item or not: a splice, where
    /// taken, gives what the value path gives.
    #[test]
    fn a_splice_is_the_value_path_over_the_repair_corpus() {
        let mut tally = Tally::default();
        for row in rows("repair/cases.jsonl") {
            let (tools, _) = ToolSet::new_partial(std::slice::from_ref(&row["tool"]));
            let name = row["tool"]["name"].as_str().unwrap();
            let arguments = row["arguments"].as_str().map_or_else(|| row["arguments"].to_string(), str::to_owned);
            let call = [("call_1", name, arguments.as_str())];
            for (reasoning, text) in [(None, "Sure."), (Some("Let me see."), "Sure."), (None, "")] {
                tally.check::<Responses>(&response(&items(reasoning, text, &call)), &tools);
            }
            // The arguments as a value (a local server's habit), and items still in
            // progress.
            let mut as_value = items(None, "x", &call);
            as_value[0]["status"] = json!("in_progress");
            as_value[1]["status"] = json!("in_progress");
            as_value[1]["arguments"] = serde_json::from_str(&arguments).unwrap_or_else(|_| json!(arguments));
            tally.check::<Responses>(&response(&as_value), &tools);
            // Members `apply` keeps: a message's phase, its part's annotations and
            // logprobs, a call's caller and namespace.
            let mut with_members = items(None, "x", &call);
            with_members[0]["phase"] = json!("commentary");
            with_members[0]["content"][0]["annotations"] =
                json!([{"type": "url_citation", "start_index": 0, "end_index": 1}]);
            with_members[0]["content"][0]["logprobs"] = json!([{"token": "x", "logprob": -0.1}]);
            with_members[1]["caller"] = json!({"type": "direct"});
            with_members[1]["namespace"] = json!("tools");
            tally.check::<Responses>(&response(&with_members), &tools);
        }
        println!("{tally:?}");
        assert!(tally.spliced >= 300, "{tally:?}");
    }

    fn weather() -> ToolSet {
        ToolSet::new(&[json!({"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}})])
        .unwrap()
    }

    const BROKEN: &str = r#"{"city": "Paris", "days": "3"}"#;
    const FINE: &str = r#"{"city": "Oslo"}"#;

    fn with_key(item: &Value, key: &str, value: Value) -> Value {
        let mut i = item.clone();
        i[key] = value;
        i
    }

    /// Bodies the splice takes (each reads as the value path's response) and bodies it
    /// leaves to the value path (where its edits would not be what `apply` writes).
    #[test]
    fn a_splice_is_taken_only_where_it_is_exact() {
        let tools = weather();
        let text = message("Sure \u{e9} \"quoted\"\n");
        let reasoning = json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Hmm."}],
                               "encrypted_content": "gAAA"});
        let part = |key: &str, value: Value| {
            let mut m = text.clone();
            m["content"][0][key] = value;
            m
        };
        let taken = [
            // The load example's answer; with the upstream's reasoning and an item the
            // proxy does not read, an untouched call beside, no text.
            response(&json!([text, call("call_1", BROKEN)])),
            response(&json!([reasoning, {"type": "web_search_call", "id": "ws_1", "status": "completed"}, text,
                             call("call_1", BROKEN)])),
            response(&json!([text, call("call_1", FINE), call("call_2", BROKEN)])),
            response(&json!([call("call_1", BROKEN)])),
            // The arguments as a value (rewritten as a string), statuses still in progress
            // (written `completed`), a float elsewhere (the rest is the upstream's bytes).
            response(&json!([
                with_key(&text, "status", json!("in_progress")),
                with_key(&call("call_1", BROKEN), "status", json!("in_progress"))
            ])),
            response(&json!([text, with_key(&call("call_1", ""), "arguments", serde_json::from_str(BROKEN).unwrap())])),
            json!({"object": "response", "output": [call("call_1", BROKEN)], "usage": {"n": 1.0e2}}),
            // Members `apply` keeps: on the message, on its part (its text unchanged: its
            // annotations and logprobs too), on a call (its name unchanged).
            response(&json!([with_key(&text, "phase", json!("final")), call("call_1", BROKEN)])),
            response(&json!([
                part("annotations", json!([{"type": "url_citation", "start_index": 0, "end_index": 4}])),
                call("call_1", BROKEN)
            ])),
            response(&json!([part("logprobs", json!([{"token": "S", "logprob": -0.1}])), call("call_1", BROKEN)])),
            response(&json!([text, with_key(&call("call_1", BROKEN), "namespace", json!("x"))])),
            response(&json!([text, with_key(&call("call_1", BROKEN), "caller", json!({"type": "direct"}))])),
        ];
        for body in &taken {
            for text in [body.to_string(), serde_json::to_string_pretty(body).unwrap()] {
                let (s, v) = both_ways(&text, &tools).unwrap_or_else(|| panic!("no change: {text}"));
                assert_eq!(s.as_ref(), Some(&v), "{text}");
            }
        }
        let built = [
            // A call moved out of the text, reasoning moved out of it.
            response(&json!([message(&format!(
                "<tool_call>{{\"name\": \"get_weather\", \"arguments\": {BROKEN}}}</tool_call>"
            ))])),
            response(&json!([message("<think>Paris.</think>Sure."), call("call_1", BROKEN)])),
            // A call given up (no city).
            response(&json!([text, call("call_1", r#"{"days": 2}"#)])),
            // Items `apply` writes anew or drops: a message without an id, not the
            // assistant's, with two parts, a part without annotations; two messages, text
            // after a call, an empty text; a call with no id, no status or one that is no
            // string.
            response(&json!([with_key(&text, "id", Value::Null), call("call_1", BROKEN)])),
            response(&json!([with_key(&text, "role", json!("user")), call("call_1", BROKEN)])),
            response(&json!([{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                              "content": [{"type": "output_text", "text": "Su", "annotations": []},
                                          {"type": "output_text", "text": "re.", "annotations": []}]},
                             call("call_1", BROKEN)])),
            response(&json!([{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                              "content": [{"type": "output_text", "text": "Sure \u{e9} \"quoted\"\n"}]},
                             call("call_1", BROKEN)])),
            response(&json!([text, text, call("call_1", BROKEN)])),
            response(&json!([call("call_1", BROKEN), text])),
            response(&json!([message(""), call("call_1", BROKEN)])),
            response(&json!([text, with_key(&call("call_1", BROKEN), "id", json!(7))])),
            response(&json!([text, with_key(&call("call_1", BROKEN), "status", Value::Null)])),
            // Two calls with one call id; a report already there.
            response(&json!([call("call_1", FINE), call("call_1", BROKEN)])),
            response(&json!([call("call_1", BROKEN), call("call_1", FINE)])),
            json!({"object": "response", "output": [call("call_1", BROKEN)], "x_toolfix": 1}),
        ];
        for body in &built {
            let text = body.to_string();
            let (s, _) = both_ways(&text, &tools).unwrap_or_else(|| panic!("no change: {text}"));
            assert_eq!(s, None, "{text}");
        }
        // Repeated members: in the envelope, in an item, in a part (a value read keeps the
        // last; the client's parser might not).
        let arguments = serde_json::to_string(BROKEN).unwrap();
        let item = format!(
            r#"{{"type": "function_call", "id": "fc_1", "call_id": "a", "name": "get_weather", "arguments": {arguments}, "status": "completed"}}"#
        );
        for text in [
            format!(r#"{{"object": "response", "output": [], "output": [{item}]}}"#),
            format!(
                r#"{{"object": "response", "output": [{{"type": "function_call", "id": "fc_1", "call_id": "a", "name": "get_weather", "arguments": "{{}}", "arguments": {arguments}, "status": "completed"}}]}}"#
            ),
            format!(
                r#"{{"object": "response", "output": [{{"type": "message", "id": "m", "status": "completed", "role": "assistant", "content": [{{"type": "output_text", "text": "x", "text": "x", "annotations": []}}]}}, {item}]}}"#
            ),
        ] {
            let (s, _) = both_ways(&text, &tools).unwrap_or_else(|| panic!("no change: {text}"));
            assert_eq!(s, None, "{text}");
        }
    }

    /// Output item `at` from a few choices each (for the property below): a message, a
    /// call, the upstream's reasoning or another item, mostly in the shapes `apply` writes
    /// (each choice's first value, three times in four), else in others.
    fn item(at: usize, choice: [u8; 6]) -> Value {
        let [kind, a, b, c, d, e] = choice;
        let pick =
            |i: u8, from: &[Value]| if i < 192 { from[0].clone() } else { from[usize::from(i) % from.len()].clone() };
        let mut item = match kind % 5 {
            0 => {
                let text = pick(
                    a,
                    &[
                        json!("Sure."),
                        json!(""),
                        json!("<think>Paris.</think>Sure."),
                        json!(format!("<tool_call>{{\"name\": \"get_weather\", \"arguments\": {BROKEN}}}</tool_call>")),
                    ],
                );
                let part = json!({"type": pick(b, &[json!("output_text"), json!("refusal")]),
                                  "text": text, "annotations": pick(c, &[json!([]), json!([{"type": "x"}])])});
                let content = if d == 255 { json!([part, part]) } else { json!([part]) };
                json!({"type": "message", "id": pick(e, &[json!("msg_1"), Value::Null]),
                       "status": pick(d, &[json!("completed"), json!("in_progress")]),
                       "role": pick(c, &[json!("assistant"), json!("user")]), "content": content})
            }
            1..=3 => json!({"type": "function_call", "id": pick(e, &[json!(format!("fc_{at}")), json!(7)]),
                "call_id": pick(a, &[json!(format!("c{at}")), json!("c1"), Value::Null]),
                "name": pick(b, &[json!("get_weather"), json!("noop"), json!(3)]),
                "arguments": pick(c, &[json!(BROKEN), json!(FINE), json!(r#"{"days": 2}"#),
                                       serde_json::from_str(BROKEN).unwrap(), Value::Null, json!("not json")]),
                "status": pick(d, &[json!("completed"), json!("in_progress"), Value::Null])}),
            _ if a % 2 == 0 => {
                json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Hmm."}]})
            }
            _ => json!({"type": "web_search_call", "id": "ws_1", "status": "completed"}),
        };
        // Another member, or one taken away.
        match e {
            0..=7 => item["phase"] = json!("final"),
            8..=15 => {
                if let Some(o) = item.as_object_mut() {
                    o.remove(if kind % 5 == 0 { "id" } else { "status" });
                }
            }
            _ => {}
        }
        item
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// Any answer made of such items: a splice, where taken, gives what the value
        /// path gives.
        #[test]
        fn a_splice_is_the_value_path_over_mixed_items(
            choices in proptest::collection::vec(proptest::prelude::any::<[u8; 6]>(), 0..5),
            report in 0..8u8,
        ) {
            let tools = ToolSet::new(&[
                json!({"name": "get_weather", "parameters": {"type": "object",
                    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}),
                json!({"name": "noop", "parameters": {"type": "object"}}),
            ])
            .unwrap();
            let mut output: Vec<Value> = choices.into_iter().enumerate().map(|(at, c)| item(at, c)).collect();
            // Mostly in the order `apply` writes (the calls last).
            if report > 1 {
                output.sort_by_key(|i| i["type"] == "function_call");
            }
            let mut body = response(&Value::Array(output));
            if report == 0 {
                body["x_toolfix"] = json!(1);
            }
            Tally::default().check::<Responses>(&body, &tools);
        }
    }
}
