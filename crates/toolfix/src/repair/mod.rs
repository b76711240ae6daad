//! Schema-driven repair: acts only at the paths validation flagged, with repairs whose
//! result is certain. One file per family: `shape` (arrays, JSON strings, wrappers),
//! `coerce` (scalars), `enums`, `names` (renames, unknown fields, dot keys, nulls),
//! `hints` (links, relational defaults, required-any), and `extension` (the extensions
//! registered on the tool set).

mod coerce;
mod enums;
pub(crate) mod extension;
mod hints;
mod names;
mod shape;

pub(crate) use hints::apply_hints;

use crate::pointer::{self, Moves, TextIndex};
use crate::report::{CallNote, Repair, RepairKind};
use crate::schema::{Policy, PropertyNames, Tool, view};
use crate::validate::{self, Detail, Violation};
pub(crate) use crate::validate::{Problem, ProblemKind};
use serde_json::Value;

/// State of one repair run.
pub(crate) struct Ctx<'a> {
    pub(crate) root: &'a Value,
    pub(crate) policy: Policy,
    /// The property names of the schema, normalised once.
    pub(crate) names: &'a PropertyNames,
    /// Where validation failed.
    found: &'a [Violation<'a>],
    pub(crate) repairs: Vec<Repair>,
    pub(crate) problems: Vec<Problem>,
    pub(crate) moves: Moves,
    pub(crate) notes: Vec<CallNote>,
    /// The text the value was read from, to copy numbers as written.
    index: Option<&'a TextIndex<'a>>,
    max_depth: usize,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(tool: &'a Tool, found: &'a [Violation], max_depth: usize) -> Ctx<'a> {
        Ctx {
            root: tool.parameters(),
            policy: tool.policy(),
            names: tool.property_names(),
            found,
            repairs: Vec::new(),
            problems: Vec::new(),
            moves: Moves::default(),
            notes: Vec::new(),
            index: None,
            max_depth,
        }
    }

    pub(crate) fn with_text(mut self, index: Option<&'a TextIndex<'a>>) -> Self {
        self.index = index;
        self
    }

    /// True when a violation lies at or below `path`, or `path` lies inside a node whose
    /// alternatives all failed.
    fn relevant(&self, path: &str) -> bool {
        self.found
            .iter()
            .any(|v| pointer::is_within(&v.path, path) || (v.kind.is_coarse() && pointer::is_within(path, &v.path)))
    }

    /// [`Ctx::relevant`] for member `key` of the object at `path`, told without building
    /// its path (a key a pointer escapes is taken as relevant: its path decides).
    fn relevant_member(&self, path: &str, key: &str) -> bool {
        if pointer::needs_escape(key) {
            return true;
        }
        self.found.iter().any(|v| {
            pointer::member_contains(&v.path, path, key)
                || (v.kind.is_coarse() && pointer::member_within(path, key, &v.path))
        })
    }

    pub(crate) fn record(
        &mut self,
        kind: RepairKind,
        path: impl Into<String>,
        before: Option<Value>,
        after: Option<Value>,
    ) {
        self.repairs.push(Repair::new(kind, path, before, after));
    }

    pub(crate) fn problem(&mut self, path: &str, kind: ProblemKind) {
        self.problems.push(Problem { path: path.to_owned(), kind });
    }

    /// The number as written in the original text, when the value at `path` is unchanged.
    pub(crate) fn original_text(&self, path: &str, value: &Value) -> Option<&'a str> {
        let index = self.index?;
        let node = index.node_at(&self.moves.origin(path))?;
        if !index.same_as(value, node) {
            return None;
        }
        index.text_of(node)
    }

    pub(crate) fn strict(&self) -> bool {
        self.policy == Policy::Strict
    }
}

/// The result of a repair run.
#[derive(Debug)]
pub(crate) struct Repaired {
    pub(crate) value: Value,
    pub(crate) repairs: Vec<Repair>,
    pub(crate) problems: Vec<Problem>,
    pub(crate) moves: Moves,
    pub(crate) notes: Vec<CallNote>,
}

/// Room for the JSON pointers of most arguments, so the path repair extends does not grow.
const PATH_CAPACITY: usize = 64;

const WRAPPERS: [&str; 4] = ["arguments", "input", "parameters", "args"];

/// Repair `value` (invalid under `tool`, with `found` its violations).
pub(crate) fn repair(
    tool: &Tool,
    value: Value,
    found: &[Violation],
    index: Option<&TextIndex<'_>>,
    max_depth: usize,
) -> Repaired {
    if tool.policy() != Policy::Strict
        && let Some((key, inner)) = wrapper(tool, &value)
    {
        let inner_found = validate::violations_found(tool, inner, Detail::Paths);
        let mut cx = Ctx::new(tool, &inner_found, max_depth).with_text(index);
        cx.moves.record(String::new(), pointer::join("", key));
        let mut inner = inner.clone();
        if !inner_found.is_empty() {
            let root = cx.root;
            repair_value(&mut cx, root, &mut inner, &mut String::with_capacity(PATH_CAPACITY), 0, false);
        }
        apply_hints(&mut cx, tool, &mut inner);
        if tool.is_valid(&inner) && !cx.problems.iter().any(|p| p.kind.is_fatal()) {
            cx.repairs
                .insert(0, Repair::new(RepairKind::WrapperUnwrapped, "", Some(Value::String(key.to_owned())), None));
            return Repaired {
                value: inner,
                repairs: cx.repairs,
                problems: cx.problems,
                moves: cx.moves,
                notes: cx.notes,
            };
        }
    }
    let mut cx = Ctx::new(tool, found, max_depth).with_text(index);
    let mut value = value;
    let root = cx.root;
    repair_value(&mut cx, root, &mut value, &mut String::with_capacity(PATH_CAPACITY), 0, false);
    apply_hints(&mut cx, tool, &mut value);
    Repaired { value, repairs: cx.repairs, problems: cx.problems, moves: cx.moves, notes: cx.notes }
}

/// Re-nest the dotted keys at the root of `value` (for `flatten`).
pub(crate) fn nest_root_dot_keys(tool: &Tool, value: &mut Value) -> Vec<Repair> {
    let mut cx = Ctx::new(tool, &[], 0);
    let root = cx.root;
    if let Value::Object(map) = value {
        let ov = view::object_view(root, root);
        names::nest_dot_keys(&mut cx, &ov, map, "", &mut Vec::new(), None);
    }
    cx.repairs
}

/// A lone wrapper key that is not a declared property, holding an object.
pub(crate) fn wrapper<'v>(tool: &Tool, value: &'v Value) -> Option<(&'v str, &'v Value)> {
    let map = value.as_object()?;
    if map.len() != 1 {
        return None;
    }
    let (key, inner) = map.iter().next()?;
    if !WRAPPERS.contains(&key.as_str()) || !inner.is_object() {
        return None;
    }
    let root = tool.parameters();
    if view::object_view(root, root).property(key).is_some() {
        return None;
    }
    Some((key.as_str(), inner))
}

/// Repair one value against schema `node`. `force` marks values repair created or
/// moved, which validation never saw in place.
pub(crate) fn repair_value<'a>(
    cx: &mut Ctx<'a>,
    node: &'a Value,
    value: &mut Value,
    path: &mut String,
    depth: usize,
    force: bool,
) {
    if depth > cx.max_depth || !(force || cx.relevant(path)) {
        return;
    }
    let root = cx.root;
    let allowed = view::types(root, node);
    if allowed.accepts(value) {
        match value {
            Value::Object(map) => names::repair_object(cx, node, map, path, depth, force),
            Value::Array(list) => {
                let Some(items) = view::items(root, node) else {
                    return;
                };
                let len = path.len();
                for (i, item) in list.iter_mut().enumerate() {
                    pointer::push_index(path, i);
                    repair_value(cx, items, item, path, depth + 1, force);
                    path.truncate(len);
                }
            }
            Value::String(_) if !cx.strict() => enums::match_enum(cx, node, value, path),
            _ => {}
        }
        return;
    }
    if cx.strict() {
        return;
    }
    shape::convert(cx, node, allowed, value, path, depth);
}
