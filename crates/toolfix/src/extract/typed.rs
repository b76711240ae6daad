//! Raw parameter text typed through a property's schema (see `params` for the rules:
//! a string is kept exactly, a scalar type reads the trimmed text as that JSON scalar,
//! `object` and `array` go through salvage, unions try the non-string members first, and
//! where a string is allowed the text becomes another type only when it is exactly one).

use crate::salvage::FixKind;
use serde_json::Value;

/// What to do with a value whose type the schema does not give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Untyped {
    /// Read it as JSON when it is a JSON or Python literal, an object or an array.
    Json,
    /// Keep it as a string.
    String,
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
    // With a string allowed, another type only when the text is exactly one.
    let strict = types.contains(&Type::String);
    for ty in &types {
        let typed = match *ty {
            Type::Integer | Type::Number => number_text(trimmed).map(str::to_owned),
            Type::Boolean if strict => matches!(trimmed, "true" | "false").then(|| trimmed.to_owned()),
            Type::Boolean => bool_text(trimmed).map(str::to_owned),
            Type::Null if strict => (trimmed == "null").then(|| trimmed.to_owned()),
            Type::Null => null_text(trimmed).map(str::to_owned),
            Type::Object if strict => strict_container(trimmed, '{'),
            Type::Array if strict => strict_container(trimmed, '['),
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

/// The text when it is strict JSON opening with `open` (an object or an array).
fn strict_container(text: &str, open: char) -> Option<String> {
    (text.starts_with(open) && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()).then(|| text.to_owned())
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
pub(super) enum Trust {
    /// The schema says so: any salvage repair is fine.
    Schema,
    /// A guess from the text's shape: only repairs of JSON-like syntax (quotes, commas,
    /// Python literals, ...), never prose turned into strings (`[see above]`).
    Guess,
}

/// Object or array text: strict JSON as is, else salvaged, else decoded once from an
/// escaped-JSON text (`[{\"a\": 1}]`).
pub(super) fn container_text(text: &str, trust: Trust) -> Option<String> {
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
pub(super) enum Type {
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
pub(super) fn schema_types(prop: &Value) -> Vec<Type> {
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

    /// Where a string is allowed, text that is not exactly the other type stays the string
    /// it is (issue 24 §3).
    #[test]
    fn a_string_stays_a_string_unless_exactly_the_other_type() {
        let p = json!({"type": ["object", "string"]});
        assert_eq!(ty("{not valid json", &p), r#""{not valid json""#);
        assert_eq!(ty("{not valid json}", &p), r#""{not valid json}""#);
        assert_eq!(ty("{'a': 1}", &p), r#""{'a': 1}""#);
        assert_eq!(ty("<b>bold</b>", &p), r#""<b>bold</b>""#);
        assert_eq!(ty(" {\"a\": 1} ", &p), r#"{"a": 1}"#);
        let p = json!({"anyOf": [{"type": "boolean"}, {"type": "string"}]});
        assert_eq!(ty("True", &p), r#""True""#);
        assert_eq!(ty("true", &p), "true");
        let p = json!({"anyOf": [{"type": "array"}, {"type": "string"}]});
        assert_eq!(ty("[see above]", &p), r#""[see above]""#);
        assert_eq!(ty("[1, 2]", &p), "[1, 2]");
        // Without a string, the other type is read leniently (the repair stage judges).
        assert_eq!(ty("True", &json!({"type": "boolean"})), "true");
        assert_eq!(ty("{'a': 1}", &json!({"type": "object"})), r#"{"a": 1}"#);
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
}
