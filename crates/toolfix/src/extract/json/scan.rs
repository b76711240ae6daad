//! A bracket- and string-aware scanner: where a JSON value written in text ends, and the
//! top-level fields of an object, without building a value.
//!
//! Linear in the bytes it looks at; no recursion (one depth counter).

use crate::extract::text::skip_ws;
use crate::span::Span;
use std::borrow::Cow;

/// Where a value that starts at some byte ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// One past the last byte of the value.
    Closed(usize),
    /// The text ended before the value did (cut off).
    Open,
}

/// Bytes allowed in a bare JSON literal or number (and in Python-ish `True`/`None`).
fn is_literal_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-' | b'_')
}

/// Where the string that opens with a `"` at `start` ends (one past the closing quote).
pub(crate) fn string_end(bytes: &[u8], start: usize) -> End {
    let mut i = start + 1;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 2,
            b'"' => return End::Closed(i + 1),
            _ => i += 1,
        }
    }
    End::Open
}

/// Where the value that starts at byte `start` of `text` ends. `start` must be the value's
/// first byte (`{`, `[`, `"`, or the start of a literal); `None` when it is none of them.
pub(crate) fn value_end(text: &str, start: usize) -> Option<End> {
    let bytes = text.as_bytes();
    match *bytes.get(start)? {
        b'{' | b'[' => Some(container_end(bytes, start)),
        b'"' => Some(string_end(bytes, start)),
        b if is_literal_byte(b) => {
            let mut i = start;
            while bytes.get(i).is_some_and(|&b| is_literal_byte(b)) {
                i += 1;
            }
            Some(if i == bytes.len() { End::Open } else { End::Closed(i) })
        }
        _ => None,
    }
}

/// Where the array or object opening at `start` closes. Any closer closes any opener: the
/// model's brackets are counted, not checked.
fn container_end(bytes: &[u8], start: usize) -> End {
    let mut depth = 0usize;
    let mut i = start;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => match string_end(bytes, i) {
                End::Closed(e) => {
                    i = e;
                    continue;
                }
                End::Open => return End::Open,
            },
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return End::Closed(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    End::Open
}

/// One top-level field of an object as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Field<'a> {
    /// The key, unescaped.
    pub(crate) key: Cow<'a, str>,
    /// The value's bytes in the text (to the end of the text when it was cut off).
    pub(crate) value: Span,
    /// False when the text ended inside the value.
    pub(crate) complete: bool,
}

/// The top-level fields of an object as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Object<'a> {
    pub(crate) fields: Vec<Field<'a>>,
    /// One past the closing brace, or the end of the text when it was cut off.
    pub(crate) end: usize,
    /// True when the closing brace was found.
    pub(crate) closed: bool,
}

impl<'a> Object<'a> {
    /// The field named `key`, if any (the first one).
    pub(crate) fn get(&self, key: &str) -> Option<&Field<'a>> {
        self.fields.iter().find(|f| f.key == key)
    }
}

/// Decode the JSON string literal `lit` (quotes included).
pub(crate) fn decode_string(lit: &str) -> Option<Cow<'_, str>> {
    let inner = lit.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        serde_json::from_str::<String>(lit).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

/// Read the object that opens at byte `start` (a `{`): its top-level keys and the spans of
/// their values. `None` when it is not written as a JSON object with double-quoted keys
/// (the caller may then try salvage on the whole text).
pub(crate) fn walk_object(text: &str, start: usize) -> Option<Object<'_>> {
    let bytes = text.as_bytes();
    if bytes.get(start) != Some(&b'{') {
        return None;
    }
    let mut fields = Vec::new();
    let mut i = skip_ws(text, start + 1);
    let open = |fields| Some(Object { fields, end: text.len(), closed: false });
    loop {
        match bytes.get(i) {
            None => return open(fields),
            Some(b'}') => {
                return Some(Object { fields, end: i + 1, closed: true });
            }
            Some(b'"') => {}
            Some(_) => return None,
        }
        let key_end = match string_end(bytes, i) {
            End::Closed(e) => e,
            End::Open => return open(fields),
        };
        let key = decode_string(text.get(i..key_end)?)?;
        i = skip_ws(text, key_end);
        match bytes.get(i) {
            None => return open(fields),
            Some(b':') => {}
            Some(_) => return None,
        }
        i = skip_ws(text, i + 1);
        if i >= bytes.len() {
            return open(fields);
        }
        match value_end(text, i)? {
            End::Closed(e) => {
                fields.push(Field { key, value: Span::new(i, e), complete: true });
                i = skip_ws(text, e);
            }
            End::Open => {
                fields.push(Field { key, value: Span::new(i, text.len()), complete: false });
                return open(fields);
            }
        }
        match bytes.get(i) {
            None => return open(fields),
            Some(b',') => i = skip_ws(text, i + 1),
            Some(b'}') => {
                return Some(Object { fields, end: i + 1, closed: true });
            }
            Some(_) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends() {
        let t = r#"x {"a": "}", "b": [1, {"c": "\""}]} y"#;
        assert_eq!(value_end(t, 2), Some(End::Closed(t.len() - 2)));
        assert_eq!(value_end(r#"{"a": "#, 0), Some(End::Open));
        assert_eq!(value_end("12, 3", 0), Some(End::Closed(2)));
        assert_eq!(value_end(" 1", 0), None);
    }

    #[test]
    fn walks() {
        let t = r#"{"name": "f", "arguments": {"x": [1, "]"]}} tail"#;
        let o = walk_object(t, 0).unwrap();
        assert!(o.closed);
        assert_eq!(&t[o.get("arguments").unwrap().value.range()], r#"{"x": [1, "]"]}"#);
        assert_eq!(&t[o.end..], " tail");
        let cut = walk_object(r#"{"name": "f", "arguments": {"x": 1"#, 0).unwrap();
        assert!(!cut.closed);
        assert!(!cut.get("arguments").unwrap().complete);
        assert!(walk_object("{name: 1}", 0).is_none());
    }
}
