//! The call pipeline, the only place that knows the stage order: salvage → validate
//! (valid: returned untouched) → repair at the failing paths → validate → ok or refusal.
//!
//! ```
//! use serde_json::json;
//! use toolfix::schema::ToolSet;
//!
//! let tools = ToolSet::new(&[json!({"name": "search", "parameters": {"type": "object",
//!     "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
//!     "required": ["query"], "additionalProperties": false}})]).unwrap();
//!
//! // Valid: the text comes back byte for byte.
//! let ok = tools.repair_call("search", r#"{"query": "rust",  "limit": 5}"#);
//! assert_eq!(ok.arguments_text(), Some(r#"{"query": "rust",  "limit": 5}"#));
//!
//! // Repaired: "5" becomes 5, with a record of the repair.
//! let fixed = tools.repair_call("search", r#"{"query": "rust", "limit": "5"}"#);
//! assert_eq!(fixed.arguments(), Some(&json!({"query": "rust", "limit": 5})));
//! assert_eq!(fixed.repairs()[0].kind.as_str(), "coerced_scalar");
//!
//! // Refused: an error the model can act on.
//! let bad = tools.repair_call("search", r#"{"limit": 5}"#);
//! assert!(!bad.is_ok());
//! assert!(bad.refusal().unwrap().message.contains("/query"));
//! ```

use crate::feedback::{self, Refusal};
use crate::pointer::{Moves, TextIndex, render};
use crate::repair::{self, Ctx};
use crate::report::{CallNote, Outcome, Repair, RepairKind, Report};
use crate::salvage::{self, Truncation, UncertainKind};
use crate::schema::view::{self, Types};
use crate::schema::{Policy, Tool, ToolSet};
use crate::validate::violations;
use crate::{Limits, Result};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// What became of one call: arguments the schema accepts, or a refusal; and the report.
#[derive(Clone, Debug)]
pub struct CallOutcome {
    report: Report,
    result: std::result::Result<Accepted, Refusal>,
}

#[derive(Clone, Debug)]
struct Accepted {
    text: String,
    value: Value,
}

impl CallOutcome {
    /// The tool's declared (canonical) name when the name resolved — `get_weather` for a
    /// call to `GetWeather` — otherwise the name as sent.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolfix::ToolSet;
    ///
    /// let tools = ToolSet::new(&[json!({"name": "get_weather", "parameters": {"type": "object"}})]).unwrap();
    /// assert_eq!(tools.repair_call("GetWeather", "{}").name(), "get_weather");
    /// ```
    #[must_use]
    pub fn name(&self) -> &str {
        &self.report.tool
    }

    /// True when the call is accepted (untouched or repaired).
    #[must_use]
    pub fn is_ok(&self) -> bool {
        self.result.is_ok()
    }

    /// The accepted arguments as JSON text: the model's text byte for byte when untouched,
    /// otherwise re-serialised with every unchanged part copied as written.
    #[must_use]
    pub fn arguments_text(&self) -> Option<&str> {
        self.result.as_ref().ok().map(|a| a.text.as_str())
    }

    /// The accepted arguments as a value.
    #[must_use]
    pub fn arguments(&self) -> Option<&Value> {
        self.result.as_ref().ok().map(|a| &a.value)
    }

    /// The refusal, when the call is refused.
    #[must_use]
    pub fn refusal(&self) -> Option<&Refusal> {
        self.result.as_ref().err()
    }

    /// The report: outcome, text fixes, repairs and notes.
    #[must_use]
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// How the call ended.
    #[must_use]
    pub fn outcome(&self) -> Outcome {
        self.report.outcome
    }

    /// The schema-level repairs made.
    #[must_use]
    pub fn repairs(&self) -> &[Repair] {
        &self.report.repairs
    }

    /// Notes for the model.
    #[must_use]
    pub fn notes(&self) -> &[String] {
        &self.report.notes
    }

    /// The report and the refusal, to change (`extend`).
    pub(crate) fn parts_mut(&mut self) -> (&mut Report, Option<&mut Refusal>) {
        (&mut self.report, self.result.as_mut().err())
    }

    /// Deserialize the accepted arguments into `T`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Bind`](crate::ErrorKind) when the call was refused or the value does
    /// not fit `T`.
    pub fn bind<T: DeserializeOwned>(&self) -> Result<T> {
        crate::bind::bind_value(self.arguments(), self.refusal())
    }
}

impl serde::Serialize for CallOutcome {
    /// `{"name","outcome","arguments"?: <raw JSON>,"error"?: {"message","issues"},"report":
    /// {...}}`: the arguments are the accepted text itself on one line (layout outside
    /// strings dropped), so numbers, escapes and key order survive.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolfix::ToolSet;
    ///
    /// let tools = ToolSet::new(&[json!({"name": "t", "parameters": {"type": "object"}})]).unwrap();
    /// let out = tools.repair_call("t", "{\"n\": 1.50}");
    /// let line = serde_json::to_string(&out).unwrap();
    /// assert!(line.starts_with(r#"{"name":"t","outcome":"untouched","arguments":{"n":1.50}"#));
    /// ```
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut s = serializer.serialize_struct("CallOutcome", 4)?;
        s.serialize_field("name", self.name())?;
        s.serialize_field("outcome", &self.outcome())?;
        match &self.result {
            Ok(a) => {
                let raw = serde_json::value::RawValue::from_string(crate::salvage::compact(&a.text))
                    .map_err(serde::ser::Error::custom)?;
                s.serialize_field("arguments", &raw)?;
            }
            Err(r) => s.serialize_field("error", r)?,
        }
        s.serialize_field("report", &self.report)?;
        s.end()
    }
}

/// How to run the pipeline on one call: the limits, and whether the model's output was
/// cut by the token limit.
///
/// When `hit_token_limit` is set (a `finish_reason` of `"length"`), every call whose text
/// ended with something open counts as truncated, even when only closers are missing.
///
/// ```
/// use serde_json::json;
/// use toolfix::{CallOptions, ToolSet};
///
/// let tools = ToolSet::new(&[json!({"name": "write_file", "parameters": {"type": "object",
///     "properties": {"path": {"type": "string"}}}})]).unwrap();
/// // Only the closing brace is missing: closed, as models often drop it.
/// assert!(tools.repair_call("write_file", r#"{"path": "/a""#).is_ok());
/// // But the output hit the token limit: a tool that may change things gets no cut-off call.
/// let cut = CallOptions::default().with_hit_token_limit(true);
/// assert!(!tools.repair_call_with("write_file", r#"{"path": "/a""#, &cut).is_ok());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallOptions {
    /// Size and depth limits.
    pub limits: Limits,
    /// The model's output stopped at the token limit (`finish_reason: "length"`).
    pub hit_token_limit: bool,
}

impl CallOptions {
    /// These options under `limits`.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// These options with `hit_token_limit` set as given.
    #[must_use]
    pub fn with_hit_token_limit(mut self, hit_token_limit: bool) -> Self {
        self.hit_token_limit = hit_token_limit;
        self
    }
}

impl From<Limits> for CallOptions {
    fn from(limits: Limits) -> Self {
        CallOptions { limits, hit_token_limit: false }
    }
}

impl ToolSet {
    /// Run the pipeline on a call to tool `name` with arguments as the model wrote them.
    #[must_use]
    pub fn repair_call(&self, name: &str, raw_arguments: &str) -> CallOutcome {
        self.repair_call_with(name, raw_arguments, &CallOptions::default())
    }

    /// As [`ToolSet::repair_call`], with `options` (limits, and whether the output hit the
    /// token limit).
    #[must_use]
    pub fn repair_call_with(&self, name: &str, raw_arguments: &str, options: &CallOptions) -> CallOutcome {
        match self.tool(name) {
            Ok(tool) => tool.repair_call_with(raw_arguments, options),
            Err(e) => {
                let declared = match &e {
                    crate::schema::NameError::Broken { name, .. } => name.as_str(),
                    _ => name,
                };
                rejected(declared, Vec::new(), Vec::new(), feedback::unknown_tool(&e))
            }
        }
    }

    /// Run the pipeline on arguments given as a JSON value (a batch line whose
    /// `arguments` is not text). A string value is taken as the raw text.
    #[must_use]
    pub fn repair_value(&self, name: &str, arguments: &Value) -> CallOutcome {
        match arguments {
            Value::String(s) => self.repair_call(name, s),
            other => self.repair_call(name, &other.to_string()),
        }
    }
}

impl Tool {
    /// Run the pipeline on a call to this tool, under the default [`Limits`].
    #[must_use]
    pub fn repair_call(&self, raw: &str) -> CallOutcome {
        self.repair_call_with(raw, &CallOptions::default())
    }

    /// Run the pipeline on a call to this tool, with `options`.
    #[must_use]
    pub fn repair_call_with(&self, raw: &str, options: &CallOptions) -> CallOutcome {
        let mut outcome = run(self, raw, options);
        if !outcome.is_ok() {
            crate::extend::after_refusal(self, raw, options, &mut outcome);
        }
        outcome.report.trace();
        outcome
    }
}

fn rejected(
    tool: &str,
    text_fixes: Vec<crate::salvage::TextFix>,
    repairs: Vec<Repair>,
    refusal: Refusal,
) -> CallOutcome {
    CallOutcome {
        report: Report { tool: tool.to_owned(), outcome: Outcome::Rejected, text_fixes, repairs, notes: Vec::new() },
        result: Err(refusal),
    }
}

fn accepted(
    tool: &Tool,
    text: String,
    value: Value,
    text_fixes: Vec<crate::salvage::TextFix>,
    repairs: Vec<Repair>,
    notes: &[crate::report::CallNote],
    untouched: bool,
) -> CallOutcome {
    let outcome = if untouched { Outcome::Untouched } else { Outcome::Repaired };
    CallOutcome {
        report: Report {
            tool: tool.name().to_owned(),
            outcome,
            text_fixes,
            repairs,
            notes: notes.iter().map(feedback::note).collect(),
        },
        result: Ok(Accepted { text, value }),
    }
}

pub(crate) fn run(tool: &Tool, raw: &str, options: &CallOptions) -> CallOutcome {
    let limits = &options.limits;
    let trimmed = raw.trim();
    let empty = trimmed.is_empty() || trimmed == "null";
    let source = if empty { "{}" } else { raw };
    // Strict JSON (serde_json refuses lone surrogates, as salvage does) is parsed once. An
    // object the schema accepts, for a tool with no hint to check, is done: one parse, one
    // validation. Otherwise the value stands for the salvaged text when salvage leaves it
    // untouched.
    let mut strict = if !empty && raw.len() <= limits.max_input_bytes && limits.max_depth >= Limits::DEFAULT_MAX_DEPTH {
        salvage::parse_value(raw).ok().filter(|(value, _)| value.is_object())
    } else {
        None
    };
    if let Some((value, false)) = &strict
        && !tool.hints().has_checks()
        && !tool.has_tagged_strings()
        && tool.is_valid(value)
    {
        let value = strict.map(|(value, _)| value).unwrap_or_default();
        return accepted(tool, raw.to_owned(), value, Vec::new(), Vec::new(), &[], true);
    }
    let salvaged = match salvage::salvage_with(source, limits) {
        Ok(s) => s,
        Err(e) => return rejected(tool.name(), Vec::new(), Vec::new(), feedback::unreadable(tool, &e, raw, limits)),
    };
    let fixes = salvaged.fixes().to_vec();
    if tool.policy() == Policy::Strict && salvaged.is_truncated() {
        return rejected(tool.name(), fixes, Vec::new(), feedback::truncated(tool, None, true));
    }
    let parsed = match strict.take() {
        Some(parsed) if salvaged.is_untouched() => Ok(parsed),
        _ => salvage::parse_value(salvaged.text()),
    };
    let (mut value, dupes) = match parsed {
        Ok(v) => v,
        Err(e) => {
            let e = crate::Error::new(crate::ErrorKind::Syntax, format!("repaired JSON does not fit a value: {e}"));
            return rejected(tool.name(), fixes, Vec::new(), feedback::unreadable(tool, &e, raw, limits));
        }
    };
    // Truncation (issue 9 §1): evidently cut, or unclosed when the output hit the limit.
    let cut = salvaged.truncation().filter(|t| t.is_evident() || options.hit_token_limit);
    let mut notes = Vec::new();
    let mut before_drop = None;
    if let Some(cut) = cut {
        if !tool.is_read_only() {
            let refusal = feedback::cut_off(tool, cut, feedback::CutRefusal::MayChangeThings);
            return rejected(tool.name(), fixes, Vec::new(), refusal);
        }
        let before = value.clone();
        match drop_uncertain(tool, cut, &mut value, &mut notes) {
            Ok(true) => before_drop = Some(before),
            Ok(false) => {}
            Err(refusal) => return rejected(tool.name(), fixes, Vec::new(), refusal),
        }
    } else if salvaged.has_truncated_string() && !tool.is_read_only() {
        let path = last_string_path(salvaged.text());
        return rejected(tool.name(), fixes, Vec::new(), feedback::truncated(tool, path.as_deref(), false));
    }
    let truncated = salvaged.is_truncated() || cut.is_some();
    let mut untouched = salvaged.is_untouched() && !empty && notes.is_empty() && !dupes;
    let mut text = salvaged.into_text().into_owned();
    if let Some(before) = before_drop {
        text = render_text(&text, &value, &before, &Moves::default());
    }
    if dupes && let Err(refusal) = settle_duplicates(tool, &mut text, &value, &mut notes) {
        return rejected(tool.name(), fixes, Vec::new(), refusal);
    }
    let mut repairs = Vec::new();
    // The whole arguments sent as a JSON string holding the object.
    let root = tool.parameters();
    if let Value::String(s) = &value
        && view::types(root, root).has(Types::OBJECT)
        && s.trim_start().starts_with('{')
        && tool.policy() != Policy::Strict
        && let Ok(inner) = salvage::salvage_with(s, limits)
        && inner.truncation().is_none()
        && let Ok((decoded @ Value::Object(_), false)) = salvage::parse_value(inner.text())
    {
        let inner_text = inner.text().to_owned();
        repairs.push(Repair::new(RepairKind::DocumentDecoded, "", Some(value.clone()), None));
        value = decoded;
        text = inner_text;
        untouched = false;
    }
    if !value.is_object() && !view::types(root, root).accepts(&value) {
        let what = format!("the arguments are {}, not an object", kind_name(&value));
        return rejected(tool.name(), fixes, repairs, feedback::not_arguments(tool, &what, Some(raw)));
    }
    if tool.is_valid(&value) {
        if !tool.hints().has_checks() && !tool.has_tagged_strings() {
            return accepted(tool, text, value, fixes, repairs, &notes, untouched);
        }
        let original = value.clone();
        let mut cx = Ctx::new(tool, &[], limits.max_depth);
        repair::apply_hints(&mut cx, tool, &mut value);
        if cx.problems.iter().any(|p| p.kind.is_fatal()) {
            let found = violations(tool.validator(), &value);
            return rejected(
                tool.name(),
                fixes,
                repairs,
                feedback::refusal(tool, &found, &cx.problems, &value, None, truncated),
            );
        }
        if cx.repairs.is_empty() {
            return accepted(tool, text, value, fixes, repairs, &notes, untouched);
        }
        if !tool.is_valid(&value) {
            let found = violations(tool.validator(), &value);
            return rejected(
                tool.name(),
                fixes,
                repairs,
                feedback::refusal(tool, &found, &cx.problems, &value, Some((&original, &cx.moves)), truncated),
            );
        }
        repairs.extend(cx.repairs);
        let rendered = render_text(&text, &value, &original, &cx.moves);
        notes.extend(cx.notes);
        return accepted(tool, rendered, value, fixes, repairs, &notes, false);
    }
    let found = violations(tool.validator(), &value);
    let index = TextIndex::build(&text);
    let original = value.clone();
    let out = repair::repair(tool, value, &found, index.as_ref(), Some(&original), limits.max_depth);
    let fatal = out.problems.iter().any(|p| p.kind.is_fatal());
    if fatal || !tool.is_valid(&out.value) {
        let after = violations(tool.validator(), &out.value);
        repairs.extend(out.repairs);
        return rejected(
            tool.name(),
            fixes,
            repairs,
            feedback::refusal(tool, &after, &out.problems, &out.value, Some((&original, &out.moves)), truncated),
        );
    }
    let rendered = match &index {
        Some(idx) => render(&out.value, &original, idx, &out.moves),
        None => out.value.to_string(),
    };
    repairs.extend(out.repairs);
    notes.extend(out.notes);
    accepted(tool, rendered, out.value, fixes, repairs, &notes, false)
}

/// A cut call to a read-only tool: the complete values are kept, the outermost uncertain
/// value (the top-level member that holds the cut) is dropped when it is optional, and the
/// call is refused when it is required (or named by a hint, or the schema is too complex
/// to tell).
fn drop_uncertain(
    tool: &Tool,
    cut: &Truncation,
    value: &mut Value,
    notes: &mut Vec<CallNote>,
) -> Result<bool, Refusal> {
    // The outermost value at the cut: kept (and dropped here when optional), or a member
    // salvage already left out (`{"a":`, `{"a": tr`), which must not be required either.
    let Some(u) = cut.uncertain().iter().find(|u| !u.pointer.is_empty() && (u.kept || u.kind != UncertainKind::Key))
    else {
        return Ok(false);
    };
    let refuse = || feedback::cut_off(tool, cut, feedback::CutRefusal::Required(&u.pointer));
    let key = match u.pointer.strip_prefix('/') {
        Some(rest) if !rest.contains('/') => rest.replace("~1", "/").replace("~0", "~"),
        _ => return Err(refuse()),
    };
    let root = tool.parameters();
    let listed = root.get("required").and_then(Value::as_array).is_some_and(|r| r.iter().any(|k| *k == *key));
    let complex = ["$ref", "allOf", "anyOf", "oneOf", "if", "dependentRequired", "dependentSchemas"]
        .iter()
        .any(|k| root.get(*k).is_some());
    if listed || complex || tool.hints().named_properties().any(|p| p == key) {
        return Err(refuse());
    }
    let Some(map) = value.as_object_mut() else { return Err(refuse()) };
    if !u.kept {
        notes.push(CallNote::CutDropped { path: u.pointer.clone() });
        return Ok(false);
    }
    if map.shift_remove(&key).is_none() {
        return Err(refuse());
    }
    notes.push(CallNote::CutDropped { path: u.pointer.clone() });
    Ok(true)
}

/// Arguments that give a key twice: refused when the values differ, else kept once.
fn settle_duplicates(tool: &Tool, text: &mut String, value: &Value, notes: &mut Vec<CallNote>) -> Result<(), Refusal> {
    let found = salvage::duplicate_keys(text);
    if let Some(d) = found.iter().find(|d| !d.values_agree()) {
        let values: Vec<String> =
            d.values.iter().map(|v| crate::span::shorten(&v.to_string(), 80).into_owned()).collect();
        return Err(feedback::duplicate_key(tool, &d.pointer, &values));
    }
    for d in &found {
        notes.push(CallNote::DuplicateKept { path: d.pointer.clone(), times: d.values.len() });
    }
    // Render again every object that gave a key twice (the rest is copied as written).
    let mut original = value.clone();
    for d in &found {
        // A marker member makes the object (and those around it) differ, so it is
        // rendered member by member, each member's text copied as written.
        let parent = d.pointer.rsplit_once('/').map_or("", |(p, _)| p);
        if let Some(map) = original.pointer_mut(parent).and_then(Value::as_object_mut) {
            map.insert("\u{0}duplicate".to_owned(), Value::Null);
        }
    }
    *text = render_text(text, value, &original, &Moves::default());
    Ok(())
}

fn render_text(text: &str, value: &Value, original: &Value, moves: &Moves) -> String {
    match TextIndex::build(text) {
        Some(idx) => render(value, original, &idx, moves),
        None => value.to_string(),
    }
}

fn kind_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The pointer of the last string value in strict JSON text: where a cut-off string is.
fn last_string_path(text: &str) -> Option<String> {
    let value: Value = serde_json::from_str(text).ok()?;
    let mut stack = vec![(String::new(), &value)];
    let mut last = None;
    while let Some((path, v)) = stack.pop() {
        match v {
            Value::String(_) => {
                last = Some(path);
                break;
            }
            Value::Object(map) => {
                stack.extend(map.iter().map(|(k, c)| (crate::pointer::join(&path, k), c)));
            }
            Value::Array(list) => {
                stack.extend(list.iter().enumerate().map(|(i, c)| (crate::pointer::join(&path, &i.to_string()), c)));
            }
            _ => {}
        }
    }
    last
}
