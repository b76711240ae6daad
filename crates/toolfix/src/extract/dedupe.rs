//! Canonical keys for calls: name and arguments with key order and whitespace ignored.

use serde_json::Value;

/// Nesting beyond which arguments are compared as written (salvage caps depth anyway).
const MAX_DEPTH: usize = 256;

/// The canonical text of `arguments`: salvaged, keys sorted, no whitespace. Arguments that
/// cannot be salvaged are compared as written with whitespace removed.
pub(crate) fn canonical_arguments(arguments: &str) -> String {
    let value = crate::salvage::salvage(arguments).ok().and_then(|s| s.to_value().ok());
    match value {
        Some(v) => {
            let mut out = String::with_capacity(arguments.len());
            write_canonical(&v, &mut out, 0);
            out
        }
        None => arguments.split_whitespace().collect(),
    }
}

fn write_canonical(v: &Value, out: &mut String, depth: usize) {
    if depth > MAX_DEPTH {
        out.push_str(&v.to_string());
        return;
    }
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                if let Some(x) = map.get(k) {
                    write_canonical(x, out, depth + 1);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(x, out, depth + 1);
            }
            out.push(']');
        }
        Value::Number(n) => match n.as_f64() {
            // 2 and 2.0 are the same argument.
            Some(f) if f.fract() == 0.0 && f.abs() < 9e15 => out.push_str(&(f as i64).to_string()),
            _ => out.push_str(&n.to_string()),
        },
        other => out.push_str(&other.to_string()),
    }
}

/// The dedupe key of a call.
pub(crate) fn call_key(name: &str, arguments: &str) -> String {
    let mut key = String::with_capacity(name.len() + arguments.len() + 1);
    key.push_str(name);
    key.push('\u{0}');
    key.push_str(&canonical_arguments(arguments));
    key
}

/// A deterministic call id from the call and its place in the list.
pub(crate) fn fresh_id(name: &str, arguments: &str, ordinal: usize) -> String {
    // FNV-1a, 64 bits.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes().chain([0]).chain(arguments.bytes()).chain(ordinal.to_le_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("call_{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_ignores_order_and_space() {
        assert_eq!(call_key("f", r#"{"a": 1, "b": [2.0]}"#), call_key("f", r#"{"b":[2],"a":1}"#));
        assert_ne!(call_key("f", r#"{"a": 1}"#), call_key("g", r#"{"a": 1}"#));
    }
}
