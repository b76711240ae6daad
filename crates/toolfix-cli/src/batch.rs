//! The JSON Lines driver shared by every `--batch` subcommand.
//!
//! One output line per non-blank input line, in order, carrying the input's `id`. A line
//! that is not a JSON object gets an error line; nothing a line holds stops the run.

use crate::out::Obj;
use anyhow::Result;
use serde_json::{Map, Value};
use std::io::{BufRead, Write};

/// Run `handle` over each line of `input`; it gets the line's object and returns the
/// answer's members after `id` (as an [`Obj`] already holding the id).
pub(crate) fn run<F>(input: &str, mut handle: F) -> Result<()>
where
    F: FnMut(&Map<String, Value>, Obj) -> Obj,
{
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    for line in input.as_bytes().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let answer = match serde_json::from_str::<Value>(&line) {
            Ok(Value::Object(obj)) => {
                let id = obj.get("id").cloned().unwrap_or(Value::Null);
                handle(&obj, Obj::new().value("id", &id)).finish()
            }
            Ok(_) => Obj::new().value("id", &Value::Null).str("error", "line is not a JSON object").finish(),
            Err(e) => Obj::new().value("id", &Value::Null).str("error", &format!("line is not JSON: {e}")).finish(),
        };
        writeln!(w, "{answer}")?;
    }
    w.flush()?;
    Ok(())
}

/// A string member of a batch line, or an error message naming it.
pub(crate) fn str_field<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<&'a str, String> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(format!("`{key}` must be a string")),
        None => Err(format!("missing `{key}`")),
    }
}
