//! One pass over one text, as a step machine: find the next marker (one Aho-Corasick
//! automaton over every format's markers, run only where a marker can start), try the
//! grammars registered for it, track reasoning blocks and the formats' own markers.
//!
//! The whole-text extractor runs the steps to the end. The streaming assembler runs the
//! same steps on the text received so far and stops at the first step that more text
//! could change, so both read a text the same way. To make that hold for any grammar, a
//! parser never sees "the rest of the text": it is run on views that end `CHECKPOINT`
//! bytes after its marker, then twice as far, and so on up to `Limits::max_held_bytes`;
//! its call is taken from the first view in which it ends at least `MARGIN` bytes before
//! the view does (or from the whole text), and it has failed when a view of `FAIL_MARGIN`
//! bytes held nothing, or the largest view held no complete call. A view is a function of
//! the text, not of how it arrived, and a failed parse costs bounded work.

use super::brackets::{Brackets, Extent};
use super::intent::{self, LeakedCalls, Place, Signals, Verdict};
use super::parsed::{Cx, Parsed, RawCall};
use super::registry::{self, Kind, REGISTRY, When};
use super::{Format, Note, NoteKind};
use crate::span::Span;

/// Failed parser runs allowed per text before the rest is left as prose: keeps hostile
/// input (thousands of half-open tags) linear.
pub(crate) const FAILED_PARSE_BUDGET: usize = 256;

/// A call region is final once this many bytes follow it (parsers look only a little past
/// their end: a closing tag, a separator).
pub(crate) const MARGIN: usize = 1024;

/// A parser that found nothing in this many bytes after its marker has failed.
pub(crate) const FAIL_MARGIN: usize = 4096;

/// The first view a parser gets: this many bytes after its marker.
pub(crate) const CHECKPOINT: usize = 2 * MARGIN;

/// How a text is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `content`: reasoning blocks are tracked, consumed call markup is cut out.
    Content,
    /// `reasoning_content`: every call is a reasoning call, the text is kept as written.
    Reasoning,
}

/// A reasoning block being read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Block {
    /// Index into `Dispatch::reasoning`.
    kind: usize,
    /// Start of the open marker.
    pub(crate) start: usize,
    /// First byte after the open marker.
    pub(crate) body: usize,
    /// Start of the close marker, once found.
    close: Option<usize>,
    /// Where to look for the close marker next.
    search_from: usize,
}

/// Where the scan stands.
#[expect(clippy::struct_excessive_bools, reason = "independent facts about the text read so far")]
#[derive(Clone, Debug, Default)]
pub(crate) struct State {
    /// Next byte to read.
    pub(crate) pos: usize,
    seen_open: bool,
    forced_done: bool,
    /// Something was cut out of `content` already (forced-open reasoning then cannot be).
    touched: bool,
    failures: usize,
    block: Option<Block>,
    exhausted: bool,
    brackets: Brackets,
    /// The format whose own marker came last (see `Cx::hint`).
    hint: Option<Format>,
    /// The start of the text was looked at (a reply may start with a recipient line,
    /// `functionary.rs`).
    began: bool,
    /// Marker searches so far, and the bytes they went over: where markers come thick
    /// the automaton walks the text itself (see `registry::Dispatch::find`).
    searches: usize,
    searched: usize,
    /// No position before this one can start a marker that runs past the end of the text
    /// (what the partial-marker search last found: the text only grows at its end, and a position
    /// rejected stays rejected as it grows).
    partial_from: usize,
}

impl State {
    /// [`registry::Dispatch::partial_marker`] from `from`, skipping the positions an earlier call on the same
    /// (since grown) text already rejected.
    fn partial(&mut self, text: &str, from: usize, d: &registry::Dispatch) -> usize {
        let known = self.partial_from.min(text.len());
        let found = d.partial_marker(text, from.max(known));
        self.partial_from = found;
        found
    }

    /// The open reasoning block, when it moves to the reasoning (all blocks when
    /// `move_blocks`, Harmony's analysis channel always).
    pub(crate) fn moving_block(&self, move_blocks: bool) -> Option<Block> {
        self.block.filter(|b| move_blocks || always_moves(b.kind))
    }

    /// The text before `by` is dropped: shift every position down by `by` (`text` is the
    /// text before the drop; nothing before `min(pos, by)` is needed again).
    pub(crate) fn rebase(&mut self, text: &str, by: usize, max_depth: usize) {
        self.brackets.rebase(text, by, max_depth);
        self.pos = self.pos.saturating_sub(by);
        self.partial_from = self.partial_from.saturating_sub(by);
        if let Some(b) = self.block.as_mut() {
            b.start = b.start.saturating_sub(by);
            b.body = b.body.saturating_sub(by);
            b.close = b.close.map(|c| c.saturating_sub(by));
            b.search_from = b.search_from.saturating_sub(by);
        }
    }
}

/// What one step found.
#[derive(Debug)]
pub(crate) enum Step<'a> {
    /// `[from, to)` is prose (or reasoning text, inside a block).
    Prose,
    /// Call markup `region` was read; `calls` may be empty (markup with no call, cut out).
    /// `moved`: text inside it that leaves `content` for the reasoning; `kept`: text inside
    /// it that stays prose (only the markup around it is cut).
    Calls { region: Span, calls: Vec<RawCall<'a>>, reasoning: bool, cut: bool, moved: Option<Span>, kept: Option<Span> },
    /// Markup left as text, with a note.
    Noted(Note),
    /// Forced-open reasoning: `[0, reasoning_end)` was reasoning; `[0, cut_end)` leaves content.
    Forced { reasoning_end: usize, cut_end: usize },
    /// Markup inside a reasoning block that moves, left out of its reasoning text.
    ReasoningCut(Span),
    /// A reasoning block ended; when blocks move, `moved` is (cut, reasoning text).
    /// `unclosed`: the text ended inside it (its close marker never came).
    BlockEnd { moved: Option<(Span, Span)>, unclosed: bool },
    /// A marker that is not a call, or a failed parse: the text stays prose.
    Skip,
    /// A limit was reached at this byte (failed parses, text size): the rest is prose.
    Exhausted(Note),
    /// The end of the text.
    End,
}

/// What the caller knows about the text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Read<'c, 't> {
    pub(crate) cx: &'c Cx<'t>,
    pub(crate) mode: Mode,
    pub(crate) move_blocks: bool,
    /// True when no more text will come.
    pub(crate) is_final: bool,
    /// Bytes of the text before `text[0]` (a stream drops what it decided).
    pub(crate) base: usize,
    /// Where markers stop being looked for: `Limits::max_text_bytes`, counted from the
    /// real start of the text (see [`Read::new`]).
    pub(crate) cap: usize,
}

impl<'c, 't> Read<'c, 't> {
    /// How to read a text whose first `base` bytes were dropped.
    pub(crate) fn new(cx: &'c Cx<'t>, mode: Mode, move_blocks: bool, is_final: bool, base: usize) -> Self {
        let cap = cx.limits.max_text_bytes.saturating_sub(base);
        Read { cx, mode, move_blocks, is_final, base, cap }
    }
}

/// The next step from `st.pos`, or `None` when more text could change it (only when
/// `!r.is_final`; the state is then unchanged).
pub(crate) fn step<'a>(text: &'a str, st: &mut State, r: &Read<'_, '_>) -> Option<Step<'a>> {
    let d = registry::dispatch()?;
    let len = text.len();
    // Once the budget ran out no more markup is read; a reasoning block open then still
    // ends where it closes (below), as the stream, which sent its text as reasoning, reads it.
    if st.exhausted && st.block.is_none() {
        if st.pos >= len {
            return r.is_final.then_some(Step::End);
        }
        st.pos = len;
        return Some(Step::Prose);
    }
    if !st.began && st.pos == 0 && r.base == 0 && r.mode == Mode::Content {
        match lead(text, st, r, d) {
            Decision::Wait => return None,
            Decision::Yes(step) => return Some(step),
            Decision::No | Decision::TooLarge => {}
        }
    }
    // Past the text cap, the rest is prose.
    let cap = r.cap;
    if !st.exhausted && len > cap && st.pos >= cap {
        return Some(past_cap(st, r));
    }
    // Inside a block: find its close marker (once).
    if let Some(b) = st.block.as_mut()
        && b.close.is_none()
    {
        let close_marker = d.reasoning.get(b.kind).map_or("", |r| r.think.close);
        match text.get(b.search_from..).and_then(|t| t.find(close_marker)) {
            Some(i) => b.close = Some(b.search_from + i),
            None => {
                b.search_from =
                    crate::span::floor_char_boundary(text, len.saturating_sub(close_marker.len()).max(b.search_from));
            }
        }
    }
    let block = st.block;
    let (limit, limit_is_end) = match block.and_then(|b| b.close) {
        Some(c) => (c, false),
        None => (len, true),
    };
    if st.pos >= limit {
        if let Some(b) = block {
            if b.close.is_none() && !r.is_final {
                return None;
            }
            return Some(end_block(text, st, b, r));
        }
        return r.is_final.then_some(Step::End);
    }
    if st.exhausted {
        // The block's text up to its close, or up to where a close marker could begin.
        let to = match block {
            Some(b) if limit_is_end && !r.is_final => b.search_from,
            _ => limit,
        };
        if to <= st.pos {
            return None;
        }
        st.pos = to;
        return Some(Step::Prose);
    }
    // Markers are looked for before the text cap only.
    let search_end = limit.min(cap.max(st.pos));
    let dense = st.searches >= DENSE_AFTER && st.searched < st.searches * DENSE_BELOW;
    let found = d.find(text, st.pos, search_end, dense);
    st.searches += 1;
    st.searched += found.map_or(search_end, |m| m.start()).saturating_sub(st.pos);
    let Some(m) = found else {
        // No marker: prose up to what could still begin markup (the start of a marker, or
        // a declared tool's name that a `{` could follow), and nothing else.
        let from = st.pos;
        let to = if limit_is_end && !r.is_final && search_end == limit {
            let held = st.partial(text, from, d).min(glued_hold(text, from, r.cx).unwrap_or(len));
            id_hold(text, from, held.min(len), r.cx)
        } else {
            search_end
        };
        if to <= from {
            return None;
        }
        st.pos = to;
        return Some(Step::Prose);
    };
    // Only a marker this close to the end can have one begin before it (or a longer one
    // here, or a Kimi id) that runs past the end: the hold found below starts at least
    // `longest - 1 + MAX_ID` bytes before the end, so one further back leaves it alone.
    if limit_is_end && !r.is_final && m.start() + d.longest + super::kimi_k2::MAX_ID >= len {
        // A marker may begin before this one (or a longer one here) and run past the end
        // of the text so far: wait for the bytes that decide it.
        let partial = st.partial(text, st.pos, d);
        let held = id_hold(text, st.pos, partial, r.cx);
        if held <= m.start() {
            if held > st.pos {
                st.pos = held;
                return Some(Step::Prose);
            }
            return None;
        }
    }
    let in_reasoning = block.is_some() || r.mode == Mode::Reasoning;
    if m.start() > st.pos {
        if r.cx.tools.is_some() && text.as_bytes().get(m.start()) == Some(&b'{') {
            match glued(text, st, r, d, m.start(), limit, in_reasoning) {
                Decision::Wait => return None,
                Decision::Yes(step) => return Some(step),
                Decision::No | Decision::TooLarge => {}
            }
        }
        if let Some(Kind::Call(rows)) = d.kinds.get(m.pattern().as_usize())
            && super::text::is_at(text, m.start(), super::kimi_k2::ARG_BEGIN)
        {
            match bare_id(text, st, r, rows, m.start(), limit, in_reasoning) {
                Decision::Wait => return None,
                Decision::Yes(step) => return Some(step),
                Decision::No | Decision::TooLarge => {}
            }
        }
        st.pos = m.start();
        return Some(Step::Prose);
    }
    let kind = d.kinds.get(m.pattern().as_usize());
    let Some(Kind::Call(rows)) = kind else {
        return Some(other_marker(st, r, d, kind, m.span(), block));
    };
    // Parsers inside a block see the text up to the block's end only.
    let mut too_large = false;
    match try_rows(text, m.start(), rows, r, st, &mut too_large, limit) {
        Rows::Wait => return None,
        Rows::Found(format, parsed) => {
            st.pos = parsed.end;
            return Some(accept(st, r, format, m.start(), parsed, in_reasoning));
        }
        Rows::None => {}
    }
    st.pos = next_boundary(text, m.start());
    if st.failures > FAILED_PARSE_BUDGET || too_large {
        return Some(failed_note(st, r, m.start()));
    }
    Some(Step::Skip)
}

/// After this many marker searches, their average length decides how to search.
const DENSE_AFTER: usize = 8;
/// Searches shorter than this on average (in bytes): markers come thick, and the
/// automaton walking every byte costs less than the prefilter's look-ups.
const DENSE_BELOW: usize = 192;

/// Where the end of `text` (from `from` on) could be the start of a declared tool's name
/// glued to a `{` still to come (`glued.rs`): `NAME`, `NAME =`, `NAME (`,
/// `NAME(properties =`, each cut anywhere. `None` when it cannot be. Errs on the side of
/// holding: a stream must never send text the whole-text read would cut.
fn glued_hold(text: &str, from: usize, cx: &Cx<'_>) -> Option<usize> {
    let tools = cx.tools?;
    let bytes = text.as_bytes();
    let is_name = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.');
    let back = |mut i: usize, f: &dyn Fn(u8) -> bool| {
        while i > from && bytes.get(i - 1).is_some_and(|&b| f(b)) {
            i -= 1;
        }
        i
    };
    let space = |b: u8| b == b' ' || b == b'\t';
    // A run of name bytes ending at `end`; longer than a name can be, it is none.
    let word = |end: usize| -> Option<(usize, &str)> {
        let mut start = end;
        while start > from && end - start <= super::text::MAX_NAME && bytes.get(start - 1).is_some_and(|&b| is_name(b))
        {
            start -= 1;
        }
        if start == end || end - start > super::text::MAX_NAME {
            return None;
        }
        text.get(start..end).map(|w| (start, w))
    };
    // `NAME (` before `at`: where NAME starts.
    let name_paren = |at: usize| -> Option<usize> {
        let j = back(at, &space);
        if j <= from || bytes.get(j - 1) != Some(&b'(') {
            return None;
        }
        let (start, name) = word(back(j - 1, &space))?;
        tools.is_known(name).then_some(start)
    };
    let len = text.len();
    if let Some((start, w)) = word(len) {
        // A word at the very end: a name, or a keyword after `NAME (`, being written (both
        // at once, `p` for `python` and `properties`: the earlier hold wins).
        let keyword = super::glued::KEYWORDS.iter().any(|k| k.starts_with(w)).then(|| name_paren(start)).flatten();
        let name = tools.could_begin_name(w).then_some(start);
        return match (name, keyword) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    let mut j = back(len, &space);
    match bytes.get(j.wrapping_sub(1)) {
        Some(b'(') if j > from => return name_paren(j),
        Some(b'=') if j > from => j = back(j - 1, &space),
        _ => {}
    }
    let (start, w) = word(j)?;
    if tools.is_known(w) {
        return Some(start);
    }
    if super::glued::KEYWORDS.contains(&w) {
        return name_paren(start);
    }
    None
}

/// A declared tool's name glued to the `{` at `brace` (`glued.rs`): prose up to the name,
/// or the call read from it. `No` when there is none (or it does not parse).
#[cold]
fn glued<'a>(
    text: &'a str,
    st: &mut State,
    r: &Read<'_, '_>,
    d: &registry::Dispatch,
    brace: usize,
    limit: usize,
    in_reasoning: bool,
) -> Decision<Step<'a>> {
    match super::glued::name_before(text, st.pos, brace, r.cx) {
        Some(start) => call_from(text, st, r, &[d.glued], start, limit, in_reasoning),
        None => Decision::No,
    }
}

/// The start of `content`: a gpt-oss raw completion's recipient (` to=functions.N…`, the
/// prompt ended with `<|start|>assistant`), or a Functionary v3.2 recipient (`all`, or a
/// declared tool followed by its arguments) that the prompt's `>>>` started.
#[cold]
fn lead<'a>(text: &'a str, st: &mut State, r: &Read<'_, '_>, d: &registry::Dispatch) -> Decision<Step<'a>> {
    let ws = usize::from(text.starts_with(' '));
    let rest = text.get(ws..).unwrap_or_default();
    let raw = super::harmony::RAW_RECIPIENTS;
    if raw.iter().any(|m| rest.starts_with(m)) {
        let mut too_large = false;
        match try_rows(text, ws, &[d.harmony], r, st, &mut too_large, text.len()) {
            Rows::Wait => return Decision::Wait,
            Rows::Found(format, parsed) => {
                st.began = true;
                st.pos = parsed.end;
                return Decision::Yes(accept(st, r, format, ws, parsed, false));
            }
            Rows::None => {}
        }
    } else if !r.is_final && raw.iter().any(|m| m.starts_with(rest)) {
        return Decision::Wait;
    }
    match super::functionary::leading(text, r.is_final, r.cx) {
        None => return Decision::Wait,
        Some(false) => {
            st.began = true;
            return Decision::No;
        }
        Some(true) => {}
    }
    let mut too_large = false;
    match try_rows(text, 0, &[d.leading], r, st, &mut too_large, text.len()) {
        Rows::Wait => Decision::Wait,
        Rows::Found(format, parsed) => {
            st.began = true;
            st.pos = parsed.end;
            Decision::Yes(accept(st, r, format, 0, parsed, false))
        }
        Rows::None => {
            st.began = true;
            Decision::No
        }
    }
}

/// A call id written right before Kimi K2's argument marker at `marker`, its per-call
/// marker missing (`kimi_k2.rs`): prose up to the id, or the call read from it. `No` when
/// there is none (or it does not parse).
#[cold]
fn bare_id<'a>(
    text: &'a str,
    st: &mut State,
    r: &Read<'_, '_>,
    rows: &[usize],
    marker: usize,
    limit: usize,
    in_reasoning: bool,
) -> Decision<Step<'a>> {
    match super::kimi_k2::id_before(text, st.pos, marker, r.cx) {
        Some(start) => call_from(text, st, r, rows, start, limit, in_reasoning),
        None => Decision::No,
    }
}

/// A call that starts at `start`, before the marker that revealed it (a glued name, a
/// bare Kimi id): the prose up to it first, then the call read by `rows` from there.
/// `No` when they do not parse.
fn call_from<'a>(
    text: &'a str,
    st: &mut State,
    r: &Read<'_, '_>,
    rows: &[usize],
    start: usize,
    limit: usize,
    in_reasoning: bool,
) -> Decision<Step<'a>> {
    if start > st.pos {
        st.pos = start;
        return Decision::Yes(Step::Prose);
    }
    let mut too_large = false;
    match try_rows(text, start, rows, r, st, &mut too_large, limit) {
        Rows::Wait => Decision::Wait,
        Rows::Found(format, parsed) => {
            st.pos = parsed.end;
            Decision::Yes(accept(st, r, format, start, parsed, in_reasoning))
        }
        Rows::None => Decision::No,
    }
}

/// `to`, or the start of the run of call-id bytes that reaches it (a stream holds back
/// an id that an argument marker may follow, see `bare_id`), not below `from`.
/// Where a run of id bytes ending at `to` starts when it could still become a Kimi K2 call
/// id of a declared tool (`functions.NAME:IDX` or `NAME:IDX`, whose
/// `<|tool_call_argument_begin|>` has not come yet): a stream holds it back; `to` otherwise
/// (no tools, no such run: nothing is held).
fn id_hold(text: &str, from: usize, to: usize, cx: &Cx<'_>) -> usize {
    const NAMESPACE: &str = "functions.";
    let Some(tools) = cx.tools else { return to };
    let start = before_id(text, from, to);
    let Some(run) = text.get(start..to).filter(|r| !r.is_empty()) else { return to };
    if NAMESPACE.starts_with(run) {
        return start;
    }
    let run = run.strip_prefix(NAMESPACE).unwrap_or(run);
    let could_be = match run.split_once(':') {
        Some((name, index)) => index.bytes().all(|b| b.is_ascii_digit()) && tools.is_known(name),
        None => tools.could_begin_name(run),
    };
    if could_be { start } else { to }
}

fn before_id(text: &str, from: usize, to: usize) -> usize {
    let low = crate::span::ceil_char_boundary(text, from.max(to.saturating_sub(super::kimi_k2::MAX_ID)));
    let run = text.get(low..to).map_or(0, |t| t.bytes().rev().take_while(|b| super::kimi_k2::is_id_byte(*b)).count());
    let goes_on =
        to - run == low && low > 0 && text.as_bytes().get(low - 1).is_some_and(|b| super::kimi_k2::is_id_byte(*b));
    if run == 0 || goes_on {
        // No id there, or a run that began before the window (longer than an id, or in
        // text already read): it cannot be one.
        return to;
    }
    to - run
}

/// A marker that is not call markup: a reasoning block's, or a prose wrapper.
#[cold]
fn other_marker<'a>(
    st: &mut State,
    r: &Read<'_, '_>,
    d: &registry::Dispatch,
    kind: Option<&Kind>,
    m: aho_corasick::Span,
    block: Option<Block>,
) -> Step<'a> {
    let in_block = block.is_some();
    let in_reasoning = in_block || r.mode == Mode::Reasoning;
    let close_of = |k: usize| d.reasoning.get(k).map(|x| x.think.close);
    st.pos = m.end;
    match kind {
        Some(Kind::ThinkOpen(k)) if r.mode == Mode::Content && !in_block => {
            note_owner(st, d, *k);
            st.seen_open = true;
            st.block = Some(Block { kind: *k, start: m.start, body: m.end, close: None, search_from: m.end });
            Step::Skip
        }
        Some(Kind::ThinkClose(k))
            if r.mode == Mode::Content && !in_block && !st.seen_open && !st.forced_done && !st.touched =>
        {
            note_owner(st, d, *k);
            st.forced_done = true;
            st.touched = true;
            Step::Forced { reasoning_end: m.start, cut_end: m.end }
        }
        // The block's own opener written again inside it (Gemma 4's `<|channel>`, vLLM
        // swallows it): markup, not reasoning text, when the block moves.
        Some(Kind::ThinkOpen(k))
            if r.mode == Mode::Content && r.move_blocks && block.is_some_and(|b| close_of(b.kind) == close_of(*k)) =>
        {
            Step::ReasoningCut(Span::new(m.start, m.end))
        }
        // A close marker after reasoning already ended (servers' reasoning parsers absorb
        // it): markup, not prose, when blocks move.
        Some(Kind::ThinkClose(k))
            if r.mode == Mode::Content && r.move_blocks && !in_block && (st.seen_open || st.forced_done) =>
        {
            note_owner(st, d, *k);
            st.touched = true;
            Step::Calls {
                region: Span::new(m.start, m.end),
                calls: Vec::new(),
                reasoning: false,
                cut: true,
                moved: None,
                kept: None,
            }
        }
        Some(Kind::Wrapper(owner)) => {
            st.hint = Some(*owner);
            let cut = !in_reasoning && r.mode == Mode::Content;
            st.touched |= cut;
            Step::Calls {
                region: Span::new(m.start, m.end),
                calls: Vec::new(),
                reasoning: in_reasoning,
                cut,
                moved: None,
                kept: None,
            }
        }
        // Channel markup (Harmony's `<|end|>` after a preamble) is never prose.
        Some(Kind::ThinkClose(k)) if always_moves(*k) && !in_reasoning => {
            note_owner(st, d, *k);
            st.touched = true;
            Step::Calls {
                region: Span::new(m.start, m.end),
                calls: Vec::new(),
                reasoning: false,
                cut: true,
                moved: None,
                kept: None,
            }
        }
        Some(Kind::ThinkOpen(k) | Kind::ThinkClose(k)) => {
            note_owner(st, d, *k);
            Step::Skip
        }
        Some(Kind::Call(_)) | None => Step::Skip,
    }
}

/// Markup at `at` that no grammar could read: the budget of failed parses ran out, or
/// the markup is longer than a call may be.
#[cold]
fn failed_note<'a>(st: &mut State, r: &Read<'_, '_>, at: usize) -> Step<'a> {
    let at = r.base + at;
    if st.failures > FAILED_PARSE_BUDGET {
        st.exhausted = true;
        return Step::Exhausted(Note::new(NoteKind::ScanBudgetExhausted, Span::new(at, at), None));
    }
    let span = Span::new(at, at + r.cx.limits.max_held_bytes);
    Step::Noted(Note::new(NoteKind::CallTooLarge, span, None))
}

/// The text is longer than `Limits::max_text_bytes` and the scan reached the cap.
#[cold]
fn past_cap<'a>(st: &mut State, r: &Read<'_, '_>) -> Step<'a> {
    st.exhausted = true;
    let at = r.base + st.pos;
    Step::Exhausted(Note::new(NoteKind::TextTooLarge, Span::new(at, at), None))
}

/// A reasoning marker that one format alone writes names the format for what follows.
fn note_owner(st: &mut State, d: &registry::Dispatch, k: usize) {
    if let Some(owner) = d.reasoning.get(k).and_then(|r| r.owner) {
        st.hint = Some(owner);
    }
}

fn end_block<'a>(text: &'a str, st: &mut State, b: Block, r: &Read<'_, '_>) -> Step<'a> {
    st.block = None;
    let close_len = registry::dispatch().and_then(|d| d.reasoning.get(b.kind)).map_or(0, |r| r.think.close.len());
    let (body_end, end) = match b.close {
        Some(c) => (c, c + close_len),
        None => (text.len(), text.len()),
    };
    st.pos = end;
    let moved = ((r.move_blocks || always_moves(b.kind)) && r.mode == Mode::Content)
        .then(|| (Span::new(b.start, end), Span::new(b.body, body_end)));
    if moved.is_some() {
        st.touched = true;
    }
    Step::BlockEnd { moved, unclosed: b.close.is_none() }
}

/// A call read inside a reasoning block that moves out of `content` is the model's call
/// when the block never closes (the model ended its reasoning with the call, as servers'
/// reasoning parsers read a tool-call start): its markup leaves the reasoning text. So
/// that a stream need not hold reasoning back without bound, this holds only when at most
/// `Limits::max_held_bytes` of text follow the call's markup; past that the call stays in
/// the reasoning, as a call drafted there.
pub(crate) fn ends_unclosed_reasoning(text_len: usize, region: Span, limits: &crate::limits::Limits) -> bool {
    text_len.saturating_sub(region.end) <= limits.max_held_bytes
}

/// Channel markup (Harmony's analysis channel) is never prose: it always moves.
fn always_moves(kind: usize) -> bool {
    registry::dispatch().and_then(|d| d.reasoning.get(kind)).is_some_and(|r| r.think.always_moves)
}

/// A decision that may have to wait for more text.
enum Decision<T> {
    /// More text could change it.
    Wait,
    /// Yes, with this.
    Yes(T),
    /// No.
    No,
    /// No: the markup may be a call, but no call ends within `Limits::max_held_bytes`.
    TooLarge,
}

/// What trying the rows at a marker gave.
enum Rows<'a> {
    /// More text could change it (the state is as it was).
    Wait,
    /// This row read this markup.
    Found(Format, Parsed<'a>),
    /// No row read it.
    None,
}

/// Try each registry row at `at`; the first parser that accepts wins. Failed parsers are
/// counted in `st.failures` (and `too_large` set when one failed for its size only).
///
/// A parser is run on growing views of the text (`CHECKPOINT`, then doubling, up to
/// `Limits::max_held_bytes`): its call is accepted from the first view where it ends at
/// least `MARGIN` bytes before the view's end (or the view is the whole text), and it
/// fails once it found nothing in a view of `FAIL_MARGIN` bytes, or in the largest view.
/// The whole-text scan and the stream run the same views, so both decide alike; a failed
/// parse costs bounded work.
fn try_rows<'a>(
    text: &'a str,
    at: usize,
    rows: &[usize],
    r: &Read<'_, '_>,
    st: &mut State,
    too_large: &mut bool,
    view_limit: usize,
) -> Rows<'a> {
    let hint = st.hint;
    // Counted only once decided: a row that must wait leaves the state as it was.
    let mut failed = 0;
    for &row in rows {
        let Some(spec) = REGISTRY.get(row) else {
            continue;
        };
        if let When::After(f) = spec.when
            && hint != Some(f)
        {
            continue;
        }
        let first_view = match plausible(spec.format, text, at, r, &mut st.brackets, view_limit) {
            Decision::Wait => return Rows::Wait,
            Decision::No | Decision::TooLarge => continue,
            Decision::Yes(view) => view,
        };
        let cx = Cx { hint, ..*r.cx };
        match decide(text, at, spec, &cx, r, view_limit, first_view) {
            Decision::Wait => return Rows::Wait,
            Decision::Yes(p) => {
                st.failures += failed;
                return Rows::Found(spec.format, p);
            }
            Decision::No => failed += 1,
            Decision::TooLarge => {
                failed += 1;
                *too_large = true;
            }
        }
    }
    st.failures += failed;
    Rows::None
}

/// Run one parser over growing views (see `try_rows`).
fn decide<'a>(
    text: &'a str,
    at: usize,
    spec: &registry::Spec,
    cx: &Cx<'_>,
    r: &Read<'_, '_>,
    view_limit: usize,
    first_view: usize,
) -> Decision<Parsed<'a>> {
    let len = text.len();
    let longest = registry::dispatch().map_or(0, |d| d.longest);
    let largest = cx.limits.max_held_bytes.max(1);
    let mut span = first_view.clamp(1, largest);
    loop {
        let checkpoint = at.saturating_add(span);
        // In a stream, a view is read only once the text reaches past it (so that a marker
        // or a block end straddling it is known).
        if !r.is_final && view_limit >= len && checkpoint.saturating_add(longest) > len {
            return Decision::Wait;
        }
        let end = crate::span::floor_char_boundary(text, checkpoint.min(view_limit).min(len));
        let whole = end >= view_limit.min(len) && (r.is_final || view_limit < len);
        let last = span >= largest;
        let Some(view) = text.get(..end) else { return Decision::No };
        match spec.parse(view, at, cx) {
            Some(p) if p.end > at && p.end <= end && view.is_char_boundary(p.end) => {
                if whole || p.end.saturating_add(MARGIN) <= end {
                    return Decision::Yes(p);
                }
                if last {
                    return Decision::TooLarge;
                }
            }
            _ => {
                if whole || last || end >= at.saturating_add(FAIL_MARGIN) {
                    return Decision::No;
                }
            }
        }
        span = span.saturating_mul(2).min(largest);
    }
}

/// A cheap look at the text after a marker: `No` when the row's parser cannot succeed
/// there (such looks do not count against the budget of failed parses), `Wait` when that
/// cannot be told before more text comes. When plausible, gives the size of the first
/// view to parse in.
fn plausible(
    format: Format,
    text: &str,
    at: usize,
    r: &Read<'_, '_>,
    brackets: &mut Brackets,
    view_limit: usize,
) -> Decision<usize> {
    // The bytes after a JSON bracket decide whether it may open a call (`{"`, `[{`): a
    // stream waits for them, so that the whole and the streamed read ask the bracket pass
    // about the same candidates (where the pass starts changes its answers; fuzzing found
    // a `{` at the end of a chunk starting it early).
    if format == Format::Json && !r.is_final && matches!(text.as_bytes().get(at), Some(b'{' | b'[')) {
        let after = text.as_bytes().get(at + 1..).unwrap_or_default();
        if after.len() < 64 && after.iter().all(u8::is_ascii_whitespace) {
            return Decision::Wait;
        }
    }
    if !registry::plausible(format, text, at) {
        return Decision::No;
    }
    if format != Format::Json || !matches!(text.as_bytes().get(at), Some(b'{' | b'[')) {
        return Decision::Yes(CHECKPOINT);
    }
    // JSON in prose is judged once it is complete, and only when it is complete.
    let Some(view) = text.get(..view_limit.min(text.len())) else { return Decision::No };
    let is_final = r.is_final || view_limit < text.len();
    match brackets.extent(view, at, is_final, r.cx.limits.max_depth) {
        None => Decision::Wait,
        Some(Extent::Closed(e)) => Decision::Yes(e - at + MARGIN),
        Some(Extent::Open | Extent::NotOpener) => Decision::No,
    }
}

fn accept<'a>(
    st: &mut State,
    r: &Read<'_, '_>,
    format: Format,
    at: usize,
    parsed: Parsed<'a>,
    in_reasoning: bool,
) -> Step<'a> {
    let region = Span::new(at, parsed.end);
    // JSON in prose is a call only when its name is a known tool (when tools are known).
    if format == Format::Json
        && let Some(tools) = r.cx.tools
        && let Some(bad) = parsed.calls.iter().find(|c| !tools.is_known(&c.name))
    {
        let span = Span::new(r.base + region.start, r.base + region.end);
        return Step::Noted(Note::new(NoteKind::UnknownTool, span, Some(bad.name.to_string())));
    }
    let cut = !in_reasoning && r.mode == Mode::Content;
    if cut {
        st.touched = true;
    }
    let moved = parsed.reasoning.filter(|_| cut);
    let kept = parsed.prose.filter(|_| cut);
    Step::Calls { region, calls: parsed.calls, reasoning: in_reasoning, cut, moved, kept }
}

/// The next char boundary after `i`.
fn next_boundary(text: &str, i: usize) -> usize {
    let mut j = i + 1;
    while j < text.len() && !text.is_char_boundary(j) {
        j += 1;
    }
    j
}

/// The parts of markup `region` that leave the prose: all of it, or what is around the
/// `kept` text.
pub(crate) fn around(region: Span, kept: Option<Span>) -> impl Iterator<Item = Span> {
    let (a, b) = match kept {
        Some(k) => (Span::new(region.start, k.start), Some(Span::new(k.end, region.end))),
        None => (region, None),
    };
    std::iter::once(a).chain(b)
}

/// What one whole-text pass found.
#[derive(Debug, Default)]
pub(crate) struct Scan<'a> {
    /// Calls outside reasoning, in order.
    pub(crate) calls: Vec<RawCall<'a>>,
    /// Calls inside reasoning (blocks, or the reasoning channel).
    pub(crate) reasoning_calls: Vec<RawCall<'a>>,
    /// Byte ranges cut out of the text, in order.
    pub(crate) removed: Vec<Span>,
    /// Reasoning text found in `content` that leaves it.
    pub(crate) reasoning: Vec<Span>,
    /// Byte ranges cut out of that reasoning text (calls that ended an unclosed block), in
    /// order.
    pub(crate) reasoning_cuts: Vec<Span>,
    /// Things worth telling.
    pub(crate) notes: Vec<Note>,
}

impl Scan<'_> {
    /// Nothing was found: no call, no cut, no reasoning, no note.
    pub(crate) fn is_empty(&self) -> bool {
        let Scan { calls, reasoning_calls, removed, reasoning, reasoning_cuts, notes } = self;
        calls.is_empty()
            && reasoning_calls.is_empty()
            && removed.is_empty()
            && reasoning.is_empty()
            && reasoning_cuts.is_empty()
            && notes.is_empty()
    }
}

/// Read a whole text; `policy` says how calls written in it are taken (`intent`).
///
/// Call markup is judged group by group as the steps go, with the same triggers the
/// stream uses (`stream.rs`), so both judge the same groups with the same windows: a group
/// is judged when markup after it starts a new group, when the text [`intent::AFTER`]
/// bytes past it has been read and more follows, when a reasoning block that moves out of
/// the text ends after it, or at the end of the text.
pub(crate) fn scan<'a>(text: &'a str, cx: &Cx<'_>, mode: Mode, move_blocks: bool, policy: LeakedCalls) -> Scan<'a> {
    let r = Read::new(cx, mode, move_blocks, true, 0);
    let mut st = State::default();
    let mut out = Scan::default();
    // Calls read in the open reasoning block that moves: the model's calls if it never
    // closes.
    let mut held: Vec<(Span, Vec<RawCall<'a>>)> = Vec::new();
    // Call markup of the answer and of reasoning waiting for its group's verdict.
    let judge = Judge { text, policy, tools: cx.tools };
    let thought_place = if mode == Mode::Reasoning { Place::Reasoning } else { Place::Block };
    let mut answer: Groups<Found<'a>> = Groups::default();
    let mut thought: Groups<Found<'a>> = Groups::default();
    while let Some(s) = step(text, &mut st, &r) {
        match s {
            Step::End => break,
            Step::Prose | Step::Skip => {}
            Step::Calls { region, calls, reasoning, cut, moved, kept } => {
                if moved.is_some() {
                    judge.group(&mut out, &mut answer, region.start, Place::Answer);
                }
                out.reasoning.extend(moved);
                if reasoning && !calls.is_empty() && mode == Mode::Content && st.moving_block(move_blocks).is_some() {
                    if cut {
                        out.removed.extend(around(region, kept));
                    }
                    held.push((region, calls));
                } else if reasoning {
                    if cut {
                        out.removed.extend(around(region, kept));
                    }
                    let found = Found { region, kept, cut: false, calls };
                    judge.found(&mut out, &mut thought, found, thought_place);
                } else {
                    judge.found(&mut out, &mut answer, Found { region, kept, cut, calls }, Place::Answer);
                }
            }
            Step::Noted(note) | Step::Exhausted(note) => out.notes.push(note),
            Step::ReasoningCut(span) => out.reasoning_cuts.push(span),
            Step::Forced { reasoning_end, cut_end } => {
                out.removed.push(Span::new(0, cut_end));
                out.reasoning.push(Span::new(0, reasoning_end));
            }
            Step::BlockEnd { moved, unclosed } => {
                if let Some((cut, _)) = moved {
                    judge.group(&mut out, &mut answer, cut.start, Place::Answer);
                }
                for (region, calls) in held.drain(..) {
                    if unclosed && ends_unclosed_reasoning(text.len(), region, &cx.limits) {
                        out.reasoning_cuts.push(region);
                        out.calls.extend(calls);
                    } else {
                        out.reasoning_calls.extend(calls);
                    }
                }
                if let Some((cut, reasoning)) = moved {
                    out.removed.push(cut);
                    out.reasoning.push(reasoning);
                }
            }
        }
        for (groups, place) in [(&mut answer, Place::Answer), (&mut thought, thought_place)] {
            if groups.ready(st.pos, text.len()) {
                let ceiling = groups.window_end();
                judge.group(&mut out, groups, ceiling, place);
            }
        }
    }
    judge.group(&mut out, &mut answer, text.len(), Place::Answer);
    judge.group(&mut out, &mut thought, text.len(), thought_place);
    out.removed.sort_unstable_by_key(|s| s.start);
    // In the order of the text (calls that ended an unclosed block were taken earlier).
    out.calls.sort_by_key(|c| c.span.start);
    out
}

/// A judged group into the scan's result: a call's markup is cut (when the scan cuts it)
/// and its calls taken; shown markup stays, with a note per call.
fn take<'a>(out: &mut Scan<'a>, group: Vec<Found<'a>>, verdict: (Verdict, Signals), place: Place) {
    for f in group {
        match verdict.0 {
            Verdict::Prose => out.notes.extend(f.calls.iter().map(|c| shown(c, verdict.1))),
            Verdict::Taken(intent) => {
                if f.cut {
                    out.removed.extend(around(f.region, f.kept));
                }
                let calls = f.calls.into_iter().map(|c| RawCall { intent, signals: verdict.1, ..c });
                match place {
                    Place::Answer => out.calls.extend(calls),
                    Place::Reasoning | Place::Block => out.reasoning_calls.extend(calls),
                }
            }
        }
    }
}

/// The note for a call the model only showed.
pub(crate) fn shown(call: &RawCall<'_>, signals: Signals) -> Note {
    let mut note = Note::new(NoteKind::ShownCall, call.span, Some(call.name.to_string()));
    note.signals = signals.to_vec();
    note
}

/// Groups of call markup of one place waiting for their verdict, and what the verdicts
/// before left (shared by the whole-text read and the stream).
#[derive(Debug)]
pub(crate) struct Groups<F> {
    /// The group waiting (regions with only layout between).
    pub(crate) open: Vec<F>,
    /// The end of the last group judged (a window before a group stops there).
    pub(crate) floor: usize,
    /// The formats of the markup judged so far (and of the waiting group, once judged).
    pub(crate) forms: intent::Forms,
}

impl<F> Default for Groups<F> {
    fn default() -> Self {
        Groups { open: Vec::new(), floor: 0, forms: intent::Forms::default() }
    }
}

impl<F: Region> Groups<F> {
    /// Where the waiting group's window after it ends at most.
    pub(crate) fn window_end(&self) -> usize {
        self.open.last().map_or(0, |l| l.region().end + intent::AFTER)
    }

    /// True when the waiting group's window after it is complete: the scan is past it and
    /// text follows it (`pos` and `total` counted from the start of the text).
    pub(crate) fn ready(&self, pos: usize, total: usize) -> bool {
        !self.open.is_empty() && pos >= self.window_end() && total > self.window_end()
    }
}

/// Call markup waiting for a verdict: where it is.
pub(crate) trait Region {
    fn region(&self) -> Span;
}

impl Region for Found<'_> {
    fn region(&self) -> Span {
        self.region
    }
}

/// Call markup read, waiting for its group's verdict.
#[derive(Debug)]
pub(crate) struct Found<'a> {
    pub(crate) region: Span,
    pub(crate) kept: Option<Span>,
    /// The markup leaves the text when taken.
    pub(crate) cut: bool,
    pub(crate) calls: Vec<RawCall<'a>>,
}

/// Judges the groups of call markup in one whole text (`intent`).
struct Judge<'t, 'l> {
    text: &'t str,
    policy: LeakedCalls,
    tools: Option<&'l dyn super::ToolLookup>,
}

impl<'a> Judge<'a, '_> {
    /// Markup read: it joins the waiting group when only layout lies between, or the
    /// waiting group is judged (its window ends here) and it starts the next.
    fn found(&self, out: &mut Scan<'a>, groups: &mut Groups<Found<'a>>, found: Found<'a>, place: Place) {
        if let Some(last) = groups.open.last()
            && !intent::only_layout(self.text.get(last.region.end..found.region.start).unwrap_or_default())
        {
            self.group(out, groups, found.region.start, place);
        }
        groups.open.push(found);
    }

    /// Judge the waiting group (if any), its window after it ending at `ceiling`, and take
    /// its result.
    fn group(&self, out: &mut Scan<'a>, groups: &mut Groups<Found<'a>>, ceiling: usize, place: Place) {
        let open = std::mem::take(&mut groups.open);
        let (Some(first), Some(last)) = (open.first(), open.last()) else { return };
        let (start, end) = (first.region.start, last.region.end);
        open.iter().flat_map(|f| &f.calls).for_each(|c| groups.forms.add(c.format));
        let after = intent::after_window(self.text, end, ceiling);
        let verdict = intent::judge(
            intent::before_window(self.text, groups.floor, start),
            after,
            end + after.len() >= self.text.len(),
            &open.iter().flat_map(|f| &f.calls).map(|c| (c.name.as_ref(), c.arguments.as_ref())).collect::<Vec<_>>(),
            groups.forms.mixed(),
            place,
            self.policy,
            self.tools,
        );
        groups.floor = end;
        take(out, open, verdict, place);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain definition: the first char boundary from which the rest of the text is a
    /// proper prefix of a marker.
    fn partial_marker_plain(text: &str, from: usize, d: &registry::Dispatch) -> usize {
        let len = text.len();
        (from.max(len.saturating_sub(d.longest.saturating_sub(1)))..len)
            .find(|&p| {
                text.is_char_boundary(p)
                    && d.patterns.iter().any(|m| m.len() > len - p && m.as_bytes().starts_with(&text.as_bytes()[p..]))
            })
            .unwrap_or(len)
    }

    proptest::proptest! {
        /// The table-driven search finds what the plain definition finds, on text made of
        /// pieces of markers and prose.
        #[test]
        fn partial_marker_is_the_plain_definition(
            pieces in proptest::collection::vec((0usize..400, 0usize..60, 0usize..10), 0..12),
            from in 0usize..200,
        ) {
            let d = registry::dispatch().unwrap();
            let prose = ["", "a", " ", "f", "<", "|", "{", "x y", "é", "◁"];
            let mut text = String::new();
            for (m, cut, p) in pieces {
                let marker = d.patterns[m % d.patterns.len()];
                let mut end = cut.min(marker.len());
                while !marker.is_char_boundary(end) {
                    end -= 1;
                }
                text.push_str(&marker[..end]);
                text.push_str(prose[p % prose.len()]);
            }
            let mut from = from.min(text.len());
            while !text.is_char_boundary(from) {
                from -= 1;
            }
            proptest::prop_assert_eq!(d.partial_marker(&text, from), partial_marker_plain(&text, from, d));
        }
    }
}
