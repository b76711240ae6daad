//! Borrowed views of a response body's JSON: read in one pass, strings not copied when
//! they hold no escapes, values the proxy does not read skipped.

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;

/// A JSON value read as text: its string when it is one (borrowed from the body when it
/// holds no escapes), `None` for any other value (skipped).
#[derive(Debug, Default)]
pub(crate) struct Text<'a>(pub(crate) Option<Cow<'a, str>>);

impl Text<'_> {
    /// The string, when the value is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TextVisitor)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Text(Some(Cow::Borrowed(v))))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Text(Some(Cow::Owned(v.to_owned()))))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Text(Some(Cow::Owned(v))))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Text(None))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Text(None))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Text(None))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Text(None))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Text(None))
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Text(None))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Text(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Text(None))
    }
}

/// How [`Prose`] reads a string: set by [`read`] for the one read it makes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// As [`Text`] (serde_json's checked string read).
    Checked,
    /// The string's bytes up to its closing quote (found with `memchr`), checked as UTF-8
    /// and, when it holds no escape, for raw control characters (the body may hold some).
    Scan,
    /// As `Scan`; the body holds no byte below 0x20, so no string holds a raw control
    /// character and a string with escapes needs no further check.
    ScanClean,
}

thread_local! {
    static MODE: Cell<Mode> = const { Cell::new(Mode::Checked) };
}

/// Read `T` from `body`, its [`Prose`] members first by a scan for their closing quote;
/// when that read fails (a string it cannot check, a member that is no string, or a body
/// that is no JSON), read again with every string checked by serde_json, as [`Text`]:
/// the result is the checked read's either way.
pub(crate) fn read<'a, T: Deserialize<'a>>(body: &'a [u8]) -> serde_json::Result<T> {
    let mode = if has_control(body) { Mode::Scan } else { Mode::ScanClean };
    MODE.with(|m| m.set(mode));
    let scanned = serde_json::from_slice(body);
    MODE.with(|m| m.set(Mode::Checked));
    match scanned {
        Ok(t) => Ok(t),
        Err(_) => serde_json::from_slice(body),
    }
}

/// True when some byte of `bytes` is below 0x20 (a control character).
pub(crate) fn has_control(bytes: &[u8]) -> bool {
    // The least byte of each chunk of 16 KiB (the test and the lanes' reduction spread
    // over many bytes: a message's text is one chunk), taken `LANES` bytes at a time: the
    // compiler keeps the lanes in four vector registers, two instructions (a load and a
    // minimum) per 16 bytes.
    bytes.chunks(16 * 1024).any(|c| least(c) < 0x20)
}

/// Bytes compared at once by [`least`].
const LANES: usize = 64;

/// The least byte of `bytes` (`u8::MAX` for none).
fn least(bytes: &[u8]) -> u8 {
    let mut lanes = [u8::MAX; LANES];
    let mut blocks = bytes.chunks_exact(LANES);
    for block in &mut blocks {
        for (lane, &b) in lanes.iter_mut().zip(block) {
            *lane = (*lane).min(b);
        }
    }
    let rest = blocks.remainder().iter().fold(u8::MAX, |a, &b| a.min(b));
    lanes.iter().fold(rest, |a, &b| a.min(b))
}

/// A long text member (a message's `content`), read as [`Text`] reads it: its string when
/// it is one, `None` for `null` or an array. Read by [`read`], a string is found by a scan
/// for its closing quote instead of serde_json's checked read, a few times cheaper per
/// byte; anything the scan cannot decide fails that read (and [`read`] reads again).
#[derive(Debug, Default)]
pub(crate) struct Prose<'a>(pub(crate) Text<'a>);

impl Prose<'_> {
    /// The string, when the value is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        self.0.as_str()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Prose<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match MODE.with(Cell::get) {
            Mode::Checked => deserializer.deserialize_any(TextVisitor).map(Prose),
            mode => deserializer.deserialize_option(ScanVisitor(mode)).map(Prose),
        }
    }
}

/// Reads `null` (`None`), an array (`None`, skipped) or a string's bytes; any other value
/// is an error (serde_json reads only those as bytes).
struct ScanVisitor(Mode);

impl<'de> Visitor<'de> for ScanVisitor {
    type Value = Text<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string, null or an array")
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Text(None))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Text(None))
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_bytes(self)
    }

    fn visit_borrowed_bytes<E: serde::de::Error>(self, v: &'de [u8]) -> Result<Self::Value, E> {
        // No escape: these are the string's own bytes (in a body without control
        // characters, already checked).
        if self.0 != Mode::ScanClean && has_control(v) {
            return Err(E::custom("control character in a string"));
        }
        std::str::from_utf8(v).map(|s| Text(Some(Cow::Borrowed(s)))).map_err(E::custom)
    }

    fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
        // Escapes decoded: a raw control character can no longer be told from an escaped
        // one, unless the body holds none. (A lone surrogate escape decodes to bytes that
        // are no UTF-8: refused, as serde_json's checked read refuses it.)
        if self.0 != Mode::ScanClean {
            return Err(E::custom("a string with escapes in a body with control characters"));
        }
        std::str::from_utf8(v).map(|s| Text(Some(Cow::Owned(s.to_owned())))).map_err(E::custom)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Text(None))
    }
}

/// A member's JSON text when present (`null` included), read as a `&RawValue` (the text
/// of one JSON value, as the body holds it); `None` when absent (with
/// `#[serde(default)]`). The hand-written readers put in the text of a value they skipped,
/// which they check as serde_json checks a value it skips.
#[derive(Debug, Default)]
pub(crate) struct Field<'a>(pub(crate) Option<&'a str>);

impl<'de: 'a, 'a> Deserialize<'de> for Field<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(deserializer).map(|r| Field(Some(r.get())))
    }
}

/// A member read as `T` when present (`null` included: `T` reads it), `None` when absent:
/// tells `"reasoning_content": null` (no reasoning, `reasoning` not read) from no member.
#[derive(Debug)]
pub(crate) struct Present<T>(pub(crate) Option<T>);

impl<T> Default for Present<T> {
    fn default() -> Self {
        Present(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Present<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(|t| Present(Some(t)))
    }
}

/// A member's JSON text as it is in the body (where it is, for a splice); read as a
/// `&RawValue` (an `Option` of it reads `null` as `None`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Raw<'a>(pub(crate) &'a str);

impl<'de: 'a, 'a> Deserialize<'de> for Raw<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(deserializer).map(|r| Raw(r.get()))
    }
}

/// Where `raw` (borrowed from `body`) sits in it.
pub(crate) fn span_of(body: &[u8], raw: Raw<'_>) -> Option<(usize, usize)> {
    let start = (raw.0.as_ptr() as usize).checked_sub(body.as_ptr() as usize)?;
    let end = start.checked_add(raw.0.len())?;
    (end <= body.len()).then_some((start, end))
}

/// Where the string `text` reads sits in `body`, its quotes included: known when it was
/// borrowed from the body (it holds no escape); `None` for a string read with escapes, or
/// another value.
pub(crate) fn string_span(body: &[u8], text: &Text<'_>) -> Option<(usize, usize)> {
    let Some(Cow::Borrowed(s)) = &text.0 else { return None };
    let (start, end) = span_of(body, Raw(s))?;
    let (start, end) = (start.checked_sub(1)?, end.checked_add(1)?);
    (body.get(start) == Some(&b'"') && body.get(end - 1) == Some(&b'"')).then_some((start, end))
}

/// The bit of `key` among `keys` (its position), for [`object_view!`] at compile time.
pub(crate) const fn key_bit(keys: &[&str], key: &str) -> u64 {
    let mut rest = keys;
    let mut bit = 1u64;
    while let [first, tail @ ..] = rest {
        if same_bytes(first.as_bytes(), key.as_bytes()) {
            return bit;
        }
        rest = tail;
        bit <<= 1;
    }
    0
}

const fn same_bytes(mut a: &[u8], mut b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    while let ([x, ra @ ..], [y, rb @ ..]) = (a, b) {
        if *x != *y {
            return false;
        }
        a = ra;
        b = rb;
    }
    true
}

/// A borrowed view of a JSON object: `Deserialize` for a struct of view fields (each
/// `Default`), read from an object only (an array or any other value is an error, where a
/// derived `Deserialize` would read an array by position), each member by its key (the
/// last of duplicates wins, as in a `Value`), other members skipped. A key with escapes is
/// an error: the caller then reads the body as a value.
///
/// `object_view!(counted Name { ... })`: the struct also has a `dup: bool`, set when one of
/// its keys appears twice (a value read keeps the last; a splice does not guess).
///
/// `object_view!(tracked Name { ... })`: as `counted`, and the struct also has a `seen: u64`
/// (bit `i` set when the `i`-th key listed is present) and an `other: bool` (set when a key
/// not listed is present): what a splice needs to know that the object has exactly the
/// members a value path would write.
macro_rules! object_view {
    ($name:ident { $($field:ident: $key:literal),* $(,)? }) => {
        $crate::adapter::view::object_view!(@impl $name [] { $($field: $key),* });
    };
    (counted $name:ident { $($field:ident: $key:literal),* $(,)? }) => {
        $crate::adapter::view::object_view!(@impl $name [dup] { $($field: $key),* });
    };
    (tracked $name:ident { $($field:ident: $key:literal),* $(,)? }) => {
        $crate::adapter::view::object_view!(@impl $name [dup; seen, other] { $($field: $key),* });
    };
    (@impl $name:ident [$($dup:ident $(; $seen:ident, $other:ident)?)?] { $($field:ident: $key:literal),* }) => {
        impl<'de: 'a, 'a> serde::Deserialize<'de> for $name<'a> {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Fields;
                impl<'de> serde::de::Visitor<'de> for Fields {
                    type Value = $name<'de>;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("a JSON object")
                    }
                    fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                        // Which of the keys were seen (a bit each, fixed at compile time), and
                        // which came twice; a view that does not keep them leaves them unused.
                        const KEYS: &[&str] = &[$($key),*];
                        let mut seen = 0u64;
                        let mut twice = 0u64;
                        let mut out =
                            $name { $($dup: false, $($seen: 0, $other: false,)?)? $($field: Default::default()),* };
                        while let Some(key) = map.next_key::<&'de str>()? {
                            match key {
                                $($key => {
                                    const BIT: u64 = $crate::adapter::view::key_bit(KEYS, $key);
                                    twice |= seen & BIT;
                                    seen |= BIT;
                                    out.$field = map.next_value()?;
                                })*
                                _ => {
                                    $($(out.$other = true;)?)?
                                    map.next_value::<serde::de::IgnoredAny>()?;
                                }
                            }
                        }
                        $(out.$dup = twice != 0; $(out.$seen = seen;)?)?
                        let _ = (seen, twice);
                        Ok(out)
                    }
                }
                deserializer.deserialize_map(Fields)
            }
        }
    };
}
pub(crate) use object_view;

#[cfg(test)]
mod tests {
    use super::Text;
    use std::borrow::Cow;

    #[test]
    fn strings_are_read_and_borrowed_when_they_can_be() {
        let t: Text<'_> = serde_json::from_str("\"plain text\"").unwrap();
        assert!(matches!(t.0, Some(Cow::Borrowed("plain text"))));
        let t: Text<'_> = serde_json::from_str("\"a\\nb \\u00e9\"").unwrap();
        assert_eq!(t.as_str(), Some("a\nb é"));
        for other in
            ["null", "true", "3", "-2", "1.5", "[1, \"x\", {\"a\": []}]", "{\"type\": \"text\", \"text\": \"x\"}"]
        {
            let t: Text<'_> = serde_json::from_str(other).unwrap();
            assert_eq!(t.as_str(), None, "{other}");
        }
        assert!(serde_json::from_str::<Text<'_>>("\"cut").is_err());
    }

    #[derive(serde::Deserialize)]
    struct ProseHolder<'a> {
        #[serde(default, borrow)]
        content: super::Prose<'a>,
        #[serde(default, borrow)]
        after: Text<'a>,
    }

    #[derive(serde::Deserialize)]
    struct TextHolder<'a> {
        #[serde(default, borrow)]
        content: Text<'a>,
        #[serde(default, borrow)]
        after: Text<'a>,
    }

    /// A member read by a scan for its closing quote reads as serde_json's checked read
    /// reads it, or the body fails to read both ways: strings with and without escapes,
    /// surrogate pairs and lone surrogates, raw control characters (in the string, or only
    /// between members), bytes that are no UTF-8, and values that are no strings.
    #[test]
    fn prose_reads_as_text() {
        let values: [&[u8]; 18] = [
            b"\"plain text\"",
            b"\"\"",
            b"\"line\\none \\u00e9 \\\"quoted\\\" \\/\"",
            b"\"\\ud83d\\ude00 pair\"",
            b"\"lone \\ud800 lead\"",
            b"\"lone \\udc00 trail\"",
            b"\"lead then other \\ud800\\n\"",
            b"\"raw\ttab\"",
            b"\"raw\ttab and \\n escape\"",
            b"\"bad \\x escape\"",
            b"\"caf\xc3\xa9\"",
            b"\"not utf-8 \xff\"",
            b"null",
            b"[{\"type\": \"text\", \"text\": \"x\"}]",
            b"3",
            b"true",
            b"{\"a\": \"b\"}",
            b"\"cut",
        ];
        for value in values {
            for (before, between) in [("", ", "), ("\n  ", ",\n  ")] {
                let mut body = format!("{{{before}\"content\": ").into_bytes();
                body.extend_from_slice(value);
                body.extend_from_slice(format!("{between}\"after\": \"x\\ny\"}}").as_bytes());
                let scanned = super::read::<ProseHolder<'_>>(&body);
                let checked = serde_json::from_slice::<TextHolder<'_>>(&body);
                let shown = String::from_utf8_lossy(&body);
                match (scanned, checked) {
                    (Ok(a), Ok(b)) => {
                        assert_eq!(a.content.as_str(), b.content.as_str(), "{shown}");
                        assert_eq!(a.after.as_str(), b.after.as_str(), "{shown}");
                    }
                    (Err(_), Err(_)) => {}
                    (a, b) => panic!("{shown}: scanned {:?}, checked {:?}", a.is_ok(), b.is_ok()),
                }
            }
        }
        // A plain string is borrowed from the body.
        let body = b"{\"content\": \"plain\"}";
        let h = super::read::<ProseHolder<'_>>(body).unwrap();
        assert!(matches!(h.content.0.0, Some(Cow::Borrowed("plain"))));
    }

    #[derive(serde::Deserialize)]
    struct Pair<'a> {
        #[serde(borrow)]
        a: Text<'a>,
        #[serde(borrow)]
        b: Text<'a>,
    }

    /// A string read without escapes is found where it is, quotes included; one with
    /// escapes (copied) or another value is not.
    #[test]
    fn a_borrowed_string_is_found_in_its_body() {
        let body = br#"{"a": "plain", "b": "esc\naped"}"#;
        let p: Pair<'_> = serde_json::from_slice(body).unwrap();
        assert_eq!(super::string_span(body, &p.a), Some((6, 13)));
        assert_eq!(&body[6..13], b"\"plain\"");
        assert_eq!(super::string_span(body, &p.b), None);
        let p: Pair<'_> = serde_json::from_slice(br#"{"a": null, "b": 3}"#).unwrap();
        assert_eq!(super::string_span(br#"{"a": null, "b": 3}"#, &p.a), None);
        // Not a string of this body.
        let other = br#"{"a": "plain", "b": ""}"#;
        let p: Pair<'_> = serde_json::from_slice(other).unwrap();
        assert_eq!(super::string_span(body, &p.a), None);
    }

    struct Tracked<'a> {
        dup: bool,
        seen: u64,
        other: bool,
        a: Text<'a>,
        b: Text<'a>,
    }

    super::object_view!(tracked Tracked { a: "a", b: "b" });

    /// A tracked view knows which of its keys came, whether one came twice, and whether
    /// another key came.
    #[test]
    fn a_tracked_view_knows_its_keys() {
        let read = |text: &str| {
            let t: Tracked<'_> = serde_json::from_str(text).unwrap();
            (t.seen, t.dup, t.other, t.a.as_str().map(str::to_owned), t.b.as_str().map(str::to_owned))
        };
        assert_eq!(read(r#"{"b": "x"}"#), (0b10, false, false, None, Some("x".to_owned())));
        assert_eq!(
            read(r#"{"a": "1", "b": "2", "c": 3}"#),
            (0b11, false, true, Some("1".to_owned()), Some("2".to_owned()))
        );
        assert_eq!(read(r#"{"a": "1", "a": "2"}"#), (0b01, true, false, Some("2".to_owned()), None));
        assert_eq!(super::key_bit(&["a", "bb", "c"], "c"), 0b100);
        assert_eq!(super::key_bit(&["a", "bb"], "b"), 0);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// The lane-wise look for control characters answers as a byte loop, for any
        /// length (whole blocks of lanes, a rest, several chunks) and any place of the
        /// first control character.
        #[test]
        fn has_control_answers_as_a_byte_loop(
            len in 0usize..2200,
            at in proptest::option::of(0usize..2200),
            control in 0u8..0x20,
            fill in 0x20u8..=0xff,
        ) {
            let mut bytes = vec![fill; len];
            if let Some(b) = at.and_then(|i| bytes.get_mut(i)) {
                *b = control;
            }
            proptest::prop_assert_eq!(super::has_control(&bytes), bytes.iter().any(|&b| b < 0x20));
        }
    }

    #[derive(serde::Deserialize)]
    struct Holder<'a> {
        #[serde(default, borrow)]
        input: super::Field<'a>,
    }

    #[test]
    fn a_field_tells_null_from_absent() {
        let raw = |text: &str| {
            let h: Holder<'_> = serde_json::from_str(text).unwrap();
            h.input.0.map(str::to_owned)
        };
        assert_eq!(raw("{\"input\": null}").as_deref(), Some("null"));
        assert_eq!(raw("{}"), None);
        assert_eq!(raw("{\"input\": {\"a\": [1]}}").as_deref(), Some("{\"a\": [1]}"));
    }
}
