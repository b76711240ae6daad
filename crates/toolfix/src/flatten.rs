//! Dot-notation schemas for models that handle flat objects better: a schema wider than
//! [`MAX_LEAVES`] leaves or deeper than [`MAX_DEPTH`] levels is shown flattened
//! (`"config.retry.max": {...}`), and dotted keys are re-nested on the way back.
//!
//! ```
//! use serde_json::json;
//! use toolfix::{flatten, Tool};
//!
//! let schema = json!({"type": "object", "properties": {"config": {"type": "object",
//!     "properties": {"retry": {"type": "object", "properties": {"max": {"type": "integer"}}}}}}});
//! assert!(flatten::needs_flattening(&schema));
//! let flat = flatten::flatten(&schema);
//! assert!(flat["properties"].get("config.retry.max").is_some());
//!
//! let tool = Tool::from_parts("configure", "", schema).unwrap();
//! let mut args = json!({"config.retry.max": 3});
//! let repairs = flatten::unflatten(&tool, &mut args);
//! assert_eq!(args, json!({"config": {"retry": {"max": 3}}}));
//! assert_eq!(repairs.len(), 1);
//! ```

use crate::report::Repair;
use crate::schema::Tool;
use crate::schema::view::{self, Types};
use serde_json::{Map, Value, json};

/// Schemas with more leaves than this are flattened.
pub const MAX_LEAVES: usize = 10;
/// Schemas nesting objects deeper than this are flattened.
pub const MAX_DEPTH: usize = 2;
/// Nesting followed at most (deeper objects stay whole leaves).
const CAP: usize = 8;
/// Leaves listed at most (a self-referencing schema would otherwise grow without end).
const MAX_LISTED: usize = 1024;

struct Leaf<'a> {
    key: String,
    schema: &'a Value,
    required: bool,
    depth: usize,
}

/// Every leaf of the object nesting: dotted key, schema, required all the way down.
fn leaves(root: &Value) -> Vec<Leaf<'_>> {
    let mut out = Vec::new();
    let mut stack: Vec<(String, &Value, bool, usize)> = vec![(String::new(), root, true, 0)];
    while let Some((prefix, node, required, depth)) = stack.pop() {
        if out.len() >= MAX_LISTED {
            break;
        }
        let ov = view::object_view(root, node);
        for (name, prop) in ov.properties().rev() {
            let key = if prefix.is_empty() { (*name).to_owned() } else { format!("{prefix}.{name}") };
            let req = required && ov.is_required(name);
            let resolved = view::resolve(root, prop);
            let nested = view::types(root, resolved) == Types::OBJECT
                && view::object_view(root, resolved).has_properties()
                && !name.contains('.');
            if nested && depth < CAP {
                stack.push((key, resolved, req, depth + 1));
            } else {
                out.push(Leaf { key, schema: prop, required: req, depth: depth + 1 });
            }
        }
    }
    out
}

/// True when the schema has more than [`MAX_LEAVES`] leaves or nests deeper than
/// [`MAX_DEPTH`] levels.
#[must_use]
pub fn needs_flattening(schema: &Value) -> bool {
    let all = leaves(schema);
    all.len() > MAX_LEAVES || all.iter().any(|l| l.depth > MAX_DEPTH)
}

/// The dot-notation schema to show a model: one property per leaf, hints stripped,
/// `$defs` kept for references inside leaves.
#[must_use]
pub fn flatten(schema: &Value) -> Value {
    let mut props = Map::new();
    let mut required = Vec::new();
    for leaf in leaves(schema) {
        if leaf.required {
            required.push(Value::String(leaf.key.clone()));
        }
        props.insert(leaf.key, crate::schema::strip_hints(leaf.schema));
    }
    let mut out = json!({"type": "object", "properties": props, "required": required, "additionalProperties": false});
    for key in ["$defs", "definitions", "description"] {
        if let (Some(v), Some(map)) = (schema.get(key), out.as_object_mut()) {
            map.insert(key.to_owned(), crate::schema::strip_hints(v));
        }
    }
    out
}

/// Re-nest the dotted keys of `arguments` along `tool`'s schema; one
/// `dot_keys_nested` repair per key moved. Keys that collide with a value already given
/// stay as they are (validation then refuses them).
pub fn unflatten(tool: &Tool, arguments: &mut Value) -> Vec<Repair> {
    crate::repair::nest_root_dot_keys(tool, arguments)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_schema_flattens_and_round_trips() {
        let props: Map<String, Value> = (0..11).map(|i| (format!("f{i}"), json!({"type": "integer"}))).collect();
        let schema = json!({"type": "object", "properties": props});
        assert!(needs_flattening(&schema));
        let shallow = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "object", "properties": {"c": {"type": "string"}}}}});
        assert!(!needs_flattening(&shallow));
        let flat = flatten(&shallow);
        assert_eq!(flat["properties"].as_object().unwrap().keys().collect::<Vec<_>>(), ["a", "b.c"]);
    }

    #[test]
    fn flattened_calls_repair_through_the_pipeline() {
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}, "config": {"type": "object",
            "properties": {"retry": {"type": "object", "properties": {"max": {"type": "integer"}}, "required": ["max"]}}, "required": ["retry"]}},
            "required": ["name", "config"], "additionalProperties": false});
        let flat = flatten(&schema);
        assert_eq!(flat["required"], json!(["name", "config.retry.max"]));
        let tools = crate::ToolSet::new(&[json!({"name": "c", "parameters": schema})]).unwrap();
        let out = tools.repair_call("c", r#"{"name": "api", "config.retry.max": "3"}"#);
        assert_eq!(out.arguments(), Some(&json!({"name": "api", "config": {"retry": {"max": 3}}})));
    }
}
