//! Keys given twice in one object. `{"area": 1800, "area": 1801}` is legal JSON, but
//! parsers disagree on which value wins, so the value validated may not be the value a
//! tool reads.

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::cell::Cell;
use std::fmt;

/// A key given more than once in one object of strict JSON text.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct DuplicateKey {
    /// JSON pointer of the key (`/filter/area`).
    pub pointer: String,
    /// Every value given for it, in text order.
    pub values: Vec<Value>,
}

impl DuplicateKey {
    /// True when every value given is the same (the key can be kept once).
    #[must_use]
    pub fn values_agree(&self) -> bool {
        self.values.windows(2).all(|w| w[0] == w[1])
    }
}

/// Every key given twice in one object of strict JSON `text`, in text order (empty when
/// there is none, or when `text` is not strict JSON).
///
/// ```
/// let dupes = toolfix::salvage::duplicate_keys(r#"{"a": {"area": 1800, "area": 1801}}"#);
/// assert_eq!(dupes[0].pointer, "/a/area");
/// assert_eq!(dupes[0].values, [serde_json::json!(1800), serde_json::json!(1801)]);
/// assert!(!dupes[0].values_agree());
/// ```
#[must_use]
pub fn duplicate_keys(text: &str) -> Vec<DuplicateKey> {
    if !may_repeat_keys(text) {
        return Vec::new();
    }
    parsed_duplicate_keys(text)
}

/// [`duplicate_keys`] by the parse alone.
fn parsed_duplicate_keys(text: &str) -> Vec<DuplicateKey> {
    let mut track = Track { path: String::new(), found: Vec::new() };
    let mut de = serde_json::Deserializer::from_str(text);
    match ValueSeed(&mut track).deserialize(&mut de) {
        Ok(_) => track.found,
        Err(_) => Vec::new(),
    }
}

/// Most objects give no key twice: a byte scan says so without a parse or a `Value` (the
/// keys of the open objects are slices of `text`, compared when their object closes). True
/// when some object gives a key twice, or writes a key with an escape (`"a"` and `"\u0061"`
/// are one key), or nests deeper than [`MAX_OPEN`], or when `text` is not strict JSON:
/// then the parse decides. Linear in the text, but for sorting the keys of an object with
/// more than [`PAIRWISE`] of them.
fn may_repeat_keys(text: &str) -> bool {
    let b = text.as_bytes();
    let mut keys = Keys::default();
    // Where the keys of each open object start, innermost last.
    let mut objects = [0usize; MAX_OPEN];
    let mut depth = 0;
    // The text of the last string, and whether it holds an escape: a key when `:` follows.
    let mut last = (0, 0, false);
    let mut i = 0;
    loop {
        i = skip_to(b, i, &STRUCTURE);
        let Some(&c) = b.get(i) else { break };
        i += 1;
        match c {
            b'"' => {
                let start = i;
                let mut escaped = false;
                loop {
                    i = skip_to(b, i, &STRING_END);
                    match b.get(i) {
                        Some(b'"') => break,
                        Some(_) => {
                            escaped = true;
                            i += 2;
                        }
                        None => return true,
                    }
                }
                last = (start, i, escaped);
                i += 1;
            }
            b':' => {
                let (start, end, escaped) = last;
                if escaped || depth == 0 {
                    return true;
                }
                keys.push(b.get(start..end).unwrap_or_default());
            }
            b'{' => {
                let Some(slot) = objects.get_mut(depth) else { return true };
                *slot = keys.len();
                depth += 1;
            }
            _ => {
                let Some(d) = depth.checked_sub(1) else { return true };
                depth = d;
                let first = objects.get(d).copied().unwrap_or_default();
                if repeats(keys.from(first)) {
                    return true;
                }
                keys.truncate(first);
            }
        }
    }
    depth > 0
}

/// The first byte at or after `i` that `stop` marks, or `b.len()`.
#[inline]
fn skip_to(b: &[u8], i: usize, stop: &[bool; 256]) -> usize {
    let rest = b.get(i..).unwrap_or_default();
    i + rest.iter().position(|&c| stop[usize::from(c)]).unwrap_or(rest.len())
}

/// The bytes inside a string the scan stops at: `"` and `\`.
static STRING_END: [bool; 256] = {
    let mut t = [false; 256];
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// The bytes outside strings the scan stops at: `"`, `{`, `}` and `:`.
static STRUCTURE: [bool; 256] = {
    let mut t = [false; 256];
    t[b'"' as usize] = true;
    t[b'{' as usize] = true;
    t[b'}' as usize] = true;
    t[b':' as usize] = true;
    t
};

/// Objects open at once that the scan follows; deeper text goes to the parse.
const MAX_OPEN: usize = 64;

/// Up to this many keys, an object's keys are compared pair by pair; more are sorted.
const PAIRWISE: usize = 16;

/// The keys of the open objects: on the stack while they are few, else in a vector.
#[derive(Default)]
struct Keys<'t> {
    few: [&'t [u8]; 32],
    len: usize,
    /// All the keys, once there were more than `few` holds.
    many: Option<Vec<&'t [u8]>>,
}

impl<'t> Keys<'t> {
    fn len(&self) -> usize {
        self.many.as_ref().map_or(self.len, Vec::len)
    }

    fn push(&mut self, key: &'t [u8]) {
        match &mut self.many {
            Some(many) => many.push(key),
            None => {
                if let Some(slot) = self.few.get_mut(self.len) {
                    *slot = key;
                    self.len += 1;
                } else {
                    let mut many = Vec::with_capacity(2 * self.few.len());
                    many.extend_from_slice(&self.few);
                    many.push(key);
                    self.many = Some(many);
                }
            }
        }
    }

    /// The keys from the `first`.
    fn from(&mut self, first: usize) -> &mut [&'t [u8]] {
        match &mut self.many {
            Some(many) => many.get_mut(first..).unwrap_or_default(),
            None => self.few.get_mut(first..self.len).unwrap_or_default(),
        }
    }

    fn truncate(&mut self, len: usize) {
        match &mut self.many {
            Some(many) => many.truncate(len),
            None => self.len = self.len.min(len),
        }
    }
}

/// True when two of `keys` are equal.
fn repeats(keys: &mut [&[u8]]) -> bool {
    if keys.len() <= PAIRWISE {
        return keys.iter().enumerate().any(|(n, k)| keys[..n].contains(k));
    }
    keys.sort_unstable();
    keys.windows(2).any(|w| w[0] == w[1])
}

/// Parse strict JSON `text` into a value (last value wins, as `serde_json` does), and say
/// whether some object gives a key twice. Costs what `serde_json::from_str` costs.
pub(crate) fn parse_value(text: &str) -> serde_json::Result<(Value, bool)> {
    let seen = Cell::new(false);
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Fast(&seen).deserialize(&mut de)?;
    de.end()?;
    Ok((value, seen.get()))
}

/// The scalar half of a `Visitor` that builds a `Value` as `serde_json` does; both
/// visitors below differ only in arrays and objects.
macro_rules! scalar_visits {
    () => {
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON value")
        }

        fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
            Ok(Value::Bool(v))
        }

        fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
            Ok(Value::Number(v.into()))
        }

        fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
            Ok(Value::Number(v.into()))
        }

        fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
            Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
        }

        fn visit_str<E>(self, v: &str) -> Result<Value, E> {
            Ok(Value::String(v.to_owned()))
        }

        fn visit_string<E>(self, v: String) -> Result<Value, E> {
            Ok(Value::String(v))
        }

        fn visit_unit<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }

        fn visit_none<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
    };
}

/// The hot path: a value as `serde_json` builds it, and a flag set on a repeated key.
#[derive(Clone, Copy)]
struct Fast<'a>(&'a Cell<bool>);

impl<'de> DeserializeSeed<'de> for Fast<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Fast<'_> {
    type Value = Value;

    scalar_visits!();

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut list = Vec::new();
        while let Some(v) = seq.next_element_seed(self)? {
            list.push(v);
        }
        Ok(Value::Array(list))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            let value = access.next_value_seed(self)?;
            if map.insert(key, value).is_some() {
                self.0.set(true);
            }
        }
        Ok(Value::Object(map))
    }
}

/// The slow pass, once a duplicate is known: pointers and values.
struct Track {
    path: String,
    found: Vec<DuplicateKey>,
}

struct ValueSeed<'t>(&'t mut Track);

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    scalar_visits!();

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        ValueSeed(self.0).deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let track = self.0;
        let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        loop {
            let len = track.path.len();
            crate::pointer::push(&mut track.path, &list.len().to_string());
            let next = seq.next_element_seed(ValueSeed(track))?;
            track.path.truncate(len);
            match next {
                Some(v) => list.push(v),
                None => break,
            }
        }
        Ok(Value::Array(list))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let track = self.0;
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            let len = track.path.len();
            crate::pointer::push(&mut track.path, &key);
            let value = access.next_value_seed(ValueSeed(track))?;
            if map.contains_key(&key) {
                let pointer = track.path.clone();
                if let Some(d) = track.found.iter_mut().find(|d| d.pointer == pointer) {
                    d.values.push(value.clone());
                } else {
                    let first = map.get(&key).cloned().unwrap_or(Value::Null);
                    track.found.push(DuplicateKey { pointer, values: vec![first, value.clone()] });
                }
            }
            track.path.truncate(len);
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::fmt::Write as _;

    #[test]
    fn parses_as_serde_json_does() {
        for text in [r#"{"a": [1, -2, 3.5, 1e400, "x", null, true], "b": {}}"#, "[]", "\"s\"", "12345678901234567890"] {
            let mine = parse_value(text).map(|(v, _)| v).ok();
            assert_eq!(mine, serde_json::from_str::<Value>(text).ok(), "{text}");
        }
        assert!(parse_value("{} x").is_err());
    }

    #[test]
    fn finds_duplicates_at_any_depth() {
        assert!(!parse_value(r#"{"a": 1, "b": {"a": 1}}"#).unwrap().1);
        assert!(parse_value(r#"{"a": [{"k": 1, "k": 1}]}"#).unwrap().1);
        let d = duplicate_keys(r#"{"a": [{"k": 1, "k": 1, "k": 2}], "a~/": 0, "a~/": 0}"#);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].pointer, "/a/0/k");
        assert_eq!(d[0].values, [json!(1), json!(1), json!(2)]);
        assert!(!d[0].values_agree());
        assert_eq!(d[1].pointer, "/a~0~1");
        assert!(d[1].values_agree());
    }

    #[test]
    fn the_byte_scan_never_hides_a_duplicate() {
        // No repeat at all, and repeats the scan must send on to the parse: a key spelled
        // with an escape, a `"` escaped inside a key or a value.
        assert!(!may_repeat_keys(r#"{"a": "x:y", "b": ["a"], "c": {"d": "\"a\""}}"#));
        // The same key in sibling and nested objects is no repeat; past 16 keys too.
        assert!(!may_repeat_keys(r#"[{"a": 1}, {"a": {"a": 2}}]"#));
        let many: Vec<String> = (0..100).map(|i| format!("\"k{i}\": {{\"k{i}\": {i}}}")).collect();
        assert!(!may_repeat_keys(&format!("{{{}}}", many.join(", "))));
        assert!(duplicate_keys(r#"{"a": 1, "b": {"a": 2}}"#).is_empty());
        assert_eq!(duplicate_keys(r#"{"a": 1, "\u0061": 2}"#).len(), 1);
        assert_eq!(duplicate_keys(r#"{"q\"": 1, "q\"": 2}"#).len(), 1);
        assert_eq!(duplicate_keys("{\"a\"\n:\t1, \"a\" : 2}").len(), 1);
        let many: Vec<String> = (0..100).map(|i| format!("\"k{i}\": {i}")).collect();
        let text = format!("{{{}, \"k5\": 0}}", many.join(", "));
        assert_eq!(duplicate_keys(&text)[0].pointer, "/k5");
    }

    proptest::proptest! {
        #[test]
        fn the_byte_scan_agrees_with_the_parse(
            members in proptest::collection::vec(("[ab\"\\\\:é]{0,3}", 0u8..3, proptest::bool::ANY), 0..40),
        ) {
            // Objects nested one level, keys with quotes, backslashes, colons and non-ASCII,
            // written through serde_json so every escape is legal; repeats are likely.
            let mut text = String::from("{");
            for (n, (key, value, nested)) in members.iter().enumerate() {
                if n > 0 {
                    text.push_str(", ");
                }
                let key = serde_json::to_string(key).unwrap_or_default();
                if *nested {
                    let inner = serde_json::to_string(&format!("{key}: ")).unwrap_or_default();
                    let _ = write!(text, "{key}: {{{key}: {value}, \"v\": {inner}}}");
                } else {
                    let _ = write!(text, "{key}: {value}");
                }
            }
            text.push('}');
            proptest::prop_assert!(serde_json::from_str::<Value>(&text).is_ok(), "{}", text);
            proptest::prop_assert_eq!(duplicate_keys(&text), parsed_duplicate_keys(&text), "{}", text);
        }
    }
}
