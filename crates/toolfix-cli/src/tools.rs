//! Tool definitions: from `--tools FILE` or inline per batch line, compiled once each.
//!
//! A definition whose schema does not compile does not take the others down: it is
//! reported once on stderr, and calls to it are refused as the definition's fault.

use anyhow::{Context, Result};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use toolfix::ToolSet;

/// Read a tool file: a JSON array of definitions, or an object with a `tools` array (an
/// OpenAI request body).
pub(crate) fn load(path: &Path) -> Result<ToolSet> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let value: Value = serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let defs = definitions(&value).with_context(|| format!("{} holds no tool list", path.display()))?;
    Ok(compile(&defs, &path.display().to_string()))
}

/// The tool list inside `value`: the array itself, or its `tools` member.
pub(crate) fn definitions(value: &Value) -> Option<Vec<Value>> {
    match value {
        Value::Array(list) => Some(list.clone()),
        Value::Object(o) => o.get("tools").and_then(Value::as_array).cloned(),
        _ => None,
    }
}

/// Compile `defs`, reporting the definitions that do not compile on stderr.
fn compile(defs: &[Value], source: &str) -> ToolSet {
    let (set, errors) = ToolSet::new_partial(defs);
    for e in errors {
        eprintln!("toolfix: {source}: {e}");
    }
    set
}

/// Tool lists from inline `tools` members, compiled once each, keyed by their JSON text.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    sets: HashMap<String, Result<ToolSet, String>>,
}

impl Cache {
    const MAX_SETS: usize = 64;

    /// The tools written as `raw` JSON text on batch line `line`.
    pub(crate) fn get(&mut self, raw: &str, line: usize) -> Result<&ToolSet, String> {
        if !self.sets.contains_key(raw) {
            // Bounded on endless input with ever new tool lists.
            if self.sets.len() >= Self::MAX_SETS {
                self.sets.clear();
            }
            let compiled = match serde_json::from_str::<Value>(raw) {
                Ok(v) => match definitions(&v) {
                    Some(defs) => Ok(compile(&defs, &format!("line {line}: `tools`"))),
                    None => Err("`tools` must be an array of tool definitions".to_owned()),
                },
                Err(e) => Err(format!("`tools` is not JSON: {e}")),
            };
            self.sets.insert(raw.to_owned(), compiled);
        }
        match self.sets.get(raw) {
            Some(Ok(tools)) => Ok(tools),
            Some(Err(e)) => Err(e.clone()),
            None => Err("tool set missing from cache".to_owned()),
        }
    }
}
