//! The tool registry: [`ToolSet`], built once from tool definitions, each schema compiled
//! once, names resolved exactly, then normalised, then through declared aliases.
//!
//! ```
//! use serde_json::json;
//! use toolfix::schema::ToolSet;
//!
//! let tools = ToolSet::new(&[json!({"type": "function", "function": {
//!     "name": "read_file", "description": "Read a file.",
//!     "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
//!                    "required": ["path"]}}})]).unwrap();
//! assert_eq!(tools.tool("readFile").unwrap().name(), "read_file");
//! assert!(tools.tool("write_file").is_err());
//! ```

mod extensions;
mod hints;
mod names;
pub(crate) mod plain;
pub(crate) mod suggest;
pub(crate) mod view;

pub use extensions::{Extensions, FieldMatcher, FormatNormaliser, RefusalRenderer, ValueCoercer};
pub(crate) use hints::ToolHints;
pub use hints::{Effect, LeakedCalls, Policy, strip_hints};
pub(crate) use names::PropertyNames;

use crate::error::{Error, ErrorKind, Result};
use crate::pointer::{IndexJson, Nodes, StrictView};
use crate::salvage::Salvager;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The most room a tool keeps for salvaging its next call, and for reading it (the buffers
/// of a larger call are let go).
const KEPT_SALVAGE_BYTES: usize = 64 * 1024;

/// What a tool keeps between calls to work in: the lenient parse's buffers, and the lists
/// of the strict read that indexes the arguments. What a call answers does not depend on
/// them.
#[derive(Default)]
pub(crate) struct Buffers {
    pub(crate) salvager: Salvager,
    pub(crate) parse: crate::pointer::Scratch,
}

/// One compiled tool.
#[derive(Clone, Debug)]
pub struct Tool {
    compiled: Arc<Compiled>,
    policy: Policy,
    effect: Effect,
    leaked_calls: Option<LeakedCalls>,
    /// Extension points registered on the set.
    ext: Option<Arc<Extensions>>,
}

struct Compiled {
    name: String,
    description: String,
    parameters: Value,
    validator: jsonschema::Validator,
    /// The same schema compiled for instances read over strict text (`pointer::IndexJson`),
    /// on the first call that asks (`None`: it did not compile, which the first compile
    /// rules out).
    strict: OnceLock<Option<jsonschema::Validator<IndexJson>>>,
    hints: ToolHints,
    has_tagged_strings: bool,
    /// The property names normalised, for repair (their text never moves: the schema is
    /// not changed once compiled).
    names: PropertyNames,
    /// The schema compiled for finding where a value fails it, when it is plain enough.
    plain: Option<plain::Plain>,
    /// The buffers of the lenient parse and the strict read, kept between calls to this
    /// tool (a call that finds them in use by another thread works in buffers of its own).
    buffers: Mutex<Buffers>,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiled").field("name", &self.name).finish_non_exhaustive()
    }
}

impl Tool {
    /// Compile one definition in `OpenAI`, bare or `MCP` form.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ToolDefinition`] when the definition has no name or its schema does
    /// not compile.
    pub fn from_definition(definition: &Value) -> Result<Tool> {
        let inner = definition.get("function").filter(|f| f.is_object()).unwrap_or(definition);
        let name = inner
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::new(ErrorKind::ToolDefinition, "a tool definition has no name"))?;
        let description = inner.get("description").and_then(Value::as_str).unwrap_or_default();
        let parameters = inner
            .get("parameters")
            .or_else(|| inner.get("inputSchema"))
            .or_else(|| inner.get("input_schema"))
            .filter(|p| !p.is_null())
            .cloned()
            .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}}));
        Tool::new(name, description, parameters, inner)
    }

    /// Compile a tool from its parts.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ToolDefinition`] when the schema does not compile.
    pub fn from_parts(name: &str, description: &str, parameters: Value) -> Result<Tool> {
        Tool::new(name, description, parameters, &Value::Null)
    }

    fn new(name: &str, description: &str, parameters: Value, definition: &Value) -> Result<Tool> {
        let validator = compile(&parameters).map_err(|m| {
            Error::new(ErrorKind::ToolDefinition, format!("the schema of tool `{name}` does not compile: {m}"))
        })?;
        let hints = ToolHints::read(&parameters, definition);
        let has_tagged_strings = has_tagged_strings(&parameters);
        let names = PropertyNames::of(&parameters);
        let plain = plain::Plain::compile(&parameters);
        let policy = hints.policy;
        let effect = hints.effect;
        let leaked_calls = hints.leaked_calls;
        Ok(Tool {
            compiled: Arc::new(Compiled {
                name: name.to_owned(),
                description: description.to_owned(),
                parameters,
                validator,
                strict: OnceLock::new(),
                hints,
                has_tagged_strings,
                names,
                plain,
                buffers: Mutex::new(Buffers::default()),
            }),
            policy,
            effect,
            leaked_calls,
            ext: None,
        })
    }

    /// The tool's name as declared.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.compiled.name
    }

    /// The tool's description.
    #[must_use]
    pub fn description(&self) -> &str {
        &self.compiled.description
    }

    /// The `parameters` JSON Schema, hints included.
    #[must_use]
    pub fn parameters(&self) -> &Value {
        &self.compiled.parameters
    }

    /// The schema to show a model: hints stripped.
    #[must_use]
    pub fn parameters_shown(&self) -> Value {
        strip_hints(&self.compiled.parameters)
    }

    /// The repair policy in force.
    #[must_use]
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// What running the tool does to the world (see [`Effect`]).
    #[must_use]
    pub fn effect(&self) -> Effect {
        self.effect
    }

    /// How calls to this tool written in a reply's text are taken, when the tool says
    /// (`x-toolfix.leaked_calls`, or [`ToolSet::with_leaked_calls`]); `None`: as the
    /// extraction options say.
    #[must_use]
    pub fn leaked_calls(&self) -> Option<LeakedCalls> {
        self.leaked_calls
    }

    /// True when the tool is declared read-only (see [`Effect`]). A tool that is not
    /// read-only may have side effects: it never receives a value that was cut off.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolfix::Tool;
    ///
    /// let mcp = Tool::from_definition(&json!({"name": "search", "inputSchema": {"type": "object"},
    ///     "annotations": {"readOnlyHint": true}})).unwrap();
    /// assert!(mcp.is_read_only());
    /// let plain = Tool::from_definition(&json!({"name": "rm", "parameters": {"type": "object"}})).unwrap();
    /// assert!(!plain.is_read_only());
    /// ```
    #[must_use]
    pub fn is_read_only(&self) -> bool {
        self.effect == Effect::ReadOnly
    }

    /// True when the tool is marked sensitive: refusals do not echo received values.
    #[must_use]
    pub fn is_sensitive(&self) -> bool {
        self.compiled.hints.sensitive
    }

    /// True when `value` is valid under the JSON Schema alone (hints not checked).
    #[must_use]
    pub fn is_valid(&self, value: &Value) -> bool {
        self.compiled.validator.is_valid(value)
    }

    /// What [`Tool::is_valid`] answers on the value of strict JSON `text`, asked over the
    /// text and its index (`nodes`, read by `pointer::index_strict` with no key given
    /// twice) without building the value: `jsonschema` decides, over another
    /// representation of the same instance. `None` when the view could not be read.
    pub(crate) fn is_valid_text(&self, text: &str, nodes: &Nodes) -> Option<bool> {
        let strict = self.compiled.strict.get_or_init(|| compile_for::<IndexJson>(&self.compiled.parameters).ok());
        let view = StrictView::new(text, nodes);
        let valid = strict.as_ref()?.is_valid(view.root());
        (!view.is_broken()).then_some(valid)
    }

    pub(crate) fn validator(&self) -> &jsonschema::Validator {
        &self.compiled.validator
    }

    pub(crate) fn hints(&self) -> &ToolHints {
        &self.compiled.hints
    }

    /// The schema compiled as [`plain::Plain`], when it is plain.
    pub(crate) fn plain(&self) -> Option<&plain::Plain> {
        self.compiled.plain.as_ref()
    }

    /// `f` run with this tool's buffers (kept from the last call), or with new ones while
    /// another thread holds them. What a salvager or a read answers does not depend on its
    /// buffers.
    pub(crate) fn with_buffers<R>(&self, f: impl FnOnce(&mut Buffers) -> R) -> R {
        match self.compiled.buffers.try_lock() {
            Ok(mut buffers) => {
                let answer = f(&mut buffers);
                buffers.salvager.keep_at_most(KEPT_SALVAGE_BYTES);
                if buffers.parse.footprint() > KEPT_SALVAGE_BYTES {
                    buffers.parse = crate::pointer::Scratch::default();
                }
                answer
            }
            Err(_) => f(&mut Buffers::default()),
        }
    }

    /// The schema's property names, normalised once.
    pub(crate) fn property_names(&self) -> &PropertyNames {
        &self.compiled.names
    }

    /// True when some string property is tagged as a path or URL.
    pub(crate) fn has_tagged_strings(&self) -> bool {
        self.compiled.has_tagged_strings
    }

    /// The extension points registered on the set.
    pub(crate) fn extensions(&self) -> Option<&Extensions> {
        self.ext.as_deref()
    }

    pub(crate) fn set_extensions(&mut self, ext: Option<Arc<Extensions>>) {
        self.ext = ext;
    }
}

/// Compile a schema: draft 2020-12 unless it names another, no remote resolving.
pub(crate) fn compile(schema: &Value) -> std::result::Result<jsonschema::Validator, String> {
    compile_for::<jsonschema::json::SerdeJson>(schema)
}

/// [`compile`] for instances in representation `F`.
fn compile_for<F: jsonschema::json::Json>(schema: &Value) -> std::result::Result<jsonschema::Validator<F>, String> {
    if !schema.is_object() && !schema.is_boolean() {
        return Err("the schema is not an object".to_owned());
    }
    let mut options = jsonschema::options_for::<F>();
    if schema.get("$schema").is_none() {
        options = options.with_draft(jsonschema::Draft::Draft202012);
    }
    options.build(schema).map_err(|e| e.to_string())
}

fn has_tagged_strings(schema: &Value) -> bool {
    let mut stack = vec![schema];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                for ns in ["x-toolfix", "dirge-hints"] {
                    if map.get(ns).and_then(|h| h.get("semantic")).is_some() {
                        return true;
                    }
                }
                stack.extend(map.values());
            }
            Value::Array(list) => stack.extend(list.iter()),
            _ => {}
        }
    }
    false
}

/// Up to this many tools, a name is found by comparing names in turn.
const FEW_TOOLS: usize = 8;

/// A set of tools, built once, cheap to clone (shared inside), `Send + Sync`.
#[derive(Clone, Debug, Default)]
pub struct ToolSet {
    inner: Arc<Inner>,
}

#[derive(Clone, Debug, Default)]
struct Inner {
    tools: Vec<Tool>,
    exact: HashMap<String, usize>,
    normalised: HashMap<String, Vec<usize>>,
    aliases: HashMap<String, Vec<usize>>,
    /// Tools whose definition has a name but does not compile: name → why.
    broken: Vec<(String, String)>,
}

/// Why a tool name did not resolve.
///
/// ```
/// use serde_json::json;
/// use toolfix::schema::{NameError, ToolSet};
///
/// let tools = ToolSet::new(&[json!({"name": "get_weather"}), json!({"name": "read_file"})]).unwrap();
/// match tools.tool("get_wether") {
///     Err(NameError::Unknown { suggestions, .. }) => assert_eq!(suggestions, ["get_weather"]),
///     other => panic!("{other:?}"),
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameError {
    /// No tool of that name, normalised name or alias.
    Unknown {
        /// The name asked for.
        name: String,
        /// The tools there are.
        known: Vec<String>,
        /// The registered names closest to `name` ("did you mean …"), best first; empty
        /// when none is close.
        suggestions: Vec<String>,
    },
    /// Two or more tools match the name after normalising (or by alias).
    Ambiguous {
        /// The name asked for.
        name: String,
        /// The tools it could be.
        candidates: Vec<String>,
    },
    /// The name is a tool whose definition is broken (its schema does not compile): the
    /// fault is the tool definition's, not the call's.
    Broken {
        /// The tool's declared name.
        name: String,
        /// Why the definition was not usable.
        reason: String,
    },
}

impl std::fmt::Display for NameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NameError::Unknown { name, suggestions, .. } => {
                write!(f, "no tool is named `{name}`")?;
                match suggestions.as_slice() {
                    [] => Ok(()),
                    [one] => write!(f, "; did you mean `{one}`?"),
                    many => write!(f, "; did you mean one of `{}`?", many.join("`, `")),
                }
            }
            NameError::Ambiguous { name, candidates } => {
                write!(f, "tool name `{name}` could be any of {}", candidates.join(", "))
            }
            NameError::Broken { name, reason } => write!(f, "the definition of tool `{name}` is broken: {reason}"),
        }
    }
}

impl std::error::Error for NameError {}

impl ToolSet {
    /// Build a set from definitions in `OpenAI`, bare or `MCP` form.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ToolDefinition`] when a definition is malformed, a schema does not
    /// compile or two tools share a name.
    pub fn new(definitions: &[Value]) -> Result<ToolSet> {
        let tools = definitions.iter().map(Tool::from_definition).collect::<Result<Vec<_>>>()?;
        ToolSet::from_tools(tools)
    }

    /// Build a set from definitions, keeping every usable tool: one bad definition does not
    /// take the others down (partial success is a result).
    ///
    /// A definition whose schema does not compile is registered by name as *broken*: calls
    /// to it are refused with a message that blames the tool definition, not the call, and
    /// every other tool works normally. A definition without a name, or a second tool of
    /// the same name, is left out. Each problem is returned as an error, in definition
    /// order.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolfix::ToolSet;
    ///
    /// let (tools, errors) = ToolSet::new_partial(&[
    ///     json!({"name": "good", "parameters": {"type": "object"}}),
    ///     json!({"name": "bad", "parameters": {"type": "float"}}),
    /// ]);
    /// assert_eq!(errors.len(), 1);
    /// assert!(tools.repair_call("good", "{}").is_ok());
    /// let refused = tools.repair_call("bad", "{}");
    /// assert!(refused.refusal().unwrap().message.contains("definition"));
    /// ```
    #[must_use]
    pub fn new_partial(definitions: &[Value]) -> (ToolSet, Vec<Error>) {
        let mut tools = Vec::with_capacity(definitions.len());
        let mut broken: Vec<(String, String)> = Vec::new();
        let mut errors = Vec::new();
        for definition in definitions {
            match Tool::from_definition(definition) {
                Ok(tool) => {
                    if tools.iter().any(|t: &Tool| t.name() == tool.name()) {
                        errors.push(Error::new(
                            ErrorKind::ToolDefinition,
                            format!("two tools are named `{}`; the second is left out", tool.name()),
                        ));
                    } else {
                        tools.push(tool);
                    }
                }
                Err(e) => {
                    if let Some(name) = definition_name(definition) {
                        broken.push((name.to_owned(), e.message().to_owned()));
                    }
                    errors.push(e);
                }
            }
        }
        let mut set = ToolSet::index(tools);
        broken.retain(|(name, _)| !set.exact.contains_key(name));
        set.broken = broken;
        (ToolSet { inner: Arc::new(set) }, errors)
    }

    /// Build a set from a JSON array of definitions.
    ///
    /// # Errors
    ///
    /// As [`ToolSet::new`]; also when `definitions` is not an array.
    pub fn from_value(definitions: &Value) -> Result<ToolSet> {
        match definitions {
            Value::Array(list) => ToolSet::new(list),
            _ => Err(Error::new(ErrorKind::ToolDefinition, "tool definitions must be a JSON array")),
        }
    }

    /// Build a set from compiled tools.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ToolDefinition`] when two tools share a name.
    pub fn from_tools(tools: Vec<Tool>) -> Result<ToolSet> {
        for (i, tool) in tools.iter().enumerate() {
            if tools.iter().take(i).any(|t| t.name() == tool.name()) {
                return Err(Error::new(ErrorKind::ToolDefinition, format!("two tools are named `{}`", tool.name())));
            }
        }
        Ok(ToolSet { inner: Arc::new(ToolSet::index(tools)) })
    }

    /// The name indexes of `tools` (names unique).
    fn index(tools: Vec<Tool>) -> Inner {
        let mut inner = Inner::default();
        for (i, tool) in tools.iter().enumerate() {
            inner.exact.insert(tool.name().to_owned(), i);
            inner.normalised.entry(view::normalise(tool.name())).or_default().push(i);
            for alias in &tool.hints().aliases {
                inner.aliases.entry(view::normalise(alias)).or_default().push(i);
            }
        }
        inner.tools = tools;
        inner
    }

    /// This set with tool `name`'s [`Effect`] declared, overriding its definition (a
    /// per-tool policy in a proxy or MCP wrapper configuration, an agent's registration).
    ///
    /// ```
    /// use serde_json::json;
    /// use toolfix::ToolSet;
    /// use toolfix::schema::Effect;
    ///
    /// let tools = ToolSet::new(&[json!({"name": "search", "parameters": {"type": "object"}})]).unwrap();
    /// let tools = tools.with_effect("search", Effect::ReadOnly).unwrap();
    /// assert!(tools.tool("search").unwrap().is_read_only());
    /// ```
    ///
    /// # Errors
    ///
    /// When no tool has that exact name.
    pub fn with_effect(self, name: &str, effect: Effect) -> Result<ToolSet> {
        self.with_tool(name, |tool| tool.effect = effect)
    }

    /// This set with tool `name`'s policy for calls written in text declared (see
    /// [`LeakedCalls`]).
    ///
    /// ```
    /// use serde_json::json;
    /// use toolfix::ToolSet;
    /// use toolfix::schema::LeakedCalls;
    ///
    /// let tools = ToolSet::new(&[json!({"name": "rm", "parameters": {"type": "object"}})]).unwrap();
    /// let tools = tools.with_leaked_calls("rm", LeakedCalls::Never).unwrap();
    /// assert_eq!(tools.tool("rm").unwrap().leaked_calls(), Some(LeakedCalls::Never));
    /// ```
    ///
    /// # Errors
    ///
    /// When no tool has that exact name.
    pub fn with_leaked_calls(self, name: &str, policy: LeakedCalls) -> Result<ToolSet> {
        self.with_tool(name, |tool| tool.leaked_calls = Some(policy))
    }

    /// This set with `change` applied to every tool.
    pub(crate) fn with_every_tool(self, mut change: impl FnMut(&mut Tool)) -> ToolSet {
        let mut inner = Arc::unwrap_or_clone(self.inner);
        inner.tools.iter_mut().for_each(&mut change);
        ToolSet { inner: Arc::new(inner) }
    }

    fn with_tool(self, name: &str, change: impl FnOnce(&mut Tool)) -> Result<ToolSet> {
        let Some(&i) = self.inner.exact.get(name) else {
            return Err(Error::new(ErrorKind::ToolDefinition, format!("no tool is named `{name}`")));
        };
        let mut inner = Arc::unwrap_or_clone(self.inner);
        if let Some(tool) = inner.tools.get_mut(i) {
            change(tool);
        }
        Ok(ToolSet { inner: Arc::new(inner) })
    }

    /// The names of tools whose definition is broken (see [`ToolSet::new_partial`]).
    #[must_use]
    pub fn broken_names(&self) -> Vec<&str> {
        self.broken().collect()
    }

    /// The names of the broken definitions, as [`ToolSet::broken_names`] lists them.
    pub(crate) fn broken(&self) -> impl Iterator<Item = &str> {
        self.inner.broken.iter().map(|(n, _)| n.as_str())
    }

    /// True when `text` could be the start of a name [`ToolSet::tool`] resolves (exactly,
    /// normalised or through an alias) or of a broken definition's name: a stream holds
    /// such text back while a call could follow it.
    pub(crate) fn could_begin_name(&self, text: &str) -> bool {
        let inner = &*self.inner;
        if inner.exact.keys().any(|n| n.starts_with(text)) {
            return true;
        }
        let key = view::normalise(text);
        inner.normalised.keys().chain(inner.aliases.keys()).any(|n| n.starts_with(&key))
            || inner.broken.iter().any(|(n, _)| n.starts_with(text) || view::normalise(n).starts_with(&key))
    }

    /// This set with tool `name`'s policy replaced.
    ///
    /// # Errors
    ///
    /// When no tool has that exact name.
    pub fn with_policy(self, name: &str, policy: Policy) -> Result<ToolSet> {
        self.with_tool(name, |tool| tool.policy = policy)
    }

    /// Every tool, in definition order.
    #[must_use]
    pub fn tools(&self) -> &[Tool] {
        &self.inner.tools
    }

    /// Resolve a tool name: exact, then normalised (case and separators), then a declared
    /// alias. Two tools that match alike make the name ambiguous.
    ///
    /// # Errors
    ///
    /// [`NameError`] when the name is unknown or ambiguous.
    pub fn tool(&self, name: &str) -> std::result::Result<&Tool, NameError> {
        let inner = &*self.inner;
        // Names are unique: a few are compared in turn, cheaper than hashing the name.
        let exact = if inner.tools.len() <= FEW_TOOLS {
            inner.tools.iter().find(|t| t.name() == name)
        } else {
            inner.exact.get(name).and_then(|&i| inner.tools.get(i))
        };
        if let Some(t) = exact {
            return Ok(t);
        }
        let key = view::normalise(name.trim());
        // A broken tool of this name: the definition's fault, said so, never another tool.
        if let Some((broken, reason)) = inner.broken.iter().find(|(n, _)| n == name || view::normalise(n) == key) {
            return Err(NameError::Broken { name: broken.clone(), reason: reason.clone() });
        }
        for map in [&inner.normalised, &inner.aliases] {
            match map.get(&key).map(Vec::as_slice) {
                Some([one]) => {
                    if let Some(t) = inner.tools.get(*one) {
                        return Ok(t);
                    }
                }
                Some(many) if many.len() > 1 => {
                    return Err(NameError::Ambiguous {
                        name: name.to_owned(),
                        candidates: many
                            .iter()
                            .filter_map(|&i| inner.tools.get(i))
                            .map(|t| t.name().to_owned())
                            .collect(),
                    });
                }
                _ => {}
            }
        }
        let known: Vec<String> = inner.tools.iter().map(|t| t.name().to_owned()).collect();
        let aliases = inner.tools.iter().flat_map(|t| t.hints().aliases.iter().map(String::as_str));
        let mut suggestions: Vec<String> = Vec::new();
        for close in suggest::closest(name.trim(), known.iter().map(String::as_str).chain(aliases)) {
            // An alias suggests the tool it names.
            let tool = inner.tools.iter().find(|t| t.name() == close || t.hints().aliases.iter().any(|a| a == close));
            if let Some(t) = tool
                && !suggestions.iter().any(|s| s == t.name())
            {
                suggestions.push(t.name().to_owned());
            }
        }
        Err(NameError::Unknown { name: name.to_owned(), known, suggestions })
    }
}

/// The `name` of a definition in `OpenAI`, bare or `MCP` form.
fn definition_name(definition: &Value) -> Option<&str> {
    definition.get("function").filter(|f| f.is_object()).unwrap_or(definition).get("name")?.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bare(name: &str) -> Value {
        json!({"name": name, "description": "", "parameters": {"type": "object"}})
    }

    #[test]
    fn send_sync_clone() {
        fn assert_send_sync<T: Send + Sync + Clone>() {}
        assert_send_sync::<ToolSet>();
        assert_send_sync::<Tool>();
    }

    #[test]
    fn resolves_names() {
        let set = ToolSet::new(&[
            bare("read_file"),
            json!({"name": "ls", "inputSchema": {"type": "object", "x-toolfix": {"aliases": ["list_dir"]}}}),
        ])
        .unwrap();
        for n in ["read_file", "readFile", "ReadFile", "read-file"] {
            assert_eq!(set.tool(n).unwrap().name(), "read_file");
        }
        assert_eq!(set.tool("listDir").unwrap().name(), "ls");
        assert!(matches!(set.tool("write"), Err(NameError::Unknown { .. })));
    }

    #[test]
    fn unknown_names_suggest_the_closest() {
        let set = ToolSet::new(&[
            bare("get_weather"),
            bare("read_file"),
            json!({"name": "ls", "inputSchema": {"type": "object", "x-toolfix": {"aliases": ["list_directory"]}}}),
        ])
        .unwrap();
        let Err(NameError::Unknown { suggestions, known, .. }) = set.tool("get_wether") else { panic!() };
        assert_eq!(suggestions, ["get_weather"]);
        assert_eq!(known.len(), 3);
        let err = set.tool("weather").unwrap_err();
        assert_eq!(err.to_string(), "no tool is named `weather`; did you mean `get_weather`?");
        let Err(NameError::Unknown { suggestions, .. }) = set.tool("list_directorie") else { panic!() };
        assert_eq!(suggestions, ["ls"]);
        let Err(NameError::Unknown { suggestions, .. }) = set.tool("launch_rocket") else { panic!() };
        assert!(suggestions.is_empty());
        assert_eq!(set.tool("launch_rocket").unwrap_err().to_string(), "no tool is named `launch_rocket`");
    }

    #[test]
    fn ambiguous_names_refused() {
        let set = ToolSet::new(&[bare("read_file"), bare("readFile")]).unwrap();
        assert_eq!(set.tool("readFile").unwrap().name(), "readFile");
        assert!(matches!(set.tool("ReadFile"), Err(NameError::Ambiguous { .. })));
    }

    #[test]
    fn one_bad_schema_leaves_the_others_working() {
        let (set, errors) = ToolSet::new_partial(&[
            bare("read_file"),
            json!({"name": "write_file", "parameters": {"type": "float"}}),
            json!({"parameters": {"type": "object"}}),
            bare("read_file"),
        ]);
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors.iter().all(|e| e.kind() == ErrorKind::ToolDefinition));
        assert_eq!(set.tool("readFile").unwrap().name(), "read_file");
        assert!(matches!(set.tool("WriteFile"), Err(NameError::Broken { ref name, .. }) if name == "write_file"));
        assert_eq!(set.broken_names(), ["write_file"]);
    }

    #[test]
    fn read_only_from_annotations_and_overrides() {
        let set = ToolSet::new(&[
            json!({"name": "a", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}),
            json!({"name": "b", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true},
                   "x-toolfix": {"read_only": false}}),
            json!({"name": "c", "inputSchema": {"type": "object"}, "annotations": {"destructiveHint": false}}),
        ])
        .unwrap();
        let ro = |n: &str| set.tool(n).unwrap().is_read_only();
        assert!(ro("a"));
        assert!(!ro("b"));
        assert!(!ro("c"));
        let set = set.with_effect("c", Effect::ReadOnly).unwrap();
        assert!(set.tool("c").unwrap().is_read_only());
        assert!(set.with_effect("zzz", Effect::ReadOnly).is_err());
    }

    #[test]
    fn bad_schema_is_an_error() {
        let err = ToolSet::new(&[json!({"name": "x", "parameters": {"type": 5}})]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ToolDefinition);
    }
}
