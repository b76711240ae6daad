//! The lenient parser: one pass, an explicit stack, edits instead of copies.
//!
//! The parser walks one region of the input (the text inside a fence, or after prose) and
//! records [`Edits`] that turn it into strict JSON. Every decision looks at most
//! [`LOOKAHEAD`](super::lex::LOOKAHEAD) bytes ahead, so the whole pass is linear.

use super::FixKind as K;
use super::edits::Edits;
use super::lex::{
    ellipsis_len, fence_at, hex4, ident_then_colon, is_ident, is_ident_start, is_ws, key_then_colon, open_quote,
    quoted_then, skip_ws, value_starts,
};
use super::truncation::{Truncation, Uncertain, UncertainKind};
use crate::{Error, ErrorKind, Result, Span};

/// What kind of container a frame is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Object,
    Array,
    /// A Python tuple `( … )`: an array, or just its value when it holds one and no comma.
    Tuple,
    /// `ObjectId( … )`-style wrapper: its one value stands for it.
    Wrapper,
}

/// Where a frame is in its grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Object: a key or `}`; arrays: a value or the closer.
    Open,
    /// Object: after a key, before `:`.
    Colon,
    /// Object: after `:`, before the value.
    Value,
    /// After a member: `,` or the closer.
    Next,
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    kind: Kind,
    state: State,
    /// Byte of the opening bracket (or the wrapper name).
    open: usize,
    /// Members or elements so far.
    count: usize,
    /// A comma that is not yet followed by a member.
    pending_comma: Option<usize>,
    /// End of the last member, where a missing comma goes.
    last_end: usize,
    /// End of the last key, where a missing colon goes.
    key_end: usize,
    /// A comma was seen (tuples: decides array vs. plain value).
    saw_comma: bool,
    /// The last element was a string (an array that meets `:` after it is an object).
    last_was_string: bool,
    /// The closer must be rewritten to this one (a set `{a, b}` is an array, an array
    /// with `k: v` pairs is an object).
    close_as: Option<u8>,
}

/// Context of a string, which decides what may follow its closing quote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ctx {
    Top,
    Key,
    ObjValue,
    ArrValue,
}

/// The result of parsing one top-level value.
#[derive(Clone, Copy, Debug)]
pub(super) struct ValueSpan {
    pub(super) start: usize,
    pub(super) end: usize,
    /// The value is an empty `{}` or `[]`.
    pub(super) empty_container: bool,
}

pub(super) struct Parser<'a> {
    src: &'a str,
    b: &'a [u8],
    pub(super) pos: usize,
    pub(super) end: usize,
    pub(super) edits: Edits,
    stack: Vec<Frame>,
    max_depth: usize,
    /// The frame closed last (to reopen it after a premature `}`).
    last_closed: Option<(Frame, usize)>,
    /// A token that ran into the end of input: its kind, start, and whether it was kept.
    pub(super) cut_token: Option<(UncertainKind, usize, bool)>,
    /// How the input ended, when it ended with something open.
    pub(super) cut: Option<Truncation>,
    /// The `"` after the closing fence of a value fenced inside quotes (`"```json {…}```"`).
    quoted_fence: Option<usize>,
    /// The last search for a closing fence: from where, up to where, and the first one
    /// found (so repeated searches stay linear on hostile input).
    fence_search: Option<(usize, usize, Option<usize>)>,
}

impl<'a> Parser<'a> {
    pub(super) fn new(src: &'a str, max_depth: usize) -> Self {
        Parser {
            src,
            b: src.as_bytes(),
            pos: 0,
            end: src.len(),
            edits: Edits::for_text(src.len()),
            stack: Vec::with_capacity(16),
            max_depth,
            last_closed: None,
            cut_token: None,
            cut: None,
            quoted_fence: None,
            fence_search: None,
        }
    }

    /// The whole input, as bytes.
    pub(super) fn bytes(&self) -> &'a [u8] {
        self.b
    }

    /// Forget any open frames (after a failed attempt).
    pub(super) fn reset_stack(&mut self) {
        self.stack.clear();
        self.last_closed = None;
        self.cut_token = None;
        self.cut = None;
        self.quoted_fence = None;
    }

    fn at(&self, i: usize) -> Option<u8> {
        if i < self.end { self.b.get(i).copied() } else { None }
    }

    #[cold]
    fn error(&self, kind: ErrorKind, message: &str, at: usize) -> Error {
        Error::at(kind, message, self.src, at)
    }

    /// Skip whitespace and comments, deleting comments and non-JSON whitespace.
    #[inline]
    pub(super) fn skip_trivia(&mut self) {
        // Fast path: JSON whitespace, then a byte that starts no comment or odd space.
        let i = skip_ws(self.b, self.pos, self.end);
        self.pos = i;
        if self.at(i).is_none_or(|c| !matches!(c, b'/' | b'#' | b'`' | b'<' | 0x0B | 0x0C | 0xC2 | 0xE2 | 0xE3 | 0xEF))
        {
            return;
        }
        self.skip_trivia_slow();
    }

    /// [`Parser::skip_trivia`] past a byte that may start a comment or non-JSON whitespace
    /// (every byte its `match` handles must be in the fast path's list).
    #[inline(never)]
    fn skip_trivia_slow(&mut self) {
        loop {
            let i = skip_ws(self.b, self.pos, self.end);
            self.pos = i;
            let Some(c) = self.at(i) else { return };
            match c {
                b'/' if self.at(i + 1) == Some(b'/') => self.line_comment(i),
                b'#' => self.line_comment(i),
                b'`' if self.b.get(i..i + 3) == Some(b"```") => self.fence_marker(i),
                b'/' if self.at(i + 1) == Some(b'*') => {
                    let close = find(self.b, b"*/", i + 2, self.end).map_or(self.end, |j| j + 2);
                    self.edits.delete(i, close, Some(K::Comment));
                    self.pos = close;
                }
                b'<' if self.b.get(i..i + 4) == Some(b"<!--") => {
                    let close = find(self.b, b"-->", i + 4, self.end).map_or(self.end, |j| j + 3);
                    self.edits.delete(i, close, Some(K::Comment));
                    self.pos = close;
                }
                0x0B | 0x0C => {
                    self.edits.delete(i, i + 1, Some(K::StrayText));
                    self.pos = i + 1;
                }
                0xC2 | 0xE2 | 0xE3 | 0xEF => {
                    let n = unicode_space_len(self.b, i);
                    if n == 0 {
                        return;
                    }
                    self.edits.delete(i, i + n, Some(K::StrayText));
                    self.pos = i + n;
                }
                _ => return,
            }
        }
    }

    /// A Markdown fence marker where a value, key or delimiter belongs (`{"a": ```json
    /// {…}```}`, `[```\n{…}\n```]`): JSON has no backticks outside strings, so it goes,
    /// with the language tag of an opening one.
    fn fence_marker(&mut self, i: usize) {
        let (mut j, t) = fence_at(self.b, i, self.end);
        if t > j && self.at(t).is_none_or(|c| is_ws(c) || c == b'{' || c == b'[') {
            j = t;
        }
        let q = skip_ws(self.b, j, self.end);
        if self.quoted_fence == Some(q) {
            self.quoted_fence = None;
            j = q + 1;
        }
        self.edits.delete(i, j, Some(K::CodeFence));
        self.pos = j;
    }

    /// `"```json {"k": 1}```"`: a value fenced inside quotes whose own quotes are not
    /// escaped, so it is not a string that shows a fence. The quote and fence go (the
    /// closing pair when the parser reaches it); true when it was one.
    fn quoted_fence(&mut self, i: usize) -> bool {
        let (_, tag) = fence_at(self.b, i + 1, self.end);
        let body = skip_ws(self.b, tag, self.end);
        if !matches!(self.at(body), Some(b'{' | b'[')) {
            return false;
        }
        // The value's own quotes are not escaped: `{"k"` or `["a"` (an escaped one,
        // `{\"k\"`, is a string that shows a fence, valid as it is).
        if self.at(skip_ws(self.b, body + 1, self.end)) != Some(b'"') {
            return false;
        }
        let close = match self.fence_search {
            Some((from, to, found)) if from <= body && to == self.end && found.is_none_or(|c| body <= c) => found,
            _ => {
                let found = find(self.b, b"```", body, self.end);
                self.fence_search = Some((body, self.end, found));
                found
            }
        };
        let Some(close) = close else {
            return false;
        };
        let q = skip_ws(self.b, fence_at(self.b, close, self.end).0, self.end);
        if self.at(q) != Some(b'"') {
            return false;
        }
        self.edits.delete(i, body, Some(K::CodeFence));
        self.quoted_fence = Some(q);
        self.pos = body;
        true
    }

    fn line_comment(&mut self, i: usize) {
        let eol = memchr_in(self.b, b'\n', i, self.end).unwrap_or(self.end);
        // A comment ends at `\n`; a lone `\r` ends it too.
        let mut eol = memchr_in(self.b, b'\r', i, eol).unwrap_or(eol);
        if eol == self.end && self.b[i] == b'#' && !self.stack.is_empty() {
            // `{"k": "v" # note }, "k2": 1}` on the last line: read to the end, the comment
            // would take the closers and members after it; it ends before the first closer.
            if let Some(c) = self.b[i..eol].iter().position(|&c| matches!(c, b'}' | b']')) {
                eol = i + c;
            }
        }
        self.edits.delete(i, eol, Some(K::Comment));
        self.pos = eol;
    }

    /// Parse one top-level value starting at `self.pos` (after trivia).
    pub(super) fn value(&mut self) -> Result<ValueSpan> {
        let start = self.pos;
        self.cut_token = None;
        self.start_value(Ctx::Top)?;
        loop {
            if self.stack.is_empty() {
                if self.reopen_after_premature_close() {
                    continue;
                }
                let empty = matches!(self.b.get(start..self.pos), Some(b"{}" | b"[]"));
                return Ok(ValueSpan { start, end: self.pos, empty_container: empty });
            }
            self.skip_trivia();
            if self.pos >= self.end {
                self.close_at_eof();
                return Ok(ValueSpan { start, end: self.end, empty_container: false });
            }
            self.step()?;
        }
    }

    /// One step inside the top frame.
    fn step(&mut self) -> Result<()> {
        let i = self.pos;
        let c = self.b[i];
        let Some(&frame) = self.stack.last() else {
            return Ok(());
        };
        match (frame.kind, frame.state, c) {
            (Kind::Wrapper, State::Open, b'}' | b']' | b')') => {
                // `ISODate()`: a constructor with no value stands for none we can write.
                return Err(self
                    .error(ErrorKind::Syntax, "a wrapper holds no value", i)
                    .with_hint("write the value itself, such as \"2024-01-01T00:00:00Z\", instead of `ISODate()`"));
            }
            (_, _, b'}' | b']' | b')') => self.closer(c),
            (Kind::Object | Kind::Array | Kind::Tuple, State::Open, b',') => {
                let kind = if frame.count == 0 { K::LeadingComma } else { K::DoubledComma };
                self.edits.delete(i, i + 1, Some(kind));
                self.pos += 1;
            }
            (_, State::Next, b'"')
                if i == frame.last_end
                    && !frame.last_was_string
                    && matches!(self.at(skip_ws(self.b, i + 1, self.end)), None | Some(b',' | b'}' | b']')) =>
            {
                // `12345",`: a number whose opening quote is missing.
                self.edits.delete(i, i + 1, Some(K::MissingQuote));
                self.pos += 1;
            }
            (Kind::Object, State::Open, b':') => {
                self.edits.delete(i, i + 1, Some(K::StrayText));
                self.pos += 1;
            }
            (Kind::Wrapper, State::Next, b',') => {
                return Err(self
                    .error(ErrorKind::Syntax, "a wrapper holds more than one value", i)
                    .with_hint("a wrapper such as `ObjectId(…)` holds one value: write that value alone"));
            }
            (_, State::Next, b',') => {
                if i == frame.last_end
                    && self.at(i + 1).is_some_and(|d| d.is_ascii_digit())
                    && thousands_separator(self.b, i, frame.kind == Kind::Object)
                {
                    return Err(self
                        .error(ErrorKind::Syntax, "a number is written with a thousands separator", i)
                        .with_hint("write the number without separators (1234), or quote it as a string"));
                }
                let f = self.top();
                f.pending_comma = Some(i);
                f.saw_comma = true;
                f.state = State::Open;
                self.pos += 1;
            }
            (_, State::Next, b'.' | 0xE2) if ellipsis_len(self.b, i) > 0 => {
                // `[1, 2...]`: a placeholder glued to the last element.
                let n = ellipsis_len(self.b, i);
                self.edits.delete(i, i + n, Some(K::Ellipsis));
                self.pos = i + n;
            }
            // `{"a": 1, ...}`: a placeholder where a key would be is dropped, never a key.
            (Kind::Object, State::Open, b'.' | 0xE2) if ellipsis_len(self.b, i) > 0 => self.ellipsis(),
            (Kind::Object, State::Open, _) => self.key()?,
            (Kind::Object, State::Colon, _) => self.colon()?,
            (Kind::Object, State::Value, b',') => {
                self.edits.insert(i, "null", Some(K::MissingValue));
                self.value_done(i, false);
            }
            (Kind::Object, State::Value, b'.' | 0xE2) if self.placeholder_value(frame, i) => {}
            (Kind::Object, State::Value, _) => self.start_value(Ctx::ObjValue)?,
            (Kind::Object, State::Next, _) => self.object_next()?,
            (_, State::Open, _) if ellipsis_len(self.b, i) > 0 => self.ellipsis(),
            (Kind::Wrapper, State::Next, _) => {
                return Err(self
                    .error(ErrorKind::Syntax, "expected `)` to close the wrapper", i)
                    .with_hint("a wrapper such as `ObjectId(…)` holds one value: close it after that value"));
            }
            (_, State::Open | State::Value | State::Colon, _) => self.start_value(Ctx::ArrValue)?,
            (_, State::Next, b':')
                if frame.kind == Kind::Array
                    && frame.count == 1
                    && frame.last_was_string
                    && open_quote(self.b, skip_ws(self.b, frame.open + 1, frame.last_end)).is_some() =>
            {
                // `["key": "value"]`: a member inside brackets is an object inside an array
                // whose braces are missing; the object closes where the array does.
                let key = skip_ws(self.b, frame.open + 1, frame.last_end);
                self.edits.insert(key, "{", Some(K::ArrayAsObject));
                let f = self.top();
                f.count = 0;
                f.state = State::Open;
                self.push(Kind::Object, key - 1)?;
                let o = self.top();
                o.state = State::Value;
                o.key_end = frame.last_end;
                self.pos += 1;
            }
            (_, State::Next, _) => {
                if value_starts(self.b, i) || is_ident_start(c) {
                    self.edits.insert(frame.last_end, ",", Some(K::MissingComma));
                    let f = self.top();
                    f.state = State::Open;
                    f.saw_comma = true;
                } else {
                    return Err(self
                        .error(ErrorKind::Syntax, "expected `,` or a closing bracket", i)
                        .with_hint("separate elements with `,` and close the array with `]`"));
                }
            }
        }
        Ok(())
    }

    fn top(&mut self) -> &mut Frame {
        // `step` only runs with a frame on the stack.
        let last = self.stack.len().saturating_sub(1);
        &mut self.stack[last]
    }

    fn push(&mut self, kind: Kind, open: usize) -> Result<()> {
        if self.stack.len() >= self.max_depth {
            return Err(self
                .error(ErrorKind::TooDeep, &format!("nesting deeper than {} levels", self.max_depth), open)
                .with_hint("flatten the value or raise the depth limit"));
        }
        if let Some(parent) = self.stack.last_mut() {
            parent.pending_comma = None;
        }
        self.stack.push(Frame {
            kind,
            state: State::Open,
            open,
            count: 0,
            pending_comma: None,
            last_end: open + 1,
            key_end: open + 1,
            saw_comma: false,
            last_was_string: false,
            close_as: None,
        });
        Ok(())
    }

    /// A value (scalar or container) finished at `end`.
    fn value_done(&mut self, end: usize, was_string: bool) {
        self.pos = self.pos.max(end);
        if let Some(f) = self.stack.last_mut() {
            f.state = State::Next;
            f.count += 1;
            f.pending_comma = None;
            f.last_end = end;
            f.last_was_string = was_string;
        }
    }

    /// `{"a": 1, "b": ..., "c": 2}`: a placeholder where a value would be stands for no
    /// value, so the member goes (reported), never a `"..."` string or a `null`. True
    /// when it was one.
    fn placeholder_value(&mut self, frame: Frame, i: usize) -> bool {
        let n = ellipsis_len(self.b, i);
        if n == 0 {
            return false;
        }
        let j = skip_ws(self.b, i + n, self.end);
        let end = match self.at(j) {
            Some(b',') => j + 1,
            Some(b'}') | None => i + n,
            _ => return false,
        };
        let start = self.key_start(frame);
        // A key with a quote inside (`""key"`, `".,"c"`) is not found back exactly: the
        // scan back stops at an inner quote (one the string scan escaped). Then the member
        // stays, the placeholder a string.
        if self.edits.has_fix_at(start, K::InnerQuote) {
            return false;
        }
        // The comma before the member is pending again (a trailing one is dropped). When
        // there is no such comma in the text (one was inserted), the placeholder stays a
        // string, as before, rather than leave a comma behind.
        let comma = if frame.count == 0 {
            None
        } else {
            match memchr_in(self.b, b',', frame.last_end, start) {
                Some(c) => Some(c),
                None => return false,
            }
        };
        // The key's own fixes (requoting, the quote inserted before an unquoted key, a
        // missing colon) go with it.
        self.edits.clear_value(start, end);
        self.edits.delete(start, end, Some(K::Ellipsis));
        let f = self.top();
        f.state = State::Open;
        f.pending_comma = comma;
        self.pos = end;
        true
    }

    fn ellipsis(&mut self) {
        let i = self.pos;
        let n = ellipsis_len(self.b, i);
        let mut end = i + n;
        // Take a following comma along: `[1, ..., 2]`.
        let j = skip_ws(self.b, end, self.end);
        if self.at(j) == Some(b',') {
            end = j + 1;
        }
        self.edits.delete(i, end, Some(K::Ellipsis));
        self.pos = end;
    }

    fn key(&mut self) -> Result<()> {
        let i = self.pos;
        let c = self.b[i];
        if open_quote(self.b, i).is_some() {
            let end = self.string(Ctx::Key)?;
            if end.is_none() {
                return Ok(()); // key cut off by the end of input: dropped
            }
        } else if c == b'{' || c == b'[' {
            return Err(self.error(ErrorKind::Syntax, "expected a key, found a value", i).with_hint(
                "a member needs a key: write `\"key\": value`, or put the value inside the array it belongs to",
            ));
        } else {
            let mut j = i;
            while j < self.end && (is_ident(self.b[j]) || self.b[j] == b'\\') {
                j += 1;
            }
            if j == i {
                return Err(self
                    .error(ErrorKind::Syntax, "expected a key", i)
                    .with_hint("write the key in double quotes: `\"key\": value`"));
            }
            let k = skip_ws(self.b, j, self.end);
            match self.at(k) {
                None => {
                    // `{"a": 1, b`: a key cut off by the end of input names nothing
                    // certain; it goes, as a quoted one does.
                    self.forget_missing_comma();
                    self.cut_token = Some((UncertainKind::Key, i, false));
                    self.edits.delete(i, self.end, Some(K::TruncatedKey));
                    self.pos = self.end;
                    return Ok(());
                }
                Some(b':' | b',' | b'}' | b'=') => self.quote_key(i, j),
                // `{a 'b'}`: a word then a quoted value (not a quoted key) is a key whose
                // colon is missing, not prose before a key.
                _ if open_quote(self.b, k).is_some() && !key_then_colon(self.b, k, self.end) => self.quote_key(i, j),
                _ => {
                    // Prose between members: `{"a": 1, NOTE "b": 2}`.
                    let stop = self.stray_end(k);
                    self.edits.delete(i, stop, Some(K::StrayText));
                    self.pos = stop;
                    return Ok(());
                }
            }
        }
        let end = self.pos;
        let f = self.top();
        f.state = State::Colon;
        f.key_end = end;
        f.pending_comma = None;
        // The colon that follows (the common case) is taken here, as the next step would.
        let k = skip_ws(self.b, end, self.end);
        if self.at(k) == Some(b':') {
            self.pos = k + 1;
            self.top().state = State::Value;
        }
        Ok(())
    }

    /// Quote the unquoted key at `i..j`.
    fn quote_key(&mut self, i: usize, j: usize) {
        self.edits.insert(i, "\"", Some(K::UnquotedKey));
        for k in i..j {
            // `\u0061` is an escape JSON shares; any other backslash is literal, and so is a
            // surrogate's (a lone one would change on a second pass).
            let shared =
                self.at(k + 1) == Some(b'u') && hex4(self.b, k + 2).is_some_and(|v| !(0xD800..=0xDFFF).contains(&v));
            if self.b[k] == b'\\' && !shared {
                self.edits.insert(k, "\\", None);
            }
        }
        self.edits.insert(j, "\"", None);
        self.pos = j;
    }

    /// Where stray words end: before the next quote, bracket or comma.
    fn stray_end(&self, from: usize) -> usize {
        let mut j = from;
        while j < self.end && !matches!(self.b[j], b'"' | b'\'' | b'{' | b'}' | b'[' | b']' | b',') {
            j += 1;
        }
        j
    }

    fn colon(&mut self) -> Result<()> {
        let i = self.pos;
        let frame = *self.top();
        match self.b[i] {
            b':' => {
                self.pos += 1;
                self.top().state = State::Value;
            }
            b'=' => {
                self.edits.replace(i, i + 1, ":", Some(K::MissingColon));
                self.pos += 1;
                self.top().state = State::Value;
            }
            b',' | b'}' if frame.count == 0 && self.is_set_like(i) => {
                // {'a', 'b'}: a Python set, i.e. an array.
                self.edits.replace(frame.open, frame.open + 1, "[", Some(K::TupleOrSet));
                let f = self.top();
                f.kind = Kind::Array;
                f.close_as = Some(b']');
                f.state = State::Next;
                f.count = 1;
                f.last_end = frame.key_end;
            }
            b',' | b'}' => {
                self.edits.insert(frame.key_end, ": null", Some(K::MissingValue));
                self.value_done(frame.key_end, false);
                self.pos = i;
            }
            _ if value_starts(self.b, i) || is_ident_start(self.b[i]) => {
                self.edits.insert(frame.key_end, ":", Some(K::MissingColon));
                self.top().state = State::Value;
            }
            _ => {
                return Err(self
                    .error(ErrorKind::Syntax, "expected `:` after the key", i)
                    .with_hint("write `\"key\": value`"));
            }
        }
        Ok(())
    }

    /// After a first key with no value: is every member a bare value (a set)?
    fn is_set_like(&self, i: usize) -> bool {
        if self.b[i] == b'}' {
            return true;
        }
        // `{"a", "b"}` is a set; `{"a", "b": 1}` is an object missing a value.
        let j = skip_ws(self.b, i + 1, self.end);
        !key_then_colon(self.b, j, self.end)
    }

    fn object_next(&mut self) -> Result<()> {
        let i = self.pos;
        let frame = *self.top();
        let c = self.b[i];
        if open_quote(self.b, i).is_some() || (is_ident_start(c) && ident_then_colon(self.b, i, self.end)) {
            self.edits.insert(frame.last_end, ",", Some(K::MissingComma));
            self.top().state = State::Open;
            return Ok(());
        }
        if c == b'+' {
            return Err(self
                .error(ErrorKind::Syntax, "unexpected `+` after a value", i)
                .with_hint("join strings into one string; JSON has no `+`"));
        }
        if is_ident_start(c) || c.is_ascii_digit() {
            // `{"a": "x" true}` or prose after a member: drop the stray words.
            let stop = self.stray_end(i);
            self.edits.delete(i, stop, Some(K::StrayText));
            self.pos = stop;
            return Ok(());
        }
        Err(self
            .error(ErrorKind::Syntax, "expected `,` or `}` after the member", i)
            .with_hint("separate members with `,` and close the object with `}`"))
    }

    /// Handle a closing bracket `c` at `self.pos`.
    fn closer(&mut self, c: u8) {
        let i = self.pos;
        let Some(top) = self.stack.last().copied() else {
            return;
        };
        if closes(top, c) {
            self.close_top(i, i + 1, c);
            return;
        }
        let deeper = self.stack.iter().rposition(|f| closes(*f, c));
        let Some(depth) = deeper else {
            if skip_ws(self.b, i + 1, self.end) >= self.end && top.kind != Kind::Wrapper {
                // `{"a": 1]` at the end of the text: a typo for the top's closer, which
                // closes it as the right one would (a tuple's close rewrites the byte itself).
                let right = match top.kind {
                    Kind::Object => b'}',
                    Kind::Tuple => b')',
                    _ => b']',
                };
                if top.kind == Kind::Tuple {
                    self.edits.note(i, i + 1, K::MismatchedBracket);
                } else {
                    self.edits.replace(i, i + 1, if right == b'}' { "}" } else { "]" }, Some(K::MismatchedBracket));
                }
                self.close_top(i, i + 1, right);
                return;
            }
            self.edits.delete(i, i + 1, Some(K::ExtraClosingBracket));
            self.pos += 1;
            return;
        };
        // Either `c` is a typo for the top's closer, or the frames above `depth` lack
        // their closers. What follows decides: a key after `,` means an object context.
        let j = skip_ws(self.b, i + 1, self.end);
        let after_comma = (self.at(j) == Some(b',')).then(|| skip_ws(self.b, j + 1, self.end));
        let parent_of = |idx: usize| idx.checked_sub(1).and_then(|p| self.stack.get(p)).map(|f| f.kind);
        let top_idx = self.stack.len() - 1;
        let typo_parent = parent_of(top_idx);
        let missing_parent = parent_of(depth);
        let wants_object = after_comma.map(|k| key_then_colon(self.b, k, self.end));
        let typo = match wants_object {
            Some(true) => typo_parent == Some(Kind::Object) || missing_parent != Some(Kind::Object),
            Some(false) => typo_parent != Some(Kind::Object) || missing_parent == Some(Kind::Object),
            None => false,
        };
        if typo && matches!(top.kind, Kind::Tuple | Kind::Wrapper) {
            // `[(1], 2]`: the typo closes the tuple or wrapper as its `)` would.
            self.edits.note(i, i + 1, K::MismatchedBracket);
            self.close_top(i, i + 1, b')');
        } else if typo {
            let closer = closer_text(top);
            self.settle_before_close(top, i);
            self.edits.replace(i, i + 1, closer, Some(K::MismatchedBracket));
            self.close_frame(i + 1);
            self.pos = i + 1;
        } else {
            self.edits.note(i, i + 1, K::MismatchedBracket);
            while self.stack.len() > depth + 1 {
                if let Some(f) = self.stack.last().copied() {
                    self.finish_frame_at(f, i);
                }
                self.close_frame(i);
            }
            self.close_top(i, i + 1, c);
        }
    }

    /// Close the top frame with the closer at `i..end`.
    fn close_top(&mut self, i: usize, end: usize, c: u8) {
        let Some(f) = self.stack.last().copied() else { return };
        self.settle_before_close(f, i);
        match f.kind {
            Kind::Tuple => self.close_tuple(f, i, end),
            Kind::Wrapper => {
                self.edits.delete(i, end, None);
            }
            _ => {
                if let Some(want) = f.close_as {
                    if want != c {
                        self.edits.replace(i, end, if want == b'}' { "}" } else { "]" }, None);
                    }
                } else if c == b')' {
                    self.edits.replace(i, end, "]", Some(K::MismatchedBracket));
                }
            }
        }
        self.pos = end;
        self.close_frame(end);
    }

    /// Before frame `f` closes at `i`: drop its trailing comma, give a dangling key `null`.
    fn settle_before_close(&mut self, f: Frame, i: usize) {
        if let Some(comma) = f.pending_comma {
            self.edits.delete(comma, comma + 1, Some(K::TrailingComma));
        }
        if f.kind == Kind::Object && f.state == State::Colon {
            self.edits.insert(f.key_end, ": null", Some(K::MissingValue));
        } else if f.kind == Kind::Object && f.state == State::Value {
            self.edits.insert(i, "null", Some(K::MissingValue));
        }
    }

    fn close_tuple(&mut self, f: Frame, i: usize, end: usize) {
        if f.count == 1 && !f.saw_comma {
            // (x) is just x.
            self.edits.delete(f.open, f.open + 1, Some(K::TupleOrSet));
            self.edits.delete(i, end, None);
        } else {
            self.edits.replace(f.open, f.open + 1, "[", Some(K::TupleOrSet));
            self.edits.replace(i, end, "]", None);
        }
    }

    /// Pop the top frame, which ended at `end`, and tell its parent.
    fn close_frame(&mut self, end: usize) {
        if let Some(f) = self.stack.pop() {
            self.last_closed = Some((f, end));
            self.value_done(end, false);
        }
    }

    /// Before closing a frame that lacked its closer at `at`: insert what it needs.
    fn finish_frame_at(&mut self, f: Frame, at: usize) {
        if let Some(comma) = f.pending_comma {
            self.edits.delete(comma, comma + 1, Some(K::TrailingComma));
        }
        match (f.kind, f.state) {
            (Kind::Object, State::Colon) => {
                self.edits.insert(f.key_end, ": null", None);
            }
            (Kind::Object, State::Value) => {
                self.edits.insert(at, " null", None);
            }
            _ => {}
        }
        match f.kind {
            Kind::Tuple => {
                if f.count == 1 && !f.saw_comma {
                    self.edits.delete(f.open, f.open + 1, None);
                } else {
                    self.edits.replace(f.open, f.open + 1, "[", None);
                    self.edits.insert(at, "]", None);
                }
            }
            Kind::Wrapper => {}
            _ => {
                self.edits.insert(at, closer_text(f), None);
            }
        }
    }

    /// The input ended with frames open: close them all.
    fn close_at_eof(&mut self) {
        self.record_cut();
        let end = self.end;
        let mut noted = false;
        while let Some(f) = self.stack.last().copied() {
            if f.kind == Kind::Wrapper && f.count == 0 {
                // `ObjectId(` cut before its value holds nothing: it goes, and its parent
                // is left waiting for the value (an object's key gets `null` below).
                self.stack.pop();
                if self.stack.last().is_some_and(|p| p.kind != Kind::Object) {
                    // In an array the element is nothing: the comma inserted before it goes.
                    self.edits.clear_value(f.open, end);
                    self.forget_missing_comma();
                    let mut k = f.open;
                    while k > 0 && is_ws(self.b[k - 1]) {
                        k -= 1;
                    }
                    if k > 0 && self.b[k - 1] == b',' {
                        self.edits.delete(k - 1, k, Some(K::TrailingComma));
                    }
                    self.edits.delete(f.open, end, Some(K::TruncatedToken));
                }
                continue;
            }
            if f.kind == Kind::Object && matches!(f.state, State::Colon | State::Value) {
                let at = if f.state == State::Colon { f.key_end } else { end };
                let text = if f.state == State::Colon { ": null" } else { " null" };
                self.edits.insert(at, text, Some(K::TruncatedKey));
                let f2 = self.top();
                f2.state = State::Next;
            }
            let f = self.stack.last().copied().unwrap_or(f);
            if let Some(comma) = f.pending_comma {
                self.edits.delete(comma, comma + 1, Some(K::TrailingComma));
            }
            if !noted {
                self.edits.note(end, end, K::TruncatedContainer);
                noted = true;
            }
            let clean = Frame { pending_comma: None, state: State::Next, ..f };
            self.finish_frame_at(clean, end);
            self.close_frame(end);
        }
        self.pos = end;
    }

    /// The input ended with frames open: decide whether it was evidently cut, find the
    /// values that touch the cut, and report them.
    #[cold]
    fn record_cut(&mut self) {
        let token = self.cut_token.take();
        self.record_cut_with(token, true);
    }

    /// As [`Parser::record_cut`], for `token` (finished as a value when `done`).
    #[cold]
    pub(super) fn record_cut_with(&mut self, token: Option<(UncertainKind, usize, bool)>, done: bool) {
        let end = self.end;
        let Some(&top) = self.stack.last() else { return };
        // Only the top-level closer missing is a dropped brace; an array or object left
        // open inside may lack members, so its value is not the one the model meant.
        let evident = token.is_some()
            || matches!(top.state, State::Colon | State::Value)
            || (top.state == State::Open && (top.pending_comma.is_some() || top.count == 0))
            || self.stack.iter().skip(1).any(|f| f.kind != Kind::Wrapper);
        let mut uncertain = Vec::new();
        let mut path = String::new();
        let n = self.stack.len();
        for idx in 0..n {
            let f = self.stack[idx];
            if idx > 0 && f.kind != Kind::Wrapper {
                let kind = if f.kind == Kind::Object { UncertainKind::Object } else { UncertainKind::Array };
                uncertain.push(Uncertain { kind, span: Span::new(f.open, end), pointer: path.clone(), kept: true });
            }
            if idx + 1 < n {
                self.push_segment(&mut path, f, f.count);
            }
        }
        match token {
            Some((kind, start, kept)) => {
                // A value cut to nothing in an object leaves its key, with `null`.
                let kept = kept || (top.kind == Kind::Object && kind != UncertainKind::Key);
                if kind != UncertainKind::Key {
                    let index = if kept && done { top.count.saturating_sub(1) } else { top.count };
                    self.push_segment(&mut path, top, index);
                }
                uncertain.push(Uncertain { kind, span: Span::new(start, end), pointer: path, kept });
            }
            None if top.kind == Kind::Object && matches!(top.state, State::Colon | State::Value) => {
                self.push_segment(&mut path, top, 0);
                let span = Span::new(self.key_start(top), end);
                uncertain.push(Uncertain { kind: UncertainKind::Key, span, pointer: path, kept: true });
            }
            None => {}
        }
        if evident {
            for u in &uncertain {
                self.edits.note(u.span.start, u.span.end, u.kind.fix_kind());
            }
        }
        self.cut = Some(Truncation { at: end, evident, uncertain });
    }

    /// The input ended inside a top-level string: the whole value is uncertain.
    #[cold]
    pub(super) fn record_top_cut(&mut self, open: usize) {
        let span = Span::new(open, self.end);
        self.edits.note(open, self.end, UncertainKind::String.fix_kind());
        let uncertain = vec![Uncertain { kind: UncertainKind::String, span, pointer: String::new(), kept: true }];
        self.cut = Some(Truncation { at: self.end, evident: true, uncertain });
    }

    /// Where the last key of object frame `f` starts, found back from its end (only at a
    /// cut, so the hot path keeps no record of it): the matching quote of a quoted key, the
    /// first character of an unquoted one.
    fn key_start(&self, f: Frame) -> usize {
        let (b, floor, end) = (self.b, f.open + 1, f.key_end);
        let Some(&last) = b.get(end.wrapping_sub(1)).filter(|_| end > floor) else { return end };
        if matches!(last, b'"' | b'\'' | b'`') {
            let mut k = end - 1;
            while k > floor {
                k -= 1;
                let escaped = b[floor..k].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 1;
                if b[k] == last && !escaped {
                    return k;
                }
            }
            return floor;
        }
        let mut k = end;
        while k > floor && (is_ident(b[k - 1]) || b[k - 1] == b'\\' || b[k - 1] >= 0x80) {
            k -= 1;
        }
        k
    }

    /// Append to `path` the step into frame `f`'s current member (element `index` of an
    /// array).
    fn push_segment(&self, path: &mut String, f: Frame, index: usize) {
        match f.kind {
            Kind::Object => {
                let raw = self.src.get(self.key_start(f)..f.key_end).unwrap_or("");
                let key = match serde_json::from_str::<String>(raw) {
                    Ok(k) if raw.starts_with('"') => k,
                    _ => raw.trim_matches(|c| matches!(c, '"' | '\'' | '`' | '“' | '”' | '‘' | '’' | '„')).to_owned(),
                };
                crate::pointer::push(path, &key);
            }
            Kind::Array | Kind::Tuple => crate::pointer::push(path, &index.to_string()),
            Kind::Wrapper => {}
        }
    }

    /// After the top-level value closed with `}`: `{"a": 1}, "b": 2}` closed too early.
    fn reopen_after_premature_close(&mut self) -> bool {
        let Some((frame, end)) = self.last_closed else {
            return false;
        };
        if frame.kind != Kind::Object || end != self.pos || self.b.get(end - 1) != Some(&b'}') {
            return false;
        }
        let j = skip_ws(self.b, end, self.end);
        if self.at(j) != Some(b',') {
            return false;
        }
        let k = skip_ws(self.b, j + 1, self.end);
        // `"k": v` or `"k" "v"` (its colon missing) is a member, so the `}` came too early.
        if !key_then_colon(self.b, k, self.end) && !quoted_then(self.b, k, self.end, b"\"") {
            return false;
        }
        self.edits.delete(end - 1, end, Some(K::PrematureClose));
        self.last_closed = None;
        // An object with no member yet (`{a b}, "k": 1}` drops `a b`) takes the comma as a
        // leading one; a dangling key (`{"e"}, "k": 1`) got `null` and is a member.
        let state = if frame.count == 0 && frame.state == State::Open { State::Open } else { State::Next };
        self.stack.push(Frame { state, last_end: end - 1, ..frame });
        true
    }

    /// Start a value at `self.pos` in context `ctx`.
    fn start_value(&mut self, ctx: Ctx) -> Result<()> {
        let i = self.pos;
        let Some(c) = self.at(i) else {
            return Err(self.error(ErrorKind::NoJson, "expected a value", i));
        };
        match c {
            b'{' => {
                self.push(Kind::Object, i)?;
                self.pos += 1;
            }
            b'[' => {
                self.push(Kind::Array, i)?;
                self.pos += 1;
            }
            b'(' => {
                self.push(Kind::Tuple, i)?;
                self.pos += 1;
            }
            b'-' | b'+' | b'.' | b'0'..=b'9' => self.number(ctx)?,
            b'"' if ctx != Ctx::Top && self.b.get(i + 1..i + 4) == Some(b"```") && self.quoted_fence(i) => {}
            _ if open_quote(self.b, i).is_some() => {
                if let Some(end) = self.string(ctx)? {
                    self.value_done(end, true);
                }
            }
            _ if is_ident_start(c) => self.word(ctx)?,
            _ if ctx != Ctx::Top => self.unquoted(i, K::UnquotedString)?,
            _ => return Err(self.error(ErrorKind::NoJson, "expected a JSON value", i)),
        }
        Ok(())
    }
}

/// `1,234` or `12,000`: the comma at `i` follows a number of one to three digits and is
/// followed by exactly three digits, so it may group thousands rather than separate two
/// values. In an object (where a key must follow a comma) that is enough; in an array,
/// only a group with a leading zero (`1,000`, which no JSON list writes) says so.
fn thousands_separator(b: &[u8], i: usize, in_object: bool) -> bool {
    let mut s = i;
    while s > 0 && b[s - 1].is_ascii_digit() {
        s -= 1;
    }
    let digits = i - s;
    if !(1..=3).contains(&digits) || b.get(s.wrapping_sub(1)).is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'.') {
        return false;
    }
    let group = b.get(i + 1..i + 4);
    let grouped = group.is_some_and(|g| g.iter().all(u8::is_ascii_digit))
        && !b.get(i + 4).is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_');
    grouped && (in_object || group.is_some_and(|g| g[0] == b'0'))
}

/// Does `c` close frame `f`?
fn closes(f: Frame, c: u8) -> bool {
    match (f.kind, c) {
        (Kind::Object, b'}') | (Kind::Array, b']') | (Kind::Tuple | Kind::Wrapper, b')') => true,
        // A set converted to an array still closes with `}`; an array turned object with `]`.
        (Kind::Array, b'}') => f.close_as == Some(b']'),
        (Kind::Object, b']') => f.close_as == Some(b'}'),
        (Kind::Array, b')') => true,
        _ => false,
    }
}

fn closer_text(f: Frame) -> &'static str {
    match f.kind {
        Kind::Object => "}",
        Kind::Array | Kind::Tuple => "]",
        Kind::Wrapper => "",
    }
}

/// Byte length of a non-JSON Unicode space or invisible character at `i` (NBSP, BOM,
/// U+2028/9, U+2000–200A, zero-width space, non-joiner and joiner U+200B–200D, U+202F,
/// U+205F, word joiner U+2060, U+3000), or 0.
fn unicode_space_len(b: &[u8], i: usize) -> usize {
    match (b.get(i), b.get(i + 1), b.get(i + 2)) {
        (Some(0xC2), Some(0xA0), _) => 2,
        (Some(0xEF), Some(0xBB), Some(0xBF)) => 3,
        (Some(0xE2), Some(0x80), Some(0x80..=0x8D | 0xA8 | 0xA9 | 0xAF)) => 3,
        (Some(0xE2), Some(0x81), Some(0x9F | 0xA0)) => 3,
        (Some(0xE3), Some(0x80), Some(0x80)) => 3,
        _ => 0,
    }
}

pub(super) fn memchr_in(b: &[u8], needle: u8, from: usize, to: usize) -> Option<usize> {
    b.get(from..to)?.iter().position(|&c| c == needle).map(|p| p + from)
}

pub(super) fn find(b: &[u8], needle: &[u8], from: usize, to: usize) -> Option<usize> {
    memchr::memmem::find(b.get(from..to)?, needle).map(|p| p + from)
}

#[path = "scalars.rs"]
mod scalars;
