//! OpenAI Chat Completions (`POST /v1/chat/completions`).

use super::{Adapter, history};
use serde_json::{Map, Value, json};
use toolfix::extract::Channel;
use toolfix::{FixedCall, FixedReply, Limits, Reply};

/// The answer given for a call that could run, in a reply re-prompted for another call.
const NOT_RUN: &str = "This call was not run: another call in the same reply could not be used. \
                       Send it again together with the corrected calls.";

/// The lead of the note that answers calls found in the text (they have no id the model
/// can answer with a `tool` message).
const TEXT_CALLS: &str = "The tool calls written in your last reply's text could not be used:";

/// The tail of that note.
const TEXT_CALLS_END: &str = "Send the tool calls again, corrected, as tool calls.";

/// The Chat Completions adapter.
#[derive(Debug)]
pub(crate) struct ChatCompletions;

impl Adapter for ChatCompletions {
    const PATH: &'static str = "/v1/chat/completions";

    fn tools(request: &Value) -> Option<&[Value]> {
        request.get("tools").and_then(Value::as_array).map(Vec::as_slice).filter(|t| !t.is_empty())
    }

    fn history(request: &Value) -> Option<&Value> {
        request.get("messages").filter(|m| m.is_array())
    }

    fn repair_history(request: &mut Value, limits: &Limits) -> Vec<history::Change> {
        match request.get_mut("messages").and_then(Value::as_array_mut) {
            Some(messages) => history::repair(messages, limits),
            None => Vec::new(),
        }
    }

    fn is_stream(request: &Value) -> bool {
        request.get("stream").and_then(Value::as_bool).unwrap_or(false)
    }

    fn replies(response: &Value) -> Vec<Reply<'_>> {
        choices(response).iter().map(Reply::from_choice).collect()
    }

    fn changes(response: &Value, index: usize, fixed: &FixedReply) -> bool {
        let Some(choice) = choices(response).get(index) else { return false };
        let reply = Reply::from_choice(choice);
        let natives = reply.tool_calls.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let served: Vec<&FixedCall> = fixed.calls.iter().filter(|c| c.channel == Channel::ToolCalls).collect();
        fixed.changed_calls()
            || fixed.calls.iter().any(|c| !c.status.is_usable())
            // A server call dropped (a repeat kept once), split, or given a name changes the
            // reply too: every call must be one of the originals as sent.
            || served.len() != natives.len()
            || served.iter().any(|c| !natives.iter().any(|o| same_call(c, o)))
            || reply.content != fixed.content
            || reply.reasoning_content != fixed.reasoning_content.as_deref()
    }

    fn apply(response: &mut Value, index: usize, fixed: &FixedReply) {
        let Some(choice) = response.get_mut("choices").and_then(|c| c.get_mut(index)).and_then(Value::as_object_mut)
        else {
            return;
        };
        let finish = choice.get("finish_reason").and_then(Value::as_str).map(str::to_owned);
        let Some(message) = choice.get_mut("message").and_then(Value::as_object_mut) else { return };
        let originals = message.get("tool_calls").and_then(Value::as_array).cloned().unwrap_or_default();
        let calls: Vec<Value> =
            fixed.calls.iter().filter(|c| c.status.is_usable()).map(|c| call_value(c, &originals)).collect();
        write_text(message, fixed, !calls.is_empty());
        let had_calls = !originals.is_empty();
        let has_calls = !calls.is_empty();
        if has_calls {
            message.insert("tool_calls".to_owned(), Value::Array(calls));
        } else if had_calls {
            message.remove("tool_calls");
        }
        if has_calls {
            choice.insert("finish_reason".to_owned(), json!("tool_calls"));
        } else if finish.as_deref() == Some("tool_calls") {
            choice.insert("finish_reason".to_owned(), json!("stop"));
        }
    }

    fn original(response: &Value, index: usize) -> Value {
        choices(response).get(index).and_then(|c| c.get("message")).cloned().unwrap_or(Value::Null)
    }

    fn reprompt(request: &Value, response: &Value, fixed: &FixedReply, limits: &Limits) -> Option<Value> {
        let message = choices(response).first()?.get("message")?;
        let mut next = one_shot(request)?;
        let mut assistant = Map::new();
        assistant.insert("role".to_owned(), json!("assistant"));
        assistant.insert("content".to_owned(), message.get("content").cloned().unwrap_or(Value::Null));
        let mut added = Vec::new();
        let natives = message.get("tool_calls").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        if !natives.is_empty() {
            let mut calls = Vec::with_capacity(natives.len());
            let fixed_natives: Vec<&FixedCall> =
                fixed.calls.iter().filter(|c| c.channel == Channel::ToolCalls).collect();
            for (n, native) in natives.iter().enumerate() {
                let given = native.get("id").and_then(Value::as_str).filter(|i| !i.is_empty());
                let matched = match given {
                    Some(g) => fixed_natives.iter().find(|c| c.id == g),
                    None => fixed_natives.get(n),
                };
                let id = given
                    .map(str::to_owned)
                    .or_else(|| matched.map(|c| c.id.clone()))
                    .unwrap_or_else(|| format!("call_toolfix_{n}"));
                let f = native.get("function").unwrap_or(native);
                let name = f.get("name").and_then(Value::as_str).unwrap_or("");
                let (arguments, _) = history::normalise_arguments(f.get("arguments"), limits);
                calls.push(json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}));
                let answer = matched.and_then(|c| c.message()).unwrap_or(NOT_RUN);
                added.push(json!({"role": "tool", "tool_call_id": id, "content": answer}));
            }
            assistant.insert("tool_calls".to_owned(), Value::Array(calls));
        }
        let lines: Vec<String> = fixed
            .calls
            .iter()
            .filter(|c| c.channel != Channel::ToolCalls)
            .map(|c| format!("- `{}`: {}", c.written_name, c.message().unwrap_or(NOT_RUN)))
            .collect();
        if !lines.is_empty() {
            let text = format!("{TEXT_CALLS}\n\n{}\n\n{TEXT_CALLS_END}", lines.join("\n"));
            added.push(json!({"role": "user", "content": text}));
        }
        let messages = next.get_mut("messages")?.as_array_mut()?;
        messages.push(Value::Object(assistant));
        messages.extend(added);
        Some(next)
    }

    fn retry_longer(request: &Value, response: &Value, cap: u64) -> Option<Value> {
        let key = if request.get("max_completion_tokens").is_some() { "max_completion_tokens" } else { "max_tokens" };
        let used = request
            .get(key)
            .and_then(Value::as_u64)
            .or_else(|| response.get("usage").and_then(|u| u.get("completion_tokens")).and_then(Value::as_u64));
        let raised = match used {
            Some(n) => cap.min(n.saturating_mul(2).max(n.saturating_add(256))),
            None => cap,
        };
        if used.is_some_and(|n| raised <= n) {
            return None;
        }
        let mut next = one_shot(request)?;
        next.as_object_mut()?.insert(key.to_owned(), json!(raised));
        Some(next)
    }

    fn continuation(request: &Value, response: &Value) -> Option<Value> {
        let message = choices(response).first()?.get("message")?;
        let content = message.get("content").and_then(Value::as_str).filter(|c| !c.is_empty())?;
        if message.get("tool_calls").and_then(Value::as_array).is_some_and(|c| !c.is_empty()) {
            return None;
        }
        let mut next = one_shot(request)?;
        let obj = next.as_object_mut()?;
        obj.insert("continue_final_message".to_owned(), json!(true));
        obj.insert("add_generation_prompt".to_owned(), json!(false));
        obj.get_mut("messages")?.as_array_mut()?.push(json!({"role": "assistant", "content": content}));
        Some(next)
    }

    fn join(partial: &Value, mut continued: Value) -> Value {
        let before = choices(partial)
            .first()
            .and_then(|c| c.get("message"))
            .and_then(|m| m.get("content"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if let Some(message) = continued.pointer_mut("/choices/0/message").and_then(Value::as_object_mut) {
            let after = message.get("content").and_then(Value::as_str).unwrap_or("");
            let joined = format!("{before}{after}");
            message.insert("content".to_owned(), Value::String(joined));
        }
        continued
    }
}

fn choices(response: &Value) -> &[Value] {
    response.get("choices").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

/// The request as a non-streaming one (the proxy's own follow-up requests).
fn one_shot(request: &Value) -> Option<Value> {
    let mut next = request.clone();
    let obj = next.as_object_mut()?;
    obj.remove("stream");
    obj.remove("stream_options");
    Some(next)
}

/// True when the server call `original` is `call` as sent: same id, name and arguments text.
fn same_call(call: &FixedCall, original: &Value) -> bool {
    original.get("id").and_then(Value::as_str) == Some(call.id.as_str())
        && original.pointer("/function/name").and_then(Value::as_str) == Some(call.name.as_str())
        && original.pointer("/function/arguments").and_then(Value::as_str) == call.arguments_text()
}

/// A usable call in OpenAI shape; an untouched server call keeps its own object.
pub(crate) fn call_value(call: &FixedCall, originals: &[Value]) -> Value {
    if call.channel == Channel::ToolCalls
        && call.status == toolfix::CallStatus::Untouched
        && let Some(o) = originals.iter().find(|o| same_call(call, o))
    {
        return o.clone();
    }
    json!({"id": call.id, "type": "function",
           "function": {"name": call.name, "arguments": call.arguments_text().unwrap_or("{}")}})
}

/// Write the prose and reasoning left into `message`, where they changed.
fn write_text(message: &mut Map<String, Value>, fixed: &FixedReply, has_calls: bool) {
    let content = message.get("content");
    let same = match content {
        Some(Value::String(s)) => *s == fixed.content,
        None | Some(Value::Null) => fixed.content.is_empty(),
        // Content parts: the library read them as empty; leave them.
        Some(_) => true,
    };
    if !same {
        let value =
            if fixed.content.is_empty() && has_calls { Value::Null } else { Value::String(fixed.content.clone()) };
        message.insert("content".to_owned(), value);
    }
    let key = if message.contains_key("reasoning") && !message.contains_key("reasoning_content") {
        "reasoning"
    } else {
        "reasoning_content"
    };
    if let Some(r) = &fixed.reasoning_content
        && message.get(key).and_then(Value::as_str) != Some(r.as_str())
    {
        message.insert(key.to_owned(), Value::String(r.clone()));
    }
}
