//! Tool definitions: from `--tools FILE` or inline per batch line, compiled once each.

use anyhow::{Context, Result};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use toolfix::ToolSet;
use toolfix::extract::ToolLookup;

/// Read a tool file: a JSON array of definitions, or an object with a `tools` array (an
/// OpenAI request body).
pub(crate) fn load(path: &Path) -> Result<Tools> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let value: Value = serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let defs = definitions(&value).with_context(|| format!("{} holds no tool list", path.display()))?;
    Ok(Tools::compile(&defs))
}

/// The tool list inside `value`: the array itself, or its `tools` member.
pub(crate) fn definitions(value: &Value) -> Option<Value> {
    match value {
        Value::Array(_) => Some(value.clone()),
        Value::Object(o) => o.get("tools").filter(|t| t.is_array()).cloned(),
        _ => None,
    }
}

/// Tool definitions as compiled: a [`ToolSet`], or, when a schema does not compile, only
/// the names and schemas (enough to find and type calls, not to repair them).
#[derive(Debug)]
pub(crate) enum Tools {
    Set(ToolSet),
    Loose { schemas: HashMap<String, Value>, why: String },
}

impl Tools {
    /// Compile `defs`, falling back to the loose form.
    pub(crate) fn compile(defs: &Value) -> Tools {
        match ToolSet::from_value(defs) {
            Ok(set) => Tools::Set(set),
            Err(e) => {
                let schemas = defs
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|d| {
                        let inner = d.get("function").filter(|f| f.is_object()).unwrap_or(d);
                        let name = inner.get("name")?.as_str()?.to_owned();
                        let params = inner
                            .get("parameters")
                            .or_else(|| inner.get("inputSchema"))
                            .cloned()
                            .unwrap_or(Value::Null);
                        Some((name, params))
                    })
                    .collect();
                Tools::Loose { schemas, why: e.to_string() }
            }
        }
    }

    /// The compiled set, or why there is none.
    pub(crate) fn set(&self) -> Result<&ToolSet, String> {
        match self {
            Tools::Set(set) => Ok(set),
            Tools::Loose { why, .. } => Err(why.clone()),
        }
    }

    /// What the extractor may look up.
    pub(crate) fn lookup(&self) -> &dyn ToolLookup {
        match self {
            Tools::Set(set) => set,
            Tools::Loose { schemas, .. } => schemas,
        }
    }
}

/// Tool lists from inline `tools` members, compiled once each, keyed by their JSON text.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    sets: HashMap<String, Result<Tools, String>>,
}

impl Cache {
    /// The tools written as `raw` JSON text.
    pub(crate) fn get(&mut self, raw: &str) -> Result<&Tools, String> {
        if !self.sets.contains_key(raw) {
            let compiled = match serde_json::from_str::<Value>(raw) {
                Ok(v) => match definitions(&v) {
                    Some(defs) => Ok(Tools::compile(&defs)),
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
