//! One pass over one text: every marker found by the automaton, parsers tried at each, and
//! reasoning blocks tracked.

use super::parsed::{Cx, Parsed, RawCall};
use super::registry::{self, Kind, REASONING, REGISTRY};
use super::{Format, Note, NoteKind};
use crate::Span;
use aho_corasick::Input;

/// Failed parser runs allowed per text before the rest is left as prose: keeps hostile
/// input (thousands of half-open tags) linear.
pub(crate) const FAILED_PARSE_BUDGET: usize = 256;

/// How a text is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `content`: reasoning blocks are tracked, consumed call markup is cut out.
    Content,
    /// `reasoning_content`: every call is a reasoning call, the text is kept as written.
    Reasoning,
}

/// What one pass found.
#[derive(Debug, Default)]
pub(crate) struct Scan<'a> {
    /// Calls outside reasoning blocks, in order.
    pub(crate) calls: Vec<RawCall<'a>>,
    /// Calls inside reasoning (blocks, forced-open reasoning, or the reasoning channel).
    pub(crate) reasoning_calls: Vec<RawCall<'a>>,
    /// Byte ranges cut out of the text (call markup, wrappers), sorted, disjoint.
    pub(crate) removed: Vec<Span>,
    /// Reasoning text found in `content` that leaves it (forced-open reasoning, and
    /// closed blocks when they are moved).
    pub(crate) reasoning: Vec<Span>,
    /// Things worth telling.
    pub(crate) notes: Vec<Note>,
}

/// Where a call ends up.
enum Sink {
    Content,
    Reasoning,
}

/// Read `text` once.
pub(crate) fn scan<'a>(text: &'a str, cx: &Cx<'_>, mode: Mode, move_blocks: bool) -> Scan<'a> {
    let mut out = Scan::default();
    let Some(d) = registry::dispatch() else { return out };
    let mut pos = 0usize;
    let mut failures = 0usize;
    let mut seen_open = false;
    let mut forced_done = false;
    // The reasoning block we are in: (index into REASONING, start of its open marker,
    // where its close marker starts or the end of the text).
    let mut block: Option<(usize, usize, usize)> = None;
    while pos < text.len() {
        let limit = block.map_or(text.len(), |(_, _, close)| close);
        let Some(m) = d.automaton.find(Input::new(text).span(pos..limit)) else {
            match block.take() {
                Some((k, start, close)) => {
                    // The block ends here: its close marker (if any) follows.
                    let close_len = REASONING.get(k).map_or(0, |(_, c)| c.len());
                    let end = if close < text.len() { close + close_len } else { close };
                    if move_blocks && mode == Mode::Content {
                        out.removed.push(Span::new(start, end));
                        let open_len = REASONING.get(k).and_then(|(o, _)| *o).map_or(0, str::len);
                        out.reasoning.push(Span::new(start + open_len, close));
                    }
                    pos = end;
                    continue;
                }
                None => break,
            }
        };
        let kind = d.kinds.get(m.pattern().as_usize());
        match kind {
            Some(Kind::ThinkOpen(k)) if mode == Mode::Content && block.is_none() => {
                seen_open = true;
                let close_marker = REASONING.get(*k).map_or("", |(_, c)| *c);
                let close = text
                    .get(m.end()..)
                    .and_then(|r| r.find(close_marker))
                    .map_or(text.len(), |i| m.end() + i);
                block = Some((*k, m.start(), close));
                pos = m.end();
            }
            Some(Kind::ThinkClose(_))
                if mode == Mode::Content && block.is_none() && !seen_open && !forced_done && out.calls.is_empty() =>
            {
                // Forced-open reasoning: only the close marker appears, and no call came
                // before it. The text before it is reasoning.
                forced_done = true;
                out.removed.retain(|s| s.start >= m.start());
                out.removed.insert(0, Span::new(0, m.end()));
                out.reasoning.push(Span::new(0, m.start()));
                pos = m.end();
            }
            Some(Kind::Call(rows)) => {
                let sink = if block.is_some() || mode == Mode::Reasoning { Sink::Reasoning } else { Sink::Content };
                // Parsers inside a block see the text up to the block's end only.
                let view = text.get(..limit).unwrap_or(text);
                match try_rows(view, m.start(), rows, cx, &mut failures) {
                    Some((format, parsed)) => {
                        let end = parsed.end;
                        accept(&mut out, cx, format, m.start(), parsed, &sink, mode);
                        pos = end;
                    }
                    None => pos = next_boundary(text, m.start()),
                }
                if failures > FAILED_PARSE_BUDGET {
                    out.notes.push(Note {
                        kind: NoteKind::ScanBudgetExhausted,
                        span: Span::new(pos, text.len()),
                        name: None,
                    });
                    break;
                }
            }
            _ => pos = m.end(),
        }
    }
    out
}

/// Try each registry row at `at`; the first parser that accepts wins.
fn try_rows<'a>(
    text: &'a str,
    at: usize,
    rows: &[usize],
    cx: &Cx<'_>,
    failures: &mut usize,
) -> Option<(Format, Parsed<'a>)> {
    for &row in rows {
        let Some(entry) = REGISTRY.get(row) else { continue };
        if !registry::plausible(entry.format, text, at) {
            continue;
        }
        match (entry.parse)(text, at, cx) {
            Some(p) if p.end > at && p.end <= text.len() && text.is_char_boundary(p.end) => {
                return Some((entry.format, p));
            }
            _ => *failures += 1,
        }
    }
    None
}

fn accept<'a>(out: &mut Scan<'a>, cx: &Cx<'_>, format: Format, at: usize, parsed: Parsed<'a>, sink: &Sink, mode: Mode) {
    // JSON in prose is a call only when its name is a known tool (when tools are known).
    if format == Format::Json {
        if let Some(tools) = cx.tools {
            if let Some(bad) = parsed.calls.iter().find(|c| !tools.is_known(&c.name)) {
                out.notes.push(Note {
                    kind: NoteKind::UnknownTool,
                    span: Span::new(at, parsed.end),
                    name: Some(bad.name.to_string()),
                });
                return;
            }
        }
    }
    match sink {
        Sink::Reasoning => out.reasoning_calls.extend(parsed.calls),
        Sink::Content => {
            if mode == Mode::Content {
                out.removed.push(Span::new(at, parsed.end));
            }
            out.calls.extend(parsed.calls);
        }
    }
}

/// The next char boundary after `i`.
fn next_boundary(text: &str, i: usize) -> usize {
    let mut j = i + 1;
    while j < text.len() && !text.is_char_boundary(j) {
        j += 1;
    }
    j
}
