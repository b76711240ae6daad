//! The strict fast path: one pass over the text that says whether it is strict JSON
//! (RFC 8259), and, when it is, whether some object may give a key twice.
//!
//! Valid input is the common case and comes back borrowed, so this pass is most of what
//! valid input costs. It reads bytes against tables, keeps an explicit stack (no
//! recursion; nesting deeper than the limit is left to the lenient parser, which refuses
//! it), and notes the keys of the open objects as slices of the text, compared when their
//! object closes, so that the duplicate-key report needs no second pass and no `Value`.
//! `tests/salvage_props.rs` checks it against `serde_json` on generated and damaged text.

use crate::pointer::scan::{STRING_STOP, first_in};

/// What the strict pass found in strict JSON text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Strict {
    /// Some object gives a key twice, or writes a key with an escape (`"a"` and
    /// `"\u0061"` are one key): only a parse can tell which keys repeat.
    pub(super) keys_may_repeat: bool,
}

/// True when `text` opens an object or array (past JSON whitespace) and its last byte
/// (past JSON whitespace) is not the closer: cut off, or prose after it. Strict JSON that
/// opens one ends with its closer, so such text is none.
pub(crate) fn unclosed(text: &str) -> bool {
    let b = text.as_bytes();
    let closer = match b.get(ws(b, 0)) {
        Some(b'{') => b'}',
        Some(b'[') => b']',
        _ => return false,
    };
    b.iter().rev().find(|c| !matches!(c, b' ' | b'\n' | b'\r' | b'\t')) != Some(&closer)
}

/// [`check_in`] with stacks of its own.
#[cfg(test)]
fn check(text: &str, max_depth: usize) -> Option<Strict> {
    check_in(text, max_depth, &mut Stacks::default())
}

/// The stacks of the strict pass (open containers, keys of the open objects), kept between
/// texts by a [`Salvager`](super::Salvager); each pass empties them first.
#[derive(Debug, Default)]
pub(super) struct Stacks {
    open: Vec<(u8, usize)>,
    keys: Vec<Key>,
}

impl Stacks {
    /// The bytes the stacks hold.
    pub(super) fn footprint(&self) -> usize {
        self.open.capacity() * size_of::<(u8, usize)>() + self.keys.capacity() * size_of::<Key>()
    }
}

/// `Some` when `text` is strict JSON nested at most `max_depth` deep, with no lone UTF-16
/// surrogate escape (which no Rust string can hold: the lenient parser replaces it).
/// Works in the vectors of `stacks`.
pub(super) fn check_in(text: &str, max_depth: usize, stacks: &mut Stacks) -> Option<Strict> {
    let b = text.as_bytes();
    let mut i = ws(b, 0);
    // Text that starts with no value (prose before the JSON, a fence: half the damaged
    // calls) fails here, before anything is set up.
    if !matches!(b.get(i), Some(b'{' | b'[' | b'"' | b't' | b'f' | b'n' | b'-' | b'0'..=b'9')) {
        return None;
    }
    // Text cut off before its closer, or with prose after it (a third of the damaged
    // calls), fails here rather than after a pass over all of it.
    if unclosed(text) {
        return None;
    }
    // Open containers: `{` or `[`, and for objects where their keys start in `keys`.
    // (Room is made only here: text that fails above allocates nothing.)
    let Stacks { open, keys } = stacks;
    open.clear();
    open.reserve(16);
    keys.clear();
    keys.reserve(32);
    let mut keys_may_repeat = false;
    'value: loop {
        // A value starts at `i`.
        match *b.get(i)? {
            b'{' => {
                if open.len() >= max_depth {
                    return None;
                }
                i = ws(b, i + 1);
                if b.get(i) == Some(&b'}') {
                    i += 1;
                } else {
                    open.push((b'{', keys.len()));
                    i = key(b, i, keys, &mut keys_may_repeat)?;
                    continue 'value;
                }
            }
            b'[' => {
                if open.len() >= max_depth {
                    return None;
                }
                i = ws(b, i + 1);
                if b.get(i) == Some(&b']') {
                    i += 1;
                } else {
                    open.push((b'[', 0));
                    continue 'value;
                }
            }
            b'"' => i = string(b, i)?.0,
            b't' => i = literal(b, i, b"true")?,
            b'f' => i = literal(b, i, b"false")?,
            b'n' => i = literal(b, i, b"null")?,
            _ => i = number(b, i)?,
        }
        // After a value: `,` and the next one, or closers.
        loop {
            i = ws(b, i);
            let Some(&(kind, first)) = open.last() else {
                return (i == b.len()).then_some(Strict { keys_may_repeat });
            };
            match (kind, *b.get(i)?) {
                (b'{', b',') => {
                    i = key(b, ws(b, i + 1), keys, &mut keys_may_repeat)?;
                    continue 'value;
                }
                (b'[', b',') => {
                    i = ws(b, i + 1);
                    continue 'value;
                }
                (b'{', b'}') => {
                    if !keys_may_repeat {
                        keys_may_repeat = repeats(b, keys.get_mut(first..).unwrap_or_default());
                    }
                    keys.truncate(first);
                    open.pop();
                    i += 1;
                }
                (b'[', b']') => {
                    open.pop();
                    i += 1;
                }
                _ => return None,
            }
        }
    }
}

/// A key at `i`, then `:` and the whitespace after it: where its value starts.
fn key(b: &[u8], i: usize, keys: &mut Vec<Key>, may_repeat: &mut bool) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let (end, escaped) = string(b, i)?;
    if escaped {
        *may_repeat = true;
    } else if !*may_repeat {
        let (from, to) = (i + 1, end - 1);
        keys.push((from, to, super::lex::fingerprint_at(b, from, to)));
    }
    let colon = ws(b, end);
    (b.get(colon) == Some(&b':')).then(|| ws(b, colon + 1))
}

/// Up to this many keys, an object's keys are compared pair by pair; more are sorted.
const PAIRWISE: usize = 16;

/// A key's text (a range of the text) and [fingerprint](super::lex::fingerprint).
type Key = (usize, usize, u64);

/// True when two of `keys` (ranges of `b`) are equal (fingerprints first, text where they
/// agree).
fn repeats(b: &[u8], keys: &mut [Key]) -> bool {
    let text = |k: &Key| b.get(k.0..k.1).unwrap_or_default();
    let same = |x: &Key, y: &Key| x.2 == y.2 && text(x) == text(y);
    if keys.len() <= PAIRWISE {
        return keys
            .iter()
            .enumerate()
            .any(|(n, k)| keys.get(..n).is_some_and(|before| before.iter().any(|p| same(p, k))));
    }
    keys.sort_unstable_by(|x, y| x.2.cmp(&y.2).then_with(|| text(x).cmp(text(y))));
    keys.windows(2).any(|w| matches!(w, [x, y] if same(x, y)))
}

/// Past JSON whitespace from `i`.
#[inline]
fn ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
        i += 1;
    }
    i
}

/// The string at `i` (its opening quote): where it ends (past the closing quote), and
/// whether it holds an escape.
fn string(b: &[u8], i: usize) -> Option<(usize, bool)> {
    let mut j = i + 1;
    let mut escaped = false;
    loop {
        let rest = b.get(j..)?;
        j += first_in(rest, &STRING_STOP)?;
        match *b.get(j)? {
            b'"' => return Some((j + 1, escaped)),
            b'\\' => {
                escaped = true;
                j = escape(b, j)?;
            }
            _ => return None,
        }
    }
}

/// The escape at `i` (its backslash): where it ends. A high surrogate must be followed by
/// a low one, and a low one must follow a high one.
fn escape(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i + 1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(i + 2),
        b'u' => {
            let v = hex4(b, i + 2)?;
            if (0xD800..0xDC00).contains(&v) {
                let low = (b.get(i + 6..i + 8) == Some(b"\\u")).then(|| hex4(b, i + 8)).flatten()?;
                (0xDC00..0xE000).contains(&low).then_some(i + 12)
            } else if (0xDC00..0xE000).contains(&v) {
                None
            } else {
                Some(i + 6)
            }
        }
        _ => None,
    }
}

/// The four hex digits at `i`.
fn hex4(b: &[u8], i: usize) -> Option<u32> {
    b.get(i..i + 4)?.iter().try_fold(0u32, |v, &c| Some(v * 16 + char::from(c).to_digit(16)?))
}

/// `word` at `i`: where it ends.
fn literal(b: &[u8], i: usize, word: &[u8]) -> Option<usize> {
    (b.get(i..i + word.len()) == Some(word)).then_some(i + word.len())
}

/// The number at `i`: `-? (0 | [1-9][0-9]*) (\.[0-9]+)? ([eE][+-]?[0-9]+)?`; where it ends.
fn number(b: &[u8], mut i: usize) -> Option<usize> {
    let digits = |b: &[u8], i: usize| i + b.get(i..).map_or(0, |r| r.iter().take_while(|c| c.is_ascii_digit()).count());
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match *b.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => i = digits(b, i + 1),
        _ => return None,
    }
    if b.get(i) == Some(&b'.') {
        let end = digits(b, i + 1);
        if end == i + 1 {
            return None;
        }
        i = end;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let end = digits(b, i);
        if end == i {
            return None;
        }
        i = end;
    }
    Some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict(text: &str) -> Option<bool> {
        check(text, 128).map(|s| s.keys_may_repeat)
    }

    #[test]
    fn valid_json_passes() {
        for text in [
            "0",
            "-0",
            "1.5e+10",
            "-12.25E-3",
            "true",
            "false",
            "null",
            "\"\"",
            "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"",
            "\"\\u00e9\\ud83d\\ude80\"",
            " [ ] ",
            "{}",
            "[1, [2, [3]], {\"a\": {\"b\": []}}]",
            "\"é👩‍💻\"",
            "{\"a\":1,\"b\":2}\n",
        ] {
            assert_eq!(strict(text), Some(false), "{text}");
        }
    }

    #[test]
    fn anything_else_fails() {
        for text in [
            "",
            " ",
            "01",
            "1.",
            ".5",
            "+1",
            "1e",
            "1e+",
            "-",
            "--1",
            "0x1",
            "tru",
            "True",
            "nul",
            "'a'",
            "\"a",
            "\"\\x\"",
            "\"\\u12\"",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\ud800\\u0041\"",
            "\"a\tb\"",
            "[1,]",
            "[,1]",
            "[1 2]",
            "{\"a\"}",
            "{\"a\":}",
            "{\"a\":1,}",
            "{a:1}",
            "{\"a\":1",
            "[1]]",
            "[1] [2]",
            "{\"a\" 1}",
            "\u{a0}1",
            "[1}",
            "{\"a\":1]",
        ] {
            assert_eq!(strict(text), None, "{text:?}");
        }
    }

    #[test]
    fn repeated_and_escaped_keys_are_noted() {
        assert_eq!(strict(r#"{"a": 1, "b": {"a": 2}, "c": [{"a": 3}]}"#), Some(false));
        assert_eq!(strict(r#"{"a": 1, "a": 2}"#), Some(true));
        assert_eq!(strict(r#"[{"x": {"k": 1, "k": 1}}]"#), Some(true));
        assert_eq!(strict(r#"{"\u0061": 1}"#), Some(true));
        let many: Vec<String> = (0..40).map(|i| format!("\"k{i}\": {i}")).collect();
        assert_eq!(strict(&format!("{{{}}}", many.join(", "))), Some(false));
        assert_eq!(strict(&format!("{{{}, \"k7\": 0}}", many.join(", "))), Some(true));
    }

    #[test]
    fn depth_is_bounded() {
        assert!(check("[[[1]]]", 3).is_some());
        assert!(check("[[[1]]]", 2).is_none());
        // An empty container counts as a level, as in the lenient parser.
        assert!(check("{\"a\": {\"b\": {}}}", 3).is_some());
        assert!(check("{\"a\": {\"b\": {}}}", 2).is_none());
    }
}
