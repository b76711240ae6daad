//! The few parts of a JSON-RPC message the wrapper reads, borrowed from the line.

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// A JSON-RPC message, parsed only as far as routing needs.
#[derive(Debug, Deserialize)]
pub(crate) struct Envelope<'a> {
    #[serde(borrow, default)]
    pub(crate) method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(crate) id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) result: Option<&'a RawValue>,
}

impl<'a> Envelope<'a> {
    /// The message in `line`, or `None` when it is not a JSON object.
    pub(crate) fn parse(line: &'a str) -> Option<Envelope<'a>> {
        serde_json::from_str(line).ok()
    }
}

/// The parameters of `tools/call`.
#[derive(Debug, Deserialize)]
pub(crate) struct CallParams<'a> {
    #[serde(borrow)]
    pub(crate) name: &'a RawValue,
    /// `Some("null")` for `"arguments": null`, so a repair replaces it in place.
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) arguments: Option<&'a RawValue>,
}

/// A member that is present, `null` included.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// A JSON object's members in order, a member given twice kept twice (a derived reader
/// refuses the object, a `Value` keeps the last: neither says what was repeated).
#[derive(Debug)]
pub(crate) struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'a> Members<'a> {
    /// The members of the object `text`, or `None` when it is not one.
    pub(crate) fn parse(text: &'a str) -> Option<Members<'a>> {
        serde_json::from_str(text).ok()
    }

    /// Every value given for `key`, in order.
    pub(crate) fn all<'k>(&'k self, key: &'k str) -> impl Iterator<Item = &'a RawValue> + 'k {
        self.0.iter().filter(move |(k, _)| k == key).map(|(_, v)| *v)
    }

    /// The first member given again (in line order). One pass with a set: a line may hold
    /// millions of members, and comparing each with every other would not end.
    pub(crate) fn repeated(&self) -> Option<&str> {
        let mut seen = std::collections::HashSet::with_capacity(self.0.len());
        self.0.iter().map(|(k, _)| k.as_str()).find(|k| !seen.insert(*k))
    }
}

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Each;
        impl<'de> Visitor<'de> for Each {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry::<String, &'de RawValue>()? {
                    out.push(entry);
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(Each)
    }
}

/// The result of `tools/list`.
#[derive(Debug, Deserialize)]
pub(crate) struct ListResult {
    #[serde(default)]
    pub(crate) tools: Vec<serde_json::Value>,
    #[serde(default, rename = "nextCursor")]
    pub(crate) next_cursor: Option<serde_json::Value>,
}

/// The parameters of `tools/list`: only whether a cursor was given.
#[derive(Debug, Deserialize)]
pub(crate) struct ListParams<'a> {
    #[serde(borrow, default)]
    pub(crate) cursor: Option<&'a RawValue>,
}

/// A request id as a map key: its JSON value, re-rendered (so `"a"` and `"\u0061"` meet).
pub(crate) fn id_key(id: &RawValue) -> String {
    match serde_json::from_str::<serde_json::Value>(id.get()) {
        Ok(v) => v.to_string(),
        Err(_) => id.get().to_owned(),
    }
}

/// Where `inner` (a slice of `outer`) starts in `outer`.
pub(crate) fn offset(outer: &str, inner: &str) -> Option<usize> {
    let start = (inner.as_ptr() as usize).checked_sub(outer.as_ptr() as usize)?;
    (start + inner.len() <= outer.len()).then_some(start)
}
