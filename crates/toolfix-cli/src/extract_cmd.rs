//! `toolfix extract`: find tool calls in a model's reply. `toolfix fix`: the whole-reply
//! API ([`toolfix::fix_reply`]) on each reply. Both only read the input, call the library
//! once per reply, and write its result in the CLI's wire shapes.

use crate::batch::{self, Line};
use crate::json_cmd::Text;
use crate::out::{Obj, Stdout};
use crate::repair_cmd::{push_error, push_outcome};
use crate::tools::{self, Cache};
use crate::{ExtractArgs, FixArgs, Leaked, Think, UNRECOVERED};
use anyhow::Result;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::process::ExitCode;
use toolfix::extract::{self, Message, ThinkBlocks};
use toolfix::{CallStatus, FixOptions, FixedCall, FixedReply, Reply, ToolSet};

/// A batch line: `{"id"?, "content", "reasoning_content"?, "tool_calls"?, "finish_reason"?,
/// "tools"?, "messages"?}`.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(borrow)]
    reasoning_content: Option<&'a RawValue>,
    #[serde(borrow)]
    tool_calls: Option<&'a RawValue>,
    #[serde(borrow)]
    finish_reason: Option<&'a RawValue>,
    #[serde(borrow)]
    tools: Option<&'a RawValue>,
    #[serde(borrow)]
    messages: Option<&'a RawValue>,
}

/// What the subcommand does with a reply.
struct Job<'a> {
    fix: Option<&'a FixArgs>,
    think: Think,
    leaked_calls: Leaked,
    limits: toolfix::Limits,
}

/// A reply's parts, owned or borrowed from the input.
#[derive(Default)]
struct Parts<'a> {
    content: Cow<'a, str>,
    reasoning_content: Option<Cow<'a, str>>,
    tool_calls: Option<Value>,
    finish_reason: Option<Cow<'a, str>>,
}

impl Parts<'_> {
    fn size(&self) -> usize {
        self.content.len() + self.reasoning_content.as_ref().map_or(0, |r| r.len())
    }
}

pub(crate) fn run(args: &ExtractArgs, fix: Option<&FixArgs>) -> Result<ExitCode> {
    let file_tools = args.tools.as_deref().map(tools::load).transpose()?;
    let job = Job { fix, think: args.think, leaked_calls: args.leaked_calls, limits: args.io.limits() };
    if args.io.batch {
        let mut input = args.io.open()?;
        let mut cache = Cache::default();
        batch::run(&mut input, batch::line_limit(job.limits.max_input_bytes), |line, answer| {
            one(line, answer, file_tools.as_ref(), &mut cache, &job);
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let read_limit =
        if args.message { batch::line_limit(job.limits.max_input_bytes) } else { job.limits.max_input_bytes };
    let input = match args.io.read(read_limit)? {
        Ok(text) => text,
        Err(size) => {
            eprintln!("{}", crate::repair_cmd::too_large(size, read_limit));
            return Ok(ExitCode::from(UNRECOVERED));
        }
    };
    let message: Value;
    let parts = if args.message {
        message = match serde_json::from_str(&input) {
            Ok(v) => v,
            Err(e) => {
                eprintln!(
                    "error: the input is not JSON ({e}); --message reads an assistant message or a chat completion response"
                );
                return Ok(ExitCode::from(UNRECOVERED));
            }
        };
        match parts_of_message(&message) {
            Ok(parts) => parts,
            Err(why) => {
                eprintln!("error: {why}");
                return Ok(ExitCode::from(UNRECOVERED));
            }
        }
    } else {
        Parts { content: Cow::Borrowed(&input), ..Parts::default() }
    };
    let mut answer = String::new();
    let mut obj = Obj::new(&mut answer);
    let usable = reply(&mut obj, &parts, file_tools.as_ref(), None, &job);
    obj.finish();
    let mut stdout = Stdout::new();
    stdout.line(&answer)?;
    stdout.finish()?;
    match usable {
        Ok(true) => Ok(ExitCode::SUCCESS),
        Ok(false) => Ok(ExitCode::from(UNRECOVERED)),
        Err(why) => {
            eprintln!("error: {why}");
            Ok(ExitCode::from(UNRECOVERED))
        }
    }
}

/// The reply in a whole assistant message, or in the first choice of a chat completion
/// response (`finish_reason` included).
fn parts_of_message(value: &Value) -> Result<Parts<'_>, String> {
    let reply = if let Some(choices) = value.get("choices") {
        let Some(choice) = choices.as_array().and_then(|c| c.first()) else {
            return Err("the response has no choice".to_owned());
        };
        Reply::from_choice(choice)
    } else if value.get("message").is_some_and(Value::is_object) {
        Reply::from_choice(value)
    } else if value.is_object() {
        Reply::from_message(value)
    } else {
        return Err("--message reads an assistant message or a chat completion response (a JSON object)".to_owned());
    };
    Ok(Parts {
        content: Cow::Borrowed(reply.content),
        reasoning_content: reply.reasoning_content.map(Cow::Borrowed),
        tool_calls: reply.tool_calls.cloned(),
        finish_reason: reply.finish_reason.map(Cow::Borrowed),
    })
}

/// Answer one batch line.
fn one(line: Line<'_>, answer: &mut String, file_tools: Option<&ToolSet>, cache: &mut Cache, job: &Job<'_>) {
    let Some(envelope) = line.parse::<Envelope<'_>>(answer) else { return };
    let mut obj = batch::answer(answer, envelope.id);
    let result = parts_of_line(&envelope).and_then(|parts| {
        let set = match envelope.tools {
            Some(raw) => Some(cache.get(raw.get(), line.number)?),
            None => file_tools,
        };
        let history = match envelope.messages {
            Some(raw) => Some(serde_json::from_str::<Value>(raw.get()).map_err(|e| format!("`messages`: {e}"))?),
            None => None,
        };
        reply(&mut obj, &parts, set, history.as_ref(), job)
    });
    if let Err(why) = result {
        obj.str("error", &why);
    }
    obj.finish();
}

/// A string member that may be absent or null.
fn text<'a>(raw: Option<&'a RawValue>, key: &str) -> Result<Option<Cow<'a, str>>, String> {
    match raw {
        None => Ok(None),
        Some(raw) if raw.get() == "null" => Ok(None),
        Some(raw) => match serde_json::from_str::<Text<'a>>(raw.get()) {
            Ok(Text(t)) => Ok(Some(t)),
            Err(_) => Err(format!("`{key}` must be a string")),
        },
    }
}

fn parts_of_line<'a>(envelope: &Envelope<'a>) -> Result<Parts<'a>, String> {
    let tool_calls = match envelope.tool_calls {
        Some(raw) => serde_json::from_str::<Value>(raw.get()).ok().filter(|v| !v.is_null()),
        None => None,
    };
    Ok(Parts {
        content: text(envelope.content, "content")?.unwrap_or_default(),
        reasoning_content: text(envelope.reasoning_content, "reasoning_content")?,
        tool_calls,
        finish_reason: text(envelope.finish_reason, "finish_reason")?,
    })
}

/// Write the answer's members for one reply: `tool_calls`, `content`,
/// `reasoning_content`?. `Ok(usable)`: whether every call can be used.
fn reply(
    obj: &mut Obj<'_>,
    parts: &Parts<'_>,
    set: Option<&ToolSet>,
    history: Option<&Value>,
    job: &Job<'_>,
) -> Result<bool, String> {
    if parts.size() > job.limits.max_input_bytes {
        return Err(format!(
            "the reply is too large ({} bytes, limit {} bytes; raise `--max-input-bytes`)",
            parts.size(),
            job.limits.max_input_bytes
        ));
    }
    let think = match job.think {
        Think::Keep => ThinkBlocks::Keep,
        Think::Strip | Think::Move => ThinkBlocks::Move,
    };
    let options = extract::Options::default()
        .with_think_blocks(think)
        .with_limits(job.limits)
        .with_leaked_calls(job.leaked_calls.into());
    // Strip: reasoning blocks are moved out of `content`, then only the reasoning given
    // apart is kept.
    let reasoning_out = |moved: Option<&str>| -> Option<String> {
        match job.think {
            Think::Strip => parts.reasoning_content.as_deref().map(str::to_owned),
            _ => moved.map(str::to_owned),
        }
    };
    match job.fix {
        None => {
            let mut message = Message::new(&parts.content);
            if let Some(r) = parts.reasoning_content.as_deref() {
                message = message.with_reasoning_content(r);
            }
            if let Some(calls) = parts.tool_calls.as_ref() {
                message = message.with_tool_calls(calls);
            }
            let lookup = set.map(|s| s as &dyn extract::ToolLookup);
            let extraction = extract::extract_with(&message, lookup, &options);
            let mut usable = true;
            let text = obj.key("tool_calls");
            text.push('[');
            for (i, call) in extraction.calls.iter().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                let mut c = Obj::new(text);
                if let Some(id) = &call.id {
                    c.str("id", id);
                }
                c.str("name", &call.name);
                if let Ok(s) = toolfix::salvage::salvage_with(&call.arguments, &job.limits) {
                    c.raw("arguments", s.text());
                    // Cut off (inside a value, or right after a key or a comma): closed to
                    // be shown, never presented as complete; `fix` refuses it for a tool
                    // that may change things.
                    if s.truncation().is_some_and(|t| t.is_evident() || !t.uncertain().is_empty()) {
                        usable = false;
                        c.bool("cut", true);
                    }
                } else {
                    // Not JSON even after salvage: the text as written.
                    usable = false;
                    c.str("arguments", &call.arguments);
                }
                c.str("format", call.format.as_str()).finish();
            }
            text.push(']');
            prose(obj, &extraction.content, reasoning_out(extraction.reasoning_content.as_deref()).as_deref());
            Ok(usable)
        }
        Some(fix) => {
            let mut reply = Reply::new(&parts.content);
            if let Some(r) = parts.reasoning_content.as_deref() {
                reply = reply.with_reasoning_content(r);
            }
            if let Some(calls) = parts.tool_calls.as_ref() {
                reply = reply.with_tool_calls(calls);
            }
            if fix.hit_token_limit {
                reply = reply.with_finish_reason("length");
            } else if let Some(reason) = parts.finish_reason.as_deref() {
                reply = reply.with_finish_reason(reason);
            }
            let options = FixOptions::default().with_extract(options).with_limits(job.limits);
            let fixed = toolfix::fix_reply(&reply, set, history, &options).map_err(|e| e.to_string())?;
            write_fixed(obj, &fixed);
            prose(obj, &fixed.content, reasoning_out(fixed.reasoning_content.as_deref()).as_deref());
            Ok(fixed.calls.iter().all(|c| c.status.is_usable()))
        }
    }
}

/// `"content"` and `"reasoning_content"`?.
fn prose(obj: &mut Obj<'_>, content: &str, reasoning: Option<&str>) {
    obj.str("content", content);
    if let Some(r) = reasoning {
        obj.str("reasoning_content", r);
    }
}

/// `"tool_calls":[{"id","name","written_name"?,"format","status", then "ok":true,
/// "arguments","repairs","notes" or "ok":false,"suppressed"?,"error"}]`.
fn write_fixed(obj: &mut Obj<'_>, fixed: &FixedReply) {
    let text = obj.key("tool_calls");
    text.push('[');
    for (i, call) in fixed.calls.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        let mut c = Obj::new(text);
        write_call(&mut c, call);
        c.finish();
    }
    text.push(']');
}

fn write_call(c: &mut Obj<'_>, call: &FixedCall) {
    c.str("id", &call.id).str("name", &call.name);
    if call.written_name != call.name {
        c.str("written_name", &call.written_name);
    }
    c.str("format", call.format.as_str()).str("status", call.status.as_str());
    match call.status {
        CallStatus::Suppressed => {
            c.bool("ok", false).bool("suppressed", true);
            let message = call.message().unwrap_or("stopped by the storm guard");
            c.ser("error", &serde_json::json!({"message": message, "issues": []}));
        }
        status if status.is_usable() => push_outcome(c, call.outcome()),
        _ => match call.refusal() {
            Some(refusal) => {
                c.bool("ok", false).ser("error", refusal);
            }
            None => push_error(c, call.message().unwrap_or("the call was refused")),
        },
    }
}
