//! Tool-level repair hints: `x-toolfix` at the root of `parameters`, and dirge's
//! `dirge-hints`.

use serde::Serialize;
use serde_json::{Map, Value};

/// How much repair a tool accepts: set per tool with `x-toolfix.policy` in its schema or
/// [`ToolSet::with_policy`](crate::ToolSet::with_policy).
///
/// ```
/// use toolfix::Policy;
/// assert_eq!(Policy::from_name("strict"), Some(Policy::Strict));
/// assert_eq!(Policy::default().as_str(), "default");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Policy {
    /// Exact names, no coercion, no truncation closing: for payments and deletions.
    Strict,
    /// Every certain repair; unknown fields rejected where the schema forbids them.
    #[default]
    Default,
    /// As default, and unknown fields are dropped with a report line.
    Lenient,
}

impl Policy {
    /// Parse `strict`, `default` or `lenient`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Policy> {
        match name {
            "strict" => Some(Policy::Strict),
            "default" => Some(Policy::Default),
            "lenient" => Some(Policy::Lenient),
            _ => None,
        }
    }

    /// The stable name.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Policy::Strict => "strict",
            Policy::Default => "default",
            Policy::Lenient => "lenient",
        }
    }
}

/// What running a tool does to the world. It decides what the library may do with a call:
/// a value cut off by the token limit never reaches a tool that is not read-only, the
/// storm guard clears the reads before a call that changes things, and an agent retries
/// only what it may run twice.
///
/// Declared by `x-toolfix` `"effect": "read_only" | "idempotent" | "mutating"` (or
/// `"read_only": true`), by an MCP definition's `annotations` (`readOnlyHint`,
/// `idempotentHint`), or by [`ToolSet::with_effect`](super::ToolSet::with_effect). A tool
/// declared nothing may change things: [`Effect::Mutating`] is the default everywhere.
///
/// ```
/// use serde_json::json;
/// use toolfix::schema::{Effect, Tool};
///
/// let tool = Tool::from_definition(&json!({"name": "put", "inputSchema": {"type": "object"},
///     "annotations": {"idempotentHint": true}})).unwrap();
/// assert_eq!(tool.effect(), Effect::Idempotent);
/// assert_eq!(Effect::from_name("read_only"), Some(Effect::ReadOnly));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Effect {
    /// Reads only: running it again changes nothing, and it may receive the complete
    /// values of a call that was cut off.
    ReadOnly,
    /// Changes things, but running it twice is the same as once.
    Idempotent,
    /// Changes things (writes, deletes, sends, runs): the default.
    #[default]
    Mutating,
}

impl Effect {
    /// The effect named `read_only`, `idempotent` or `mutating`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Effect> {
        match name {
            "read_only" | "readonly" | "read-only" => Some(Effect::ReadOnly),
            "idempotent" => Some(Effect::Idempotent),
            "mutating" => Some(Effect::Mutating),
            _ => None,
        }
    }

    /// The stable `snake_case` name.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Effect::ReadOnly => "read_only",
            Effect::Idempotent => "idempotent",
            Effect::Mutating => "mutating",
        }
    }

    /// True for a tool that changes things (idempotent or not).
    #[must_use]
    pub const fn changes_things(self) -> bool {
        !matches!(self, Effect::ReadOnly)
    }
}

/// A relational group: when some of `fields` are given, the missing ones are filled from
/// `defaults`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Relational {
    pub(crate) fields: Vec<String>,
    pub(crate) defaults: Map<String, Value>,
}

/// The hints of one tool.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ToolHints {
    pub(crate) policy: Policy,
    pub(crate) effect: Effect,
    pub(crate) sensitive: bool,
    pub(crate) relational: Vec<Relational>,
    pub(crate) required_any: Vec<Vec<String>>,
    pub(crate) aliases: Vec<String>,
}

impl ToolHints {
    /// Read the hints at the root of `parameters` and, for aliases and flags, at the tool
    /// level of the definition.
    pub(crate) fn read(parameters: &Value, definition: &Value) -> ToolHints {
        let mut hints = ToolHints::default();
        // MCP tool annotations: `readOnlyHint: true` declares a tool without side effects,
        // `idempotentHint: true` one whose repeats change nothing more (absent or false: it
        // may change things). `x-toolfix` `effect` or `read_only` below override them.
        if let Some(a) = definition.get("annotations") {
            let hint = |k: &str| a.get(k).and_then(Value::as_bool) == Some(true);
            if hint("readOnlyHint") {
                hints.effect = Effect::ReadOnly;
            } else if hint("idempotentHint") {
                hints.effect = Effect::Idempotent;
            }
        }
        for holder in [definition, parameters] {
            for ns in ["x-toolfix", "dirge-hints"] {
                if let Some(h) = holder.get(ns) {
                    hints.merge(h);
                }
            }
        }
        hints
    }

    fn merge(&mut self, h: &Value) {
        if let Some(p) = h.get("policy").and_then(Value::as_str).and_then(Policy::from_name) {
            self.policy = p;
        }
        if let Some(b) = h.get("read_only").and_then(Value::as_bool) {
            self.effect = if b { Effect::ReadOnly } else { Effect::Mutating };
        }
        if let Some(e) = h.get("effect").and_then(Value::as_str).and_then(Effect::from_name) {
            self.effect = e;
        }
        if let Some(b) = h.get("sensitive").and_then(Value::as_bool) {
            self.sensitive = b;
        }
        if let Some(list) = h.get("aliases").and_then(Value::as_array) {
            self.aliases.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        if let Some(groups) = h.get("required_any").and_then(Value::as_array) {
            for g in groups {
                if let Some(names) = g.as_array() {
                    self.required_any.push(names.iter().filter_map(Value::as_str).map(str::to_owned).collect());
                }
            }
        }
        if let Some(groups) = h.get("relational").and_then(Value::as_array) {
            for g in groups {
                let fields = g.get("fields").or_else(|| g.get("requires")).and_then(Value::as_array);
                let defaults = g.get("default").or_else(|| g.get("defaults")).and_then(Value::as_object);
                if let Some(fields) = fields {
                    self.relational.push(Relational {
                        fields: fields.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
                        defaults: defaults.cloned().unwrap_or_default(),
                    });
                }
            }
        }
    }

    /// Every property name a hint refers to, for `check`.
    pub(crate) fn named_properties(&self) -> impl Iterator<Item = &str> {
        self.relational
            .iter()
            .flat_map(|r| r.fields.iter().map(String::as_str).chain(r.defaults.keys().map(String::as_str)))
            .chain(self.required_any.iter().flatten().map(String::as_str))
    }

    /// True when the hints can fail a call that plain JSON Schema accepts.
    pub(crate) fn has_checks(&self) -> bool {
        !self.relational.is_empty() || !self.required_any.is_empty()
    }
}

/// A copy of `schema` without `x-toolfix` and `dirge-hints` keywords anywhere: what a model
/// is shown.
///
/// ```
/// use serde_json::json;
/// let schema = json!({"type": "object", "x-toolfix": {"read_only": true},
///     "properties": {"path": {"type": "string", "x-toolfix": {"semantic": "path"}}}});
/// let shown = toolfix::schema::strip_hints(&schema);
/// assert_eq!(shown, json!({"type": "object", "properties": {"path": {"type": "string"}}}));
/// ```
#[must_use]
pub fn strip_hints(schema: &Value) -> Value {
    let mut out = schema.clone();
    let mut stack: Vec<&mut Value> = vec![&mut out];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                map.shift_remove("x-toolfix");
                map.shift_remove("dirge-hints");
                stack.extend(map.values_mut());
            }
            Value::Array(list) => stack.extend(list.iter_mut()),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dirge_relational_both_spellings() {
        let a = ToolHints::read(
            &json!({"dirge-hints": {"relational": [{"requires": ["offset", "limit"], "defaults": {"offset": 0}}]}}),
            &Value::Null,
        );
        let b = ToolHints::read(
            &json!({"dirge-hints": {"relational": [{"fields": ["offset", "limit"], "default": {"offset": 0}}]}}),
            &Value::Null,
        );
        assert_eq!(a, b);
        assert_eq!(a.relational.len(), 1);
    }
}
