//! Writing JSON output lines that embed raw JSON text (so numbers and key order survive).

use serde_json::Value;
use std::fmt::Write as _;

/// One JSON object written key by key.
#[derive(Debug)]
pub(crate) struct Obj {
    text: String,
}

impl Obj {
    pub(crate) fn new() -> Self {
        Obj { text: String::from("{") }
    }

    fn key(&mut self, key: &str) {
        if self.text.len() > 1 {
            self.text.push(',');
        }
        self.text.push_str(&quote(key));
        self.text.push(':');
    }

    /// A member whose value is already strict JSON text (compacted here).
    pub(crate) fn raw(mut self, key: &str, json: &str) -> Self {
        self.key(key);
        self.text.push_str(&toolfix::salvage::compact(json));
        self
    }

    /// A member with a `serde_json` value.
    pub(crate) fn value(mut self, key: &str, value: &Value) -> Self {
        self.key(key);
        let _ = write!(self.text, "{value}");
        self
    }

    /// A string member.
    pub(crate) fn str(mut self, key: &str, s: &str) -> Self {
        self.key(key);
        self.text.push_str(&quote(s));
        self
    }

    /// Append already-written members (`"k":v,...`).
    pub(crate) fn members(mut self, members: &str) -> Self {
        if members.is_empty() {
            return self;
        }
        if self.text.len() > 1 {
            self.text.push(',');
        }
        self.text.push_str(members);
        self
    }

    pub(crate) fn finish(mut self) -> String {
        self.text.push('}');
        self.text
    }
}

/// `s` as a JSON string literal, with U+2028/U+2029 escaped so no line splitter breaks it.
pub(crate) fn quote(s: &str) -> String {
    let q = Value::String(s.to_owned()).to_string();
    if q.contains(['\u{2028}', '\u{2029}']) {
        q.replace('\u{2028}', "\\u2028").replace('\u{2029}', "\\u2029")
    } else {
        q
    }
}

/// The fixes of a salvage as a JSON array of `{"kind","span"}`.
pub(crate) fn fixes(fixes: &[toolfix::salvage::TextFix]) -> Value {
    Value::Array(
        fixes
            .iter()
            .map(|f| serde_json::json!({"kind": f.kind.as_str(), "span": [f.span.start, f.span.end]}))
            .collect(),
    )
}
