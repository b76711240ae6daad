//! Lints for tool definitions (`toolfix check`): every problem, not just the first.
//!
//! ```
//! use serde_json::json;
//! let problems = toolfix::check::check(&[json!({"name": "t", "parameters": {
//!     "type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]}})]);
//! assert_eq!(problems.len(), 1);
//! assert_eq!(problems[0].kind, "required_missing_property");
//! ```

use crate::schema::{Policy, ToolHints, compile, view};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;

/// One problem in a tool definition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckProblem {
    /// The tool's name (or `#<index>` when it has none).
    pub tool: String,
    /// JSON pointer into the tool's `parameters` schema (`""` for the definition itself).
    pub path: String,
    /// A stable `snake_case` code.
    pub kind: &'static str,
    /// What is wrong.
    pub message: String,
}

const SEMANTICS: [&str; 6] = ["path", "url", "uri", "absolute_path", "relative_path", "file_path"];

/// Lint tool definitions in `OpenAI`, bare or `MCP` form.
#[must_use]
pub fn check(definitions: &[Value]) -> Vec<CheckProblem> {
    let mut out = Vec::new();
    let mut names: HashMap<String, Vec<String>> = HashMap::new();
    for (i, def) in definitions.iter().enumerate() {
        let inner = def.get("function").filter(|f| f.is_object()).unwrap_or(def);
        let Some(name) = inner.get("name").and_then(Value::as_str) else {
            out.push(problem(&format!("#{i}"), "", "missing_name", "the definition has no name".to_owned()));
            continue;
        };
        names.entry(view::normalise(name)).or_default().push(name.to_owned());
        let Some(schema) =
            inner.get("parameters").or_else(|| inner.get("inputSchema")).or_else(|| inner.get("input_schema"))
        else {
            continue;
        };
        check_schema(name, schema, inner, &mut out);
    }
    for group in names.values().filter(|g| g.len() > 1) {
        let first = group.first().cloned().unwrap_or_default();
        out.push(problem(
            &first,
            "",
            "tool_names_collide",
            format!("tool names {} normalise alike, so a near-miss name is ambiguous", group.join(", ")),
        ));
    }
    out
}

fn problem(tool: &str, path: &str, kind: &'static str, message: String) -> CheckProblem {
    CheckProblem { tool: tool.to_owned(), path: path.to_owned(), kind, message }
}

fn check_schema(tool: &str, schema: &Value, definition: &Value, out: &mut Vec<CheckProblem>) {
    let validator = match compile(schema) {
        Ok(v) => Some(v),
        Err(e) => {
            out.push(problem(tool, "", "schema_does_not_compile", e));
            None
        }
    };
    if !view::types(schema, schema).has(view::Types::OBJECT) {
        out.push(problem(
            tool,
            "",
            "parameters_not_object",
            "the parameters schema does not describe an object".to_owned(),
        ));
    }
    // Tool-level hints.
    let hints = ToolHints::read(schema, definition);
    let root_view = view::object_view(schema, schema);
    for name in hints.named_properties() {
        if root_view.property(name).is_none() {
            out.push(problem(
                tool,
                "",
                "hint_names_missing_property",
                format!("a hint names `{name}`, which is not a property"),
            ));
        }
    }
    for ns in ["x-toolfix", "dirge-hints"] {
        if let Some(p) = schema.get(ns).and_then(|h| h.get("policy"))
            && p.as_str().and_then(Policy::from_name).is_none()
        {
            out.push(problem(tool, "", "bad_hint", format!("policy {p} is not strict, default or lenient")));
        }
    }
    // Root examples.
    if let (Some(v), Some(examples)) = (&validator, schema.get("examples").and_then(Value::as_array)) {
        for (i, ex) in examples.iter().enumerate() {
            if !v.is_valid(ex) {
                out.push(problem(
                    tool,
                    &format!("/examples/{i}"),
                    "example_invalid",
                    "this example does not validate against the schema".to_owned(),
                ));
            }
        }
    }
    // Every node.
    let mut stack: Vec<(String, &Value)> = vec![(String::new(), schema)];
    while let Some((path, node)) = stack.pop() {
        match node {
            Value::Object(map) => {
                check_node(tool, schema, &path, map, out);
                for (k, child) in map {
                    if matches!(k.as_str(), "x-toolfix" | "dirge-hints" | "examples" | "default" | "enum" | "const") {
                        continue;
                    }
                    stack.push((crate::pointer::join(&path, k), child));
                }
            }
            Value::Array(list) => {
                for (i, child) in list.iter().enumerate() {
                    stack.push((crate::pointer::join(&path, &i.to_string()), child));
                }
            }
            _ => {}
        }
    }
}

fn check_node(tool: &str, root: &Value, path: &str, map: &serde_json::Map<String, Value>, out: &mut Vec<CheckProblem>) {
    if let Some(r) = map.get("$ref").and_then(Value::as_str)
        && !r.starts_with('#')
    {
        out.push(problem(
            tool,
            path,
            "unsupported_construct",
            format!("$ref {r} is not local; only #... references resolve"),
        ));
    }
    for key in ["$dynamicRef", "$recursiveRef"] {
        if map.contains_key(key) {
            out.push(problem(tool, path, "unsupported_construct", format!("{key} is not supported by repair")));
        }
    }
    let props = map.get("properties").and_then(Value::as_object);
    if let (Some(props), Some(required)) = (props, map.get("required").and_then(Value::as_array)) {
        for r in required.iter().filter_map(Value::as_str) {
            if !props.contains_key(r) {
                out.push(problem(
                    tool,
                    path,
                    "required_missing_property",
                    format!("`required` names `{r}`, which is not a property"),
                ));
            }
        }
    }
    if let Some(props) = props {
        let mut seen: HashMap<String, &str> = HashMap::new();
        for (name, prop) in props {
            if let Some(other) = seen.insert(view::normalise(name), name) {
                out.push(problem(
                    tool,
                    path,
                    "properties_normalise_alike",
                    format!("properties `{other}` and `{name}` normalise alike, so a near-miss name is ambiguous"),
                ));
            }
            for alias in view::aliases(root, prop) {
                if props.contains_key(alias) && alias != name {
                    out.push(problem(
                        tool,
                        &crate::pointer::join(&format!("{path}/properties"), name),
                        "hint_names_missing_property",
                        format!("alias `{alias}` is itself a property"),
                    ));
                }
            }
            if let Some(s) = view::prop_hint(root, prop, "semantic").and_then(Value::as_str)
                && !SEMANTICS.contains(&s)
            {
                out.push(problem(
                    tool,
                    &crate::pointer::join(&format!("{path}/properties"), name),
                    "bad_hint",
                    format!("semantic `{s}` is not one of {}", SEMANTICS.join(", ")),
                ));
            }
            if let (Some(examples), Ok(v)) = (prop.get("examples").and_then(Value::as_array), compile_sub(root, prop)) {
                for (i, ex) in examples.iter().enumerate() {
                    if !v.is_valid(ex) {
                        out.push(problem(
                            tool,
                            &format!("{}/examples/{i}", crate::pointer::join(&format!("{path}/properties"), name)),
                            "example_invalid",
                            "this example does not validate against its property".to_owned(),
                        ));
                    }
                }
            }
        }
    }
}

/// Compile a subschema with the root's `$defs` alongside, so local references resolve.
fn compile_sub(root: &Value, node: &Value) -> Result<jsonschema::Validator, String> {
    let mut sub = node.clone();
    if let Some(map) = sub.as_object_mut() {
        for key in ["$defs", "definitions"] {
            if let Some(d) = root.get(key) {
                map.entry(key).or_insert_with(|| d.clone());
            }
        }
    }
    compile(&sub)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_problem_is_listed() {
        let defs = [
            json!({"name": "a", "parameters": {"type": "object", "properties": {
                "start_date": {"type": "string"}, "startDate": {"type": "string"},
                "n": {"type": "integer", "examples": [1, "x"]}
            }, "required": ["missing"], "x-toolfix": {"required_any": [["nope", "n"]], "policy": "loose"},
            "examples": [{"n": "bad"}]}}),
            json!({"name": "b", "parameters": {"type": 7}}),
            json!({"name": "c", "parameters": {"type": "object", "properties": {"r": {"$ref": "https://example.com/s.json"}}}}),
            json!({"name": "A", "parameters": {"type": "object"}}),
            json!({"description": "no name"}),
        ];
        let problems = check(&defs);
        let kinds: Vec<&str> = problems.iter().map(|p| p.kind).collect();
        for k in [
            "required_missing_property",
            "properties_normalise_alike",
            "example_invalid",
            "unsupported_construct",
            "hint_names_missing_property",
            "bad_hint",
            "schema_does_not_compile",
            "tool_names_collide",
            "missing_name",
        ] {
            assert!(kinds.contains(&k), "{k} not in {kinds:?}");
        }
        assert_eq!(kinds.iter().filter(|k| **k == "example_invalid").count(), 2, "{problems:?}");
    }

    #[test]
    fn clean_definitions_pass() {
        assert!(check(&[json!({"name": "t", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}})]).is_empty());
    }
}
