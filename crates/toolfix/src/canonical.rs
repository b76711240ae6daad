//! The canonical key of a call: its name and its arguments with key order, whitespace and
//! number spelling (`2` and `2.0`) ignored. Shared by the extractor (a call repeated in a
//! reply is kept once) and the storm guard (the same call again and again is a storm).

use serde_json::Value;

/// The canonical text of `arguments`: salvaged, keys sorted, no whitespace. Arguments that
/// cannot be salvaged are compared as written with whitespace removed.
pub(crate) fn canonical_arguments(arguments: &str) -> String {
    let value = crate::salvage::salvage(arguments).ok().and_then(|s| s.to_value().ok());
    match value {
        Some(v) => {
            let mut out = String::with_capacity(arguments.len());
            write_canonical(&v, &mut out);
            out
        }
        None => arguments.split_whitespace().collect(),
    }
}

/// The key of a call: its name, a NUL, its canonical arguments.
pub(crate) fn call_key(name: &str, arguments: &str) -> String {
    let mut key = String::with_capacity(name.len() + arguments.len() + 1);
    key.push_str(name);
    key.push('\u{0}');
    key.push_str(&canonical_arguments(arguments));
    key
}

/// The key of an accepted call, from its value (no text to read again).
pub(crate) fn value_key(name: &str, arguments: &serde_json::Value) -> String {
    let mut key = String::with_capacity(name.len() + 64);
    key.push_str(name);
    key.push('\u{0}');
    write_canonical(arguments, &mut key);
    key
}

/// What is left to write, innermost last (an explicit stack: no recursion).
enum Work<'v> {
    Value(&'v Value),
    Key(&'v str),
    Punct(char),
}

fn write_canonical(root: &Value, out: &mut String) {
    let mut stack = vec![Work::Value(root)];
    while let Some(work) = stack.pop() {
        match work {
            Work::Punct(c) => out.push(c),
            Work::Key(k) => {
                push_string(out, k);
                out.push(':');
            }
            Work::Value(Value::Object(map)) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                stack.push(Work::Punct('}'));
                for (i, k) in keys.into_iter().enumerate().rev() {
                    if let Some(v) = map.get(k) {
                        stack.push(Work::Value(v));
                        stack.push(Work::Key(k));
                        if i > 0 {
                            stack.push(Work::Punct(','));
                        }
                    }
                }
            }
            Work::Value(Value::Array(items)) => {
                out.push('[');
                stack.push(Work::Punct(']'));
                for (i, v) in items.iter().enumerate().rev() {
                    stack.push(Work::Value(v));
                    if i > 0 {
                        stack.push(Work::Punct(','));
                    }
                }
            }
            Work::Value(Value::Number(n)) => match n.as_f64() {
                // 2 and 2.0 are the same argument.
                Some(f) if f.fract() == 0.0 && f.abs() < 9e15 => out.push_str(&(f as i64).to_string()),
                _ => out.push_str(&n.to_string()),
            },
            Work::Value(Value::String(s)) => push_string(out, s),
            Work::Value(other) => out.push_str(&other.to_string()),
        }
    }
}

fn push_string(out: &mut String, s: &str) {
    match serde_json::to_string(s) {
        Ok(quoted) => out.push_str(&quoted),
        Err(_) => out.push_str(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_ignores_order_space_and_number_spelling() {
        assert_eq!(
            call_key("f", r#"{"a": 1, "b": [2.0, {"y": 1, "x": "\u00e9"}]}"#),
            call_key("f", r#"{"b":[2,{"x":"é","y":1}],"a":1}"#)
        );
        assert_ne!(call_key("f", r#"{"a": 1}"#), call_key("g", r#"{"a": 1}"#));
        assert_ne!(call_key("f", r#"{"a": [1, 2]}"#), call_key("f", r#"{"a": [2, 1]}"#));
        assert_eq!(canonical_arguments("not json at all"), "notjsonatall");
    }
}
