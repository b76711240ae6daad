//! Borrowed views of a response body's JSON: read in one pass, strings not copied when
//! they hold no escapes, values the proxy does not read skipped.

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;
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

/// A member read as raw JSON when present (`null` included); `None` when absent (with
/// `#[serde(default)]`).
#[derive(Debug, Default)]
pub(crate) struct Field<'a>(pub(crate) Option<&'a RawValue>);

impl Field<'_> {
    /// The member as a value: `None` when absent.
    pub(crate) fn value(&self) -> Option<Value> {
        self.0.and_then(|r| serde_json::from_str(r.get()).ok())
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Field<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(deserializer).map(|r| Field(Some(r)))
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

/// A borrowed view of a JSON object: `Deserialize` for a struct of view fields (each
/// `Default`), read from an object only (an array or any other value is an error, where a
/// derived `Deserialize` would read an array by position), each member by its key (the
/// last of duplicates wins, as in a `Value`), other members skipped. A key with escapes is
/// an error: the caller then reads the body as a value.
macro_rules! object_view {
    ($name:ident { $($field:ident: $key:literal),* $(,)? }) => {
        impl<'de: 'a, 'a> serde::Deserialize<'de> for $name<'a> {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Fields;
                impl<'de> serde::de::Visitor<'de> for Fields {
                    type Value = $name<'de>;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("a JSON object")
                    }
                    fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                        let mut out = $name { $($field: Default::default()),* };
                        while let Some(key) = map.next_key::<&'de str>()? {
                            match key {
                                $($key => out.$field = map.next_value()?,)*
                                _ => {
                                    map.next_value::<serde::de::IgnoredAny>()?;
                                }
                            }
                        }
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
    struct Holder<'a> {
        #[serde(default, borrow)]
        input: super::Field<'a>,
    }

    #[test]
    fn a_field_tells_null_from_absent() {
        let h: Holder<'_> = serde_json::from_str("{\"input\": null}").unwrap();
        assert_eq!(h.input.value(), Some(serde_json::Value::Null));
        let h: Holder<'_> = serde_json::from_str("{}").unwrap();
        assert_eq!(h.input.value(), None);
        let h: Holder<'_> = serde_json::from_str("{\"input\": {\"a\": [1]}}").unwrap();
        assert_eq!(h.input.value(), Some(serde_json::json!({"a": [1]})));
    }
}
