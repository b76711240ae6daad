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

use crate::error::Result;
use crate::extract::Leak;
use crate::feedback;
use crate::limits::Limits;
use crate::pointer::{
    Indexed, Moves, Nodes, NotParsed, Original, Scratch, TextIndex, index_strict, parse_indexed, render,
    render_changed, value_of,
};
use crate::repair::{self, Ctx};
use crate::report::{CallNote, Outcome, Refusal, Repair, RepairKind, Report};
use crate::salvage::{self, TextFix, Truncation, UncertainKind};
use crate::schema::view::{self, Types};
use crate::schema::{Extensions, NameError, Policy, Tool, ToolSet};
use crate::validate::{Detail, Violation, violations, violations_found};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::OnceLock;

/// What became of one call: arguments the schema accepts, or a refusal; and the report.
#[derive(Clone, Debug)]
pub struct CallOutcome {
    report: Report,
    result: std::result::Result<Accepted, Refusal>,
    /// The canonical key of the accepted call (`canonical`), made once when first asked.
    key: OnceLock<String>,
}

#[derive(Clone, Debug)]
struct Accepted {
    text: String,
    value: Arguments,
}

/// The value of accepted arguments: made by the pipeline, or (arguments accepted as
/// written, validated over their text) read from the text when first asked. A value made
/// is kept as it is (a cell set at once costs as much as the value's first read), and one
/// read on demand is boxed (the outcome stays the size it is with a value made).
#[derive(Clone, Debug)]
enum Arguments {
    Made(Value),
    OnDemand(OnceLock<Box<Value>>),
}

impl Accepted {
    /// The value of the accepted text. Text accepted as written (strict JSON with no key
    /// given twice) is read again, by the pipeline's own strict read: the value it makes
    /// at once for a direct call.
    fn value(&self) -> &Value {
        let cell = match &self.value {
            Arguments::Made(value) => return value,
            Arguments::OnDemand(cell) => cell,
        };
        cell.get_or_init(|| {
            let text = self.text.as_str();
            let made = index_strict(text, &mut Scratch::default()).and_then(|read| value_of(text, &read.nodes));
            // Not reached (the text was read before): `serde_json` reads it.
            Box::new(made.unwrap_or_else(|_| serde_json::from_str(text).unwrap_or_default()))
        })
    }
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
        self.result.as_ref().ok().map(Accepted::value)
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

    /// The canonical key of the accepted call (name and arguments, key order, whitespace
    /// and number spelling ignored), made from the accepted value once: the reply's
    /// dedupe and the storm guard share it. `None` when refused.
    pub(crate) fn canonical_key(&self) -> Option<&str> {
        let accepted = self.result.as_ref().ok()?;
        Some(self.key.get_or_init(|| crate::canonical::value_key(&self.report.tool, accepted.value())))
    }

    /// The report, to change (the reply marks calls it moved out of text).
    pub(crate) fn report_mut(&mut self) -> &mut Report {
        &mut self.report
    }

    /// Deserialize the accepted arguments into `T`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Bind`](crate::error::ErrorKind) when the call was refused or the value does
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
    /// Arguments accepted as written need not have their value made unless asked for
    /// ([`CallOutcome::arguments`]): the reply layer, whose callers mostly pass the text
    /// on, validates them over their text. Direct calls make the value at once (one read
    /// for both).
    pub(crate) value_on_demand: bool,
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

    /// These options with the value of arguments accepted as written made only when asked.
    #[must_use]
    pub(crate) fn with_value_on_demand(mut self) -> Self {
        self.value_on_demand = true;
        self
    }
}

impl From<Limits> for CallOptions {
    fn from(limits: Limits) -> Self {
        CallOptions { limits, hit_token_limit: false, value_on_demand: false }
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
                    NameError::Broken { name, .. } => name.as_str(),
                    _ => name,
                };
                let outcome = CallOutcome::refused(declared, Vec::new(), Vec::new(), feedback::unknown_tool(&e));
                outcome.report.trace();
                outcome
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

    /// As [`ToolSet::repair_call`], and when the call is refused, an opt-in second try that
    /// also matches property names fuzzily (a small edit distance, one candidate only).
    /// What that try finds is an [`UncertainCall`], never an accepted outcome: the caller
    /// decides by the tool's risk.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolfix::ToolSet;
    ///
    /// let tools = ToolSet::new(&[json!({"name": "search", "parameters": {"type": "object",
    ///     "properties": {"query": {"type": "string"}}, "required": ["query"]}})]).unwrap();
    /// let (outcome, uncertain) = tools.repair_call_uncertain("search", r#"{"qeury": "rust"}"#);
    /// assert!(!outcome.is_ok());
    /// let uncertain = uncertain.unwrap();
    /// assert_eq!(uncertain.arguments(), &json!({"query": "rust"}));
    /// assert_eq!(uncertain.repairs()[0].kind.as_str(), "uncertain_match");
    /// ```
    #[must_use]
    pub fn repair_call_uncertain(&self, name: &str, raw: &str) -> (CallOutcome, Option<UncertainCall>) {
        let outcome = self.repair_call(name, raw);
        if outcome.is_ok() {
            return (outcome, None);
        }
        let Ok(tool) = self.tool(name) else {
            return (outcome, None);
        };
        let options = CallOptions::default();
        let read = match Draft::read(tool, raw, &options) {
            Read::Go(draft, _) => Some(draft),
            Read::Done(_) | Read::AsWritten => None,
        };
        let uncertain = read.and_then(|mut draft| {
            if draft.ending != Ending::Complete || draft.dupes {
                return None;
            }
            let found = violations(tool.validator(), &draft.value);
            let none = Extensions::default();
            let ext = tool.extensions().unwrap_or(&none);
            let mut repairs = repair::extension::apply(tool, ext, &mut draft.value, &found, true);
            if !repairs.iter().any(|r| r.kind == RepairKind::UncertainMatch) {
                return None;
            }
            let again = tool.repair_call_with(&draft.value.to_string(), &options);
            repairs.extend_from_slice(again.repairs());
            Some(UncertainCall { arguments: again.arguments()?.clone(), repairs })
        });
        (outcome, uncertain)
    }
}

/// Arguments that validate only thanks to an uncertain repair: never an accepted call.
#[derive(Clone, Debug, PartialEq)]
pub struct UncertainCall {
    arguments: Value,
    repairs: Vec<Repair>,
}

impl UncertainCall {
    /// The arguments, valid under the schema.
    #[must_use]
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }

    /// Every repair made, the uncertain ones (`uncertain_match`) among them.
    #[must_use]
    pub fn repairs(&self) -> &[Repair] {
        &self.repairs
    }

    /// Deserialize the arguments into `T`.
    ///
    /// # Errors
    ///
    /// When the value does not fit `T`.
    pub fn bind<T: DeserializeOwned>(&self) -> crate::error::Result<T> {
        crate::bind::bind_value(Some(&self.arguments), None)
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
        let outcome = run(self, raw, options);
        outcome.report.trace();
        outcome
    }
}

impl CallOutcome {
    /// This outcome refused with `refusal` (what was read and repaired is kept in the
    /// report): a call the reply layer will not run although its arguments were fine.
    pub(crate) fn into_refused(self, refusal: Refusal) -> CallOutcome {
        let mut report = self.report;
        report.outcome = Outcome::Rejected;
        CallOutcome { report, result: Err(refusal), key: self.key }
    }

    /// Arguments accepted untouched, as written (`raw`), their value not yet read.
    fn as_written(tool: &Tool, raw: &str) -> CallOutcome {
        CallOutcome {
            report: Report::new(tool.name(), Outcome::Untouched, Vec::new(), Vec::new(), Vec::new()),
            result: Ok(Accepted { text: raw.to_owned(), value: Arguments::OnDemand(OnceLock::new()) }),
            key: OnceLock::new(),
        }
    }

    fn refused(tool: &str, text_fixes: Vec<TextFix>, repairs: Vec<Repair>, refusal: Refusal) -> CallOutcome {
        CallOutcome {
            report: Report::new(tool, Outcome::Rejected, text_fixes, repairs, Vec::new()),
            result: Err(refusal),
            key: OnceLock::new(),
        }
    }
}

/// One call on its way through the phases: the arguments as they stand (strict JSON text
/// and its value) and everything done to them so far.
struct Draft<'r> {
    tool: &'r Tool,
    /// The arguments as the model wrote them.
    raw: &'r str,
    limits: Limits,
    /// The arguments as strict JSON text, copied as written wherever unchanged (the
    /// model's own text, borrowed, until something changes it).
    text: Cow<'r, str>,
    value: Value,
    /// The index of `text` as read, made by the same pass as `value` (dropped whenever
    /// `text` changes).
    index: Option<Nodes>,
    fixes: Vec<TextFix>,
    repairs: Vec<Repair>,
    notes: Vec<CallNote>,
    /// Nothing changed the model's text so far.
    untouched: bool,
    /// How the text ended.
    ending: Ending,
    /// How the text ended when it was unclosed (the cut, the values touching it).
    truncation: Option<Truncation>,
    /// The text gave a key twice.
    dupes: bool,
    /// The schema was asked and refuses `value` as it stands (reset whenever it changes).
    refused: bool,
}

/// How the arguments text ended.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ending {
    Complete,
    /// Unclosed: salvage closed it (a `null` where it stopped is where the output did).
    Unclosed,
    /// Unclosed inside a string.
    InString,
}

/// What the strict read of a call's text found: JSON the schema accepts as it stands
/// (its value read, or not built: see [`Strict::AsWritten`]), or what was read (its value,
/// whether a key was given twice, its index).
enum Strict {
    Valid(Value),
    /// The schema accepts the text as written, asked over the text (no value built), and
    /// no phase after the read has anything to do with it.
    AsWritten,
    Read((Value, bool, Option<Nodes>)),
}

/// What [`Draft::read`] gives: a draft for the next phases (and whether it is done), a
/// call already settled (refused), or arguments accepted as written whose value was not
/// built.
#[expect(
    clippy::large_enum_variant,
    reason = "the draft is made once per call and moved once: boxing it costs an allocation per call"
)]
enum Read<'r> {
    Go(Draft<'r>, Step),
    Done(Box<CallOutcome>),
    AsWritten,
}

/// What a phase decided: go on, or done with the draft as it stands (accepted).
enum Step {
    Next,
    Done,
}

type Phase = std::result::Result<Step, Refusal>;

/// The pipeline on one call, phase by phase: read → settle the cut → shape → validate or
/// repair → finish.
pub(crate) fn run(tool: &Tool, raw: &str, options: &CallOptions) -> CallOutcome {
    let (mut draft, step) = match Draft::read(tool, raw, options) {
        Read::Go(draft, step) => (draft, step),
        Read::Done(outcome) => return *outcome,
        Read::AsWritten => return CallOutcome::as_written(tool, raw),
    };
    let mut result = Ok(step);
    // Issue 24 §3: a string holding another declared parameter's markup.
    if let Ok(step) = result {
        result = draft.leaked_markup(step);
    }
    if let Ok(Step::Next) = result {
        result = draft.settle_cut(options);
    }
    if let Ok(Step::Next) = result {
        result = draft.shape();
    }
    if let Ok(Step::Next) = result {
        result = draft.validate_or_repair();
    }
    draft.finish(result)
}

impl<'r> Draft<'r> {
    /// Read the text. Strict JSON that the schema accepts is done at once: one parse, one
    /// validation, the text kept byte for byte. Anything else is salvaged and parsed.
    fn read(tool: &'r Tool, raw: &'r str, options: &CallOptions) -> Read<'r> {
        let limits = &options.limits;
        let trimmed = raw.trim();
        let empty = trimmed.is_empty() || trimmed == "null";
        let source = if empty { "{}" } else { raw };
        let refuse = |fixes, refusal| Box::new(CallOutcome::refused(tool.name(), fixes, Vec::new(), refusal));
        // Strict JSON (serde_json refuses lone surrogates, as salvage does) is parsed once.
        let (strict, refused_strict) =
            if !empty && raw.len() <= limits.max_input_bytes && limits.max_depth >= Limits::DEFAULT_MAX_DEPTH {
                if salvage::unclosed(raw) || ends_with_trailing_comma(raw) || evidently_no_strict_json(raw) {
                    // No strict JSON (an object or array ends with its closer, with no comma
                    // before it; no `'` or comma before a closer outside strings): not read
                    // twice.
                    (None, true)
                } else {
                    // Valid as read: done at once, the index (never used then) left to the
                    // tool's next read.
                    let read = tool.with_buffers(|buffers| {
                        if options.value_on_demand {
                            read_strict_text(tool, raw, &mut buffers.parse)
                        } else {
                            read_strict(tool, raw, &mut buffers.parse)
                        }
                    });
                    match read {
                        Ok(Strict::AsWritten) => return Read::AsWritten,
                        Ok(Strict::Valid(value)) => {
                            let mut draft = Draft::new(tool, raw, *limits, Cow::Borrowed(raw), value, Vec::new());
                            draft.untouched = true;
                            return Read::Go(draft, Step::Done);
                        }
                        Ok(Strict::Read(read)) => (Some(read).filter(|(value, ..)| value.is_object()), false),
                        Err(no_json) => (None, no_json),
                    }
                }
            } else {
                (None, false)
            };
        // Strict JSON the schema refuses: salvage would hand the text back untouched.
        if let Some((value, dupes, index)) = strict {
            // Asked above unless the hints have checks or a string is tagged.
            let refused = !dupes && plain_schema(tool);
            let mut draft = Draft::new(tool, raw, *limits, Cow::Borrowed(raw), value, Vec::new());
            draft.index = index;
            draft.untouched = !dupes;
            draft.dupes = dupes;
            draft.refused = refused;
            return Read::Go(draft, Step::Next);
        }
        // Text the strict read found no strict JSON skips salvage's own strict pass.
        // The salvaged text is read in the same buffers (a text a strict tool refuses as cut
        // is not read).
        let (salvaged, read) = tool.with_buffers(|buffers| {
            let salvaged = if refused_strict {
                buffers.salvager.salvage_refused(source, limits)
            } else {
                buffers.salvager.salvage(source, limits)
            };
            let read = match &salvaged {
                Ok(s) if !(tool.policy() == Policy::Strict && s.is_truncated()) => {
                    Some(parse_indexed(s.text(), &mut buffers.parse))
                }
                _ => None,
            };
            (salvaged, read)
        });
        let salvaged = match salvaged {
            Ok(s) => s,
            Err(e) => return Read::Done(refuse(Vec::new(), feedback::unreadable(tool, &e, raw, limits))),
        };
        let Some(read) = read else {
            return Read::Done(refuse(salvaged.fixes().to_vec(), feedback::truncated(tool, None, true)));
        };
        let parsed = match read {
            Ok(p) => Ok((p.value, p.dupes, Some(p.nodes))),
            // `serde_json` says why (or reads what was too deep for the one pass).
            Err(_) => salvage::parse_value(salvaged.text()).map(|(value, dupes)| (value, dupes, None)),
        };
        let (value, dupes, index) = match parsed {
            Ok(v) => v,
            Err(e) => {
                let e = crate::error::Error::new(
                    crate::error::ErrorKind::Syntax,
                    format!("repaired JSON does not fit a value: {e}"),
                );
                return Read::Done(refuse(salvaged.fixes().to_vec(), feedback::unreadable(tool, &e, raw, limits)));
            }
        };
        let untouched = salvaged.is_untouched() && !empty && !dupes;
        let truncation = salvaged.truncation().cloned();
        let ending = if salvaged.has_truncated_string() {
            Ending::InString
        } else if salvaged.is_truncated() {
            Ending::Unclosed
        } else {
            Ending::Complete
        };
        let (text, fixes) = salvaged.into_text_and_fixes();
        let mut draft = Draft::new(tool, raw, *limits, text, value, fixes);
        draft.index = index;
        draft.untouched = untouched;
        draft.ending = ending;
        draft.truncation = truncation;
        draft.dupes = dupes;
        Read::Go(draft, Step::Next)
    }

    fn new(
        tool: &'r Tool,
        raw: &'r str,
        limits: Limits,
        text: Cow<'r, str>,
        value: Value,
        fixes: Vec<TextFix>,
    ) -> Self {
        Draft {
            tool,
            raw,
            limits,
            text,
            value,
            index: None,
            fixes,
            repairs: Vec::new(),
            notes: Vec::new(),
            untouched: false,
            ending: Ending::Complete,
            truncation: None,
            dupes: false,
            refused: false,
        }
    }

    /// A string value that holds another declared parameter's markup
    /// (`extract::split_leaked_markup`): split when that is unambiguous (a repair),
    /// refused otherwise; never passed on as one valid string.
    fn leaked_markup(&mut self, step: Step) -> Phase {
        match crate::extract::split_leaked_markup(&self.value, self.tool.parameters()) {
            Leak::Ambiguous { pointer, parameter } => Err(feedback::leaked_markup(self.tool, &pointer, &parameter)),
            Leak::Split { arguments, splits } => {
                for split in &splits {
                    let before = self.value.pointer(&split.pointer).cloned();
                    let after = arguments.pointer(&split.pointer).cloned();
                    self.repairs.push(Repair::new(RepairKind::MarkupSplit, split.pointer.clone(), before, after));
                }
                self.text = Cow::Owned(arguments.to_string());
                self.index = None;
                self.value = arguments;
                self.untouched = false;
                self.refused = false;
                Ok(Step::Next)
            }
            _ => Ok(step),
        }
    }

    /// Settle a cut and keys given twice (issue 9 §1). Text that was evidently cut (or
    /// unclosed when the output hit the token limit) never reaches a tool that may change
    /// things; a read-only tool keeps the complete values and drops an uncertain optional
    /// one. A key given twice with different values is refused.
    fn settle_cut(&mut self, options: &CallOptions) -> Phase {
        let tool = self.tool;
        let evident = |t: &Truncation| t.is_evident() && !cut_only_in_wrapper(tool, &self.value, t, self.raw);
        let cut = self.truncation.as_ref().filter(|t| evident(t) || options.hit_token_limit);
        if let Some(cut) = cut {
            if !tool.is_read_only() {
                return Err(feedback::cut_off(tool, cut, feedback::CutRefusal::MayChangeThings));
            }
            let before = self.value.clone();
            if drop_uncertain(tool, cut, &mut self.value, &mut self.notes)? {
                self.text = Cow::Owned(render_text(&self.text, &self.value, &before, &Moves::default()));
                self.index = None;
                self.untouched = false;
                self.refused = false;
            }
        } else if self.ending == Ending::InString && !tool.is_read_only() {
            let path = last_string_path(&self.text);
            return Err(feedback::truncated(tool, path.as_deref(), false));
        }
        if self.dupes {
            self.index = None;
            settle_duplicates(tool, self.text.to_mut(), &self.value, &mut self.notes)?;
        }
        Ok(Step::Next)
    }

    /// Shape: the whole arguments sent as a JSON string holding the object are decoded; a
    /// value that is no object (where the schema wants one) is refused.
    fn shape(&mut self) -> Phase {
        let tool = self.tool;
        let root = tool.parameters();
        if let Value::String(s) = &self.value
            && view::types(root, root).has(Types::OBJECT)
            && s.trim_start().starts_with('{')
            && tool.policy() != Policy::Strict
            && let Ok(inner) = salvage::salvage_with(s, &self.limits)
            && inner.truncation().is_none()
            && let Ok((decoded @ Value::Object(_), false)) = salvage::parse_value(inner.text())
        {
            let inner_text = inner.text().to_owned();
            let before = std::mem::replace(&mut self.value, decoded);
            self.repairs.push(Repair::new(RepairKind::DocumentDecoded, "", Some(before), None));
            self.text = Cow::Owned(inner_text);
            self.index = None;
            self.untouched = false;
            self.refused = false;
        }
        if !self.value.is_object() && !view::types(root, root).accepts(&self.value) {
            return Err(feedback::not_an_object(tool, &self.value, self.raw));
        }
        Ok(Step::Next)
    }

    /// Validate; where the schema disagrees, repair at the failing paths (the built-in
    /// families, then the extensions registered on the set) and validate again.
    fn validate_or_repair(&mut self) -> Phase {
        let tool = self.tool;
        if !self.refused && tool.is_valid(&self.value) {
            if plain_schema(tool) {
                return Ok(Step::Done);
            }
            return self.apply_hints();
        }
        // The extensions look the failing schema node up; the built-in repairs need only
        // where and what failed.
        let extended = tool.extensions().is_some_and(Extensions::repairs_values);
        let found = violations_found(tool, &self.value, if extended { Detail::Full } else { Detail::Paths });
        let index = match self.index.take() {
            Some(nodes) => Some(TextIndex::from_nodes(&self.text, nodes)),
            None => TextIndex::build(&self.text),
        };
        // Repair takes the value; the text keeps what it was (render and the refusal read
        // it back).
        let value = std::mem::take(&mut self.value);
        let out = repair::repair(tool, value, &found, index.as_ref(), self.limits.max_depth);
        let fatal = out.problems.iter().any(|p| p.kind.is_fatal());
        if fatal || !tool.is_valid(&out.value) {
            let original = self.read_back().unwrap_or_else(|| out.value.clone());
            if let Some(done) = self.extend(&found, &original) {
                return done;
            }
            let after = violations(tool.validator(), &out.value);
            self.repairs.extend(out.repairs);
            return Err(feedback::refusal(
                tool,
                &after,
                &out.problems,
                &out.value,
                Some((&original, &out.moves)),
                self.truncated(),
            ));
        }
        self.text = Cow::Owned(match &index {
            Some(idx) => {
                // Every change repair made is recorded at or below where it was made: the
                // members no record names are copied as written.
                render_changed(&out.value, Original::Text, idx, &out.moves, Some(&out.repairs))
            }
            None => out.value.to_string(),
        });
        self.value = out.value;
        append(&mut self.repairs, out.repairs);
        append(&mut self.notes, out.notes);
        self.untouched = false;
        Ok(Step::Done)
    }

    /// The value the draft's text holds (the value before repair: the text is kept in step
    /// with it until repair is done).
    fn read_back(&self) -> Option<Value> {
        salvage::parse_value(&self.text).ok().map(|(value, _)| value)
    }

    /// The hints' checks on a value the schema accepts (auto-links, relational defaults,
    /// required-any groups).
    fn apply_hints(&mut self) -> Phase {
        let tool = self.tool;
        let original = self.value.clone();
        let mut cx = Ctx::new(tool, &[], self.limits.max_depth);
        repair::apply_hints(&mut cx, tool, &mut self.value);
        if cx.problems.iter().any(|p| p.kind.is_fatal()) {
            let found = violations(tool.validator(), &self.value);
            return Err(feedback::refusal(tool, &found, &cx.problems, &self.value, None, self.truncated()));
        }
        if cx.repairs.is_empty() {
            return Ok(Step::Done);
        }
        if !tool.is_valid(&self.value) {
            let found = violations(tool.validator(), &self.value);
            return Err(feedback::refusal(
                tool,
                &found,
                &cx.problems,
                &self.value,
                Some((&original, &cx.moves)),
                self.truncated(),
            ));
        }
        self.repairs.extend(cx.repairs);
        self.text = Cow::Owned(render_text(&self.text, &self.value, &original, &cx.moves));
        self.notes.extend(cx.notes);
        self.untouched = false;
        Ok(Step::Done)
    }

    /// The extensions' family at the places `found` names, on the value as read (`original`),
    /// then the built-in repairs again: the result, when it validates. Never on text that
    /// was cut off or gave a key twice.
    fn extend(&mut self, found: &[Violation], original: &Value) -> Option<Phase> {
        let tool = self.tool;
        let ext = tool.extensions().filter(|e| e.repairs_values())?;
        if self.ending != Ending::Complete || self.dupes {
            return None;
        }
        let mut value = original.clone();
        let mut repairs = repair::extension::apply(tool, ext, &mut value, found, false);
        if repairs.is_empty() {
            return None;
        }
        let again = violations(tool.validator(), &value);
        if !again.is_empty() {
            let out = repair::repair(tool, value, &again, None, self.limits.max_depth);
            if out.problems.iter().any(|p| p.kind.is_fatal()) || !tool.is_valid(&out.value) {
                return None;
            }
            repairs.extend(out.repairs);
            self.notes.extend(out.notes);
            value = out.value;
        }
        self.text = Cow::Owned(value.to_string());
        self.value = value;
        self.repairs.extend(repairs);
        self.untouched = false;
        if !plain_schema(tool) {
            return Some(self.apply_hints());
        }
        Some(Ok(Step::Done))
    }

    /// The text was unclosed, or a cut settled (refusal hints then say where the output
    /// stopped).
    fn truncated(&self) -> bool {
        self.ending != Ending::Complete || self.truncation.is_some()
    }

    /// The outcome: accepted as the draft stands, or refused (the refusal finished by
    /// `feedback`: the tool's contract, a registered renderer).
    fn finish(self, result: Phase) -> CallOutcome {
        let tool = self.tool;
        match result {
            Ok(_) => {
                let outcome = if self.untouched { Outcome::Untouched } else { Outcome::Repaired };
                let notes = self.notes.iter().map(feedback::note).collect();
                CallOutcome {
                    report: Report::new(tool.name(), outcome, self.fixes, self.repairs, notes),
                    result: Ok(Accepted { text: self.text.into_owned(), value: Arguments::Made(self.value) }),
                    key: OnceLock::new(),
                }
            }
            Err(refusal) => {
                CallOutcome::refused(tool.name(), self.fixes, self.repairs, feedback::finish(tool, refusal))
            }
        }
    }
}

/// A cut call to a read-only tool: the complete values are kept, the outermost uncertain
/// value (the top-level member that holds the cut) is dropped when it is optional, and the
/// call is refused when it is required (or named by a hint, or the schema is too complex
/// to tell). True when a value was dropped.
fn drop_uncertain(
    tool: &Tool,
    cut: &Truncation,
    value: &mut Value,
    notes: &mut Vec<CallNote>,
) -> std::result::Result<bool, Refusal> {
    // The arguments' own members may not be the model's (`{"a": "x, b: 1}` read as two
    // members, or as `"x, b: 1}` cut short): nothing can be dropped to leave only what
    // was written.
    if cut.uncertain().iter().any(|u| u.pointer.is_empty() && u.kind == UncertainKind::Object) {
        return Err(feedback::cut_off(tool, cut, feedback::CutRefusal::Split(cut.pointer())));
    }
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

/// True when text was evidently cut only because the object a lone wrapper key holds
/// (`{"args": {...`, a key the tool does not declare) was left open after a complete value:
/// the wrapper is not part of the arguments, so the cut is read as for the arguments
/// alone — only their closing brace missing.
fn cut_only_in_wrapper(tool: &Tool, value: &Value, cut: &Truncation, raw: &str) -> bool {
    if tool.policy() == Policy::Strict {
        return false;
    }
    let Some((key, _)) = repair::wrapper(tool, value) else { return false };
    let wrapped = crate::pointer::join("", key);
    let ended_on_a_value = raw.get(..cut.at()).is_some_and(|t| !t.trim_end().ends_with([',', ':', '{', '[']));
    ended_on_a_value
        && matches!(cut.uncertain(), [u] if u.kind == UncertainKind::Object && u.pointer == wrapped && u.kept)
}

/// Arguments that give a key twice: refused when the values differ, else kept once.
fn settle_duplicates(
    tool: &Tool,
    text: &mut String,
    value: &Value,
    notes: &mut Vec<CallNote>,
) -> std::result::Result<(), Refusal> {
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

/// `list` extended with `more`: taken whole when `list` is empty (most calls), not copied.
fn append<T>(list: &mut Vec<T>, more: Vec<T>) {
    if list.is_empty() {
        *list = more;
    } else {
        list.extend(more);
    }
}

/// True when the text's last closer (`}` or `]`, whitespace after it aside) follows a comma,
/// whitespace between aside: `{"a": 1,}`. That is never strict JSON (only whitespace lies
/// between the two, so the comma is outside every string), and the strict read would
/// refuse it only at its end, after reading everything.
fn ends_with_trailing_comma(text: &str) -> bool {
    let is_ws = |c: &&u8| matches!(c, b' ' | b'\n' | b'\r' | b'\t');
    let mut rev = text.as_bytes().iter().rev().skip_while(is_ws);
    matches!(rev.next(), Some(b'}' | b']')) && rev.find(|c| !is_ws(c)) == Some(&b',')
}

/// True when the text is evidently no strict JSON, found by a look cheaper than the strict
/// read that would fail part-way: a `'` outside every string (a single-quoted key or
/// string), or before the last `'` a comma before a closer (`[1,]`), whitespace between
/// aside. Where the strings are is found by following double quotes and backslashes from
/// the start: in strict JSON that is exactly where they are, so a byte this places outside
/// every string is outside in fact, or the text is no strict JSON anyway. Text with no `'`
/// costs one `memrchr`; the look stops at the last `'`.
fn evidently_no_strict_json(text: &str) -> bool {
    let b = text.as_bytes();
    let Some(last) = memchr::memrchr(b'\'', b) else { return false };
    let mut i = 0;
    // The last byte outside strings that is no whitespace (a string counts as its quote).
    let mut before = 0u8;
    while i <= last {
        let Some(&c) = b.get(i) else { return false };
        match c {
            b'"' => {
                // To the closing quote, over escapes.
                let mut j = i + 1;
                loop {
                    match memchr::memchr2(b'"', b'\\', b.get(j..).unwrap_or_default()) {
                        Some(k) if b.get(j + k) == Some(&b'"') => {
                            i = j + k;
                            break;
                        }
                        Some(k) => j += k + 2,
                        // Unclosed string: no strict JSON, but `unclosed` tells that.
                        None => return false,
                    }
                }
            }
            b'\'' => return true,
            b'}' | b']' if before == b',' => return true,
            b' ' | b'\n' | b'\r' | b'\t' => {
                i += 1;
                continue;
            }
            _ => {}
        }
        before = c;
        i += 1;
    }
    false
}

/// The strict read that makes the value at once: strict JSON text read in one pass for
/// its value and its index (what that pass leaves undecided `serde_json` reads, without an
/// index), then the schema asked about the value. `Err(true)` when the text is no strict
/// JSON at all; `Err(false)` when `serde_json` refuses it for another reason (nesting, a
/// number out of range).
fn read_strict(tool: &Tool, text: &str, scratch: &mut Scratch) -> std::result::Result<Strict, bool> {
    let read = match parse_indexed(text, scratch) {
        Ok(p) => (p.value, p.dupes, Some(p.nodes)),
        Err(NotParsed::Invalid) => return Err(true),
        Err(NotParsed::Undecided) => {
            salvage::parse_value(text).map(|(value, dupes)| (value, dupes, None)).map_err(|_| false)?
        }
    };
    Ok(match read {
        (value, dupes, index) if valid_at_once(tool, &value, dupes) => {
            if let Some(nodes) = index {
                scratch.recycle(nodes);
            }
            Strict::Valid(value)
        }
        read => Strict::Read(read),
    })
}

/// True when strict arguments read as `value` (`dupes`: a key given twice) are done at
/// once: an object, each key once, a tool whose schema is all there is to check (no hint
/// checks, no tagged strings), and the schema accepts the value.
fn valid_at_once(tool: &Tool, value: &Value, dupes: bool) -> bool {
    value.is_object() && !dupes && plain_schema(tool) && tool.is_valid(value)
}

/// True when a tool's schema is all there is to check of its arguments.
fn plain_schema(tool: &Tool) -> bool {
    !tool.hints().has_checks() && !tool.has_tagged_strings()
}

/// The strict read that makes no value for arguments the schema accepts as written: the
/// text indexed, the schema asked over it ([`Tool::is_valid_text`]); any other call gets
/// its value from the same index. Answers what [`read_strict`] answers.
fn read_strict_text(tool: &Tool, text: &str, scratch: &mut Scratch) -> std::result::Result<Strict, bool> {
    let plain = plain_schema(tool);
    let indexed = match index_strict(text, scratch) {
        Ok(indexed) => indexed,
        Err(NotParsed::Invalid) => return Err(true),
        Err(NotParsed::Undecided) => {
            let (value, dupes) = salvage::parse_value(text).map_err(|_| false)?;
            return Ok(if valid_at_once(tool, &value, dupes) {
                Strict::Valid(value)
            } else {
                Strict::Read((value, dupes, None))
            });
        }
    };
    let Indexed { nodes, dupes } = indexed;
    let asked = plain && !dupes && indexed_object(text, &nodes);
    // Asked over the text when nothing after the read looks at the value: a string holding
    // markup (a `<`, or an escape that may make one) is left to the value's path.
    let seen = if asked && no_markup(text) { tool.is_valid_text(text, &nodes) } else { None };
    if seen == Some(true) {
        scratch.recycle(nodes);
        return Ok(Strict::AsWritten);
    }
    let Ok(value) = value_of(text, &nodes) else {
        // Not reached: the text was read. `serde_json` reads it again.
        let (value, dupes) = salvage::parse_value(text).map_err(|_| false)?;
        return Ok(Strict::Read((value, dupes, None)));
    };
    if asked && seen.is_none() && tool.is_valid(&value) {
        scratch.recycle(nodes);
        return Ok(Strict::Valid(value));
    }
    Ok(Strict::Read((value, dupes, Some(nodes))))
}

/// True when the strict text indexed as `nodes` is an object.
fn indexed_object(text: &str, nodes: &Nodes) -> bool {
    nodes.root_start().and_then(|at| text.as_bytes().get(at)) == Some(&b'{')
}

/// True when no string of strict JSON `text` can hold a `<` (the start of any markup
/// `extract::split_leaked_markup` looks for): none is written, and no `\u` escape is.
fn no_markup(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memchr2_iter(b'<', b'\\', b).all(|at| b.get(at) == Some(&b'\\') && b.get(at + 1) != Some(&b'u'))
}

fn render_text(text: &str, value: &Value, original: &Value, moves: &Moves) -> String {
    match TextIndex::build(text) {
        Some(idx) => render(value, Original::Value(original), &idx, moves),
        None => value.to_string(),
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

#[cfg(test)]
mod tests {
    use super::{CallOptions, CallOutcome, ends_with_trailing_comma, evidently_no_strict_json};
    use crate::report::Outcome;
    use crate::schema::Tool;
    use serde_json::{Value, json};

    /// What the pipeline answers when it validates strict text over the text (the value
    /// made on demand): what it answers when it reads the value at once (the outcome, its
    /// report, its text and its value), and accepted untouched exactly when the schema
    /// accepts the value `serde_json` reads.
    fn accepts_as_the_value_does(schema: &Value, text: &str) {
        let Ok(tool) = Tool::from_parts("t", "", schema.clone()) else { return };
        let on_demand = tool.repair_call_with(text, &CallOptions::default().with_value_on_demand());
        let at_once = tool.repair_call(text);
        let line = |o: &CallOutcome| serde_json::to_string(o).unwrap_or_default();
        assert_eq!(line(&on_demand), line(&at_once), "{text} against {schema}");
        assert_eq!(on_demand.arguments(), at_once.arguments(), "{text} against {schema}");
        let Ok(value) = serde_json::from_str::<Value>(text) else { return };
        let dupes = crate::salvage::parse_value(text).map_or(true, |(_, d)| d);
        if value.is_object() && !dupes && tool.is_valid(&value) {
            assert_eq!(on_demand.outcome(), Outcome::Untouched, "{text} against {schema}");
            assert_eq!(on_demand.arguments_text(), Some(text));
            assert_eq!(on_demand.arguments(), Some(&value));
        } else if value.is_object() {
            assert_ne!(on_demand.outcome(), Outcome::Untouched, "{text} against {schema}");
        }
    }

    #[test]
    fn strict_calls_are_accepted_as_their_value_is() {
        let schema = json!({"type": "object", "properties": {"city": {"type": "string"},
            "days": {"type": "integer"}, "note": {"type": "string", "maxLength": 3}}, "required": ["city"]});
        for text in [
            r#"{"city": "Paris", "days": 3}"#,
            r#"{"city": "Paris", "days": 3.0}"#,
            r#"{"city": "Paris", "days": -0}"#,
            r#"{"city": "Paris", "days": 3.5}"#,
            r#"{"city": "Paris", "days": "3"}"#,
            r#"{"city": "Paris", "note": "\u00e9\u00e9"}"#,
            r#"{"city": "Paris", "note": "\u00e9\u00e9\u00e9\u00e9"}"#,
            r#"{"\u0063ity": "Paris"}"#,
            r#"{"city": "<b>Paris</b>"}"#,
            r#"{"city": "Paris", "city": "Lyon"}"#,
            r#"{"days": 3}"#,
        ] {
            accepts_as_the_value_does(&schema, text);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]
        #[test]
        fn strict_calls_are_accepted_as_their_value_is_on_any_schema(
            schema in crate::pointer::view::tests::arb_schema(),
            text in crate::pointer::view::tests::arb_text(),
        ) {
            accepts_as_the_value_does(&schema, &text);
        }
    }

    #[test]
    fn a_comma_before_the_last_closer_is_no_strict_json() {
        for text in ["{\"a\": 1,}", "{\"a\": [1, 2,] ,\n}\n", "[1,]", "{\"a\": \"x\" , \t}"] {
            assert!(ends_with_trailing_comma(text), "{text}");
            assert!(serde_json::from_str::<serde_json::Value>(text).is_err(), "{text}");
        }
        // A comma inside the last string, or before an inner closer only, is not one.
        for text in ["{\"a\": \",}\"}", "{\"a\": [1,]}", "{\"a\": 1}", "{\"a\": 1,", "", ",", "}"] {
            assert!(!ends_with_trailing_comma(text), "{text}");
        }
    }

    #[test]
    fn a_quote_outside_strings_or_a_comma_before_a_closer_before_it_is_no_strict_json() {
        for text in [
            "{'a': 1}",
            "{\"a\": 'x'}",
            "{\"a\": [1, 2,], 'b': 1}",
            "{\"a\": {\"b\": 1 ,\n}, \"c\": \"it's\"}",
            "{\"a\": \"it's\", 'b': 1}",
            "{\"a\": \"x\\\"',\", \"b\": 'y'}",
        ] {
            assert!(evidently_no_strict_json(text), "{text}");
            assert!(serde_json::from_str::<serde_json::Value>(text).is_err(), "{text}");
        }
        // Inside strings, either is text.
        for text in [
            "{\"a\": \"it's\"}",
            "{\"a\": \",}\", \"b\": \",]\"}",
            "{\"a\": \"\\\"',]\"}",
            "{\"a\": [1, 2], \"b\": {}}",
            "{\"a\": \"it's\", \"b\": [1,]}",
            "",
            "{\"a\": \"x",
        ] {
            assert!(!evidently_no_strict_json(text), "{text}");
        }
    }

    /// Values whose strings hold the bytes the look above stops at.
    fn arb_value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        use serde_json::Value;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<i64>().prop_map(Value::from),
            "[',}\\]\\\\\" a]{0,5}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::vec(("[',}\\]\\\\\" a]{0,3}", inner), 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn evident_only_where_serde_json_refuses(
            value in arb_value(),
            pretty: bool,
            at: proptest::sample::Index,
            byte in proptest::sample::select(vec![b'\'', b',', b'}', b']', b'"', b'\\', b' ']),
        ) {
            let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) };
            let text = text.unwrap();
            proptest::prop_assert!(!evidently_no_strict_json(&text), "{}", text);
            let mut damaged = text.into_bytes();
            damaged.insert(at.index(damaged.len() + 1), byte);
            let damaged = String::from_utf8(damaged).unwrap();
            if evidently_no_strict_json(&damaged) {
                proptest::prop_assert!(serde_json::from_str::<serde_json::Value>(&damaged).is_err(), "{}", damaged);
            }
        }
    }
}
