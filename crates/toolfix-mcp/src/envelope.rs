//! The few parts of a JSON-RPC message the wrapper reads, borrowed from the line.

use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

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
    #[serde(borrow, default)]
    pub(crate) arguments: Option<&'a RawValue>,
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
