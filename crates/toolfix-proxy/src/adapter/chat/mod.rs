//! OpenAI Chat Completions (`POST /v1/chat/completions`): the request and response side;
//! `stream` is its SSE.

pub(crate) mod scan;
mod stream;

pub(crate) use stream::ChatStream;

use super::view::{Present, Prose, Raw, Text, object_view, span_of};
use super::{Adapter, Edit, Known, Lazy, Made, Peek, Read, Unusable, content_differs, history};
use crate::summary::push_json_str;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use toolfix::extract::Channel;
use toolfix::{CallStatus, FixOptions, FixedCall, FixedReply, Limits, NativeCall, Reply, ToolSet, feedback};

/// The Chat Completions adapter.
#[derive(Debug)]
pub(crate) struct ChatCompletions;

/// The request's envelope: what the handler reads before deciding anything.
struct Envelope<'a> {
    tools: Option<&'a RawValue>,
    stream: Option<bool>,
    model: Text<'a>,
    messages: Option<&'a RawValue>,
}

object_view!(Envelope { tools: "tools", stream: "stream", model: "model", messages: "messages" });

/// What the history repair and the storm guard read of a message.
struct MessagePeek<'a> {
    role: Text<'a>,
    tool_calls: Option<&'a RawValue>,
}

object_view!(MessagePeek { role: "role", tool_calls: "tool_calls" });

/// The number of messages, when none is a `tool` result or has a `tool_calls` member (the
/// history repair has nothing to do, the storm guard nothing to read); `None` otherwise,
/// or when a message is not an object (the request is then read as a value).
fn plain_history(messages: Option<&RawValue>) -> Option<usize> {
    let list: Vec<MessagePeek<'_>> = serde_json::from_str(messages?.get()).ok()?;
    list.iter().all(|m| m.tool_calls.is_none() && m.role.as_str() != Some("tool")).then_some(list.len())
}

/// `ChatCompletions::peek` by serde_json.
fn checked_peek(body: &[u8]) -> Result<Peek<'_>, String> {
    let e: Envelope<'_> = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let tools = e.tools.map(RawValue::get).filter(|t| {
        let t = t.trim();
        t.starts_with('[') && t != "[]" && t.trim_start_matches('[').trim_start() != "]"
    });
    Ok(Peek::checked(tools, e.stream, e.model, plain_history(e.messages)))
}

impl Adapter for ChatCompletions {
    const API: &'static str = "chat";
    const PATH: &'static str = "/v1/chat/completions";
    type Stream<'t> = ChatStream<'t>;

    fn peek_known<'b>(body: &'b [u8], known: Option<Known<'_>>) -> Result<Peek<'b>, String> {
        // The hand-written read when it can decide, else serde_json's (the same result).
        scan::peek(body, known.map(|k| k.text)).map_or_else(|| checked_peek(body), Ok)
    }

    fn definitions(request: &Value) -> Vec<Value> {
        request.get("tools").and_then(Value::as_array).cloned().unwrap_or_default()
    }

    fn history(request: &Value) -> Option<Cow<'_, Value>> {
        request.get("messages").filter(|m| m.is_array()).map(Cow::Borrowed)
    }

    fn repair_history(request: &mut Value, limits: &Limits) -> Vec<history::Change> {
        match request.get_mut("messages").and_then(Value::as_array_mut) {
            Some(messages) => history::repair(messages, limits),
            None => Vec::new(),
        }
    }

    fn each_reply(response: &Value, f: &mut dyn FnMut(&Reply<'_>)) {
        for choice in choices(response) {
            f(&Reply::from_choice(choice));
        }
    }

    fn fix_body(body: &[u8], fix: &mut dyn FnMut(&Reply<'_>) -> Option<FixedReply>) -> Option<Lazy> {
        // The hand-written read when it can decide, else serde_json's (the same result).
        let (view, read_calls) = if let Some(read) = scan::read(body) {
            read
        } else {
            let view: ResponseView<'_> = super::view::read(body).ok()?;
            let calls = view
                .choices
                .iter()
                .map(|choice| served(choice.message.as_ref().or(choice.delta.as_ref()).and_then(|m| m.tool_calls)))
                .collect();
            (view, calls)
        };
        let mut replies = Vec::with_capacity(view.choices.len());
        let mut changed = false;
        for (choice, calls) in view.choices.iter().zip(&read_calls) {
            let message = choice.message.as_ref().or(choice.delta.as_ref());
            let content = message.and_then(|m| m.content.as_str());
            // `reasoning_content` when present (whatever it holds), else `reasoning`.
            let reasoning =
                message.and_then(|m| m.reasoning_content.0.as_ref().or(m.reasoning.0.as_ref())).and_then(Text::as_str);
            let mut reply = Reply::new(content.unwrap_or(""));
            if let Some(r) = reasoning {
                reply = reply.with_reasoning_content(r);
            }
            let natives: Vec<NativeCall<'_>>;
            match calls {
                Served::Calls(views) => {
                    natives = views.iter().filter_map(CallView::native).collect();
                    reply = reply.with_native_calls(&natives);
                }
                Served::Value(c) => reply = reply.with_tool_calls(c),
                Served::None => {}
            }
            if let Some(f) = choice.finish_reason.text.as_str() {
                reply = reply.with_finish_reason(f);
            }
            let fixed = fix(&reply);
            changed |= fixed.as_ref().is_some_and(|f| reply_changes(&reply, f, Made::FromThis));
            replies.push(fixed);
        }
        // A body that changes: the edits that write every fixed reply back into it, when
        // each is one a splice makes (see `splice_choice`).
        let splices = changed && !view.dup && view.report.0.is_none() && !view.choices.is_empty();
        let edits = splices
            .then(|| {
                let mut edits = Vec::new();
                for ((choice, calls), fixed) in view.choices.iter().zip(&read_calls).zip(&replies) {
                    if let Some(f) = fixed {
                        splice_choice(body, choice, calls, f, &mut edits)?;
                    }
                }
                Some(edits)
            })
            .flatten();
        let read = Read {
            finish_reason: view.choices.first().and_then(|c| c.finish_reason.text.as_str()).map(str::to_owned),
            replies: view.choices.len(),
            changed,
            edits,
        };
        Some(Lazy { replies, read })
    }

    fn changes(response: &Value, index: usize, fixed: &FixedReply) -> bool {
        choices(response)
            .get(index)
            .is_some_and(|choice| reply_changes(&Reply::from_choice(choice), fixed, Made::Elsewhere))
    }

    fn apply(response: &mut Value, index: usize, fixed: &FixedReply, unusable: Unusable) {
        let Some(choice) = response.get_mut("choices").and_then(|c| c.get_mut(index)).and_then(Value::as_object_mut)
        else {
            return;
        };
        let finish = choice.get("finish_reason").and_then(Value::as_str).map(str::to_owned);
        let Some(message) = choice.get_mut("message").and_then(Value::as_object_mut) else { return };
        let originals = message.get("tool_calls").and_then(Value::as_array).cloned().unwrap_or_default();
        let gave_up = fixed.calls.iter().any(|c| !c.status.is_usable());
        // As sent, a call found in the text stays in the text as the model wrote it (and
        // the text's other calls with it).
        let text_as_sent = unusable == Unusable::AsSent
            && fixed.calls.iter().any(|c| !c.status.is_usable() && c.channel != Channel::ToolCalls);
        let mut calls = Vec::new();
        for c in &fixed.calls {
            if c.status.is_usable() && !(text_as_sent && c.channel != Channel::ToolCalls) {
                calls.push(call_value(c, &originals));
            } else if unusable == Unusable::AsSent
                && c.channel == Channel::ToolCalls
                && let Some(o) = originals.iter().find(|o| o.get("id").and_then(Value::as_str) == Some(c.id.as_str()))
            {
                calls.push(o.clone());
            }
        }
        let has_calls = !calls.is_empty();
        if unusable == Unusable::Explain && gave_up {
            let text = fixed.gave_up(&fixed.content);
            message.insert("content".to_owned(), Value::String(text));
            write_reasoning(message, fixed);
        } else if text_as_sent {
            write_reasoning(message, fixed);
        } else {
            write_text(message, fixed, has_calls);
        }
        if has_calls {
            message.insert("tool_calls".to_owned(), Value::Array(calls));
            choice.insert("finish_reason".to_owned(), json!("tool_calls"));
        } else {
            if !originals.is_empty() {
                message.remove("tool_calls");
            }
            if finish.as_deref() == Some("tool_calls") {
                choice.insert("finish_reason".to_owned(), json!("stop"));
            }
        }
    }

    fn report(response: &mut Value, report: Value) {
        if let Some(obj) = response.as_object_mut() {
            obj.insert("x_toolfix".to_owned(), report);
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
        let content = message.get("content").and_then(Value::as_str).unwrap_or("");
        let mut added = Vec::new();
        let natives = message.get("tool_calls").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        // Always a string: strict servers refuse `content: null` (llama-cpp-python does,
        // with calls beside it or not).
        assistant.insert("content".to_owned(), json!(content));
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
                let answer: &str = match matched {
                    Some(c) => c.result_for_model(),
                    None => feedback::not_run(),
                };
                added.push(json!({"role": "tool", "tool_call_id": id, "content": answer}));
            }
            assistant.insert("tool_calls".to_owned(), Value::Array(calls));
        }
        added.push(json!({"role": "user", "content": fixed.reprompt()}));
        let messages = next.get_mut("messages")?.as_array_mut()?;
        messages.push(Value::Object(assistant));
        messages.extend(added);
        force_tool(&mut next, fixed);
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

    fn stream<'t>(
        tools: &'t ToolSet,
        history: Option<&'t Value>,
        options: &FixOptions,
        max_event: usize,
    ) -> ChatStream<'t> {
        ChatStream::new(tools, history, options.clone(), max_event)
    }
}

/// A response read without copying, in one pass: the parts of each choice a reply is made
/// of, and where its calls and stop reason are (to splice the fixed ones in). Objects
/// only: a member of another type is not read as one.
struct ResponseView<'a> {
    dup: bool,
    choices: Vec<ChoiceView<'a>>,
    /// A report already there (a splice then does not add one).
    report: Present<serde::de::IgnoredAny>,
}

object_view!(counted ResponseView { choices: "choices", report: "x_toolfix" });

struct ChoiceView<'a> {
    dup: bool,
    message: Option<MessageView<'a>>,
    delta: Option<MessageView<'a>>,
    /// Its string, when it is one (another value is no stop reason, as in a `Value` read).
    finish_reason: RawText<'a>,
}

object_view!(counted ChoiceView { message: "message", delta: "delta", finish_reason: "finish_reason" });

struct MessageView<'a> {
    dup: bool,
    content: Prose<'a>,
    reasoning_content: Present<Text<'a>>,
    reasoning: Present<Text<'a>>,
    tool_calls: Option<Raw<'a>>,
}

object_view!(counted MessageView {
    content: "content",
    reasoning_content: "reasoning_content",
    reasoning: "reasoning",
    tool_calls: "tool_calls"
});

/// A member read as text (as [`Text`]) that also keeps where it is; `raw` is `None` when
/// the member is absent.
#[derive(Default)]
struct RawText<'a> {
    raw: Option<Raw<'a>>,
    text: Text<'a>,
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for RawText<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = <&'a RawValue>::deserialize(deserializer)?.get();
        let text = serde_json::from_str::<Text<'a>>(raw).map_err(serde::de::Error::custom)?;
        Ok(RawText { raw: Some(Raw(raw)), text })
    }
}

/// The edits `apply` would make to one choice (`calls`: its server calls as read), when
/// they only replace values that are there (its calls, its stop reason); `None` for any
/// other edit (text written, a member added or removed, a call given up, a duplicate key).
fn splice_choice(
    body: &[u8],
    choice: &ChoiceView<'_>,
    calls: &Served<'_>,
    fixed: &FixedReply,
    edits: &mut Vec<Edit>,
) -> Option<()> {
    if choice.dup {
        return None;
    }
    // No message object: `apply` writes nothing.
    let Some(message) = &choice.message else { return Some(()) };
    if message.dup || fixed.calls.iter().any(|c| !c.status.is_usable()) {
        return None;
    }
    // The text stays as it is (`write_text` would not write it): a string equal to the
    // text left, or (absent, `null`, content parts) no text left.
    let same = match message.content.as_str() {
        Some(text) => text == fixed.content,
        None => fixed.content.is_empty(),
    };
    if !same {
        return None;
    }
    let reasoning = if message.reasoning.0.is_some() && message.reasoning_content.0.is_none() {
        &message.reasoning
    } else {
        &message.reasoning_content
    };
    if let Some(r) = &fixed.reasoning_content
        && reasoning.0.as_ref().and_then(Text::as_str) != Some(r.as_str())
    {
        return None;
    }
    // `calls` is read from `message` or `delta`: only the message's are the originals.
    let originals = match calls {
        _ if choice.message.is_none() => Originals::Values(&[]),
        Served::Value(v) => Originals::Values(v.as_array().map(Vec::as_slice).unwrap_or_default()),
        Served::Calls(views) => {
            // The calls' text, read only when one is kept as sent.
            let raws: Vec<&RawValue> =
                if fixed.calls.iter().any(|c| c.channel == Channel::ToolCalls && c.status == CallStatus::Untouched) {
                    serde_json::from_str(message.tool_calls?.0).ok()?
                } else {
                    Vec::new()
                };
            if !raws.is_empty() && raws.len() != views.len() {
                return None;
            }
            Originals::Borrowed(views, raws)
        }
        Served::None => Originals::Values(&[]),
    };
    if fixed.calls.is_empty() {
        if !originals.is_empty() {
            return None; // `tool_calls` would be removed
        }
        if let Some(raw) = choice.finish_reason.raw
            && choice.finish_reason.text.as_str() == Some("tool_calls")
        {
            let (start, end) = span_of(body, raw)?;
            edits.push(Edit { start, end, text: "\"stop\"".to_owned() });
        }
        return Some(());
    }
    let (start, end) = span_of(body, message.tool_calls?)?;
    let mut text = Vec::with_capacity(160 * fixed.calls.len());
    text.push(b'[');
    for (i, c) in fixed.calls.iter().enumerate() {
        if i > 0 {
            text.push(b',');
        }
        originals.write(c, &mut text);
    }
    text.push(b']');
    edits.push(Edit { start, end, text: String::from_utf8(text).ok()? });
    let (start, end) = span_of(body, choice.finish_reason.raw?)?;
    edits.push(Edit { start, end, text: "\"tool_calls\"".to_owned() });
    Some(())
}

/// True when writing `fixed` over `reply` would change it (`made`: whether `fixed` was
/// made from this very `reply`).
fn reply_changes(reply: &Reply<'_>, fixed: &FixedReply, made: Made) -> bool {
    let served = fixed.calls.iter().filter(|c| c.channel == Channel::ToolCalls);
    // A server call dropped (a repeat kept once), split, or given a name changes the
    // reply too: every call must be one of the originals as sent.
    let other_calls = match (reply.tool_calls, reply.native_calls) {
        (Some(value), _) => {
            let natives = value.as_array().map(Vec::as_slice).unwrap_or_default();
            served.clone().count() != natives.len() || served.clone().any(|c| !natives.iter().any(|o| same_call(c, o)))
        }
        (None, natives) => {
            let natives = natives.unwrap_or_default();
            served.clone().count() != natives.len()
                || served.clone().any(|c| !natives.iter().any(|o| same_native(c, o)))
        }
    };
    fixed.changed_calls()
        || fixed.calls.iter().any(|c| !c.status.is_usable())
        || other_calls
        || content_differs(reply.content, fixed, made)
        || reply.reasoning_content != fixed.reasoning_content.as_deref()
}

/// A choice's server calls as read: borrowed when each is `{"id"?, "function": {"name":
/// string, "arguments": string}}` (what the library would read of them as a value),
/// otherwise as a value.
enum Served<'a> {
    None,
    Calls(Vec<CallView<'a>>),
    Value(Value),
}

/// The server calls in `raw` (a `tool_calls` member), when it is an array.
fn served(raw: Option<Raw<'_>>) -> Served<'_> {
    let Some(Raw(raw)) = raw.filter(|r| r.0.starts_with('[')) else { return Served::None };
    if let Ok(views) = serde_json::from_str::<Vec<CallView<'_>>>(raw)
        && views.iter().all(|v| v.native().is_some())
    {
        return Served::Calls(views);
    }
    serde_json::from_str(raw).map_or(Served::None, Served::Value)
}

/// A message's server calls, to write an untouched one back as it was sent.
enum Originals<'s, 'a> {
    Values(&'s [Value]),
    /// Read borrowed: each call, and its text (`tool_calls` read again as raw items).
    Borrowed(&'s [CallView<'a>], Vec<&'a RawValue>),
}

impl Originals<'_, '_> {
    fn is_empty(&self) -> bool {
        match self {
            Originals::Values(v) => v.is_empty(),
            Originals::Borrowed(v, _) => v.is_empty(),
        }
    }

    /// `call` as the usable call it is, written as JSON (the bytes `call_value`'s value
    /// is serialised to): the server's own object when it is one of them as sent.
    fn write(&self, call: &FixedCall, out: &mut Vec<u8>) {
        let kept = call.channel == Channel::ToolCalls && call.status == CallStatus::Untouched;
        let original: Option<Value> = match self {
            Originals::Values(v) => v.iter().find(|o| kept && same_call(call, o)).cloned(),
            Originals::Borrowed(views, raws) => views
                .iter()
                .position(|v| kept && v.native().is_some_and(|n| same_native(call, &n)))
                .and_then(|i| raws.get(i))
                .and_then(|raw| serde_json::from_str(raw.get()).ok()),
        };
        if let Some(o) = original
            && serde_json::to_writer(&mut *out, &o).is_ok()
        {
            return;
        }
        write_call(call, out);
    }
}

/// A call built anew, as `call_value` builds it, written as serde_json writes that value.
fn write_call(call: &FixedCall, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"id\":");
    push_json_str(out, &call.id);
    out.extend_from_slice(b",\"type\":\"function\",\"function\":{\"name\":");
    push_json_str(out, &call.name);
    out.extend_from_slice(b",\"arguments\":");
    push_json_str(out, call.arguments_text().unwrap_or("{}"));
    out.extend_from_slice(b"}}");
}

/// A server call, borrowed where it holds no escapes.
struct CallView<'a> {
    id: Text<'a>,
    function: Option<FunctionView<'a>>,
}

object_view!(CallView { id: "id", function: "function" });

struct FunctionView<'a> {
    name: Text<'a>,
    arguments: Text<'a>,
}

object_view!(FunctionView { name: "name", arguments: "arguments" });

impl CallView<'_> {
    /// The call, when its name and arguments are strings in a `function` object.
    fn native(&self) -> Option<NativeCall<'_>> {
        let f = self.function.as_ref()?;
        let mut call = NativeCall::new(f.name.as_str()?, f.arguments.as_str()?);
        if let Some(id) = self.id.as_str() {
            call = call.with_id(id);
        }
        Some(call)
    }
}

/// `same_call` for a call read borrowed.
fn same_native(call: &FixedCall, original: &NativeCall<'_>) -> bool {
    original.id == Some(call.id.as_str())
        && original.name == call.name
        && Some(original.arguments) == call.arguments_text()
}

pub(crate) fn choices(response: &Value) -> &[Value] {
    response.get("choices").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

/// Make the re-prompt ask for the tool that failed (one tool only): a grammar-enforcing
/// server then writes a call that fits its schema.
fn force_tool(request: &mut Value, fixed: &FixedReply) {
    let mut failed = fixed.calls.iter().filter(|c| c.status == CallStatus::Refused).map(|c| c.name.as_str());
    let Some(name) = failed.next() else { return };
    if failed.any(|n| n != name) || request.get("tool_choice").and_then(Value::as_str) == Some("none") {
        return;
    }
    if let Some(obj) = request.as_object_mut() {
        obj.insert("tool_choice".to_owned(), json!({"type": "function", "function": {"name": name}}));
    }
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
        && super::function_member(original, "name").and_then(Value::as_str) == Some(call.name.as_str())
        && super::function_member(original, "arguments").and_then(Value::as_str) == call.arguments_text()
}

/// A usable call in OpenAI shape; an untouched server call keeps its own object.
pub(crate) fn call_value(call: &FixedCall, originals: &[Value]) -> Value {
    if call.channel == Channel::ToolCalls
        && call.status == CallStatus::Untouched
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
    write_reasoning(message, fixed);
}

fn write_reasoning(message: &mut Map<String, Value>, fixed: &FixedReply) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The replies `fix_body` reads from a body (each reply's content, finish reason and
    /// number of server calls), or `None` when it does not read it as a response.
    fn read(body: &str) -> Option<Vec<(String, Option<String>, usize)>> {
        let mut seen = Vec::new();
        ChatCompletions::fix_body(body.as_bytes(), &mut |r| {
            let calls =
                r.tool_calls.and_then(Value::as_array).map_or(0, Vec::len) + r.native_calls.map_or(0, <[_]>::len);
            seen.push((r.content.to_owned(), r.finish_reason.map(str::to_owned), calls));
            None
        })?;
        Some(seen)
    }

    #[test]
    fn a_response_is_read_from_an_object_only() {
        // Regression: a derived reader took a JSON array as the response by position.
        assert!(read(r#"[[{"message": {"content": "hi"}, "finish_reason": "stop"}]]"#).is_none());
        assert!(read(r#"{"choices": [[{"content": "hi"}, null, "stop"]]}"#).is_none());
        let ok = read(r#"{"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]}"#);
        assert_eq!(ok, Some(vec![("hi".to_owned(), Some("stop".to_owned()), 0)]));
    }

    #[test]
    fn a_finish_reason_that_is_not_a_string_is_no_stop_reason() {
        // Regression: it made the reader fail, so the body went out unfixed.
        let body = r#"{"choices": [{"message": {"content": "x", "tool_calls": [{"id": "a", "type": "function",
            "function": {"name": "f", "arguments": "{}"}}]}, "finish_reason": 3}]}"#;
        assert_eq!(read(body), Some(vec![("x".to_owned(), None, 1)]));
        // As the value read of the same choice says.
        let v: Value = serde_json::from_str(body).unwrap();
        assert_eq!(Reply::from_choice(&choices(&v)[0]).finish_reason, None);
    }

    #[test]
    fn reasoning_content_null_hides_reasoning_as_in_a_value_read() {
        let body = r#"{"choices": [{"message": {"content": "x", "reasoning_content": null, "reasoning": "r"}}]}"#;
        let mut reasoning = Vec::new();
        ChatCompletions::fix_body(body.as_bytes(), &mut |r| {
            reasoning.push(r.reasoning_content.map(str::to_owned));
            None
        })
        .unwrap();
        let v: Value = serde_json::from_str(body).unwrap();
        assert_eq!(reasoning, [Reply::from_choice(&choices(&v)[0]).reasoning_content.map(str::to_owned)]);
        assert_eq!(reasoning, [None]);
    }

    #[test]
    fn a_conversation_without_calls_is_plain() {
        let plain = |body: &str| ChatCompletions::peek_known(body.as_bytes(), None).unwrap().plain;
        assert_eq!(
            plain(r#"{"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]}"#),
            Some(2)
        );
        assert_eq!(plain(r#"{"messages": []}"#), Some(0));
        // `null` is no calls, to the repair and the guard alike.
        assert_eq!(plain(r#"{"messages": [{"role": "assistant", "tool_calls": null}]}"#), Some(1));
        // Anything the repair or the storm guard reads, or cannot be read as messages: a value read.
        for body in [
            r#"{"messages": [{"role": "assistant", "tool_calls": []}]}"#,
            r#"{"messages": [{"role": "tool", "tool_call_id": "a", "content": "x"}]}"#,
            r#"{"messages": [{"role": "to\u006fl", "content": "x"}]}"#,
            r#"{"messages": [{"role": "user", "tool\u005fcalls": []}]}"#,
            r#"{"messages": ["hi"]}"#,
            r#"{"messages": {"role": "user"}}"#,
            r#"{"model": "m"}"#,
        ] {
            assert_eq!(plain(body), None, "{body}");
        }
        assert!(ChatCompletions::peek_known(b"[[], true]", None).is_err(), "an array is not a request");
    }

    /// Fix `body` against a `get_weather(city, days: integer)` tool: the spliced body and
    /// the value path's (`apply`, then the report), both as values.
    fn both_ways(body: &str) -> (Option<Value>, Value) {
        let tools = ToolSet::new(&[json!({"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}})])
        .unwrap();
        let options = FixOptions::default();
        let lazy = ChatCompletions::fix_body(body.as_bytes(), &mut |r| {
            toolfix::fix_reply(r, Some(&tools), None, &options).ok()
        })
        .unwrap();
        let report = json!({"summary": "s"});
        let spliced = lazy
            .read
            .edits
            .and_then(|edits| super::super::spliced(body.as_bytes(), edits, &report.to_string()))
            .map(|b| serde_json::from_slice::<Value>(&b).unwrap());
        let mut value: Value = serde_json::from_str(body).unwrap();
        for (i, f) in lazy.replies.iter().enumerate() {
            if let Some(f) = f {
                ChatCompletions::apply(&mut value, i, f, Unusable::Explain);
            }
        }
        ChatCompletions::report(&mut value, report);
        (spliced, value)
    }

    #[test]
    fn a_splice_reads_as_the_value_path_and_is_refused_where_it_would_differ() {
        let call = |args: &str| json!({"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": args}});
        let spliced = [
            // Arguments repaired; the text kept as sent (escapes, spacing and all).
            json!({"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Sure \u{e9}\n",
                "tool_calls": [call("{\"city\": \"Paris\", \"days\": \"3\"}")]}, "finish_reason": "tool_calls"}],
                "usage": {"total_tokens": 1.0e2}}),
            // A repaired call whose stop reason says otherwise; beside it, a choice left
            // alone whose stop reason `apply` rewrites all the same.
            json!({"choices": [{"message": {"content": null, "tool_calls": [call("{\"city\": \"Rome\", \"days\": \"2\"}")]},
                "finish_reason": "stop"}, {"message": {"content": "no calls"}, "finish_reason": "tool_calls"},
                {"message": {"content": null, "tool_calls": [call("{\"city\": \"Oslo\"}")]}, "finish_reason": "stop"}]}),
        ];
        for body in spliced {
            let text = serde_json::to_string_pretty(&body).unwrap();
            let (s, v) = both_ways(&text);
            assert_eq!(s.as_ref(), Some(&v), "{text}");
        }
        let refused = [
            // A call moved out of the text: the text is written.
            json!({"choices": [{"message": {"content": "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>"},
                "finish_reason": "stop"}]}),
            // A call given up.
            json!({"choices": [{"message": {"content": "", "tool_calls": [call("{\"days\": 2}")]}, "finish_reason": "tool_calls"}]}),
            // No stop reason to rewrite; a duplicate member; a report already there.
            json!({"choices": [{"message": {"content": "", "tool_calls": [call("{\"city\": \"Rome\", \"days\": \"2\"}")]}}]}),
            json!({"x_toolfix": 1, "choices": [{"message": {"content": "", "tool_calls": [call("{\"city\": \"Rome\", \"days\": \"2\"}")]}, "finish_reason": "tool_calls"}]}),
        ];
        for body in refused {
            let text = body.to_string();
            assert_eq!(both_ways(&text).0, None, "{text}");
        }
        let dup = r#"{"choices": [{"message": {"content": "", "tool_calls": [], "tool_calls": [{"id": "c", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\", \"days\": \"2\"}"}}]}, "finish_reason": "stop"}]}"#;
        assert_eq!(both_ways(dup).0, None);
    }

    /// The calls a splice writes are the bytes the value they were built as serialised
    /// to: calls repaired (names and ids with escapes), kept as sent (spacing, key order,
    /// numbers and extra members as a value read and written makes them), in one choice.
    #[test]
    fn spliced_calls_are_the_bytes_of_their_value() {
        let tools = ToolSet::new(&[json!({"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}})])
        .unwrap();
        let options = FixOptions::default();
        let bodies = [
            r#"{"choices": [{"message": {"content": "x", "tool_calls": [{"id": "c\"1\u00e9\n", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\": \"Par\\\"is\", \"days\": \"3\"}"}}]},
                "finish_reason": "tool_calls"}]}"#,
            r#"{"choices": [{"message": {"content": null, "tool_calls": [
                {"type": "function", "function": {"arguments": "{\"city\": \"Oslo\"}", "name": "get_weather"}, "id": "k", "extra": [1.0e2, -0, {"b": 1, "a": 2}]},
                {"id": "r", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\", \"days\": \"2\"}"}}]},
                "finish_reason": "stop"}]}"#,
        ];
        for body in bodies {
            let lazy = ChatCompletions::fix_body(body.as_bytes(), &mut |r| {
                toolfix::fix_reply(r, Some(&tools), None, &options).ok()
            })
            .unwrap();
            let edits = lazy.read.edits.expect("spliced");
            let value: Value = serde_json::from_str(body).unwrap();
            let originals = choices(&value)[0]["message"]["tool_calls"].as_array().unwrap().clone();
            let fixed = lazy.replies[0].as_ref().unwrap();
            let built: Vec<Value> = fixed.calls.iter().map(|c| call_value(c, &originals)).collect();
            let calls = edits.iter().find(|e| e.text.starts_with('[')).expect("the calls written");
            assert_eq!(calls.text, Value::Array(built).to_string(), "{body}");
            assert_eq!(calls.text.contains("\"extra\":[100.0,"), body.contains("extra"), "{}", calls.text);
        }
    }
}
