//! Lints for tool definitions (`toolfix check`): every problem, not just the first, each
//! at its JSON pointer into the checked document, with a severity and a plain message
//! (with a "did you mean …" for keyword, type and property-name typos).
//!
//! ```
//! use serde_json::json;
//! use toolfix::check::{Severity, check};
//!
//! let problems = check(&[json!({"type": "function", "function": {"name": "t", "parameters": {
//!     "type": "object", "properties": {"a": {"type": "strng"}}, "requried": ["a"]}}})]);
//! assert_eq!(problems.len(), 2);
//! assert_eq!(problems[0].pointer, "/0/function/parameters/properties/a/type");
//! assert_eq!(problems[0].severity, Severity::Error);
//! assert_eq!(problems[0].message, "`strng` is not a JSON Schema type; did you mean `string`?");
//! assert_eq!(problems[1].pointer, "/0/function/parameters/requried");
//! assert_eq!(problems[1].severity, Severity::Warning);
//! ```

use crate::pointer;
use crate::schema::suggest::closest;
use crate::schema::{Policy, ToolHints, compile, view};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// How bad a problem is: errors break calls to the tool (`toolfix check` exits 1),
/// warnings are worth a look (exit 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Severity {
    /// The tool cannot be used as defined, or a part of its definition is ignored.
    Error,
    /// Legal, but likely a mistake (a near-miss keyword, names that collide, an example
    /// that does not validate).
    Warning,
}

impl Severity {
    /// The stable name: `error` or `warning`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One problem in a tool definition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CheckProblem {
    /// The tool's name (or `#<index>` when it has none).
    pub tool: String,
    /// JSON pointer into the checked document: `/0/function/parameters/properties/a/type`
    /// (`/tools/0/...` when the document is an object with a `tools` list).
    pub pointer: String,
    /// Error or warning.
    pub severity: Severity,
    /// A stable `snake_case` code.
    pub kind: &'static str,
    /// What is wrong, in plain words (with a "did you mean …" when a name is close).
    pub message: String,
}

impl CheckProblem {
    /// True for an error (as opposed to a warning).
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

const SEMANTICS: [&str; 6] = ["path", "url", "uri", "absolute_path", "relative_path", "file_path"];

const TYPES: [&str; 7] = ["string", "integer", "number", "boolean", "array", "object", "null"];

/// Keywords whose value is one schema.
const SCHEMA_KEYWORDS: [&str; 12] = [
    "additionalProperties",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "contentSchema",
    "items",
];
/// Keywords whose value is a list of schemas.
const LIST_KEYWORDS: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value maps names to schemas.
const MAP_KEYWORDS: [&str; 6] =
    ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"];
/// Every other keyword of the JSON Schema drafts (and the usual annotations): a key close
/// to one of these but not equal is likely a typo.
const OTHER_KEYWORDS: [&str; 35] = [
    "$schema",
    "$id",
    "$ref",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "$vocabulary",
    "$comment",
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "format",
    "title",
    "description",
    "default",
    "examples",
];
const MORE_KEYWORDS: [&str; 7] =
    ["deprecated", "readOnly", "writeOnly", "contentEncoding", "contentMediaType", "nullable", "id"];

fn is_keyword(key: &str) -> bool {
    keywords().any(|k| k == key)
}

fn keywords() -> impl Iterator<Item = &'static str> {
    SCHEMA_KEYWORDS
        .iter()
        .chain(&LIST_KEYWORDS)
        .chain(&MAP_KEYWORDS)
        .chain(&OTHER_KEYWORDS)
        .chain(&MORE_KEYWORDS)
        .copied()
}

/// Lint a tool file: a JSON array of definitions, or an object with a `tools` array (an
/// OpenAI request body). Pointers are into `document`.
///
/// ```
/// use serde_json::json;
/// let problems = toolfix::check::check_document(&json!({"tools": [{"parameters": {}}]}));
/// assert_eq!(problems[0].pointer, "/tools/0");
/// assert_eq!(problems[0].kind, "missing_name");
/// let problems = toolfix::check::check_document(&json!({"model": "m"}));
/// assert_eq!(problems[0].kind, "not_a_tool_list");
/// ```
#[must_use]
pub fn check_document(document: &Value) -> Vec<CheckProblem> {
    match document {
        Value::Array(list) => check_at("", list),
        Value::Object(o) => match o.get("tools") {
            Some(Value::Array(list)) => check_at("/tools", list),
            _ => vec![problem(
                "",
                String::new(),
                Severity::Error,
                "not_a_tool_list",
                "the document is an object without a `tools` array; give a JSON array of tool definitions".to_owned(),
            )],
        },
        _ => vec![problem(
            "",
            String::new(),
            Severity::Error,
            "not_a_tool_list",
            "the document is not a JSON array of tool definitions".to_owned(),
        )],
    }
}

/// Lint tool definitions in `OpenAI`, bare or `MCP` form; pointers start at the index in
/// `definitions` (`/0/function/parameters/...`). Errors first, then warnings, each in
/// document order.
#[must_use]
pub fn check(definitions: &[Value]) -> Vec<CheckProblem> {
    check_at("", definitions)
}

fn check_at(prefix: &str, definitions: &[Value]) -> Vec<CheckProblem> {
    let mut out = Vec::new();
    let mut names: Vec<(String, String)> = Vec::new();
    let searches = std::cell::Cell::new(MAX_SEARCHES);
    for (i, def) in definitions.iter().enumerate() {
        let at = format!("{prefix}/{i}");
        if !def.is_object() {
            out.push(problem(
                &format!("#{i}"),
                at,
                Severity::Error,
                "definition_not_object",
                "a tool definition must be a JSON object".to_owned(),
            ));
            continue;
        }
        let (inner, at) = match def.get("function").filter(|f| f.is_object()) {
            Some(f) => (f, format!("{at}/function")),
            None => (def, at),
        };
        let Some(name) = inner.get("name").and_then(Value::as_str) else {
            out.push(problem(
                &format!("#{i}"),
                at,
                Severity::Error,
                "missing_name",
                "the definition has no name".to_owned(),
            ));
            continue;
        };
        if let Some((_, first)) = names.iter().find(|(n, _)| n == name) {
            out.push(problem(
                name,
                pointer::join(&at, "name"),
                Severity::Error,
                "duplicate_tool_name",
                format!("a tool named `{name}` is already defined at {first}; the second is left out"),
            ));
            continue;
        }
        names.push((name.to_owned(), pointer::join(&at, "name")));
        let schema_key = ["parameters", "inputSchema", "input_schema"].into_iter().find(|k| inner.get(*k).is_some());
        let Some(key) = schema_key else {
            continue;
        };
        let Some(schema) = inner.get(key).filter(|s| !s.is_null()) else {
            continue;
        };
        check_schema(name, &pointer::join(&at, key), schema, inner, &mut out, &searches);
    }
    let mut groups: HashMap<String, Vec<&(String, String)>> = HashMap::new();
    for entry in &names {
        groups.entry(view::normalise(&entry.0)).or_default().push(entry);
    }
    let mut collisions: Vec<&Vec<&(String, String)>> = groups.values().filter(|g| g.len() > 1).collect();
    collisions.sort_by(|a, b| a.first().map(|e| &e.1).cmp(&b.first().map(|e| &e.1)));
    for group in collisions {
        let Some(((first, _), rest)) = group.split_first().map(|(f, r)| (*f, r)) else {
            continue;
        };
        let Some(last) = rest.last() else {
            continue;
        };
        let all: Vec<String> = group.iter().map(|(n, _)| format!("`{n}`")).collect();
        out.push(problem(
            first,
            last.1.clone(),
            Severity::Warning,
            "tool_names_collide",
            format!(
                "tool names {} differ only in case or separators, so a near-miss name is ambiguous",
                all.join(", ")
            ),
        ));
    }
    out.sort_by_key(|p| p.severity);
    out
}

fn problem(tool: &str, pointer: String, severity: Severity, kind: &'static str, message: String) -> CheckProblem {
    CheckProblem { tool: tool.to_owned(), pointer, severity, kind, message }
}

/// Appends ` did you mean …?` to `message` when `suggestions` has any.
fn did_you_mean(message: String, suggestions: &[&str]) -> String {
    match suggestions {
        [] => message,
        [one] => format!("{message}; did you mean `{one}`?"),
        many => format!("{message}; did you mean one of `{}`?", many.join("`, `")),
    }
}

/// The problems of one tool's schema, at `at` (the pointer of the schema in the document).
struct Lint<'a> {
    tool: &'a str,
    at: &'a str,
    root: &'a Value,
    out: &'a mut Vec<CheckProblem>,
    /// Name searches left for the document (each is bounded; their number is capped so
    /// a hostile file stays linear).
    searches: &'a std::cell::Cell<usize>,
}

/// The most "did you mean" searches over property names in one document.
const MAX_SEARCHES: usize = 256;

impl Lint<'_> {
    /// The property names close to `name`, while the document's search budget lasts.
    fn near<'c>(&self, name: &str, names: &[&'c str]) -> Vec<&'c str> {
        let left = self.searches.get();
        if left == 0 {
            return Vec::new();
        }
        self.searches.set(left - 1);
        closest(name, names.iter().copied())
    }

    fn push(&mut self, path: &str, severity: Severity, kind: &'static str, message: String) {
        self.out.push(problem(self.tool, format!("{}{path}", self.at), severity, kind, message));
    }
}

fn check_schema(
    tool: &str,
    at: &str,
    schema: &Value,
    definition: &Value,
    out: &mut Vec<CheckProblem>,
    searches: &std::cell::Cell<usize>,
) {
    let mut lint = Lint { tool, at, root: schema, out, searches };
    if !schema.is_object() && !schema.is_boolean() {
        lint.push("", Severity::Error, "schema_not_object", "the parameters schema must be a JSON object".to_owned());
        return;
    }
    let first = lint.out.len();
    walk(&mut lint);
    let pointed: Vec<String> =
        lint.out.iter().skip(first).filter(|p| p.is_error()).map(|p| p.pointer.clone()).collect();
    let validator = compile(schema).ok();
    if validator.is_none() {
        compile_problems(&mut lint, &pointed);
    }
    if !view::types(schema, schema).has(view::Types::OBJECT) {
        lint.push(
            "",
            Severity::Error,
            "parameters_not_object",
            "the parameters schema does not describe an object: tool arguments are always one".to_owned(),
        );
    }
    tool_hints(&mut lint, schema, definition);
    if let (Some(v), Some(examples)) = (&validator, schema.get("examples").and_then(Value::as_array)) {
        for (i, ex) in examples.iter().enumerate() {
            if !v.is_valid(ex) {
                lint.push(
                    &format!("/examples/{i}"),
                    Severity::Warning,
                    "example_invalid",
                    "this example does not validate against the schema".to_owned(),
                );
            }
        }
    }
}

/// Why the schema does not compile, at the places the meta-schema names (places already
/// reported with a clearer message are skipped).
fn compile_problems(lint: &mut Lint<'_>, pointed: &[String]) {
    let schema = lint.root;
    let covered = |path: &str| {
        let at = format!("{}{path}", lint.at);
        pointed.iter().any(|p| pointer::is_within(&at, p) || pointer::is_within(p, &at))
    };
    let mut found: Vec<(String, String)> = Vec::new();
    if schema.get("$schema").is_none() {
        let meta = jsonschema::draft202012::meta::validator();
        for e in meta.iter_errors(schema) {
            let path = e.instance_path().as_str().to_owned();
            if !covered(&path) && !found.iter().any(|(p, _)| *p == path) {
                found.push((path, e.to_string()));
            }
        }
    }
    if found.is_empty()
        && pointed.is_empty()
        && let Err(e) = compile(schema)
    {
        found.push((String::new(), e));
    }
    for (path, why) in found {
        lint.push(&path, Severity::Error, "schema_does_not_compile", format!("the schema does not compile: {why}"));
    }
}

fn tool_hints(lint: &mut Lint<'_>, schema: &Value, definition: &Value) {
    let hints = ToolHints::read(schema, definition);
    let root_view = view::object_view(schema, schema);
    let names: Vec<&str> = root_view.properties().map(|(k, _)| k).collect();
    // Where the hints are written (they may also come from the definition around it).
    let holder =
        ["x-toolfix", "dirge-hints"].into_iter().find(|ns| schema.get(*ns).is_some()).map(|ns| format!("/{ns}"));
    for name in hints.named_properties() {
        if root_view.property(name).is_none() {
            lint.push(
                holder.as_deref().unwrap_or_default(),
                Severity::Error,
                "hint_names_missing_property",
                did_you_mean(format!("a hint names `{name}`, which is not a property"), &lint.near(name, &names)),
            );
        }
    }
    for ns in ["x-toolfix", "dirge-hints"] {
        if let Some(p) = schema.get(ns).and_then(|h| h.get("policy"))
            && p.as_str().and_then(Policy::from_name).is_none()
        {
            let given = p.as_str().unwrap_or_default();
            lint.push(
                &format!("/{ns}/policy"),
                Severity::Error,
                "bad_hint",
                did_you_mean(
                    format!("policy {p} is not `strict`, `default` or `lenient`"),
                    &closest(given, ["strict", "default", "lenient"]),
                ),
            );
        }
    }
}

/// Visit every schema node (explicit stack: the schema's depth is not ours to trust).
fn walk(lint: &mut Lint<'_>) {
    let root = lint.root;
    let mut stack: Vec<(String, &Value)> = vec![(String::new(), root)];
    while let Some((path, node)) = stack.pop() {
        let Value::Object(map) = node else {
            continue;
        };
        check_node(lint, &path, map);
        let mut children: Vec<(String, &Value)> = Vec::new();
        for (key, value) in map {
            let here = pointer::join(&path, key);
            if SCHEMA_KEYWORDS.contains(&key.as_str()) {
                match value {
                    Value::Array(list) if key == "items" => {
                        children
                            .extend(list.iter().enumerate().map(|(i, s)| (pointer::join(&here, &i.to_string()), s)));
                    }
                    _ => children.push((here, value)),
                }
            } else if LIST_KEYWORDS.contains(&key.as_str()) {
                if let Value::Array(list) = value {
                    children.extend(list.iter().enumerate().map(|(i, s)| (pointer::join(&here, &i.to_string()), s)));
                }
            } else if MAP_KEYWORDS.contains(&key.as_str())
                && let Value::Object(m) = value
            {
                children.extend(m.iter().map(|(name, s)| (pointer::join(&here, name), s)));
            }
        }
        // Pushed in reverse so that nodes are visited in document order.
        stack.extend(children.into_iter().rev());
    }
}

fn check_node(lint: &mut Lint<'_>, path: &str, map: &Map<String, Value>) {
    let root = lint.root;
    for key in map.keys() {
        if is_keyword(key) || key.starts_with("x-") || key == "dirge-hints" {
            continue;
        }
        let near = closest(key, keywords());
        if !near.is_empty() {
            lint.push(
                &pointer::join(path, key),
                Severity::Warning,
                "unknown_keyword",
                did_you_mean(format!("`{key}` is not a JSON Schema keyword, so validation ignores it"), &near),
            );
        }
    }
    match map.get("type") {
        Some(Value::String(t)) => check_type(lint, &pointer::join(path, "type"), t),
        Some(Value::Array(list)) => {
            for (i, t) in list.iter().enumerate() {
                if let Some(t) = t.as_str() {
                    check_type(lint, &format!("{}/{i}", pointer::join(path, "type")), t);
                }
            }
        }
        _ => {}
    }
    if let Some(r) = map.get("$ref").and_then(Value::as_str) {
        if !r.starts_with('#') {
            lint.push(
                &pointer::join(path, "$ref"),
                Severity::Warning,
                "unsupported_construct",
                format!("$ref {r} is not local; only #... references resolve"),
            );
        } else if root.pointer(r.trim_start_matches('#')).is_none() {
            lint.push(
                &pointer::join(path, "$ref"),
                Severity::Error,
                "unresolved_ref",
                format!("$ref {r} points at nothing in this schema"),
            );
        }
    }
    for key in ["$dynamicRef", "$recursiveRef"] {
        if map.contains_key(key) {
            lint.push(
                &pointer::join(path, key),
                Severity::Warning,
                "unsupported_construct",
                format!("{key} is not supported by repair"),
            );
        }
    }
    let props = map.get("properties").and_then(Value::as_object);
    if let Some(Value::Array(required)) = map.get("required") {
        let names: Vec<&str> = props.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
        for (i, r) in required.iter().enumerate() {
            if let Some(r) = r.as_str()
                && props.is_some_and(|p| !p.contains_key(r))
            {
                lint.push(
                    &format!("{}/{i}", pointer::join(path, "required")),
                    Severity::Error,
                    "required_missing_property",
                    did_you_mean(format!("`required` names `{r}`, which is not a property"), &lint.near(r, &names)),
                );
            }
        }
    }
    if let Some(props) = props {
        check_properties(lint, path, props);
    }
}

fn check_type(lint: &mut Lint<'_>, at: &str, given: &str) {
    if TYPES.contains(&given) {
        return;
    }
    // Names other languages use for JSON Schema's types.
    let alias = match given.to_ascii_lowercase().as_str() {
        "float" | "double" | "decimal" | "real" | "f32" | "f64" => Some("number"),
        "int" | "long" | "i32" | "i64" | "u32" | "u64" | "uint" => Some("integer"),
        "str" | "text" | "char" => Some("string"),
        "bool" => Some("boolean"),
        "list" | "tuple" | "vec" | "sequence" => Some("array"),
        "dict" | "map" | "record" | "struct" | "hash" => Some("object"),
        "none" | "nil" => Some("null"),
        _ => None,
    };
    let near = match alias {
        Some(a) => vec![a],
        None => closest(given, TYPES),
    };
    lint.push(at, Severity::Error, "unknown_type", did_you_mean(format!("`{given}` is not a JSON Schema type"), &near));
}

fn check_properties(lint: &mut Lint<'_>, path: &str, props: &Map<String, Value>) {
    let root = lint.root;
    let at = pointer::join(path, "properties");
    let mut seen: HashMap<String, &str> = HashMap::new();
    for (name, prop) in props {
        let here = pointer::join(&at, name);
        if let Some(other) = seen.insert(view::normalise(name), name) {
            lint.push(
                &here,
                Severity::Warning,
                "properties_normalise_alike",
                format!("properties `{other}` and `{name}` differ only in case or separators, so a near-miss name is ambiguous"),
            );
        }
        for alias in view::aliases(root, prop) {
            if props.contains_key(alias) && alias != name {
                lint.push(
                    &here,
                    Severity::Error,
                    "hint_names_missing_property",
                    format!("alias `{alias}` is itself a property"),
                );
            }
        }
        if let Some(s) = view::prop_hint(root, prop, "semantic").and_then(Value::as_str)
            && !SEMANTICS.contains(&s)
        {
            lint.push(
                &here,
                Severity::Error,
                "bad_hint",
                did_you_mean(format!("semantic `{s}` is not one of {}", SEMANTICS.join(", ")), &closest(s, SEMANTICS)),
            );
        }
        if let (Some(examples), Ok(v)) = (prop.get("examples").and_then(Value::as_array), compile_sub(root, prop)) {
            for (i, ex) in examples.iter().enumerate() {
                if !v.is_valid(ex) {
                    lint.push(
                        &format!("{here}/examples/{i}"),
                        Severity::Warning,
                        "example_invalid",
                        "this example does not validate against its property".to_owned(),
                    );
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

    fn kinds(problems: &[CheckProblem]) -> Vec<&str> {
        problems.iter().map(|p| p.kind).collect()
    }

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
        let kinds = kinds(&problems);
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
        let errors = problems.iter().take_while(|p| p.is_error()).count();
        assert!(problems.iter().skip(errors).all(|p| !p.is_error()), "errors come first: {problems:#?}");
    }

    #[test]
    fn problems_point_into_the_document() {
        let defs = [json!({"type": "function", "function": {"name": "t", "parameters": {"type": "object",
            "properties": {"a": {"type": "strng"}, "b": {"type": ["integer", "nul"]},
                           "c": {"type": "array", "items": {"type": "float"}},
                           "d": {"anyOf": [{"type": "string", "minLenght": 2}]}},
            "requried": ["a"], "required": ["qurey"]}}})];
        let problems = check(&defs);
        let got: Vec<(&str, Severity, &str)> =
            problems.iter().map(|p| (p.pointer.as_str(), p.severity, p.message.as_str())).collect();
        assert_eq!(
            got,
            [
                (
                    "/0/function/parameters/required/0",
                    Severity::Error,
                    "`required` names `qurey`, which is not a property"
                ),
                (
                    "/0/function/parameters/properties/a/type",
                    Severity::Error,
                    "`strng` is not a JSON Schema type; did you mean `string`?"
                ),
                (
                    "/0/function/parameters/properties/b/type/1",
                    Severity::Error,
                    "`nul` is not a JSON Schema type; did you mean `null`?"
                ),
                (
                    "/0/function/parameters/properties/c/items/type",
                    Severity::Error,
                    "`float` is not a JSON Schema type; did you mean `number`?"
                ),
                (
                    "/0/function/parameters/requried",
                    Severity::Warning,
                    "`requried` is not a JSON Schema keyword, so validation ignores it; did you mean `required`?"
                ),
                (
                    "/0/function/parameters/properties/d/anyOf/0/minLenght",
                    Severity::Warning,
                    "`minLenght` is not a JSON Schema keyword, so validation ignores it; did you mean `minLength`?"
                ),
            ],
            "{problems:#?}"
        );
    }

    #[test]
    fn required_typo_suggests_the_property() {
        let problems = check(&[json!({"name": "t", "parameters": {"type": "object",
            "properties": {"query": {"type": "string"}}, "required": ["qeury"]}})]);
        assert_eq!(problems[0].message, "`required` names `qeury`, which is not a property; did you mean `query`?");
    }

    #[test]
    fn compile_errors_are_pointed_once() {
        let problems = check(&[json!({"name": "t", "parameters": {"type": "object",
            "properties": {"n": {"type": "integer", "minimum": "one"}, "p": {"type": "string", "pattern": 5}}}})]);
        let at: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
        assert_eq!(at, ["/0/parameters/properties/n/minimum", "/0/parameters/properties/p/pattern"], "{problems:#?}");
        assert!(problems.iter().all(|p| p.kind == "schema_does_not_compile" && p.is_error()));
    }

    #[test]
    fn documents_and_odd_definitions() {
        let problems = check_document(&json!({"tools": [7, {"name": "x", "parameters": "no"},
            {"name": "x", "parameters": {"type": "object"}}, {"name": "y", "inputSchema": {"$ref": "#/$defs/none"}}]}));
        let got: Vec<(&str, &str)> = problems.iter().map(|p| (p.pointer.as_str(), p.kind)).collect();
        assert_eq!(
            got,
            [
                ("/tools/0", "definition_not_object"),
                ("/tools/1/parameters", "schema_not_object"),
                ("/tools/2/name", "duplicate_tool_name"),
                ("/tools/3/inputSchema/$ref", "unresolved_ref"),
            ],
            "{problems:#?}"
        );
    }

    #[test]
    fn warnings_only() {
        let problems = check(&[json!({"name": "t", "parameters": {"type": "object",
            "properties": {"user_id": {}, "userId": {}}}})]);
        assert_eq!(kinds(&problems), ["properties_normalise_alike"]);
        assert!(!problems[0].is_error());
    }

    #[test]
    fn clean_definitions_pass() {
        assert!(
            check(&[json!({"name": "t", "parameters": {"type": "object", "properties": {"a": {"type": "string",
                "description": "A", "x-toolfix": {"semantic": "path"}}}, "required": ["a"]}})])
            .is_empty()
        );
    }

    #[test]
    fn wide_schemas_stay_bounded() {
        let props: Map<String, Value> = (0..2000).map(|i| (format!("p{i}"), json!({"type": "string"}))).collect();
        let required: Vec<String> = (0..2000).map(|i| format!("q{i}")).collect();
        let problems = check(&[json!({"name": "wide", "parameters": {"type": "object", "properties": props,
            "required": required}})]);
        assert_eq!(problems.len(), 2000, "every problem is listed");
        let suggested = problems.iter().filter(|p| p.message.contains("did you mean")).count();
        assert!(suggested > 0 && suggested <= MAX_SEARCHES, "suggestions stop when the search budget is spent");
    }

    #[test]
    fn deep_schemas_do_not_overflow() {
        let mut node = json!({"type": "string"});
        for _ in 0..100 {
            node = json!({"type": "array", "items": node});
        }
        let problems = check(&[json!({"name": "deep", "parameters": {"type": "object", "properties": {"d": node}}})]);
        assert!(problems.iter().all(|p| p.kind != "unknown_type"));
    }
}
