//! OpenAI Responses (`POST /v1/responses`): the request and response side; `stream` is its
//! SSE. Shapes from the public API reference (platform.openai.com, "Responses": create,
//! the response object, "Streaming events").
//!
//! A reply is read as the library's `Reply`: the `output_text` parts of the `message`
//! items joined are the content, the text of the `reasoning` items (each item's `content`
//! parts, then its `summary` parts; non-empty parts joined by a newline) the reasoning, the
//! `function_call` items the server's calls (their `call_id` the id), `status:
//! "incomplete"` for `max_output_tokens` the token limit. A call left in the reasoning is
//! used as the `FixOptions` say, as for `reasoning_content` in Chat Completions; the
//! `reasoning` items themselves always pass through untouched.
//! `custom` tools (Codex's `apply_patch` with a grammar) and other tool types are passed
//! through untouched: their calls' raw `input` is never repaired as JSON. Written back:
//! other items untouched, the text left in the first `message` item, usable calls as
//! `function_call` items (calls found in text get `fc_` item ids and `call_` call ids).
//!
//! Reasoning the library moves out of the text (a `<think>…</think>` a local model wrote in
//! an `output_text` part) comes back as a `reasoning` item of the proxy's own, before the
//! `message` item (after the upstream's own `reasoning` items), as Chat Completions gets it
//! in `reasoning_content`: `{"type": "reasoning", "id": "rs_toolfix…", "summary": [],
//! "content": [{"type": "reasoning_text", "text"}]}`. Its id begins with
//! [`PROXY_REASONING_ID`] (the proxy cannot write `encrypted_content`); when a client sends
//! such an item back in `input`, the history repair drops it (reported as
//! `proxy_reasoning_dropped`), so a strict upstream never sees a reasoning item it did not
//! write.

mod items;
mod scan;
mod splice;
mod stream;

pub(crate) use stream::ResponsesStream;

use super::kept::{self, Dropped, Why};
use super::moved::moved;
use super::served::{Calls, Sent};
use super::view::{Field, Present, Prose, Text, object_view};
use super::{Adapter, Known, Lazy, Made, Peek, Read, Unusable, content_differs, history};
use items::{first_message, function_call, note_message, source};
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::borrow::Cow;
use toolfix::extract::Channel;
use toolfix::{CallStatus, FixOptions, FixedCall, FixedReply, Limits, NativeCall, Reply, ToolSet, feedback};

/// The start of the id of a `reasoning` item the proxy wrote (reasoning moved out of the
/// text): the mark by which the history repair knows the item as the proxy's.
pub(crate) const PROXY_REASONING_ID: &str = "rs_toolfix";

/// The OpenAI Responses adapter.
#[derive(Debug)]
pub(crate) struct Responses;

/// The request's envelope: what the handler reads before deciding anything.
struct Envelope<'a> {
    tools: Option<&'a RawValue>,
    stream: Option<bool>,
    model: Text<'a>,
    input: Option<&'a RawValue>,
}

object_view!(Envelope { tools: "tools", stream: "stream", model: "model", input: "input" });

/// What decides whether an input item can be a call or a result: its type.
struct ItemPeek<'a> {
    kind: Text<'a>,
}

object_view!(ItemPeek { kind: "type" });

/// The number of messages of the conversation, when the input is a string (one) or a list
/// of `message` items only (no call, no result, nothing the history repair changes);
/// `None` otherwise, or when an item is not an object.
fn plain_history(input: Option<&RawValue>) -> Option<usize> {
    let input = input?.get();
    if input.starts_with('"') {
        return Some(1);
    }
    let list: Vec<ItemPeek<'_>> = serde_json::from_str(input).ok()?;
    list.iter().all(|i| matches!(i.kind.as_str(), None | Some("message"))).then_some(list.len())
}

/// The request's envelope, read with serde_json (what [`super::chat::scan::peek_as`]
/// reads when it can decide).
pub(crate) fn checked_peek(body: &[u8]) -> Result<Peek<'_>, String> {
    let e: Envelope<'_> = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let tools = e.tools.map(RawValue::get).filter(|t| t.contains("\"function\""));
    Ok(Peek::checked(tools, e.stream, e.model, plain_history(e.input)))
}

impl Adapter for Responses {
    const API: &'static str = "responses";
    const PATH: &'static str = "/v1/responses";
    type Stream<'t> = ResponsesStream;

    fn peek_known<'b>(body: &'b [u8], known: Option<Known<'_>>) -> Result<Peek<'b>, String> {
        // The hand-written read when it can decide, else serde_json's (the same result).
        match super::chat::scan::peek_as(body, super::chat::scan::Api::Responses, known.map(|k| k.text)) {
            Some(mut peek) => {
                // Text this API took before is taken again without a look.
                let taken = peek.known && known.is_some_and(|k| k.here);
                peek.tools = peek.tools.filter(|t| taken || t.contains("\"function\""));
                Ok(peek)
            }
            None => checked_peek(body),
        }
    }

    fn definitions(request: &Value) -> Vec<Value> {
        let mut out = Vec::new();
        let mut stack: Vec<&Value> = request.get("tools").and_then(Value::as_array).into_iter().flatten().collect();
        // Function tools, also inside a `namespace` tool's own list (one level, as Codex sends).
        let mut nested = Vec::new();
        for t in stack.drain(..) {
            if let Some(inner) = t.get("tools").and_then(Value::as_array) {
                nested.extend(inner.iter());
            } else {
                nested.push(t);
            }
        }
        for t in nested {
            if t.get("type").and_then(Value::as_str) == Some("function")
                && let Some(name) = t.get("name")
            {
                out.push(json!({"name": name, "description": t.get("description").cloned().unwrap_or(json!("")),
                                "parameters": t.get("parameters").cloned().unwrap_or(json!({"type": "object"}))}));
            }
        }
        out
    }

    fn history(request: &Value) -> Option<Cow<'_, Value>> {
        Some(Cow::Owned(Value::Array(openai_history(request.get("input")?))))
    }

    fn repair_history(request: &mut Value, limits: &Limits) -> Vec<history::Change> {
        match request.get_mut("input").and_then(Value::as_array_mut) {
            Some(items) => repair(items, limits),
            None => Vec::new(),
        }
    }

    fn each_reply(response: &Value, f: &mut dyn FnMut(&Reply<'_>)) {
        let parts = Parts::of(response);
        let natives = parts.natives();
        f(&parts.reply(&natives));
    }

    fn fix_body(body: &[u8], fix: &mut dyn FnMut(&Reply<'_>) -> Option<FixedReply>) -> Option<Lazy> {
        // A borrowed read in one pass; a body it cannot take (duplicate members, items
        // that are not objects, ...) is read as a value.
        let value: Value;
        // The hand-written read when it can decide, else serde_json's (the same view).
        let read = scan::read(body).map_or_else(|| super::view::read::<ResponseView<'_>>(body), Ok);
        let (parts, view) = match read {
            Ok(mut view) if view.object.as_str() == Some("response") => (Parts::of_view(&mut view), Some(view)),
            Ok(_) => return None,
            Err(_) => {
                value = serde_json::from_slice(body).ok()?;
                let response = &value;
                if response.get("object").and_then(Value::as_str) != Some("response") {
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
        let read = Read { finish_reason: Some(parts.finish.to_owned()), replies: 1, changed, edits };
        Some(Lazy { replies: vec![fixed], read })
    }

    fn changes(response: &Value, _index: usize, fixed: &FixedReply) -> bool {
        Parts::of(response).changes(fixed, Made::Elsewhere)
    }

    fn apply(response: &mut Value, _index: usize, fixed: &FixedReply, unusable: Unusable) {
        let (original_text, reasoning) = {
            let parts = Parts::of(response);
            (parts.text.into_owned(), parts.reasoning)
        };
        let own_id = proxy_reasoning_id(response.get("id").and_then(Value::as_str));
        let Some(obj) = response.as_object_mut() else { return };
        // Taken, not copied: `output` is written anew below.
        let old: Vec<Value> = match obj.get_mut("output") {
            Some(Value::Array(items)) => std::mem::take(items),
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
        // Reasoning moved out of the text goes before it, in a reasoning item of the
        // proxy's own (not when the text goes out as sent: it is still in there).
        let moved = if text_as_sent { None } else { moved(reasoning.as_deref(), fixed.reasoning_content.as_deref()) };
        let own = moved.map(|r| reasoning_item(&own_id, r));
        let mut output = Vec::with_capacity(old.len() + fixed.calls.len() + 1);
        let mut dropped = Dropped::default();
        let mut placed = false;
        for (i, item) in old.iter().enumerate() {
            match kind(item) {
                "message" => {
                    if placed {
                        // Its text is joined to the first message item's: its members and
                        // its parts' have no item left to go on.
                        note_message(item, &json!({"output": i}), Why::Merged, &mut dropped);
                        continue;
                    }
                    placed = true;
                    output.extend(own.clone());
                    if text.is_empty() {
                        note_message(item, &json!({"output": i}), Why::NoText, &mut dropped);
                    } else {
                        output.push(first_message(item, i, &text, &mut dropped));
                    }
                }
                "function_call" => {}
                _ => output.push(item.clone()),
            }
        }
        if !placed {
            output.extend(own);
            if !text.is_empty() {
                output.push(message_item("msg_toolfix", &text));
            }
        }
        for (n, c) in fixed.calls.iter().enumerate() {
            if c.status.is_usable() && !(text_as_sent && c.channel != Channel::ToolCalls) {
                output.push(function_call(c, source(&old, &fixed.calls, n), &old, &mut dropped));
            } else if unusable == Unusable::AsSent
                && c.channel == Channel::ToolCalls
                && let Some(o) = find_call(&old, &c.id)
            {
                output.push(o.clone());
            }
        }
        dropped.leave_in(obj);
        obj.insert("output".to_owned(), Value::Array(output));
    }

    fn report(response: &mut Value, report: Value) {
        // With the members `apply` dropped (see `kept`).
        kept::into_report(response, report);
    }

    fn original(response: &Value, _index: usize) -> Value {
        response.get("output").cloned().unwrap_or(Value::Null)
    }

    fn reprompt(request: &Value, response: &Value, fixed: &FixedReply, limits: &Limits) -> Option<Value> {
        let mut next = one_shot(request)?;
        let mut input = match next.get("input") {
            Some(Value::Array(items)) => items.clone(),
            Some(Value::String(text)) => vec![json!({"role": "user", "content": text})],
            _ => Vec::new(),
        };
        let old = output(response);
        let mut answers = Vec::new();
        for item in old {
            match kind(item) {
                "message" => input.push(item.clone()),
                "function_call" => {
                    let call_id = item.get("call_id").and_then(Value::as_str).unwrap_or("");
                    let (arguments, _) = history::normalise_arguments(item.get("arguments"), limits);
                    let mut call = item.clone();
                    if let Some(o) = call.as_object_mut() {
                        o.insert("arguments".to_owned(), json!(arguments));
                    }
                    input.push(call);
                    let answer: &str =
                        match fixed.calls.iter().find(|c| c.channel == Channel::ToolCalls && c.id == call_id) {
                            Some(c) => c.result_for_model(),
                            None => feedback::not_run(),
                        };
                    answers.push(json!({"type": "function_call_output", "call_id": call_id, "output": answer}));
                }
                _ => {}
            }
        }
        input.extend(answers);
        input.push(json!({"role": "user", "content": fixed.reprompt()}));
        let obj = next.as_object_mut()?;
        obj.insert("input".to_owned(), Value::Array(input));
        force_tool(&mut next, fixed);
        Some(next)
    }

    fn retry_longer(request: &Value, response: &Value, cap: u64) -> Option<Value> {
        let used = request
            .get("max_output_tokens")
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
        next.as_object_mut()?.insert("max_output_tokens".to_owned(), json!(raised));
        Some(next)
    }

    fn continuation(_request: &Value, _response: &Value) -> Option<Value> {
        None
    }

    fn join(_partial: &Value, continued: Value) -> Value {
        continued
    }

    fn stream<'t>(
        tools: &'t ToolSet,
        history: Option<&'t Value>,
        options: &FixOptions,
        max_event: usize,
    ) -> ResponsesStream {
        ResponsesStream::new(tools, history, options.clone(), max_event)
    }
}

/// A Responses response read without copying: what [`Parts`] is made of, and whether its
/// members repeat (for a splice).
struct ResponseView<'a> {
    dup: bool,
    object: Text<'a>,
    output: Present<Vec<ItemView<'a>>>,
    status: Text<'a>,
    incomplete_details: Option<Details<'a>>,
    /// A report already there (a splice then does not add one).
    report: Present<IgnoredAny>,
}

object_view!(counted ResponseView {
    object: "object",
    output: "output",
    status: "status",
    incomplete_details: "incomplete_details",
    report: "x_toolfix"
});

#[derive(Default)]
struct Details<'a> {
    reason: Text<'a>,
}

object_view!(Details { reason: "reason" });

struct ItemView<'a> {
    dup: bool,
    /// Which of the keys below are present (bit `i` for the `i`-th).
    seen: u64,
    /// A key not listed below is present.
    other: bool,
    kind: Text<'a>,
    id: Text<'a>,
    call_id: Text<'a>,
    name: Text<'a>,
    arguments: Arguments<'a>,
    status: Text<'a>,
    role: Text<'a>,
    content: Vec<PartView<'a>>,
    summary: Vec<PartView<'a>>,
}

object_view!(tracked ItemView {
    kind: "type",
    id: "id",
    call_id: "call_id",
    name: "name",
    arguments: "arguments",
    status: "status",
    role: "role",
    content: "content",
    summary: "summary",
});

/// A `function_call` item's `arguments` as read: their JSON text, and the string it holds
/// when the hand-written read has decoded it on the way (`None` otherwise: the text is
/// read when the calls are handed on, see `served::Sent`).
#[derive(Default)]
struct Arguments<'a> {
    raw: Field<'a>,
    string: Option<Cow<'a, str>>,
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for Arguments<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Arguments { raw: Field::deserialize(deserializer)?, string: None })
    }
}

impl<'a> Arguments<'a> {
    /// As handed to `served::Calls::push`: the decoded string moved out (the raw text
    /// stays, for a splice).
    fn take(&mut self) -> Option<Sent<'a>> {
        match self.string.take() {
            Some(s) => Some(Sent::String(s)),
            None => self.raw.0.map(Sent::Raw),
        }
    }
}

struct PartView<'a> {
    dup: bool,
    /// Which of the keys below are present (bit `i` for the `i`-th).
    seen: u64,
    /// A key not listed below is present.
    other: bool,
    kind: Text<'a>,
    text: Prose<'a>,
    annotations: Field<'a>,
}

object_view!(tracked PartView { kind: "type", text: "text", annotations: "annotations" });

/// The reply's parts, joined.
#[derive(Debug, Default)]
struct Parts<'a> {
    text: Cow<'a, str>,
    reasoning: Option<String>,
    calls: Calls<'a>,
    finish: &'static str,
}

impl<'a> Parts<'a> {
    fn of(response: &'a Value) -> Parts<'a> {
        let items = output(response);
        let text = |i: &'a Value, key: &str| i.get(key).and_then(Value::as_str).map(Cow::Borrowed);
        let mut calls = Calls::default();
        for i in items.iter().filter(|i| kind(i) == "function_call") {
            calls.push(text(i, "call_id"), text(i, "name"), i.get("arguments").map(Sent::Value), "null");
        }
        let incomplete = response.get("status").and_then(Value::as_str) == Some("incomplete")
            && response.pointer("/incomplete_details/reason").and_then(Value::as_str) == Some("max_output_tokens");
        let finish = if incomplete {
            "length"
        } else if calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        Parts { text: Cow::Owned(text_of(items)), reasoning: reasoning_of(items), calls, finish }
    }

    /// The same parts, from a borrowed read of the body (the calls' decoded arguments
    /// are moved out of it, not copied).
    fn of_view(view: &mut ResponseView<'a>) -> Parts<'a> {
        let mut text: Cow<'a, str> = Cow::Borrowed("");
        // As `reasoning_of`: each reasoning item's content parts, then its summary parts;
        // the non-empty ones joined by a newline.
        let mut reasoning: Option<String> = None;
        for item in view.output.0.iter().flatten() {
            match item.kind.as_str().unwrap_or("") {
                "message" => {
                    for part in &item.content {
                        if part.kind.as_str() == Some("output_text") {
                            // One text part (the common case) is borrowed, not copied.
                            if text.is_empty()
                                && let Some(Cow::Borrowed(t)) = part.text.0.0
                            {
                                text = Cow::Borrowed(t);
                            } else {
                                text.to_mut().push_str(part.text.as_str().unwrap_or(""));
                            }
                        }
                    }
                }
                "reasoning" => {
                    for part in item.content.iter().chain(&item.summary).filter_map(|p| p.text.as_str()) {
                        push_part(&mut reasoning, part);
                    }
                }
                _ => {}
            }
        }
        let mut calls = Calls::default();
        for i in view.output.0.iter_mut().flatten().filter(|i| i.kind.as_str() == Some("function_call")) {
            calls.push(i.call_id.0.clone(), i.name.0.clone(), i.arguments.take(), "null");
        }
        let incomplete = view.status.as_str() == Some("incomplete")
            && view.incomplete_details.as_ref().and_then(|d| d.reason.as_str()) == Some("max_output_tokens");
        let finish = if incomplete {
            "length"
        } else if calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        Parts { text, reasoning, calls, finish }
    }

    fn natives(&self) -> Vec<NativeCall<'_>> {
        self.calls.natives()
    }

    /// The reply (`natives`: [`Parts::natives`]).
    fn reply<'s>(&'s self, natives: &'s [NativeCall<'s>]) -> Reply<'s> {
        let mut reply = Reply::new(&self.text).with_finish_reason(self.finish);
        if let Some(r) = &self.reasoning {
            reply = reply.with_reasoning_content(r);
        }
        self.calls.reply(reply, natives)
    }

    /// True when writing `fixed` back would change the response (`made`: whether `fixed`
    /// was made from this very read's reply).
    fn changes(&self, fixed: &FixedReply, made: Made) -> bool {
        // Arguments compare as text: a value never matches.
        let same = |c: &FixedCall, o: &Value| {
            o.get("id").and_then(Value::as_str) == Some(c.id.as_str())
                && super::function_member(o, "name").and_then(Value::as_str) == Some(c.name.as_str())
                && super::function_member(o, "arguments").and_then(Value::as_str) == c.arguments_text()
        };
        fixed.changed_calls()
            || fixed.calls.iter().any(|c| !c.status.is_usable())
            || !self.calls.all_sent(&fixed.calls, same, |o, t| o.value.is_none() && o.arguments == t)
            || content_differs(&self.text, fixed, made)
            || moved(self.reasoning.as_deref(), fixed.reasoning_content.as_deref()).is_some()
    }
}

/// The item id of a call found in text.
pub(crate) fn item_id(call: &FixedCall) -> String {
    format!("fc_{}", call.id.strip_prefix("call_").unwrap_or(&call.id))
}

fn find_call<'a>(items: &'a [Value], call_id: &str) -> Option<&'a Value> {
    items.iter().find(|o| kind(o) == "function_call" && o.get("call_id").and_then(Value::as_str) == Some(call_id))
}

/// A `reasoning` item of the proxy's own (its id: [`proxy_reasoning_id`]).
pub(crate) fn reasoning_item(id: &str, text: &str) -> Value {
    json!({"type": "reasoning", "id": id, "summary": [], "content": [{"type": "reasoning_text", "text": text}]})
}

/// The id of the proxy's reasoning item in the response with id `response_id`:
/// [`PROXY_REASONING_ID`], then the response's own id (past its `resp_`), so that the items
/// of two turns differ.
pub(crate) fn proxy_reasoning_id(response_id: Option<&str>) -> String {
    match response_id.filter(|i| !i.is_empty()) {
        Some(id) => format!("{PROXY_REASONING_ID}_{}", id.strip_prefix("resp_").unwrap_or(id)),
        None => PROXY_REASONING_ID.to_owned(),
    }
}

/// True for a `reasoning` item the proxy wrote.
pub(crate) fn is_proxy_reasoning(item: &Value) -> bool {
    kind(item) == "reasoning"
        && item.get("id").and_then(Value::as_str).is_some_and(|id| id.starts_with(PROXY_REASONING_ID))
}

pub(crate) fn message_item(id: &str, text: &str) -> Value {
    json!({"type": "message", "id": id, "status": "completed", "role": "assistant",
           "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

fn output(response: &Value) -> &[Value] {
    response.get("output").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

fn kind(item: &Value) -> &str {
    item.get("type").and_then(Value::as_str).unwrap_or("")
}

/// The `output_text` of the `message` items, joined.
fn text_of(items: &[Value]) -> String {
    items
        .iter()
        .filter(|i| kind(i) == "message")
        .flat_map(|i| i.get("content").and_then(Value::as_array).into_iter().flatten())
        .filter(|p| kind(p) == "output_text")
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect()
}

/// The text of the `reasoning` items: per item its `content` parts (`reasoning_text`), then
/// its `summary` parts (`summary_text`); the non-empty ones joined by a newline, as the
/// stream joins the parts' deltas. `None` without any.
fn reasoning_of(items: &[Value]) -> Option<String> {
    let mut all: Option<String> = None;
    for part in items.iter().filter(|i| kind(i) == "reasoning").flat_map(reasoning_parts) {
        push_part(&mut all, part);
    }
    all
}

/// Add a reasoning part to the text read so far (both reads of a response join them so):
/// a non-empty part after a newline; an empty one adds nothing.
fn push_part(all: &mut Option<String>, part: &str) {
    if part.is_empty() {
        return;
    }
    let r = all.get_or_insert_with(String::new);
    if !r.is_empty() {
        r.push('\n');
    }
    r.push_str(part);
}

/// The texts of a `reasoning` item's parts, in the order [`reasoning_of`] reads them.
pub(crate) fn reasoning_parts(item: &Value) -> impl Iterator<Item = &str> {
    let parts = |key: &str| item.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    parts("content").iter().chain(parts("summary")).filter_map(|p| p.get("text").and_then(Value::as_str))
}

fn one_shot(request: &Value) -> Option<Value> {
    let mut next = request.clone();
    let obj = next.as_object_mut()?;
    obj.remove("stream");
    obj.remove("stream_options");
    Some(next)
}

/// Make the re-prompt ask for the tool that failed.
fn force_tool(request: &mut Value, fixed: &FixedReply) {
    let mut failed = fixed.calls.iter().filter(|c| c.status == CallStatus::Refused).map(|c| c.name.as_str());
    let Some(name) = failed.next() else { return };
    if failed.any(|n| n != name) || request.get("tool_choice").and_then(Value::as_str) == Some("none") {
        return;
    }
    if let Some(obj) = request.as_object_mut() {
        obj.insert("tool_choice".to_owned(), json!({"type": "function", "name": name}));
    }
}

/// The input items as an OpenAI message list (for the storm guard and the ids of new
/// calls).
fn openai_history(input: &Value) -> Vec<Value> {
    let Some(items) = input.as_array() else {
        return vec![json!({"role": "user", "content": input})];
    };
    let mut out: Vec<Value> = Vec::with_capacity(items.len());
    for item in items {
        match kind(item) {
            "function_call" => {
                let call = json!({"id": item.get("call_id"), "type": "function",
                    "function": {"name": item.get("name"), "arguments": item.get("arguments")}});
                match out.last_mut() {
                    Some(last)
                        if last.get("role").and_then(Value::as_str) == Some("assistant")
                            && last.get("tool_calls").is_some() =>
                    {
                        if let Some(calls) = last.get_mut("tool_calls").and_then(Value::as_array_mut) {
                            calls.push(call);
                        }
                    }
                    _ => out.push(json!({"role": "assistant", "content": null, "tool_calls": [call]})),
                }
            }
            "function_call_output" => {
                let output = match item.get("output") {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                out.push(json!({"role": "tool", "tool_call_id": item.get("call_id"), "content": output}));
            }
            "message" | "" => {
                let role = item.get("role").and_then(Value::as_str).unwrap_or("user");
                let content = match item.get("content") {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Array(parts)) => {
                        parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<String>()
                    }
                    _ => String::new(),
                };
                out.push(json!({"role": role, "content": content}));
            }
            _ => {}
        }
    }
    out
}

/// Repair the input items in place: `function_call` items whose `arguments` are not valid
/// JSON text (salvaged, or kept under [`history::UNPARSED_KEY`]), `function_call_output`
/// items that answer no earlier call (dropped), `reasoning` items the proxy wrote
/// (dropped).
fn repair(items: &mut Vec<Value>, limits: &Limits) -> Vec<history::Change> {
    let mut changes = Vec::new();
    let mut known: Vec<String> = Vec::new();
    let mut out = Vec::with_capacity(items.len());
    // The proxy's own reasoning items (reasoning it moved out of the text) are no server's:
    // dropped, so a strict upstream never sees them. Kept when nothing else is in the
    // input (an empty one is refused too).
    let drop_own = !items.iter().all(is_proxy_reasoning);
    for (index, mut item) in std::mem::take(items).into_iter().enumerate() {
        match kind(&item) {
            "reasoning" if drop_own && is_proxy_reasoning(&item) => {
                changes.push(history::Change {
                    kind: "proxy_reasoning_dropped",
                    message: index,
                    call: None,
                    tool_call_id: None,
                });
                continue;
            }
            "function_call" => {
                let call_id = item.get("call_id").and_then(Value::as_str).map(str::to_owned);
                let (text, change) = history::normalise_arguments(item.get("arguments"), limits);
                if let Some(kind) = change
                    && let Some(o) = item.as_object_mut()
                {
                    o.insert("arguments".to_owned(), Value::String(text));
                    changes.push(history::Change { kind, message: index, call: None, tool_call_id: call_id.clone() });
                }
                known.extend(call_id);
            }
            "custom_tool_call" => known.extend(item.get("call_id").and_then(Value::as_str).map(str::to_owned)),
            "function_call_output" | "custom_tool_call_output" => {
                let id = item.get("call_id").and_then(Value::as_str).unwrap_or("");
                if !known.iter().any(|k| k == id) {
                    changes.push(history::Change {
                        kind: "orphan_result_dropped",
                        message: index,
                        call: None,
                        tool_call_id: Some(id.to_owned()).filter(|i| !i.is_empty()),
                    });
                    continue;
                }
            }
            _ => {}
        }
        out.push(item);
    }
    *items = out;
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_history_repair_drops_the_proxys_own_reasoning_items() {
        let upstream = json!({"type": "reasoning", "id": "rs_1", "summary": [],
                              "content": [{"type": "reasoning_text", "text": "Signed."}], "encrypted_content": "gAAA"});
        let mut items = vec![
            json!({"role": "user", "content": "go"}),
            upstream.clone(),
            reasoning_item("rs_toolfix_abc", "Moved."),
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Checking."}]}),
            json!({"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}),
            json!({"type": "function_call_output", "call_id": "c1", "output": "ok"}),
        ];
        let changes = repair(&mut items, &Limits::default());
        assert_eq!(
            changes,
            [history::Change { kind: "proxy_reasoning_dropped", message: 2, call: None, tool_call_id: None }]
        );
        assert_eq!(items.len(), 5);
        assert_eq!(items[1], upstream, "the upstream's own reasoning item is untouched");
        // Alone in the input: kept (an empty input would be refused too).
        let mut alone = vec![reasoning_item(PROXY_REASONING_ID, "Only.")];
        assert!(repair(&mut alone, &Limits::default()).is_empty());
        assert_eq!(alone.len(), 1);
    }

    #[test]
    fn the_proxys_reasoning_item_is_named_after_the_response() {
        assert_eq!(proxy_reasoning_id(Some("resp_abc")), "rs_toolfix_abc");
        assert_eq!(proxy_reasoning_id(Some("chatcmpl-9")), "rs_toolfix_chatcmpl-9");
        assert_eq!(proxy_reasoning_id(Some("")), "rs_toolfix");
        assert_eq!(proxy_reasoning_id(None), "rs_toolfix");
        assert!(is_proxy_reasoning(&reasoning_item(&proxy_reasoning_id(Some("resp_x")), "t")));
        assert!(!is_proxy_reasoning(&json!({"type": "reasoning", "id": "rs_1", "summary": []})));
        assert!(!is_proxy_reasoning(&json!({"type": "message", "id": "rs_toolfix"})));
    }

    /// The calls handed to the library as `NativeCall`s are read as the `tool_calls` value
    /// of each `function_call` item (`{"id": call_id, "function": {"name", "arguments"}}`)
    /// was: the same fixed reply and the same verdict on whether the body changes,
    /// whatever the arguments (a string, escaped or not, `null`, absent, another value, a
    /// name that is no string).
    #[test]
    fn served_calls_read_as_the_tool_calls_value() {
        let tools = ToolSet::new(&[json!({"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}})])
        .unwrap();
        let options = FixOptions::default();
        let item = |arguments: &str| {
            format!(
                r#"{{"object": "response", "status": "completed", "output": [{{"type": "message", "content": [{{"type": "output_text", "text": "Sure."}}]}},
                {{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather"{arguments}}}]}}"#
            )
        };
        let mut bodies: Vec<String> = [
            r#", "arguments": "{\"city\": \"Paris\", \"days\": 3}""#,
            r#", "arguments": "{\"city\": \"Paris\", \"days\": \"3\"}""#,
            r#", "arguments": "{\"city\": \"Par\u0069s\"}""#,
            r#", "arguments": null"#,
            "",
            r#", "arguments": {"city": "Oslo", "days": 2.0}"#,
        ]
        .iter()
        .map(|a| item(a))
        .collect();
        bodies.push(
            r#"{"object": "response", "output": [{"type": "function_call", "call_id": 7, "name": 3, "arguments": "{}"},
            {"type": "function_call", "call_id": "b", "name": "get_weather", "arguments": "{\"city\": \"Lima\"}"}]}"#
                .to_owned(),
        );
        let mut scanned_with_calls = 0;
        for body in &bodies {
            let value: Value = serde_json::from_str(body).unwrap();
            let calls: Vec<Value> = output(&value)
                .iter()
                .filter(|i| kind(i) == "function_call")
                .map(|i| json!({"id": i.get("call_id"), "function": {"name": i.get("name"), "arguments": i.get("arguments")}}))
                .collect();
            let calls = Value::Array(calls);
            let text = text_of(output(&value));
            let finish = Parts::of(&value).finish;
            let want = Reply::new(&text).with_tool_calls(&calls).with_finish_reason(finish);
            let want = toolfix::fix_reply(&want, Some(&tools), None, &options).unwrap();
            let mut view: ResponseView<'_> = serde_json::from_str(body).unwrap();
            // The hand-written read (its calls' arguments decoded as it reads) where it
            // decides, and serde_json's view.
            let mut scanned = scan::read(body.as_bytes());
            let read = scanned.as_mut().map(Parts::of_view);
            scanned_with_calls += usize::from(read.as_ref().is_some_and(|p| !p.calls.is_empty()));
            for parts in [Parts::of_view(&mut view), Parts::of(&value)].into_iter().chain(read) {
                let natives = parts.natives();
                let got = toolfix::fix_reply(&parts.reply(&natives), Some(&tools), None, &options).unwrap();
                assert_eq!(format!("{got:?}"), format!("{want:?}"), "{body}");
                let old = Parts { calls: Calls::Value(calls.clone()), ..Parts::of(&value) };
                assert_eq!(parts.changes(&got, Made::FromThis), old.changes(&got, Made::Elsewhere), "{body}");
            }
        }
        assert!(scanned_with_calls >= 5, "the hand-written read decided {scanned_with_calls} bodies with calls");
    }

    /// The borrowed read gives the parts the value read gives, for every body it takes;
    /// the others (an item or part that is no object, content that is no list) are read
    /// as values.
    #[test]
    fn the_view_reads_what_the_value_reads() {
        let taken = [
            r#"{"object": "response", "output": [{"type": "message", "content": [{"type": "output_text", "text": "a"},
                {"type": "refusal", "refusal": "no"}, {"type": "output_text", "text": "b", "text": "c"}]},
                {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
                {"type": "function_call", "name": "g", "arguments": null}, {"type": "reasoning", "summary": []},
                {"type": "reasoning", "content": [{"type": "reasoning_text", "text": "r1"}, {"type": "x", "text": ""}],
                 "summary": [{"type": "summary_text", "text": "s1"}, {"text": 4}]}],
                "status": "completed"}"#,
            r#"{"object": "response", "output": [], "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}"#,
            r#"{"object": "response", "status": "incomplete", "incomplete_details": null}"#,
        ];
        for body in taken {
            let value: Value = serde_json::from_str(body).unwrap();
            let mut view: ResponseView<'_> = serde_json::from_str(body).unwrap();
            assert_eq!(format!("{:?}", Parts::of_view(&mut view)), format!("{:?}", Parts::of(&value)), "{body}");
        }
        let refused = [
            r#"{"object": "response", "output": [{"type": "message", "content": [5]}]}"#,
            r#"{"object": "response", "output": [["function_call", "c1", "f", "{}"]]}"#,
            r#"{"object": "response", "output": [{"type": "message", "content": "plain"}]}"#,
            r#"{"object": "response", "incomplete_details": "cut"}"#,
        ];
        for body in refused {
            assert!(serde_json::from_str::<ResponseView<'_>>(body).is_err(), "{body}");
        }
    }
}
