//! Extension points, with the core flow unchanged: a field-name matcher, a value coercer,
//! format normalisers (per `format` or `x-toolfix` `semantic` tag) and a refusal renderer
//! registered on a [`ToolSet`] ([`Extensions`], [`ToolSet::with_extensions`]); contract
//! hints per tool ([`Tool::contract`], [`Tool::description_for_model`]); and an opt-in
//! uncertain matching mode ([`ToolSet::repair_call_uncertain`]).
//!
//! The extensions run only on a call the built-in pipeline refused, only at the places
//! validation flagged; their result goes through the whole pipeline again and must
//! validate. A valid call never reaches them.
//!
//! ```
//! use serde_json::json;
//! use toolfix::ToolSet;
//! use toolfix::extend::Extensions;
//!
//! let tools = ToolSet::new(&[json!({"name": "open", "parameters": {"type": "object",
//!     "properties": {"path": {"type": "string"}}, "required": ["path"],
//!     "additionalProperties": false}})]).unwrap();
//! let tools = tools.with_extensions(
//!     Extensions::new()
//!         .with_field_matcher(|given, _declared| (given == "file").then(|| "path".to_owned()))
//!         .with_contract("open", "paths are absolute"),
//! );
//! let fixed = tools.repair_call("open", r#"{"file": "/a"}"#);
//! assert_eq!(fixed.arguments(), Some(&json!({"path": "/a"})));
//! assert_eq!(fixed.repairs()[0].kind.as_str(), "extension_matched");
//! let refused = tools.repair_call("open", "{}");
//! assert!(refused.refusal().unwrap().message.contains("paths are absolute"));
//! ```

use crate::feedback::{MAX_MESSAGE_BYTES, Refusal};
use crate::pipeline::CallOptions;
use crate::pipeline::{CallOutcome, run};
use crate::report::{Outcome, Repair, RepairKind};
use crate::schema::view;
use crate::schema::{Tool, ToolSet};
use crate::validate::{ViolationKind, violations};
use crate::{pointer, salvage};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::fmt::{self, Write as _};
use std::sync::Arc;

/// Undeclared keys per object offered to the matchers (bounds the work on hostile input).
const MAX_KEYS: usize = 64;

/// Maps a key the schema does not declare (`given`) to a declared name, or `None`.
pub type FieldMatcher = dyn Fn(&str, &[&str]) -> Option<String> + Send + Sync;
/// Converts a value its schema node refuses (`value`, `node`) into one it may accept.
pub type ValueCoercer = dyn Fn(&Value, &Value) -> Option<Value> + Send + Sync;
/// Rewrites a string of one format or tag into its canonical form.
pub type FormatNormaliser = dyn Fn(&str) -> Option<String> + Send + Sync;
/// Writes the message of a refusal (given the tool, with its contract hint appended).
pub type RefusalRenderer = dyn Fn(&Tool, &Refusal) -> String + Send + Sync;

/// Extension points for a [`ToolSet`].
#[derive(Clone, Default)]
pub struct Extensions {
    matcher: Option<Arc<FieldMatcher>>,
    coercer: Option<Arc<ValueCoercer>>,
    normalisers: Vec<(String, Arc<FormatNormaliser>)>,
    renderer: Option<Arc<RefusalRenderer>>,
    contracts: Vec<(String, String)>,
}

impl fmt::Debug for Extensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Extensions")
            .field("matcher", &self.matcher.is_some())
            .field("coercer", &self.coercer.is_some())
            .field("normalisers", &self.normalisers.iter().map(|(t, _)| t).collect::<Vec<_>>())
            .field("renderer", &self.renderer.is_some())
            .field("contracts", &self.contracts)
            .finish()
    }
}

impl Extensions {
    /// No extension.
    #[must_use]
    pub fn new() -> Extensions {
        Extensions::default()
    }

    /// Match undeclared keys to declared names (`given`, `declared`) → name. Used where the
    /// built-in rules found no certain match; the result must be declared and not given.
    #[must_use]
    pub fn with_field_matcher(
        mut self,
        matcher: impl Fn(&str, &[&str]) -> Option<String> + Send + Sync + 'static,
    ) -> Extensions {
        self.matcher = Some(Arc::new(matcher));
        self
    }

    /// Convert values their schema node refuses (`value`, `node`) → new value.
    #[must_use]
    pub fn with_value_coercer(
        mut self,
        coercer: impl Fn(&Value, &Value) -> Option<Value> + Send + Sync + 'static,
    ) -> Extensions {
        self.coercer = Some(Arc::new(coercer));
        self
    }

    /// Normalise refused strings whose node has `"format": tag` or an `x-toolfix`
    /// `semantic` tag equal to `tag`.
    #[must_use]
    pub fn with_format_normaliser(
        mut self,
        tag: &str,
        normalise: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Extensions {
        self.normalisers.push((tag.to_owned(), Arc::new(normalise)));
        self
    }

    /// Write refusal messages (capped at 4 KiB like the built-in ones).
    #[must_use]
    pub fn with_refusal_renderer(
        mut self,
        render: impl Fn(&Tool, &Refusal) -> String + Send + Sync + 'static,
    ) -> Extensions {
        self.renderer = Some(Arc::new(render));
        self
    }

    /// A short free-text contract for tool `name` ("paths are absolute"), appended to its
    /// description for the model and to its refusals. Overrides `x-toolfix.contract`.
    #[must_use]
    pub fn with_contract(mut self, name: &str, contract: &str) -> Extensions {
        self.contracts.retain(|(n, _)| n != name);
        self.contracts.push((name.to_owned(), contract.to_owned()));
        self
    }

    fn repairs_values(&self) -> bool {
        self.matcher.is_some() || self.coercer.is_some() || !self.normalisers.is_empty()
    }
}

impl ToolSet {
    /// This set with `extensions` on every tool.
    #[must_use]
    pub fn with_extensions(self, extensions: Extensions) -> ToolSet {
        let ext = Arc::new(extensions);
        self.with_every_tool(|tool| tool.set_extensions(Some(Arc::clone(&ext))))
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
        let none = Extensions::default();
        let ext = tool.extensions().unwrap_or(&none);
        let uncertain = extend_value(tool, ext, raw, &options, true).and_then(|(value, mut repairs)| {
            if !repairs.iter().any(|r| r.kind == RepairKind::UncertainMatch) {
                return None;
            }
            let again = run(tool, &value.to_string(), &options);
            let arguments = again.arguments()?.clone();
            repairs.extend_from_slice(again.repairs());
            Some(UncertainCall { arguments, repairs })
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
    pub fn bind<T: DeserializeOwned>(&self) -> crate::Result<T> {
        crate::bind::bind_value(Some(&self.arguments), None)
    }
}

impl Tool {
    /// The tool's contract hint: the one registered with [`Extensions::with_contract`], or
    /// the definition's `x-toolfix.contract`.
    #[must_use]
    pub fn contract(&self) -> Option<&str> {
        let registered =
            self.extensions().and_then(|e| e.contracts.iter().find(|(n, _)| n == self.name()).map(|(_, c)| c.as_str()));
        registered.or_else(|| self.parameters().get("x-toolfix")?.get("contract")?.as_str())
    }

    /// The description to show a model: the description, then the contract hint.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolfix::Tool;
    ///
    /// let tool = Tool::from_definition(&json!({"name": "ls", "description": "List a directory.",
    ///     "parameters": {"type": "object", "x-toolfix": {"contract": "paths are absolute"}}})).unwrap();
    /// assert_eq!(tool.description_for_model(), "List a directory.\n\nContract: paths are absolute");
    /// ```
    #[must_use]
    pub fn description_for_model(&self) -> String {
        match self.contract() {
            Some(c) if self.description().is_empty() => format!("Contract: {c}"),
            Some(c) => format!("{}\n\nContract: {c}", self.description()),
            None => self.description().to_owned(),
        }
    }
}

/// The pipeline's hook for a refused outcome: the extensions' repairs (the result run
/// through the pipeline again), else the contract hint and the refusal renderer.
#[cold]
pub(crate) fn after_refusal(tool: &Tool, raw: &str, options: &CallOptions, outcome: &mut CallOutcome) {
    if let Some(ext) = tool.extensions().filter(|e| e.repairs_values())
        && let Some((value, repairs)) = extend_value(tool, ext, raw, options, false)
    {
        let mut again = run(tool, &value.to_string(), options);
        if again.is_ok() {
            let (report, _) = again.parts_mut();
            report.text_fixes.splice(0..0, outcome.report().text_fixes.iter().copied());
            report.repairs.splice(0..0, repairs);
            report.outcome = Outcome::Repaired;
            *outcome = again;
            return;
        }
    }
    let contract = tool.contract();
    let renderer = tool.extensions().and_then(|e| e.renderer.as_ref());
    if contract.is_none() && renderer.is_none() {
        return;
    }
    if let (_, Some(refusal)) = outcome.parts_mut() {
        if let Some(c) = contract {
            let _ = writeln!(refusal.message, "Contract for `{}`: {c}", tool.name());
        }
        if let Some(render) = renderer {
            refusal.message = render(tool, refusal);
        }
        if refusal.message.len() > MAX_MESSAGE_BYTES {
            let end = crate::span::floor_char_boundary(&refusal.message, MAX_MESSAGE_BYTES);
            refusal.message.truncate(end);
        }
    }
}

/// The salvaged value of `raw` with the extensions applied at the failing places, and what
/// they did; `None` when they did nothing, or the text was cut off or unclosed (that needs
/// the model), or gives a key twice (which value the tool reads is not certain).
fn extend_value(
    tool: &Tool,
    ext: &Extensions,
    raw: &str,
    options: &CallOptions,
    fuzzy: bool,
) -> Option<(Value, Vec<Repair>)> {
    let source = if raw.trim().is_empty() { "{}" } else { raw };
    let salvaged = salvage::salvage_with(source, &options.limits).ok()?;
    if salvaged.is_truncated() {
        return None;
    }
    let (mut value, dupes) = salvage::parse_value(salvaged.text()).ok()?;
    if dupes {
        return None;
    }
    let root = tool.parameters();
    let mut repairs = Vec::new();
    let mut objects: BTreeSet<String> = BTreeSet::new();
    for v in violations(tool.validator(), &value) {
        match v.kind {
            ViolationKind::Missing | ViolationKind::Unexpected => {
                objects.insert(v.path.rsplit_once('/').map_or("", |(p, _)| p).to_owned());
            }
            ViolationKind::Keyword(_) => {
                let node = v.schema_path.as_deref().and_then(|p| root.pointer(p)).or_else(|| schema_at(root, &v.path));
                if let (Some(node), Some(slot)) = (node, value.pointer_mut(&v.path))
                    && let Some((kind, new)) = convert(ext, root, node, slot)
                {
                    let before = std::mem::replace(slot, new.clone());
                    repairs.push(Repair::new(kind, &v.path, Some(before), Some(new)));
                }
            }
            ViolationKind::Alternatives => {}
        }
    }
    for parent in objects {
        let Some(node) = schema_at(root, &parent) else { continue };
        if let Some(Value::Object(map)) = value.pointer_mut(&parent) {
            rename(ext, root, node, map, &parent, fuzzy, &mut repairs);
        }
    }
    (!repairs.is_empty()).then_some((value, repairs))
}

/// A normalised or coerced replacement for `value` under `node`.
fn convert(ext: &Extensions, root: &Value, node: &Value, value: &Value) -> Option<(RepairKind, Value)> {
    if let Value::String(s) = value {
        let node = view::resolve(root, node);
        let semantic = |ns: &str| node.get(ns)?.get("semantic")?.as_str();
        let tags = [node.get("format").and_then(Value::as_str), semantic("x-toolfix"), semantic("dirge-hints")];
        for tag in tags.into_iter().flatten() {
            if let Some((_, normalise)) = ext.normalisers.iter().find(|(t, _)| t == tag)
                && let Some(new) = normalise(s).filter(|n| n != s)
            {
                return Some((RepairKind::FormatNormalised, Value::String(new)));
            }
        }
    }
    let coerce = ext.coercer.as_ref()?;
    coerce(value, node).filter(|n| n != value).map(|n| (RepairKind::ExtensionCoerced, n))
}

/// Rename undeclared keys of `map` (the first [`MAX_KEYS`]) by the matcher, then (uncertain
/// mode) fuzzily; a target must be declared, not given, and claimed by one key only.
fn rename(
    ext: &Extensions,
    root: &Value,
    node: &Value,
    map: &mut Map<String, Value>,
    path: &str,
    fuzzy: bool,
    repairs: &mut Vec<Repair>,
) {
    let ov = view::object_view(root, node);
    let declared: Vec<&str> = ov.properties.iter().map(|(k, _)| *k).collect();
    let free: Vec<&str> = declared.iter().copied().filter(|d| !map.contains_key(*d)).collect();
    let mut plan: Vec<(String, String, RepairKind)> = Vec::new();
    for key in map.keys().filter(|k| ov.property(k).is_none()).take(MAX_KEYS) {
        let certain = ext.matcher.as_ref().and_then(|m| m(key, &declared)).filter(|t| free.contains(&t.as_str()));
        let found = match certain {
            Some(t) => Some((t, RepairKind::ExtensionMatched)),
            None if fuzzy => closest(key, &free).map(|t| (t.to_owned(), RepairKind::UncertainMatch)),
            None => None,
        };
        if let Some((target, kind)) = found {
            plan.push((key.clone(), target, kind));
        }
    }
    let claimed_once = |t: &str| plan.iter().filter(|(_, x, _)| x == t).count() == 1;
    let plan: Vec<(String, String, RepairKind)> = plan.iter().filter(|(_, t, _)| claimed_once(t)).cloned().collect();
    if plan.is_empty() {
        return;
    }
    let old = std::mem::take(map);
    for (k, v) in old {
        match plan.iter().find(|(from, _, _)| *from == k) {
            Some((from, to, kind)) => {
                let at = pointer::join(path, to);
                repairs.push(Repair::new(
                    *kind,
                    &at,
                    Some(Value::String(from.clone())),
                    Some(Value::String(to.clone())),
                ));
                map.insert(to.clone(), v);
            }
            None => {
                map.insert(k, v);
            }
        }
    }
}

/// The one name of `names` within a small edit distance of `key` (case and separators
/// ignored): at most 1 for names up to 5 characters, 2 beyond; `None` when none or several.
fn closest<'n>(key: &str, names: &[&'n str]) -> Option<&'n str> {
    let k = view::normalise(key);
    if k.len() > 64 {
        return None;
    }
    let mut best: Option<(&str, usize)> = None;
    let mut tie = false;
    for name in names {
        let n = view::normalise(name);
        let budget = if n.chars().count() <= 5 { 1 } else { 2 };
        let Some(d) = distance(&k, &n, budget) else { continue };
        match best {
            Some((_, b)) if d > b => {}
            Some((_, b)) if d == b => tie = true,
            _ => {
                best = Some((name, d));
                tie = false;
            }
        }
    }
    if tie { None } else { best.map(|(n, _)| n) }
}

/// Optimal string alignment distance of `a` and `b` when at most `max`.
fn distance(a: &str, b: &str, max: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > max || b.len() > 64 {
        return None;
    }
    let width = b.len() + 1;
    let mut rows = vec![0usize; (a.len() + 1) * width];
    for (j, cell) in rows.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        rows[i * width] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[(i - 1) * width + j] + 1)
                .min(rows[i * width + j - 1] + 1)
                .min(rows[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[(i - 2) * width + j - 2] + 1);
            }
            rows[i * width + j] = d;
        }
    }
    let d = rows[a.len() * width + b.len()];
    (d <= max).then_some(d)
}

/// The schema node for instance path `path` (properties and items only).
fn schema_at<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    let mut node = root;
    for seg in path.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        node = match view::object_view(root, node).property(&seg) {
            Some(p) => p,
            None => view::items(root, node)?,
        };
    }
    Some(node)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance() {
        assert_eq!(distance("qeury", "query", 2), Some(1));
        assert_eq!(distance("abc", "abc", 0), Some(0));
        assert_eq!(distance("path", "name", 2), None);
        assert_eq!(closest("qeury", &["query", "limit"]), Some("query"));
        assert_eq!(closest("nam", &["name", "nap"]), None, "two at distance 1");
        assert_eq!(closest("file", &["path"]), None);
    }
}
