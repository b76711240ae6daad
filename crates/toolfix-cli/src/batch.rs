//! The JSON Lines driver shared by every `--batch` subcommand.
//!
//! One output line per non-blank input line, in order, carrying the input's `id`. A line
//! that is not a JSON object gets an error line; nothing a line holds stops the run.

use crate::out::Obj;
use anyhow::Result;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::io::Write;

/// One input line: its members, each kept as the raw JSON text it was written as.
#[derive(Debug)]
pub(crate) struct Line<'a> {
    members: HashMap<String, &'a RawValue>,
}

impl<'a> Line<'a> {
    /// The raw JSON text of member `key`.
    pub(crate) fn raw(&self, key: &str) -> Option<&'a str> {
        self.members.get(key).map(|r| r.get())
    }

    /// Member `key` as a value.
    pub(crate) fn value(&self, key: &str) -> Option<Value> {
        self.raw(key).and_then(|t| serde_json::from_str(t).ok())
    }

    /// Member `key` as a string, or an error naming it.
    pub(crate) fn str(&self, key: &str) -> Result<String, String> {
        match self.value(key) {
            Some(Value::String(s)) => Ok(s),
            Some(_) => Err(format!("`{key}` must be a string")),
            None => Err(format!("missing `{key}`")),
        }
    }
}

/// Run `handle` over each line of `input`; it gets the line and an answer object that
/// already holds the line's `id`, and returns the finished answer.
pub(crate) fn run<F>(input: &str, mut handle: F) -> Result<()>
where
    F: FnMut(&Line<'_>, Obj) -> Obj,
{
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    for line in input.split('\n') {
        if line.trim().is_empty() {
            continue;
        }
        let answer = match serde_json::from_str::<HashMap<String, &RawValue>>(line) {
            Ok(members) => {
                let line = Line { members };
                let id = line.raw("id").unwrap_or("null");
                handle(&line, Obj::new().raw("id", id)).finish()
            }
            Err(e) => {
                let id = serde_json::from_str::<Value>(line).ok().and_then(|v| v.get("id").cloned());
                let msg = if id.is_some() || line.trim_start().starts_with('{') {
                    format!("line is not a valid request: {e}")
                } else {
                    format!("line is not a JSON object: {e}")
                };
                Obj::new().value("id", &id.unwrap_or(Value::Null)).str("error", &msg).finish()
            }
        };
        writeln!(w, "{answer}")?;
    }
    w.flush()?;
    Ok(())
}
