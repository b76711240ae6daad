//! What each stage changed, as data: the text fixes of salvage ([`TextFix`], [`FixKind`])
//! and how a cut-off text ended ([`Truncation`], [`Uncertain`]); the schema stage's
//! [`Repair`] records, a [`Report`] per call, [`Stats`] counters shareable across threads,
//! and `tracing` events.

mod fix;
mod intent;
mod truncation;

pub use fix::{FixKind, TextFix};
pub use intent::{Intent, Signal};
use serde::Serialize;
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
pub use truncation::{Truncation, Uncertain, UncertainKind};

macro_rules! repair_kinds {
    ($( $(#[$doc:meta])* $variant:ident => $name:literal, )*) => {
        /// The kind of a schema-level repair; `as_str` gives the stable `snake_case` name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(rename_all = "snake_case")]
        #[non_exhaustive]
        pub enum RepairKind {
            $( $(#[$doc])* $variant, )*
        }

        impl RepairKind {
            /// Every kind, in declaration order.
            pub const ALL: &'static [RepairKind] = &[ $( RepairKind::$variant, )* ];

            /// The stable `snake_case` name of this kind.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self { $( RepairKind::$variant => $name, )* }
            }
        }
    };
}

repair_kinds! {
    /// `null` for an optional property that does not allow null: property removed.
    NullOptionalDropped => "null_optional_dropped",
    /// A string holding a JSON array or object, where one is wanted: decoded.
    JsonStringDecoded => "json_string_decoded",
    /// `{}` where an array is wanted: `[]`.
    EmptyObjectToArray => "empty_object_to_array",
    /// A bare value where an array of its type is wanted: `[value]`.
    WrappedInArray => "wrapped_in_array",
    /// Lossless string to number / boolean / null conversion, or number to string.
    CoercedScalar => "coerced_scalar",
    /// An enum value fixed by case or separators, exactly one option matching.
    EnumMatched => "enum_matched",
    /// A property name matched by alias, case/separators, or a unique prefix/suffix.
    FieldRenamed => "field_renamed",
    /// An unknown property removed (policy lenient only).
    UnknownFieldDropped => "unknown_field_dropped",
    /// A lone `{"arguments": {...}}` (or `input`, `parameters`, `args`) wrapper removed.
    WrapperUnwrapped => "wrapper_unwrapped",
    /// The whole arguments sent as a JSON string holding the object: decoded.
    DocumentDecoded => "document_decoded",
    /// `"a.b.c"` keys re-nested along the schema's nesting.
    DotKeysNested => "dot_keys_nested",
    /// A Markdown auto-link replaced by its text in a path or URL property.
    LinkUnwrapped => "link_unwrapped",
    /// A missing member of a partly given relational group filled from its default.
    RelationalDefault => "relational_default",
    /// A property name matched by a field-name matcher registered on the set (`extend`).
    ExtensionMatched => "extension_matched",
    /// A value converted by a value coercer registered on the set (`extend`).
    ExtensionCoerced => "extension_coerced",
    /// A string rewritten by a format normaliser registered on the set (`extend`).
    FormatNormalised => "format_normalised",
    /// A property name matched by the opt-in uncertain mode: never certain (`extend`).
    UncertainMatch => "uncertain_match",
}

/// One reason a call was refused, for people and models.
///
/// ```
/// let issue = toolfix::Issue::new("/path", "string").with_hint("send a path");
/// assert_eq!(issue.received, None);
/// assert_eq!(issue.hint.as_deref(), Some("send a path"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Issue {
    /// JSON pointer into the arguments (`""` for the whole call).
    pub path: String,
    /// What the schema expected there, in a compact rendering.
    pub expected: String,
    /// What was received, shortened (`None` when missing or when the tool is sensitive).
    pub received: Option<String>,
    /// A concrete fix.
    pub hint: Option<String>,
}

impl Issue {
    /// An issue at `path` (a JSON pointer into the arguments) where the schema expected
    /// `expected`.
    #[must_use]
    pub fn new(path: impl Into<String>, expected: impl Into<String>) -> Issue {
        Issue { path: path.into(), expected: expected.into(), received: None, hint: None }
    }

    /// This issue with what was received.
    #[must_use]
    pub fn with_received(mut self, received: impl Into<String>) -> Issue {
        self.received = Some(received.into());
        self
    }

    /// This issue with a concrete fix.
    #[must_use]
    pub fn with_hint(mut self, hint: impl Into<String>) -> Issue {
        self.hint = Some(hint.into());
        self
    }
}

/// A refused call: the message for the model (written by `feedback`, at most 4 KiB) and
/// the issues as data.
///
/// ```
/// use serde_json::json;
/// use toolfix::ToolSet;
///
/// let tools = ToolSet::new(&[json!({"name": "t", "parameters": {"type": "object",
///     "properties": {"n": {"type": "integer"}}, "required": ["n"]}})]).unwrap();
/// let refusal = tools.repair_call("t", "{}").refusal().cloned().unwrap();
/// assert_eq!(refusal.issues[0].path, "/n");
/// assert!(refusal.message.contains("/n"));
/// assert_eq!(toolfix::Refusal::default().message, "");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Refusal {
    /// The whole message, at most 4 KiB.
    pub message: String,
    /// One entry per failing place.
    pub issues: Vec<Issue>,
}

/// One schema-level repair: what kind, where (a JSON pointer into the repaired
/// arguments), and the value before and after (`None` for absent).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Repair {
    /// What was repaired.
    pub kind: RepairKind,
    /// JSON pointer of the place acted on, in the repaired arguments (for a dropped
    /// property, where it was).
    pub path: String,
    /// The value before (for a rename: the old name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<Value>,
    /// The value after (for a rename: the new name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Value>,
}

impl Repair {
    pub(crate) fn new(
        kind: RepairKind,
        path: impl Into<String>,
        before: Option<Value>,
        after: Option<Value>,
    ) -> Repair {
        Repair { kind, path: path.into(), before, after }
    }
}

/// A note for the model about a repair, as data: `feedback` writes its words.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum CallNote {
    /// An unknown property dropped under the lenient policy, at `path`.
    Dropped {
        /// Where the property was.
        path: String,
    },
    /// `field` filled from its `default` because the fields `given` of its group were.
    Relational {
        /// The field filled.
        field: String,
        /// The value it was given.
        default: Value,
        /// The fields of its group that were given.
        given: Vec<String>,
    },
    /// An optional value that touched the cut of truncated text, dropped (read-only tool).
    CutDropped {
        /// Where the value was.
        path: String,
    },
    /// A key given `times` times with the same value, kept once.
    DuplicateKept {
        /// Where the key is.
        path: String,
        /// How many times it was given.
        times: usize,
    },
}

/// How a call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Outcome {
    /// Valid as sent: the arguments are the model's text, byte for byte.
    Untouched,
    /// Recovered by text fixes and/or schema repairs.
    Repaired,
    /// Refused: the model gets an error to act on.
    Rejected,
}

impl Outcome {
    /// The stable name.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Untouched => "untouched",
            Outcome::Repaired => "repaired",
            Outcome::Rejected => "rejected",
        }
    }
}

/// What happened to one call.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Report {
    /// The tool's declared name (or the name as sent, when it did not resolve).
    pub tool: String,
    /// How the call ended.
    pub outcome: Outcome,
    /// Text-level fixes made by salvage to the arguments (spans in the arguments text).
    pub text_fixes: Vec<TextFix>,
    /// Text-level fixes made to the markup the call was found in, when the call was written
    /// in a reply's text and its envelope was not strict JSON (`{'name': 'x', ...}`); spans
    /// in that channel's text.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub envelope_fixes: Vec<TextFix>,
    /// Schema-level repairs, in the order they were made.
    pub repairs: Vec<Repair>,
    /// Notes for the model (e.g. which defaults were filled).
    pub notes: Vec<String>,
}

impl Report {
    pub(crate) fn new(
        tool: &str,
        outcome: Outcome,
        text_fixes: Vec<TextFix>,
        repairs: Vec<Repair>,
        notes: Vec<String>,
    ) -> Report {
        Report { tool: tool.to_owned(), outcome, text_fixes, envelope_fixes: Vec::new(), repairs, notes }
    }

    /// Emit the `tracing` event for this report: `tool_call_repaired` (debug) or
    /// `tool_call_invalid` (info); nothing for an untouched call.
    pub(crate) fn trace(&self) {
        // Written only when the event is enabled.
        let kinds = Kinds(&self.repairs);
        match self.outcome {
            Outcome::Untouched => {}
            Outcome::Repaired => {
                tracing::debug!(name: "tool_call_repaired", tool = %self.tool, kinds = %kinds, text_fixes = self.text_fixes.len(), "tool_call_repaired");
            }
            Outcome::Rejected => {
                tracing::info!(name: "tool_call_invalid", tool = %self.tool, kinds = %kinds, "tool_call_invalid");
            }
        }
    }
}

/// The kinds of `repairs`, comma-separated, for a tracing field.
struct Kinds<'r>(&'r [Repair]);

impl std::fmt::Display for Kinds<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, r) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            f.write_str(r.kind.as_str())?;
        }
        Ok(())
    }
}

/// Counters per outcome and per repair kind; atomic, so one `Stats` can be shared
/// (by reference or in an `Arc`) across threads.
///
/// ```
/// use toolfix::report::{Stats, RepairKind};
/// let stats = Stats::default();
/// assert_eq!(stats.repairs(RepairKind::CoercedScalar), 0);
/// ```
#[derive(Debug, Default)]
pub struct Stats {
    calls: AtomicU64,
    untouched: AtomicU64,
    repaired: AtomicU64,
    rejected: AtomicU64,
    kinds: [AtomicU64; RepairKind::ALL.len()],
}

impl Stats {
    /// Count one call's report.
    pub fn record(&self, report: &Report) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let counter = match report.outcome {
            Outcome::Untouched => &self.untouched,
            Outcome::Repaired => &self.repaired,
            Outcome::Rejected => &self.rejected,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        for r in &report.repairs {
            if let Some(c) = self.kinds.get(r.kind as usize) {
                c.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Calls counted.
    #[must_use]
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// Calls that ended with `outcome`.
    #[must_use]
    pub fn outcomes(&self, outcome: Outcome) -> u64 {
        match outcome {
            Outcome::Untouched => &self.untouched,
            Outcome::Repaired => &self.repaired,
            Outcome::Rejected => &self.rejected,
        }
        .load(Ordering::Relaxed)
    }

    /// Repairs of `kind` made.
    #[must_use]
    pub fn repairs(&self, kind: RepairKind) -> u64 {
        self.kinds.get(kind as usize).map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// Every kind with its count, for metrics.
    #[must_use]
    pub fn snapshot(&self) -> Vec<(RepairKind, u64)> {
        RepairKind::ALL.iter().map(|&k| (k, self.repairs(k))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_indexable() {
        for (i, k) in RepairKind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i);
        }
        assert_eq!(serde_json::to_value(RepairKind::DotKeysNested).unwrap(), "dot_keys_nested");
    }

    #[test]
    fn stats_count() {
        let stats = Stats::default();
        let report = Report::new(
            "t",
            Outcome::Repaired,
            vec![],
            vec![Repair::new(RepairKind::CoercedScalar, "/a", None, None)],
            vec![],
        );
        std::thread::scope(|s| {
            s.spawn(|| stats.record(&report));
            s.spawn(|| stats.record(&report));
        });
        assert_eq!(stats.calls(), 2);
        assert_eq!(stats.repairs(RepairKind::CoercedScalar), 2);
        assert_eq!(stats.outcomes(Outcome::Repaired), 2);
    }
}
