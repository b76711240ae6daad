//! Gemma 4: `<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|>`.
//!
//! Keys are bare (or `<|"|>`-quoted), strings are wrapped in `<|"|>` (no escapes inside),
//! other values are JSON-like scalars (`3`, `true`, `null`; Python's `True`/`None` too),
//! objects and arrays nest. A bare word value is kept as a string. Read with an explicit
//! stack (depth capped). A call cut off at the end is closed where it stopped; the end
//! marker may be missing. Several `call:` in one block, or repeated blocks, are read.

use super::Format;
use super::params::{number_text, push_json_string};
use super::parsed::{Cx, Parsed, RawCall};
use super::tags;
use crate::Span;
use std::borrow::Cow;

const OPEN: &str = "<|tool_call>";
const CLOSE: &str = "<tool_call|>";
const QUOTE: &str = "<|\"|>";
const MAX_DEPTH: usize = 128;

/// Start marker.
pub(crate) const MARKERS: &[&str] = &[OPEN];

/// Parses Gemma 4 call blocks at `at`.
pub(crate) fn parse<'a>(text: &'a str, at: usize, _cx: &Cx<'_>) -> Option<Parsed<'a>> {
    let mut calls = Vec::new();
    let mut pos = at;
    let mut end = at;
    loop {
        let p = tags::skip_ws(text, pos);
        if !tags::at(text, p, OPEN) {
            break;
        }
        let mut q = p + OPEN.len();
        let mut block_calls = 0;
        loop {
            q = tags::skip_ws(text, q);
            if tags::at(text, q, ",") {
                q = tags::skip_ws(text, q + 1);
            }
            if !tags::at(text, q, "call:") {
                break;
            }
            let Some((name, args, after)) = read_call(text, q + "call:".len()) else {
                break;
            };
            calls.push(RawCall {
                name: Cow::Borrowed(name),
                arguments: Cow::Owned(args),
                id: None,
                format: Format::Gemma4,
                span: Span::new(q, after),
            });
            block_calls += 1;
            q = after;
        }
        if block_calls == 0 {
            break;
        }
        let c = tags::skip_ws(text, q);
        end = if tags::at(text, c, CLOSE) { c + CLOSE.len() } else { q };
        pos = end;
    }
    if calls.is_empty() {
        return None;
    }
    Some(Parsed { end, calls })
}

/// `N{...}` from `pos`: the name, the arguments JSON text and the position after `}`.
fn read_call(text: &str, pos: usize) -> Option<(&str, String, usize)> {
    let rest = text.get(pos..)?;
    let brace = rest.find(['{', '<', '\n'])?;
    if rest.as_bytes().get(brace) != Some(&b'{') {
        return None;
    }
    let name = tags::clean_name(rest.get(..brace)?)?;
    let mut r = Reader { text, pos: pos + brace };
    let mut out = String::new();
    r.value(&mut out)?;
    if !out.starts_with('{') {
        return None;
    }
    Some((name, out, r.pos))
}

struct Reader<'a> {
    text: &'a str,
    pos: usize,
}

#[derive(Clone, Copy)]
enum Frame {
    Object,
    Array,
}

impl<'a> Reader<'a> {
    fn rest(&self) -> &'a str {
        self.text.get(self.pos..).unwrap_or("")
    }
    fn ws(&mut self) {
        self.pos = tags::skip_ws(self.text, self.pos);
    }
    fn eat(&mut self, s: &str) -> bool {
        let hit = self.rest().starts_with(s);
        if hit {
            self.pos += s.len();
        }
        hit
    }
    fn at_end(&self) -> bool {
        let rest = self.rest();
        rest.is_empty() || rest.starts_with(CLOSE)
    }

    /// One value, with an explicit stack for nesting. At the end of the text (cut off)
    /// open containers are closed.
    fn value(&mut self, out: &mut String) -> Option<()> {
        let mut stack: Vec<Frame> = Vec::new();
        'value: loop {
            self.ws();
            if self.at_end() {
                {
                    close_all(out, &mut stack);
                    return Some(());
                }
            }
            if self.eat("{") {
                if stack.len() >= MAX_DEPTH {
                    return None;
                }
                stack.push(Frame::Object);
                out.push('{');
                self.ws();
                if !self.eat("}") {
                    self.key(out)?;
                    if self.at_end() {
                        out.push_str("null");
                        {
                            close_all(out, &mut stack);
                            return Some(());
                        }
                    }
                    continue 'value;
                }
                stack.pop();
                out.push('}');
            } else if self.eat("[") {
                if stack.len() >= MAX_DEPTH {
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
                    {
                        close_all(out, &mut stack);
                        return Some(());
                    }
                }
                let close = match frame {
                    Frame::Object => "}",
                    Frame::Array => "]",
                };
                if self.eat(close) {
                    out.push_str(close);
                    stack.pop();
                    continue;
                }
                if self.eat(",") {
                    self.ws();
                    if self.eat(close) {
                        out.push_str(close);
                        stack.pop();
                        continue;
                    }
                    out.push_str(", ");
                    if matches!(frame, Frame::Object) {
                        self.key(out)?;
                        if self.at_end() {
                            out.push_str("null");
                            {
                                close_all(out, &mut stack);
                                return Some(());
                            }
                        }
                    }
                    continue 'value;
                }
                return None;
            }
        }
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
            let len = rest.find([':', ',', '}', '<', '\n'])?;
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

    /// A `<|"|>` string, a JSON string, or a bare scalar up to `,` `}` `]`.
    fn scalar(&mut self, out: &mut String) {
        if self.eat(QUOTE) {
            let rest = self.rest();
            let (value, used) = match rest.find(QUOTE) {
                Some(len) => (rest.get(..len).unwrap_or(""), len + QUOTE.len()),
                None => (rest.find(CLOSE).and_then(|l| rest.get(..l)).unwrap_or(rest), rest.len()),
            };
            push_json_string(out, value);
            self.pos += used.min(rest.len());
            return;
        }
        let rest = self.rest();
        let len = rest.find([',', '}', ']', '\n']).unwrap_or(rest.len());
        let len = rest.get(..len).and_then(|r| r.find(CLOSE)).unwrap_or(len);
        let raw = rest.get(..len).unwrap_or("").trim();
        self.pos += len;
        let lit = match raw {
            "true" | "True" => Some("true"),
            "false" | "False" => Some("false"),
            "null" | "None" => Some("null"),
            _ => None,
        };
        if let Some(lit) = lit {
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

/// Closes every open container (a cut-off call keeps what was given).
fn close_all(out: &mut String, stack: &mut Vec<Frame>) {
    if out.ends_with(", ") {
        out.truncate(out.len() - 2);
    }
    while let Some(frame) = stack.pop() {
        out.push(match frame {
            Frame::Object => '}',
            Frame::Array => ']',
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn calls(text: &str) -> Vec<(String, Value)> {
        let at = text.find(OPEN).unwrap();
        let cx = Cx { tools: None };
        parse(text, at, &cx)
            .map(|p| {
                p.calls
                    .into_iter()
                    .map(|c| (c.name.into_owned(), serde_json::from_str(&c.arguments).unwrap()))
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn single_call() {
        let text = "<|tool_call>call:get_weather{city:<|\"|>Paris, France<|\"|>,days:3,metric:true}<tool_call|>";
        assert_eq!(
            calls(text),
            vec![("get_weather".into(), json!({"city": "Paris, France", "days": 3, "metric": true}))]
        );
    }

    #[test]
    fn nested_and_parallel() {
        let text = "Sure.<|tool_call>call:create{item:{name:<|\"|>a, b<|\"|>,tags:[<|\"|>x<|\"|>,<|\"|>y<|\"|>],n:null}}<tool_call|>\n<|tool_call>call:list{}<tool_call|> after";
        assert_eq!(
            calls(text),
            vec![
                ("create".into(), json!({"item": {"name": "a, b", "tags": ["x", "y"], "n": null}})),
                ("list".into(), json!({}))
            ]
        );
        let cx = Cx { tools: None };
        let at = text.find(OPEN).unwrap();
        assert_eq!(&text[parse(text, at, &cx).unwrap().end..], " after");
    }

    #[test]
    fn quotes_and_markup_inside_strings() {
        let text = "<|tool_call>call:write{code:<|\"|>print(\"}{\")\n<tool_call|><|\"|>}<tool_call|>";
        assert_eq!(calls(text), vec![("write".into(), json!({"code": "print(\"}{\")\n<tool_call|>"}))]);
    }

    #[test]
    fn cut_off_and_bare_words() {
        let text = "<|tool_call>call:search{query:<|\"|>rust lang";
        assert_eq!(calls(text), vec![("search".into(), json!({"query": "rust lang"}))]);
        let text = "<|tool_call>call:f{a:[1,2";
        assert_eq!(calls(text), vec![("f".into(), json!({"a": [1, 2]}))]);
        let text = "<|tool_call>call:f{unit:celsius,x:-1.5}";
        assert_eq!(calls(text), vec![("f".into(), json!({"unit": "celsius", "x": -1.5}))]);
        assert_eq!(calls("<|tool_call>hello<tool_call|>"), vec![]);
        let deep = format!("<|tool_call>call:f{{a:{}}}", "[".repeat(300));
        assert_eq!(calls(&deep), vec![]);
    }
}
