//! The items `apply` writes anew (the `message` item where the first was, the repaired
//! calls' `function_call` items), with the members of the upstream's items they keep (see
//! `adapter::kept`).

use super::{find_call, item_id, kind, message_item};
use crate::adapter::kept::{self, Dropped, Why};
use serde_json::{Map, Value, json};
use toolfix::extract::Channel;
use toolfix::{CallStatus, FixedCall};

/// The members of a `message` item the proxy writes itself, and of its `output_text` part.
const MESSAGE_MEMBERS: &[&str] = &["type", "id", "status", "role", "content"];
const PART_MEMBERS: &[&str] = &["type", "text"];

/// The `message` item the proxy writes where the first was (`first`, output item `i`),
/// holding `text`: the item's members kept (`status` written `completed`, `role`
/// `assistant`), its content one `output_text` part: the item's first such part's members
/// kept, but its `annotations` (offsets into its text) and `logprobs` (its tokens) when
/// its text changed, which are dropped and noted. The item's other parts (their text is
/// joined into it) are noted as dropped.
pub(super) fn first_message(first: &Value, i: usize, text: &str, dropped: &mut Dropped) -> Value {
    let Some(members) = first.as_object() else { return message_item("msg_toolfix", text) };
    let mut item = members.clone();
    let parts = first.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let kept_part = parts.iter().position(|p| kind(p) == "output_text");
    let mut part = Map::new();
    for (j, p) in parts.iter().enumerate() {
        let at = json!({"output": i, "content": j});
        if Some(j) != kept_part {
            note_part(p, &at, Why::Merged, dropped);
            continue;
        }
        let Some(members) = p.as_object() else { continue };
        part.clone_from(members);
        if p.get("text").and_then(Value::as_str) != Some(text) {
            if part.get("annotations").is_some_and(kept::says_something) {
                dropped.note(&at, "annotations", Why::TextChanged);
                part.insert("annotations".to_owned(), json!([]));
            }
            if part.remove("logprobs").is_some_and(|l| kept::says_something(&l)) {
                dropped.note(&at, "logprobs", Why::TextChanged);
            }
        }
    }
    part.insert("type".to_owned(), json!("output_text"));
    part.insert("text".to_owned(), json!(text));
    part.entry("annotations").or_insert_with(|| json!([]));
    if !item.get("id").is_some_and(Value::is_string) {
        item.insert("id".to_owned(), json!("msg_toolfix"));
    }
    item.insert("status".to_owned(), json!("completed"));
    item.insert("role".to_owned(), json!("assistant"));
    item.insert("content".to_owned(), json!([part]));
    Value::Object(item)
}

/// Note a `message` item written nowhere (at `at`: `{"output": i}`, or nowhere said): its
/// own members (but the ones the proxy writes itself) and its parts' members.
pub(super) fn note_message(item: &Value, at: &Value, why: Why, dropped: &mut Dropped) {
    dropped.note_all(item, at, MESSAGE_MEMBERS, why);
    if item.get("id").is_some_and(Value::is_string) {
        dropped.note(at, "id", why);
    }
    for (j, p) in item.get("content").and_then(Value::as_array).into_iter().flatten().enumerate() {
        let mut at = at.clone();
        if let Some(o) = at.as_object_mut()
            && o.contains_key("output")
        {
            o.insert("content".to_owned(), json!(j));
        }
        note_part(p, &at, why, dropped);
    }
}

/// Note a part whose text is joined elsewhere (or gone): its members but `type`, `text`
/// and what says nothing.
pub(super) fn note_part(part: &Value, at: &Value, why: Why, dropped: &mut Dropped) {
    for (key, v) in part.as_object().into_iter().flatten() {
        if !PART_MEMBERS.contains(&key.as_str()) && kept::says_something(v) {
            dropped.note(at, key, why);
        }
    }
}

/// The server's item of `calls[n]` (a call the server parsed), with its place: the
/// `j`-th `function_call` item with the call's call id and the name as the model wrote
/// it, for the `j`-th such call (two items may share a call id).
pub(super) fn source<'v>(old: &'v [Value], calls: &[FixedCall], n: usize) -> Option<(usize, &'v Value)> {
    kept::served(old, calls, n, "function_call", "call_id")
}

/// The `function_call` item of a usable call; an untouched server call keeps its own: the
/// item with its call id, its name *and* its arguments (two items may share a call id,
/// and the same arguments may go to another tool). A repaired one keeps its item's
/// members but `arguments` and `status` (`completed`), and `name` when it was resolved:
/// then its `namespace` (that of the name as written) is dropped and noted. A call found
/// in text has no item of the server's.
pub(super) fn function_call(
    call: &FixedCall,
    source: Option<(usize, &Value)>,
    old: &[Value],
    dropped: &mut Dropped,
) -> Value {
    if call.channel == Channel::ToolCalls
        && call.status == CallStatus::Untouched
        && let Some(o) = old.iter().find(|o| {
            kind(o) == "function_call"
                && o.get("call_id").and_then(Value::as_str) == Some(call.id.as_str())
                && o.get("name").and_then(Value::as_str) == Some(call.name.as_str())
                && o.get("arguments").and_then(Value::as_str) == call.arguments_text()
        })
    {
        return o.clone();
    }
    let item_id = find_call(old, &call.id)
        .and_then(|o| o.get("id"))
        .and_then(Value::as_str)
        .map_or_else(|| item_id(call), str::to_owned);
    let mut item = match source {
        Some((i, Value::Object(members))) => {
            let mut item = members.clone();
            if call.name != call.written_name
                && let Some(namespace) = item.remove("namespace")
                && kept::says_something(&namespace)
            {
                dropped.note(&json!({"output": i}), "namespace", Why::Renamed);
            }
            item
        }
        _ => Map::new(),
    };
    item.insert("type".to_owned(), json!("function_call"));
    if !item.get("id").is_some_and(Value::is_string) {
        item.insert("id".to_owned(), json!(item_id));
    }
    item.insert("call_id".to_owned(), json!(call.id));
    item.insert("name".to_owned(), json!(call.name));
    item.insert("arguments".to_owned(), json!(call.arguments_text().unwrap_or("{}")));
    item.insert("status".to_owned(), json!("completed"));
    Value::Object(item)
}
