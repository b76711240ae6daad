//! JSON pointers (RFC 6901): building them and mapping them back to original text.

use serde_json::Value;

mod parse;
mod render;
pub(crate) mod scan;
mod strict;
pub(crate) mod view;

pub(crate) use parse::{NotParsed, Scratch, parse_indexed};
pub(crate) use render::{Moves, Original, render, render_changed};
pub(crate) use strict::{Indexed, index_strict, value_of};
pub(crate) use view::{IndexJson, StrictView};

/// True when `key` holds a byte a pointer segment escapes (`~`, `/`): eight bytes at a
/// time (keys are short; a byte loop over a table cost twice as much per key). The bytes
/// past the last whole word are read as the word that ends the key (overlapping the one
/// before it), and a key shorter than a word as its first and last four bytes (which
/// overlap): no copy of a partial word (a call to `memcpy` for each key), no byte loop but
/// for keys of under four bytes.
pub(crate) fn needs_escape(key: &str) -> bool {
    // A lane is flagged only when some lane truly holds the byte (a false flag lies above
    // a true one), so "any lane flagged" is exact; a byte read twice changes nothing.
    let hit = |x: u64| scan::lanes_equal(x, b'~') | scan::lanes_equal(x, b'/') != 0;
    let b = key.as_bytes();
    if let Some(last) = b.last_chunk::<8>() {
        let mut words = b.chunks_exact(8);
        let whole = words.by_ref().any(|chunk| {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            hit(u64::from_le_bytes(word))
        });
        return whole || (!words.remainder().is_empty() && hit(u64::from_le_bytes(*last)));
    }
    match (b.first_chunk::<4>(), b.last_chunk::<4>()) {
        (Some(first), Some(last)) => {
            hit(u64::from(u32::from_le_bytes(*first)) | u64::from(u32::from_le_bytes(*last)) << 32)
        }
        _ => b.iter().any(|&c| c == b'~' || c == b'/'),
    }
}

/// Append `key` to `path` as one escaped segment.
pub(crate) fn push(path: &mut String, key: &str) {
    if !needs_escape(key) {
        push_plain(path, key);
        return;
    }
    path.push('/');
    for c in key.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

/// Append `key`, which needs no escaping (not checked here), to `path`.
fn push_plain(path: &mut String, key: &str) {
    path.reserve(key.len() + 1);
    path.push('/');
    path.push_str(key);
}

/// Append array index `index` to `path`.
pub(crate) fn push_index(path: &mut String, index: usize) {
    use std::fmt::Write as _;
    path.push('/');
    // Most arrays are short: one digit without the formatting machinery.
    match u8::try_from(index) {
        Ok(digit @ 0..=9) => path.push(char::from(b'0' + digit)),
        _ => {
            let _ = write!(path, "{index}");
        }
    }
}

/// `path` with `key` appended.
pub(crate) fn join(path: &str, key: &str) -> String {
    let mut p = String::with_capacity(path.len() + key.len() + 1);
    p.push_str(path);
    push(&mut p, key);
    p
}

/// True when `inner` is `outer` or lies below it.
pub(crate) fn is_within(inner: &str, outer: &str) -> bool {
    outer.is_empty() || inner == outer || (inner.starts_with(outer) && inner.as_bytes().get(outer.len()) == Some(&b'/'))
}

/// `is_within(inner, &join(parent, key))`, for a `key` that needs no escaping (not
/// checked here), without building the joined path.
pub(crate) fn member_contains(inner: &str, parent: &str, key: &str) -> bool {
    let (i, p, k) = (inner.as_bytes(), parent.as_bytes(), key.as_bytes());
    let end = p.len() + 1 + k.len();
    // Lengths and separators first: most pointers differ there, before any text compare.
    i.get(p.len()) == Some(&b'/')
        && matches!(i.get(end), None | Some(b'/'))
        && i.get(p.len() + 1..end) == Some(k)
        && i.get(..p.len()) == Some(p)
}

/// `is_within(&join(parent, key), outer)`, for a `key` that needs no escaping (not
/// checked here), without building the joined path: `outer` is at or above `parent`, or
/// is the member itself.
pub(crate) fn member_within(parent: &str, key: &str, outer: &str) -> bool {
    is_within(parent, outer)
        || outer.strip_prefix(parent).and_then(|rest| rest.strip_prefix('/')).is_some_and(|rest| rest == key)
}

/// The byte span of every value in strict JSON text, as a tree walked by key or index (no
/// pointer string is built: render walks it alongside the value).
#[derive(Debug, Default)]
pub(crate) struct TextIndex<'t> {
    text: &'t str,
    /// Every value in text order: a container is followed by its members, each member's
    /// subtree before the next member's.
    nodes: Vec<Node>,
    /// Keys written with an escape, decoded (`Key::Decoded` indexes them).
    decoded: Vec<String>,
}

/// The nodes of a [`TextIndex`] without its text: kept by whoever holds the text (the
/// call pipeline keeps them beside the arguments it read, from [`parse_indexed`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct Nodes {
    nodes: Vec<Node>,
    decoded: Vec<String>,
}

impl Nodes {
    /// Where the whole value starts in its text.
    pub(crate) fn root_start(&self) -> Option<usize> {
        self.nodes.first().map(|n| n.start)
    }
}

/// A value in the text, by its position in [`TextIndex::nodes`].
pub(crate) type NodeId = usize;

#[derive(Clone, Copy, Debug)]
struct Node {
    start: usize,
    end: usize,
    /// The node after this one's subtree: its next sibling, when it has one.
    after: NodeId,
    /// The member's key, for a member of an object.
    key: Key,
    /// For an object: no key is given twice in it (a member's key then names one member).
    unique: bool,
    /// For a string: it holds an escape (set by [`index_strict`] only, which the view of
    /// [`view`] reads; the other readers leave it unset).
    escaped: bool,
}

#[derive(Clone, Copy, Debug)]
enum Key {
    None,
    /// The key's text between its quotes (no escape in it).
    Raw(usize, usize),
    /// A key written with an escape: its decoded form in `decoded`.
    Decoded(usize),
}

enum Step {
    Value,
    After,
}

struct Frame {
    node: NodeId,
    is_object: bool,
    /// A bit per key fingerprint seen in this object: a key whose bit is set already may
    /// repeat an earlier one.
    seen: u64,
    may_repeat: bool,
}

impl<'t> TextIndex<'t> {
    /// Index strict JSON text; `None` when it is not strict JSON as expected.
    pub(crate) fn build(text: &'t str) -> Option<TextIndex<'t>> {
        let b = text.as_bytes();
        let mut index = TextIndex { text, nodes: Vec::with_capacity(16), decoded: Vec::new() };
        let mut stack: Vec<Frame> = Vec::new();
        let mut key = Key::None;
        let mut i = 0;
        let mut step = Step::Value;
        loop {
            i = skip_ws(b, i);
            match step {
                Step::Value => {
                    let c = *b.get(i)?;
                    let id = index.nodes.len();
                    index.nodes.push(Node { start: i, end: i, after: id + 1, key, unique: false, escaped: false });
                    if c == b'{' || c == b'[' {
                        stack.push(Frame { node: id, is_object: c == b'{', seen: 0, may_repeat: false });
                        i = skip_ws(b, i + 1);
                        let close = if c == b'{' { b'}' } else { b']' };
                        if b.get(i) == Some(&close) {
                            // Empty container: fall through to After at the close.
                            step = Step::After;
                            continue;
                        }
                        (i, key) = index.open_member(&mut stack, i)?;
                        continue;
                    }
                    let end = if c == b'"' { scan_string(b, i)? } else { scan_scalar(b, i) };
                    if end == i {
                        return None;
                    }
                    index.nodes.get_mut(id)?.end = end;
                    i = end;
                    step = Step::After;
                }
                Step::After => {
                    let Some(frame) = stack.last() else {
                        return (skip_ws(b, i) == b.len()).then_some(index);
                    };
                    match b.get(i)? {
                        b',' => {
                            (i, key) = index.open_member(&mut stack, skip_ws(b, i + 1))?;
                            step = Step::Value;
                        }
                        b'}' | b']' => {
                            let after = index.nodes.len();
                            let node = index.nodes.get_mut(frame.node)?;
                            node.end = i + 1;
                            node.after = after;
                            node.unique = frame.is_object && !frame.may_repeat;
                            stack.pop();
                            i += 1;
                            step = Step::After;
                        }
                        _ => return None,
                    }
                }
            }
        }
    }

    /// The index of `text` from its nodes (read with it by [`parse_indexed`]).
    pub(crate) fn from_nodes(text: &'t str, nodes: Nodes) -> TextIndex<'t> {
        TextIndex { text, nodes: nodes.nodes, decoded: nodes.decoded }
    }

    /// Every node's span, sibling and key, and whether its object's keys are unique.
    #[cfg(test)]
    fn spans(&self) -> Vec<(usize, usize, usize, Option<&str>, bool)> {
        (0..self.nodes.len())
            .filter_map(|id| {
                let n = self.nodes.get(id)?;
                Some((n.start, n.end, n.after, self.key_of(id), n.unique))
            })
            .collect()
    }

    /// For a member of an object, read its key and colon. Returns the offset of the
    /// member's value and its key.
    fn open_member(&mut self, stack: &mut [Frame], i: usize) -> Option<(usize, Key)> {
        let b = self.text.as_bytes();
        let frame = stack.last_mut()?;
        if !frame.is_object {
            return Some((i, Key::None));
        }
        let end = scan_string(b, i)?;
        let quoted = b.get(i..end)?;
        let inner = quoted.get(1..quoted.len() - 1).filter(|k| !k.contains(&b'\\'));
        let key = if let Some(inner) = inner {
            let bit = 1u64 << (fingerprint(inner) % 64);
            frame.may_repeat |= frame.seen & bit != 0;
            frame.seen |= bit;
            Key::Raw(i + 1, end - 1)
        } else {
            frame.may_repeat = true;
            self.decoded.push(serde_json::from_str::<String>(self.text.get(i..end)?).ok()?);
            Key::Decoded(self.decoded.len() - 1)
        };
        let colon = skip_ws(b, end);
        (b.get(colon) == Some(&b':')).then_some((colon + 1, key))
    }

    /// The whole value.
    pub(crate) fn root(&self) -> Option<NodeId> {
        (!self.nodes.is_empty()).then_some(0)
    }

    /// The text of a value.
    pub(crate) fn text_of(&self, id: NodeId) -> Option<&'t str> {
        let node = self.nodes.get(id)?;
        self.text.get(node.start..node.end)
    }

    fn opens_with(&self, id: NodeId, c: u8) -> bool {
        self.nodes.get(id).and_then(|n| self.text.as_bytes().get(n.start)) == Some(&c)
    }

    /// The members (or elements) of a container, in text order.
    fn children(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        let end = self.nodes.get(id).map_or(id, |n| n.after);
        let mut next = id + 1;
        std::iter::from_fn(move || {
            let at = next;
            if at >= end {
                return None;
            }
            next = self.nodes.get(at).map_or(end, |n| n.after);
            Some(at)
        })
    }

    /// The value of member `key` of an object (the last, when the key is given twice: as
    /// in the parsed value).
    pub(crate) fn member(&self, id: NodeId, key: &str) -> Option<NodeId> {
        if !self.opens_with(id, b'{') {
            return None;
        }
        self.children(id).filter(|&c| self.key_is(c, key)).last()
    }

    /// [`TextIndex::member`], trying `guess` (a member of the same object) first.
    fn member_near(&self, id: NodeId, key: &str, guess: Option<NodeId>) -> Option<NodeId> {
        if let Some(g) = guess
            && self.nodes.get(id).is_some_and(|n| n.unique && g > id && g < n.after)
            && self.key_is(g, key)
        {
            return Some(g);
        }
        self.member(id, key)
    }

    /// The member after `child` in container `id`.
    fn next_sibling(&self, id: NodeId, child: NodeId) -> Option<NodeId> {
        let next = self.nodes.get(child)?.after;
        (next < self.nodes.get(id)?.after).then_some(next)
    }

    /// The span from `from` to where member `id`'s value starts, when its text is `, ` (past
    /// the first member), the key as written with no escape, and `": "`: what render
    /// writes before that value (a raw key of strict JSON holds no quote, backslash or
    /// control character, so written as a JSON string it is itself in quotes). Bytes are
    /// compared one by one: slices of a length not known here would each cost a `memcmp`.
    fn member_lead(&self, from: usize, first: bool, id: NodeId) -> Option<(usize, usize)> {
        let node = self.nodes.get(id)?;
        let Key::Raw(s, e) = node.key else { return None };
        let b = self.text.as_bytes();
        let at = |i: usize, c: u8| b.get(i) == Some(&c);
        let sep = if first { true } else { at(from, b',') && at(from + 1, b' ') };
        let fits =
            sep && s == from + if first { 1 } else { 3 } && node.start == e + 3 && at(e + 1, b':') && at(e + 2, b' ');
        fits.then_some((from, node.start))
    }

    /// True when object `id` gives no key twice (a member's key then names one member).
    fn is_unique(&self, id: NodeId) -> bool {
        self.nodes.get(id).is_some_and(|n| n.unique)
    }

    fn key_is(&self, id: NodeId, key: &str) -> bool {
        match self.nodes.get(id).map(|n| n.key) {
            // Bytes: a raw key's span lies between its quotes, no char boundary to check.
            Some(Key::Raw(s, e)) => self.text.as_bytes().get(s..e) == Some(key.as_bytes()),
            Some(Key::Decoded(d)) => self.decoded.get(d).is_some_and(|k| k == key),
            _ => false,
        }
    }

    /// Element `i` of an array.
    pub(crate) fn element(&self, id: NodeId, i: usize) -> Option<NodeId> {
        if !self.opens_with(id, b'[') {
            return None;
        }
        self.children(id).nth(i)
    }

    /// The value at JSON pointer `pointer`.
    pub(crate) fn node_at(&self, pointer: &str) -> Option<NodeId> {
        let mut id = self.root()?;
        if pointer.is_empty() {
            return Some(id);
        }
        let mut segments = pointer.strip_prefix('/')?.split('/');
        segments.try_for_each(|seg| {
            id = if self.opens_with(id, b'[') {
                self.element(id, index_segment(seg)?)?
            } else if seg.contains('~') {
                self.member(id, &unescape(seg)?)?
            } else {
                self.member(id, seg)?
            };
            Some(())
        })?;
        Some(id)
    }

    /// The original text of the value at `pointer`.
    #[cfg(test)]
    pub(crate) fn text_at(&self, pointer: &str) -> Option<&'t str> {
        self.text_of(self.node_at(pointer)?)
    }
}

impl TextIndex<'_> {
    /// True when `value` equals the value of the text at `id` (as `value == parsed`, read
    /// from the text without building it).
    pub(crate) fn same_as(&self, value: &Value, id: NodeId) -> bool {
        let Some(text) = self.text_of(id) else { return false };
        match (value, text.as_bytes().first()) {
            (Value::Object(map), Some(b'{')) => {
                if !self.nodes.get(id).is_some_and(|n| n.unique) {
                    // A key given twice: the text decides as a parse would (the last wins).
                    return serde_json::from_str::<Value>(text).is_ok_and(|v| v == *value);
                }
                // Keys first: an object that differs mostly differs in a key (a rename),
                // told without comparing a value.
                let mut n = 0;
                let mut keys = map.keys();
                let same_keys = self.children(id).all(|c| {
                    n += 1;
                    let Some(key) = self.key_of(c) else { return false };
                    match keys.next() {
                        Some(k) if k == key => true,
                        _ => map.contains_key(key),
                    }
                });
                if !same_keys || n != map.len() {
                    return false;
                }
                let mut n = 0;
                let mut members = map.iter();
                let all = self.children(id).all(|c| {
                    n += 1;
                    let Some(key) = self.key_of(c) else { return false };
                    let v = match members.next() {
                        Some((k, v)) if k == key => Some(v),
                        _ => map.get(key),
                    };
                    v.is_some_and(|v| self.same_as(v, c))
                });
                all && n == map.len()
            }
            (Value::Array(list), Some(b'[')) => {
                let mut n = 0;
                let all = self.children(id).all(|c| {
                    n += 1;
                    list.get(n - 1).is_some_and(|v| self.same_as(v, c))
                });
                all && n == list.len()
            }
            (Value::String(s), Some(b'"')) => match text.get(1..text.len() - 1) {
                Some(inner) if memchr::memchr(b'\\', inner.as_bytes()).is_none() => inner == s,
                _ => serde_json::from_str::<String>(text).is_ok_and(|t| t == *s),
            },
            (Value::Number(n), _) => number_is(n, text),
            (Value::Bool(true), _) => text == "true",
            (Value::Bool(false), _) => text == "false",
            (Value::Null, _) => text == "null",
            _ => false,
        }
    }

    /// The key of a member.
    fn key_of(&self, id: NodeId) -> Option<&str> {
        match self.nodes.get(id)?.key {
            Key::Raw(s, e) => self.text.get(s..e),
            Key::Decoded(d) => self.decoded.get(d).map(String::as_str),
            Key::None => None,
        }
    }
}

/// True when number text `text` reads as `n` (as a JSON parse would: an integer that fits
/// is an integer, anything else a float).
fn number_is(n: &serde_json::Number, text: &str) -> bool {
    let b = text.as_bytes();
    // Not a number at all (a string, say, the number was coerced from): no parse, which
    // would build an error.
    if !matches!(b.first(), Some(b'-' | b'0'..=b'9')) {
        return false;
    }
    if !b.is_empty() && b.len() <= 19 && b.iter().all(u8::is_ascii_digit) && (b.len() == 1 || b.first() != Some(&b'0'))
    {
        return text.parse::<u64>().is_ok_and(|u| *n == serde_json::Number::from(u));
    }
    serde_json::from_str::<serde_json::Number>(text).is_ok_and(|t| t == *n)
}

/// A cheap hash of a key's text, to tell keys apart.
fn fingerprint(key: &[u8]) -> usize {
    let first = key.first().copied().unwrap_or_default() as usize;
    let last = key.last().copied().unwrap_or_default() as usize;
    key.len().wrapping_mul(31) ^ first.wrapping_mul(7) ^ last
}

/// An array index as a pointer writes it (`0`, `12`; no sign, no leading zero).
fn index_segment(seg: &str) -> Option<usize> {
    if seg.is_empty() || !seg.bytes().all(|b| b.is_ascii_digit()) || (seg.len() > 1 && seg.starts_with('0')) {
        return None;
    }
    seg.parse().ok()
}

/// A pointer segment unescaped (`~1` is `/`, `~0` is `~`); `None` for any other `~`.
fn unescape(seg: &str) -> Option<String> {
    let mut out = String::with_capacity(seg.len());
    let mut chars = seg.chars();
    while let Some(c) = chars.next() {
        match c {
            '~' => match chars.next()? {
                '0' => out.push('~'),
                '1' => out.push('/'),
                _ => return None,
            },
            c => out.push(c),
        }
    }
    Some(out)
}

/// The value at JSON pointer `pointer` (as [`Value::pointer`], without allocating for
/// segments that hold no `~`).
pub(crate) fn lookup<'v>(value: &'v Value, pointer: &str) -> Option<&'v Value> {
    if pointer.is_empty() {
        return Some(value);
    }
    let mut at = value;
    for seg in pointer.strip_prefix('/')?.split('/') {
        at = match at {
            Value::Object(map) if seg.contains('~') => map.get(&seg.replace("~1", "/").replace("~0", "~"))?,
            Value::Object(map) => map.get(seg)?,
            Value::Array(list) => list.get(array_index(seg)?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// An array index as `Value::pointer` reads it.
fn array_index(seg: &str) -> Option<usize> {
    if seg.starts_with('+') || (seg.starts_with('0') && seg.len() != 1) {
        return None;
    }
    seg.parse().ok()
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
        j += memchr::memchr2(b'"', b'\\', b.get(j..)?)?;
        match b.get(j)? {
            b'"' => return Some(j + 1),
            _ => j += 2,
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_read_as_a_parse_reads_them() {
        let n = |t: &str| serde_json::from_str::<serde_json::Number>(t).unwrap();
        for (number, text) in [(n("7"), "7"), (n("-3"), "-3"), (n("2.50"), "2.5"), (n("1e2"), "100.0"), (n("0"), "0")] {
            assert!(number_is(&number, text), "{text}");
        }
        // Text that is no number (a string the number was coerced from) is not equal.
        for text in ["\"7\"", "true", "null", "[7]", "", " 7"] {
            assert!(!number_is(&n("7"), text), "{text}");
        }
    }

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
        assert_eq!(idx.text_at("/k0"), Some("0.0"));
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
        let out = render(&v, Original::Value(&original), &idx, &Moves::default());
        assert_eq!(out, r#"{"a": 1.10, "big": 12345678901234567890, "n": 5}"#);
        assert_eq!(render(&v, Original::Text, &idx, &Moves::default()), out);
    }

    #[test]
    fn render_follows_moves() {
        let text = r#"{"a": 1.50, "keep": {"c": 2.0}, "w": ["x"]}"#;
        let idx = TextIndex::build(text).unwrap();
        let original: Value = serde_json::from_str(text).unwrap();
        let value = json!({"A": 1.5, "keep": {"c": 2.0}, "w": [["x"]]});
        let mut moves = Moves::default();
        moves.record("/A".into(), "/a".into());
        moves.record("/w/0".into(), "/w".into());
        moves.record("/w/0/0".into(), "/w/0".into());
        let want = r#"{"A": 1.50, "keep": {"c": 2.0}, "w": [["x"]]}"#;
        assert_eq!(render(&value, Original::Value(&original), &idx, &moves), want);
        assert_eq!(render(&value, Original::Text, &idx, &moves), want);
    }

    #[test]
    fn text_comparison_reads_values_as_a_parse_does() {
        let text = r#"{"i": 10, "f": 1.50, "e": 1e2, "neg": -3, "big": 18446744073709551616, "s": "a\u0062",
            "k\u0065y": [true, null, {}], "dup": {"x": 1, "x": 2}}"#;
        let idx = TextIndex::build(text).unwrap();
        let value: Value = serde_json::from_str(text).unwrap();
        let root = idx.root().unwrap();
        assert!(idx.same_as(&value, root));
        for (path, other) in [
            ("/i", json!(10.0)),
            ("/f", json!(1.5)),
            ("/e", json!(100)),
            ("/neg", json!(-3)),
            ("/s", json!("ab")),
            ("/key", json!([true, null, {}])),
            ("/dup", json!({"x": 2})),
        ] {
            let node = idx.node_at(path).unwrap();
            assert_eq!(idx.same_as(&other, node), value.pointer(path) == Some(&other), "{path}");
        }
        assert!(!idx.same_as(&json!({"x": 1}), idx.node_at("/dup").unwrap()));
        assert!(!idx.same_as(&json!([true, null]), idx.node_at("/key").unwrap()));
    }

    /// A JSON value of a few levels, objects and arrays of scalars.
    pub(crate) fn arb_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (-1.0e6f64..1.0e6).prop_map(Value::from),
            "[a-c~/\\\\\"é ]{0,4}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::vec(("[a-c~/]{0,3}", inner), 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Every JSON pointer into `value`.
    fn pointers(value: &Value) -> Vec<String> {
        let mut out = vec![String::new()];
        let mut stack = vec![(String::new(), value)];
        while let Some((path, v)) = stack.pop() {
            let children: Vec<(String, &Value)> = match v {
                Value::Object(m) => m.iter().map(|(k, c)| (join(&path, k), c)).collect(),
                Value::Array(l) => l.iter().enumerate().map(|(i, c)| (join(&path, &i.to_string()), c)).collect(),
                _ => Vec::new(),
            };
            for (p, c) in children {
                out.push(p.clone());
                stack.push((p, c));
            }
        }
        out
    }

    proptest::proptest! {
        /// The word-at-a-time test finds a `~` or `/` wherever a byte loop finds one (keys
        /// of every length around a word, the bytes near the two anywhere in them).
        #[test]
        fn needs_escape_reads_every_byte(key in "[a-z0./~}\\x{7f}é]{0,20}") {
            proptest::prop_assert_eq!(needs_escape(&key), key.bytes().any(|b| b == b'~' || b == b'/'));
        }

        /// Each value's text is found at its pointer; the text compares equal to the value
        /// and unequal to another; render by text and by value agree.
        #[test]
        fn index_and_render_agree_with_the_value(value in arb_value(), other in arb_value(), pretty: bool) {
            let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) }.unwrap();
            let idx = TextIndex::build(&text).unwrap();
            for p in pointers(&value) {
                let node = idx.node_at(&p).unwrap();
                let at: Value = serde_json::from_str(idx.text_of(node).unwrap()).unwrap();
                proptest::prop_assert_eq!(Some(&at), value.pointer(&p));
                proptest::prop_assert!(idx.same_as(&at, node));
                proptest::prop_assert_eq!(idx.same_as(&other, node), at == other);
            }
            let mut changed = value.clone();
            if let Some(slot) = pointers(&value).last().and_then(|p| changed.pointer_mut(p)) {
                *slot = other.clone();
            }
            let by_value = render(&changed, Original::Value(&value), &idx, &Moves::default());
            proptest::prop_assert_eq!(&render(&changed, Original::Text, &idx, &Moves::default()), &by_value);
            proptest::prop_assert_eq!(serde_json::from_str::<Value>(&by_value).unwrap(), changed);
        }
    }

    #[test]
    fn render_copies_untouched_members() {
        let text = r#"{"a": 1.50, "keep": {"c": 2.0, "d": [1,2]}, "n": "5", "x~y": 3}"#;
        let idx = TextIndex::build(text).unwrap();
        let mut v: Value = serde_json::from_str(text).unwrap();
        v["n"] = Value::from(5);
        let full = render(&v, Original::Text, &idx, &Moves::default());
        assert_eq!(full, r#"{"a": 1.50, "keep": {"c": 2.0, "d": [1,2]}, "n": 5, "x~y": 3}"#);
        for changed in [&["/n"][..], &["/n/deeper", "/keep/z"], &[""], &["/n", "/x~0y"]] {
            assert_eq!(render_changed(&v, Original::Text, &idx, &Moves::default(), Some(changed)), full, "{changed:?}");
        }
    }

    /// A change without its record is caught (in debug builds) where the member is copied.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "changed without a record")]
    fn render_catches_a_missing_record() {
        let text = r#"{"a": 1, "n": "5"}"#;
        let idx = TextIndex::build(text).unwrap();
        let mut v: Value = serde_json::from_str(text).unwrap();
        v["n"] = Value::from(5);
        let _ = render_changed(&v, Original::Text, &idx, &Moves::default(), Some(&["/a"]));
    }

    proptest::proptest! {
        /// The member tests without a joined path agree with [`is_within`] on it.
        #[test]
        fn member_tests_agree_with_joined_paths(
            parent in "(/[ab]{0,2}){0,3}",
            key in "[ab]{0,2}",
            other in "(/[ab]{0,2}){0,4}",
        ) {
            let joined = join(&parent, &key);
            proptest::prop_assert_eq!(member_contains(&other, &parent, &key), is_within(&other, &joined));
            proptest::prop_assert_eq!(member_within(&parent, &key, &other), is_within(&joined, &other));
        }
    }

    proptest::proptest! {
        /// Told every change (each top-level member replaced is named), render copies the
        /// rest and writes what it writes when it compares everything.
        #[test]
        fn render_told_the_changes_agrees(value in arb_value(), other in arb_value(), pick: proptest::sample::Index) {
            let text = serde_json::to_string(&value).unwrap();
            let idx = TextIndex::build(&text).unwrap();
            let mut changed = value.clone();
            let mut names: Vec<String> = Vec::new();
            if let Value::Object(map) = &mut changed
                && !map.is_empty()
            {
                let i = pick.index(map.len());
                if let Some((k, slot)) = map.iter_mut().nth(i) {
                    *slot = other.clone();
                    names.push(join("", k));
                }
            }
            let told: Vec<&str> = names.iter().map(String::as_str).collect();
            let full = render(&changed, Original::Text, &idx, &Moves::default());
            proptest::prop_assert_eq!(render_changed(&changed, Original::Text, &idx, &Moves::default(), Some(&told)), full);
        }
    }

    proptest::proptest! {
        /// The origin is what applying every move, latest first, to the path gives.
        #[test]
        fn origin_applies_every_move_latest_first(
            moves in proptest::collection::vec(("(/[ab~]{0,2}){0,3}", "(/[abc]{1,2}){0,2}"), 0..5),
            path in "(/[ab~]{0,2}){0,4}",
        ) {
            let mut m = Moves::default();
            for (new, old) in &moves {
                m.record(new.clone(), old.clone());
            }
            // The path, and each place a move ends at.
            for path in std::iter::once(&path).chain(moves.iter().map(|(new, _)| new)) {
                let mut expected = path.clone();
                for (new, old) in moves.iter().rev() {
                    if is_within(&expected, new) {
                        expected.replace_range(..new.len(), old);
                    }
                }
                proptest::prop_assert_eq!(m.origin(path), expected.clone());
                // Borrowed from a move only when that is the origin.
                if let Some(from) = m.moved_from(path) {
                    proptest::prop_assert_eq!(from, expected);
                }
            }
        }
    }

    proptest::proptest! {
        /// Told the changes of a rename, a replaced value and a dropped member at the top
        /// (what repair records for them), render writes what it writes when it compares
        /// everything: the untouched members copied as written, by the text's layout.
        #[test]
        fn render_told_renames_and_drops_agrees(
            members in proptest::collection::vec(("[a-e~/]{0,3}", arb_value()), 0..7),
            other in arb_value(),
            picks in proptest::collection::vec(proptest::prelude::any::<proptest::sample::Index>(), 3),
            layout in 0..3u8,
        ) {
            let value = Value::Object(members.into_iter().collect());
            let map = value.as_object().unwrap();
            let text = match layout {
                0 => serde_json::to_string(&value).unwrap(),
                1 => serde_json::to_string_pretty(&value).unwrap(),
                // `{"k": v, "l": w}` at the top, as render writes it (its leads copied).
                _ => {
                    let members: Vec<String> =
                        map.iter().map(|(k, v)| format!("{}: {v}", Value::String(k.clone()))).collect();
                    format!("{{{}}}", members.join(", "))
                }
            };
            let idx = TextIndex::build(&text).unwrap();
            let keys: Vec<&String> = map.keys().collect();
            let pick = |i: usize| picks.get(i).map(|p| p.index(keys.len().max(1)));
            let mut moves = Moves::default();
            let mut told: Vec<String> = Vec::new();
            let mut changed = map.clone();
            if let (Some(rename), Some(replace), Some(drop)) = (pick(0), pick(1), pick(2))
                && let Some(old) = keys.get(rename)
            {
                // Renamed in its place (to a name no other member has).
                let new = format!("{old}z{}", keys.len());
                let v = changed.shift_remove(*old).unwrap();
                changed.shift_insert(rename, new.clone(), v);
                moves.record(join("", &new), join("", old));
                told.push(join("", &new));
                if replace != rename && let Some(k) = keys.get(replace) {
                    *changed.get_mut(*k).unwrap() = other.clone();
                    told.push(join("", k));
                }
                if drop != rename && drop != replace && let Some(k) = keys.get(drop) {
                    changed.shift_remove(*k);
                    told.push(join("", k));
                }
            }
            let changed = Value::Object(changed);
            let told: Vec<&str> = told.iter().map(String::as_str).collect();
            let full = render(&changed, Original::Text, &idx, &moves);
            proptest::prop_assert_eq!(render_changed(&changed, Original::Text, &idx, &moves, Some(&told)), full);
        }
    }

    #[test]
    fn moves_map_back() {
        let mut m = Moves::default();
        m.record(String::new(), "/arguments".into());
        m.record("/ticketId".into(), "/ticket_id".into());
        assert_eq!(m.origin("/ticketId/x"), "/arguments/ticket_id/x");
    }
}
