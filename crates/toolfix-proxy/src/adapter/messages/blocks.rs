//! The blocks `apply` writes anew (the text block where the first was, the repaired
//! calls' `tool_use` blocks), with the members of the upstream's blocks they keep (see
//! `adapter::kept`).

use super::{block_id, kind};
use crate::adapter::kept::{self, Dropped, Why};
use serde_json::{Value, json};
use toolfix::extract::Channel;
use toolfix::{CallStatus, FixedCall};

/// The members of a `text` block the proxy writes itself.
pub(super) const TEXT_MEMBERS: &[&str] = &["type", "text"];

/// The text block the proxy writes where the first was (`first`, at `at`), holding `text`:
/// the first block's members kept, but its `citations` (the sources of its text, as the
/// API reference says) when its text changed, which are dropped and noted.
pub(super) fn text_block(first: &Value, text: &str, at: &Value, dropped: &mut Dropped) -> Value {
    let Some(members) = first.as_object() else { return json!({"type": "text", "text": text}) };
    let mut block = members.clone();
    if first.get("text").and_then(Value::as_str) != Some(text)
        && let Some(citations) = block.remove("citations")
        && kept::says_something(&citations)
    {
        dropped.note(at, "citations", Why::TextChanged);
    }
    block.insert("text".to_owned(), json!(text));
    Value::Object(block)
}

/// The server's block of `calls[n]` (a call the server parsed), with its place: the
/// `j`-th `tool_use` block with the call's id and the name as the model wrote it, for the
/// `j`-th such call (two blocks may share an id).
pub(super) fn source<'v>(old: &'v [Value], calls: &[FixedCall], n: usize) -> Option<(usize, &'v Value)> {
    kept::served(old, calls, n, "tool_use", "id")
}

/// The `tool_use` block for a usable call; an untouched server call keeps its own block,
/// a repaired one its block's members but `input` (and `name` when it was resolved; then
/// `toolset_name`, the family of the name as written, is dropped and noted). A call found
/// in text has no block of the server's: `{"type", "id", "name", "input"}`.
pub(super) fn tool_use(
    call: &FixedCall,
    source: Option<(usize, &Value)>,
    old: &[Value],
    dropped: &mut Dropped,
) -> Value {
    let input: Value = call.arguments_text().and_then(|t| serde_json::from_str(t).ok()).unwrap_or_else(|| json!({}));
    // An untouched server call keeps its block as sent: the one with its id, its name
    // *and* its input (two blocks may share an id; the other's input may be the one
    // repaired, or the same input may go to another tool).
    if call.channel == Channel::ToolCalls
        && call.status == CallStatus::Untouched
        && let Some(o) = old.iter().find(|o| {
            kind(o) == "tool_use"
                && o.get("id").and_then(Value::as_str) == Some(call.id.as_str())
                && o.get("name").and_then(Value::as_str) == Some(call.name.as_str())
                && o.get("input").is_some_and(|i| i.is_object() && *i == input)
        })
    {
        return o.clone();
    }
    if let Some((i, Value::Object(members))) = source {
        let mut block = members.clone();
        if call.name != call.written_name
            && let Some(family) = block.remove("toolset_name")
            && kept::says_something(&family)
        {
            dropped.note(&json!({"block": i}), "toolset_name", Why::Renamed);
        }
        block.insert("name".to_owned(), json!(call.name));
        block.insert("input".to_owned(), input);
        return Value::Object(block);
    }
    json!({"type": "tool_use", "id": block_id(call), "name": call.name, "input": input})
}
