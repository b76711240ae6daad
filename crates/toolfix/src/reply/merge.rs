//! Putting a reply's calls together, shared by the whole-reply and the streaming paths so
//! they agree by construction: each call repaired once ([`CallFixer`]), a call that repeats
//! another kept once by the accepted calls' canonical keys (the server's own call and id
//! win over a copy left in `content`), calls found in reasoning used as the options say,
//! then ids and the storm guard in reply order.

use super::fixer::{CallFixer, Prepared};
use super::{FixOptions, FixedCall};
use crate::extract::{ExtractedCall, Note, NoteKind, ReasoningCalls, Repeats, intent};

/// A reply's calls, by channel, as extraction found them (every repeat kept).
#[derive(Debug, Default)]
pub(crate) struct Found<'a> {
    /// Calls written in `content`, in order.
    pub(crate) content: Vec<ExtractedCall<'a>>,
    /// The calls the server parsed, in order.
    pub(crate) native: Vec<ExtractedCall<'a>>,
    /// Calls written in reasoning, in order.
    pub(crate) reasoning: Vec<ExtractedCall<'a>>,
}

/// Where the token limit may have cut the reply.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cut {
    /// `finish_reason` was `"length"`.
    pub(crate) hit: bool,
    /// The end of `content`'s last non-space character: a `content` call that reaches it
    /// may have been cut (`usize::MAX` when server calls followed the content).
    pub(crate) content_end: usize,
}

/// Repair, drop repeats, admit: the calls of one reply and the notes about those dropped.
pub(crate) fn assemble(
    fixer: &mut CallFixer,
    found: Found<'_>,
    cut: Cut,
    options: &FixOptions,
) -> (Vec<FixedCall>, Vec<Note>) {
    // One server call alone (the usual reply): repaired and admitted, no list between.
    if found.content.is_empty() && found.reasoning.is_empty() && found.native.len() == 1 {
        let mut native = found.native;
        if let Some(c) = native.pop() {
            let p = prepare(fixer, c, cut.hit);
            return (vec![fixer.admit(p, true)], Vec::new());
        }
        return (Vec::new(), Vec::new());
    }
    let repeats = options.extract.repeats;
    let mut notes = Vec::new();
    let last = found.native.len().saturating_sub(1);
    let native: Vec<Prepared> =
        found.native.into_iter().enumerate().map(|(i, c)| prepare(fixer, c, cut.hit && i == last)).collect();
    let mut keep = if found.content.is_empty() {
        // No content call: the server's calls, each kept unless it repeats one before it.
        let mut keep = native;
        if repeats == Repeats::Drop {
            drop_repeats(&mut keep, &mut notes);
        }
        keep
    } else {
        with_content(fixer, found.content, native, cut, options, &mut notes)
    };
    let use_reasoning = match options.extract.reasoning_calls {
        ReasoningCalls::WhenNoOther => keep.is_empty(),
        ReasoningCalls::Always => true,
        _ => false,
    };
    let mut reasoning: Vec<Prepared> = Vec::new();
    if use_reasoning {
        for c in found.reasoning {
            let p = prepare(fixer, c, cut.hit);
            let in_other = keep.iter().any(|k| k.key() == p.key());
            if in_other || (repeats == Repeats::Drop && reasoning.iter().any(|r| r.key() == p.key())) {
                notes.push(duplicate(&p));
            } else {
                reasoning.push(p);
            }
        }
    } else if let Some(first) = found.reasoning.first() {
        notes.push(Note::new(NoteKind::ReasoningCallsIgnored, first.span, Some(first.name.to_string())));
    }
    // The fixer is dropped after these: the storm guard need not remember the last one.
    let count = keep.len() + reasoning.len();
    keep.append(&mut reasoning);
    let calls = keep.into_iter().enumerate().map(|(i, p)| fixer.admit(p, i + 1 == count)).collect();
    (calls, notes)
}

/// The server's calls `keep` without those that repeat one before them (a note each).
fn drop_repeats(keep: &mut Vec<Prepared>, notes: &mut Vec<Note>) {
    let mut i = 0;
    while i < keep.len() {
        let (before, rest) = keep.split_at(i);
        if rest.first().is_some_and(|p| before.iter().any(|k| k.key() == p.key())) {
            let p = keep.remove(i);
            notes.push(duplicate(&p));
        } else {
            i += 1;
        }
    }
}

/// The content calls, then the server's (`native`, prepared), as kept: a content call the
/// server also returned is the server's (its call and id are kept), repeats dropped as
/// the options say.
fn with_content<'a>(
    fixer: &mut CallFixer,
    content: Vec<ExtractedCall<'a>>,
    native: Vec<Prepared<'a>>,
    cut: Cut,
    options: &FixOptions,
    notes: &mut Vec<Note>,
) -> Vec<Prepared<'a>> {
    let repeats = options.extract.repeats;
    let content: Vec<Prepared> = content
        .into_iter()
        .map(|c| {
            let at_cut = cut.hit && c.span.end >= cut.content_end;
            prepare(fixer, c, at_cut)
        })
        .collect();
    let mut keep: Vec<Prepared> = Vec::with_capacity(content.len() + native.len());
    // A content call the server also returned is the server's: its call and id are kept.
    for mut p in content {
        if native.iter().any(|n| n.key() == p.key())
            || (repeats == Repeats::Drop && keep.iter().any(|k| k.key() == p.key()))
        {
            notes.push(duplicate(&p));
            continue;
        }
        if !native.is_empty() {
            // The server made calls of its own: one more sign this one was only shown.
            let own =
                fixer.tools().and_then(|t| t.tool(p.outcome.name()).ok()).and_then(crate::schema::Tool::leaked_calls);
            (p.intent, p.signals) =
                intent::beside_native_calls(p.intent, &p.signals, own, options.extract.leaked_calls);
        }
        keep.push(p);
    }
    let content_count = keep.len();
    for p in native {
        if repeats == Repeats::Drop && keep.iter().skip(content_count).any(|k| k.key() == p.key()) {
            notes.push(duplicate(&p));
        } else {
            keep.push(p);
        }
    }
    keep
}

fn prepare<'a>(fixer: &mut CallFixer, call: ExtractedCall<'a>, at_cut: bool) -> Prepared<'a> {
    let mut p = fixer.prepare(call.name, call.arguments, call.id, at_cut, call.format, call.channel);
    p.envelope = call.envelope;
    p.span = call.span;
    p.intent = call.intent;
    p.signals = call.signals;
    p
}

fn duplicate(p: &Prepared) -> Note {
    Note::new(NoteKind::Duplicate, p.span, Some(p.written_name.to_string()))
}
