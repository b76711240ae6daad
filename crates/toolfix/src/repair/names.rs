//! Object repairs: dot keys re-nested, property names matched (alias, then case and
//! separators, then a unique prefix or suffix), nulls for optional properties dropped,
//! unknown properties dropped under the lenient policy; then the properties themselves.

use super::{Ctx, ProblemKind, repair_value};
use crate::pointer;
use crate::report::{CallNote, RepairKind};
use crate::schema::view::{self, ObjectView, Types};
use crate::schema::{Policy, PropertyNames};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// Shortest normalised key that may match by prefix or suffix.
const MIN_DERIVED: usize = 3;

/// Longest key normalised on the stack when matched to a property name.
const KEY_ON_STACK: usize = 64;

pub(super) fn repair_object<'a>(
    cx: &mut Ctx<'a>,
    node: &'a Value,
    map: &mut Map<String, Value>,
    path: &mut String,
    depth: usize,
    force: bool,
) {
    let root = cx.root;
    let ov = view::object_view(root, node);
    if !ov.has_properties() && ov.additional_allowed {
        return;
    }
    // The members repair moved here: renamed to a property (borrowed from the schema), or
    // made by nesting dotted keys.
    let mut renamed: Few<&'a str> = Few::new("");
    let mut moved: Vec<Cow<'a, str>> = Vec::new();
    let mut ambiguous: Vec<String> = Vec::new();
    if !cx.strict() {
        // Most objects name only declared properties: no dotted key to nest, nothing to
        // rename (the keys are looked up once for both; dotted keys are looked for only
        // when one of them holds a dot).
        let (mut unknown, dotted) = unknown_keys(&ov, map);
        if unknown != 0 {
            if dotted && nest_dot_keys(cx, &ov, map, path, &mut moved, Some(unknown)) {
                (unknown, _) = unknown_keys(&ov, map);
            }
            rename(cx, &ov, map, path, &mut renamed, &mut ambiguous, unknown);
        }
    }
    drop_nulls(cx, &ov, map, path);
    if cx.policy == Policy::Lenient && !ov.additional_allowed {
        let unknown: Vec<String> =
            map.keys().filter(|k| ov.property(k).is_none() && !ambiguous.contains(k)).cloned().collect();
        for k in unknown {
            let before = map.shift_remove(&k);
            let at = pointer::join(path, &k);
            cx.record(RepairKind::UnknownFieldDropped, &at, before, None);
            cx.notes.push(CallNote::Dropped { path: at });
        }
    }
    let len = path.len();
    for (k, v) in map.iter_mut() {
        let Some(schema) = ov.property(k) else {
            continue;
        };
        let forced = force || renamed.iter().any(|m| m == k) || moved.iter().any(|m| m == k);
        // Most members hold no failure: passed without building their path.
        if !forced && !cx.relevant_member(path, k) {
            continue;
        }
        pointer::push(path, k);
        repair_value(cx, schema, v, path, depth + 1, forced);
        path.truncate(len);
    }
}

/// The keys of `map` that are not properties, by position: a bit each; past 64 members,
/// bit 63 says some key there may be one (each is asked again). And whether one of them
/// holds a dot (a dotted key [`nest_dot_keys`] may nest).
fn unknown_keys(ov: &ObjectView<'_>, map: &Map<String, Value>) -> (u64, bool) {
    // Members mostly come in the order the properties are declared: the property at the
    // same position is tried first (a key equal to it is one), then the lookup.
    let mut in_order = ov.own_properties().map(|m| m.keys());
    let mut unknown: u64 = 0;
    let mut dotted = false;
    for (i, k) in map.keys().enumerate() {
        let same = in_order.as_mut().and_then(Iterator::next).is_some_and(|p| p == k);
        if !same && ov.property(k).is_none() {
            unknown |= 1u64.checked_shl(u32::try_from(i).unwrap_or(u32::MAX)).unwrap_or(0);
            if i >= 64 {
                unknown |= 1 << 63;
            }
            dotted |= k.bytes().any(|b| b == b'.');
        }
    }
    (unknown, dotted)
}

/// True when the key at position `i` is no property, by [`unknown_keys`] (past 64 members,
/// asked again).
fn is_unknown(ov: &ObjectView<'_>, map: &Map<String, Value>, unknown: u64, i: usize, key: &str) -> bool {
    if map.len() <= 64 { i < 64 && unknown & (1 << i) != 0 } else { ov.property(key).is_none() }
}

/// `"config.retry.max": 3` into `{"config": {"retry": {"max": 3}}}` when each segment is a
/// property of the schema's nesting. `unknown`: the keys that are no property, when known
/// ([`unknown_keys`]). True when a key was nested.
pub(super) fn nest_dot_keys<'a>(
    cx: &mut Ctx<'a>,
    ov: &ObjectView<'a>,
    map: &mut Map<String, Value>,
    path: &str,
    moved: &mut Vec<Cow<'a, str>>,
    unknown: Option<u64>,
) -> bool {
    let root = cx.root;
    let dotted: Vec<String> = map
        .keys()
        .enumerate()
        .filter(|(i, k)| unknown.is_none_or(|u| is_unknown(ov, map, u, *i, k)))
        .filter(|(_, k)| k.bytes().any(|b| b == b'.') && ov.property(k).is_none())
        .map(|(_, k)| k.clone())
        .collect();
    let mut nested = false;
    for key in dotted {
        let segments: Vec<&str> = key.split('.').collect();
        let Some((last, parents)) = segments.split_last() else {
            continue;
        };
        if segments.iter().any(|s| s.is_empty()) {
            continue;
        }
        let mut here = view::object_view(root, root);
        let mut follows = true;
        for (i, seg) in parents.iter().enumerate() {
            let prop = if i == 0 { ov.property(seg) } else { here.property(seg) };
            match prop {
                Some(p) if view::types(root, p).has(Types::OBJECT) => {
                    here = view::object_view(root, p);
                }
                _ => {
                    follows = false;
                    break;
                }
            }
        }
        if !follows || here.property(last).is_none() {
            continue;
        }
        // Check for a collision before changing anything.
        let mut new_path = path.to_owned();
        let mut rel = String::new();
        let mut conflict = None;
        let whole = Value::Object(std::mem::take(map));
        for seg in parents {
            pointer::push(&mut new_path, seg);
            pointer::push(&mut rel, seg);
            if whole.pointer(&rel).is_some_and(|v| !v.is_object()) {
                conflict = Some(new_path.clone());
                break;
            }
        }
        pointer::push(&mut new_path, last);
        pointer::push(&mut rel, last);
        if conflict.is_none() && whole.pointer(&rel).is_some() {
            conflict = Some(new_path.clone());
        }
        let Value::Object(restored) = whole else {
            continue;
        };
        *map = restored;
        if let Some(at) = conflict {
            cx.problem(&pointer::join(path, &key), ProblemKind::DotConflict(at));
            continue;
        }
        let Some(leaf) = map.shift_remove(&key) else {
            continue;
        };
        nested = true;
        let mut cur: &mut Map<String, Value> = map;
        for seg in parents {
            let entry = cur.entry((*seg).to_owned()).or_insert_with(|| Value::Object(Map::new()));
            if !entry.is_object() {
                *entry = Value::Object(Map::new());
            }
            let Value::Object(m) = entry else { return nested };
            cur = m;
        }
        cur.insert((*last).to_owned(), leaf.clone());
        cx.moves.record(new_path.clone(), pointer::join(path, &key));
        cx.record(RepairKind::DotKeysNested, &new_path, Some(Value::String(key.clone())), Some(leaf));
        if let Some(first) = parents.first() {
            moved.push(Cow::Owned((*first).to_owned()));
        }
    }
    nested
}

enum NameMatch<'a> {
    One(&'a str),
    Many(Vec<&'a str>),
    None,
}

/// The properties of one object, with their normalised names (from the tool's cache:
/// for a plain node, the list made when the tool was compiled, borrowed).
struct Names<'a> {
    /// A plain node's properties and their normalised names, in order.
    cached: Option<(&'a Map<String, Value>, &'a [String])>,
    /// Otherwise each property, gathered.
    built: Vec<(&'a str, &'a Value, Cow<'a, str>)>,
}

impl<'a> Names<'a> {
    fn new(names: &'a PropertyNames, ov: &ObjectView<'a>) -> Names<'a> {
        if let Some(map) = ov.own_properties()
            && let Some(normalised) = names.of_object(map)
        {
            return Names { cached: Some((map, normalised)), built: Vec::new() };
        }
        let built = ov.properties().map(|(name, schema)| (name, schema, names.normalised(name))).collect();
        Names { cached: None, built }
    }

    /// Each property: name, schema and normalised name.
    fn iter(&self) -> impl Iterator<Item = (&'a str, &'a Value, &str)> + '_ {
        let cached = self
            .cached
            .into_iter()
            .flat_map(|(map, normalised)| map.iter().zip(normalised).map(|((k, v), n)| (k.as_str(), v, n.as_str())));
        cached.chain(self.built.iter().map(|(k, v, n)| (*k, *v, n.as_ref())))
    }
}

/// The property `key` means: a declared alias (when the schema declares any), then the same
/// name up to case and separators, then a unique prefix or suffix.
fn match_name<'a>(root: &'a Value, names: &Names<'a>, key: &str, aliases: bool) -> NameMatch<'a> {
    // The key normalised: written on the stack when it is short ASCII (most keys), made
    // otherwise.
    let mut buf = [0u8; KEY_ON_STACK];
    let made: String;
    // Its length in characters: its bytes, when written on the stack (ASCII).
    let (nk, chars): (&[u8], usize) = if let Some(nk) = view::normalise_into(key, &mut buf) {
        (nk, nk.len())
    } else {
        made = view::normalise(key);
        (made.as_bytes(), made.chars().count())
    };
    let derived = chars >= MIN_DERIVED;
    let hit = |level: usize, schema: &Value, np: &str| {
        let np = np.as_bytes();
        match level {
            0 => view::aliases(root, schema).iter().any(|a| *a == key || view::normalise(a).as_bytes() == nk),
            1 => np == nk,
            _ => derived && np != nk && (np.starts_with(nk) || np.ends_with(nk)),
        }
    };
    // Level 0 (aliases) only when the schema declares some.
    for level in usize::from(!aliases)..3 {
        let mut hits = names.iter().filter(|(_, schema, np)| hit(level, schema, np));
        let Some((first, ..)) = hits.next() else { continue };
        if hits.next().is_none() {
            return NameMatch::One(first);
        }
        // Several: listed (rare).
        let found = names.iter().filter(|(_, schema, np)| hit(level, schema, np)).map(|(n, ..)| n);
        return NameMatch::Many(found.collect());
    }
    NameMatch::None
}

fn rename<'a>(
    cx: &mut Ctx<'a>,
    ov: &ObjectView<'a>,
    map: &mut Map<String, Value>,
    path: &str,
    renamed: &mut Few<&'a str>,
    ambiguous: &mut Vec<String>,
    unknown: u64,
) {
    // The keys that are not properties: [`unknown_keys`].
    if unknown == 0 {
        return;
    }
    // Where other properties are allowed, a key is renamed only to give a required one.
    if ov.additional_allowed && !ov.required().any(|r| !has_key(map, r)) {
        return;
    }
    let unknown_at = |i: usize, k: &str| is_unknown(ov, map, unknown, i, k);
    // The keys to rename, by position, and the property each becomes.
    let mut plan: Few<(usize, &str)> = Few::new((0, ""));
    let mut names: Option<Names<'_>> = None;
    let aliases = cx.names.has_aliases();
    for (i, key) in map.keys().enumerate().filter(|(i, k)| unknown_at(*i, k)) {
        let names = names.get_or_insert_with(|| Names::new(cx.names, ov));
        match match_name(cx.root, names, key, aliases) {
            NameMatch::One(target) => {
                if has_key(map, target) || (ov.additional_allowed && !ov.is_required(target)) {
                    continue;
                }
                plan.push((i, target));
            }
            NameMatch::Many(names) => {
                ambiguous.push(key.clone());
                cx.problem(
                    &pointer::join(path, key),
                    ProblemKind::AmbiguousName(names.iter().map(|n| (*n).to_owned()).collect()),
                );
            }
            NameMatch::None => {}
        }
    }
    if plan.is_empty() {
        return;
    }
    // Two keys for one property: neither is moved.
    let mut clashes: Vec<&str> = Vec::new();
    for (i, (_, target)) in plan.iter().enumerate() {
        if plan.iter().skip(i + 1).any(|(_, t)| t == target) && !clashes.contains(target) {
            clashes.push(target);
        }
    }
    for target in &clashes {
        let keys: Vec<String> = plan.iter().filter(|(_, t)| t == target).map(|(at, _)| key_at(map, *at)).collect();
        ambiguous.extend(keys.iter().cloned());
        cx.problem(&pointer::join(path, target), ProblemKind::AmbiguousName(keys));
    }
    // Each key renamed in its place (the plan is in the map's order; no target is given, so
    // every key keeps its position).
    for &(at, to) in plan.iter().filter(|(_, t)| !clashes.contains(t)) {
        // The old path is written from the key in place; the key is then read from it (no
        // copy of its own) when the path holds it as written.
        let Some(key) = map.keys().nth(at) else { continue };
        let escaped = pointer::needs_escape(key);
        let old_path = pointer::join(path, key);
        let key: Cow<'_, str> = match old_path.get(path.len() + 1..) {
            Some(key) if !escaped => Cow::Borrowed(key),
            _ => Cow::Owned(key_at(map, at)),
        };
        let Some((from, v)) = map.shift_remove_entry(key.as_ref()) else { continue };
        let new_path = pointer::join(path, to);
        cx.moves.record(new_path.clone(), old_path);
        map.shift_insert(at, to.to_owned(), v);
        cx.record(RepairKind::FieldRenamed, new_path, Some(Value::String(from)), Some(Value::String(to.to_owned())));
        renamed.push(to);
    }
}

/// Up to [`FEW`] items held inline (no allocation), any more in a vector: an object's
/// renames are few.
struct Few<T> {
    inline: [T; FEW],
    len: usize,
    more: Vec<T>,
}

/// Items a [`Few`] holds inline.
const FEW: usize = 4;

impl<T: Copy> Few<T> {
    /// Empty (`fill` stands in the unused slots).
    fn new(fill: T) -> Self {
        Few { inline: [fill; FEW], len: 0, more: Vec::new() }
    }

    fn push(&mut self, item: T) {
        if let Some(slot) = self.inline.get_mut(self.len) {
            *slot = item;
            self.len += 1;
        } else {
            self.more.push(item);
        }
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn iter(&self) -> impl Iterator<Item = &T> {
        self.inline.iter().take(self.len).chain(&self.more)
    }
}

/// The key at position `i`.
fn key_at(map: &Map<String, Value>, i: usize) -> String {
    map.keys().nth(i).cloned().unwrap_or_default()
}

/// Up to this many members, a key is found by comparing keys in turn, cheaper than hashing.
const SCAN_MEMBERS: usize = 12;

/// `map.contains_key(key)`.
fn has_key(map: &Map<String, Value>, key: &str) -> bool {
    if map.len() <= SCAN_MEMBERS { map.keys().any(|k| k == key) } else { map.contains_key(key) }
}

fn drop_nulls(cx: &mut Ctx<'_>, ov: &ObjectView<'_>, map: &mut Map<String, Value>, path: &str) {
    let root = cx.root;
    let drop: Vec<String> = map
        .iter()
        .filter(|(k, v)| {
            v.is_null() && !ov.is_required(k) && ov.property(k).is_some_and(|s| !view::allows_null(root, s))
        })
        .map(|(k, _)| k.clone())
        .collect();
    for k in drop {
        map.shift_remove(&k);
        cx.record(RepairKind::NullOptionalDropped, pointer::join(path, &k), Some(Value::Null), None);
    }
}
