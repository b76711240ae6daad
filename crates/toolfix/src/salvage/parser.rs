//! The lenient parser: one pass, an explicit stack, edits instead of copies.
//!
//! The parser walks one region of the input (the text inside a fence, or after prose) and
//! records [`Edits`] that turn it into strict JSON. Every decision looks at most
//! [`LOOKAHEAD`](super::lex::LOOKAHEAD) bytes ahead, so the whole pass is linear.

use super::FixKind as K;
use super::edits::{Edit, Edits};
use super::lex::{ellipsis_len, ident_then_colon, is_ident_start, memchr_in, open_quote, skip_layout, value_starts};
use crate::error::{Error, ErrorKind, Result};
use crate::report::{TextFix, Truncation, UncertainKind};
use std::cell::Cell;

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
    /// Start of the last key (its opening quote, or its first character).
    key_start: usize,
    /// The edits made before the last key ([`Edits::checkpoint`]): what a member cut
    /// before its value undoes.
    key_edits: usize,
    /// End of the last key, where a missing colon goes.
    key_end: usize,
    /// A comma was seen (tuples: decides array vs. plain value).
    saw_comma: bool,
    /// The last element was a string (an array that meets `:` after it is an object).
    last_was_string: bool,
    /// The closer must be rewritten to this one (a set `{a, b}` is an array, an array
    /// with `k: v` pairs is an object).
    close_as: Option<u8>,
    /// Where this frame's keys start in [`Parser::keys`].
    keys_from: usize,
    /// One bit per key seen (from its fingerprint): a key whose bit is set already is
    /// compared with the keys before it; the others cannot equal any.
    key_bits: u64,
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
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ValueSpan {
    pub(super) start: usize,
    pub(super) end: usize,
    /// The value is an empty `{}` or `[]`.
    pub(super) empty_container: bool,
    /// How deep it nests (a scalar: 0).
    pub(super) depth: usize,
}

/// The vectors of a parse, kept between parses by a [`Salvager`](super::Salvager) (each
/// parse empties them first).
#[derive(Debug)]
pub(super) struct Buffers {
    pub(super) edits: Vec<Edit>,
    stack: Vec<Frame>,
    keys: Vec<(usize, usize, u64)>,
    /// Room for the repaired text and the fixes of the next answer (what
    /// [`Salvager::recycle`](super::Salvager::recycle) handed back; empty otherwise).
    pub(super) text: String,
    pub(super) fixes: Vec<TextFix>,
}

impl Default for Buffers {
    fn default() -> Self {
        Buffers {
            edits: Vec::new(),
            // Eight frames (a tool call rarely nests deeper) stay under glibc's per-thread
            // cache size (1 KiB): sixteen took the slow path of malloc and free every call.
            stack: Vec::with_capacity(8),
            keys: Vec::with_capacity(32),
            text: String::new(),
            fixes: Vec::new(),
        }
    }
}

impl Buffers {
    /// The bytes the buffers hold.
    pub(super) fn footprint(&self) -> usize {
        self.edits.capacity() * size_of::<Edit>()
            + self.stack.capacity() * size_of::<Frame>()
            + self.keys.capacity() * size_of::<(usize, usize, u64)>()
            + self.text.capacity()
            + self.fixes.capacity() * size_of::<TextFix>()
    }
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
    /// The text of the keys of the open objects (ranges of the input, quotes aside, and a
    /// [`fingerprint`](super::lex::fingerprint)), compared when their object closes, so
    /// that the duplicate-key report of repaired text needs no second pass.
    keys: Vec<(usize, usize, u64)>,
    /// Some object may give a key twice in the repaired text: a key compared equal, or
    /// one whose text the repair changed (an escape, a requoted inner quote), or an object
    /// whose keys were not all seen together.
    pub(super) keys_may_repeat: bool,
    /// How deep the value being parsed has nested so far.
    deepest: usize,
    /// The plain key a string's look-ahead found ([`Parser::plain_key_ahead`]), so that
    /// [`Parser::key`] takes it without reading it again.
    key_ahead: Cell<Option<KeyAhead>>,
}

/// A plain key found ahead: its opening quote, its closing quote and its colon, in the
/// region that ends at `end`.
#[derive(Clone, Copy, Debug)]
struct KeyAhead {
    open: usize,
    close: usize,
    colon: usize,
    end: usize,
}

impl<'a> Parser<'a> {
    /// A parser of `src` that works in the vectors of `buffers` (taken, and given back by
    /// [`Parser::into_buffers`]).
    pub(super) fn new(src: &'a str, max_depth: usize, buffers: &mut Buffers) -> Self {
        let mut stack = std::mem::take(&mut buffers.stack);
        stack.clear();
        let mut keys = std::mem::take(&mut buffers.keys);
        keys.clear();
        Parser {
            src,
            b: src.as_bytes(),
            pos: 0,
            end: src.len(),
            edits: Edits::for_text(src.len(), std::mem::take(&mut buffers.edits)),
            stack,
            max_depth,
            last_closed: None,
            cut_token: None,
            cut: None,
            quoted_fence: None,
            fence_search: None,
            keys,
            keys_may_repeat: false,
            deepest: 0,
            key_ahead: Cell::new(None),
        }
    }

    /// The edits made, and the parser's own vectors given back to `buffers`.
    pub(super) fn into_buffers(self, buffers: &mut Buffers) -> Edits {
        buffers.stack = self.stack;
        buffers.keys = self.keys;
        self.edits
    }

    /// The whole input, as bytes.
    pub(super) fn bytes(&self) -> &'a [u8] {
        self.b
    }

    /// Forget any open frames (after a failed attempt).
    pub(super) fn reset_stack(&mut self) {
        self.stack.clear();
        self.keys.clear();
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

    /// Parse one top-level value starting at `self.pos` (after trivia).
    pub(super) fn value(&mut self) -> Result<ValueSpan> {
        let start = self.pos;
        self.cut_token = None;
        self.deepest = 0;
        self.start_value(Ctx::Top)?;
        loop {
            if self.stack.is_empty() {
                if self.reopen_after_premature_close() {
                    continue;
                }
                let empty = matches!(self.b.get(start..self.pos), Some(b"{}" | b"[]"));
                return Ok(ValueSpan { start, end: self.pos, empty_container: empty, depth: self.deepest });
            }
            self.skip_trivia();
            if self.pos >= self.end {
                self.close_at_eof();
                return Ok(ValueSpan { start, end: self.end, empty_container: false, depth: self.deepest });
            }
            self.step()?;
        }
    }

    /// One step inside the top frame.
    fn step(&mut self) -> Result<()> {
        let i = self.pos;
        let c = self.b[i];
        // The kind and state pick the arm; the rest of the frame is read where an arm needs
        // it (nothing before that changes it), not copied whole at every step.
        let Some(top) = self.stack.last() else {
            return Ok(());
        };
        match (top.kind, top.state, c) {
            (Kind::Wrapper, State::Open, b'}' | b']' | b')') => {
                // `ISODate()`: a constructor with no value stands for none we can write.
                return Err(self
                    .error(ErrorKind::Syntax, "a wrapper holds no value", i)
                    .with_hint("write the value itself, such as \"2024-01-01T00:00:00Z\", instead of `ISODate()`"));
            }
            (_, _, b'}' | b']' | b')') => self.closer(c),
            (Kind::Object | Kind::Array | Kind::Tuple, State::Open, b',') => {
                let fix = if self.frame().count == 0 { K::LeadingComma } else { K::DoubledComma };
                self.edits.delete(i, i + 1, Some(fix));
                self.pos += 1;
            }
            (_, State::Next, b'"')
                if i == self.frame().last_end
                    && !self.frame().last_was_string
                    && matches!(self.at(skip_layout(self.b, i + 1, self.end)), None | Some(b',' | b'}' | b']')) =>
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
                if i == self.frame().last_end
                    && self.at(i + 1).is_some_and(|d| d.is_ascii_digit())
                    && thousands_separator(self.b, i, self.frame().kind == Kind::Object)
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
            (Kind::Object, State::Open | State::Next, b'{') if self.glued_element(self.frame(), i) => {}
            (Kind::Object, State::Open, _) => self.key()?,
            (Kind::Object, State::Colon, _) => self.colon()?,
            (Kind::Object, State::Value, b',') => {
                self.edits.insert(i, "null", Some(K::MissingValue));
                self.value_done(i, false);
            }
            (Kind::Object, State::Value, b'.' | 0xE2) if self.placeholder_value(self.frame(), i) => {}
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
                if self.frame().kind == Kind::Array
                    && self.frame().count == 1
                    && self.frame().last_was_string
                    && open_quote(self.b, skip_layout(self.b, self.frame().open + 1, self.frame().last_end))
                        .is_some() =>
            {
                let frame = self.frame();
                // `["key": "value"]`: a member inside brackets is an object inside an array
                // whose braces are missing; the object closes where the array does.
                let key = skip_layout(self.b, frame.open + 1, frame.last_end);
                self.edits.insert(key, "{", Some(K::ArrayAsObject));
                let f = self.top();
                f.count = 0;
                f.state = State::Open;
                self.push(Kind::Object, key - 1)?;
                let checkpoint = self.edits.checkpoint();
                let o = self.top();
                o.state = State::Value;
                o.key_start = key;
                o.key_edits = checkpoint;
                o.key_end = frame.last_end;
                // The key was read as an element: its text is not compared.
                self.keys_may_repeat = true;
                self.pos += 1;
            }
            (_, State::Next, _) => {
                if value_starts(self.b, i) || is_ident_start(c) {
                    let last_end = self.frame().last_end;
                    self.edits.insert(last_end, ",", Some(K::MissingComma));
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

    /// The top frame, copied (`step` only runs with one on the stack).
    fn frame(&self) -> Frame {
        self.stack.last().copied().unwrap_or(NO_FRAME)
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
            key_start: open + 1,
            key_edits: 0,
            key_end: open + 1,
            saw_comma: false,
            last_was_string: false,
            close_as: None,
            keys_from: self.keys.len(),
            key_bits: 0,
        });
        self.deepest = self.deepest.max(self.stack.len());
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

    /// An element cut to nothing by the end of input: the comma inserted before it goes.
    fn forget_missing_comma(&mut self) {
        if let Some(f) = self.stack.last() {
            let at = f.last_end;
            self.edits.pop_insertion(at, K::MissingComma);
        }
    }

    /// `[{"i": 1{"i": 2}]` or `[{"i": 1, {"i": 2}]`: in an array of objects, an object
    /// that starts where the next member of the one before would. The one before lacks its
    /// `}`: it closes after its last member, and the new object is the next element (the
    /// comma written, or one inserted). True when it was so; never at the top level or
    /// inside an object, where the new object could be a value whose key was lost.
    fn glued_element(&mut self, frame: Frame, i: usize) -> bool {
        let in_array =
            self.stack.len().checked_sub(2).and_then(|p| self.stack.get(p)).is_some_and(|p| p.kind == Kind::Array);
        let after_member = frame.state == State::Next || (frame.count > 0 && frame.pending_comma.is_some());
        let k = skip_layout(self.b, i + 1, self.end);
        let keyed = self.at(k).is_some_and(|c| c == b'}' || open_quote(self.b, k).is_some())
            || ident_then_colon(self.b, k, self.end);
        if !(in_array && after_member && keyed) {
            return false;
        }
        let comma = frame.pending_comma;
        self.edits.insert(frame.last_end, "}", Some(K::MissingBracket));
        self.close_frame(frame.last_end);
        if let Some(comma) = comma {
            // The comma separates the two elements.
            let parent = self.top();
            parent.pending_comma = Some(comma);
            parent.saw_comma = true;
            parent.state = State::Open;
        }
        self.pos = i;
        true
    }

    /// `{"a": 1, "b": ..., "c": 2}`: a placeholder where a value would be stands for no
    /// value, so the member goes (reported), never a `"..."` string or a `null`. True
    /// when it was one.
    fn placeholder_value(&mut self, frame: Frame, i: usize) -> bool {
        let n = ellipsis_len(self.b, i);
        if n == 0 {
            return false;
        }
        let j = skip_layout(self.b, i + n, self.end);
        let end = match self.at(j) {
            Some(b',') => j + 1,
            Some(b'}') | None => i + n,
            _ => return false,
        };
        let start = frame.key_start;
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
            match self.comma_between(frame.last_end, start) {
                Some(c) => Some(c),
                None => return false,
            }
        };
        // The key's own fixes (requoting, the quote inserted before an unquoted key, a
        // missing colon) go with it; what was inserted before the key stays with what
        // precedes (the `{` opening `["k": ...` as an object).
        self.edits.rollback(frame.key_edits, start);
        self.edits.clear_range(start, end);
        self.edits.delete(start, end, Some(K::Ellipsis));
        let f = self.top();
        f.state = State::Open;
        f.pending_comma = comma;
        self.pos = end;
        true
    }

    /// The comma the parser took between a member ending at `from` and the next starting
    /// at `to`: the first comma there that no comment (or other trivia taken out) holds,
    /// as in `1 # a, b` + newline + `, "c"`.
    #[cold]
    pub(super) fn comma_between(&self, from: usize, to: usize) -> Option<usize> {
        let removed = self.edits.removed_in(from, to);
        let mut gone = removed.iter().peekable();
        let mut i = from;
        while let Some(c) = memchr_in(self.b, b',', i, to) {
            while gone.next_if(|s| s.end <= c).is_some() {}
            match gone.peek() {
                Some(s) if s.start <= c => i = s.end,
                _ => return Some(c),
            }
        }
        None
    }

    fn ellipsis(&mut self) {
        let i = self.pos;
        let n = ellipsis_len(self.b, i);
        let mut end = i + n;
        // Take a following comma along: `[1, ..., 2]`.
        let j = skip_layout(self.b, end, self.end);
        if self.at(j) == Some(b',') {
            end = j + 1;
        }
        self.edits.delete(i, end, Some(K::Ellipsis));
        self.pos = end;
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
            b'"' if ctx != Ctx::Top
                && let Some(end) = self.plain_string(ctx) =>
            {
                self.value_done(end, true);
            }
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

/// Keys of one object compared as they come (see [`Frame::key_bits`]); an object with
/// more has all its keys sorted and compared when it closes.
const KEY_BITS_MAX: usize = 64;

/// What [`Parser::frame`] reads when no frame is open (never, in a step).
const NO_FRAME: Frame = Frame {
    kind: Kind::Array,
    state: State::Open,
    open: 0,
    count: 0,
    pending_comma: None,
    last_end: 0,
    key_start: 0,
    key_edits: 0,
    key_end: 0,
    saw_comma: false,
    last_was_string: false,
    close_as: None,
    keys_from: 0,
    key_bits: 0,
};

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

mod closers;
mod cut;
mod keys;
mod scalars;
mod strings;
mod trivia;
