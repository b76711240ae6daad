//! `toolfix repair`: validate arguments against a tool's schema and repair them, or say
//! what to fix.

use crate::RepairArgs;
use crate::batch::{self, Line};
use crate::out::Obj;
use crate::tools::{self, Cache};
use anyhow::{Result, bail};
use serde_json::Value;
use std::io::Write;
use std::process::ExitCode;
use toolfix::{CallOutcome, ToolSet};

pub(crate) fn run(args: &RepairArgs) -> Result<ExitCode> {
    let file_tools = args.tools.as_deref().map(tools::load).transpose()?;
    if let Some(Err(why)) = file_tools.as_ref().map(tools::Tools::set) {
        bail!("{why}");
    }
    let input = args.io.read()?;
    let limits = args.io.limits();
    if args.io.batch {
        let mut cache = Cache::default();
        batch::run(&input, |line, answer| {
            let set = match line.raw("tools") {
                Some(raw) => cache.get(raw).and_then(tools::Tools::set),
                None => file_tools
                    .as_ref()
                    .ok_or_else(|| "no tools: give `tools` or --tools".to_owned())
                    .and_then(tools::Tools::set),
            };
            match set.and_then(|set| call(set, line, &limits)) {
                Ok(outcome) => answer.outcome(&outcome),
                Err(msg) => answer
                    .value("ok", &Value::Bool(false))
                    .value("error", &serde_json::json!({"message": msg, "issues": []})),
            }
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(set) = file_tools.as_ref().map(tools::Tools::set).transpose().map_err(anyhow::Error::msg)? else {
        bail!("give the tool definitions with --tools FILE")
    };
    let Some(name) = args.tool.as_deref() else { bail!("give the tool name with --tool NAME") };
    let outcome = set.repair_call_with(name, &input, &toolfix::CallOptions::from(limits));
    report(&outcome, args.report);
    if let Some(text) = outcome.arguments_text() {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(text.as_bytes())?;
        if !text.ends_with('\n') {
            stdout.write_all(b"\n")?;
        }
        Ok(ExitCode::SUCCESS)
    } else {
        if let Some(refusal) = outcome.refusal() {
            eprintln!("{}", refusal.message);
        }
        Ok(ExitCode::from(1))
    }
}

/// Run one batch line: `tool` and `arguments` (text, or a JSON value kept as written).
fn call(set: &ToolSet, line: &Line<'_>, limits: &toolfix::Limits) -> Result<CallOutcome, String> {
    let name = line.str("tool")?;
    let raw = match line.value("arguments") {
        Some(Value::String(s)) => s,
        Some(_) => line.raw("arguments").unwrap_or("null").to_owned(),
        None => String::new(),
    };
    Ok(set.repair_call_with(&name, &raw, &toolfix::CallOptions::from(*limits)))
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

impl Obj {
    /// The members of one call's answer: `"ok":true,"arguments":<raw JSON>,"repairs":
    /// [{"kind","path"}],"notes":[..]` or `"ok":false,"error":{"message","issues"}`. The
    /// arguments are the accepted text as written (compacted only when it spans lines).
    pub(crate) fn outcome(self, outcome: &CallOutcome) -> Obj {
        match outcome.arguments_text() {
            Some(text) => {
                let repairs: Vec<Value> = outcome
                    .repairs()
                    .iter()
                    .map(|r| serde_json::json!({"kind": r.kind.as_str(), "path": r.path}))
                    .collect();
                let obj = self.value("ok", &Value::Bool(true));
                let obj = if text.contains(['\n', '\r']) {
                    obj.raw("arguments", text)
                } else {
                    obj.members(&format!("\"arguments\":{text}"))
                };
                obj.value("repairs", &Value::Array(repairs)).value("notes", &serde_json::json!(outcome.notes()))
            }
            None => self
                .value("ok", &Value::Bool(false))
                .value("error", &serde_json::to_value(outcome.refusal()).unwrap_or_default()),
        }
    }
}
