//! The extensions registered on a tool set ([`Extensions`]), as a repair family: at the
//! places validation flagged, a refused value is converted (format normalisers, then the
//! value coercer) and an undeclared key renamed (the field-name matcher; in the opt-in
//! uncertain mode, also a declared name a small edit away). The driver runs this family
//! only on a call the built-in repairs could not settle, on text that was neither cut nor
//! gave a key twice, and the result must validate.

use crate::pointer;
use crate::report::{Repair, RepairKind};
use crate::schema::suggest::distance;
use crate::schema::{Extensions, Tool, view};
use crate::validate::{Violation, ViolationKind};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// Undeclared keys per object offered to the matchers (bounds the work on hostile input).
const MAX_KEYS: usize = 64;
/// The longest name compared by edit distance, in characters.
const MAX_NAME: usize = 64;

/// Apply `ext` to `value` at the places of `found`; `fuzzy` adds uncertain name matches.
/// Returns what was done (empty: nothing).
pub(crate) fn apply(tool: &Tool, ext: &Extensions, value: &mut Value, found: &[Violation], fuzzy: bool) -> Vec<Repair> {
    let root = tool.parameters();
    let mut repairs = Vec::new();
    let mut objects: BTreeSet<String> = BTreeSet::new();
    for v in found {
        match v.kind {
            ViolationKind::Missing | ViolationKind::Unexpected => {
                objects.insert(v.path.rsplit_once('/').map_or("", |(p, _)| p).to_owned());
            }
            ViolationKind::Keyword(_) => {
                let node =
                    v.schema_path.as_deref().and_then(|p| root.pointer(p)).or_else(|| view::node_at(root, &v.path));
                if let (Some(node), Some(slot)) = (node, value.pointer_mut(&v.path))
                    && let Some((kind, new)) = convert(ext, root, node, slot)
                {
                    let before = std::mem::replace(slot, new.clone());
                    repairs.push(Repair::new(kind, v.path.as_ref(), Some(before), Some(new)));
                }
            }
            ViolationKind::Alternatives => {}
        }
    }
    for parent in objects {
        let Some(node) = view::node_at(root, &parent) else { continue };
        if let Some(Value::Object(map)) = value.pointer_mut(&parent) {
            rename(ext, root, node, map, &parent, fuzzy, &mut repairs);
        }
    }
    repairs
}

/// A normalised or coerced replacement for `value` under `node`.
fn convert(ext: &Extensions, root: &Value, node: &Value, value: &Value) -> Option<(RepairKind, Value)> {
    if let Value::String(s) = value {
        let node = view::resolve(root, node);
        let semantic = |ns: &str| node.get(ns)?.get("semantic")?.as_str();
        let tags = [node.get("format").and_then(Value::as_str), semantic("x-toolfix"), semantic("dirge-hints")];
        for tag in tags.into_iter().flatten() {
            if let Some(normalise) = ext.normaliser(tag)
                && let Some(new) = normalise(s).filter(|n| n != s)
            {
                return Some((RepairKind::FormatNormalised, Value::String(new)));
            }
        }
    }
    let coerce = ext.coercer()?;
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
    let declared: Vec<&str> = ov.properties().map(|(k, _)| k).collect();
    let free: Vec<&str> = declared.iter().copied().filter(|d| !map.contains_key(*d)).collect();
    let mut plan: Vec<(String, String, RepairKind)> = Vec::new();
    for key in map.keys().filter(|k| ov.property(k).is_none()).take(MAX_KEYS) {
        let certain = ext.matcher().and_then(|m| m(key, &declared)).filter(|t| free.contains(&t.as_str()));
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
    let k: Vec<char> = view::normalise(key).chars().collect();
    if k.len() > MAX_NAME {
        return None;
    }
    let mut best: Option<(&str, usize)> = None;
    let mut tie = false;
    for name in names {
        let n: Vec<char> = view::normalise(name).chars().collect();
        if n.len() > MAX_NAME {
            continue;
        }
        let budget = if n.len() <= 5 { 1 } else { 2 };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_close_name_or_none() {
        assert_eq!(closest("qeury", &["query", "limit"]), Some("query"));
        assert_eq!(closest("nam", &["name", "nap"]), None, "two at distance 1");
        assert_eq!(closest("file", &["path"]), None);
        assert_eq!(closest("abc", &["abc"]), Some("abc"));
    }
}
