//! Render: a repaired value written back as text, copying the model's own text for every
//! part no repair touched (so a valid or barely repaired call keeps its bytes), and the
//! moves (renames, unwrapping, re-nesting) that map a repaired value's paths back to the
//! text's.

use super::{
    Node, NodeId, TextIndex, index_segment, is_within, lookup, needs_escape, push, push_index, push_plain, scan,
};
use serde_json::Value;

/// Moves made by repairs (renames, unwrapping, re-nesting): new prefix to old prefix.
#[derive(Debug, Default, Clone)]
pub(crate) struct Moves(Vec<(String, String, Option<usize>)>);

impl Moves {
    pub(crate) fn record(&mut self, new: String, old: String) {
        // Where the new path's last segment starts (`None` for the root), read once here
        // rather than by every member render asks about.
        // A byte loop from the end: paths are short (no `memrchr` set-up).
        let last = new.bytes().rposition(|c| c == b'/').map(|i| i + 1);
        self.0.push((new, old, last));
    }

    /// Where the value now at `path` was in the original.
    pub(crate) fn origin(&self, path: &str) -> String {
        let mut p = String::new();
        self.origin_into(path, &mut p);
        p
    }

    /// The origin of `path` when it is where a move ends (the latest move it lies in ends
    /// exactly there) and no earlier move applies to that move's old path: the old path,
    /// borrowed. `None` otherwise ([`Moves::origin`] then writes the origin).
    pub(super) fn moved_from(&self, path: &str) -> Option<&str> {
        let mut earlier = self.0.iter().rev();
        let (new, old, _) = earlier.by_ref().find(|(new, ..)| is_within(path, new))?;
        (new == path && earlier.all(|(new, ..)| !is_within(old, new))).then_some(old.as_str())
    }

    /// The last segment of every move's new path: where a move may end.
    fn landings(&self) -> impl Iterator<Item = &str> + '_ {
        self.0.iter().filter_map(|(new, _, last)| new.get((*last)?..))
    }

    /// [`Moves::origin`], written into `out`.
    fn origin_into(&self, path: &str, out: &mut String) {
        out.clear();
        // The latest move `path` lies in (a rename, mostly the only one) writes the origin
        // as its old prefix and the rest of `path`, not `path` then replaced in place; each
        // earlier move then applies to what is written.
        let mut earlier = self.0.iter().rev();
        let Some((new, old, _)) = earlier.by_ref().find(|(new, ..)| is_within(path, new)) else {
            out.push_str(path);
            return;
        };
        let rest = path.get(new.len()..).unwrap_or_default();
        out.reserve(old.len() + rest.len());
        out.push_str(old);
        out.push_str(rest);
        for (new, old, _) in earlier {
            if is_within(out, new) {
                out.replace_range(..new.len(), old);
            }
        }
    }
}

const MAX_RENDER_DEPTH: usize = 256;

/// Serialise `value`, copying the original text of every subtree that is unchanged
/// since `original` (so numbers and escapes stay as written).
pub(crate) fn render(value: &Value, original: Original<'_>, index: &TextIndex<'_>, moves: &Moves) -> String {
    render_changed::<&str>(value, original, index, moves, None)
}

/// [`render`], told where every change to the value was made (`changed`: the pointers of
/// the repairs, each at or below the value it replaced or the object it added a member to
/// or took one from; `None`: not known). A top-level member no change lies in or below,
/// read from the same key of the original, is the original's text: copied without
/// comparing it.
pub(crate) fn render_changed<C: ChangedAt>(
    value: &Value,
    original: Original<'_>,
    index: &TextIndex<'_>,
    moves: &Moves,
    changed: Option<&[C]>,
) -> String {
    let original = match original {
        Original::Value(v) => Some(v),
        Original::Text => None,
    };
    let mut out = String::with_capacity(index.text.len() + 16);
    // A change to the whole value leaves no member untouched.
    let changed = changed.filter(|c| !c.iter().any(|c| c.changed_at().is_empty()));
    let mut cx = Render { out: &mut out, original, index, moves, changed };
    // Paths are built only when something moved.
    let mut path = if moves.0.is_empty() { String::new() } else { String::with_capacity(64) };
    let mut origin = String::new();
    moves.origin_into("", &mut origin);
    let before = original.and_then(|o| lookup(o, &origin));
    let node = index.node_at(&origin);
    cx.value(value, &mut path, &origin, before, node, 0);
    out
}

/// A record of where a change was made, as [`render_changed`] is told it: a pointer, or
/// a repair (its path), read in place.
pub(crate) trait ChangedAt {
    fn changed_at(&self) -> &str;
}

impl ChangedAt for &str {
    fn changed_at(&self) -> &str {
        self
    }
}

impl ChangedAt for crate::report::Repair {
    fn changed_at(&self) -> &str {
        &self.path
    }
}

/// A few names, held inline ([`Render::touched_members`]).
struct Touched<'r> {
    names: [&'r str; Touched::MAX],
    len: usize,
}

impl<'r> Touched<'r> {
    /// Names held at most (more: not held, the members are asked one by one).
    const MAX: usize = 8;

    /// Add `name`; `None` when full.
    fn push(&mut self, name: &'r str) -> Option<()> {
        *self.names.get_mut(self.len)? = name;
        self.len += 1;
        Some(())
    }

    /// True when `key` is one of the names.
    fn names(&self, key: &str) -> bool {
        self.names.iter().take(self.len).any(|n| *n == key)
    }
}

/// What render compares a value with to tell whether it changed.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Original<'v> {
    /// This value (which may differ from the text's: markers force objects to be written
    /// member by member).
    Value(&'v Value),
    /// The value the indexed text holds, read from the text itself (no copy of the value
    /// needed).
    Text,
}

struct Render<'r, 't, C> {
    out: &'r mut String,
    /// `None`: compared with the text.
    original: Option<&'r Value>,
    index: &'r TextIndex<'t>,
    moves: &'r Moves,
    /// Where every change was made, when known (see [`render_changed`]).
    changed: Option<&'r [C]>,
}

impl<'r, C: ChangedAt> Render<'r, '_, C> {
    /// True when some move may end at a member named `key` (then its origin is not simply
    /// one step below its object's: see [`Moves::origin`]).
    fn may_land_on(&self, key: &str, plain: bool) -> bool {
        !plain || self.moves.landings().any(|last| last == key)
    }

    /// As [`Render::may_land_on`], for element `index` of an array.
    fn may_land_on_index(&self, index: usize) -> bool {
        self.moves.landings().any(|last| index_segment(last) == Some(index))
    }

    /// The top-level members a change lies in or a move may end at (the first segment of
    /// each change's pointer, the last of each move's new path), when the changes are
    /// known and few: a member with a key needing no escape that is none of them is
    /// untouched ([`Render::untouched_member`]) and no move ends at it
    /// ([`Render::may_land_on`]).
    fn touched_members(&self) -> Option<Touched<'r>> {
        let mut touched = Touched { names: [""; Touched::MAX], len: 0 };
        for c in self.changed? {
            if let Some(rest) = c.changed_at().strip_prefix('/') {
                // A byte loop: pointers are short (no `memchr` set-up).
                let end = rest.bytes().position(|b| b == b'/').unwrap_or(rest.len());
                touched.push(rest.get(..end).unwrap_or(rest))?;
            }
        }
        for landing in self.moves.landings() {
            touched.push(landing)?;
        }
        Some(touched)
    }

    /// True when top-level member `key` is known to be untouched: no change lies at or
    /// below it (a key that needs escaping in a pointer, not `plain`, is not looked up).
    fn untouched_member(&self, key: &str, plain: bool) -> bool {
        let Some(changed) = self.changed else { return false };
        if !plain {
            return false;
        }
        // The first segment of each change's pointer (`/key` or `/key/...`).
        !changed.iter().any(|c| {
            let c = c.changed_at().as_bytes();
            c.first() == Some(&b'/')
                && c.get(1..=key.len()) == Some(key.as_bytes())
                && matches!(c.get(key.len() + 1), None | Some(b'/'))
        })
    }

    /// Write `value`, now at `path`. It came from `origin` (where the moves say; `path`
    /// itself when nothing moved), where the original value is `before` and its text
    /// `node`. True when it is unchanged (equal to the original there).
    ///
    /// A container is written member by member, each member telling whether it changed;
    /// when none did and each came from the same key (or index) of the original, the
    /// container is unchanged and its text replaces what was written: every value is
    /// compared once.
    fn value(
        &mut self,
        value: &Value,
        path: &mut String,
        origin: &str,
        before: Option<&'r Value>,
        node: Option<NodeId>,
        depth: usize,
    ) -> bool {
        if depth > MAX_RENDER_DEPTH || !(value.is_object() || value.is_array()) {
            let unchanged = self.unchanged(value, before, node);
            match node.and_then(|n| self.index.text_of(n)) {
                Some(text) if unchanged => self.out.push_str(text),
                _ => self.scalar(value),
            }
            return unchanged;
        }
        let mark = self.out.len();
        // Without moves a value's origin is its path: its original and text are found
        // walking alongside, no path needed.
        let moved = !self.moves.0.is_empty();
        let len = path.len();
        let mut here = String::new();
        let mut children = Children::new(self.index, before, node, self.original.is_none());
        // A member read from the same key of the original changed: so did this value.
        let mut changed = false;
        // A member came from elsewhere (a move): only a comparison tells.
        let mut elsewhere = false;
        match value {
            Value::Object(map) => {
                self.out.push('{');
                // Where the original text that may lead to the next member's key starts:
                // just past the object's `{`, then the end of the last member's text.
                let mut lead_from = node.and_then(|id| self.index.nodes.get(id)).map(|n| n.start + 1);
                let mut run: Option<(usize, usize)> = None;
                // At the top, told every change and comparing with the text (of an object
                // that gives no key twice): the members no change or move names.
                let touched = node
                    .filter(|&id| depth == 0 && self.original.is_none() && self.index.is_unique(id))
                    .and_then(|_| self.touched_members());
                for (n, (k, v)) in map.iter().enumerate() {
                    // An untouched top-level member that is the text's next member: copied as
                    // written, as below (what `Children::member` finds at its guess, the lead
                    // and the span), without asking per member what below is asked.
                    if let Some(touched) = &touched
                        && let (Some(id), Some(next)) = (node, children.next)
                        && !touched.names(k)
                        && !needs_escape(k)
                        && self.index.key_is(next, k)
                        && let Some(&Node { start, end, .. }) = self.index.nodes.get(next)
                    {
                        debug_assert!(self.index.same_as(v, next), "member {k} changed without a record of the change");
                        children.next = self.index.next_sibling(id, next);
                        if let Some(lead) = lead_from.and_then(|from| self.index.member_lead(from, n == 0, next)) {
                            self.extend_run(&mut run, lead);
                        } else {
                            self.flush_run(&mut run);
                            push_lead(self.out, n, k);
                        }
                        self.extend_run(&mut run, (start, end));
                        lead_from = Some(end);
                        continue;
                    }
                    // The key holds no byte a pointer escapes (asked once per member, and
                    // only where it is read: with moves, or at the top level).
                    let plain = !(moved || depth == 0) || !needs_escape(k);
                    // Below a member whose origin is one step below this object's, the
                    // paths are written only when it is not copied as written.
                    let mut one_step = false;
                    let (child, text, same_key) = if !moved {
                        let (child, text) = children.member(self.index, k);
                        (child, text, true)
                    } else if !self.may_land_on(k, plain) {
                        // No move ends at a key `k`: the member's origin is one step below
                        // this object's (paths are needed only below it).
                        one_step = v.is_object() || v.is_array();
                        let (child, text) = children.member(self.index, k);
                        (child, text, true)
                    } else {
                        push(path, k);
                        // A scalar (which reads no origin below it) a move ends at: its old
                        // path, borrowed from the move, when that is its origin.
                        let scalar = !(v.is_object() || v.is_array());
                        let from = if let Some(from) = scalar.then(|| self.moves.moved_from(path)).flatten() {
                            from
                        } else {
                            self.moves.origin_into(path, &mut here);
                            here.as_str()
                        };
                        if let Some(seg) = step(origin, from) {
                            let (child, text) = children.member(self.index, seg);
                            (child, text, seg == k)
                        } else {
                            children.skip(self.index);
                            (self.original.and_then(|o| lookup(o, from)), self.index.node_at(from), false)
                        }
                    };
                    // The separator and key as written, when they are what is written here
                    // (`, "key": `, `"key": ` first); otherwise written out.
                    // Runs of the original text written here as they are (leads, untouched
                    // members) are gathered and copied in one piece.
                    let lead = match (lead_from, text) {
                        (Some(from), Some(t)) if same_key => self.index.member_lead(from, n == 0, t),
                        _ => None,
                    };
                    if let Some(span) = lead {
                        self.extend_run(&mut run, span);
                    } else {
                        self.flush_run(&mut run);
                        push_lead(self.out, n, k);
                    }
                    let span =
                        text.filter(|_| same_key).and_then(|t| self.index.nodes.get(t)).map(|n| (n.start, n.end));
                    lead_from = span.map(|(_, end)| end);
                    // An untouched top-level member is copied as written, not compared.
                    let copied = match (text, span) {
                        (Some(t), Some(span)) if depth == 0 && self.untouched_member(k, plain) => {
                            debug_assert!(
                                match self.original {
                                    None => self.index.same_as(v, t),
                                    Some(_) => child.is_some_and(|c| same(c, v)),
                                },
                                "member {k} changed without a record of the change"
                            );
                            self.extend_run(&mut run, span);
                            true
                        }
                        _ => false,
                    };
                    if !copied {
                        self.flush_run(&mut run);
                        if one_step {
                            push_plain(path, k);
                            here.clear();
                            here.push_str(origin);
                            push_plain(&mut here, k);
                        }
                    }
                    let unchanged = copied || self.value(v, path, &here, child, text, depth + 1);
                    changed |= same_key && !unchanged;
                    elsewhere |= !same_key;
                    path.truncate(len);
                }
                self.flush_run(&mut run);
                self.out.push('}');
            }
            Value::Array(list) => {
                self.out.push('[');
                for (n, v) in list.iter().enumerate() {
                    if n > 0 {
                        self.out.push_str(", ");
                    }
                    let (child, text, same_index) = if !moved {
                        let (child, text) = children.element(self.index);
                        (child, text, true)
                    } else if !self.may_land_on_index(n) {
                        if v.is_object() || v.is_array() {
                            push_index(path, n);
                            here.clear();
                            here.push_str(origin);
                            push_index(&mut here, n);
                        }
                        let (child, text) = children.element(self.index);
                        (child, text, true)
                    } else {
                        push_index(path, n);
                        self.moves.origin_into(path, &mut here);
                        match step(origin, &here).and_then(index_segment) {
                            Some(i) if i == n => {
                                let (child, text) = children.element(self.index);
                                (child, text, true)
                            }
                            _ => {
                                children.skip(self.index);
                                (self.original.and_then(|o| lookup(o, &here)), self.index.node_at(&here), false)
                            }
                        }
                    };
                    let unchanged = self.value(v, path, &here, child, text, depth + 1);
                    changed |= same_index && !unchanged;
                    elsewhere |= !same_index;
                    path.truncate(len);
                }
                self.out.push(']');
            }
            _ => {}
        }
        let unchanged = if changed {
            false
        } else if elsewhere {
            self.unchanged(value, before, node)
        } else {
            self.same_size(value, before, node)
        };
        if unchanged && let Some(text) = node.and_then(|n| self.index.text_of(n)) {
            self.out.truncate(mark);
            self.out.push_str(text);
        }
        unchanged
    }

    /// Add the original text's `span` to `run` (pending text to copy), which it follows
    /// or, when it does not, is written first.
    fn extend_run(&mut self, run: &mut Option<(usize, usize)>, span: (usize, usize)) {
        match run {
            Some((_, end)) if *end == span.0 => *end = span.1,
            _ => {
                self.flush_run(run);
                *run = Some(span);
            }
        }
    }

    /// Write the pending original text of `run`.
    fn flush_run(&mut self, run: &mut Option<(usize, usize)>) {
        if let Some((start, end)) = run.take()
            && let Some(text) = self.index.text.get(start..end)
        {
            self.out.push_str(text);
        }
    }

    /// True when `value` equals the original (`before`, or the text at `node`).
    fn unchanged(&self, value: &Value, before: Option<&Value>, node: Option<NodeId>) -> bool {
        match self.original {
            Some(_) => before.is_some_and(|b| same(b, value)),
            None => node.is_some_and(|n| self.index.same_as(value, n)),
        }
    }

    /// For a container whose every member is unchanged and came from the same key (or
    /// index) of the original: true when the original has no other member.
    fn same_size(&self, value: &Value, before: Option<&Value>, node: Option<NodeId>) -> bool {
        let len = match value {
            Value::Object(map) => map.len(),
            Value::Array(list) => list.len(),
            _ => return false,
        };
        match (self.original, before, node) {
            (Some(_), Some(Value::Object(m)), _) => value.is_object() && m.len() == len,
            (Some(_), Some(Value::Array(l)), _) => value.is_array() && l.len() == len,
            (None, _, Some(id)) if value.is_object() => {
                if !self.index.opens_with(id, b'{') {
                    false
                } else if self.index.nodes.get(id).is_some_and(|n| n.unique) {
                    self.index.children(id).count() == len
                } else {
                    // A key given twice: as a parse reads it.
                    self.index.same_as(value, id)
                }
            }
            (None, _, Some(id)) => self.index.opens_with(id, b'[') && self.index.children(id).count() == len,
            _ => false,
        }
    }

    fn scalar(&mut self, value: &Value) {
        use std::fmt::Write as _;
        match value {
            Value::Null => self.out.push_str("null"),
            Value::Bool(true) => self.out.push_str("true"),
            Value::Bool(false) => self.out.push_str("false"),
            Value::String(s) => push_quoted(self.out, s),
            other => {
                let _ = write!(self.out, "{other}");
            }
        }
    }
}

/// The last segment of `origin` when it is one step below `parent` and needs no
/// unescaping.
fn step<'o>(parent: &str, origin: &'o str) -> Option<&'o str> {
    let seg = origin.strip_prefix(parent)?.strip_prefix('/')?;
    (!needs_escape(seg)).then_some(seg)
}

/// The members of one original container and their text, visited mostly in order: each
/// lookup tries the next member first.
struct Children<'r> {
    object: Option<&'r serde_json::Map<String, Value>>,
    members: Option<serde_json::map::Iter<'r>>,
    elements: Option<std::slice::Iter<'r, Value>>,
    node: Option<NodeId>,
    /// The text of the next member, when known.
    next: Option<NodeId>,
    /// Render compares with the text: a member's text is wanted even with no value.
    by_text: bool,
}

impl<'r> Children<'r> {
    fn new(index: &TextIndex<'_>, before: Option<&'r Value>, node: Option<NodeId>, by_text: bool) -> Self {
        let object = before.and_then(Value::as_object);
        let elements = before.and_then(Value::as_array).map(|l| l.iter());
        let next = node.and_then(|id| index.children(id).next());
        Children { object, members: object.map(|m| m.iter()), elements, node, next, by_text }
    }

    /// Member `key` (the original value and its text).
    fn member(&mut self, index: &TextIndex<'_>, key: &str) -> (Option<&'r Value>, Option<NodeId>) {
        let child = match self.members.as_mut().and_then(Iterator::next) {
            Some((k, v)) if k == key => Some(v),
            _ => self.object.and_then(|m| m.get(key)),
        };
        let wanted = self.by_text || child.is_some();
        let text = self.node.filter(|_| wanted).and_then(|id| index.member_near(id, key, self.next));
        self.next = match (self.node, text) {
            (Some(id), Some(t)) => index.next_sibling(id, t),
            (Some(id), None) => self.next.and_then(|n| index.next_sibling(id, n)),
            _ => None,
        };
        (child, text)
    }

    /// The next element (the original value and its text).
    fn element(&mut self, index: &TextIndex<'_>) -> (Option<&'r Value>, Option<NodeId>) {
        let child = self.elements.as_mut().and_then(Iterator::next);
        let text = self.next.filter(|_| self.node.is_some_and(|id| index.opens_with(id, b'[')));
        self.skip_text(index);
        (child, text)
    }

    /// Pass a member or element found another way.
    fn skip(&mut self, index: &TextIndex<'_>) {
        if let Some(m) = self.members.as_mut() {
            m.next();
        }
        if let Some(e) = self.elements.as_mut() {
            e.next();
        }
        self.skip_text(index);
    }

    fn skip_text(&mut self, index: &TextIndex<'_>) {
        self.next = match (self.node, self.next) {
            (Some(id), Some(n)) => index.next_sibling(id, n),
            _ => None,
        };
    }
}

/// `a == b`, comparing object members in order first (both sides mostly keep the order
/// of the text), so equal objects cost no hashing.
pub(crate) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            if x.len() != y.len() {
                return false;
            }
            let mut ys = y.iter();
            x.iter().all(|(k, v)| match ys.next() {
                Some((yk, yv)) if yk == k => same(v, yv),
                _ => y.get(k).is_some_and(|yv| same(v, yv)),
            })
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w)),
        _ => a == b,
    }
}

/// What render writes before member `n`'s value: `, ` (past the first), the key as a
/// JSON string, `: `.
fn push_lead(out: &mut String, n: usize, key: &str) {
    if n > 0 {
        out.push_str(", ");
    }
    push_quoted(out, key);
    out.push_str(": ");
}

/// `key` as a JSON string.
fn push_quoted(out: &mut String, key: &str) {
    if key.bytes().any(|b| scan::STRING_STOP[usize::from(b)]) {
        out.push_str(&Value::String(key.to_owned()).to_string());
    } else {
        out.reserve(key.len() + 2);
        out.push('"');
        out.push_str(key);
        out.push('"');
    }
}
