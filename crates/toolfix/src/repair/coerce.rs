//! Lossless scalar coercion: `"42"` to 42, `"3.0"` to 3 for integers, `"true"` to true
//! in any ASCII case, `"null"` to null, and numbers or booleans to strings as written.

use super::{Ctx, ProblemKind};
use crate::schema::view::Types;
use serde_json::{Number, Value};

/// Largest integer an `f64` holds exactly.
const EXACT_F64: f64 = 9_007_199_254_740_992.0;

/// The coerced value, when exactly one lossless conversion fits `allowed`.
pub(super) fn coerce(cx: &mut Ctx<'_>, allowed: Types, value: &Value, path: &str) -> Option<Value> {
    match value {
        Value::String(s) => {
            let (out, fractional) = from_string(allowed, s);
            if fractional {
                cx.problem(path, ProblemKind::Fractional);
            }
            out
        }
        Value::Number(n) if allowed.has(Types::STRING) => {
            let text = cx.original_text(path, value).map_or_else(|| n.to_string(), str::to_owned);
            Some(Value::String(text))
        }
        Value::Bool(b) if allowed.has(Types::STRING) => Some(Value::String(b.to_string())),
        _ => None,
    }
}

/// True when `value` would coerce into `allowed`.
pub(super) fn coercible(allowed: Types, value: &Value) -> bool {
    match value {
        Value::String(s) => from_string(allowed, s).0.is_some(),
        Value::Number(_) | Value::Bool(_) => allowed.has(Types::STRING),
        _ => false,
    }
}

/// A string's value under `allowed`, and whether it failed only for a fractional part.
fn from_string(allowed: Types, s: &str) -> (Option<Value>, bool) {
    if allowed.has(Types::BOOLEAN) {
        if s.eq_ignore_ascii_case("true") {
            return (Some(Value::Bool(true)), false);
        }
        if s.eq_ignore_ascii_case("false") {
            return (Some(Value::Bool(false)), false);
        }
    }
    if allowed.has(Types::NULL) && s == "null" {
        return (Some(Value::Null), false);
    }
    if !(allowed.has(Types::INTEGER) || allowed.has(Types::NUMBER)) {
        return (None, false);
    }
    let Some(Value::Number(n)) = strict_number(s) else {
        return (None, false);
    };
    if allowed.has(Types::NUMBER) {
        return (Some(Value::Number(n)), false);
    }
    if n.is_i64() || n.is_u64() {
        return (Some(Value::Number(n)), false);
    }
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() <= EXACT_F64 => {
            #[expect(clippy::cast_possible_truncation, reason = "integral and within 2^53, so exact")]
            let i = f as i64;
            (Some(Value::Number(Number::from(i))), false)
        }
        Some(f) if f.fract() != 0.0 => (None, true),
        _ => (None, false),
    }
}

/// Parse `s` as exactly one JSON number (no sign other than `-`, no spaces).
fn strict_number(s: &str) -> Option<Value> {
    let b = s.as_bytes();
    let first = b.first()?;
    if !(first.is_ascii_digit() || *first == b'-') {
        return None;
    }
    // Most are small whole numbers: read as a JSON parse reads them (no leading zero).
    if b.len() <= 18 && b.iter().all(u8::is_ascii_digit) && (b.len() == 1 || *first != b'0') {
        return s.parse::<u64>().ok().map(Value::from);
    }
    serde_json::from_str::<Value>(s).ok().filter(Value::is_number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_to_numbers() {
        assert_eq!(from_string(Types::INTEGER, "42").0, Some(Value::from(42)));
        assert_eq!(from_string(Types::INTEGER, "3.0").0, Some(Value::from(3)));
        assert_eq!(from_string(Types::INTEGER, "1e3").0, Some(Value::from(1000)));
        assert_eq!(from_string(Types::INTEGER, "3.5"), (None, true));
        assert_eq!(from_string(Types::INTEGER, " 4").0, None);
        assert_eq!(from_string(Types::BOOLEAN, "True").0, Some(Value::Bool(true)));
        assert_eq!(from_string(Types::BOOLEAN, "yes").0, None);
        assert_eq!(from_string(Types::INTEGER.union(Types::NULL), "null").0, Some(Value::Null));
        for s in ["0", "7", "007", "42", "123456789012345678", "1234567890123456789012", "-3", "1.0", "1e2", "0x1"] {
            assert_eq!(strict_number(s), serde_json::from_str::<Value>(s).ok().filter(Value::is_number), "{s}");
        }
    }
}
