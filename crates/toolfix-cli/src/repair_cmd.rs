//! `toolfix repair`: validate arguments against a tool's schema and repair them, or say
//! what to fix.

use crate::args::{RepairArgs, too_large};
use crate::batch::Text;
use crate::batch::{self, Line};
use crate::out::UNRECOVERED;
use crate::out::{Obj, Stdout};
use crate::tools::{self, Cache};
use anyhow::{Result, bail};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::process::ExitCode;
use toolfix::{CallOutcome, ToolSet};

/// A batch line: `{"id"?, "tool", "arguments": "<text>" | <value>, "tools"?}`.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    tool: Option<&'a RawValue>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow)]
    tools: Option<&'a RawValue>,
}

pub(crate) fn run(args: &RepairArgs) -> Result<ExitCode> {
    let file_tools = args.tools.as_deref().map(tools::load).transpose()?;
    let limits = args.io.limits();
    let options = toolfix::CallOptions::from(limits).with_hit_token_limit(args.hit_token_limit);
    if args.io.batch {
        let mut input = args.io.open()?;
        let mut cache = Cache::default();
        batch::run(&mut input, batch::line_limit(limits.max_input_bytes), |line, answer| {
            one(line, answer, file_tools.as_ref(), &mut cache, &options);
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(set) = file_tools.as_ref() else { bail!("give the tool definitions with --tools FILE") };
    let Some(name) = args.tool.as_deref() else { bail!("give the tool name with --tool NAME") };
    let input = match args.io.read(limits.max_input_bytes)? {
        Ok(text) => text,
        Err(size) => {
            eprintln!("{}", too_large(size, limits.max_input_bytes));
            return Ok(ExitCode::from(UNRECOVERED));
        }
    };
    let outcome = set.repair_call_with(name, &input, &options);
    report(&outcome, args.report);
    if let Some(text) = outcome.arguments_text() {
        let mut stdout = Stdout::new();
        stdout.text(text)?;
        stdout.finish()?;
        Ok(ExitCode::SUCCESS)
    } else {
        if let Some(refusal) = outcome.refusal() {
            eprintln!("{}", refusal.message);
        }
        Ok(ExitCode::from(UNRECOVERED))
    }
}

/// Answer one batch line: the outcome's members (see [`push_outcome`]).
fn one(
    line: Line<'_>,
    answer: &mut String,
    file_tools: Option<&ToolSet>,
    cache: &mut Cache,
    options: &toolfix::CallOptions,
) {
    let Some(envelope) = line.parse::<Envelope<'_>>(answer) else { return };
    let mut obj = batch::answer(answer, envelope.id);
    let set = match envelope.tools {
        Some(raw) => cache.get(raw.get(), line.number),
        None => file_tools.ok_or_else(|| "no tools: give `tools` or --tools".to_owned()),
    };
    match set.and_then(|set| call(set, &envelope, options)) {
        Ok(outcome) => push_outcome(&mut obj, &outcome),
        Err(msg) => push_error(&mut obj, &msg),
    }
    obj.finish();
}

/// Run one batch line: `tool` and `arguments` (text, or a JSON value kept as written).
fn call(set: &ToolSet, envelope: &Envelope<'_>, options: &toolfix::CallOptions) -> Result<CallOutcome, String> {
    let name = match envelope.tool.map(|raw| serde_json::from_str::<Text<'_>>(raw.get())) {
        Some(Ok(Text(name))) => name,
        Some(Err(_)) => return Err("`tool` must be a string".to_owned()),
        None => return Err("missing `tool`".to_owned()),
    };
    let raw = match envelope.arguments {
        Some(raw) => match serde_json::from_str::<Text<'_>>(raw.get()) {
            Ok(Text(text)) => text,
            Err(_) => raw.get().into(),
        },
        None => "".into(),
    };
    Ok(set.repair_call_with(&name, &raw, options))
}

/// A call's outcome as answer members: `"ok":true,"arguments":<JSON>,"repairs":[{"kind",
/// "path"}],"notes":[...]` or `"ok":false,"error":{"message","issues"}`.
pub(crate) fn push_outcome(obj: &mut Obj<'_>, outcome: &CallOutcome) {
    match (outcome.arguments_text(), outcome.refusal()) {
        (Some(text), _) => {
            obj.bool("ok", true).raw_as_written("arguments", text);
            let repairs: Vec<Value> = outcome
                .repairs()
                .iter()
                .map(|r| serde_json::json!({"kind": r.kind.as_str(), "path": r.path}))
                .collect();
            obj.ser("repairs", &repairs).ser("notes", outcome.notes());
        }
        (None, Some(refusal)) => {
            obj.bool("ok", false).ser("error", refusal);
        }
        (None, None) => push_error(obj, "the call was not accepted"),
    }
}

/// A refusal that comes from the line, not from the call: `"ok":false,"error":{"message",
/// "issues":[]}`.
pub(crate) fn push_error(obj: &mut Obj<'_>, message: &str) {
    obj.bool("ok", false).ser("error", &serde_json::json!({"message": message, "issues": []}));
}

fn report(outcome: &CallOutcome, verbose: bool) {
    if !verbose {
        return;
    }
    for f in &outcome.report().text_fixes {
        eprintln!("text fix: {} at {}", f.kind, f.span);
    }
    for r in outcome.repairs() {
        let show = |v: &Option<Value>| v.as_ref().map_or_else(|| "(none)".to_owned(), Value::to_string);
        eprintln!("repair: {} at {:?}: {} -> {}", r.kind.as_str(), r.path, show(&r.before), show(&r.after));
    }
    for n in outcome.notes() {
        eprintln!("note: {n}");
    }
}
