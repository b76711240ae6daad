//! `toolfix extract`: find tool calls in a model's reply. `toolfix fix`: extract, then
//! salvage and repair each call against its tool's schema, then break repeat storms.

use crate::ExtractArgs;
use crate::batch::{self, Line};
use crate::out::{Obj, quote};
use crate::tools::{self, Cache, Tools};
use anyhow::Result;
use serde_json::Value;
use std::process::ExitCode;
use toolfix::extract::{Extraction, Message, extract};
use toolfix::guard::{GuardConfig, StormGuard, Verdict};

/// What a subcommand does with the extracted calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Extract,
    Fix,
}

pub(crate) fn run(args: &ExtractArgs, mode: Mode) -> Result<ExitCode> {
    let file_tools = args.tools.as_deref().map(tools::load).transpose()?;
    let input = args.io.read()?;
    let limits = args.io.limits();
    if args.io.batch {
        let mut cache = Cache::default();
        batch::run(&input, |line, answer| {
            let set = match line.raw("tools") {
                Some(raw) => match cache.get(raw) {
                    Ok(tools) => Some(tools),
                    Err(msg) => return answer.str("error", &msg),
                },
                None => file_tools.as_ref(),
            };
            match one(line, set, mode, &limits) {
                Ok(members) => answer.members(&members),
                Err(msg) => answer.str("error", &msg),
            }
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    if input.len() > limits.max_input_bytes {
        eprintln!("error: the reply is {} bytes, over the limit of {} bytes", input.len(), limits.max_input_bytes);
        return Ok(ExitCode::from(1));
    }
    let set = file_tools.as_ref();
    let message = Message::new(&input);
    let extraction = extract(&message, set.map(Tools::lookup));
    let members = render(&extraction, set, mode, None, &limits);
    println!("{{{members}}}");
    let found = !extraction.calls.is_empty();
    Ok(if found { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// One batch line: `content`, `reasoning_content`?, `tool_calls`?, `messages`? (history
/// for the storm guard, `fix` only).
fn one(line: &Line<'_>, set: Option<&Tools>, mode: Mode, limits: &toolfix::Limits) -> Result<String, String> {
    let content = match line.value("content") {
        Some(Value::String(s)) => s,
        Some(Value::Null) | None => String::new(),
        Some(_) => return Err("`content` must be a string".to_owned()),
    };
    let reasoning = match line.value("reasoning_content") {
        Some(Value::String(s)) => Some(s),
        Some(Value::Null) | None => None,
        Some(_) => return Err("`reasoning_content` must be a string".to_owned()),
    };
    let size = content.len() + reasoning.as_ref().map_or(0, String::len);
    if size > limits.max_input_bytes {
        return Err(format!("the reply is {size} bytes, over the limit of {} bytes", limits.max_input_bytes));
    }
    let native = line.value("tool_calls").filter(|v| !v.is_null());
    let history = line.value("messages");
    let mut message = Message::new(&content);
    if let Some(r) = reasoning.as_deref() {
        message = message.with_reasoning_content(r);
    }
    if let Some(calls) = native.as_ref() {
        message = message.with_tool_calls(calls);
    }
    let extraction = extract(&message, set.map(Tools::lookup));
    Ok(render(&extraction, set, mode, history.as_ref(), limits))
}

/// The answer's members: `tool_calls`, `content`, `reasoning_content`?.
fn render(
    extraction: &Extraction<'_>,
    set: Option<&Tools>,
    mode: Mode,
    history: Option<&Value>,
    limits: &toolfix::Limits,
) -> String {
    let mut guard = history.map_or_else(
        || StormGuard::new(GuardConfig::default()),
        |h| StormGuard::from_history(GuardConfig::default(), h),
    );
    let mut calls = Vec::with_capacity(extraction.calls.len());
    for call in &extraction.calls {
        let mut obj = Obj::new();
        if let Some(id) = &call.id {
            obj = obj.str("id", id);
        }
        obj = obj.str("name", &call.name);
        match mode {
            Mode::Extract => {
                obj = match toolfix::salvage::salvage_with(&call.arguments, limits) {
                    Ok(s) => obj.raw("arguments", s.text()),
                    Err(_) => obj.str("arguments", &call.arguments),
                };
                obj = obj.str("format", call.format.as_str());
            }
            Mode::Fix => obj = fix_call(obj, call, set, &mut guard, limits),
        }
        calls.push(obj.finish());
    }
    let mut members = format!("\"tool_calls\":[{}],\"content\":{}", calls.join(","), quote(&extraction.content));
    if let Some(r) = &extraction.reasoning_content {
        members.push_str(",\"reasoning_content\":");
        members.push_str(&quote(r));
    }
    members
}

fn fix_call(
    obj: Obj,
    call: &toolfix::extract::ExtractedCall<'_>,
    set: Option<&Tools>,
    guard: &mut StormGuard,
    limits: &toolfix::Limits,
) -> Obj {
    let obj = obj.str("format", call.format.as_str());
    let outcome = match set.map(Tools::set) {
        Some(Ok(set)) => set.repair_call_with(&call.name, &call.arguments, &toolfix::CallOptions::from(*limits)),
        Some(Err(why)) => {
            return obj
                .value("ok", &Value::Bool(false))
                .value("error", &serde_json::json!({"message": why, "issues": []}));
        }
        None => {
            // No schemas: salvage only.
            return match toolfix::salvage::salvage_with(&call.arguments, limits) {
                Ok(s) => obj.value("ok", &Value::Bool(true)).raw("arguments", s.text()).members("\"repairs\":[]"),
                Err(e) => obj.value("ok", &Value::Bool(false)).value(
                    "error",
                    &serde_json::json!({"message": format!("the arguments are not JSON: {e}"), "issues": []}),
                ),
            };
        }
    };
    if let Some(text) = outcome.arguments_text() {
        if let Verdict::Suppress(s) = guard.check_with_id(&call.name, text, call.id.as_deref()) {
            return obj
                .value("ok", &Value::Bool(false))
                .value("suppressed", &Value::Bool(true))
                .value("error", &serde_json::json!({"message": s.message, "issues": []}));
        }
    }
    obj.outcome(&outcome)
}
