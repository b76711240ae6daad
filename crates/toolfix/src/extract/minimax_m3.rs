//! MiniMax M3: every structural tag is prefixed by `]<]minimax[>[`:
//!
//! ```text
//! ]<]minimax[>[<tool_call>
//! ]<]minimax[>[<invoke name="get_weather">
//! ]<]minimax[>[<city>Paris]<]minimax[>[</city>
//! ]<]minimax[>[<options>]<]minimax[>[<unit>c]<]minimax[>[</unit>]<]minimax[>[</options>
//! ]<]minimax[>[<tags>]<]minimax[>[<item>a]<]minimax[>[</item>]<]minimax[>[</tags>
//! ]<]minimax[>[</invoke>
//! ]<]minimax[>[</tool_call>
//! ```
//!
//! A parameter element holds raw text (typed through the schema, one framing newline
//! stripped at each end), or child elements: an object, or an array when the children
//! are `<item>`. Nesting is read with an explicit stack (depth capped). Unclosed
//! elements are closed by their parent's closer, the invoke's, or the end of the text.

use super::Format;
use super::params::{Untyped, push_json_string, type_raw};
use super::parsed::{Cx, Parsed, RawCall};
use super::tags::{self, Ns, Tag};
use super::text::{clean_name, is_at};
use crate::span::Span;
use serde_json::Value;
use std::borrow::Cow;

const PREFIX: &str = "]<]minimax[>[";

/// Parses a MiniMax M3 tool-call block at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let first = tag_after_prefix(text, at)?;
    if !first.is_open("tool_call") {
        return None;
    }
    let mut pos = first.end;
    let mut calls = Vec::new();
    let mut call: Option<Call<'a, '_>> = None;
    // `None` while the text may end inside the block.
    let mut end = None;
    while let Some(found) = text.get(pos..).and_then(|r| r.find(PREFIX)) {
        let at_tag = pos + found;
        let Some(tag) = tag_after_prefix(text, at_tag) else {
            pos = at_tag + PREFIX.len();
            continue;
        };
        pos = tag.end;
        match (tag.close, tag.name) {
            (false, "invoke") => {
                calls.extend(call.take().map(|c| c.finish(text, at_tag)));
                call = tags::attr(tag.rest, "name")
                    .and_then(clean_name)
                    .map(|name| Call::new(cx, name, at_tag, cx.limits.max_depth));
            }
            (true, "invoke") => {
                calls.extend(call.take().map(|c| c.finish(text, at_tag)).map(|mut c| {
                    c.span = Span::new(c.span.start, tag.end);
                    c
                }));
            }
            (true, "tool_call") => {
                end = Some(tag.end);
                break;
            }
            (false, "tool_call") => {
                end = Some(at_tag);
                break;
            }
            _ => {
                if let Some(call) = call.as_mut() {
                    call.element(text, at_tag, &tag);
                }
            }
        }
    }
    let cut = end.is_none();
    let end = end.unwrap_or(text.len());
    calls.extend(call.take().map(|c| c.finish(text, end).cut_if(cut)));
    if calls.is_empty() {
        return None;
    }
    Some(Parsed::new(end, calls))
}

/// The tag right after the prefix at `pos`.
fn tag_after_prefix(text: &str, pos: usize) -> Option<Tag<'_>> {
    if !is_at(text, pos, PREFIX) {
        return None;
    }
    tags::tag_at(text, pos + PREFIX.len(), Ns::Plain)
}

/// An element being read.
struct Elem<'s> {
    key: String,
    schema: Option<&'s Value>,
    /// Where its raw text starts.
    text_start: usize,
    /// `Some(true)` for an array, `Some(false)` for an object, once a child is seen.
    array: Option<bool>,
    out: String,
    children: usize,
}

/// One invoke being read.
struct Call<'a, 's> {
    name: &'a str,
    start: usize,
    props: Option<&'s serde_json::Map<String, Value>>,
    stack: Vec<Elem<'s>>,
    /// Deepest element nesting read.
    max_depth: usize,
    args: String,
    count: usize,
}

impl<'a, 's> Call<'a, 's> {
    fn new(cx: &Cx<'s>, name: &'a str, start: usize, max_depth: usize) -> Self {
        let props =
            cx.tools.and_then(|t| t.parameters(name)).and_then(|s| s.get("properties")).and_then(Value::as_object);
        Call { name, start, props, stack: Vec::new(), max_depth, args: String::from("{"), count: 0 }
    }

    /// An element tag at `at` (prefix included).
    fn element(&mut self, text: &str, at: usize, tag: &Tag<'_>) {
        if tag.close {
            // Close up to the matching element (unclosed children close with it).
            if let Some(i) = self.stack.iter().rposition(|e| e.key == tag.name) {
                while self.stack.len() > i {
                    self.close_top(text, at);
                }
            }
            return;
        }
        if self.stack.len() + 1 >= self.max_depth {
            return;
        }
        let schema = match self.stack.last_mut() {
            None => self.props.and_then(|p| p.get(tag.name)),
            Some(parent) => {
                let array = *parent.array.get_or_insert(tag.name == "item");
                if parent.children == 0 {
                    parent.out.push(if array { '[' } else { '{' });
                }
                let schema = parent.schema;
                if array {
                    schema.and_then(|s| s.get("items"))
                } else {
                    schema.and_then(|s| s.get("properties")).and_then(|p| p.get(tag.name))
                }
            }
        };
        self.stack.push(Elem {
            key: tag.name.to_owned(),
            schema,
            text_start: tag.end,
            array: None,
            out: String::new(),
            children: 0,
        });
    }

    /// Closes the innermost element, its text ending at `at`.
    fn close_top(&mut self, text: &str, at: usize) {
        let Some(elem) = self.stack.pop() else { return };
        let value = if let Some(array) = elem.array {
            let mut out = elem.out;
            out.push(if array { ']' } else { '}' });
            out
        } else {
            let raw = text.get(elem.text_start..at).unwrap_or("");
            type_raw(tags::strip_framing(raw), elem.schema, Untyped::Json)
        };
        let (out, count, in_array) = if let Some(parent) = self.stack.last_mut() {
            parent.children += 1;
            (&mut parent.out, parent.children, parent.array == Some(true))
        } else {
            self.count += 1;
            (&mut self.args, self.count, false)
        };
        if count > 1 {
            out.push_str(", ");
        }
        if !in_array {
            push_json_string(out, &elem.key);
            out.push_str(": ");
        }
        out.push_str(&value);
    }

    fn finish(mut self, text: &str, end: usize) -> RawCall<'a> {
        while !self.stack.is_empty() {
            self.close_top(text, end);
        }
        self.args.push('}');
        RawCall::new(Cow::Borrowed(self.name), Cow::Owned(self.args), Format::MinimaxM3, Span::new(self.start, end))
    }
}
