//! `<invoke name="N"><parameter name="K">raw</parameter></invoke>` elements, shared by
//! MiniMax M2, Anthropic-style `<function_calls>` XML, Muse (`atem:`) — each a [`Block`]
//! of invokes, a grammar row of the registry — and Step-3 (`steptml:`, in its own
//! section tokens).
//!
//! Missing `</parameter>` ends a value at the next parameter or invoke tag; a missing
//! `</invoke>` ends the call at the next invoke, at a stop token of the format, or at the
//! end of the text (a cut-off call keeps what was given).

use super::Format;
use super::params::{Args, Untyped};
use super::parsed::{Cx, Markers, Parsed, RawCall, matched};
use super::tags::{self, Ns, Tag};
use super::text::{clean_name, is_at, markup_or_end, skip_ws};
use crate::span::Span;
use std::borrow::Cow;

/// A block of invokes after a start marker, closed by `close`.
#[derive(Debug)]
pub(crate) struct Block {
    /// The block's closing marker.
    pub(crate) close: &'static str,
    /// How its invokes are written.
    pub(crate) syntax: Syntax,
}

/// MiniMax M2: `<minimax:tool_call>` invokes `</minimax:tool_call>`; untyped values stay
/// strings (as MiniMax's own parser keeps them).
pub(crate) const MINIMAX_M2: Block = Block {
    close: "</minimax:tool_call>",
    syntax: Syntax {
        ns: Ns::Plain,
        block: "minimax:tool_call",
        stops: &[],
        framing: true,
        untyped: Untyped::String,
        format: Format::MinimaxM2,
    },
};

/// Anthropic-style `<function_calls>` invokes `</function_calls>`.
pub(crate) const FUNCTION_CALLS: Block = Block {
    close: "</function_calls>",
    syntax: Syntax {
        ns: Ns::Plain,
        block: "function_calls",
        stops: &[],
        framing: true,
        untyped: Untyped::Json,
        format: Format::FunctionCallsXml,
    },
};

/// Muse: ` to=N<|message|><atem:function_calls>` `<atem:invoke>`s `</atem:function_calls>`
/// (the harmony-style header before the block is optional).
pub(crate) const MUSE: Block = Block {
    close: "</atem:function_calls>",
    syntax: Syntax {
        ns: Ns::Prefix("atem:"),
        block: "function_calls",
        stops: &[],
        framing: true,
        untyped: Untyped::Json,
        format: Format::MuseGlimmer,
    },
};

/// Parses the block of the row with `markers` at `at` (where one of its start markers is).
pub(crate) fn parse_block<'a>(
    block: &Block,
    markers: &Markers,
    text: &'a str,
    pos: usize,
    cx: &Cx<'_>,
) -> Option<Parsed<'a>> {
    let marker = matched(markers.start, text, pos)?;
    let (calls, after) = parse_invokes(text, pos + marker.len(), &block.syntax, cx);
    if calls.is_empty() {
        return None;
    }
    let q = skip_ws(text, after);
    let end = if is_at(text, q, block.close) { q + block.close.len() } else { after };
    Some(Parsed::new(end, calls))
}

/// How a format writes its invoke elements.
#[derive(Debug)]
pub(crate) struct Syntax {
    /// Tag namespace.
    pub(crate) ns: Ns,
    /// Name of the tag closing the enclosing block (ends an unclosed invoke).
    pub(crate) block: &'static str,
    /// Raw tokens that end an unclosed invoke (`<｜tool_call_end｜>`).
    pub(crate) stops: &'static [&'static str],
    /// Whether one newline after `<parameter>` and one before `</parameter>` are framing.
    pub(crate) framing: bool,
    /// What to do with values the schema does not type.
    pub(crate) untyped: Untyped,
    /// The format reported.
    pub(crate) format: Format,
}

/// What ended the scan for the next structural element.
enum Next<'a> {
    Tag(Tag<'a>),
    Stop(usize),
    End,
}

/// The next invoke/parameter/block tag or stop token at or after `from`.
fn next<'a>(text: &'a str, from: usize, syn: &Syntax) -> Next<'a> {
    let mut pos = from;
    loop {
        let Some(off) = text.get(pos..).and_then(|r| r.find('<')) else {
            return Next::End;
        };
        let lt = pos + off;
        let rest = text.get(lt..).unwrap_or("");
        if syn.stops.iter().any(|s| rest.starts_with(s)) {
            return Next::Stop(lt);
        }
        if let Some(tag) = tags::tag_at(text, lt, syn.ns) {
            if matches!(tag.name, "invoke" | "parameter") || tag.name == syn.block {
                return Next::Tag(tag);
            }
            pos = tag.end;
        } else {
            pos = lt + 1;
        }
    }
}

/// True when an invoke open tag of `syn` is at `pos`.
pub(crate) fn invoke_at(text: &str, pos: usize, syn: &Syntax) -> bool {
    tags::tag_at(text, pos, syn.ns).is_some_and(|t| t.is_open("invoke"))
}

/// Parses the invoke element at `at` (an invoke open tag). Returns the call (when it has a
/// usable name) and the position after the element.
pub(crate) fn parse_invoke<'a>(
    text: &'a str,
    at: usize,
    syn: &Syntax,
    cx: &Cx<'_>,
) -> Option<(Option<RawCall<'a>>, usize)> {
    let open = tags::tag_at(text, at, syn.ns).filter(|t| t.is_open("invoke"))?;
    let name = tags::attr(open.rest, "name").and_then(clean_name);
    let mut args = name.map(|n| Args::new(cx, n));
    let mut pos = open.end;
    let mut cut = false;
    let end = loop {
        match next(text, pos, syn) {
            Next::Tag(tag) if tag.is_open("parameter") => {
                let (value, after) = param_value(text, tag.end, syn);
                let key = tags::attr(tag.rest, "name").filter(|k| !k.is_empty());
                if let (Some(args), Some(key)) = (args.as_mut(), key) {
                    let value = if syn.framing { tags::strip_framing(value) } else { value };
                    args.push_raw(key, value, syn.untyped);
                }
                pos = after;
                let closed = text.get(..after).is_some_and(|t| t.ends_with("parameter>"));
                if closed && !markup_or_end(text, after) {
                    // Prose after a closed parameter: the invoke's closers are missing.
                    break after;
                }
            }
            Next::Tag(tag) if tag.is_close("invoke") => break tag.end,
            Next::Tag(tag) if tag.is_close("parameter") => pos = tag.end,
            Next::Tag(tag) => break tag.start,
            Next::Stop(at) => break at,
            Next::End => {
                cut = true;
                break text.len();
            }
        }
    };
    let call = name
        .zip(args)
        .map(|(name, args)| {
            RawCall::new(Cow::Borrowed(name), Cow::Owned(args.finish()), syn.format, Span::new(at, end))
        })
        .map(|c| c.cut_if(cut));
    Some((call, end))
}

/// Parses invokes one after another from `pos` (whitespace between them allowed).
/// Returns the calls and the position after the last invoke.
pub(crate) fn parse_invokes<'a>(text: &'a str, mut pos: usize, syn: &Syntax, cx: &Cx<'_>) -> (Vec<RawCall<'a>>, usize) {
    let mut calls = Vec::new();
    loop {
        let p = skip_ws(text, pos);
        let Some((call, after)) = parse_invoke(text, p, syn, cx) else {
            break;
        };
        calls.extend(call);
        pos = after;
    }
    (calls, pos)
}

/// The raw value of a parameter starting at `from`, and where parsing goes on.
fn param_value<'a>(text: &'a str, from: usize, syn: &Syntax) -> (&'a str, usize) {
    match next(text, from, syn) {
        Next::Tag(tag) if tag.is_close("parameter") => (text.get(from..tag.start).unwrap_or(""), tag.end),
        Next::Tag(tag) => (unclosed(text.get(from..tag.start).unwrap_or("")), tag.start),
        Next::Stop(at) => (unclosed(text.get(from..at).unwrap_or("")), at),
        Next::End => (text.get(from..).unwrap_or(""), text.len()),
    }
}

/// An unclosed value: the newline before the next tag is layout.
fn unclosed(value: &str) -> &str {
    value.strip_suffix('\n').unwrap_or(value)
}
