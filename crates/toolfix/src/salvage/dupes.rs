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
    let mut track = Track { path: String::new(), found: Vec::new() };
    let mut de = serde_json::Deserializer::from_str(text);
    match ValueSeed(&mut track).deserialize(&mut de) {
        Ok(_) => track.found,
        Err(_) => Vec::new(),
    }
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
}
