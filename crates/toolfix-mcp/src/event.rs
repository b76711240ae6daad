//! What the wrapper did, for stderr and the `--log-file`: tool names, repair kinds and
//! JSON pointers; argument values only when verbose.

use serde_json::{Value, json};
use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::Mutex;
use toolfix::{Refusal, Report};

/// One thing worth telling.
#[derive(Debug)]
pub(crate) enum Event {
    /// A call forwarded repaired.
    Repaired { tool: String, id: String, renamed_from: Option<String>, decoded: bool, report: Report },
    /// A call answered with a refusal, never forwarded.
    Refused { tool: String, id: String, refusal: Refusal },
    /// A repeated call answered by the storm guard, never forwarded.
    Storm { tool: String, id: String, message: String },
    /// Tool definitions the wrapper could not compile (their calls are forwarded as sent).
    Definitions(Vec<String>),
    /// Anything else.
    Warning(String),
}

/// Where events go: one stderr line each, and JSON lines in a file when asked.
#[derive(Debug, Default)]
pub struct Log {
    verbose: bool,
    file: Option<Mutex<std::fs::File>>,
}

impl Log {
    /// A log to stderr; `verbose` adds argument values and whole refusal messages.
    #[must_use]
    pub fn new(verbose: bool) -> Log {
        Log { verbose, file: None }
    }

    /// This log, also writing one JSON object per event to `file`.
    #[must_use]
    pub fn with_file(mut self, file: std::fs::File) -> Log {
        self.file = Some(Mutex::new(file));
        self
    }

    pub(crate) fn write(&self, event: &Event) {
        let line = self.text(event);
        let _ = writeln!(std::io::stderr().lock(), "toolfix mcp: {line}");
        if let Some(file) = &self.file
            && let Ok(mut f) = file.lock()
        {
            let _ = writeln!(f, "{}", self.json(event));
        }
    }

    fn text(&self, event: &Event) -> String {
        match event {
            Event::Repaired { tool, id, renamed_from, decoded, report } => {
                let mut kinds: Vec<String> = Vec::new();
                if *decoded {
                    kinds.push("arguments_decoded".to_owned());
                }
                if let Some(from) = renamed_from {
                    kinds.push(format!("tool_renamed from `{from}`"));
                }
                kinds.extend(report.text_fixes.iter().map(|f| f.kind.as_str().to_owned()));
                for r in &report.repairs {
                    let mut s = format!("{} at {}", r.kind.as_str(), pointer(&r.path));
                    if self.verbose {
                        let _ = write!(s, " ({} -> {})", shown(r.before.as_ref()), shown(r.after.as_ref()));
                    }
                    kinds.push(s);
                }
                format!("repaired call {id} to `{tool}`: {}", kinds.join(", "))
            }
            Event::Refused { tool, id, refusal } => {
                let paths: Vec<&str> = refusal.issues.iter().map(|i| pointer(&i.path)).collect();
                let mut s = format!("refused call {id} to `{tool}` (not forwarded): issues at {}", paths.join(", "));
                if self.verbose {
                    let _ = write!(s, "; message: {}", refusal.message.replace('\n', " "));
                }
                s
            }
            Event::Storm { tool, id, message } => {
                let mut s = format!("stopped call {id} to `{tool}`: repeated identical call (not forwarded)");
                if self.verbose {
                    let _ = write!(s, "; message: {message}");
                }
                s
            }
            Event::Definitions(errors) => format!("tool definitions left unchecked: {}", errors.join("; ")),
            Event::Warning(w) => w.clone(),
        }
    }

    fn json(&self, event: &Event) -> Value {
        match event {
            Event::Repaired { tool, id, renamed_from, decoded, report } => {
                let repairs: Vec<Value> = report
                    .repairs
                    .iter()
                    .map(|r| {
                        let mut v = json!({"kind": r.kind.as_str(), "path": r.path});
                        if self.verbose {
                            v["before"] = r.before.clone().unwrap_or(Value::Null);
                            v["after"] = r.after.clone().unwrap_or(Value::Null);
                        }
                        v
                    })
                    .collect();
                let fixes: Vec<&str> = report.text_fixes.iter().map(|f| f.kind.as_str()).collect();
                json!({"event": "repaired", "tool": tool, "id": raw(id), "renamed_from": renamed_from, "arguments_decoded": decoded,
                    "text_fixes": fixes, "repairs": repairs})
            }
            Event::Refused { tool, id, refusal } => {
                let paths: Vec<&str> = refusal.issues.iter().map(|i| i.path.as_str()).collect();
                let mut v = json!({"event": "refused", "tool": tool, "id": raw(id), "paths": paths});
                if self.verbose {
                    v["message"] = Value::String(refusal.message.clone());
                }
                v
            }
            Event::Storm { tool, id, message } => {
                let mut v = json!({"event": "storm", "tool": tool, "id": raw(id)});
                if self.verbose {
                    v["message"] = Value::String(message.clone());
                }
                v
            }
            Event::Definitions(errors) => json!({"event": "definitions", "errors": errors}),
            Event::Warning(w) => json!({"event": "warning", "message": w}),
        }
    }
}

fn pointer(path: &str) -> &str {
    if path.is_empty() { "(root)" } else { path }
}

fn shown(v: Option<&Value>) -> String {
    v.map_or_else(|| "absent".to_owned(), Value::to_string)
}

fn raw(id: &str) -> Value {
    serde_json::from_str(id).unwrap_or_else(|_| Value::String(id.to_owned()))
}
