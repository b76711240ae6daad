//! The output of the lenient parser: edits to the original text, each tied to a fix.
//!
//! The parser never copies text: it records replacements, and the repaired text is the
//! input with those applied. Valid input records none, so it comes back borrowed.

use crate::report::{FixKind, TextFix, Truncation};
use crate::span::Span;
use std::borrow::Cow;

/// One change to the original text.
#[derive(Clone, Debug)]
pub(super) struct Edit {
    /// Replaced bytes (empty for an insertion).
    pub(super) span: Span,
    /// Text written in their place.
    pub(super) text: Cow<'static, str>,
    /// The fix this edit reports, if it is the first edit of one.
    pub(super) fix: Option<TextFix>,
}

/// The edits recorded so far, in the order they were made.
#[derive(Clone, Debug, Default)]
pub(super) struct Edits {
    list: Vec<Edit>,
    /// How the text ended, when it ended with something open.
    pub(super) cut: Option<Truncation>,
    /// The parser compared every key of the repaired text and none repeats.
    pub(super) keys_unique: bool,
    /// How deep the repaired value nests.
    pub(super) deepest: usize,
}

impl Edits {
    /// Room for the edits of a text of `len` bytes: growing a vector of edits one
    /// reallocation at a time costs more than the parse of a small call. (Small inputs
    /// stay under 1 KiB, the size at which glibc's malloc consolidates its free lists.)
    pub(super) fn for_text(len: usize, mut list: Vec<Edit>) -> Self {
        list.clear();
        list.reserve((len / 16).clamp(12, 4096));
        Edits { list, cut: None, keys_unique: false, deepest: 0 }
    }

    /// The vector of edits, emptied, for the next parse.
    pub(super) fn into_buffer(mut self) -> Vec<Edit> {
        self.list.clear();
        self.list
    }

    pub(super) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// A marker for [`Edits::rollback`].
    pub(super) fn checkpoint(&self) -> usize {
        self.list.len()
    }

    /// Replace `start..end` with `text`, reporting `kind` (when given) over the same span.
    pub(super) fn replace(
        &mut self,
        start: usize,
        end: usize,
        text: impl Into<Cow<'static, str>>,
        kind: Option<FixKind>,
    ) -> usize {
        let span = Span::new(start, end);
        self.list.push(Edit { span, text: text.into(), fix: kind.map(|kind| TextFix { kind, span }) });
        self.list.len() - 1
    }

    pub(super) fn insert(&mut self, at: usize, text: &'static str, kind: Option<FixKind>) -> usize {
        self.replace(at, at, text, kind)
    }

    pub(super) fn delete(&mut self, start: usize, end: usize, kind: Option<FixKind>) -> usize {
        self.replace(start, end, "", kind)
    }

    /// Report a fix with no text change of its own (its edits are recorded separately).
    pub(super) fn note(&mut self, start: usize, end: usize, kind: FixKind) -> usize {
        let span = Span::new(start, end);
        self.list.push(Edit { span: Span::at(start), text: Cow::Borrowed(""), fix: Some(TextFix { kind, span }) });
        self.list.len() - 1
    }

    /// Widen the fix of edit `index` to end at `end`.
    pub(super) fn extend_fix(&mut self, index: usize, end: usize) {
        if let Some(fix) = self.list.get_mut(index).and_then(|e| e.fix.as_mut()) {
            fix.span.end = fix.span.end.max(end);
        }
    }

    /// Forget the edits made since `checkpoint` that start at or after `from`.
    pub(super) fn rollback(&mut self, checkpoint: usize, from: usize) {
        let mut i = 0;
        self.list.retain(|e| {
            let keep = i < checkpoint || e.span.start < from;
            i += 1;
            keep
        });
    }

    /// True when an edit at `at` reports `kind` (looking back only over the edits made at
    /// or after `at`, the last few).
    pub(super) fn has_fix_at(&self, at: usize, kind: FixKind) -> bool {
        self.list
            .iter()
            .rev()
            .take_while(|e| e.span.start >= at)
            .any(|e| e.span.start == at && e.fix.is_some_and(|f| f.kind == kind))
    }

    /// True when an edit made since `checkpoint` starts strictly inside `from..to`.
    pub(super) fn edits_inside(&self, checkpoint: usize, from: usize, to: usize) -> bool {
        self.list.get(checkpoint..).is_some_and(|l| l.iter().any(|e| e.span.start > from && e.span.start < to))
    }

    /// The spans deleted or replaced by edits that start inside `from..to`, in order of
    /// position (comments, odd spaces: what the parser took out between two tokens).
    pub(super) fn removed_in(&self, from: usize, to: usize) -> Vec<Span> {
        let mut spans: Vec<Span> = self
            .list
            .iter()
            .filter(|e| !e.span.is_empty() && e.span.start >= from && e.span.start < to)
            .map(|e| e.span)
            .collect();
        spans.sort_unstable_by_key(|s| s.start);
        spans
    }

    /// Drop the last edit if it is an insertion of `text` at `at` reporting `kind`.
    pub(super) fn pop_insertion(&mut self, at: usize, kind: FixKind) {
        let last = self.list.last().is_some_and(|e| e.span == Span::at(at) && e.fix.is_some_and(|f| f.kind == kind));
        if last {
            self.list.pop();
        }
    }

    /// Forget every edit of a value at `start..=end` (including what was inserted at its
    /// end, such as closers of a truncated value; a replacement that starts at `end`
    /// belongs to the value that follows, as in `{}['a': 1}`).
    pub(super) fn clear_value(&mut self, start: usize, end: usize) {
        self.list.retain(|e| e.span.start < start || e.span.start > end || (e.span.start == end && !e.span.is_empty()));
    }

    /// Forget every edit inside `start..end` (insertions at `start` are kept: they belong
    /// to what precedes).
    pub(super) fn clear_range(&mut self, start: usize, end: usize) {
        self.list.retain(|e| {
            let inside = (e.span.start > start || (e.span.start == start && !e.span.is_empty())) && e.span.start < end;
            !inside
        });
    }

    /// Apply the edits to `src[start..end]`, the region they were made in.
    pub(super) fn apply_range(&self, src: &str, start: usize, end: usize) -> String {
        let mut out = String::with_capacity(end.saturating_sub(start) + 32);
        self.apply_range_into(src, start, end, &mut out);
        out
    }

    /// [`Edits::apply_range`], appended to `out`.
    fn apply_range_into(&self, src: &str, start: usize, end: usize, out: &mut String) {
        let order = |e: &&Edit| (e.span.start, !e.span.is_empty());
        let inside = |e: &&Edit| e.span.start >= start && e.span.start <= end;
        // Where the edits stop being in order (the parser records them in order almost
        // always; the text around a value is settled last, so its edits come after).
        let run = self.list.windows(2).position(|w| order(&&w[0]) > order(&&w[1])).map(|p| p + 1);
        let (first, second) = self.list.split_at(run.unwrap_or(self.list.len()));
        if run.is_none() {
            apply(src, start, end, self.list.iter().filter(inside), out);
        } else if second.is_sorted_by_key(|e| order(&e)) {
            // Two runs in order: merged as they are read (no copy, no sort). On equal keys
            // the earlier run's edit goes first, as the stable sort below would put it.
            let mut a = first.iter().filter(inside).peekable();
            let mut b = second.iter().filter(inside).peekable();
            let merged = std::iter::from_fn(|| match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if order(y) < order(x) => b.next(),
                (Some(_), _) => a.next(),
                (None, _) => b.next(),
            });
            apply(src, start, end, merged, out);
        } else {
            // Room for all at once (a collect from a filter grows from four, a reallocation
            // at a time).
            let mut sorted: Vec<&Edit> = Vec::with_capacity(self.list.len());
            sorted.extend(self.list.iter().filter(|e| e.span.start >= start && e.span.start <= end));
            // Insertions at a position go before a replacement that starts there (the `[`
            // that gathers values precedes the requoting of the first one).
            sorted.sort_by_key(order);
            apply(src, start, end, sorted.into_iter(), out);
        }
    }

    /// The repaired text and the fixes, sorted by position.
    pub(super) fn finish(&self, src: &str) -> (String, Vec<TextFix>) {
        let (mut text, mut fixes) = (String::new(), Vec::new());
        self.finish_into(src, &mut text, &mut fixes);
        (text, fixes)
    }

    /// [`Edits::finish`], written into `text` and `fixes` (emptied first, their room kept:
    /// a [`Salvager`](super::Salvager) hands back the buffers of its last answer).
    pub(super) fn finish_into(&self, src: &str, text: &mut String, fixes: &mut Vec<TextFix>) {
        text.clear();
        text.reserve(src.len() + 32);
        self.apply_range_into(src, 0, src.len(), text);
        fixes.clear();
        fixes.reserve(self.list.len());
        fixes.extend(self.list.iter().filter_map(|e| e.fix));
        if !fixes.is_sorted_by_key(|f| (f.span.start, f.span.end)) {
            fixes.sort_by_key(|f| (f.span.start, f.span.end));
        }
    }
}

/// Write `src[start..end]` with `edits` (in order) applied to `out`.
fn apply<'e>(src: &str, start: usize, end: usize, edits: impl Iterator<Item = &'e Edit>, out: &mut String) {
    let mut cursor = start;
    for e in edits {
        if e.span.start >= cursor {
            out.push_str(src.get(cursor..e.span.start).unwrap_or(""));
            cursor = e.span.start;
        }
        // Most edits write one ASCII byte (a quote, a comma, a closer) or nothing: pushed
        // as a character, not copied as a slice (a call to `memcpy` each).
        match e.text.as_bytes() {
            [] => {}
            &[c] if c.is_ascii() => out.push(char::from(c)),
            _ => out.push_str(&e.text),
        }
        cursor = cursor.max(e.span.end.min(end));
    }
    out.push_str(src.get(cursor..end).unwrap_or(""));
}
