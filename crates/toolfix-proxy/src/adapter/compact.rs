//! Whether a JSON text is already what serde_json writes for its value (`to_string`): no
//! space between tokens, no key twice in an object, integers only (in the range serde_json
//! keeps as integers), strings escaped as it escapes them. Such a text is its own compact
//! form: a server call's arguments object (a Messages `input`, for one) is then taken as it
//! is, instead of built into a value and written out again.
//!
//! Anything the check does not know for sure (a float, `-0`, an escape serde_json would
//! not write, nesting deeper than [`MAX_DEPTH`]) is "no": the caller then writes the value.
//!
//! [`write`] writes a value as serde_json does, the bytes of `to_writer`: a string without
//! a byte to escape (found with `memchr2` and a vectorised check for control characters)
//! is copied as it is, where serde_json's writer looks at every byte on its own (some ten
//! instructions a byte of a long text under callgrind: most of writing an answer back).

use serde_json::Value;

/// Deeper than this, the text is not looked at (the caller writes the value); a value
/// this deep is written by serde_json.
const MAX_DEPTH: usize = 64;

/// `value` as `serde_json::to_writer` writes it (compact).
pub(crate) fn write(out: &mut Vec<u8>, value: &Value) {
    write_at(out, value, 0);
}

fn write_at(out: &mut Vec<u8>, value: &Value, depth: usize) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::String(s) => crate::summary::push_json_str(out, s),
        Value::Array(items) if depth < MAX_DEPTH => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_at(out, item, depth + 1);
            }
            out.push(b']');
        }
        Value::Object(members) if depth < MAX_DEPTH => {
            out.push(b'{');
            for (i, (key, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                crate::summary::push_json_str(out, key);
                out.push(b':');
                write_at(out, item, depth + 1);
            }
            out.push(b'}');
        }
        // Numbers, and what is nested deeper: serde_json writes these (a value in memory
        // is not refused; `null` if it were).
        _ => {
            let at = out.len();
            if serde_json::to_writer(&mut *out, value).is_err() {
                out.truncate(at);
                out.extend_from_slice(b"null");
            }
        }
    }
}

/// True when `text` (a valid JSON value, as a `RawValue` holds it) is the text serde_json
/// writes for the value it holds.
pub(crate) fn is_compact(text: &str) -> bool {
    scan::<false>(text.as_bytes(), &mut Vec::new())
}

/// The text serde_json writes for the value `text` holds, when `text` is that text but for
/// whitespace between its tokens (the whitespace taken out); `None` when it is not (see
/// [`is_compact`]: the caller then reads the value and writes it). A model's arguments as
/// a library repaired them (`{"city": "Paris", "days": 3}`) are written so, without a
/// value built.
pub(crate) fn minified(text: &str) -> Option<String> {
    let mut out = Vec::with_capacity(text.len());
    if !scan::<true>(text.as_bytes(), &mut out) {
        return None;
    }
    String::from_utf8(out).ok()
}

/// [`is_compact`] (`MINIFY` false: no whitespace allowed, nothing written) or
/// [`minified`] (whitespace between tokens skipped, the tokens copied to `out`).
fn scan<const MINIFY: bool>(bytes: &[u8], out: &mut Vec<u8>) -> bool {
    // Whitespace before the token at `at` (none allowed when nothing is written).
    let skip = |at: usize| {
        if !MINIFY {
            return at;
        }
        let mut at = at;
        while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            at += 1;
        }
        at
    };
    let copy = |from: usize, to: usize, out: &mut Vec<u8>| {
        if MINIFY {
            out.extend_from_slice(bytes.get(from..to).unwrap_or_default());
        }
    };
    // The keys of the open objects, each object's after an empty marker (a key's text
    // holds its quotes: never empty). A duplicate key is read as the last one.
    let mut keys: Vec<&[u8]> = Vec::new();
    // How many containers are open, and which of them are objects (bit `i` for the
    // container at depth `i`; at most `MAX_DEPTH`, 64, are open): no list per container.
    let mut depth = 0usize;
    let mut objects = 0u64;
    let innermost = |depth: usize, objects: u64| depth.checked_sub(1).map(|d| objects >> d & 1 == 1);
    let mut at = skip(0);
    // A key comes first (after an object's `{` or a `,` in it).
    let mut key_due = false;
    loop {
        if key_due {
            at = skip(at);
            let Some(end) = string_end(bytes, at) else { return false };
            let key = bytes.get(at..end).unwrap_or_default();
            if innermost(depth, objects) != Some(true)
                || keys.iter().rev().take_while(|k| !k.is_empty()).any(|k| *k == key)
            {
                return false;
            }
            keys.push(key);
            copy(at, end, out);
            at = skip(end);
            if bytes.get(at) != Some(&b':') {
                return false;
            }
            copy(at, at + 1, out);
            at = skip(at + 1);
        }
        // A value (or the end of an empty container).
        // Where the value's text starts (copied once the value is read).
        let mut start = at;
        match bytes.get(at) {
            Some(b'{' | b'[') => {
                if depth >= MAX_DEPTH {
                    return false;
                }
                let object = bytes.get(at) == Some(&b'{');
                objects = (objects & !(1 << depth)) | (u64::from(object) << depth);
                depth += 1;
                if object {
                    keys.push(&[]);
                }
                copy(at, at + 1, out);
                at = skip(at + 1);
                start = at;
                // Not empty: its first item (or key) next; empty: closed below.
                if !matches!(bytes.get(at), Some(b'}' | b']')) {
                    key_due = object;
                    continue;
                }
            }
            Some(b'"') => match string_end(bytes, at) {
                Some(end) => at = end,
                None => return false,
            },
            Some(b't') if bytes.get(at..at + 4) == Some(b"true") => at += 4,
            Some(b'f') if bytes.get(at..at + 5) == Some(b"false") => at += 5,
            Some(b'n') if bytes.get(at..at + 4) == Some(b"null") => at += 4,
            Some(b'-' | b'0'..=b'9') => match integer_end(bytes, at) {
                Some(end) => at = end,
                None => return false,
            },
            _ => return false,
        }
        copy(start, at, out);
        // After a value: `,` goes on, a closer ends its container (and maybe more).
        loop {
            at = skip(at);
            match (bytes.get(at), innermost(depth, objects)) {
                (None, None) => return true,
                (Some(b','), Some(object)) => {
                    copy(at, at + 1, out);
                    at = skip(at + 1);
                    key_due = object;
                    break;
                }
                (Some(b'}'), Some(true)) => {
                    depth -= 1;
                    while keys.pop().is_some_and(|k| !k.is_empty()) {}
                    copy(at, at + 1, out);
                    at += 1;
                }
                (Some(b']'), Some(false)) => {
                    depth -= 1;
                    copy(at, at + 1, out);
                    at += 1;
                }
                _ => return false,
            }
        }
    }
}

/// The end (past the closing quote) of the string whose quote is at `at`, when it is
/// escaped as serde_json escapes: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, another
/// control character as `\u00xx` (lowercase), nothing else escaped, no raw control
/// character.
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    loop {
        let run = bytes.get(i..)?;
        let stop = i + memchr::memchr2(b'"', b'\\', run)?;
        if bytes.get(i..stop)?.iter().any(|&b| b < 0x20) {
            return None;
        }
        i = stop;
        if bytes.get(i) == Some(&b'"') {
            return Some(i + 1);
        }
        match bytes.get(i + 1)? {
            b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
            b'u' => {
                let hex = bytes.get(i + 2..i + 6)?;
                let [b'0', b'0', hi @ (b'0' | b'1'), lo] = *hex else { return None };
                let lo = match lo {
                    b'0'..=b'9' => lo - b'0',
                    b'a'..=b'f' => lo - b'a' + 10,
                    _ => return None,
                };
                let code = (hi - b'0') * 16 + lo;
                // The five with a short escape are written short.
                if matches!(code, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d) {
                    return None;
                }
                i += 6;
            }
            _ => return None,
        }
    }
}

/// The end of the integer at `at`, when serde_json keeps it as an integer and writes it
/// back the same: `0`, or no leading zero, in `i64` when negative (not `-0`) and `u64`
/// otherwise; no fraction or exponent.
fn integer_end(bytes: &[u8], at: usize) -> Option<usize> {
    let negative = bytes.get(at) == Some(&b'-');
    let digits_from = at + usize::from(negative);
    let mut end = digits_from;
    while bytes.get(end).is_some_and(u8::is_ascii_digit) {
        end += 1;
    }
    let digits = bytes.get(digits_from..end)?;
    if digits.is_empty() || (digits.len() > 1 && digits.first() == Some(&b'0')) {
        return None;
    }
    if matches!(bytes.get(end), Some(b'.' | b'e' | b'E')) {
        return None;
    }
    let text = std::str::from_utf8(bytes.get(at..end)?).ok()?;
    let fits = if negative { text.parse::<i64>().is_ok_and(|n| n != 0) } else { text.parse::<u64>().is_ok() };
    fits.then_some(end)
}

#[cfg(test)]
mod tests {
    use super::is_compact;
    use serde_json::Value;

    /// What the check promises: a text it accepts is the one serde_json writes for it.
    fn promise(text: &str) {
        if is_compact(text) {
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(value.to_string(), text);
        }
    }

    #[test]
    fn compact_texts_are_taken_and_others_are_not() {
        for text in [
            r#"{"city":"Paris","days":3}"#,
            "{}",
            "[]",
            r#"{"a":[1,-2,{"b":null,"c":[true,false]}],"d":"\"\\\n\t\u001f/é"}"#,
            "18446744073709551615",
            "-9223372036854775808",
            r#"{"a":{},"b":[[]],"c":[{}]}"#,
        ] {
            assert!(is_compact(text), "{text}");
            promise(text);
        }
        for text in [
            r#"{"city": "Paris"}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a":1.0}"#,
            r#"{"a":1e2}"#,
            "-0",
            "18446744073709551616",
            "-9223372036854775809",
            r#""\/""#,
            r#""\u00e9""#,
            r#""\u000a""#,
            r#""\u001F""#,
            "[1 ]",
            r#"{"a":{"b":1},"b":1,"a":2}"#,
            "01",
        ] {
            assert!(!is_compact(text), "{text}");
        }
        // Deep nesting is left to the value (and written by serde_json).
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert!(!is_compact(&deep));
        let value: Value = serde_json::from_str(&deep).unwrap();
        let mut out = Vec::new();
        super::write(&mut out, &value);
        assert_eq!(out, deep.as_bytes());
    }

    /// A text with whitespace between its tokens is minified to serde_json's text when
    /// the check takes it without the whitespace; whitespace inside strings is kept, and
    /// anything the check refuses is refused still.
    #[test]
    fn whitespace_between_tokens_is_taken_out() {
        let minified = |t: &str| super::minified(t);
        assert_eq!(
            minified(
                r#" { "city" : "Par is" ,"days":3 , "x": [ 1 , {} , [ ] ] }
"#
            )
            .as_deref(),
            Some(r#"{"city":"Par is","days":3,"x":[1,{},[]]}"#)
        );
        assert_eq!(minified(r#"{"a":1}"#).as_deref(), Some(r#"{"a":1}"#));
        for refused in [r#"{"a": 1.5}"#, r#"{"a": 1, "a": 2}"#, r#"{"a": "\u00e9"}"#, "[1 2]", "[1,]", "{} {}", ""] {
            assert_eq!(minified(refused), None, "{refused}");
        }
    }

    /// Keys may repeat in different objects.
    #[test]
    fn the_same_key_in_two_objects_is_no_duplicate() {
        assert!(is_compact(r#"{"a":{"a":1},"b":{"a":2}}"#));
        assert!(is_compact(r#"[{"a":1},{"a":2}]"#));
    }

    proptest::proptest! {
        /// `write` writes the bytes serde_json writes, for any value.
        #[test]
        fn write_is_serde_jsons_writer(text in json()) {
            let value: Value = serde_json::from_str(&text).unwrap();
            let mut out = Vec::new();
            super::write(&mut out, &value);
            proptest::prop_assert_eq!(String::from_utf8(out).unwrap(), value.to_string());
        }

        /// A value written pretty is minified to what serde_json writes compact; any text
        /// minified is the one written.
        #[test]
        fn pretty_values_are_minified(text in json()) {
            let value: Value = serde_json::from_str(&text).unwrap();
            let pretty = serde_json::to_string_pretty(&value).unwrap();
            if !has_float(&value) {
                proptest::prop_assert_eq!(super::minified(&pretty), Some(value.to_string()));
            }
            for t in [&text, &pretty] {
                if let Some(m) = super::minified(t) {
                    proptest::prop_assert_eq!(m, value.to_string());
                }
            }
        }

        /// Any value serde_json writes is taken; any text taken is the one written.
        #[test]
        fn written_values_are_compact(text in json()) {
            let value: Value = serde_json::from_str(&text).unwrap();
            let written = value.to_string();
            if !has_float(&value) {
                proptest::prop_assert!(is_compact(&written), "{}", written);
            }
            promise(&text);
        }
    }

    fn has_float(value: &Value) -> bool {
        match value {
            Value::Number(n) => n.is_f64(),
            Value::Array(items) => items.iter().any(has_float),
            Value::Object(members) => members.values().any(has_float),
            _ => false,
        }
    }

    /// JSON texts, compact or not (spaces, escapes, floats, repeated keys).
    fn json() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just("null".to_owned()),
            Just("true".to_owned()),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            Just("1.5".to_owned()),
            Just("-0".to_owned()),
            "[a-z\"\\\\/\u{e9}\u{1}\n]{0,6}".prop_map(|s| Value::String(s).to_string()),
            Just(r#""\u00e9\/""#.to_owned()),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
                proptest::collection::vec(("[ab]{1,2}", inner), 0..4).prop_map(|kv| {
                    let members: Vec<String> =
                        kv.iter().map(|(k, v)| format!("{}:{v}", Value::String(k.clone()))).collect();
                    format!("{{{}}}", members.join(","))
                }),
                Just(" [ 1 , 2 ] ".trim().to_owned()),
            ]
        })
    }
}
