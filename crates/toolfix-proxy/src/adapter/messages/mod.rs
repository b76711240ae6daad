//! Anthropic Messages (`POST /v1/messages`): the request and response side; `stream` is
//! its SSE. Shapes from the public API reference (docs.anthropic.com, "Messages" and
//! "Streaming Messages").
//!
//! A reply is read as the library's `Reply`: the `text` blocks joined are the content, the
//! `thinking` blocks joined the reasoning, the `tool_use` blocks the server's calls
//! (`input` an object, or a string holding one), `stop_reason: "max_tokens"` the token
//! limit. Written back: `thinking` blocks untouched, the text left in one `text` block
//! where the first was, usable calls as `tool_use` blocks (calls found in text get
//! `toolu_` ids), `stop_reason` `tool_use` when a call is usable.
//!
//! Reasoning the library moves out of the text (a `<think>…</think>` a local model wrote in
//! a `text` block) comes back as a `thinking` block of the proxy's own, before the text, as
//! Chat Completions gets it in `reasoning_content`. Its `signature` (a string the API
//! reference requires; the proxy cannot sign) is [`PROXY_SIGNATURE`]; when a client sends
//! such a block back in the conversation, the history repair drops it (reported as
//! `proxy_thinking_dropped`), so a strict upstream that checks signatures never sees it.

mod blocks;
mod scan;
mod splice;
mod stream;

pub(crate) use stream::MessagesStream;

use super::kept::{self, Dropped, Why};
use super::moved::moved;
use super::served::{Calls, Sent};
use super::view::{Field, Present, Prose, Text, object_view};
use super::{Adapter, Known, Lazy, Made, Peek, Read, Unusable, content_differs, history};
use blocks::{TEXT_MEMBERS, source, text_block, tool_use};
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::borrow::Cow;
use toolfix::extract::Channel;
use toolfix::{CallStatus, FixOptions, FixedCall, FixedReply, Limits, NativeCall, Reply, ToolSet, feedback};

/// The `signature` of a `thinking` block the proxy wrote (reasoning moved out of the text):
/// not a signature, a mark by which the history repair knows the block as the proxy's.
pub(crate) const PROXY_SIGNATURE: &str = "toolfix-unsigned";

/// The Anthropic Messages adapter.
#[derive(Debug)]
pub(crate) struct Messages;

/// The request's envelope: what the handler reads before deciding anything.
struct Envelope<'a> {
    tools: Option<&'a RawValue>,
    stream: Option<bool>,
    model: Text<'a>,
    messages: Option<&'a RawValue>,
}

object_view!(Envelope { tools: "tools", stream: "stream", model: "model", messages: "messages" });

/// What decides whether a message can hold a call or a result: its content's type.
struct MessagePeek<'a> {
    content: Option<&'a RawValue>,
}

object_view!(MessagePeek { content: "content" });

/// The number of messages, when none has content blocks (no call, no result, nothing the
/// history repair changes; each is one message of the conversation the storm guard
/// reads); `None` otherwise, or when a message is not an object.
fn plain_history(messages: Option<&RawValue>) -> Option<usize> {
    let list: Vec<MessagePeek<'_>> = serde_json::from_str(messages?.get()).ok()?;
    list.iter().all(|m| m.content.is_none_or(|c| !c.get().starts_with('['))).then_some(list.len())
}

/// The request's envelope, read with serde_json (what [`super::chat::scan::peek_as`]
/// reads when it can decide).
pub(crate) fn checked_peek(body: &[u8]) -> Result<Peek<'_>, String> {
    let e: Envelope<'_> = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    // Only client tools (with an `input_schema`) are repaired; server tools alone
    // leave nothing to fix.
    let tools = e.tools.map(RawValue::get).filter(|t| t.contains("input_schema"));
    Ok(Peek::checked(tools, e.stream, e.model, plain_history(e.messages)))
}

impl Adapter for Messages {
    const API: &'static str = "messages";
    const PATH: &'static str = "/v1/messages";
    type Stream<'t> = MessagesStream;

    fn peek_known<'b>(body: &'b [u8], known: Option<Known<'_>>) -> Result<Peek<'b>, String> {
        // The hand-written read when it can decide, else serde_json's (the same result).
        match super::chat::scan::peek_as(body, super::chat::scan::Api::Messages, known.map(|k| k.text)) {
            Some(mut peek) => {
                // Text this API took before is taken again without a look.
                let taken = peek.known && known.is_some_and(|k| k.here);
                peek.tools = peek.tools.filter(|t| taken || t.contains("input_schema"));
                Ok(peek)
            }
            None => checked_peek(body),
        }
    }

    fn definitions(request: &Value) -> Vec<Value> {
        request
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| {
                let schema = t.get("input_schema")?;
                Some(json!({"name": t.get("name")?, "description": t.get("description").cloned().unwrap_or(json!("")),
                            "parameters": schema}))
            })
            .collect()
    }

    fn history(request: &Value) -> Option<Cow<'_, Value>> {
        let messages = request.get("messages")?.as_array()?;
        Some(Cow::Owned(Value::Array(openai_history(messages))))
    }

    fn repair_history(request: &mut Value, limits: &Limits) -> Vec<history::Change> {
        match request.get_mut("messages").and_then(Value::as_array_mut) {
            Some(messages) => repair(messages, limits),
            None => Vec::new(),
        }
    }

    fn each_reply(response: &Value, f: &mut dyn FnMut(&Reply<'_>)) {
        let parts = Parts::of(response);
        let natives = parts.natives();
        f(&parts.reply(&natives));
    }

    fn fix_body(body: &[u8], fix: &mut dyn FnMut(&Reply<'_>) -> Option<FixedReply>) -> Option<Lazy> {
        // A borrowed read in one pass; a body it cannot take (blocks that are not objects,
        // a key with escapes, ...) is read as a value.
        let value: Value;
        // The hand-written read when it can decide, else serde_json's (the same view).
        let read = scan::read(body).map_or_else(|| super::view::read::<ResponseView<'_>>(body), Ok);
        let (parts, view) = match read {
            Ok(view) if view.kind.as_str() == Some("message") => (Parts::of_view(&view), Some(view)),
            Ok(_) => return None,
            Err(_) => {
                value = serde_json::from_slice(body).ok()?;
                let response = &value;
                if response.get("type").and_then(Value::as_str) != Some("message") {
                    return None;
                }
                (Parts::of(response), None)
            }
        };
        let natives = parts.natives();
        let fixed = fix(&parts.reply(&natives));
        let changed = fixed.as_ref().is_some_and(|f| parts.changes(f, Made::FromThis));
        // A body that changes: the edits that write the fixed reply back into it, when
        // each is one a splice makes (see `splice`).
        let edits = match (&view, &fixed) {
            (Some(view), Some(f)) if changed => splice::edits(body, view, &parts, f),
            _ => None,
        };
        let read = Read { finish_reason: parts.finish, replies: 1, changed, edits };
        Some(Lazy { replies: vec![fixed], read })
    }

    fn changes(response: &Value, _index: usize, fixed: &FixedReply) -> bool {
        Parts::of(response).changes(fixed, Made::Elsewhere)
    }

    fn apply(response: &mut Value, _index: usize, fixed: &FixedReply, unusable: Unusable) {
        let (original_text, thinking) = {
            let parts = Parts::of(response);
            (parts.text.into_owned(), parts.thinking)
        };
        let Some(obj) = response.as_object_mut() else { return };
        // Taken, not copied: `content` is written anew below.
        let old: Vec<Value> = match obj.get_mut("content") {
            Some(Value::Array(blocks)) => std::mem::take(blocks),
            _ => Vec::new(),
        };
        let gave_up = fixed.calls.iter().any(|c| !c.status.is_usable());
        let text_as_sent = unusable == Unusable::AsSent
            && fixed.calls.iter().any(|c| !c.status.is_usable() && c.channel != Channel::ToolCalls);
        let text = if unusable == Unusable::Explain && gave_up {
            fixed.gave_up(&fixed.content)
        } else if text_as_sent {
            original_text
        } else {
            fixed.content.clone()
        };
        // Reasoning moved out of the text goes before it, in a thinking block of the
        // proxy's own (not when the text goes out as sent: it is still in there).
        let moved = if text_as_sent { None } else { moved(thinking.as_deref(), fixed.reasoning_content.as_deref()) };
        let mut content = Vec::with_capacity(old.len() + fixed.calls.len() + 1);
        let mut dropped = Dropped::default();
        let mut text_placed = false;
        for (i, b) in old.iter().enumerate() {
            match kind(b) {
                "text" => {
                    let at = json!({"block": i});
                    if text_placed {
                        // Its text is joined to the first text block's: its members have
                        // no block left to go on.
                        dropped.note_all(b, &at, TEXT_MEMBERS, Why::Merged);
                        continue;
                    }
                    text_placed = true;
                    content.extend(moved.map(thinking_block));
                    if text.is_empty() {
                        dropped.note_all(b, &at, TEXT_MEMBERS, Why::NoText);
                    } else {
                        content.push(text_block(b, &text, &at, &mut dropped));
                    }
                }
                "tool_use" => {}
                _ => content.push(b.clone()),
            }
        }
        if !text_placed {
            content.extend(moved.map(thinking_block));
            if !text.is_empty() {
                content.push(json!({"type": "text", "text": text}));
            }
        }
        let mut calls = 0;
        for (n, c) in fixed.calls.iter().enumerate() {
            if c.status.is_usable() && !(text_as_sent && c.channel != Channel::ToolCalls) {
                content.push(tool_use(c, source(&old, &fixed.calls, n), &old, &mut dropped));
                calls += 1;
            } else if unusable == Unusable::AsSent
                && c.channel == Channel::ToolCalls
                && let Some(o) = old
                    .iter()
                    .find(|o| kind(o) == "tool_use" && o.get("id").and_then(Value::as_str) == Some(c.id.as_str()))
            {
                content.push(o.clone());
                calls += 1;
            }
        }
        dropped.leave_in(obj);
        let stop = obj.get("stop_reason").and_then(Value::as_str).map(str::to_owned);
        obj.insert("content".to_owned(), Value::Array(content));
        if calls > 0 {
            obj.insert("stop_reason".to_owned(), json!("tool_use"));
        } else if stop.as_deref() == Some("tool_use") {
            obj.insert("stop_reason".to_owned(), json!("end_turn"));
        }
    }

    fn report(response: &mut Value, report: Value) {
        // With the members `apply` dropped (see `kept`).
        kept::into_report(response, report);
    }

    fn original(response: &Value, _index: usize) -> Value {
        response.get("content").cloned().unwrap_or(Value::Null)
    }

    fn reprompt(request: &Value, response: &Value, fixed: &FixedReply, limits: &Limits) -> Option<Value> {
        let mut next = one_shot(request)?;
        let old = blocks(response);
        let mut assistant = Vec::new();
        let mut results = Vec::new();
        for b in old {
            match kind(b) {
                "text" if b.get("text").and_then(Value::as_str).is_some_and(|t| !t.is_empty()) => {
                    assistant.push(b.clone());
                }
                "tool_use" => {
                    let id = b.get("id").and_then(Value::as_str).unwrap_or("");
                    let mut block = b.clone();
                    if let Some(o) = block.as_object_mut() {
                        o.insert("input".to_owned(), input_object(b.get("input"), limits).0);
                    }
                    assistant.push(block);
                    let answer: &str = match fixed.calls.iter().find(|c| c.channel == Channel::ToolCalls && c.id == id)
                    {
                        Some(c) => c.result_for_model(),
                        None => feedback::not_run(),
                    };
                    results
                        .push(json!({"type": "tool_result", "tool_use_id": id, "content": answer, "is_error": true}));
                }
                _ => {}
            }
        }
        if assistant.is_empty() {
            assistant.push(json!({"type": "text", "text": parts_text(old)}));
        }
        results.push(json!({"type": "text", "text": fixed.reprompt()}));
        let messages = next.get_mut("messages")?.as_array_mut()?;
        messages.push(json!({"role": "assistant", "content": assistant}));
        messages.push(json!({"role": "user", "content": results}));
        force_tool(&mut next, fixed);
        Some(next)
    }

    fn retry_longer(request: &Value, response: &Value, cap: u64) -> Option<Value> {
        let used = request
            .get("max_tokens")
            .and_then(Value::as_u64)
            .or_else(|| response.pointer("/usage/output_tokens").and_then(Value::as_u64));
        let raised = match used {
            Some(n) => cap.min(n.saturating_mul(2).max(n.saturating_add(256))),
            None => cap,
        };
        if used.is_some_and(|n| raised <= n) {
            return None;
        }
        let mut next = one_shot(request)?;
        next.as_object_mut()?.insert("max_tokens".to_owned(), json!(raised));
        Some(next)
    }

    fn continuation(request: &Value, response: &Value) -> Option<Value> {
        // A prefilled assistant turn continues where the text was cut.
        let old = blocks(response);
        if old.iter().any(|b| kind(b) == "tool_use") {
            return None;
        }
        let text = parts_text(old);
        if text.is_empty() {
            return None;
        }
        let mut next = one_shot(request)?;
        next.get_mut("messages")?.as_array_mut()?.push(json!({"role": "assistant", "content": text}));
        Some(next)
    }

    fn join(partial: &Value, mut continued: Value) -> Value {
        let before = parts_text(blocks(partial));
        let after = parts_text(blocks(&continued));
        if let Some(obj) = continued.as_object_mut() {
            let mut content: Vec<Value> = obj
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|b| kind(b) != "text")
                .cloned()
                .collect();
            content.insert(0, json!({"type": "text", "text": format!("{before}{after}")}));
            obj.insert("content".to_owned(), Value::Array(content));
        }
        continued
    }

    fn stream<'t>(
        tools: &'t ToolSet,
        history: Option<&'t Value>,
        options: &FixOptions,
        max_event: usize,
    ) -> MessagesStream {
        MessagesStream::new(tools, history, options.clone(), max_event)
    }

    fn error_body(kind: &str, code: &str, message: &str) -> Value {
        let _ = code;
        json!({"type": "error", "error": {"type": kind, "message": message}})
    }
}

/// A Messages response read without copying: what [`Parts`] is made of, and whether its
/// members repeat (for a splice).
struct ResponseView<'a> {
    dup: bool,
    kind: Text<'a>,
    content: Present<Vec<BlockView<'a>>>,
    stop_reason: Text<'a>,
    /// A report already there (a splice then does not add one).
    report: Present<IgnoredAny>,
}

object_view!(counted ResponseView { kind: "type", content: "content", stop_reason: "stop_reason", report: "x_toolfix" });

struct BlockView<'a> {
    dup: bool,
    /// Which of the keys below are present (bit `i` for the `i`-th).
    seen: u64,
    /// A key not listed below is present.
    other: bool,
    kind: Text<'a>,
    text: Prose<'a>,
    thinking: Prose<'a>,
    id: Text<'a>,
    name: Text<'a>,
    input: Field<'a>,
}

object_view!(tracked BlockView {
    kind: "type",
    text: "text",
    thinking: "thinking",
    id: "id",
    name: "name",
    input: "input"
});

/// The reply's parts, joined: what the library reads.
#[derive(Debug, Default)]
struct Parts<'a> {
    text: Cow<'a, str>,
    thinking: Option<String>,
    calls: Calls<'a>,
    finish: Option<String>,
}

impl<'a> Parts<'a> {
    fn of(response: &'a Value) -> Parts<'a> {
        let old = blocks(response);
        let mut thinking: Option<String> = None;
        let mut calls = Calls::default();
        for b in old {
            match kind(b) {
                "thinking" => {
                    // The non-empty texts joined by a newline (as the stream feeds them).
                    let t = b.get("thinking").and_then(Value::as_str).unwrap_or("");
                    let all = thinking.get_or_insert_with(String::new);
                    if !all.is_empty() && !t.is_empty() {
                        all.push('\n');
                    }
                    all.push_str(t);
                }
                "tool_use" => {
                    let text = |key: &str| b.get(key).and_then(Value::as_str).map(Cow::Borrowed);
                    calls.push(text("id"), text("name"), b.get("input").map(Sent::Value), "{}");
                }
                _ => {}
            }
        }
        Parts { text: Cow::Owned(parts_text(old)), thinking, calls, finish: finish(response).map(str::to_owned) }
    }

    /// The same parts, from a borrowed read of the body.
    fn of_view(view: &ResponseView<'a>) -> Parts<'a> {
        let mut thinking: Option<String> = None;
        let mut calls = Calls::default();
        let mut text: Cow<'a, str> = Cow::Borrowed("");
        for b in view.content.0.iter().flatten() {
            match b.kind.as_str().unwrap_or("") {
                "thinking" => {
                    // As `Parts::of`: the non-empty texts joined by a newline.
                    let t = b.thinking.as_str().unwrap_or("");
                    let all = thinking.get_or_insert_with(String::new);
                    if !all.is_empty() && !t.is_empty() {
                        all.push('\n');
                    }
                    all.push_str(t);
                }
                "tool_use" => calls.push(b.id.0.clone(), b.name.0.clone(), b.input.0.map(Sent::Raw), "{}"),
                "text" => {
                    // One text block (the common case) is borrowed, not copied.
                    if text.is_empty()
                        && let Some(Cow::Borrowed(t)) = b.text.0.0
                    {
                        text = Cow::Borrowed(t);
                    } else {
                        text.to_mut().push_str(b.text.as_str().unwrap_or(""));
                    }
                }
                _ => {}
            }
        }
        let finish = match view.stop_reason.as_str() {
            Some("max_tokens") => Some("length"),
            Some("tool_use") => Some("tool_calls"),
            Some(_) => Some("stop"),
            None => None,
        };
        Parts { text, thinking, calls, finish: finish.map(str::to_owned) }
    }

    fn natives(&self) -> Vec<NativeCall<'_>> {
        self.calls.natives()
    }

    /// The reply (`natives`: [`Parts::natives`]).
    fn reply<'s>(&'s self, natives: &'s [NativeCall<'s>]) -> Reply<'s> {
        let mut reply = Reply::new(&self.text);
        if let Some(t) = &self.thinking {
            reply = reply.with_reasoning_content(t);
        }
        reply = self.calls.reply(reply, natives);
        if let Some(f) = &self.finish {
            reply = reply.with_finish_reason(f);
        }
        reply
    }

    /// True when writing `fixed` back would change the response (`made`: whether `fixed`
    /// was made from this very read's reply).
    fn changes(&self, fixed: &FixedReply, made: Made) -> bool {
        // The cheap tests first: a repaired call says so without its arguments compared.
        if fixed.changed_calls()
            || fixed.calls.iter().any(|c| !c.status.is_usable())
            || content_differs(&self.text, fixed, made)
            || self.thinking.as_deref() != fixed.reasoning_content.as_deref()
        {
            return true;
        }
        // A value compares as a value (the fixed call's text read as one).
        !self.calls.all_sent(&fixed.calls, same_call, |o, t| match &o.value {
            None => o.arguments == t,
            Some(v) => {
                *v == t
                    || serde_json::from_str::<Value>(t)
                        .is_ok_and(|parsed| serde_json::from_str::<Value>(v).is_ok_and(|v| parsed == v))
            }
        })
    }
}

/// A `thinking` block of the proxy's own.
pub(crate) fn thinking_block(text: &str) -> Value {
    json!({"type": "thinking", "thinking": text, "signature": PROXY_SIGNATURE})
}

/// True for a `thinking` block the proxy wrote.
pub(crate) fn is_proxy_thinking(block: &Value) -> bool {
    kind(block) == "thinking" && block.get("signature").and_then(Value::as_str) == Some(PROXY_SIGNATURE)
}

/// A call's block id: the server's, or `toolu_` for a call found in text.
pub(crate) fn block_id(call: &FixedCall) -> String {
    if call.channel == Channel::ToolCalls {
        call.id.clone()
    } else {
        format!("toolu_{}", call.id.strip_prefix("call_").unwrap_or(&call.id))
    }
}

/// True when the server's block `original` is `call` as sent.
fn same_call(call: &FixedCall, original: &Value) -> bool {
    let arguments = super::function_member(original, "arguments");
    let same_args = match (arguments, call.arguments_text()) {
        (Some(Value::String(s)), Some(t)) => s == t,
        (Some(v), Some(t)) => serde_json::from_str::<Value>(t).is_ok_and(|parsed| &parsed == v),
        _ => false,
    };
    original.get("id").and_then(Value::as_str) == Some(call.id.as_str())
        && super::function_member(original, "name").and_then(Value::as_str) == Some(call.name.as_str())
        && same_args
}

fn blocks(response: &Value) -> &[Value] {
    response.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

fn kind(block: &Value) -> &str {
    block.get("type").and_then(Value::as_str).unwrap_or("")
}

fn parts_text(blocks: &[Value]) -> String {
    blocks.iter().filter(|b| kind(b) == "text").filter_map(|b| b.get("text").and_then(Value::as_str)).collect()
}

/// The stop reason as the library reads it.
fn finish(response: &Value) -> Option<&'static str> {
    match response.get("stop_reason").and_then(Value::as_str)? {
        "max_tokens" => Some("length"),
        "tool_use" => Some("tool_calls"),
        _ => Some("stop"),
    }
}

/// The request as a non-streaming one.
fn one_shot(request: &Value) -> Option<Value> {
    let mut next = request.clone();
    next.as_object_mut()?.remove("stream");
    Some(next)
}

/// Make the re-prompt ask for the tool that failed (one tool only; a grammar-enforcing
/// server then writes a call that fits its schema).
pub(crate) fn force_tool(request: &mut Value, fixed: &FixedReply) {
    let mut failed = fixed.calls.iter().filter(|c| c.status == CallStatus::Refused).map(|c| c.name.as_str());
    let Some(name) = failed.next() else { return };
    if failed.any(|n| n != name) {
        return;
    }
    if request.get("tool_choice").and_then(|c| c.get("type")).and_then(Value::as_str) == Some("none") {
        return;
    }
    if let Some(obj) = request.as_object_mut() {
        obj.insert("tool_choice".to_owned(), json!({"type": "tool", "name": name}));
    }
}

/// `input` as an object: a string holding one is decoded; anything else is kept under
/// [`history::UNPARSED_KEY`]. The change made, when one was.
pub(crate) fn input_object(input: Option<&Value>, limits: &Limits) -> (Value, Option<&'static str>) {
    match input {
        Some(v @ Value::Object(_)) => (v.clone(), None),
        Some(Value::String(text)) => {
            let (normalised, _) = history::normalise_arguments(Some(&Value::String(text.clone())), limits);
            match serde_json::from_str::<Value>(&normalised) {
                Ok(v @ Value::Object(_)) => (v, Some("input_decoded")),
                _ => (json!({ history::UNPARSED_KEY: text }), Some("input_unparsed")),
            }
        }
        None | Some(Value::Null) => (json!({}), Some("input_added")),
        Some(other) => (json!({ history::UNPARSED_KEY: other.to_string() }), Some("input_unparsed")),
    }
}

/// The conversation as an OpenAI message list (for the storm guard and the ids of new
/// calls): `tool_use` blocks as assistant `tool_calls`, `tool_result` blocks as `tool`
/// messages.
fn openai_history(messages: &[Value]) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len());
    for m in messages {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let Some(content) = m.get("content").and_then(Value::as_array) else {
            out.push(json!({"role": role, "content": m.get("content").cloned().unwrap_or(Value::Null)}));
            continue;
        };
        let text = parts_text(content);
        if role == "assistant" {
            {
                let calls: Vec<Value> = content
                    .iter()
                    .filter(|b| kind(b) == "tool_use")
                    .map(|b| {
                        json!({"id": b.get("id"), "type": "function", "function": {"name": b.get("name"),
                        "arguments": b.get("input").map_or_else(|| "{}".to_owned(), Value::to_string)}})
                    })
                    .collect();
                let mut msg = json!({"role": "assistant", "content": text});
                if !calls.is_empty() {
                    msg["tool_calls"] = Value::Array(calls);
                }
                out.push(msg);
            }
        } else {
            {
                for b in content.iter().filter(|b| kind(b) == "tool_result") {
                    let result = match b.get("content") {
                        Some(Value::String(s)) => s.clone(),
                        Some(Value::Array(parts)) => parts_text(parts),
                        _ => String::new(),
                    };
                    out.push(json!({"role": "tool", "tool_call_id": b.get("tool_use_id"), "content": result}));
                }
                if !text.is_empty() {
                    out.push(json!({"role": role, "content": text}));
                }
            }
        }
    }
    out
}

/// Repair an Anthropic message list in place: `tool_use.input` that is not an object
/// (a string holding one is decoded), a `tool_use` with no `tool_result` in the next user
/// turn (one is added: `feedback::no_result`), a `tool_result` that answers no `tool_use`
/// of the turn before (dropped).
fn repair(messages: &mut Vec<Value>, limits: &Limits) -> Vec<history::Change> {
    let mut changes = Vec::new();
    let mut pending: Vec<String> = Vec::new();
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    for (index, mut message) in std::mem::take(messages).into_iter().enumerate() {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("").to_owned();
        if role != "assistant" && role != "user" {
            // A `system` turn inside `messages` (Claude Code sends them) is left alone.
            out.push(message);
            continue;
        }
        let answered_now = std::mem::take(&mut pending);
        if role == "assistant" {
            close_pending(&answered_now, None, &mut out, index, &mut changes);
            if let Some(content) = message.get_mut("content").and_then(Value::as_array_mut) {
                // The proxy's own thinking blocks (reasoning it moved out of the text) carry
                // no real signature: dropped, so a strict upstream never sees them. Kept
                // when nothing else is in the turn (an empty turn is refused too).
                if content.iter().any(is_proxy_thinking) && !content.iter().all(is_proxy_thinking) {
                    content.retain(|b| {
                        let proxy = is_proxy_thinking(b);
                        if proxy {
                            changes.push(history::Change {
                                kind: "proxy_thinking_dropped",
                                message: index,
                                call: None,
                                tool_call_id: None,
                            });
                        }
                        !proxy
                    });
                }
                for (n, b) in content.iter_mut().enumerate() {
                    if kind(b) != "tool_use" {
                        continue;
                    }
                    let id = b.get("id").and_then(Value::as_str).map(str::to_owned);
                    let (input, change) = input_object(b.get("input"), limits);
                    if let Some(kind) = change
                        && let Some(o) = b.as_object_mut()
                    {
                        o.insert("input".to_owned(), input);
                        changes.push(history::Change { kind, message: index, call: Some(n), tool_call_id: id.clone() });
                    }
                    pending.extend(id);
                }
            }
            out.push(message);
            continue;
        }
        // A user turn: it answers the calls of the turn before.
        if let Some(content) = message.get_mut("content").and_then(Value::as_array_mut) {
            content.retain(|b| {
                if kind(b) != "tool_result" {
                    return true;
                }
                let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
                let known = answered_now.iter().any(|p| p == id);
                if !known {
                    changes.push(history::Change {
                        kind: "orphan_result_dropped",
                        message: index,
                        call: None,
                        tool_call_id: Some(id.to_owned()).filter(|i| !i.is_empty()),
                    });
                }
                known
            });
        }
        let answered: Vec<String> = message
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|b| kind(b) == "tool_result")
            .filter_map(|b| b.get("tool_use_id").and_then(Value::as_str).map(str::to_owned))
            .collect();
        let missing: Vec<String> = answered_now.into_iter().filter(|p| !answered.contains(p)).collect();
        close_pending(&missing, Some(&mut message), &mut out, index, &mut changes);
        let empty = message.get("content").and_then(Value::as_array).is_some_and(Vec::is_empty);
        if !empty {
            out.push(message);
        }
    }
    let at = out.len();
    close_pending(&pending, None, &mut out, at, &mut changes);
    *messages = out;
    changes
}

/// Answer calls with no result: in `turn` (a user message, first), or in a user message
/// of their own.
fn close_pending(
    missing: &[String],
    turn: Option<&mut Value>,
    out: &mut Vec<Value>,
    index: usize,
    changes: &mut Vec<history::Change>,
) {
    if missing.is_empty() {
        return;
    }
    let results: Vec<Value> = missing
        .iter()
        .map(|id| json!({"type": "tool_result", "tool_use_id": id, "content": feedback::no_result()}))
        .collect();
    for id in missing {
        changes.push(history::Change {
            kind: "missing_result_added",
            message: index,
            call: None,
            tool_call_id: Some(id.clone()),
        });
    }
    match turn {
        Some(message) => {
            let Some(obj) = message.as_object_mut() else { return };
            let mut content = match obj.remove("content") {
                Some(Value::Array(blocks)) => blocks,
                Some(Value::String(text)) if !text.is_empty() => vec![json!({"type": "text", "text": text})],
                _ => Vec::new(),
            };
            let mut all = results;
            all.append(&mut content);
            obj.insert("content".to_owned(), Value::Array(all));
        }
        None => out.push(json!({"role": "user", "content": results})),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_repair_fixes_inputs_and_pairs_results() {
        let mut messages = vec![
            json!({"role": "user", "content": "go"}),
            json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": "a", "name": "f", "input": "{\"x\": 1,}"},
                {"type": "tool_use", "id": "b", "name": "g", "input": {"y": 2}}]}),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "ok"},
                                               {"type": "tool_result", "tool_use_id": "zz", "content": "stray"}]}),
        ];
        let changes: Vec<&str> = repair(&mut messages, &Limits::default()).into_iter().map(|c| c.kind).collect();
        assert_eq!(changes, ["input_decoded", "orphan_result_dropped", "missing_result_added"]);
        assert_eq!(messages[1]["content"][0]["input"], json!({"x": 1}));
        let results: Vec<&str> =
            messages[2]["content"].as_array().unwrap().iter().map(|b| b["tool_use_id"].as_str().unwrap()).collect();
        assert_eq!(results, ["b", "a"]);
    }

    /// The calls handed to the library as `NativeCall`s are read as the `tool_calls` value
    /// of each `tool_use` block (`{"id", "function": {"name", "arguments": input}}`) was:
    /// the same fixed reply and the same verdict on whether the body changes, whatever the
    /// input (compact or not, a string, `null`, absent, floats, a name that is no string).
    #[test]
    fn served_calls_read_as_the_tool_calls_value() {
        let tools = ToolSet::new(&[json!({"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}})])
        .unwrap();
        let options = FixOptions::default();
        let block = |input: &str| {
            format!(
                r#"{{"type": "message", "content": [{{"type": "text", "text": "Sure."}}, {{"type": "tool_use", "id": "toolu_1", "name": "get_weather"{input}}}], "stop_reason": "tool_use"}}"#
            )
        };
        let mut bodies: Vec<String> = [
            r#", "input": {"city":"Paris","days":3}"#,
            r#", "input": {"city": "Paris", "days": 3}"#,
            r#", "input": {"city":"Paris","days":"3"}"#,
            r#", "input": {"city":"Par\u0069s","days":3.0}"#,
            r#", "input": {"city":"Paris","city":"Rome"}"#,
            r#", "input": "{\"city\": \"Oslo\"}""#,
            r#", "input": null"#,
            "",
            r#", "input": [1]"#,
        ]
        .iter()
        .map(|i| block(i))
        .collect();
        bodies.push(
            r#"{"type": "message", "content": [{"type": "tool_use", "id": 7, "name": 3, "input": {}},
            {"type": "tool_use", "id": "b", "name": "get_weather", "input": {"city":"Lima"}}]}"#
                .to_owned(),
        );
        for body in &bodies {
            let value: Value = serde_json::from_str(body).unwrap();
            let calls: Vec<Value> = blocks(&value)
                .iter()
                .filter(|b| kind(b) == "tool_use")
                .map(|b| {
                    json!({"id": b.get("id"), "function": {"name": b.get("name"),
                    "arguments": b.get("input").cloned().unwrap_or(json!({}))}})
                })
                .collect();
            let calls = Value::Array(calls);
            let text = parts_text(blocks(&value));
            let mut want = Reply::new(&text).with_tool_calls(&calls);
            if let Some(f) = finish(&value) {
                want = want.with_finish_reason(f);
            }
            let want = toolfix::fix_reply(&want, Some(&tools), None, &options).unwrap();
            let view: ResponseView<'_> = serde_json::from_str(body).unwrap();
            for parts in [Parts::of_view(&view), Parts::of(&value)] {
                let natives = parts.natives();
                let got = toolfix::fix_reply(&parts.reply(&natives), Some(&tools), None, &options).unwrap();
                assert_eq!(format!("{got:?}"), format!("{want:?}"), "{body}");
                let old = Parts { calls: Calls::Value(calls.clone()), ..Parts::of(&value) };
                assert_eq!(parts.changes(&got, Made::FromThis), old.changes(&got, Made::Elsewhere), "{body}");
            }
        }
    }

    /// The borrowed read gives the parts the value read gives, for every body it takes;
    /// the others (a block that is no object, a key with escapes, content that is no
    /// list) are read as values.
    #[test]
    fn the_view_reads_what_the_value_reads() {
        let taken = [
            r#"{"type": "message", "content": [{"type": "text", "text": "a\nb"}, {"type": "thinking", "thinking": "t"},
                {"type": "thinking", "thinking": 3}, {"type": "thinking", "thinking": ""}, {"type": "thinking", "thinking": "u"}, {"type": "tool_use", "id": "x", "name": "f", "input": null},
                {"type": "tool_use", "name": "g"}, {"type": "text", "text": "c", "text": "d"}], "stop_reason": "tool_use"}"#,
            r#"{"type": "message", "type": "message", "content": [], "stop_reason": null}"#,
            r#"{"type": "message", "stop_reason": "max_tokens"}"#,
        ];
        for body in taken {
            let value: Value = serde_json::from_str(body).unwrap();
            let view: ResponseView<'_> = serde_json::from_str(body).unwrap();
            assert_eq!(format!("{:?}", Parts::of_view(&view)), format!("{:?}", Parts::of(&value)), "{body}");
        }
        let refused = [
            r#"{"type": "message", "content": [{"type": "text", "text": "x"}, "loose", 7]}"#,
            r#"{"type": "message", "content": [["text", "positional"]]}"#,
            r#"{"type": "message", "content": null}"#,
            r#"{"type": "message", "content": [{"ty\u0070e": "text", "text": "escaped key"}]}"#,
            r#"["message", [{"type": "text", "text": "x"}]]"#,
        ];
        for body in refused {
            assert!(serde_json::from_str::<ResponseView<'_>>(body).is_err(), "{body}");
        }
    }
}
