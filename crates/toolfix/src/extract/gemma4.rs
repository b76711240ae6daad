//! Gemma 4: `<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|>`.
//!
//! Keys are bare (or `<|"|>`-quoted), strings are wrapped in `<|"|>` (no escapes inside),
//! other values are JSON-like scalars (`3`, `true`, `null`; Python's `True`/`None` too),
//! objects and arrays nest. A bare word value is kept as a string. Read with an explicit
//! stack (depth capped). The same `key: value` pairs may come in parentheses,
//! `call:get_weather(city: <|"|>Paris<|"|>)` (vLLM's Gemma 4 parser reads both). The end
//! marker may be missing, or written `<turn|>`. A call cut off at the end keeps its
//! arguments open where they stopped (`{"city": "Par`), so the cut is seen downstream.
//! Several `call:` in one block, or repeated blocks, are read; `call` may be left out
//! (`<|tool_call>:get_weather{…}`), and so may `call:` before a declared tool's name.

use super::Format;
use super::params::{number_text, push_json_string};
use super::parsed::{Cx, Parsed, RawCall};
use super::text::{clean_name, is_at, skip_ws};
use crate::span::Span;
use std::borrow::Cow;

const OPEN: &str = "<|tool_call>";
const CLOSE: &str = "<tool_call|>";
/// Some checkpoints end a call with the turn's end instead (vLLM `gemma4_utils.py`).
const TURN_END: &str = "<turn|>";
const QUOTE: &str = "<|\"|>";

/// Parses Gemma 4 call blocks at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let mut calls = Vec::new();
    let mut pos = at;
    let mut end = at;
    loop {
        let p = skip_ws(text, pos);
        if !is_at(text, p, OPEN) {
            break;
        }
        let mut q = p + OPEN.len();
        let mut block_calls = 0;
        loop {
            q = skip_ws(text, q);
            if is_at(text, q, ",") {
                q = skip_ws(text, q + 1);
            }
            let from = if is_at(text, q, "call:") {
                q + "call:".len()
            } else if is_at(text, q, ":") && block_calls == 0 {
                // `call` left out: `<|tool_call>:get_weather{…}`.
                q + 1
            } else if names_declared_tool(text, q, cx) {
                // `call:` left out before a declared tool's name.
                q
            } else {
                break;
            };
            let Some((name, args, after, cut)) = read_call(text, from, cx.limits.max_depth) else {
                break;
            };
            let call = RawCall::new(Cow::Borrowed(name), Cow::Owned(args), Format::Gemma4, Span::new(q, after));
            calls.push(call.cut_if(cut));
            block_calls += 1;
            q = after;
        }
        if block_calls == 0 {
            break;
        }
        let c = skip_ws(text, q);
        end = if is_at(text, c, CLOSE) {
            c + CLOSE.len()
        } else if is_at(text, c, TURN_END) {
            c + TURN_END.len()
        } else {
            q
        };
        pos = end;
    }
    if calls.is_empty() {
        return None;
    }
    Some(Parsed::new(end, calls))
}

/// True when `N{` at `pos` names a tool the request declared.
fn names_declared_tool(text: &str, pos: usize, cx: &Cx<'_>) -> bool {
    let Some(tools) = cx.tools else { return false };
    let rest = text.get(pos..).unwrap_or("");
    let len = rest.bytes().take(super::text::MAX_NAME + 1).take_while(|b| !matches!(b, b'{' | b'(')).count();
    matches!(rest.as_bytes().get(len), Some(b'{' | b'(')) && rest.get(..len).is_some_and(|n| tools.is_known(n))
}

/// `N{...}` or `N(...)` from `pos`: the name, the arguments JSON text (left open where
/// the text ended, when it did), the position after the closer, and whether the text
/// ended inside the arguments.
fn read_call(text: &str, pos: usize, max_depth: usize) -> Option<(&str, String, usize, bool)> {
    let rest = text.get(pos..)?;
    let brace = rest.find(['{', '(', '<', '\n'])?;
    let parens = match rest.as_bytes().get(brace) {
        Some(b'{') => false,
        Some(b'(') => true,
        _ => return None,
    };
    let name = clean_name(rest.get(..brace)?)?;
    let mut r = Reader { text, pos: pos + brace, max_depth, cut: false };
    let mut out = String::new();
    r.value(&mut out, parens)?;
    if !out.starts_with('{') {
        return None;
    }
    Some((name, out, r.pos, r.cut))
}

struct Reader<'a> {
    text: &'a str,
    pos: usize,
    max_depth: usize,
    /// The text ended inside the value.
    cut: bool,
}

#[derive(Clone, Copy)]
enum Frame {
    Object,
    Array,
    /// `name(k: v, …)`: an object written in parentheses.
    Args,
}

impl Frame {
    /// The closer as written.
    fn closer(self) -> &'static str {
        match self {
            Frame::Object => "}",
            Frame::Array => "]",
            Frame::Args => ")",
        }
    }

    /// The closer in JSON.
    fn json_closer(self) -> &'static str {
        match self {
            Frame::Object | Frame::Args => "}",
            Frame::Array => "]",
        }
    }
}

impl<'a> Reader<'a> {
    fn rest(&self) -> &'a str {
        self.text.get(self.pos..).unwrap_or("")
    }
    fn ws(&mut self) {
        self.pos = skip_ws(self.text, self.pos);
    }
    fn eat(&mut self, s: &str) -> bool {
        let hit = self.rest().starts_with(s);
        if hit {
            self.pos += s.len();
        }
        hit
    }
    /// At the end of the text (the value is cut off) or at the block's closer.
    fn at_end(&mut self) -> bool {
        let rest = self.rest();
        self.cut |= rest.is_empty();
        rest.is_empty() || rest.starts_with(CLOSE) || rest.starts_with(TURN_END)
    }

    /// The text ended, or the block closed, inside the value: cut off, it stays open where
    /// it stopped (salvage closes it and reports the cut); at a closer, open containers
    /// are closed.
    fn stop(&self, out: &mut String, stack: &mut Vec<Frame>) {
        if !self.cut {
            close_all(out, stack);
        }
    }

    /// One value (in `parens`: the arguments of `name(…)`), with an explicit stack for
    /// nesting.
    fn value(&mut self, out: &mut String, parens: bool) -> Option<()> {
        let mut stack: Vec<Frame> = Vec::new();
        if parens && self.eat("(") {
            stack.push(Frame::Args);
            out.push('{');
            self.ws();
            if self.eat(")") {
                stack.pop();
                out.push('}');
                return Some(());
            }
            if self.key_or_end(out, &mut stack)? {
                return Some(());
            }
        }
        'value: loop {
            self.ws();
            if self.at_end() {
                self.stop(out, &mut stack);
                return Some(());
            }
            if self.eat("{") {
                if stack.len() >= self.max_depth {
                    return None;
                }
                stack.push(Frame::Object);
                out.push('{');
                self.ws();
                if !self.eat("}") {
                    if self.key_or_end(out, &mut stack)? {
                        return Some(());
                    }
                    continue 'value;
                }
                stack.pop();
                out.push('}');
            } else if self.eat("[") {
                if stack.len() >= self.max_depth {
                    return None;
                }
                stack.push(Frame::Array);
                out.push('[');
                self.ws();
                if !self.eat("]") {
                    continue 'value;
                }
                stack.pop();
                out.push(']');
            } else {
                self.scalar(out);
            }
            loop {
                let Some(frame) = stack.last().copied() else {
                    return Some(());
                };
                self.ws();
                if self.at_end() {
                    self.stop(out, &mut stack);
                    return Some(());
                }
                if self.eat(frame.closer()) {
                    out.push_str(frame.json_closer());
                    stack.pop();
                    continue;
                }
                if self.eat(",") {
                    self.ws();
                    if self.eat(frame.closer()) {
                        out.push_str(frame.json_closer());
                        stack.pop();
                        continue;
                    }
                    out.push_str(", ");
                    if matches!(frame, Frame::Object | Frame::Args) && self.key_or_end(out, &mut stack)? {
                        return Some(());
                    }
                    continue 'value;
                }
                return None;
            }
        }
    }

    /// A key and its `:`; true when the text ends right after it (cut off: left open
    /// after the `:`, no value is made up; at the block's closer the value is `null`).
    fn key_or_end(&mut self, out: &mut String, stack: &mut Vec<Frame>) -> Option<bool> {
        self.key(out)?;
        self.ws();
        if self.at_end() {
            if !self.cut {
                out.push_str("null");
            }
            self.stop(out, stack);
            return Some(true);
        }
        Some(false)
    }

    /// A key and its `:`, written as `"key": `.
    fn key(&mut self, out: &mut String) -> Option<()> {
        self.ws();
        let key = if self.eat(QUOTE) {
            let rest = self.rest();
            let len = rest.find(QUOTE)?;
            let key = rest.get(..len)?.to_owned();
            self.pos += len + QUOTE.len();
            key
        } else {
            let rest = self.rest();
            let len = rest.find([':', ',', '}', ')', '<', '\n'])?;
            let key = rest.get(..len)?.trim().trim_matches(['"', '\'']).to_owned();
            self.pos += len;
            key
        };
        if key.is_empty() {
            return None;
        }
        self.ws();
        if !self.eat(":") {
            return None;
        }
        push_json_string(out, &key);
        out.push_str(": ");
        Some(())
    }

    /// A `<|"|>` string, a JSON string, or a bare scalar up to `,` `}` `]` `)`.
    fn scalar(&mut self, out: &mut String) {
        if self.eat(QUOTE) {
            let rest = self.rest();
            if let Some(len) = rest.find(QUOTE) {
                push_json_string(out, rest.get(..len).unwrap_or(""));
                self.pos += len + QUOTE.len();
            } else if let Some(len) = rest.find(CLOSE) {
                // The string's end left out before the block's closer.
                push_json_string(out, rest.get(..len).unwrap_or(""));
                self.pos += len;
            } else {
                // Cut off inside the string: it stays open.
                push_json_string(out, rest);
                out.pop();
                self.pos += rest.len();
                self.cut = true;
            }
            return;
        }
        let rest = self.rest();
        let len = rest.find([',', '}', ']', ')', '\n']).unwrap_or(rest.len());
        let len = rest.get(..len).and_then(|r| r.find(CLOSE)).unwrap_or(len);
        if len == rest.len() {
            // Cut off inside a bare value: written as it stands (`tr` stays cut, never
            // `true`); a number that may go on is left for salvage to judge.
            let raw = rest.trim();
            self.pos += len;
            self.cut = true;
            match (literal(raw), number_text(raw)) {
                (Some(lit), _) => out.push_str(lit),
                (None, Some(n)) => out.push_str(n),
                (None, None) => {
                    push_json_string(out, raw);
                    out.pop();
                }
            }
            return;
        }
        let raw = rest.get(..len).unwrap_or("").trim();
        self.pos += len;
        if let Some(lit) = literal(raw) {
            out.push_str(lit);
        } else if let Some(n) = number_text(raw) {
            out.push_str(n);
        } else if raw.starts_with('"') && serde_json::from_str::<String>(raw).is_ok() {
            out.push_str(raw);
        } else {
            push_json_string(out, raw);
        }
    }
}

/// A JSON or Python literal, as JSON.
fn literal(raw: &str) -> Option<&'static str> {
    match raw {
        "true" | "True" => Some("true"),
        "false" | "False" => Some("false"),
        "null" | "None" => Some("null"),
        _ => None,
    }
}

/// Closes every open container (at the block's closer, with the call's closers left out).
fn close_all(out: &mut String, stack: &mut Vec<Frame>) {
    if out.ends_with(", ") {
        out.truncate(out.len() - 2);
    }
    while let Some(frame) = stack.pop() {
        out.push_str(frame.json_closer());
    }
}
