//! Python call syntax shared by `pythonic`, `lfm2` and `olmo3`: `f(a=1, b='x')` with
//! dotted names and keyword arguments whose values are Python literals (`'str'`, numbers,
//! `True`/`False`/`None`, the JSON spellings too, dicts, lists and tuples, nested),
//! turned into a JSON arguments object.
//!
//! Literals are read with an explicit stack (depth capped by `Limits::max_depth`), in one
//! forward pass. A call
//! that does not parse (a bytes literal, `1e999`, broken quoting) is dropped and parsing
//! resumes at the next call, so one bad sibling does not lose the good ones.

use super::typed::push_json_string;

/// How calls are separated and the list closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// `[f(), g()]`: comma-separated, closed by `]`.
    List,
    /// `f()\ng()`: one per line (commas accepted), closed by `closer` or the end.
    Lines(&'static str),
}

/// A call read from Python syntax.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PyCall<'a> {
    /// The (possibly dotted) function name.
    pub(crate) name: &'a str,
    /// The keyword arguments as a JSON object text.
    pub(crate) arguments: String,
    /// Byte range of the call text.
    pub(crate) start: usize,
    /// One past the call's `)`.
    pub(crate) end: usize,
}

/// True when `text` at `pos` starts like a call: `name(` then `)` or `kw=`.
pub(crate) fn looks_like_call(text: &str, pos: usize) -> bool {
    let mut c = Cursor { text, pos, max_depth: 0 };
    c.ws();
    if c.dotted_ident().is_none() {
        return false;
    }
    c.ws();
    if !c.eat(b'(') {
        return false;
    }
    c.ws();
    if c.eat(b')') {
        return true;
    }
    if c.ident().is_none() {
        return false;
    }
    c.ws();
    c.peek() == Some(b'=') && c.peek_at(1) != Some(b'=')
}

/// Reads calls from `pos` (after the `[` for [`Layout::List`]) until the list closes.
/// Returns the calls that parsed and the position after the closer (or where reading
/// stopped).
pub(crate) fn parse_calls(text: &str, pos: usize, layout: Layout, max_depth: usize) -> (Vec<PyCall<'_>>, usize) {
    let mut c = Cursor { text, pos, max_depth };
    let mut calls = Vec::new();
    loop {
        c.ws_in(layout);
        if let Some(end) = c.closer(layout) {
            return (calls, end);
        }
        if c.pos >= text.len() {
            return (calls, text.len());
        }
        let start = c.pos;
        if let Some((name, arguments)) = c.call() {
            calls.push(PyCall { name, arguments, start, end: c.pos });
            c.ws_in(layout);
            if let Some(end) = c.closer(layout) {
                return (calls, end);
            }
            if c.eat(b',') || matches!(layout, Layout::Lines(_)) && c.eat_newline() {
                continue;
            }
            // Junk after a call: resynchronise.
            if !c.resync(layout) {
                return (calls, c.pos);
            }
        } else {
            // Look for the next call from just after this one's start: the error
            // may lie past the separator that follows it.
            c.pos = start + 1;
            if !c.resync(layout) {
                return (calls, c.pos);
            }
        }
    }
}

struct Cursor<'a> {
    text: &'a str,
    pos: usize,
    /// Deepest literal nesting read.
    max_depth: usize,
}

#[derive(Clone, Copy, Debug)]
enum Frame {
    /// In a list or tuple closed by this byte.
    Seq(u8),
    /// In a dict, after a value.
    Dict,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }
    fn peek_at(&self, n: usize) -> Option<u8> {
        self.text.as_bytes().get(self.pos + n).copied()
    }
    fn eat(&mut self, b: u8) -> bool {
        let hit = self.peek() == Some(b);
        if hit {
            self.pos += 1;
        }
        hit
    }
    fn starts_with(&self, s: &str) -> bool {
        self.text.get(self.pos..).is_some_and(|r| r.starts_with(s))
    }
    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }
    /// Whitespace, but in line layout stop at a newline (it separates calls).
    fn ws_in(&mut self, layout: Layout) {
        match layout {
            Layout::List => self.ws(),
            Layout::Lines(_) => {
                while matches!(self.peek(), Some(b' ' | b'\t' | b'\r')) {
                    self.pos += 1;
                }
            }
        }
    }
    fn eat_newline(&mut self) -> bool {
        let hit = self.peek() == Some(b'\n');
        if hit {
            self.ws();
        }
        hit
    }
    /// At the closer of the layout: consume it and return the position after it.
    fn closer(&mut self, layout: Layout) -> Option<usize> {
        match layout {
            Layout::List => self.eat(b']').then_some(self.pos),
            Layout::Lines(closer) => {
                let save = self.pos;
                self.ws();
                if self.starts_with(closer) {
                    self.pos += closer.len();
                    return Some(self.pos);
                }
                if self.pos >= self.text.len() {
                    return Some(self.pos);
                }
                self.pos = save;
                None
            }
        }
    }
    /// Skips to the start of the next call after an error: past `, name(` (or a
    /// newline then `name(` in line layout). False when the list ends first (the position
    /// is then after the closer, or at the end of the text), or when a `<` (markup), a
    /// `[` (a nested list or another call list) or, in line layout, a newline not followed
    /// by a call comes first: the scan stays short, so a failing parse does bounded work.
    fn resync(&mut self, layout: Layout) -> bool {
        while let Some(b) = self.peek() {
            let lines = matches!(layout, Layout::Lines(_));
            if (b == b'<' && !self.at_closer(layout)) || (b == b'[' && !lines) {
                return false;
            }
            if b == b'\n' && lines && !looks_like_call(self.text, self.pos + 1) {
                return false;
            }
            let at_sep = b == b',' || (b == b'\n' && matches!(layout, Layout::Lines(_)));
            if at_sep && looks_like_call(self.text, self.pos + 1) {
                self.pos += 1;
                return true;
            }
            match layout {
                Layout::List if b == b']' && self.pos > 0 => {
                    let before = self.text.as_bytes().get(self.pos - 1).copied();
                    if before == Some(b')') {
                        self.pos += 1;
                        return false;
                    }
                }
                Layout::Lines(closer) if self.starts_with(closer) => {
                    self.pos += closer.len();
                    return false;
                }
                _ => {}
            }
            self.pos += 1;
        }
        false
    }

    fn at_closer(&self, layout: Layout) -> bool {
        matches!(layout, Layout::Lines(closer) if self.starts_with(closer))
    }

    fn ident(&mut self) -> Option<&'a str> {
        let start = self.pos;
        match self.peek() {
            Some(b) if b.is_ascii_alphabetic() || b == b'_' => self.pos += 1,
            _ => return None,
        }
        while self.peek().is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
            self.pos += 1;
        }
        self.text.get(start..self.pos)
    }
    fn dotted_ident(&mut self) -> Option<&'a str> {
        let start = self.pos;
        self.ident()?;
        while self.peek() == Some(b'.') && self.peek_at(1).is_some_and(|b| b.is_ascii_alphabetic() || b == b'_') {
            self.pos += 1;
            self.ident()?;
        }
        self.text.get(start..self.pos)
    }

    /// `name(kw=value, ...)`: the name and the arguments object text.
    fn call(&mut self) -> Option<(&'a str, String)> {
        let name = self.dotted_ident()?;
        self.ws();
        if !self.eat(b'(') {
            return None;
        }
        let mut out = String::from("{");
        let mut first = true;
        loop {
            self.ws();
            if self.eat(b')') {
                break;
            }
            let key = self.ident()?;
            self.ws();
            if !self.eat(b'=') {
                return None;
            }
            if !first {
                out.push_str(", ");
            }
            first = false;
            push_json_string(&mut out, key);
            out.push_str(": ");
            self.literal(&mut out)?;
            self.ws();
            if self.eat(b',') {
                continue;
            }
            if self.eat(b')') {
                break;
            }
            return None;
        }
        out.push('}');
        Some((name, out))
    }

    /// One Python literal, written to `out` as JSON.
    fn literal(&mut self, out: &mut String) -> Option<()> {
        let mut stack: Vec<Frame> = Vec::new();
        'value: loop {
            self.ws();
            match self.peek()? {
                b'{' => {
                    self.pos += 1;
                    self.ws();
                    if self.eat(b'}') {
                        out.push_str("{}");
                    } else {
                        if stack.len() + 1 >= self.max_depth {
                            return None;
                        }
                        stack.push(Frame::Dict);
                        out.push('{');
                        self.dict_key(out)?;
                        continue 'value;
                    }
                }
                open @ (b'[' | b'(') => {
                    let close = if open == b'[' { b']' } else { b')' };
                    self.pos += 1;
                    self.ws();
                    if self.eat(close) {
                        out.push_str("[]");
                    } else {
                        if stack.len() + 1 >= self.max_depth {
                            return None;
                        }
                        stack.push(Frame::Seq(close));
                        out.push('[');
                        continue 'value;
                    }
                }
                _ => self.scalar(out)?,
            }
            // After a complete value: close containers or move to the next element.
            loop {
                let Some(frame) = stack.last().copied() else {
                    return Some(());
                };
                self.ws();
                let close = match frame {
                    Frame::Seq(close) => close,
                    Frame::Dict => b'}',
                };
                if self.eat(b',') {
                    self.ws();
                    if self.eat(close) {
                        out.push(if close == b'}' { '}' } else { ']' });
                        stack.pop();
                        continue;
                    }
                    out.push_str(", ");
                    if matches!(frame, Frame::Dict) {
                        self.dict_key(out)?;
                    }
                    continue 'value;
                }
                if self.eat(close) {
                    out.push(if close == b'}' { '}' } else { ']' });
                    stack.pop();
                    continue;
                }
                return None;
            }
        }
    }

    /// A dict key (string, number or literal) and its `:`, written as `"key": `.
    fn dict_key(&mut self, out: &mut String) -> Option<()> {
        self.ws();
        match self.peek()? {
            b'\'' | b'"' => self.string(out)?,
            _ => {
                let mut scalar = String::new();
                self.scalar(&mut scalar)?;
                push_json_string(out, scalar.trim_matches('"'));
            }
        }
        self.ws();
        if !self.eat(b':') {
            return None;
        }
        out.push_str(": ");
        Some(())
    }

    /// A string, number or named constant.
    fn scalar(&mut self, out: &mut String) -> Option<()> {
        let b = self.peek()?;
        if b == b'\'' || b == b'"' {
            return self.string(out);
        }
        if (b == b'r' || b == b'R') && matches!(self.peek_at(1), Some(b'\'' | b'"')) {
            self.pos += 1;
            return self.raw_string(out);
        }
        if b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.') {
            return self.number(out);
        }
        let word = self.ident()?;
        out.push_str(match word {
            "True" | "true" => "true",
            "False" | "false" => "false",
            "None" | "null" => "null",
            _ => return None,
        });
        Some(())
    }

    fn number(&mut self, out: &mut String) -> Option<()> {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'_')) {
            self.pos += 1;
        }
        let raw: String = self.text.get(start..self.pos)?.chars().filter(|&c| c != '_').collect();
        let raw = raw.strip_prefix('+').unwrap_or(&raw);
        let (sign, body) = raw.strip_prefix('-').map_or(("", raw), |b| ("-", b));
        let mut norm = String::from(sign);
        if body.starts_with('.') {
            norm.push('0');
        }
        let (mantissa, exponent) = match body.find(['e', 'E']) {
            Some(i) => (body.get(..i)?, body.get(i..)?),
            None => (body, ""),
        };
        norm.push_str(mantissa);
        if mantissa.ends_with('.') {
            norm.push('0');
        }
        norm.push_str(exponent);
        let n = super::typed::number_text(&norm)?;
        out.push_str(n);
        Some(())
    }

    fn string(&mut self, out: &mut String) -> Option<()> {
        let quote = self.peek()?;
        let triple = self.peek_at(1) == Some(quote) && self.peek_at(2) == Some(quote);
        self.pos += if triple { 3 } else { 1 };
        let mut value = String::new();
        loop {
            let rest = self.text.get(self.pos..)?;
            let mut chars = rest.chars();
            let c = chars.next()?;
            if c as u32 == u32::from(quote) {
                if !triple {
                    self.pos += 1;
                    break;
                }
                if self.peek_at(1) == Some(quote) && self.peek_at(2) == Some(quote) {
                    self.pos += 3;
                    break;
                }
            }
            if c == '\n' && !triple {
                return None;
            }
            if c == '\\' {
                let e = chars.next()?;
                self.pos += 1 + e.len_utf8();
                match e {
                    'n' => value.push('\n'),
                    't' => value.push('\t'),
                    'r' => value.push('\r'),
                    'b' => value.push('\u{8}'),
                    'f' => value.push('\u{c}'),
                    '0' => value.push('\0'),
                    '\n' => {}
                    'x' | 'u' => {
                        let len = if e == 'x' { 2 } else { 4 };
                        let hex = self.text.get(self.pos..self.pos + len)?;
                        let ch = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32)?;
                        value.push(ch);
                        self.pos += len;
                    }
                    '\\' | '\'' | '"' => value.push(e),
                    other => {
                        value.push('\\');
                        value.push(other);
                    }
                }
                continue;
            }
            value.push(c);
            self.pos += c.len_utf8();
        }
        push_json_string(out, &value);
        Some(())
    }

    fn raw_string(&mut self, out: &mut String) -> Option<()> {
        let quote = self.peek()?;
        self.pos += 1;
        let rest = self.text.get(self.pos..)?;
        let end = rest.find(char::from(quote))?;
        let value = rest.get(..end)?;
        if value.contains('\n') {
            return None;
        }
        self.pos += end + 1;
        push_json_string(out, value);
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn args(call: &str) -> Option<Value> {
        let mut c = Cursor { text: call, pos: 0, max_depth: 128 };
        let (_, out) = c.call()?;
        Some(serde_json::from_str(&out).unwrap())
    }

    #[test]
    fn literals() {
        assert_eq!(
            args(
                "f(name='John Doe', age=37, address={'city': 'SF', 1: 2}, role=None, ok=True, l=['a', (1, 2)], e=[], d={})"
            ),
            Some(
                json!({"name": "John Doe", "age": 37, "address": {"city": "SF", "1": 2}, "role": null, "ok": true, "l": ["a", [1, 2]], "e": [], "d": {}})
            )
        );
        assert_eq!(
            args(r#"f(a='Martha\'s', b='\"x\"', c="tab\tq", d=r'C:\new')"#),
            Some(json!({"a": "Martha's", "b": "\"x\"", "c": "tab\tq", "d": "C:\\new"}))
        );
        assert_eq!(
            args("f(a=-1.5e3, b=.5, c=5., d=+2, e=1_000)"),
            Some(json!({"a": -1.5e3, "b": 0.5, "c": 5.0, "d": 2, "e": 1000}))
        );
        assert_eq!(args("f(a=[1, 2,], b={'k': 'v',})"), Some(json!({"a": [1, 2], "b": {"k": "v"}})));
        assert_eq!(args("f(a=null, b=true)"), Some(json!({"a": null, "b": true})));
        assert_eq!(args("f(a='''multi\nline''')"), Some(json!({"a": "multi\nline"})));
    }

    #[test]
    fn rejected() {
        assert_eq!(args("f(x=b'z')"), None);
        assert_eq!(args("f(x=1e999)"), None);
        assert_eq!(args("f(x=1])"), None);
        assert_eq!(args("f(x=y)"), None);
        assert_eq!(args("f('positional')"), None);
        let deep = format!("f(x={}{})", "[".repeat(200), "]".repeat(200));
        assert_eq!(args(&deep), None);
    }

    #[test]
    fn recovery() {
        let text = "bad(x=b'z'), get_weather(city='SF'), f(a='x 'y', b='z')]tail";
        let (calls, end) = parse_calls(text, 0, Layout::List, 128);
        let names: Vec<_> = calls.iter().map(|c| c.name).collect();
        assert_eq!(names, vec!["get_weather"]);
        assert_eq!(&text[end..], "tail");
        let text = "f(a=1)\nbad(x=\ng(b=2)</function_calls>rest";
        let (calls, end) = parse_calls(text, 0, Layout::Lines("</function_calls>"), 128);
        let names: Vec<_> = calls.iter().map(|c| c.name).collect();
        assert_eq!(names, vec!["f", "g"]);
        assert_eq!(&text[end..], "rest");
    }

    #[test]
    fn call_shape() {
        assert!(looks_like_call("get_weather(city='x')", 0));
        assert!(looks_like_call(" a.b.c()", 0));
        assert!(!looks_like_call("see above", 0));
        assert!(!looks_like_call("f(x)", 0));
        assert!(!looks_like_call("f(x == 1)", 0));
    }
}
