//! Tool definitions: from `--tools FILE` or inline per batch line, compiled once each.

use anyhow::{Context, Result};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use toolfix::ToolSet;

/// Read a tool file: a JSON array of definitions, or an object with a `tools` array (an
/// OpenAI request body).
pub(crate) fn load(path: &Path) -> Result<(Value, ToolSet)> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let value: Value = serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let defs = definitions(&value).with_context(|| format!("{} holds no tool list", path.display()))?;
    let set = ToolSet::from_value(&defs).map_err(|e| anyhow::anyhow!("{}: {}", path.display(), e.report()))?;
    Ok((defs, set))
}

/// The tool list inside `value`: the array itself, or its `tools` member.
pub(crate) fn definitions(value: &Value) -> Option<Value> {
    match value {
        Value::Array(_) => Some(value.clone()),
        Value::Object(o) => o.get("tools").filter(|t| t.is_array()).cloned(),
        _ => None,
    }
}

/// Tool sets compiled from inline `tools` members, keyed by their JSON text, so a batch
/// that repeats a tool list compiles it once.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    sets: HashMap<String, Result<ToolSet, String>>,
}

impl Cache {
    /// The tool set for inline tools written as `raw` JSON text.
    pub(crate) fn get(&mut self, raw: &str) -> Result<&ToolSet, String> {
        if !self.sets.contains_key(raw) {
            let compiled = match serde_json::from_str::<Value>(raw) {
                Ok(v) => match definitions(&v) {
                    Some(defs) => ToolSet::from_value(&defs).map_err(|e| e.to_string()),
                    None => Err("`tools` must be an array of tool definitions".to_owned()),
                },
                Err(e) => Err(format!("`tools` is not JSON: {e}")),
            };
            self.sets.insert(raw.to_owned(), compiled);
        }
        match self.sets.get(raw) {
            Some(Ok(set)) => Ok(set),
            Some(Err(e)) => Err(e.clone()),
            None => Err("tool set missing from cache".to_owned()),
        }
    }
}
