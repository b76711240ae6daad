//! A Messages response written back by editing the upstream's bytes (a splice), as Chat
//! Completions does (`Read::edits`): a repaired call's `input` and the stop reason are
//! replaced where they are, the report is added; the rest (the text, thinking blocks,
//! calls left alone, members the proxy does not read) goes out as the upstream sent it,
//! instead of the body being read as a value, `apply`'d and written out (about half of
//! the proxy's work on a repaired answer). Whenever the edits would not give what `apply`
//! gives, there are none and the value path runs.

use super::{BlockView, Parts, ResponseView, moved};
use crate::adapter::view::{Raw, span_of, string_span};
use crate::adapter::{Edit, compact};
use serde_json::{Value, json};
use toolfix::extract::Channel;
use toolfix::{CallStatus, FixedCall, FixedReply};

/// The keys of a `text` block as `apply` writes it (`type`, `text`), as bits of
/// [`BlockView::seen`].
const TEXT_KEYS: u64 = 0b00_0011;
/// The keys of a `tool_use` block as `apply` writes it (`type`, `id`, `name`, `input`).
const TOOL_USE_KEYS: u64 = 0b11_1001;

/// The edits `apply` would make to the response (with every call usable), when each
/// replaces a value that is there: a rewritten call's `input`, the stop reason. `None` for
/// any other change `apply` would make (the text or its blocks written, a block added,
/// dropped or moved, a member added), a call not usable, a member or block key repeated,
/// or a report already there: the response is then built as a value.
///
/// `apply` writes the content as: the blocks other than text and calls where they were,
/// the text left in one `{"type": "text", "text"}` block where the first was (none when
/// empty), then each usable call, an untouched server call as its own block (when its
/// `input` is an object), another as `{"type": "tool_use", "id", "name", "input"}`. So a
/// body is spliced when its calls come last, one block per fixed call in order (same id and
/// name), its one text block (if any) is `{"type", "text"}` holding the text left, no
/// reasoning was moved out of the text, and a call written anew has exactly the members
/// `apply` writes: only its `input` then changes.
pub(super) fn edits(body: &[u8], view: &ResponseView<'_>, parts: &Parts<'_>, fixed: &FixedReply) -> Option<Vec<Edit>> {
    if view.dup || view.report.0.is_some() {
        return None;
    }
    // No content: `apply` adds it.
    let blocks = view.content.0.as_deref()?;
    if fixed.calls.iter().any(|c| !c.status.is_usable() || c.channel != Channel::ToolCalls)
        || moved(parts.thinking.as_deref(), fixed.reasoning_content.as_deref()).is_some()
    {
        return None;
    }
    let is_call = |b: &BlockView<'_>| b.kind.as_str() == Some("tool_use");
    let first_call = blocks.iter().position(is_call).unwrap_or(blocks.len());
    let (others, calls) = blocks.split_at(first_call);
    let mut texts = 0;
    for b in others {
        if b.dup {
            return None;
        }
        if b.kind.as_str() == Some("text") {
            texts += 1;
            // Its other members `apply` keeps (its text is unchanged).
            let kept = b.seen & TEXT_KEYS == TEXT_KEYS && b.text.as_str() == Some(fixed.content.as_str());
            if texts > 1 || !kept || fixed.content.is_empty() {
                return None;
            }
        }
    }
    if (texts == 0 && !fixed.content.is_empty()) || calls.len() != fixed.calls.len() {
        return None;
    }
    let mut edits = Vec::new();
    for (i, (b, call)) in calls.iter().zip(&fixed.calls).enumerate() {
        let id = Some(call.id.as_str());
        if b.dup || !is_call(b) || b.id.as_str() != id || b.name.as_str() != Some(call.name.as_str()) {
            return None;
        }
        let input = b.input.0?;
        // For an untouched call `apply` copies the block with its id, name and input
        // (an object): spliced only when this is the first block with its id (the value
        // path takes the rest).
        if call.status == CallStatus::Untouched {
            let first = calls.iter().position(|o| o.id.as_str() == id)?;
            if calls.get(first)?.input.0.is_some_and(|r| r.starts_with('{')) {
                if first == i {
                    continue;
                }
                return None;
            }
        }
        // Its other members `apply` keeps (its name is unchanged).
        if b.seen & TOOL_USE_KEYS != TOOL_USE_KEYS {
            return None;
        }
        let (start, end) = span_of(body, Raw(input))?;
        edits.push(Edit { start, end, text: input_text(call) });
    }
    // The stop reason `apply` writes: `tool_use` with a call, `end_turn` for `tool_use`
    // without one. One it would add, or write over a value that is no string (or a string
    // with escapes: not borrowed, so not found), is not spliced.
    let stop = &view.stop_reason;
    let written = match (fixed.calls.is_empty(), stop.as_str()) {
        (false, Some("tool_use")) => None,
        (false, _) => Some("\"tool_use\""),
        (true, Some("tool_use")) => Some("\"end_turn\""),
        (true, _) => None,
    };
    if let Some(text) = written {
        let (start, end) = string_span(body, stop)?;
        edits.push(Edit { start, end, text: text.to_owned() });
    }
    Some(edits)
}

/// A call's `input` as `apply` writes it: its arguments as a value (`{}` when they are not
/// JSON), written compact; arguments that are compact but for whitespace are minified,
/// without a value built.
fn input_text(call: &FixedCall) -> String {
    match call.arguments_text() {
        Some(t) if let Some(m) = compact::minified(t) => m,
        t => {
            let input: Value = t.and_then(|t| serde_json::from_str(t).ok()).unwrap_or_else(|| json!({}));
            let mut out = Vec::new();
            compact::write(&mut out, &input);
            String::from_utf8(out).unwrap_or_else(|_| "{}".to_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Messages;
    use crate::adapter::splice_check::{Tally, for_each_format_case, rows};
    use serde_json::{Value, json};
    use toolfix::ToolSet;

    fn both_ways(body: &str, tools: &ToolSet) -> Option<(Option<Value>, Value)> {
        crate::adapter::splice_check::both_ways::<Messages>(body, tools)
    }

    fn message(content: &Value, stop: &str) -> Value {
        json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": content,
               "stop_reason": stop, "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 20}})
    }

    /// A reply as the blocks a Messages upstream would send: its reasoning as a thinking
    /// block, its text, its server calls as `tool_use` blocks (`input` the arguments as a
    /// value when they are an object, else as the text they are).
    fn blocks(reasoning: Option<&str>, text: &str, calls: &[(&str, &str, &str)]) -> Value {
        let mut out = Vec::new();
        if let Some(r) = reasoning {
            out.push(json!({"type": "thinking", "thinking": r, "signature": "sig"}));
        }
        if !text.is_empty() {
            out.push(json!({"type": "text", "text": text}));
        }
        for (id, name, arguments) in calls {
            let input = match serde_json::from_str::<Value>(arguments) {
                Ok(v @ Value::Object(_)) => v,
                _ => json!(arguments),
            };
            out.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
        }
        Value::Array(out)
    }

    /// Every format case of the library's corpus (as `tests/formats.rs` sends it), as a
    /// Messages answer: a splice, where taken, gives what the value path gives.
    #[test]
    fn a_splice_is_the_value_path_over_the_format_corpus() {
        let mut tally = Tally::default();
        for_each_format_case(|reasoning, text, calls, tools| {
            let stop = if calls.is_empty() { "end_turn" } else { "tool_use" };
            tally.check::<Messages>(&message(&blocks(reasoning, text, calls), stop), tools);
        });
        // Its server calls are renamed, split or kept once, its calls found in text: each
        // is built (none spliced), and none may differ.
        println!("{tally:?}");
        assert!(tally.built >= 1000, "{tally:?}");
    }

    /// Every case of the library's repair corpus (one tool, one call's arguments) as a
    /// `tool_use` block after some text, its input an object or a string, with a thinking
    /// block or not: a splice, where taken, gives what the value path gives.
    #[test]
    fn a_splice_is_the_value_path_over_the_repair_corpus() {
        let mut tally = Tally::default();
        for row in rows("repair/cases.jsonl") {
            let (tools, _) = ToolSet::new_partial(std::slice::from_ref(&row["tool"]));
            let name = row["tool"]["name"].as_str().unwrap();
            let arguments = row["arguments"].as_str().map_or_else(|| row["arguments"].to_string(), str::to_owned);
            let call = [("toolu_1", name, arguments.as_str())];
            for (reasoning, text) in [(None, "Sure."), (Some("Let me see."), "Sure."), (None, "")] {
                tally.check::<Messages>(&message(&blocks(reasoning, text, &call), "tool_use"), &tools);
            }
            // The input as a string (a local server's habit), and a stop reason that says
            // otherwise.
            let as_text = json!([{"type": "text", "text": "x"},
                                 {"type": "tool_use", "id": "toolu_1", "name": name, "input": arguments}]);
            tally.check::<Messages>(&message(&as_text, "end_turn"), &tools);
            // Members `apply` keeps: a text block's citations, a call's caller and
            // cache_control.
            let with_members = json!([{"type": "text", "text": "x", "citations": [{"type": "char_location", "cited_text": "x"}]},
                                      {"type": "tool_use", "id": "toolu_1", "name": name, "input": arguments,
                                       "caller": {"type": "direct"}, "cache_control": {"type": "ephemeral"}}]);
            tally.check::<Messages>(&message(&with_members, "tool_use"), &tools);
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

    fn call(id: &str, input: &Value) -> Value {
        json!({"type": "tool_use", "id": id, "name": "get_weather", "input": input})
    }

    /// Bodies the splice takes (each reads as the value path's response) and bodies it
    /// leaves to the value path (where its edits would not be what `apply` writes).
    /// Regression: two `tool_use` blocks with one id, the repaired one first. The untouched
    /// call kept "the first block with its id" as sent, so the broken input went out for
    /// it; it keeps its own block now.
    #[test]
    fn an_untouched_call_sharing_an_id_keeps_its_own_input() {
        let tools = weather();
        let broken: Value = serde_json::from_str(BROKEN).unwrap();
        let fine = json!({"city": "Oslo"});
        let body = message(&json!([call("toolu_1", &broken), call("toolu_1", &fine)]), "tool_use").to_string();
        let (_, value) = both_ways(&body, &tools).expect("a change");
        let inputs: Vec<&Value> = value["content"].as_array().unwrap().iter().map(|b| &b["input"]).collect();
        assert!(!inputs.contains(&&broken), "{value}");
        assert!(inputs.contains(&&fine), "{value}");
    }

    #[test]
    fn a_splice_is_taken_only_where_it_is_exact() {
        let tools = weather();
        let broken: Value = serde_json::from_str(BROKEN).unwrap();
        let fine = json!({"city": "Oslo"});
        let text = json!({"type": "text", "text": "Sure \u{e9} \"quoted\"\n"});
        let thinking = json!({"type": "thinking", "thinking": "Hmm.", "signature": "sig"});
        let with_key = |block: &Value, key: &str, value: Value| {
            let mut b = block.clone();
            b[key] = value;
            b
        };
        let taken = [
            // The load example's answer; with a thinking block, a block the proxy does not
            // read, an untouched call beside, no text.
            message(&json!([text, call("toolu_1", &broken)]), "tool_use"),
            message(
                &json!([thinking, {"type": "redacted_thinking", "data": "x"}, text, call("toolu_1", &broken)]),
                "tool_use",
            ),
            message(&json!([text, call("toolu_1", &fine), call("toolu_2", &broken)]), "tool_use"),
            message(&json!([call("toolu_1", &broken)]), "tool_use"),
            // Two calls with one id, the untouched one first (`apply` keeps its block).
            message(&json!([call("toolu_1", &fine), call("toolu_1", &broken)]), "tool_use"),
            // The input as a string (rewritten as an object); a stop reason that says
            // otherwise (a float elsewhere: the rest is the upstream's bytes).
            message(&json!([text, call("toolu_1", &json!(BROKEN))]), "end_turn"),
            json!({"type": "message", "content": [call("toolu_1", &broken)], "stop_reason": "max_tokens", "usage": {"n": 1.0e2}}),
            // Members `apply` keeps: on the text block (its text unchanged: its citations
            // too), on a call (its name unchanged).
            message(
                &json!([
                    with_key(&text, "citations", json!([{"type": "char_location", "cited_text": "Sure"}])),
                    call("toolu_1", &broken)
                ]),
                "tool_use",
            ),
            message(
                &json!([text, with_key(&call("toolu_1", &broken), "cache_control", json!({"type": "ephemeral"}))]),
                "tool_use",
            ),
            message(
                &json!([text, with_key(&call("toolu_1", &broken), "caller", json!({"type": "direct"}))]),
                "tool_use",
            ),
        ];
        for body in &taken {
            for text in [body.to_string(), serde_json::to_string_pretty(body).unwrap()] {
                let (s, v) = both_ways(&text, &tools).unwrap_or_else(|| panic!("no change: {text}"));
                assert_eq!(s.as_ref(), Some(&v), "{text}");
            }
        }
        let built = [
            // A call moved out of the text, reasoning moved out of it.
            message(
                &json!([{"type": "text", "text": format!("<tool_call>{{\"name\": \"get_weather\", \"arguments\": {BROKEN}}}</tool_call>")}]),
                "end_turn",
            ),
            message(
                &json!([{"type": "text", "text": "<think>Paris.</think>Sure."}, call("toolu_1", &broken)]),
                "tool_use",
            ),
            // A call given up (no city).
            message(&json!([text, call("toolu_1", &json!({"days": 2}))]), "tool_use"),
            // Blocks `apply` writes anew or drops: two text blocks, text after a call, an
            // empty text block, a call with no input.
            message(&json!([text, text, call("toolu_1", &broken)]), "tool_use"),
            message(&json!([call("toolu_1", &broken), text]), "tool_use"),
            message(&json!([{"type": "text", "text": ""}, call("toolu_1", &broken)]), "tool_use"),
            message(
                &json!([text, {"type": "tool_use", "id": "toolu_1", "name": "get_weather"}, call("toolu_2", &broken)]),
                "tool_use",
            ),
            // Two calls with one id, the untouched one second (`apply` looks its block up
            // by id and input); a stop reason `apply` would add; a report already there.
            message(&json!([call("toolu_1", &broken), call("toolu_1", &fine)]), "tool_use"),
            json!({"type": "message", "content": [call("toolu_1", &broken)]}),
            json!({"type": "message", "content": [call("toolu_1", &broken)], "stop_reason": "tool_use", "x_toolfix": 1}),
            // A stop reason to write over that is no string.
            json!({"type": "message", "content": [call("toolu_1", &broken)], "stop_reason": null}),
        ];
        for body in &built {
            let text = body.to_string();
            let (s, _) = both_ways(&text, &tools).unwrap_or_else(|| panic!("no change: {text}"));
            assert_eq!(s, None, "{text}");
        }
        // Repeated members: in the envelope, in a block (a value read keeps the last; the
        // client's parser might not).
        let input = BROKEN.replace('"', "\\\"");
        for text in [
            format!(
                r#"{{"type": "message", "content": [{{"type": "tool_use", "id": "a", "name": "get_weather", "input": "{input}"}}], "stop_reason": "tool_use", "stop_reason": "end_turn"}}"#
            ),
            format!(
                r#"{{"type": "message", "content": [{{"type": "tool_use", "id": "a", "name": "get_weather", "input": {{}}, "input": "{input}"}}], "stop_reason": "tool_use"}}"#
            ),
            format!(
                r#"{{"type": "message", "content": [{{"type": "text", "text": "x", "text": "x"}}, {{"type": "tool_use", "id": "a", "name": "get_weather", "input": "{input}"}}], "stop_reason": "tool_use"}}"#
            ),
        ] {
            let (s, _) = both_ways(&text, &tools).unwrap_or_else(|| panic!("no change: {text}"));
            assert_eq!(s, None, "{text}");
        }
    }
}
