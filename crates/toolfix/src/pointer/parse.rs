//! One pass over strict JSON text that builds its `Value`, as `serde_json` builds it, and
//! the nodes of its [`TextIndex`](super::TextIndex) together: the call pipeline reads the
//! arguments once and hands both on (repair copies numbers as written, render copies every
//! unchanged part), where it used to parse the text and then index it in a second pass.
//!
//! Each object's members are gathered first and its map made at its close with room for
//! all of them (a map grown member by member rehashes as it grows). Whatever this pass
//! does not settle itself goes to `serde_json`: a number other than a plain integer, a
//! string with an escape (decoded by `serde_json` from its own text), nesting deeper than
//! [`MAX_DEPTH`]. So a value read here is the value `serde_json::from_str` reads, and text
//! refused here as [`NotParsed::Invalid`] is no strict JSON at all, which `serde_json`
//! refuses too (`tests` check both on generated and damaged text).

use super::scan::{STRING_STOP, lanes_control, lanes_equal, next_lane_in_words};
use super::{Key, Node, Nodes};
use serde_json::{Map, Value};

/// Strict JSON text read: the value, whether some object gives a key twice (the last value
/// wins, as in `serde_json`), and the nodes of the text's index.
#[derive(Debug)]
pub(crate) struct Parsed {
    pub(crate) value: Value,
    pub(crate) dupes: bool,
    pub(crate) nodes: Nodes,
}

/// Why [`parse_indexed`] read no value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NotParsed {
    /// Not strict JSON (RFC 8259): `serde_json` refuses it too.
    Invalid,
    /// Left to `serde_json`: nesting deeper than [`MAX_DEPTH`], or a number token it
    /// refuses (malformed, or out of the range of `f64`, which strict JSON allows).
    Undecided,
}

/// Open containers this pass follows; deeper text goes to `serde_json` (which allows 127).
pub(super) const MAX_DEPTH: usize = 64;

/// An open container.
pub(super) struct Frame {
    /// Its node.
    pub(super) node: usize,
    pub(super) object: bool,
    /// Where its members (objects) or elements (arrays) start in the shared lists.
    pub(super) start: usize,
    /// A key was written with an escape (then the index treats keys as possibly repeated,
    /// as [`TextIndex::build`](super::TextIndex::build) does).
    pub(super) escaped_key: bool,
    /// The key of the member being read (objects).
    pub(super) key: String,
    /// A bit per key fingerprint seen in this object, and whether a key's bit was set
    /// already (it may repeat an earlier key): kept by the index read
    /// ([`index_strict`](super::index_strict)), which compares keys only then.
    pub(super) seen: u64,
    pub(super) may_repeat: bool,
}

/// The working lists of a parse (open containers, the members and elements read so far),
/// kept by whoever parses often (each tool keeps one for its calls) so that a parse does
/// not make them again. They hold nothing between parses; what a parse reads does not
/// depend on them.
#[derive(Default)]
pub(crate) struct Scratch {
    pub(super) stack: Vec<Frame>,
    /// The members of the open objects and the elements of the open arrays, innermost last.
    members: Vec<(String, Value)>,
    elements: Vec<Value>,
    /// Room for the next parse's index nodes: an index a caller did not keep, emptied
    /// ([`Scratch::recycle`]).
    pub(super) spare: Vec<Node>,
}

impl Scratch {
    /// The bytes the lists hold room for.
    pub(crate) fn footprint(&self) -> usize {
        self.stack.capacity() * size_of::<Frame>()
            + self.members.capacity() * size_of::<(String, Value)>()
            + self.elements.capacity() * size_of::<Value>()
            + self.spare.capacity() * size_of::<Node>()
    }

    /// Keep the room of `nodes`, an index read here and not kept, for the next parse (its
    /// nodes, positions only, are emptied; its decoded keys let go).
    pub(crate) fn recycle(&mut self, nodes: Nodes) {
        let mut room = nodes.nodes;
        room.clear();
        self.spare = room;
    }
}

impl Scratch {
    /// Let go of what a parse that stopped early left (keys and values read so far).
    fn clear(&mut self) {
        self.stack.clear();
        self.members.clear();
        self.elements.clear();
    }
}

/// Read strict JSON `text` into its value and index nodes, working in the lists of
/// `scratch` (which hold nothing after it, whatever it answers).
pub(crate) fn parse_indexed(text: &str, scratch: &mut Scratch) -> Result<Parsed, NotParsed> {
    let read = read(text, scratch);
    if read.is_err() {
        scratch.clear();
    }
    read
}

/// [`parse_indexed`], which empties the lists after a parse that stopped early.
fn read(text: &str, scratch: &mut Scratch) -> Result<Parsed, NotParsed> {
    use NotParsed::Invalid;
    let b = text.as_bytes();
    let mut nodes: Vec<Node> = std::mem::take(&mut scratch.spare);
    if nodes.capacity() == 0 {
        nodes.reserve(16);
    }
    let mut decoded: Vec<String> = Vec::new();
    let Scratch { stack, members, elements, .. } = scratch;
    let mut root: Option<Value> = None;
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
            let (end, value) = match c {
                b'{' | b'[' => {
                    if stack.len() >= MAX_DEPTH {
                        return Err(NotParsed::Undecided);
                    }
                    let object = c == b'{';
                    let start = if object { members.len() } else { elements.len() };
                    stack.push(Frame {
                        node: id,
                        object,
                        start,
                        escaped_key: false,
                        key: String::new(),
                        seen: 0,
                        may_repeat: false,
                    });
                    i = ws(b, i + 1);
                    if b.get(i) == Some(if object { &b'}' } else { &b']' }) {
                        // Empty: closed at `i`.
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
                    (end, Value::String(string(text, i, end, escaped)?))
                }
                b't' => literal(b, i, b"true", Value::Bool(true))?,
                b'f' => literal(b, i, b"false", Value::Bool(false))?,
                b'n' => literal(b, i, b"null", Value::Null)?,
                b'-' | b'0'..=b'9' => number(text, i)?,
                _ => return Err(Invalid),
            };
            if let Some(node) = nodes.get_mut(id) {
                node.end = end;
            }
            i = end;
            place(value, stack, members, elements, &mut root);
            at_value = false;
            continue;
        }
        i = ws(b, i);
        let Some(frame) = stack.last() else {
            return match root {
                Some(value) if i == b.len() => Ok(Parsed { value, dupes, nodes: Nodes { nodes, decoded } }),
                _ => Err(Invalid),
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
            (Some(b'}'), true) => {
                let frame = stack.pop().ok_or(Invalid)?;
                let given = members.len() - frame.start;
                let mut map = Map::with_capacity(given);
                for (k, v) in members.drain(frame.start..) {
                    map.insert(k, v);
                }
                let repeats = map.len() < given;
                dupes |= repeats;
                let after = nodes.len();
                if let Some(node) = nodes.get_mut(frame.node) {
                    node.end = i + 1;
                    node.after = after;
                    node.unique = !repeats && !frame.escaped_key;
                }
                i += 1;
                place(Value::Object(map), stack, members, elements, &mut root);
            }
            (Some(b']'), false) => {
                let frame = stack.pop().ok_or(Invalid)?;
                let list: Vec<Value> = elements.drain(frame.start..).collect();
                let after = nodes.len();
                if let Some(node) = nodes.get_mut(frame.node) {
                    node.end = i + 1;
                    node.after = after;
                }
                i += 1;
                place(Value::Array(list), stack, members, elements, &mut root);
            }
            _ => return Err(Invalid),
        }
    }
}

/// Put a value read into its container (or make it the root).
#[inline]
fn place(
    value: Value,
    stack: &mut [Frame],
    members: &mut Vec<(String, Value)>,
    elements: &mut Vec<Value>,
    root: &mut Option<Value>,
) {
    match stack.last_mut() {
        None => *root = Some(value),
        Some(f) if f.object => members.push((std::mem::take(&mut f.key), value)),
        Some(_) => elements.push(value),
    }
}

/// Read a member's key and colon at `i` (the key kept by its object's frame); returns
/// where its value starts.
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
    let name = string(text, i, end, escaped)?;
    let frame = stack.last_mut().ok_or(NotParsed::Invalid)?;
    if escaped {
        frame.escaped_key = true;
        decoded.push(name.clone());
        *key = Key::Decoded(decoded.len() - 1);
    } else {
        *key = Key::Raw(i + 1, end - 1);
    }
    frame.key = name;
    let colon = ws(b, end);
    if b.get(colon) != Some(&b':') {
        return Err(NotParsed::Invalid);
    }
    Ok(ws(b, colon + 1))
}

/// The string opening at `i`: the offset after its closing quote, and whether it holds
/// an escape (skipped here, decoded by [`string`]). Strings are short: a byte loop over a
/// table beats setting up a vector search.
#[inline]
pub(super) fn scan_string(b: &[u8], i: usize) -> Result<(usize, bool), NotParsed> {
    let mut j = i + 1;
    let mut escaped = false;
    loop {
        j = skip_plain(b, j);
        let c = *b.get(j).ok_or(NotParsed::Invalid)?;
        if !STRING_STOP[usize::from(c)] {
            j += 1;
            continue;
        }
        match c {
            b'"' => return Ok((j + 1, escaped)),
            b'\\' => {
                escaped = true;
                j += 2;
            }
            _ => return Err(NotParsed::Invalid),
        }
    }
}

/// The first byte at or after `j` that may end a run of plain string bytes (a `"`, `\\` or
/// control character), eight bytes at a time as `serde_json` does; the last bytes too few
/// for a word are left to [`scan_string`]'s byte loop.
#[inline]
fn skip_plain(b: &[u8], j: usize) -> usize {
    next_lane_in_words(b, j, |x| lanes_control(x) | lanes_equal(x, b'"') | lanes_equal(x, b'\\'))
}

/// The string `text[i..end]` (quotes included) holds: its text, or, with an escape, what
/// `serde_json` decodes from it.
pub(super) fn string(text: &str, i: usize, end: usize, escaped: bool) -> Result<String, NotParsed> {
    if escaped {
        return serde_json::from_str::<String>(text.get(i..end).ok_or(NotParsed::Invalid)?)
            .map_err(|_| NotParsed::Invalid);
    }
    text.get(i + 1..end - 1).map(str::to_owned).ok_or(NotParsed::Invalid)
}

pub(super) fn literal(b: &[u8], i: usize, word: &[u8], value: Value) -> Result<(usize, Value), NotParsed> {
    if b.get(i..i + word.len()) == Some(word) { Ok((i + word.len(), value)) } else { Err(NotParsed::Invalid) }
}

/// The number at `i`: a plain integer of up to 18 digits read here, any other number
/// token read by `serde_json` (its float parsing, its errors).
/// Inlined always: on every number of the one-pass read, whose speed depends on it (the
/// index read and the value made from an index call it too).
#[expect(clippy::inline_always, reason = "with three callers the compiler stops inlining it into the one-pass read")]
#[inline(always)]
pub(super) fn number(text: &str, i: usize) -> Result<(usize, Value), NotParsed> {
    let b = text.as_bytes();
    let rest = b.get(i..).unwrap_or_default();
    let len =
        rest.iter().position(|c| !matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')).unwrap_or(rest.len());
    let token = rest.get(..len).unwrap_or_default();
    let (negative, digits) = match token.strip_prefix(b"-") {
        Some(d) => (true, d),
        None => (false, token),
    };
    let plain = !digits.is_empty()
        && digits.len() <= 18
        && digits.iter().all(u8::is_ascii_digit)
        && (digits.len() == 1 || digits.first() != Some(&b'0'))
        && !(negative && digits == b"0");
    let value = if plain {
        let n = digits.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
        if negative {
            // At most 18 digits: fits an i64.
            Value::Number((-(n.cast_signed())).into())
        } else {
            Value::Number(n.into())
        }
    } else {
        match text.get(i..i + len).map(serde_json::from_str::<Value>) {
            Some(Ok(v @ Value::Number(_))) => v,
            _ => return Err(NotParsed::Undecided),
        }
    };
    Ok((i + len, value))
}

pub(super) fn ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pointer::TextIndex;

    /// What `serde_json` reads (and whether a key repeats), against this pass.
    fn agrees(text: &str) {
        let serde = crate::salvage::parse_value(text).ok();
        let read = parse_indexed(text, &mut Scratch::default());
        // Lists used by a parse that stopped inside nested containers hold nothing after it,
        // and give the same.
        let mut used = Scratch::default();
        assert!(parse_indexed(r#"{"a": [{"b": [1, {"c": "#, &mut used).is_err());
        assert!(used.stack.is_empty() && used.members.is_empty() && used.elements.is_empty());
        assert_eq!(format!("{:?}", parse_indexed(text, &mut used)), format!("{read:?}"), "{text}");
        match read {
            Ok(p) => {
                assert_eq!(Some((&p.value, p.dupes)), serde.as_ref().map(|(v, d)| (v, *d)), "{text}");
                // The nodes are those of the index built from the text.
                let built = TextIndex::build(text).expect("strict text indexes");
                let mine = TextIndex::from_nodes(text, p.nodes);
                let (mine, built) = (mine.spans(), built.spans());
                let without_unique = |s: &[(usize, usize, usize, Option<&str>, bool)]| {
                    s.iter().map(|&(a, b, c, k, _)| (a, b, c, k.map(str::to_owned))).collect::<Vec<_>>()
                };
                assert_eq!(without_unique(&mine), without_unique(&built), "{text}");
                // Keys told unique by the build (a fingerprint per key) are unique here too;
                // here an object is unique exactly when no key repeats.
                for (m, b) in mine.iter().zip(&built) {
                    assert!(m.4 || !b.4, "{text}");
                }
            }
            Err(NotParsed::Invalid) => {
                assert!(serde.is_none(), "{text}");
                // No strict JSON at all: salvage (whose strict pass the pipeline then
                // skips) has something to fix, or nothing to read.
                assert!(crate::salvage::salvage(text).map_or(true, |s| !s.is_untouched()), "{text}");
            }
            Err(NotParsed::Undecided) => {}
        }
    }

    #[test]
    fn reads_as_serde_json_reads() {
        for text in [
            r#"{"a": [1, -2, 3.5, 1e400, "x", null, true, false], "b": {}, "c": []}"#,
            r#"{"a": 1, "a": 2, "b": {"c": [{"d": 1, "d": 1}]}}"#,
            r#"{"\u0061": 1, "a": 2, "k\"": "v\n\u00e9\ud83d\ude00"}"#,
            "12345678901234567890",
            "123456789012345678",
            "-123456789012345678",
            "-0",
            "0",
            "-0.0",
            "1E5",
            "1e+5",
            " [ 1 , 2 ] ",
            "\"s\"",
            "{} x",
            "{",
            "[1,]",
            "{\"a\":1,}",
            "[01]",
            "[-]",
            "[1.]",
            "[.5]",
            "[1+1]",
            "[1-1]",
            "[0x10]",
            "[truex]",
            "[tru]",
            "{'a': 1}",
            "{\"a\" 1}",
            "{\"a\": \"x\ty\"}",
            "{\"a\": \"\\q\"}",
            "{\"a\": \"\\ud800\"}",
            "[1}",
            "{\"a\": 1]",
            "",
            "   ",
            "\u{feff}{}",
            "{\"a\": \"é\\\"\"}",
        ] {
            agrees(text);
        }
        let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
        assert_eq!(parse_indexed(&deep, &mut Scratch::default()).map(|p| p.value).err(), Some(NotParsed::Undecided));
        // A number strict JSON allows and serde_json refuses.
        assert_eq!(
            parse_indexed("[1e400]", &mut Scratch::default()).map(|p| p.value).err(),
            Some(NotParsed::Undecided)
        );
    }

    proptest::proptest! {
        #[test]
        fn agrees_with_serde_json_on_any_text(text in "[\\[\\]{}\",:0-9a-z.eE+\\- \\\\\t\n]{0,40}") {
            agrees(&text);
        }

        #[test]
        fn agrees_with_serde_json_on_damaged_json(value in crate::pointer::tests::arb_value(), cut in 0usize..200, byte in 0u8..128) {
            let text = serde_json::to_string_pretty(&value).unwrap_or_default();
            agrees(&text);
            // One byte replaced: most such texts are no JSON, some are other JSON.
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
