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

/// Most keys lists have no repeat: a byte scan (no parse, no allocation past a few key
/// slices) says so. True when some key text appears twice anywhere in `text`, when a key
/// holds an escape (`"a"` and `"\u0061"` are one key), or past 16 keys (the comparison is
/// quadratic): then the parse decides.
fn may_repeat_keys(text: &str) -> bool {
    const MAX_KEYS: usize = 16;
    let b = text.as_bytes();
    // On the stack: no allocation for the common case.
    let mut keys: [&[u8]; MAX_KEYS] = [&[]; MAX_KEYS];
    let mut count = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'"' {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut j = start;
        let mut escaped = false;
        while j < b.len() && b[j] != b'"' {
            if b[j] == b'\\' {
                escaped = true;
                j += 1;
            }
            j += 1;
        }
        let Some(key) = b.get(start..j) else { return true };
        i = j + 1;
        let mut k = i;
        while k < b.len() && matches!(b[k], b' ' | b'\t' | b'\n' | b'\r') {
            k += 1;
        }
        if b.get(k) == Some(&b':') {
            if escaped || count == MAX_KEYS || keys[..count].contains(&key) {
                return true;
            }
            keys[count] = key;
            count += 1;
        }
    }
    false
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
        // No repeat at all, and repeats the scan must send on to the parse: the same key in
        // two objects, a key spelled with an escape, a `"` escaped inside a key or a value.
        assert!(!may_repeat_keys(r#"{"a": "x:y", "b": ["a"], "c": {"d": "\"a\""}}"#));
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
            members in proptest::collection::vec(("[ab\"\\\\:é]{0,3}", 0u8..3, proptest::bool::ANY), 0..8),
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
