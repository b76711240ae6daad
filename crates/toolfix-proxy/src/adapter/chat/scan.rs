//! A hand-written reader of a chat completion body for the common case: it locates what
//! the proxy reads (each choice's message or delta: `content`, `reasoning_content`,
//! `reasoning`, `tool_calls`; `finish_reason`; an `x_toolfix` already there) and checks
//! the rest is JSON, in one pass over the bytes. Whenever it cannot decide exactly as
//! serde_json's read would (a key with escapes, a duplicate key, a value of an unexpected
//! type, a lone surrogate, deep nesting, bytes that are no UTF-8 ...) it gives up and the
//! caller reads the body with serde_json as before: its result is that read's either way.

use super::{CallView, ChoiceView, FunctionView, MessageView, Raw, RawText, ResponseView, Served};
use crate::adapter::Peek;
use crate::adapter::view::{Present, Prose, Text, has_control};
use std::borrow::Cow;

/// Deeper than this, the reader gives up (serde_json's own limit is 128 levels).
const MAX_DEPTH: usize = 100;

/// The bytes of a string looked at a word (eight bytes) at a time before `memchr` takes
/// over (see `Reader::plain_end`).
const SHORT: usize = 32;

/// A byte `b` in each of a word's eight lanes.
const fn lanes(b: u8) -> u64 {
    0x0101_0101_0101_0101 * b as u64
}

/// The high bit of each byte of `w` (little-endian) that ends a plain run (see [`STOPS`]),
/// exact up to the lowest one: each test flags the bytes it is after, and can flag a byte
/// above one of them falsely (a borrow carried up), never one below. Bytes from 0x80 up
/// (UTF-8) are never flagged.
const fn stops(w: u64) -> u64 {
    let quote = w ^ lanes(b'"');
    let backslash = w ^ lanes(b'\\');
    let zero_quote = quote.wrapping_sub(lanes(1)) & !quote;
    let zero_backslash = backslash.wrapping_sub(lanes(1)) & !backslash;
    let control = w.wrapping_sub(lanes(0x20)) & !w;
    (zero_quote | zero_backslash | control) & lanes(0x80)
}

/// As [`stops`], for quotes and backslashes only (a clean text's stops).
const fn quotes(w: u64) -> u64 {
    let quote = w ^ lanes(b'"');
    let backslash = w ^ lanes(b'\\');
    let zero_quote = quote.wrapping_sub(lanes(1)) & !quote;
    let zero_backslash = backslash.wrapping_sub(lanes(1)) & !backslash;
    (zero_quote | zero_backslash) & lanes(0x80)
}

/// As [`quotes`], over sixteen bytes (exact up to the lowest flagged byte, as there).
const fn quotes_wide(w: u128) -> u128 {
    const fn lanes(b: u8) -> u128 {
        0x0101_0101_0101_0101_0101_0101_0101_0101 * b as u128
    }
    let quote = w ^ lanes(b'"');
    let backslash = w ^ lanes(b'\\');
    let zero_quote = quote.wrapping_sub(lanes(1)) & !quote;
    let zero_backslash = backslash.wrapping_sub(lanes(1)) & !backslash;
    (zero_quote | zero_backslash) & lanes(0x80)
}

/// The bytes that end a string's plain run: its closing quote, an escape, a control
/// character.
static STOPS: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = true;
        b += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// `body` as text, when it is UTF-8 (the same answer as `std::str::from_utf8`, by a
/// vectorised check: with the look for control characters of `Reader::over`, the
/// reader's only checks of a whole body).
fn utf8(body: &[u8]) -> Option<&str> {
    simdutf8::basic::from_utf8(body).ok()
}

/// The response view and each choice's server calls, as `fix_body` reads them with
/// serde_json; `None` when this reader cannot decide.
pub(super) fn read(body: &[u8]) -> Option<(ResponseView<'_>, Vec<Served<'_>>)> {
    let mut r = Reader::new(body)?;
    let mut view = ResponseView { dup: false, choices: Vec::new(), report: Present(None) };
    let mut served = Vec::new();
    let (mut seen_choices, mut seen_report) = (false, false);
    r.ws();
    r.object(|r, key| {
        match key {
            "choices" => {
                if std::mem::replace(&mut seen_choices, true) {
                    return None;
                }
                r.expect(b'[')?;
                r.list(|r| {
                    let (choice, calls) = r.choice()?;
                    view.choices.push(choice);
                    served.push(calls);
                    Some(())
                })?;
            }
            "x_toolfix" => {
                if std::mem::replace(&mut seen_report, true) {
                    return None;
                }
                r.skip(0)?;
                view.report = Present(Some(serde::de::IgnoredAny));
            }
            _ => r.skip(0)?,
        }
        Some(())
    })?;
    r.ws();
    (r.at == body.len()).then_some((view, served))
}

/// Which API's request [`peek_as`] reads: the member that holds the conversation and how
/// its plainness is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Api {
    /// `messages`, as the chat adapter's `plain_history` reads it.
    Chat,
    /// `messages`, as the Messages adapter's `plain_history` reads it.
    Messages,
    /// `input`, as the Responses adapter's `plain_history` reads it.
    Responses,
}

/// The request's envelope as `ChatCompletions::peek` reads it with serde_json (the
/// tool definitions' text, the stream flag, the model, and whether the conversation is
/// plain); `None` when this reader cannot decide.
pub(super) fn peek<'b>(body: &'b [u8], known: Option<&str>) -> Option<Peek<'b>> {
    let mut peek = peek_as(body, Api::Chat, known)?;
    // `null` is no member; an empty list is no tools.
    peek.tools = peek.tools.filter(|raw| raw.starts_with('[') && raw.trim_start_matches('[').trim_start() != "]");
    Some(peek)
}

/// The request's envelope as API `api`'s envelope view reads it with serde_json: the
/// `tools` member's text (any value but `null`, for the caller's filter), the stream flag,
/// the model, and whether the conversation is plain; `None` when this reader cannot
/// decide. `known`: see [`crate::adapter::Adapter::peek_known`].
pub(crate) fn peek_as<'b>(body: &'b [u8], api: Api, known: Option<&str>) -> Option<Peek<'b>> {
    let mut r = Reader::unlooked(body)?;
    let mut peek = Peek { tools: None, stream: false, model: Text(None), plain: None, utf8: true, known: false };
    // Only an array is known by its bytes: its closing bracket ends it (a number would
    // not: `1` begins `12`).
    let known = known.filter(|k| k.starts_with('[') && k.ends_with(']'));
    let conversation = if api == Api::Responses { "input" } else { "messages" };
    r.ws();
    r.members(["tools", "stream", "model", conversation], 1, |r, slot| {
        match slot {
            0 => {
                let from = r.at;
                match known {
                    Some(k) if r.bytes.get(from..).is_some_and(|rest| rest.starts_with(k.as_bytes())) => {
                        r.at += k.len();
                        peek.known = true;
                    }
                    _ => r.skip(1)?,
                }
                let raw = r.text.get(from..r.at)?;
                peek.tools = (raw != "null").then_some(raw);
            }
            1 => match r.peek()? {
                b't' => {
                    r.word(b"true")?;
                    peek.stream = true;
                }
                b'f' => r.word(b"false")?,
                _ => r.word(b"null")?,
            },
            2 => peek.model = r.text()?,
            _ => match api {
                Api::Chat => r.messages(&mut peek.plain)?,
                Api::Messages => r.blocks_free(&mut peek.plain)?,
                Api::Responses => r.input(&mut peek.plain)?,
            },
        }
        Some(())
    })?;
    r.ws();
    (r.at == body.len()).then_some(peek)
}

/// A list of objects, each read by `one` (anything else: the serde read fails on it).
pub(crate) fn objects<'a, T>(r: &mut Reader<'a>, mut one: impl FnMut(&mut Reader<'a>) -> Option<T>) -> Option<Vec<T>> {
    r.expect(b'[')?;
    r.ws();
    // Room for a few at once (a list grown from empty pays for growing on its first push).
    let mut out = if r.peek()? == b']' { Vec::new() } else { Vec::with_capacity(4) };
    r.list(|r| {
        if r.peek()? != b'{' {
            return None;
        }
        out.push(one(r)?);
        Some(())
    })?;
    Some(out)
}

/// The string `raw` holds (the text of one JSON string, its quotes included), as serde_json
/// reads it (borrowed when it holds no escape); `None` when this reader cannot decide (a
/// lone surrogate escape, ...) or `raw` is not one string and nothing else.
pub(crate) fn string_value(raw: &str) -> Option<Cow<'_, str>> {
    let mut r = Reader::over(raw);
    r.expect(b'"')?;
    let value = r.string()?;
    r.at_end().then_some(value)
}

/// The reader, for the other APIs' bodies too (`responses::scan`, `messages::scan`).
pub(crate) struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    /// No byte of the text is a control character (below 0x20): no string can hold one
    /// raw, so where a string's plain run ends is only where a quote or a backslash is.
    clean: bool,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `body`; `None` when it is not UTF-8.
    pub(crate) fn new(body: &'a [u8]) -> Option<Reader<'a>> {
        Some(Reader::over(utf8(body)?))
    }

    /// A reader at the start of `body` not looked at for control characters (see
    /// [`Reader::over`]): for a request's envelope, whose strings are short and whose
    /// tools are not read; `None` when it is not UTF-8.
    fn unlooked(body: &'a [u8]) -> Option<Reader<'a>> {
        Some(Reader { text: utf8(body)?, bytes: body, at: 0, clean: false })
    }

    /// A reader at the start of `text`. A body without control characters (one written
    /// compact: no line breaks between members) is told so by one vectorised look at it,
    /// for less than the control checks it spares each string (a message's text is
    /// most of an answer).
    fn over(text: &'a str) -> Reader<'a> {
        Reader { text, bytes: text.as_bytes(), at: 0, clean: !has_control(text.as_bytes()) }
    }

    /// True when every byte was read.
    pub(crate) fn at_end(&self) -> bool {
        self.at == self.bytes.len()
    }

    /// The text from `from` to where the reader is.
    pub(crate) fn since(&self, from: usize) -> Option<&'a str> {
        self.text.get(from..self.at)
    }

    /// Where the reader is.
    pub(crate) fn at(&self) -> usize {
        self.at
    }

    pub(crate) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    pub(crate) fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    pub(crate) fn expect(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.at += 1)
    }

    /// An object whose members of interest are `keys`: `member` reads the value of the one
    /// at index `slot` in `keys`; any other member is skipped (`depth`: as [`Reader::skip`]).
    /// `None` back for a key given twice (serde_json keeps the last and marks the view: the
    /// reader leaves that to it).
    pub(crate) fn members<const N: usize>(
        &mut self,
        keys: [&str; N],
        depth: usize,
        mut member: impl FnMut(&mut Self, usize) -> Option<()>,
    ) -> Option<()> {
        let mut seen = [false; N];
        self.object(|r, key| {
            let Some(slot) = keys.iter().position(|k| *k == key) else { return r.skip(depth) };
            if std::mem::replace(seen.get_mut(slot)?, true) {
                return None;
            }
            member(r, slot)
        })
    }

    /// The members of an object (its `{` next), each value read by `member` (called with
    /// the reader just before the value and the key, which holds no escape).
    pub(crate) fn object(&mut self, mut member: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.expect(b'{')?;
        self.ws();
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            self.expect(b'"')?;
            let key = self.key()?;
            self.ws();
            self.expect(b':')?;
            self.ws();
            member(self, key)?;
            self.ws();
            match self.peek()? {
                b',' => {
                    self.at += 1;
                    self.ws();
                }
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// The items of an array (its `[` read), each read by `item`.
    pub(crate) fn list(&mut self, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.ws();
        if self.peek()? == b']' {
            self.at += 1;
            return Some(());
        }
        loop {
            item(self)?;
            self.ws();
            match self.peek()? {
                b',' => {
                    self.at += 1;
                    self.ws();
                }
                b']' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Where the run of plain bytes from `from` ends: at the first `"` or `\\`; `None` when
    /// a control character comes first (serde_json refuses one in a string) or neither
    /// comes. Most strings are short (keys, ids, names): their first `SHORT` bytes are
    /// looked at eight at a time in a word ([`stops`]; the last few bytes of the body one
    /// by one), where `memchr`'s set-up would cost more; a long one's rest (a message's
    /// text) by `memchr2` and a vectorised check for controls. In a clean text (see
    /// [`Reader::clean`]) only quotes and backslashes are looked for
    /// ([`Reader::quote_or_escape`]), and a run that ends in its first sixteen bytes (most
    /// keys and short values) is found where the reader calls it.
    #[expect(clippy::inline_always, reason = "in every key and value read: a call each cost more than its work")]
    #[inline(always)]
    fn plain_end(&self, from: usize) -> Option<usize> {
        if self.clean
            && let Some(&words) = self.bytes.get(from..).and_then(|r| r.first_chunk::<16>())
        {
            // Sixteen bytes in one: most keys and short values (`completed`,
            // `output_text`) end in them.
            let flagged = quotes_wide(u128::from_le_bytes(words));
            if flagged != 0 {
                return Some(from + (flagged.trailing_zeros() / 8) as usize);
            }
        }
        self.plain_end_beyond(from)
    }

    /// [`Reader::plain_end`] beyond its inlined look at the first word.
    #[inline(never)]
    fn plain_end_beyond(&self, from: usize) -> Option<usize> {
        if self.clean {
            return self.quote_or_escape(from);
        }
        let rest = self.bytes.get(from..)?;
        let mut i = 0;
        while i < SHORT {
            let Some(&word) = rest.get(i..).and_then(|r| r.first_chunk::<8>()) else {
                // Under eight bytes left.
                let tail = rest.get(i..)?;
                let j = tail.iter().position(|&b| STOPS.get(usize::from(b)) == Some(&true))?;
                return (*tail.get(j)? >= 0x20).then_some(from + i + j);
            };
            let flagged = stops(u64::from_le_bytes(word));
            if flagged != 0 {
                let at = i + (flagged.trailing_zeros() / 8) as usize;
                return (*rest.get(at)? >= 0x20).then_some(from + at);
            }
            i += 8;
        }
        let tail = from + SHORT;
        let end = tail + memchr::memchr2(b'"', b'\\', self.bytes.get(tail..)?)?;
        (!has_control(self.bytes.get(tail..end)?)).then_some(end)
    }

    /// [`Reader::plain_end`] in a clean text: where the first `"` or `\\` from `from` is
    /// (as `plain_end`, words first, then `memchr2`).
    fn quote_or_escape(&self, from: usize) -> Option<usize> {
        let rest = self.bytes.get(from..)?;
        let mut i = 0;
        while i < SHORT {
            let Some(&word) = rest.get(i..).and_then(|r| r.first_chunk::<8>()) else {
                // Under eight bytes left.
                let tail = rest.get(i..)?;
                return tail.iter().position(|&b| b == b'"' || b == b'\\').map(|j| from + i + j);
            };
            let flagged = quotes(u64::from_le_bytes(word));
            if flagged != 0 {
                return Some(from + i + (flagged.trailing_zeros() / 8) as usize);
            }
            i += 8;
        }
        let tail = from + SHORT;
        Some(tail + memchr::memchr2(b'"', b'\\', self.bytes.get(tail..)?)?)
    }

    /// A key (its opening quote read) that holds no escape; `None` for one that does (the
    /// reader gives up on it, as it would on its value read by [`Reader::string`]).
    #[inline]
    fn key(&mut self) -> Option<&'a str> {
        let start = self.at;
        let end = self.plain_end(start)?;
        if self.bytes.get(end) != Some(&b'"') {
            return None;
        }
        self.at = end + 1;
        self.text.get(start..end)
    }

    /// A string's value (its opening quote read): borrowed when it holds no escape.
    #[expect(clippy::inline_always, reason = "in every string value read: a call each cost more than its work")]
    #[inline(always)]
    fn string(&mut self) -> Option<Cow<'a, str>> {
        let start = self.at;
        let end = self.plain_end(start)?;
        let plain = self.text.get(start..end)?;
        if self.bytes.get(end) == Some(&b'"') {
            self.at = end + 1;
            return Some(Cow::Borrowed(plain));
        }
        self.escaped(plain, end).map(Cow::Owned)
    }

    /// A string's value from its first escape (at `end`), `plain` the text before it.
    /// The runs between escapes are short (a call's arguments: `{\"city\": \"Paris\"}`):
    /// each is found a word (eight bytes) at a time ([`stops`]; the last few bytes of the
    /// body one by one) and copied into bytes that stay UTF-8 (the body is text, a run
    /// ends at an ASCII quote, backslash or control character, an escape adds a whole
    /// character), checked once at the end (no per-run search and copy call).
    #[inline(never)]
    fn escaped(&mut self, plain: &str, end: usize) -> Option<String> {
        // Room for the common escaped string (a call's arguments) without growing.
        let mut out: Vec<u8> = Vec::with_capacity(plain.len() + 64);
        out.extend_from_slice(plain.as_bytes());
        let mut at = end;
        loop {
            if let Some(&word) = self.bytes.get(at..).and_then(|r| r.first_chunk::<8>()) {
                let flagged = stops(u64::from_le_bytes(word));
                // The plain bytes before the first stop (all eight when none is one): the
                // whole word is put in (one store, no copy call) and what follows the run
                // taken off again.
                let run = if flagged == 0 { 8 } else { (flagged.trailing_zeros() / 8) as usize };
                let len = out.len();
                out.extend_from_slice(&word);
                out.truncate(len + run);
                at += run;
                if run == 8 {
                    continue;
                }
            }
            let b = *self.bytes.get(at)?;
            match b {
                b'"' => {
                    self.at = at + 1;
                    return String::from_utf8(out).ok();
                }
                b'\\' => {
                    let e = self.bytes.get(at + 1).copied()?;
                    self.at = at + 2;
                    match e {
                        b'"' => out.push(b'"'),
                        b'\\' => out.push(b'\\'),
                        b'/' => out.push(b'/'),
                        b'b' => out.push(0x08),
                        b'f' => out.push(0x0c),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'u' => {
                            let n = self.hex()?;
                            let c = match n {
                                0xD800..=0xDBFF => {
                                    // A pair, or the reader gives up (serde_json refuses a lone one).
                                    if self.bytes.get(self.at..self.at + 2) != Some(b"\\u") {
                                        return None;
                                    }
                                    self.at += 2;
                                    let low = self.hex()?;
                                    if !(0xDC00..=0xDFFF).contains(&low) {
                                        return None;
                                    }
                                    char::from_u32(0x10000 + ((n - 0xD800) << 10) + (low - 0xDC00))?
                                }
                                _ => char::from_u32(n)?,
                            };
                            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                        }
                        _ => return None,
                    }
                    at = self.at;
                }
                // A control character: serde_json refuses it in a string (the reader gives up).
                0..0x20 => return None,
                _ => {
                    out.push(b);
                    at += 1;
                }
            }
        }
    }

    /// Four hex digits of a `\u` escape.
    fn hex(&mut self) -> Option<u32> {
        let digits = self.text.get(self.at..self.at + 4)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.at += 4;
        u32::from_str_radix(digits, 16).ok()
    }

    /// A string skipped (its opening quote read): escapes of the right form, no control
    /// character (serde_json's check of a string it skips).
    fn skip_string(&mut self) -> Option<()> {
        loop {
            let to = self.plain_end(self.at)?;
            self.at = to + 1;
            if self.bytes.get(to) == Some(&b'"') {
                return Some(());
            }
            match self.peek()? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.at += 1,
                b'u' => {
                    self.at += 1;
                    self.hex()?;
                }
                _ => return None,
            }
        }
    }

    /// Any JSON value skipped, checked as serde_json checks a value it skips.
    pub(crate) fn skip(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => {
                self.at += 1;
                self.skip_string()
            }
            b'{' => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                self.object(|r, _| r.skip(depth + 1))
            }
            b'[' => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                self.at += 1;
                self.list(|r| r.skip(depth + 1))
            }
            b't' => self.word(b"true"),
            b'f' => self.word(b"false"),
            b'n' => self.word(b"null"),
            _ => self.number(),
        }
    }

    pub(crate) fn word(&mut self, w: &[u8]) -> Option<()> {
        (self.bytes.get(self.at..self.at + w.len())? == w).then(|| self.at += w.len())
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    fn number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.some_digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            self.some_digits()?;
        }
        Some(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
    }

    fn some_digits(&mut self) -> Option<()> {
        let from = self.at;
        self.digits();
        (self.at > from).then_some(())
    }

    /// A value read as [`Text`] reads it: a string's value, `None` for another value.
    #[expect(clippy::inline_always, reason = "in every member read as text: a call each cost more than its work")]
    #[inline(always)]
    pub(crate) fn text(&mut self) -> Option<Text<'a>> {
        if self.peek()? == b'"' {
            self.at += 1;
            Some(Text(Some(self.string()?)))
        } else {
            self.skip(1)?;
            Some(Text(None))
        }
    }

    /// A `messages` member as `plain_history` reads it, into `out`: the number of messages
    /// when it is a list of objects none of which is a `tool` result or has calls (`null`
    /// for none).
    fn messages(&mut self, out: &mut Option<usize>) -> Option<()> {
        self.plain_objects(["role", "tool_calls"], out, |r, slot| {
            if slot == 0 {
                return Some(r.text()?.as_str() != Some("tool"));
            }
            if r.peek()? == b'n' {
                r.word(b"null")?;
                Some(true)
            } else {
                r.skip(2)?;
                Some(false)
            }
        })
    }

    /// A Messages `messages` member as that adapter's `plain_history` reads it, into `out`:
    /// the number of messages when it is a list of objects none of whose `content` is a
    /// list of blocks.
    fn blocks_free(&mut self, out: &mut Option<usize>) -> Option<()> {
        self.plain_objects(["content"], out, |r, _| {
            let plain = r.peek()? != b'[';
            r.skip(2)?;
            Some(plain)
        })
    }

    /// A Responses `input` member as that adapter's `plain_history` reads it, into `out`:
    /// one message for a string, the number of items for a list of objects each of whose
    /// `type` is `message` or not a string.
    fn input(&mut self, out: &mut Option<usize>) -> Option<()> {
        if self.peek()? == b'"' {
            *out = Some(1);
            return self.skip(1);
        }
        self.plain_objects(["type"], out, |r, _| Some(matches!(r.text()?.as_str(), None | Some("message"))))
    }

    /// A list of objects, into `out`: their number when each member named in `keys` (given
    /// once at most) is plain by `plain` (called with the key's index in `keys`), `None`
    /// otherwise and for a value that is no list. `None` back when the reader cannot decide
    /// (a key given twice).
    fn plain_objects<const N: usize>(
        &mut self,
        keys: [&str; N],
        out: &mut Option<usize>,
        mut plain_member: impl FnMut(&mut Self, usize) -> Option<bool>,
    ) -> Option<()> {
        if self.peek()? != b'[' {
            *out = None;
            return self.skip(1);
        }
        self.at += 1;
        let (mut count, mut plain) = (0usize, true);
        self.list(|r| {
            r.members(keys, 2, |r, slot| {
                plain &= plain_member(r, slot)?;
                Some(())
            })?;
            count += 1;
            Some(())
        })?;
        *out = plain.then_some(count);
        Some(())
    }

    /// A choice object and its server calls.
    fn choice(&mut self) -> Option<(ChoiceView<'a>, Served<'a>)> {
        let mut choice = ChoiceView { dup: false, message: None, delta: None, finish_reason: RawText::default() };
        let (mut message_calls, mut delta_calls) = (Served::None, Served::None);
        self.members(["message", "delta", "finish_reason"], 1, |r, slot| {
            match slot {
                2 => {
                    let from = r.at;
                    let text = r.text()?;
                    choice.finish_reason = RawText { raw: Some(Raw(r.text.get(from..r.at)?)), text };
                }
                _ if r.peek()? == b'n' => r.word(b"null")?,
                0 => {
                    let (m, c) = r.message()?;
                    choice.message = Some(m);
                    message_calls = c;
                }
                _ => {
                    let (m, c) = r.message()?;
                    choice.delta = Some(m);
                    delta_calls = c;
                }
            }
            Some(())
        })?;
        // `fix_body` reads the message's calls, else the delta's.
        let calls = if choice.message.is_some() { message_calls } else { delta_calls };
        Some((choice, calls))
    }

    /// A message (or delta) object and its server calls.
    fn message(&mut self) -> Option<(MessageView<'a>, Served<'a>)> {
        let mut m = MessageView {
            dup: false,
            content: Prose::default(),
            reasoning_content: Present(None),
            reasoning: Present(None),
            tool_calls: None,
        };
        let mut calls = Served::None;
        self.members(["content", "reasoning_content", "reasoning", "tool_calls"], 1, |r, slot| {
            match slot {
                0 => match r.peek()? {
                    b'"' | b'n' | b'[' => m.content = Prose(r.text()?),
                    _ => return None,
                },
                1 => m.reasoning_content = Present(Some(r.text()?)),
                2 => m.reasoning = Present(Some(r.text()?)),
                // `null` is no member, as an `Option` reads it.
                _ if r.peek()? == b'n' => r.word(b"null")?,
                _ => {
                    let from = r.at;
                    if r.peek()? == b'[' {
                        r.at += 1;
                        let mut views = Vec::new();
                        r.list(|r| {
                            views.push(r.call()?);
                            Some(())
                        })?;
                        calls = Served::Calls(views);
                    } else {
                        r.skip(1)?;
                    }
                    m.tool_calls = Some(Raw(r.text.get(from..r.at)?));
                }
            }
            Some(())
        })?;
        Some((m, calls))
    }

    /// A server call `{"id"?, "function": {"name": string, "arguments": string}}`.
    fn call(&mut self) -> Option<CallView<'a>> {
        let mut call = CallView { id: Text(None), function: None };
        let mut seen = [false; 2];
        self.object(|r, key| match key {
            "id" if !std::mem::replace(&mut seen[0], true) => {
                call.id = r.text()?;
                Some(())
            }
            "function" if !std::mem::replace(&mut seen[1], true) => {
                let mut f = FunctionView { name: Text(None), arguments: Text(None) };
                let mut got = [false; 2];
                r.object(|r, key| match key {
                    "name" if !std::mem::replace(&mut got[0], true) => {
                        f.name = r.text()?;
                        Some(())
                    }
                    "arguments" if !std::mem::replace(&mut got[1], true) => {
                        f.arguments = r.text()?;
                        Some(())
                    }
                    "name" | "arguments" => None,
                    _ => r.skip(2),
                })?;
                call.function = Some(f);
                Some(())
            }
            "id" | "function" => None,
            _ => r.skip(2),
        })?;
        // Only a call the library reads borrowed (see `served`).
        call.native().is_some().then_some(call)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::{ResponseView, Served, served};
    use super::Api;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    /// What `fix_body` uses of a read, written out to compare two reads.
    fn describe(view: &ResponseView<'_>, calls: &[Served<'_>], body: &[u8]) -> Value {
        let span = |raw: Option<super::Raw<'_>>| raw.map(|r| super::super::span_of(body, r));
        let message = |m: &Option<super::MessageView<'_>>| {
            m.as_ref().map(|m| {
                json!({"dup": m.dup, "content": m.content.as_str(),
                    "reasoning_content": m.reasoning_content.0.as_ref().map(|t| t.as_str()),
                    "reasoning": m.reasoning.0.as_ref().map(|t| t.as_str()),
                    "tool_calls": span(m.tool_calls)})
            })
        };
        let choices: Vec<Value> = view
            .choices
            .iter()
            .zip(calls)
            .map(|(c, calls)| {
                let calls = match calls {
                    Served::None => json!("none"),
                    Served::Value(v) => json!({"value": v}),
                    Served::Calls(views) => Value::Array(
                        views
                            .iter()
                            .map(|v| {
                                let n = v.native().unwrap();
                                json!([n.id, n.name, n.arguments])
                            })
                            .collect(),
                    ),
                };
                json!({"dup": c.dup, "message": message(&c.message), "delta": message(&c.delta),
                    "finish_reason": [span(c.finish_reason.raw), c.finish_reason.text.as_str()], "calls": calls})
            })
            .collect();
        json!({"dup": view.dup, "report": view.report.0.is_some(), "choices": choices,
            "served": view.choices.len() == calls.len()})
    }

    /// The serde_json read `fix_body` falls back to.
    fn checked(body: &[u8]) -> Option<Value> {
        let view: ResponseView<'_> = crate::adapter::view::read(body).ok()?;
        let calls: Vec<Served<'_>> = view
            .choices
            .iter()
            .map(|choice| served(choice.message.as_ref().or(choice.delta.as_ref()).and_then(|m| m.tool_calls)))
            .collect();
        Some(describe(&view, &calls, body))
    }

    /// When the hand-written read decides, it reads as serde_json's read.
    fn agrees(body: &[u8]) -> bool {
        let Some((view, calls)) = super::read(body) else { return false };
        let fast = describe(&view, &calls, body);
        assert_eq!(Some(&fast), checked(body).as_ref(), "{}", String::from_utf8_lossy(body));
        true
    }

    /// Each value written compact and pretty.
    fn both_layouts(values: &[Value]) -> Vec<String> {
        values.iter().flat_map(|v| [v.to_string(), serde_json::to_string_pretty(v).unwrap()]).collect()
    }

    fn fixtures() -> Vec<String> {
        let call = |id: &str, args: &str| json!({"id": id, "type": "function", "function": {"name": "get_weather", "arguments": args}});
        let values = [
            crate::fake::completion(
                &json!({"role": "assistant", "content": "Sure.\nHere \"it\" is \u{e9} \u{1F600}",
                    "tool_calls": [call("call_1", "{\"city\": \"Paris\", \"days\": \"3\"}")]}),
                "tool_calls",
            ),
            json!({"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
                "reasoning_content": "think", "reasoning": 3, "tool_calls": null}, "finish_reason": null, "logprobs": null}],
                "usage": {"total_tokens": 1.5e2, "n": -0.25, "z": [true, false, null, {}, []]}, "x_toolfix": {"a": 1}}),
            json!({"choices": [{"delta": {"content": [{"type": "text", "text": "x"}], "tool_calls": []}, "finish_reason": 3},
                {"message": {"content": "a"}, "delta": {"content": "b", "tool_calls": [call("d", "{}")]}},
                {"delta": {"reasoning": "r", "tool_calls": [call("e", "{\"a\": [1, 2]}"), {"function": {"name": "f", "arguments": "{}"}}]}}]}),
            json!({"choices": []}),
            json!({"object": "chat.completion"}),
        ];
        both_layouts(&values)
    }

    #[test]
    fn the_hand_written_read_decides_the_common_bodies_as_serde_json_reads_them() {
        for body in fixtures() {
            assert!(agrees(body.as_bytes()), "not decided: {body}");
        }
        // Escapes in what the proxy reads are decoded as serde_json decodes them.
        assert!(agrees(br#"{"choices": [{"message": {"content": "a\u00e9\ud83d\ude00\/\b\f\r\t\\\""}}]}"#));
        // What it does not decide (serde_json's read then says what the body is).
        for body in [
            &br#"{"choices": [{"message": {"content": "lone \ud800"}}]}"#[..],
            br#"{"choices": [{"message": {"content": "x", "content": "y"}}]}"#,
            br#"{"choices": [], "choices": []}"#,
            br#"{"ch\u006fices": []}"#,
            br#"{"choices": [{"message": {"content": 3}}]}"#,
            br#"{"choices": [{"message": {"tool_calls": [{"function": null}]}}]}"#,
            br#"{"choices": [{"message": {"tool_calls": [1]}}]}"#,
            br#"{"choices": null}"#,
            br#"{"choices": [[]]}"#,
            b"{\"choices\": [], \"x\": \"raw\ttab\"}",
            b"{\"choices\": [], \"x\": \"\xff\"}",
            br#"{"choices": [], "x": 01}"#,
            br#"{"choices": [],}"#,
            br#"{"choices": []} x"#,
            b"[]",
        ] {
            assert!(super::read(body).is_none(), "{}", String::from_utf8_lossy(body));
        }
        let deep = format!("{{\"choices\": [], \"x\": {}{}}}", "[".repeat(150), "]".repeat(150));
        assert!(super::read(deep.as_bytes()).is_none());
    }

    /// When the hand-written peek decides, it reads the request as serde_json's peek.
    fn peeks_alike(body: &[u8]) -> bool {
        let Some(fast) = super::peek(body, None) else { return false };
        let checked = super::super::checked_peek(body).ok();
        assert_eq!(Some(show(&fast)), checked.as_ref().map(show), "{}", String::from_utf8_lossy(body));
        true
    }

    type Shown = (Option<String>, bool, Option<String>, Option<usize>);

    fn show(p: &crate::adapter::Peek<'_>) -> Shown {
        (p.tools.map(str::to_owned), p.stream, p.model.as_str().map(str::to_owned), p.plain)
    }

    /// When the hand-written peek decides a Messages or Responses request, it reads it as
    /// that adapter's serde_json peek.
    fn other_peeks_alike(body: &[u8], api: Api) -> bool {
        // The adapter's peek (the hand-written read when it decides) is serde_json's.
        known_peeks_alike(body, api, None);
        super::peek_as(body, api, None).is_some()
    }

    /// The request's peek by the adapter of `api` told `known` (see `peek_known`) is
    /// serde_json's peek: told the text as another API's, and, when `api`'s own peek takes
    /// it as tool definitions, as its own (`Known::here`, as the proxy tells it).
    fn known_peeks_alike(body: &[u8], api: Api, known: Option<&str>) {
        use crate::adapter::{Adapter as _, Known};
        let checked = |body: &[u8]| match api {
            Api::Messages => crate::adapter::messages::checked_peek(body).ok().map(|p| show(&p)),
            Api::Responses => crate::adapter::responses::checked_peek(body).ok().map(|p| show(&p)),
            Api::Chat => super::super::checked_peek(body).ok().map(|p| show(&p)),
        };
        let fast = |known: Option<Known<'_>>| match api {
            Api::Messages => crate::adapter::messages::Messages::peek_known(body, known).ok().map(|p| show(&p)),
            Api::Responses => crate::adapter::responses::Responses::peek_known(body, known).ok().map(|p| show(&p)),
            Api::Chat => crate::adapter::chat::ChatCompletions::peek_known(body, known).ok().map(|p| show(&p)),
        };
        // Whether `api` takes the text as tool definitions (as in the request it came in).
        let taken = known.is_some_and(|k| {
            checked(format!("{{\"tools\": {k}}}").as_bytes()).is_some_and(|(tools, ..)| tools.is_some())
        });
        for here in [false, taken] {
            let told = known.map(|text| Known { text, here });
            assert_eq!(fast(told), checked(body), "{api:?} knowing {told:?}: {}", String::from_utf8_lossy(body));
        }
    }

    /// The text of a request's `tools` member, as a peek reads it (what the proxy tells the
    /// next peek).
    fn tools_text(body: &str) -> Option<String> {
        #[derive(serde::Deserialize)]
        struct Tools<'a> {
            #[serde(borrow)]
            tools: Option<&'a serde_json::value::RawValue>,
        }
        serde_json::from_str::<Tools<'_>>(body).ok()?.tools.map(|t| t.get().to_owned())
    }

    #[test]
    fn a_known_tools_text_is_taken_only_where_the_body_holds_that_whole_array() {
        let all = || requests().into_iter().chain(other_requests(false)).chain(other_requests(true));
        for body in all() {
            for known in all().filter_map(|b| tools_text(&b)) {
                for api in [Api::Chat, Api::Messages, Api::Responses] {
                    known_peeks_alike(body.as_bytes(), api, Some(&known));
                }
            }
        }
        for (body, known) in [
            (&br#"{"tools": [1]], "model": "m"}"#[..], "[1]"),
            (br#"{"tools": [1, 2], "model": "m"}"#, "[1]"),
            (br#"{"tools": 12, "model": "m"}"#, "1"),
            (br#"{"tools": [1], "tools": [1]}"#, "[1]"),
            (br#"{"tools": [{"a": 1}] "#, "[{\"a\": 1}]"),
            (br#"{"tools": [{"a": 1}]}"#, "[{\"a\": 1}"),
            (br#"{"tools": [{"a": 1}],}"#, "[{\"a\": 1}]"),
        ] {
            for api in [Api::Chat, Api::Messages, Api::Responses] {
                known_peeks_alike(body, api, Some(known));
            }
        }
    }

    /// Requests of the Messages (`false`) or Responses (`true`) API.
    fn other_requests(responses: bool) -> Vec<String> {
        let values = if responses {
            let tool = json!({"type": "function", "name": "f", "parameters": {"type": "object"}});
            [
                json!({"model": "m\u{e9}", "input": "Weather?", "tools": [tool], "stream": false, "temperature": 0.5}),
                json!({"model": null, "input": [{"role": "user", "content": "u"}, {"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": "a"}]}, {"type": 3}], "tools": [], "stream": true}),
                json!({"input": [{"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
                    {"type": "function_call_output", "call_id": "a", "output": "x"}], "tools": [{"type": "web_search"}], "stream": null}),
                json!({"input": {"role": "user"}, "tools": {"a": 1}, "model": 3, "messages": [1]}),
                json!({"input": null, "tools": null}),
            ]
        } else {
            let tool = json!({"name": "f", "description": "d", "input_schema": {"type": "object"}});
            [
                json!({"model": "m\u{e9}", "max_tokens": 10, "system": "s", "messages": [{"role": "user", "content": "Weather?"}],
                    "tools": [tool], "stream": false}),
                json!({"model": null, "messages": [{"role": "assistant", "content": null},
                    {"role": "user", "content": [{"type": "text", "text": "u"}]}], "tools": [], "stream": true}),
                json!({"messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "x"}]}],
                    "tools": [{"type": "web_search_20250305", "name": "web_search"}], "stream": null}),
                json!({"messages": {"role": "user"}, "tools": {"input_schema": 1}, "model": 3, "input": "x"}),
                json!({"messages": null, "tools": null}),
            ]
        };
        both_layouts(&values)
    }

    #[test]
    fn the_hand_written_peek_decides_messages_and_responses_requests_as_serde_json_reads_them() {
        for (api, responses) in [(Api::Messages, false), (Api::Responses, true)] {
            for body in other_requests(responses) {
                assert!(other_peeks_alike(body.as_bytes(), api), "not decided: {body}");
            }
        }
        for body in [
            &br#"{"stream": 1}"#[..],
            br#"{"messages": ["hi"], "input": ["hi"]}"#,
            br#"{"model": "a", "model": "b"}"#,
            br#"{"messages": [{"content": "a", "content": []}], "input": [{"type": "a", "type": "message"}]}"#,
            br#"{"messages": [{"con\u0074ent": []}], "input": [{"typ\u0065": "x"}]}"#,
            b"[[], true]",
        ] {
            for api in [Api::Messages, Api::Responses] {
                assert!(!other_peeks_alike(body, api), "{api:?}: {}", String::from_utf8_lossy(body));
            }
        }
    }

    fn requests() -> Vec<String> {
        let tool = json!({"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}});
        let values = [
            json!({"model": "m\u{e9}", "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "Weather?"}],
                "tools": [tool], "stream": false, "temperature": 0.5}),
            json!({"model": null, "messages": [{"role": "assistant", "content": "a", "tool_calls": null},
                {"role": "user", "content": [{"type": "text", "text": "u"}]}], "tools": [], "stream": true}),
            json!({"messages": [{"role": "assistant", "tool_calls": [{"id": "a"}]}, {"role": "tool", "content": "x"}],
                "tools": null, "stream": null}),
            json!({"messages": {"role": "user"}, "tools": {"a": 1}, "model": 3}),
            json!({}),
        ];
        let mut out = both_layouts(&values);
        out.push("{\"tools\": [ ], \"messages\": []}".to_owned());
        out
    }

    #[test]
    fn the_hand_written_peek_decides_common_requests_as_serde_json_reads_them() {
        for body in requests() {
            assert!(peeks_alike(body.as_bytes()), "not decided: {body}");
        }
        for body in [
            &br#"{"stream": 1}"#[..],
            br#"{"messages": ["hi"]}"#,
            br#"{"model": "a", "model": "b"}"#,
            br#"{"messages": [{"role": "user", "tool\u005fcalls": []}]}"#,
            b"[[], true]",
        ] {
            assert!(super::peek(body, None).is_none(), "{}", String::from_utf8_lossy(body));
        }
    }

    /// A view's text, to compare two reads (the Messages and Responses readers' tests).
    pub(crate) fn text_json(t: &crate::adapter::view::Text<'_>) -> serde_json::Value {
        serde_json::json!(t.as_str())
    }

    /// A view's raw member, to compare two reads.
    pub(crate) fn field_json(f: &crate::adapter::view::Field<'_>) -> serde_json::Value {
        serde_json::json!(f.0)
    }

    /// Up to four edits for [`damaged`], of bytes that matter to a JSON reader.
    pub(crate) fn edits() -> impl Strategy<Value = Vec<(prop::sample::Index, u8, u8)>> {
        proptest::collection::vec(
            (
                any::<prop::sample::Index>(),
                0u8..4,
                prop::sample::select(&b"\"\\{}[],:0123456789-+.eEtrufalsn \n\t\x01\xc3\xa9uU/x"[..]),
            ),
            0..4,
        )
    }

    /// `body` with `edits` made, in turn: a byte put in (0), dropped (1), changed (2), or the
    /// body cut there (3).
    pub(crate) fn damaged(mut body: Vec<u8>, edits: Vec<(prop::sample::Index, u8, u8)>) -> Vec<u8> {
        for (at, kind, byte) in edits {
            let i = at.index(body.len() + 1);
            match kind {
                0 => body.insert(i, byte),
                1 if i < body.len() => {
                    body.remove(i);
                }
                2 if i < body.len() => body[i] = byte,
                _ => body.truncate(i),
            }
        }
        body
    }

    /// Where the plain run from `from` ends, byte by byte (what `plain_end` answers).
    fn plain_end_bytewise(bytes: &[u8], from: usize) -> Option<usize> {
        let i = from + bytes.get(from..)?.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
        (bytes[i] >= 0x20).then_some(i)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The word-at-a-time search for a string's end answers as a byte loop, from any
        /// place, for bytes dense in quotes, backslashes, controls, UTF-8 and the values
        /// next to them (a borrow between lanes must not flag a byte below the first stop).
        #[test]
        fn plain_end_answers_as_a_byte_loop(
            bytes in proptest::collection::vec(
                prop_oneof![
                    Just(b'"'), Just(b'\\'), Just(0u8), Just(0x1f), Just(0x20), Just(0x21), Just(0x23),
                    Just(0x5b), Just(0x5d), Just(0x7f), Just(0x80), Just(0xc3), Just(0xa9), Just(0xff),
                    Just(b'a'), any::<u8>()
                ],
                0..80,
            ),
            from in 0usize..80,
        ) {
            // As the reader of a text with control characters, and of one without (the
            // bytes with each control character made a space).
            let r = super::Reader { text: "", bytes: &bytes, at: 0, clean: false };
            prop_assert_eq!(r.plain_end(from), plain_end_bytewise(&bytes, from));
            let spaced: Vec<u8> = bytes.iter().map(|&b| if b < 0x20 { b' ' } else { b }).collect();
            let r = super::Reader { text: "", bytes: &spaced, at: 0, clean: true };
            prop_assert_eq!(r.plain_end(from), plain_end_bytewise(&spaced, from));
        }

        /// A string literal (escapes of every kind, lone and paired surrogates, controls,
        /// UTF-8, a missing end) is read as serde_json reads it wherever the reader
        /// decides, in a text with control characters and in one without.
        #[test]
        fn strings_read_as_serde_json_reads_them(
            pieces in proptest::collection::vec(
                prop_oneof![
                    Just("\\\"".to_owned()), Just("\\\\".to_owned()), Just("\\/".to_owned()),
                    Just("\\b".to_owned()), Just("\\f".to_owned()), Just("\\n".to_owned()),
                    Just("\\r".to_owned()), Just("\\t".to_owned()), Just("\\x".to_owned()),
                    Just("\\u00e9".to_owned()), Just("\\u0000".to_owned()), Just("\\ud83d\\ude00".to_owned()),
                    Just("\\ud83d".to_owned()), Just("\\ude00".to_owned()), Just("\\u12".to_owned()),
                    Just("\\uZZZZ".to_owned()), Just("\u{1}".to_owned()), Just("\t".to_owned()),
                    Just("é".to_owned()), Just("😀".to_owned()), Just("\\".to_owned()),
                    "[ -~]{0,6}".prop_filter("no quote or backslash", |s| !s.contains(['"', '\\'])),
                ],
                0..12,
            ),
            closed in any::<bool>(),
            more in any::<bool>(),
        ) {
            let inner = pieces.concat();
            let literal = if closed { format!("\"{inner}\"") } else { format!("\"{inner}") };
            // Bytes after the string (a body goes on): a read a word at a time sees them.
            let literal = if more { format!("{literal}, \"next\": \"\\u00e9\"}}") } else { literal };
            for clean in [false, true] {
                if clean && literal.bytes().any(|b| b < 0x20) {
                    continue;
                }
                let mut r = super::Reader { text: &literal, bytes: literal.as_bytes(), at: 1, clean };
                if let Some(got) = r.string() {
                    // Where the reader ends the string, serde_json reads the same string.
                    let want = literal.get(..r.at).and_then(|l| serde_json::from_str::<String>(l).ok());
                    prop_assert_eq!(Some(got.into_owned()), want, "{:?}", literal);
                } else if closed && !more {
                    // A string serde_json reads whole is one the reader decides (the
                    // reader gives up only on what serde_json refuses).
                    prop_assert!(serde_json::from_str::<String>(&literal).is_err() || literal.contains("\\u0000") || literal.bytes().any(|b| b < 0x20), "{:?}", literal);
                }
            }
        }

        /// Damaged Messages and Responses requests: the adapter's peek is serde_json's.
        #[test]
        fn damaged_other_requests_peek_as_serde_json_peeks(
            which in 0usize..10,
            responses in any::<bool>(),
            edits in edits(),
        ) {
            let body = damaged(other_requests(responses)[which].clone().into_bytes(), edits);
            other_peeks_alike(&body, if responses { Api::Responses } else { Api::Messages });
        }

        /// Damaged requests told the intact request's tools text: every adapter's peek is
        /// serde_json's.
        #[test]
        fn damaged_requests_told_a_known_tools_text_peek_as_serde_json_peeks(
            which in 0usize..31,
            edits in edits(),
        ) {
            let all: Vec<String> = requests().into_iter().chain(other_requests(false)).chain(other_requests(true)).collect();
            let intact = all[which % all.len()].clone();
            let known = tools_text(&intact);
            let body = damaged(intact.into_bytes(), edits);
            for api in [Api::Chat, Api::Messages, Api::Responses] {
                known_peeks_alike(&body, api, known.as_deref());
            }
        }

        /// Damaged requests: where the hand-written peek decides, serde_json's agrees.
        #[test]
        fn damaged_requests_peek_as_serde_json_peeks(
            which in 0usize..11,
            edits in edits(),
        ) {
            let body = damaged(requests()[which].clone().into_bytes(), edits);
            if super::peek(&body, None).is_some() {
                peeks_alike(&body);
            }
        }

        /// Bodies cut, with bytes dropped, changed or put in: where the hand-written read
        /// decides, serde_json's read agrees.
        #[test]
        fn damaged_bodies_read_as_serde_json_reads_them(
            which in 0usize..10,
            edits in edits(),
        ) {
            let body = damaged(fixtures()[which].clone().into_bytes(), edits);
            if super::read(&body).is_some() {
                agrees(&body);
            }
        }
    }
}
