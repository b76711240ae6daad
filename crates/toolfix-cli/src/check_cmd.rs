//! `toolfix check`: lint tool definitions. Every problem is listed, each at its JSON
//! pointer into the tools file, errors before warnings: stdout gets them as one JSON
//! array, stderr one line each. Exit 1 when there is an error, 0 with warnings only, 2 when
//! the file cannot be read.

use crate::args::CheckArgs;
use anyhow::{Context, Result};
use std::process::ExitCode;
use toolfix::check::{CheckProblem, Severity};

pub(crate) fn run(args: &CheckArgs) -> Result<ExitCode> {
    let file = args.tools.display();
    let text = std::fs::read(&args.tools).with_context(|| format!("cannot read the tools file {file}"))?;
    let problems = match serde_json::from_slice(&text) {
        Ok(document) => toolfix::check::check_document(&document),
        Err(e) => {
            let message = format!("{file} is not JSON: {e}");
            eprintln!("{file}: error: {message}");
            crate::out::print_line(
                &serde_json::json!([{"pointer": "", "severity": "error", "kind": "not_json", "message": message}])
                    .to_string(),
            )?;
            return Ok(ExitCode::from(1));
        }
    };
    for p in &problems {
        eprintln!("{}", line(&file.to_string(), p));
    }
    crate::out::print_line(&serde_json::to_string(&problems)?)?;
    let errors = problems.iter().filter(|p| p.is_error()).count();
    let warnings = problems.len() - errors;
    match (errors, warnings) {
        (0, 0) => eprintln!("{file}: no problems"),
        _ => eprintln!("{file}: {errors} error{}, {warnings} warning{}", plural(errors), plural(warnings)),
    }
    Ok(if errors == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// `tools.json:/0/function/parameters/properties/a/type: error: message [kind] (tool t)`.
fn line(file: &str, p: &CheckProblem) -> String {
    let severity = if p.severity == Severity::Error { "error" } else { "warning" };
    let tool = if p.tool.is_empty() { String::new() } else { format!(" (tool `{}`)", p.tool) };
    format!("{file}:{}: {severity}: {} [{}]{tool}", p.pointer, p.message, p.kind)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
