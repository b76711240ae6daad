//! Request-side repair of an OpenAI-style message history, so strict upstreams do not
//! answer 400 for what an earlier turn left behind:
//!
//! - `tool_calls[].function.arguments` that are not valid JSON text are salvaged (text
//!   fixes only: the history says what the model sent, closed up, not what a schema would
//!   have made of it); text that cannot be salvaged is kept as a string under
//!   [`UNPARSED_KEY`]; arguments given as an object (not a string) are serialised.
//! - A `tool` message whose `tool_call_id` answers no earlier call is dropped.
//! - A call with no `tool` message after it gets one saying no result was recorded
//!   (`toolfix::feedback::no_result`), right after the results that are there.
//! - An empty `tool_calls` array is removed.

use serde::Serialize;
use serde_json::{Map, Value, json};
use std::collections::HashSet;
use toolfix::Limits;

/// Where the text of arguments that cannot be salvaged is kept.
pub(crate) const UNPARSED_KEY: &str = "toolfix_unparsed_arguments";

/// One change to the history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Change {
    /// `arguments_salvaged`, `arguments_unparsed`, `arguments_serialized`,
    /// `orphan_result_dropped`, `missing_result_added`, `empty_tool_calls_removed`; for
    /// Anthropic Messages also `input_decoded`, `input_unparsed`, `input_added` and
    /// `proxy_thinking_dropped` (a `thinking` block the proxy wrote, sent back); for OpenAI
    /// Responses also `proxy_reasoning_dropped` (a `reasoning` item the proxy wrote).
    pub(crate) kind: &'static str,
    /// The index of the message in the request as sent by the client.
    pub(crate) message: usize,
    /// The call's position in that message's `tool_calls`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) call: Option<usize>,
    /// The call id concerned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tool_call_id: Option<String>,
}

/// Arguments as valid JSON text, and the change made (`None`: already valid text).
pub(crate) fn normalise_arguments(arguments: Option<&Value>, limits: &Limits) -> (String, Option<&'static str>) {
    match arguments {
        Some(Value::String(text)) => {
            if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() {
                return (text.clone(), None);
            }
            match toolfix::salvage::salvage_with(text, limits) {
                Ok(s) if serde_json::from_str::<serde::de::IgnoredAny>(s.text()).is_ok() => {
                    (s.text().to_owned(), Some("arguments_salvaged"))
                }
                _ => (json!({ UNPARSED_KEY: text }).to_string(), Some("arguments_unparsed")),
            }
        }
        None | Some(Value::Null) => ("{}".to_owned(), Some("arguments_serialized")),
        Some(other) => (other.to_string(), Some("arguments_serialized")),
    }
}

/// Repair `messages` in place; each change, in order.
pub(crate) fn repair(messages: &mut Vec<Value>, limits: &Limits) -> Vec<Change> {
    let mut changes = Vec::new();
    let mut known: HashSet<String> = HashSet::new();
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    // Calls of the last assistant message still waiting for a result: (id, message index).
    let mut pending: Vec<(String, usize)> = Vec::new();
    for (index, mut message) in std::mem::take(messages).into_iter().enumerate() {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("");
        if role == "tool" {
            let id = message.get("tool_call_id").and_then(Value::as_str).unwrap_or("").to_owned();
            if !known.contains(&id) {
                changes.push(Change {
                    kind: "orphan_result_dropped",
                    message: index,
                    call: None,
                    tool_call_id: Some(id).filter(|i| !i.is_empty()),
                });
                continue;
            }
            pending.retain(|(p, _)| *p != id);
            out.push(message);
            continue;
        }
        close_pending(&mut pending, &mut out, &mut changes);
        if role == "assistant"
            && let Some(obj) = message.as_object_mut()
        {
            repair_calls(obj, index, limits, &mut known, &mut pending, &mut changes);
        }
        out.push(message);
    }
    close_pending(&mut pending, &mut out, &mut changes);
    *messages = out;
    changes
}

fn repair_calls(
    message: &mut Map<String, Value>,
    index: usize,
    limits: &Limits,
    known: &mut HashSet<String>,
    pending: &mut Vec<(String, usize)>,
    changes: &mut Vec<Change>,
) {
    match message.get_mut("tool_calls") {
        Some(Value::Array(calls)) if calls.is_empty() => {
            message.remove("tool_calls");
            changes.push(Change { kind: "empty_tool_calls_removed", message: index, call: None, tool_call_id: None });
        }
        Some(Value::Array(calls)) => {
            for (n, call) in calls.iter_mut().enumerate() {
                let id = call.get("id").and_then(Value::as_str).map(str::to_owned);
                if let Some(f) = call.get_mut("function").and_then(Value::as_object_mut) {
                    let (text, change) = normalise_arguments(f.get("arguments"), limits);
                    if let Some(kind) = change {
                        f.insert("arguments".to_owned(), Value::String(text));
                        changes.push(Change { kind, message: index, call: Some(n), tool_call_id: id.clone() });
                    }
                }
                if let Some(id) = id {
                    known.insert(id.clone());
                    pending.push((id, index));
                }
            }
        }
        _ => {}
    }
}

/// Answer the calls still waiting with a placeholder result.
fn close_pending(pending: &mut Vec<(String, usize)>, out: &mut Vec<Value>, changes: &mut Vec<Change>) {
    for (id, message) in pending.drain(..) {
        out.push(json!({"role": "tool", "tool_call_id": id, "content": toolfix::feedback::no_result()}));
        changes.push(Change { kind: "missing_result_added", message, call: None, tool_call_id: Some(id) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(mut messages: Value) -> (Value, Vec<&'static str>) {
        let list = messages.as_array_mut().unwrap();
        let changes = repair(list, &Limits::default());
        (messages, changes.into_iter().map(|c| c.kind).collect())
    }

    #[test]
    fn a_valid_history_is_left_alone() {
        let h = json!([{"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "a", "type": "function",
                "function": {"name": "f", "arguments": "{\"x\": 1}"}}]},
            {"role": "tool", "tool_call_id": "a", "content": "ok"}]);
        let (out, kinds) = run(h.clone());
        assert_eq!(out, h);
        assert!(kinds.is_empty());
    }

    #[test]
    fn arguments_become_valid_json_text() {
        let h = json!([{"role": "assistant", "tool_calls": [
            {"id": "a", "function": {"name": "f", "arguments": "{'x': 1,}"}},
            {"id": "b", "function": {"name": "f", "arguments": {"y": 2}}},
            {"id": "c", "function": {"name": "f", "arguments": "no json here"}}]},
            {"role": "tool", "tool_call_id": "a", "content": "1"},
            {"role": "tool", "tool_call_id": "b", "content": "2"},
            {"role": "tool", "tool_call_id": "c", "content": "3"}]);
        let (out, kinds) = run(h);
        assert_eq!(kinds, ["arguments_salvaged", "arguments_serialized", "arguments_unparsed"]);
        let calls = &out[0]["tool_calls"];
        assert_eq!(calls[0]["function"]["arguments"], "{\"x\": 1}");
        assert_eq!(calls[1]["function"]["arguments"], "{\"y\":2}");
        let unparsed: Value = serde_json::from_str(calls[2]["function"]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(unparsed[UNPARSED_KEY], "no json here");
    }

    #[test]
    fn orphans_are_dropped_and_missing_results_added() {
        let h = json!([{"role": "user", "content": "go"},
            {"role": "tool", "tool_call_id": "zz", "content": "stray"},
            {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{}"}},
                                                  {"id": "b", "function": {"name": "g", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "a", "content": "ok"},
            {"role": "user", "content": "and?"},
            {"role": "assistant", "content": "", "tool_calls": []}]);
        let (out, kinds) = run(h);
        assert_eq!(kinds, ["orphan_result_dropped", "missing_result_added", "empty_tool_calls_removed"]);
        let roles: Vec<&str> = out.as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["user", "assistant", "tool", "tool", "user", "assistant"]);
        assert_eq!(out[3]["tool_call_id"], "b");
        assert_eq!(out[3]["content"], toolfix::feedback::no_result());
        assert!(out[5].get("tool_calls").is_none());
    }
}
