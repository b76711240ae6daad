//! JSON pointers (RFC 6901): building them and mapping them back to original text.

use serde_json::Value;
use std::collections::HashMap;

/// Append `key` to `path` as one escaped segment.
pub(crate) fn push(path: &mut String, key: &str) {
    path.push('/');
    if !key.contains(['~', '/']) {
        path.push_str(key);
        return;
    }
    for c in key.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

/// Append array index `index` to `path`.
pub(crate) fn push_index(path: &mut String, index: usize) {
    use std::fmt::Write as _;
    let _ = write!(path, "/{index}");
}

/// `path` with `key` appended.
pub(crate) fn join(path: &str, key: &str) -> String {
    let mut p = path.to_owned();
    push(&mut p, key);
    p
}

/// True when `inner` is `outer` or lies below it.
pub(crate) fn is_within(inner: &str, outer: &str) -> bool {
    outer.is_empty() || inner == outer || (inner.starts_with(outer) && inner.as_bytes().get(outer.len()) == Some(&b'/'))
}

/// The byte span of every value in strict JSON text, by JSON pointer.
#[derive(Debug, Default)]
pub(crate) struct TextIndex<'t> {
    text: &'t str,
    spans: Spans,
}

/// Up to this many values, spans are looked up by comparing pointers in order (cheaper
/// than hashing each for the small arguments of most calls); past it, by a hash map.
const SCAN_SPANS: usize = 24;

#[derive(Debug)]
enum Spans {
    Few(Vec<(String, (usize, usize))>),
    Many(HashMap<String, (usize, usize)>),
}

impl Default for Spans {
    fn default() -> Self {
        Spans::Few(Vec::new())
    }
}

impl Spans {
    fn insert(&mut self, path: &str, span: (usize, usize)) {
        match self {
            Spans::Few(list) if list.len() < SCAN_SPANS => list.push((path.to_owned(), span)),
            Spans::Few(list) => {
                let mut map: HashMap<String, (usize, usize)> = std::mem::take(list).into_iter().collect();
                map.insert(path.to_owned(), span);
                *self = Spans::Many(map);
            }
            Spans::Many(map) => {
                map.insert(path.to_owned(), span);
            }
        }
    }

    fn get(&self, path: &str) -> Option<(usize, usize)> {
        match self {
            // The last of equal pointers wins, as in the map (a key given twice).
            Spans::Few(list) => list.iter().rev().find(|(p, _)| p == path).map(|(_, s)| *s),
            Spans::Many(map) => map.get(path).copied(),
        }
    }
}

enum Step {
    Value,
    After,
}

struct Frame {
    is_object: bool,
    prefix_len: usize,
    index: usize,
    start: usize,
}

impl<'t> TextIndex<'t> {
    /// Index strict JSON text; `None` when it is not strict JSON as expected.
    pub(crate) fn build(text: &'t str) -> Option<TextIndex<'t>> {
        let b = text.as_bytes();
        let mut spans = Spans::default();
        let mut stack: Vec<Frame> = Vec::new();
        let mut path = String::new();
        let mut i = 0;
        let mut step = Step::Value;
        loop {
            i = skip_ws(b, i);
            match step {
                Step::Value => {
                    let c = *b.get(i)?;
                    if c == b'{' || c == b'[' {
                        stack.push(Frame { is_object: c == b'{', prefix_len: path.len(), index: 0, start: i });
                        i = skip_ws(b, i + 1);
                        let close = if c == b'{' { b'}' } else { b']' };
                        if b.get(i) == Some(&close) {
                            // Empty container: fall through to After at the close.
                            step = Step::After;
                            continue;
                        }
                        i = Self::open_member(text, &mut path, &mut stack, i)?;
                        continue;
                    }
                    let end = if c == b'"' { scan_string(b, i)? } else { scan_scalar(b, i) };
                    if end == i {
                        return None;
                    }
                    spans.insert(&path, (i, end));
                    i = end;
                    step = Step::After;
                }
                Step::After => {
                    let Some(frame) = stack.last_mut() else {
                        return (skip_ws(b, i) == b.len()).then_some(TextIndex { text, spans });
                    };
                    path.truncate(frame.prefix_len);
                    match b.get(i)? {
                        b',' => {
                            frame.index += 1;
                            i = Self::open_member(text, &mut path, &mut stack, skip_ws(b, i + 1))?;
                            step = Step::Value;
                        }
                        b'}' | b']' => {
                            let frame = stack.pop()?;
                            spans.insert(&path, (frame.start, i + 1));
                            if let Some(parent) = stack.last() {
                                path.truncate(parent.prefix_len);
                            }
                            i += 1;
                            step = Step::After;
                        }
                        _ => return None,
                    }
                }
            }
        }
    }

    /// Push the next member's segment; for objects read its key and colon. Returns the
    /// offset of the member's value.
    fn open_member(text: &str, path: &mut String, stack: &mut [Frame], i: usize) -> Option<usize> {
        let b = text.as_bytes();
        let frame = stack.last()?;
        if frame.is_object {
            let end = scan_string(b, i)?;
            let quoted = text.get(i..end)?;
            match quoted.get(1..quoted.len() - 1) {
                Some(key) if !key.contains('\\') => push(path, key),
                _ => push(path, &serde_json::from_str::<String>(quoted).ok()?),
            }
            let colon = skip_ws(b, end);
            (b.get(colon) == Some(&b':')).then_some(colon + 1)
        } else {
            push_index(path, frame.index);
            Some(i)
        }
    }

    /// The original text of the value at `pointer`.
    pub(crate) fn text_at(&self, pointer: &str) -> Option<&'t str> {
        let (s, e) = self.spans.get(pointer)?;
        self.text.get(s..e)
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

fn scan_string(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let mut j = i + 1;
    loop {
        match b.get(j)? {
            b'"' => return Some(j + 1),
            b'\\' => j += 2,
            _ => j += 1,
        }
    }
}

fn scan_scalar(b: &[u8], mut i: usize) -> usize {
    while let Some(c) = b.get(i) {
        if matches!(c, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r') {
            break;
        }
        i += 1;
    }
    i
}

/// Moves made by repairs (renames, unwrapping, re-nesting): new prefix to old prefix.
#[derive(Debug, Default, Clone)]
pub(crate) struct Moves(Vec<(String, String)>);

impl Moves {
    pub(crate) fn record(&mut self, new: String, old: String) {
        self.0.push((new, old));
    }

    /// Where the value now at `path` was in the original.
    pub(crate) fn origin(&self, path: &str) -> String {
        let mut p = path.to_owned();
        for (new, old) in self.0.iter().rev() {
            if is_within(&p, new) {
                let rest = p.get(new.len()..).unwrap_or_default().to_owned();
                p = format!("{old}{rest}");
            }
        }
        p
    }
}

const MAX_RENDER_DEPTH: usize = 256;

/// Serialise `value`, copying the original text of every subtree that is unchanged
/// since `original` (so numbers and escapes stay as written).
pub(crate) fn render(value: &Value, original: &Value, index: &TextIndex<'_>, moves: &Moves) -> String {
    let mut out = String::with_capacity(index.text.len() + 16);
    let mut path = String::new();
    let mut cx = Render { out: &mut out, original, index, moves };
    cx.value(value, Some(original), &mut path, 0);
    out
}

struct Render<'r, 't> {
    out: &'r mut String,
    original: &'r Value,
    index: &'r TextIndex<'t>,
    moves: &'r Moves,
}

impl Render<'_, '_> {
    /// Write `value`, now at `path`. `before` is the original value at `path` when there are
    /// no moves (found walking alongside, without a pointer lookup).
    fn value(&mut self, value: &Value, before: Option<&Value>, path: &mut String, depth: usize) {
        let moved;
        let (origin, before) = if self.moves.0.is_empty() {
            (path.as_str(), before)
        } else {
            moved = self.moves.origin(path);
            (moved.as_str(), self.original.pointer(&moved))
        };
        if before == Some(value)
            && let Some(text) = self.index.text_at(origin)
        {
            self.out.push_str(text);
            return;
        }
        if depth > MAX_RENDER_DEPTH {
            self.scalar(value);
            return;
        }
        let len = path.len();
        match value {
            Value::Object(map) => {
                self.out.push('{');
                for (n, (k, v)) in map.iter().enumerate() {
                    if n > 0 {
                        self.out.push_str(", ");
                    }
                    push_quoted(self.out, k);
                    self.out.push_str(": ");
                    push(path, k);
                    let child = before.and_then(|b| b.as_object()).and_then(|m| m.get(k));
                    self.value(v, child, path, depth + 1);
                    path.truncate(len);
                }
                self.out.push('}');
            }
            Value::Array(list) => {
                self.out.push('[');
                for (n, v) in list.iter().enumerate() {
                    if n > 0 {
                        self.out.push_str(", ");
                    }
                    push_index(path, n);
                    let child = before.and_then(|b| b.as_array()).and_then(|l| l.get(n));
                    self.value(v, child, path, depth + 1);
                    path.truncate(len);
                }
                self.out.push(']');
            }
            other => self.scalar(other),
        }
    }

    fn scalar(&mut self, value: &Value) {
        use std::fmt::Write as _;
        let _ = write!(self.out, "{value}");
    }
}

/// `key` as a JSON string.
fn push_quoted(out: &mut String, key: &str) {
    if key.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push('"');
        out.push_str(key);
        out.push('"');
    } else {
        out.push_str(&Value::String(key.to_owned()).to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_spans() {
        let text = r#" {"a": [1.10, {"b~/": 12345678901234567890}], "c": "x\"y", "e": {}, "f": []} "#;
        let idx = TextIndex::build(text).unwrap();
        assert_eq!(idx.text_at("/a/0"), Some("1.10"));
        assert_eq!(idx.text_at("/a/1/b~0~1"), Some("12345678901234567890"));
        assert_eq!(idx.text_at("/c"), Some(r#""x\"y""#));
        assert_eq!(idx.text_at("/e"), Some("{}"));
        assert_eq!(idx.text_at("/f"), Some("[]"));
        assert_eq!(idx.text_at(""), Some(text.trim()));
    }

    #[test]
    fn index_spans_many_and_repeated() {
        let members: Vec<String> = (0..40).map(|i| format!(r#""k{i}": {i}.0"#)).collect();
        let text = format!(r#"{{{}, "k3": "last", "a/b": {{"c~d": 1}}}}"#, members.join(", "));
        let idx = TextIndex::build(&text).unwrap();
        assert!(matches!(idx.spans, Spans::Many(_)));
        assert_eq!(idx.text_at("/k39"), Some("39.0"));
        assert_eq!(idx.text_at("/k3"), Some(r#""last""#), "a key given twice: the last wins, as in the value");
        assert_eq!(idx.text_at("/a~1b/c~0d"), Some("1"));
        let few = TextIndex::build(r#"{"k": 1, "k": 2}"#).unwrap();
        assert_eq!(few.text_at("/k"), Some("2"));
    }

    #[test]
    fn render_keeps_unchanged_text() {
        let text = r#"{"a": 1.10, "big": 12345678901234567890, "n": "5"}"#;
        let idx = TextIndex::build(text).unwrap();
        let original: Value = serde_json::from_str(text).unwrap();
        let mut v = original.clone();
        v["n"] = Value::from(5);
        let out = render(&v, &original, &idx, &Moves::default());
        assert_eq!(out, r#"{"a": 1.10, "big": 12345678901234567890, "n": 5}"#);
    }

    #[test]
    fn moves_map_back() {
        let mut m = Moves::default();
        m.record(String::new(), "/arguments".into());
        m.record("/ticketId".into(), "/ticket_id".into());
        assert_eq!(m.origin("/ticketId/x"), "/arguments/ticket_id/x");
    }
}
