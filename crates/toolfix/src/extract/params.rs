//! Raw parameter text typed through the tool's schema, into an arguments JSON object.
//!
//! Formats that write parameter values as raw text (Qwen3-Coder, GLM, DSML, MiniMax,
//! Step-3, ...) hand each `(key, raw text)` to an [`Args`] builder. With the tool's schema
//! the property type decides: `string` keeps the text exactly; `integer`, `number`,
//! `boolean`, `null` read the trimmed text as that JSON scalar; `object` and `array` go
//! through [`salvage`](crate::salvage::salvage) (and an escaped-JSON text such as
//! `[{\"a\": 1}]` is decoded once). Unions (`anyOf`, `oneOf`, type arrays) try the
//! non-string members first and fall back to a string. A value no type accepts is kept as
//! a string: the repair stage reports it, nothing is guessed here.
//!
//! Without a schema the format says what to do ([`Untyped`]): read the text as JSON when
//! it is a JSON (or Python) literal, or keep it as a string.
//!
//! Numbers keep the text the model wrote (`5.0` stays `5.0`).

use super::parsed::Cx;
use crate::salvage::FixKind;
use serde_json::{Map, Value};

/// What to do with a value whose type the schema does not give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Untyped {
    /// Read it as JSON when it is a JSON or Python literal, an object or an array.
    Json,
    /// Keep it as a string.
    String,
}

/// Builds the arguments JSON object text of one call, parameter by parameter, in order.
#[derive(Debug)]
pub(crate) struct Args<'t> {
    props: Option<&'t Map<String, Value>>,
    out: String,
    count: usize,
    /// The single parameter so far, for unwrapping an `arguments`/`input` wrapper.
    first: Option<(String, String)>,
}

impl<'t> Args<'t> {
    /// A builder for a call of tool `name`.
    pub(crate) fn new(cx: &Cx<'t>, name: &str) -> Self {
        let props = cx
            .tools
            .and_then(|tools| tools.parameters(name))
            .and_then(|schema| schema.get("properties"))
            .and_then(Value::as_object);
        Args { props, out: String::from("{"), count: 0, first: None }
    }

    /// True when no parameter was pushed.
    pub(crate) fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Adds parameter `key` with raw text `raw`, typed through the schema.
    pub(crate) fn push_raw(&mut self, key: &str, raw: &str, untyped: Untyped) {
        let prop = self.props.and_then(|props| props.get(key));
        let value = type_raw(raw, prop, untyped);
        self.push_json(key, &value);
        if self.count == 1 {
            self.first = Some((key.to_owned(), raw.to_owned()));
        }
    }

    /// Adds parameter `key` whose value is already JSON text.
    pub(crate) fn push_json(&mut self, key: &str, json: &str) {
        if self.count > 0 {
            self.out.push_str(", ");
        }
        push_json_string(&mut self.out, key);
        self.out.push_str(": ");
        self.out.push_str(json);
        self.count += 1;
        self.first = None;
    }

    /// The arguments object text. A lone `arguments`/`input`/`parameters` parameter that
    /// the schema does not know and that holds an object is unwrapped.
    pub(crate) fn finish(mut self) -> String {
        if let (Some(props), Some((key, raw))) = (self.props, self.first.take())
            && self.count == 1
            && is_wrapper_key(&key)
            && !props.contains_key(&key)
            && let Some(object) = object_text(raw.trim())
        {
            return object;
        }
        self.out.push('}');
        self.out
    }
}

fn is_wrapper_key(key: &str) -> bool {
    matches!(key, "arguments" | "input" | "parameters" | "args")
}

/// Object text from `text` when it is (or salvages to) a JSON object.
fn object_text(text: &str) -> Option<String> {
    if !text.starts_with('{') {
        return None;
    }
    container_text(text, Trust::Guess)
}

/// JSON text for a raw value, typed through its property schema.
pub(crate) fn type_raw(raw: &str, prop: Option<&Value>, untyped: Untyped) -> String {
    let types = prop.map(schema_types).unwrap_or_default();
    if types.is_empty() {
        return match untyped {
            Untyped::Json => untyped_json(raw).unwrap_or_else(|| json_string(raw)),
            Untyped::String => json_string(raw),
        };
    }
    let trimmed = raw.trim();
    for ty in &types {
        let typed = match *ty {
            Type::Integer | Type::Number => number_text(trimmed).map(str::to_owned),
            Type::Boolean => bool_text(trimmed).map(str::to_owned),
            Type::Null => null_text(trimmed).map(str::to_owned),
            Type::Object if trimmed.starts_with('{') => container_text(trimmed, Trust::Schema),
            Type::Array if trimmed.starts_with('[') => container_text(trimmed, Trust::Schema),
            Type::Object | Type::Array | Type::String => None,
        };
        if typed.is_some() {
            return typed.unwrap_or_default();
        }
    }
    json_string(raw)
}

/// Untyped value: a JSON scalar, a Python literal, or an object/array that salvages.
fn untyped_json(raw: &str) -> Option<String> {
    let trimmed = raw.trim();
    if let Some(lit) = bool_text(trimmed).or_else(|| null_text(trimmed)) {
        return Some(lit.to_owned());
    }
    if let Some(number) = number_text(trimmed) {
        return Some(number.to_owned());
    }
    if trimmed.starts_with('"') && serde_json::from_str::<String>(trimmed).is_ok() {
        return Some(trimmed.to_owned());
    }
    let closes = matches!(
        (trimmed.as_bytes().first(), trimmed.as_bytes().last()),
        (Some(b'{'), Some(b'}')) | (Some(b'['), Some(b']'))
    );
    if closes {
        return container_text(trimmed, Trust::Guess);
    }
    None
}

/// How sure we are that a text is meant as an object or array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Trust {
    /// The schema says so: any salvage repair is fine.
    Schema,
    /// A guess from the text's shape: only repairs of JSON-like syntax (quotes, commas,
    /// Python literals, ...), never prose turned into strings (`[see above]`).
    Guess,
}

/// Object or array text: strict JSON as is, else salvaged, else decoded once from an
/// escaped-JSON text (`[{\"a\": 1}]`).
fn container_text(text: &str, trust: Trust) -> Option<String> {
    if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() {
        return Some(text.to_owned());
    }
    if text.contains("\\\"") {
        let mut quoted = String::with_capacity(text.len() + 2);
        quoted.push('"');
        quoted.push_str(text);
        quoted.push('"');
        if let Ok(decoded) = serde_json::from_str::<String>(&quoted)
            && let Some(out) = salvaged_container(&decoded, trust)
        {
            return Some(out);
        }
    }
    salvaged_container(text, trust)
}

fn salvaged_container(text: &str, trust: Trust) -> Option<String> {
    let out = crate::salvage::salvage(text).ok()?;
    let plausible = trust == Trust::Schema || out.fixes().iter().all(|f| is_syntax_fix(f.kind));
    (plausible && is_container(out.text())).then(|| out.text().to_owned())
}

/// Repairs that keep JSON-like text JSON-like (as opposed to reading prose as strings).
fn is_syntax_fix(kind: FixKind) -> bool {
    matches!(
        kind,
        FixKind::Comment
            | FixKind::TrailingComma
            | FixKind::LeadingComma
            | FixKind::DoubledComma
            | FixKind::MissingComma
            | FixKind::SingleQuotes
            | FixKind::SmartQuotes
            | FixKind::UnquotedKey
            | FixKind::PythonLiteral
            | FixKind::JsLiteral
            | FixKind::LiteralCase
            | FixKind::ControlCharacter
            | FixKind::InvalidEscape
            | FixKind::LoneSurrogate
            | FixKind::NumberFormat
            | FixKind::TupleOrSet
            | FixKind::EscapedJson
    )
}

fn is_container(text: &str) -> bool {
    matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['))
}

/// The text when it is a finite JSON number.
pub(crate) fn number_text(text: &str) -> Option<&str> {
    if !is_json_number(text) {
        return None;
    }
    text.parse::<f64>().ok().filter(|n| n.is_finite()).map(|_| text)
}

/// JSON number grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
fn is_json_number(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    if b.first() == Some(&b'-') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let int_start = i;
    let n = digits(&mut i);
    if n == 0 || (n > 1 && b.get(int_start) == Some(&b'0')) {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

fn bool_text(text: &str) -> Option<&'static str> {
    match text {
        "true" | "True" | "TRUE" => Some("true"),
        "false" | "False" | "FALSE" => Some("false"),
        _ => None,
    }
}

fn null_text(text: &str) -> Option<&'static str> {
    match text {
        "null" | "None" | "NULL" => Some("null"),
        _ => None,
    }
}

/// JSON string literal for `text`.
pub(crate) fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    push_json_string(&mut out, text);
    out
}

/// Appends `text` as a JSON string literal (non-ASCII kept as is).
pub(crate) fn push_json_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                use std::fmt::Write as _;
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Type {
    Integer,
    Number,
    Boolean,
    Null,
    Object,
    Array,
    String,
}

impl Type {
    fn from_name(name: &str) -> Option<Type> {
        Some(match name {
            "integer" | "int" => Type::Integer,
            "number" | "float" | "double" => Type::Number,
            "boolean" | "bool" => Type::Boolean,
            "null" => Type::Null,
            "object" | "dict" => Type::Object,
            "array" | "list" | "tuple" => Type::Array,
            "string" | "str" => Type::String,
            _ => return None,
        })
    }
}

/// The types a property schema allows: `type` (a name or an array), and the `type`s of
/// its `anyOf`/`oneOf`/`allOf` members (one level), non-string types first.
fn schema_types(prop: &Value) -> Vec<Type> {
    let mut types = Vec::new();
    let mut add = |schema: &Value| match schema.get("type") {
        Some(Value::String(name)) => types.extend(Type::from_name(name)),
        Some(Value::Array(names)) => {
            types.extend(names.iter().filter_map(Value::as_str).filter_map(Type::from_name));
        }
        _ => {
            if schema.get("properties").is_some() {
                types.push(Type::Object);
            } else if schema.get("items").is_some() {
                types.push(Type::Array);
            }
        }
    };
    add(prop);
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(members) = prop.get(key).and_then(Value::as_array) {
            members.iter().for_each(&mut add);
        }
    }
    // Non-string types are tried first; a string member is the fallback.
    let has_string = types.contains(&Type::String);
    types.retain(|t| *t != Type::String);
    types.dedup();
    if has_string {
        types.push(Type::String);
    }
    types
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ty(raw: &str, prop: &Value) -> String {
        type_raw(raw, Some(prop), Untyped::Json)
    }

    #[test]
    fn string_kept_exactly() {
        assert_eq!(ty("  indented  ", &json!({"type": "string"})), r#""  indented  ""#);
        assert_eq!(ty("null", &json!({"type": "string"})), r#""null""#);
        assert_eq!(ty("a\"b\nc", &json!({"type": "string"})), r#""a\"b\nc""#);
    }

    #[test]
    fn scalars_typed() {
        assert_eq!(ty(" 4 ", &json!({"type": "integer"})), "4");
        assert_eq!(ty("5.0", &json!({"type": "number"})), "5.0");
        assert_eq!(ty("True", &json!({"type": "boolean"})), "true");
        assert_eq!(ty("abc", &json!({"type": "integer"})), r#""abc""#);
        assert_eq!(ty("1e999", &json!({"type": "number"})), r#""1e999""#);
        assert_eq!(ty("3.14", &json!({"type": "float"})), "3.14");
    }

    #[test]
    fn unions() {
        let p = json!({"anyOf": [{"type": "integer"}, {"type": "null"}]});
        assert_eq!(ty("5", &p), "5");
        assert_eq!(ty("null", &p), "null");
        let p = json!({"type": ["null", "string"]});
        assert_eq!(ty("null", &p), "null");
        assert_eq!(ty("hello", &p), r#""hello""#);
        let p = json!({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]});
        assert_eq!(ty("some text", &p), r#""some text""#);
    }

    #[test]
    fn containers() {
        let p = json!({"type": "object"});
        assert_eq!(ty("{\"a\": 1}", &p), "{\"a\": 1}");
        let p = json!({"type": "array"});
        assert_eq!(ty(r#"[{\"id\": \"1\"}]"#, &p), r#"[{"id": "1"}]"#);
    }

    #[test]
    fn untyped() {
        assert_eq!(type_raw("42", None, Untyped::Json), "42");
        assert_eq!(type_raw("None", None, Untyped::Json), "null");
        assert_eq!(type_raw("[1, 2]", None, Untyped::Json), "[1, 2]");
        assert_eq!(type_raw("[see above]", None, Untyped::Json), r#""[see above]""#);
        assert_eq!(type_raw("hello", None, Untyped::Json), r#""hello""#);
        assert_eq!(type_raw("5", None, Untyped::String), r#""5""#);
    }

    #[test]
    fn numbers() {
        for ok in ["0", "-1", "1.5", "1e5", "1E+5", "-0.0e-1", "12345678901234567890"] {
            assert!(is_json_number(ok), "{ok}");
        }
        for bad in ["", "-", "01", "1.", ".5", "1e", "+1", "0x10", "1 "] {
            assert!(!is_json_number(bad), "{bad}");
        }
    }

    #[test]
    fn wrapper_unwrapped() {
        let mut tools = std::collections::HashMap::new();
        tools.insert(
            "get_weather".to_owned(),
            json!({"type": "object", "properties": {"location": {"type": "string"}}}),
        );
        let cx = Cx::new(Some(&tools), crate::limits::Limits::default());
        let mut args = Args::new(&cx, "get_weather");
        args.push_raw("input", r#"{"location":"Beijing"}"#, Untyped::String);
        assert_eq!(args.finish(), r#"{"location":"Beijing"}"#);
        let mut args = Args::new(&cx, "get_weather");
        args.push_raw("location", "Paris", Untyped::Json);
        args.push_raw("days", "3", Untyped::Json);
        assert_eq!(args.finish(), r#"{"location": "Paris", "days": 3}"#);
    }
}
