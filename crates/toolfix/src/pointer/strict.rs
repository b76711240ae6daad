//! The strict read in two steps: [`index_strict`] reads strict JSON text into the nodes of
//! its [`TextIndex`](super::TextIndex) alone, no value built, and [`value_of`] builds the
//! value from them when it is wanted. A call the schema accepts as written is validated
//! over the index ([`view`](super::view)) and needs no value at all; the value of any other
//! call is built from the same nodes, with no second read of the text.
//!
//! Together the two answer exactly what [`parse_indexed`](super::parse_indexed) answers
//! (the same value, keys given twice, nodes and refusals; `tests` compare them on
//! generated and damaged text): the same byte steps (strings, numbers, literals, depth)
//! decide here, and whatever [`parse_indexed`](super::parse_indexed) leaves to
//! `serde_json` is left to it here too.

use super::parse::{Frame, MAX_DEPTH, NotParsed, Scratch, literal, number, scan_string, string, ws};
use super::{Key, Node, NodeId, Nodes};
use serde_json::{Map, Value};

/// Strict JSON text indexed: its nodes (string values and keys decoded where escaped), and
/// whether some object gives a key twice.
#[derive(Debug)]
pub(crate) struct Indexed {
    pub(crate) nodes: Nodes,
    pub(crate) dupes: bool,
}

/// Objects with at most this many members compare their keys pair by pair; larger ones
/// sort them.
const PAIRWISE_KEYS: usize = 8;

/// Index strict JSON `text`, working in the lists of `scratch` (which hold nothing after
/// it, whatever it answers). Refuses and defers exactly as
/// [`parse_indexed`](super::parse_indexed) does.
pub(crate) fn index_strict(text: &str, scratch: &mut Scratch) -> Result<Indexed, NotParsed> {
    let read = read(text, scratch);
    scratch.stack.clear();
    read
}

/// [`index_strict`], which empties the stack after a read that stopped early.
fn read(text: &str, scratch: &mut Scratch) -> Result<Indexed, NotParsed> {
    use NotParsed::Invalid;
    let b = text.as_bytes();
    let mut nodes: Vec<Node> = std::mem::take(&mut scratch.spare);
    if nodes.capacity() == 0 {
        nodes.reserve(16);
    }
    let mut decoded: Vec<String> = Vec::new();
    let stack = &mut scratch.stack;
    let mut dupes = false;
    let mut key = Key::None;
    let mut i = ws(b, 0);
    let mut at_value = true;
    loop {
        if at_value {
            let c = *b.get(i).ok_or(Invalid)?;
            let id = nodes.len();
            nodes.push(Node { start: i, end: i, after: id + 1, key, unique: false, escaped: false });
            key = Key::None;
            let (end, escaped) = match c {
                b'{' | b'[' => {
                    if stack.len() >= MAX_DEPTH {
                        return Err(NotParsed::Undecided);
                    }
                    let object = c == b'{';
                    stack.push(Frame {
                        node: id,
                        object,
                        start: 0,
                        escaped_key: false,
                        key: String::new(),
                        seen: 0,
                        may_repeat: false,
                    });
                    i = ws(b, i + 1);
                    if b.get(i) == Some(if object { &b'}' } else { &b']' }) {
                        at_value = false;
                        continue;
                    }
                    if object {
                        i = member(text, i, stack, &mut decoded, &mut key)?;
                    }
                    continue;
                }
                b'"' => {
                    let (end, escaped) = scan_string(b, i)?;
                    if escaped {
                        // Decoded to check its escapes as `serde_json` does (then again when
                        // read: escapes are rare in arguments).
                        string(text, i, end, true)?;
                    }
                    (end, escaped)
                }
                b't' => (literal(b, i, b"true", Value::Null)?.0, false),
                b'f' => (literal(b, i, b"false", Value::Null)?.0, false),
                b'n' => (literal(b, i, b"null", Value::Null)?.0, false),
                b'-' | b'0'..=b'9' => (number_end(text, i)?, false),
                _ => return Err(Invalid),
            };
            if let Some(node) = nodes.get_mut(id) {
                node.end = end;
                node.escaped = escaped;
            }
            i = end;
            at_value = false;
            continue;
        }
        i = ws(b, i);
        let Some(frame) = stack.last() else {
            return if i == b.len() && !nodes.is_empty() {
                Ok(Indexed { nodes: Nodes { nodes, decoded }, dupes })
            } else {
                Err(Invalid)
            };
        };
        match (b.get(i), frame.object) {
            (Some(b','), object) => {
                i = ws(b, i + 1);
                if object {
                    i = member(text, i, stack, &mut decoded, &mut key)?;
                }
                at_value = true;
            }
            (Some(&c @ (b'}' | b']')), object) if (c == b'}') == object => {
                let frame = stack.pop().ok_or(Invalid)?;
                let after = nodes.len();
                // Keys are compared only where their fingerprints or an escape say they may
                // repeat.
                let maybe = frame.may_repeat || frame.escaped_key;
                let repeats = object && maybe && keys_repeat(text, &nodes, &decoded, frame.node, after);
                dupes |= repeats;
                if let Some(node) = nodes.get_mut(frame.node) {
                    node.end = i + 1;
                    node.after = after;
                    node.unique = object && !repeats && !frame.escaped_key;
                }
                i += 1;
            }
            _ => return Err(Invalid),
        }
    }
}

/// Where the number at `i` ends: a plain integer of up to 18 digits checked here (what
/// [`number`] reads itself), any other token as [`number`] decides it.
#[inline]
fn number_end(text: &str, i: usize) -> Result<usize, NotParsed> {
    let b = text.as_bytes();
    let digits_from = if b.get(i) == Some(&b'-') { i + 1 } else { i };
    let mut end = digits_from;
    while b.get(end).is_some_and(u8::is_ascii_digit) {
        end += 1;
    }
    let len = end - digits_from;
    let plain = (1..=18).contains(&len)
        && (len == 1 || b.get(digits_from) != Some(&b'0'))
        && !(digits_from > i && len == 1 && b.get(digits_from) == Some(&b'0'))
        && !matches!(b.get(end), Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'));
    if plain { Ok(end) } else { Ok(number(text, i)?.0) }
}

/// Read a member's key and colon at `i`; returns where its value starts.
#[inline]
fn member(
    text: &str,
    i: usize,
    stack: &mut [Frame],
    decoded: &mut Vec<String>,
    key: &mut Key,
) -> Result<usize, NotParsed> {
    let b = text.as_bytes();
    if b.get(i) != Some(&b'"') {
        return Err(NotParsed::Invalid);
    }
    let (end, escaped) = scan_string(b, i)?;
    if escaped {
        let name = string(text, i, end, true)?;
        let frame = stack.last_mut().ok_or(NotParsed::Invalid)?;
        frame.escaped_key = true;
        decoded.push(name);
        *key = Key::Decoded(decoded.len() - 1);
    } else {
        let frame = stack.last_mut().ok_or(NotParsed::Invalid)?;
        let bit = 1u64 << (super::fingerprint(b.get(i + 1..end - 1).unwrap_or_default()) % 64);
        frame.may_repeat |= frame.seen & bit != 0;
        frame.seen |= bit;
        *key = Key::Raw(i + 1, end - 1);
    }
    let colon = ws(b, end);
    if b.get(colon) != Some(&b':') {
        return Err(NotParsed::Invalid);
    }
    Ok(ws(b, colon + 1))
}

/// The key of member node `node` (decoded).
#[inline]
pub(super) fn key_str<'t>(text: &'t str, decoded: &'t [String], node: &Node) -> Option<&'t str> {
    match node.key {
        Key::Raw(s, e) => text.get(s..e),
        Key::Decoded(d) => decoded.get(d).map(String::as_str),
        Key::None => None,
    }
}

/// The members (or elements) of container node `id`, whose subtree ends before `after`.
pub(super) fn children(nodes: &[Node], id: NodeId, after: NodeId) -> impl Iterator<Item = NodeId> + '_ {
    let mut next = id + 1;
    std::iter::from_fn(move || {
        let at = next;
        if at >= after {
            return None;
        }
        next = nodes.get(at).map_or(after, |n| n.after);
        Some(at)
    })
}

/// True when the object at node `id` (its subtree ending before `after`) gives a key twice
/// (keys compared decoded, as the parsed map compares them).
fn keys_repeat(text: &str, nodes: &[Node], decoded: &[String], id: NodeId, after: NodeId) -> bool {
    let key = |c: NodeId| nodes.get(c).and_then(|n| key_str(text, decoded, n));
    let count = children(nodes, id, after).take(PAIRWISE_KEYS + 1).count();
    if count < 2 {
        return false;
    }
    if count <= PAIRWISE_KEYS {
        return children(nodes, id, after)
            .enumerate()
            .any(|(n, c)| children(nodes, id, after).take(n).any(|earlier| key(earlier) == key(c)));
    }
    let mut keys: Vec<Option<&str>> = children(nodes, id, after).map(key).collect();
    keys.sort_unstable();
    keys.windows(2).any(|w| w.first() == w.last())
}

/// The value of strict JSON text indexed by [`index_strict`] as `nodes`: the value
/// [`parse_indexed`](super::parse_indexed) reads (the last of a key given twice wins, in
/// the first one's place). Containers are built on an explicit stack.
pub(crate) fn value_of(text: &str, nodes: &Nodes) -> Result<Value, NotParsed> {
    /// A container being built: where its subtree ends, its own key, what it holds.
    enum Open {
        Object(Map<String, Value>),
        Array(Vec<Value>),
    }
    let list = &nodes.nodes;
    let key_of = |node: &Node| key_str(text, &nodes.decoded, node).map(str::to_owned);
    let mut stack: Vec<(NodeId, Option<String>, Open)> = Vec::new();
    let mut root: Option<Value> = None;
    let place = |value: Value,
                 key: Option<String>,
                 stack: &mut Vec<(NodeId, Option<String>, Open)>,
                 root: &mut Option<Value>| {
        match stack.last_mut() {
            None => *root = Some(value),
            Some((_, _, Open::Object(map))) => {
                map.insert(key.unwrap_or_default(), value);
            }
            Some((_, _, Open::Array(items))) => items.push(value),
        }
    };
    for (id, node) in list.iter().enumerate() {
        while let Some((after, ..)) = stack.last()
            && *after <= id
        {
            if let Some((_, key, open)) = stack.pop() {
                let value = match open {
                    Open::Object(map) => Value::Object(map),
                    Open::Array(items) => Value::Array(items),
                };
                place(value, key, &mut stack, &mut root);
            }
        }
        let b = text.as_bytes();
        let value = match b.get(node.start) {
            Some(b'{') => {
                let count = children(list, id, node.after).count();
                stack.push((node.after, key_of(node), Open::Object(Map::with_capacity(count))));
                continue;
            }
            Some(b'[') => {
                let count = children(list, id, node.after).count();
                stack.push((node.after, key_of(node), Open::Array(Vec::with_capacity(count))));
                continue;
            }
            Some(b'"') => Value::String(string(text, node.start, node.end, node.escaped)?),
            Some(b't') => Value::Bool(true),
            Some(b'f') => Value::Bool(false),
            Some(b'n') => Value::Null,
            Some(_) => number(text, node.start)?.1,
            None => return Err(NotParsed::Invalid),
        };
        place(value, key_of(node), &mut stack, &mut root);
    }
    while let Some((_, key, open)) = stack.pop() {
        let value = match open {
            Open::Object(map) => Value::Object(map),
            Open::Array(items) => Value::Array(items),
        };
        place(value, key, &mut stack, &mut root);
    }
    root.ok_or(NotParsed::Invalid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pointer::{TextIndex, parse_indexed};

    /// The two steps against the one pass: the same answer, value, keys given twice and
    /// nodes (the `escaped` mark aside, which only this read sets).
    fn agrees(text: &str) {
        let one = parse_indexed(text, &mut Scratch::default());
        let mut scratch = Scratch::default();
        // Lists used by a read that stopped inside nested containers hold nothing after it.
        assert!(index_strict(r#"{"a": [{"b": [1, {"c": "#, &mut scratch).is_err());
        assert!(scratch.stack.is_empty());
        let two = index_strict(text, &mut scratch);
        match (one, two) {
            (Ok(p), Ok(i)) => {
                assert_eq!(value_of(text, &i.nodes).ok(), Some(p.value), "{text}");
                assert_eq!(i.dupes, p.dupes, "{text}");
                let spans = |n: Nodes| {
                    TextIndex::from_nodes(text, n)
                        .spans()
                        .into_iter()
                        .map(|(a, b, c, k, u)| (a, b, c, k.map(str::to_owned), u))
                        .collect::<Vec<_>>()
                };
                assert_eq!(spans(i.nodes), spans(p.nodes), "{text}");
            }
            (Err(a), Err(b)) => assert_eq!(a, b, "{text}"),
            (one, two) => panic!("{text}: {one:?} against {two:?}"),
        }
    }

    #[test]
    fn reads_as_the_one_pass_reads() {
        for text in [
            r#"{"a": [1, -2, 3.5, 1e400, "x", null, true, false], "b": {}, "c": []}"#,
            r#"{"a": 1, "a": 2, "b": {"c": [{"d": 1, "d": 1}]}}"#,
            r#"{"\u0061": 1, "a": 2, "k\"": "v\n\u00e9\ud83d\ude00"}"#,
            r#"{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8, "i": 9, "a": 10}"#,
            r#"{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8, "i": 9, "j": 10}"#,
            r#"{"a": {"x": 1}, "a": [2]}"#,
            "[[], {}, [[1]], {\"a\": {\"b\": {}}}]",
            "12345678901234567890",
            "-0",
            "1E5",
            " [ 1 , 2 ] ",
            "\"s\"",
            "\"\\u00e9\"",
            "{} x",
            "{",
            "[1,]",
            "{\"a\":1,}",
            "[01]",
            "[1}",
            "{\"a\": 1]",
            "",
            "{\"a\": \"\\ud800\"}",
            "{\"\\ud800\": 1}",
        ] {
            agrees(text);
        }
        let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
        assert_eq!(index_strict(&deep, &mut Scratch::default()).err(), Some(NotParsed::Undecided));
    }

    proptest::proptest! {
        #[test]
        fn agrees_with_the_one_pass_on_any_text(text in "[\\[\\]{}\",:0-9a-c.eE+\\- \\\\\t\nu]{0,40}") {
            agrees(&text);
        }

        #[test]
        fn agrees_with_the_one_pass_on_damaged_json(value in crate::pointer::tests::arb_value(), cut in 0usize..200, byte in 0u8..128) {
            let text = serde_json::to_string_pretty(&value).unwrap_or_default();
            agrees(&text);
            let mut damaged = text.into_bytes();
            if let Some(b) = damaged.get_mut(cut) {
                *b = byte;
            }
            if let Ok(damaged) = String::from_utf8(damaged) {
                agrees(&damaged);
            }
        }
    }
}
