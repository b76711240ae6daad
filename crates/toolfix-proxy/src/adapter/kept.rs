//! What the value path of Anthropic Messages and OpenAI Responses keeps of a block or item
//! it writes anew (a text block, a `message` item, a repaired call): every member the
//! upstream gave that still means what it meant. A member whose meaning is tied to text
//! that changed (Anthropic `citations`, Responses `annotations` and `logprobs`), to a name
//! the proxy resolved to another tool (`toolset_name`, `namespace`), or that has no block
//! left to go on (a text block merged into the first, a text block with no text left) is
//! dropped, and each one dropped is reported in the answer's `x_toolfix.dropped`: `apply`
//! leaves the notes in the response under `x_toolfix` (the report written next replaces
//! that member, and takes the notes in: see [`into_report`]).

use serde_json::{Map, Value, json};
use toolfix::FixedCall;
use toolfix::extract::Channel;

/// The member under which `apply` leaves its notes, and the report's own.
const KEY: &str = "x_toolfix";

/// Why a member was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Why {
    /// It points into text that changed (the markup taken out, a note added, other
    /// blocks' text joined to it).
    TextChanged,
    /// Its block's text was joined into the first text block (or item): it has no block
    /// of its own left.
    Merged,
    /// No text is left: the block (or item) it was on is not written.
    NoText,
    /// It names the call's tool family, and the call's name was resolved to another tool.
    Renamed,
    /// A stream could not carry it (the proxy sends its text in one block or item: the
    /// text it went with is not that block's).
    Streamed,
}

impl Why {
    fn as_str(self) -> &'static str {
        match self {
            Why::TextChanged => "text_changed",
            Why::Merged => "merged",
            Why::NoText => "no_text",
            Why::Renamed => "renamed",
            Why::Streamed => "streamed",
        }
    }
}

/// The members dropped so far: one note per member, where it was (`at`: the upstream's
/// place, `{"block": i}` or `{"output": i, "content": j}`), its name and why.
#[derive(Debug, Default)]
pub(crate) struct Dropped(Vec<Value>);

impl Dropped {
    /// Note `member` of the block or item at `at` as dropped.
    pub(crate) fn note(&mut self, at: &Value, member: &str, why: Why) {
        let mut note = at.as_object().cloned().unwrap_or_default();
        note.insert("member".to_owned(), json!(member));
        note.insert("reason".to_owned(), json!(why.as_str()));
        self.0.push(Value::Object(note));
    }

    /// Note every member of `block` but those in `standard` (the ones the proxy writes
    /// itself) and those that say nothing as dropped.
    pub(crate) fn note_all(&mut self, block: &Value, at: &Value, standard: &[&str], why: Why) {
        for (key, v) in block.as_object().into_iter().flatten() {
            if !standard.contains(&key.as_str()) && says_something(v) {
                self.note(at, key, why);
            }
        }
    }

    /// The notes as a list (`None` without any), after `before` (notes taken earlier).
    pub(crate) fn after(self, before: Option<Value>) -> Option<Value> {
        let mut all = match before {
            Some(Value::Array(list)) => list,
            _ => Vec::new(),
        };
        all.extend(self.0);
        (!all.is_empty()).then_some(Value::Array(all))
    }

    /// Leave the notes in `response` for the report (none: no member is left there, so a
    /// member the upstream sent under that name is never taken for notes).
    pub(crate) fn leave_in(self, response: &mut Map<String, Value>) {
        if self.0.is_empty() {
            response.remove(KEY);
        } else {
            response.insert(KEY.to_owned(), json!({"dropped": self.0}));
        }
    }
}

/// A member that says something (not `null`, `[]` or `{}`): dropping one that says
/// nothing loses nothing, and is neither done nor reported.
pub(crate) fn says_something(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        _ => true,
    }
}

/// The notes `apply` left in `response`, taken out of it.
pub(crate) fn take(response: &mut Value) -> Option<Value> {
    let notes = response.as_object_mut()?.remove(KEY)?;
    let Value::Object(mut notes) = notes else { return None };
    notes.remove("dropped")
}

/// The report with the notes `apply` left in `response` (see [`Dropped::leave_in`]), set
/// as its `x_toolfix`.
pub(crate) fn into_report(response: &mut Value, mut report: Value) {
    let dropped = take(response);
    if let (Some(d), Some(r)) = (dropped, report.as_object_mut()) {
        r.insert("dropped".to_owned(), d);
    }
    if let Some(obj) = response.as_object_mut() {
        obj.insert(KEY.to_owned(), report);
    }
}

/// The upstream's block or item (of type `kind`, its id under `id_key`) of `calls[n]`, a
/// call the server parsed, with its place: the `j`-th one with the call's id and the name
/// as the model wrote it, for the `j`-th such call (two may share an id).
pub(crate) fn served<'v>(
    old: &'v [Value],
    calls: &[FixedCall],
    n: usize,
    kind: &str,
    id_key: &str,
) -> Option<(usize, &'v Value)> {
    let call = calls.get(n)?;
    if call.channel != Channel::ToolCalls {
        return None;
    }
    let same =
        |id: Option<&str>, name: Option<&str>| id == Some(call.id.as_str()) && name == Some(call.written_name.as_str());
    let j = calls
        .get(..n)?
        .iter()
        .filter(|c| c.channel == Channel::ToolCalls && same(Some(c.id.as_str()), Some(c.written_name.as_str())))
        .count();
    old.iter()
        .enumerate()
        .filter(|(_, o)| {
            o.get("type").and_then(Value::as_str) == Some(kind)
                && same(o.get(id_key).and_then(Value::as_str), o.get("name").and_then(Value::as_str))
        })
        .nth(j)
}
