//! Quoted strings: where one ends (bounded lookahead at what follows a quote), quotes of
//! every kind, inner quotes, missing quotes, concatenation, escapes, and a string cut off
//! by the end of input.

use super::closers::closes;
use super::{Ctx, KeyAhead, Kind, Parser};
use crate::error::{ErrorKind, Result};
use crate::pointer::scan::first_in;
use crate::report::UncertainKind;
use crate::salvage::FixKind as K;
use crate::salvage::lex::memchr_in;
use crate::salvage::lex::{
    LOOKAHEAD, Quote, comment_starts, control_escape, hex4, ident_at, ident_then_colon, invisible_before, is_ident,
    is_ident_start, is_ws, key_or_cut_key, key_then_colon, line_then_quote, open_quote, quoted_closes, quoted_then,
    skip_gap, skip_layout, skip_ws, value_starts,
};

/// Bytes the string scan must look at: quotes of every kind, escapes, control characters,
/// braces (for objects written inside a string) and the lead bytes of typographic quotes
/// (`´` U+00B4, `‘’“”„`). Everything else is skipped at once.
static STOP: [bool; 256] = crate::pointer::scan::controls_and(b"\"\\'`{}\xC2\xE2");

/// The first byte at or after `i` that the string scan must look at ([`STOP`]), or `end`.
fn skip_plain(b: &[u8], i: usize, end: usize) -> usize {
    let Some(rest) = b.get(i..end) else { return i };
    first_in(rest, &STOP).map_or(end, |p| i + p)
}

impl Parser<'_> {
    /// The common string, taken without the general scan: at `self.pos`, a `"` whose text
    /// holds nothing the scan would look at ([`STOP`]), closed by the next `"`, which
    /// [`Parser::closes_string`] says closes it and which no `+`, comment or layout
    /// follows. Nothing in it needs an edit, so this is what [`Parser::string`] would
    /// return; returns `None` (having changed nothing) for any other string.
    pub(super) fn plain_string(&mut self, ctx: Ctx) -> Option<usize> {
        let open = self.pos;
        if self.at(open) != Some(b'"') {
            return None;
        }
        let close = skip_plain(self.b, open + 1, self.end);
        if self.at(close) != Some(b'"') {
            return None;
        }
        let next = self.at(skip_ws(self.b, close + 1, self.end));
        if next.is_none_or(|c| matches!(c, b'/' | b'#' | b'+') || c >= 0xC2) {
            return None;
        }
        // A key followed by its colon is closed there (what `closes_string` says of it,
        // asked only about the rest).
        let key_then_colon = ctx == Ctx::Key && next == Some(b':');
        if !key_then_colon && !self.closes_string(open + 1, close, 1, ctx, false) {
            return None;
        }
        self.pos = close + 1;
        Some(close + 1)
    }

    /// True when a plain key starts at `m`: a `"`, text with nothing [`STOP`] marks, its
    /// closing `"`, then `:` after JSON whitespace. That is a key to [`key_or_cut_key`],
    /// and [`Parser::plain_string`] would take it as one; it is noted, so that
    /// [`Parser::key`] takes it from here without reading it again. (The scan stops no
    /// later than the one of `key_or_cut_key`.)
    fn plain_key_ahead(&self, m: usize) -> bool {
        if self.at(m) != Some(b'"') {
            return false;
        }
        let close = skip_plain(self.b, m + 1, self.end);
        if self.at(close) != Some(b'"') {
            return false;
        }
        let colon = skip_ws(self.b, close + 1, self.end);
        if self.at(colon) != Some(b':') {
            return false;
        }
        self.key_ahead.set(Some(KeyAhead { open: m, close, colon, end: self.end }));
        true
    }

    /// A quoted string at `self.pos`. Returns the end of the string in the source, or
    /// `None` when it was a key cut off by the end of input (and dropped).
    pub(super) fn string(&mut self, ctx: Ctx) -> Result<Option<usize>> {
        let open = self.pos;
        let Some((qlen, mut q)) = open_quote(self.b, open) else {
            return Err(self.error(ErrorKind::Syntax, "expected a string", open));
        };
        let checkpoint = self.edits.checkpoint();
        let mut fix = self.requote_open(open, qlen, q);
        let mut i = open + qlen;
        // Where the text of the string's last piece starts: after `"a" + "`, a look back
        // for a lost closing quote never reaches into the pieces joined before.
        let mut piece = i;
        // Inner quotes come in pairs: after an odd one, the next closes the quotation,
        // not the string, unless the structure says so plainly.
        let mut inner = 0usize;
        // Objects written inside the string (`"answer is {"k": 1}, ok"`): while one is open,
        // its quotes, commas and braces belong to it, not to the structure around.
        let mut embedded = 0usize;
        loop {
            let close_byte = q.close_byte();
            let loose = q.closes_loosely();
            while i < self.end {
                i = skip_plain(self.b, i, self.end);
                let Some(c) = self.at(i) else { break };
                if c == b'"' || c == b'\\' || c < 0x20 || c == close_byte {
                    break;
                }
                if loose && matches!(c, b'\'' | b'`' | 0xC2 | 0xE2) && q.close_at(self.b, i).is_some() {
                    break;
                }
                if c == b'{' && self.at(i + 1) == Some(b'"') && i + 2 < self.end && ident_at(self.b, i + 2) {
                    embedded += 1;
                } else if c == b'}' {
                    embedded = embedded.saturating_sub(1);
                } else if c == 0xE2 && q == Quote::Double && is_typographic_double(self.b, i) {
                    // „quoted" or “quoted": a typographic quotation mark inside the string
                    // pairs with the next quote, which is then part of the text.
                    inner += 1;
                }
                i += 1;
            }
            if i >= self.end {
                return self.string_at_eof(open, qlen, piece, ctx, checkpoint);
            }
            let c = self.b[i];
            if c == b'\\' {
                i = self.escape(i, q);
                continue;
            }
            if c < 0x20 {
                self.edits.replace(i, i + 1, control_escape(c), Some(K::ControlCharacter));
                i += 1;
                continue;
            }
            if let Some(n) = q.close_at(self.b, i) {
                if (embedded == 0 || i + n >= self.end) && self.closes_string(piece, i, n, ctx, inner % 2 == 1) {
                    // "a" + "b": join the pieces (reading through comments only when one
                    // may start: the common case is a delimiter).
                    let mut j = skip_ws(self.b, i + n, self.end);
                    if self.at(j).is_some_and(|c| matches!(c, b'/' | b'#') || c >= 0xC2) {
                        j = skip_gap(self.b, j, self.end);
                    }
                    if self.at(j) == Some(b'+') {
                        let k = skip_gap(self.b, j + 1, self.end);
                        if let Some((qlen2, q2)) = open_quote(self.b, k) {
                            self.edits.delete(i, k + qlen2, Some(K::StringConcatenation));
                            if q2 != Quote::Double && fix.is_none() {
                                fix = Some(self.edits.note(k, k + qlen2, quote_fix(q2)));
                            }
                            q = q2;
                            i = k + qlen2;
                            piece = i;
                            continue;
                        }
                    }
                    if q != Quote::Double || n != 1 {
                        self.edits.replace(i, i + n, "\"", None);
                    }
                    if let Some(idx) = fix {
                        self.edits.extend_fix(idx, i + n);
                    }
                    self.pos = i + n;
                    return Ok(Some(i + n));
                }
                if ctx == Ctx::ObjValue
                    && c == b'"'
                    && embedded == 0
                    && let Some(end) = self.missing_quote_before(piece, i, checkpoint)
                {
                    return Ok(Some(end));
                }
                if ctx == Ctx::ArrValue
                    && c == b'"'
                    && embedded == 0
                    && let Some(end) = self.element_after_line_break(piece, i, checkpoint)
                {
                    return Ok(Some(end));
                }
                if c == b'"' {
                    self.edits.insert(i, "\\", Some(K::InnerQuote));
                }
                inner += 1;
                i += n;
                continue;
            }
            if c == b'"' {
                // A double quote inside a string quoted otherwise.
                self.edits.insert(i, "\\", None);
            }
            i += 1;
        }
    }

    /// Rewrite a non-double opening quote; returns the index of its fix.
    pub(super) fn requote_open(&mut self, open: usize, qlen: usize, q: Quote) -> Option<usize> {
        if q == Quote::Double { None } else { Some(self.edits.replace(open, open + qlen, "\"", Some(quote_fix(q)))) }
    }

    /// `{"city": "New York, "zip": "10001"}`: the quote at `q` opens the next key, so the
    /// string really ended before the comma. Returns the string's new end.
    pub(super) fn missing_quote_before(&mut self, content: usize, q: usize, checkpoint: usize) -> Option<usize> {
        let mut k = q;
        while k > content && is_ws(self.b[k - 1]) {
            k -= 1;
        }
        let comma = if k > content && self.b[k - 1] == b',' && key_then_colon(self.b, q, self.end) {
            k - 1
        } else if k > content && self.b[k - 1] == b':' {
            // `"first, b: "second"`: an unquoted key and its value's opening quote.
            let mut m = k - 1;
            while m > content && is_ws(self.b[m - 1]) {
                m -= 1;
            }
            let key_end = m;
            while m > content && is_ident(self.b[m - 1]) && self.b[m - 1] != b'.' {
                m -= 1;
            }
            if m == key_end || !is_ident_start(self.b[m]) {
                return None;
            }
            while m > content && is_ws(self.b[m - 1]) {
                m -= 1;
            }
            if m <= content || self.b[m - 1] != b',' {
                return None;
            }
            m - 1
        } else {
            return None;
        };
        Some(self.close_before(content, comma, checkpoint))
    }

    /// `["abc,\n"def"]`: in an array, the quote at `q` starts a line after a comma and opens
    /// a short string that closes before the next delimiter: the string before ended at the
    /// comma, its closing quote lost (a raw line break inside a string is not JSON; a
    /// comma then a line break is how elements are written). Returns the string's new end.
    pub(super) fn element_after_line_break(&mut self, content: usize, q: usize, checkpoint: usize) -> Option<usize> {
        let mut k = q;
        let mut line_break = false;
        while k > content && is_ws(self.b[k - 1]) {
            line_break |= matches!(self.b[k - 1], b'\n' | b'\r');
            k -= 1;
        }
        let comma = (line_break && k > content && self.b[k - 1] == b',').then(|| k - 1)?;
        quoted_then(self.b, q, self.end, b",]").then(|| self.close_before(content, comma, checkpoint))
    }

    /// At `k`, a `{` that starts the next object of the array whose element (an object)
    /// is open: a key (or `}`) follows it. See [`Parser::glued_element`].
    fn glued_object_ahead(&self, k: usize) -> bool {
        let n = self.stack.len();
        let in_array = n >= 2 && self.stack.get(n - 2).is_some_and(|p| p.kind == Kind::Array);
        let m = skip_layout(self.b, k + 1, self.end);
        in_array && (self.at(m) == Some(b'}') || key_then_colon(self.b, m, self.end))
    }

    /// `["a (2)", b (3)]`: after a comma in an array, words that run to the next `,` or `]`
    /// on the same line with no quote among them: an element written without quotes, so
    /// the quote before the comma closed a string.
    fn unquoted_element_ahead(&self, m: usize) -> bool {
        if !self.at(m).is_some_and(is_ident_start) {
            return false;
        }
        let limit = self.end.min(m + LOOKAHEAD);
        let mut depth = 0usize;
        for &c in self.b.get(m..limit).unwrap_or_default() {
            match c {
                b'"' | b'\'' | b'\n' | b'\r' | b'{' | b'[' | b'}' | b':' => return false,
                b'(' => depth += 1,
                b')' if depth > 0 => depth -= 1,
                b',' | b']' if depth == 0 => return true,
                b')' => return false,
                _ => {}
            }
        }
        limit == self.end
    }

    /// End the string whose text starts at `content` before the comma at `comma` (and the
    /// whitespace before it): the closing quote missing there is inserted, and what the
    /// scan did past that point is undone. Returns the string's new end.
    pub(super) fn close_before(&mut self, content: usize, comma: usize, checkpoint: usize) -> usize {
        let mut end = comma;
        while end > content && is_ws(self.b[end - 1]) {
            end -= 1;
        }
        self.edits.rollback(checkpoint, end);
        self.edits.insert(end, "\"", Some(K::MissingQuote));
        self.pos = end;
        end
    }

    /// Does the quote at `q` (`n` bytes) close the string whose text starts at `content`,
    /// given what follows it?
    pub(super) fn closes_string(&self, content: usize, q: usize, n: usize, ctx: Ctx, open_inner: bool) -> bool {
        let j = q + n;
        let k = skip_layout(self.b, j, self.end);
        let Some(c) = self.at(k) else { return true };
        if comment_starts(self.b, k) {
            return true;
        }
        let concat = || c == b'+' && open_quote(self.b, skip_gap(self.b, k + 1, self.end)).is_some();
        match ctx {
            Ctx::Top => !((k == j && is_ident(c)) || self.quote_ends_top_text(k)),
            Ctx::Key => {
                if is_ident_start(c) || c.is_ascii_digit() {
                    // `"k"e"y": 1`: a word glued to another quote is still the key.
                    let limit = self.end.min(k + LOOKAHEAD);
                    let mut m = k;
                    while m < limit && ident_at(self.b, m) {
                        m += 1;
                    }
                    self.at(m) != Some(b'"')
                } else {
                    true
                }
            }
            Ctx::ObjValue => match c {
                b',' => {
                    let m = skip_layout(self.b, k + 1, self.end);
                    match self.at(m) {
                        None | Some(b'}') => true,
                        Some(_) if comment_starts(self.b, m) => true,
                        Some(_) => self.plain_key_ahead(m) || key_or_cut_key(self.b, m, self.end),
                    }
                }
                b'}' | b']' | b')' => !self.closes_own_bracket(content, q, c, k) && self.closer_fits(c, k),
                b'+' => concat(),
                // `[{"a": "x"{"a": "y"}]`: the next object of the array starts here.
                b'{' => self.glued_object_ahead(k),
                _ if open_quote(self.b, k).is_some() => key_then_colon(self.b, k, self.end),
                _ if k == j && is_ident(c) => false,
                _ if is_ident_start(c) => {
                    ident_then_colon(self.b, k, self.end) || (!open_inner && self.words_then_end(k, ctx))
                }
                _ => false,
            },
            Ctx::ArrValue => match c {
                b',' => {
                    let m = skip_layout(self.b, k + 1, self.end);
                    match self.at(m) {
                        None | Some(b']' | b')') => true,
                        Some(_) if comment_starts(self.b, m) => true,
                        Some(_) => value_starts(self.b, m) || self.unquoted_element_ahead(m),
                    }
                }
                b'}' | b']' | b')' => !self.closes_own_bracket(content, q, c, k) && self.closer_fits(c, k),
                b':' => self.stack.last().is_some_and(|f| f.kind == Kind::Array && f.count == 0),
                b'+' => concat(),
                _ if open_inner => false,
                _ if open_quote(self.b, k).is_some() => quoted_closes(self.b, k, self.end),
                _ if k == j && is_ident(c) => false,
                _ if is_ident_start(c) => self.words_then_end(k, ctx),
                _ => k > j && value_starts(self.b, k),
            },
        }
    }

    /// After a quote that would close a top-level string, at `k`: text,
    /// then a last quote that ends the text (`"He is 6'2" tall"`, `"six feet (72") tall"`),
    /// or only another quote (`"The TV is 72""`). The quote was part of the text (an inch
    /// mark), and the string runs to the last quote: the text is kept, never cut. Bounded:
    /// the rest is short, one line, and holds no structure.
    pub(super) fn quote_ends_top_text(&self, k: usize) -> bool {
        let Some(r) = self.b.get(k..self.end).filter(|r| r.len() <= LOOKAHEAD) else { return false };
        match r.first() {
            Some(b'"') => skip_layout(r, 1, r.len()) >= r.len(),
            Some(&c) if !matches!(c, b',' | b'+' | b':' | b'{' | b'[' | b'}' | b']' | b'/' | b'#') => {
                line_then_quote(r).is_some()
            }
            _ => false,
        }
    }

    /// `["six feet (72") tall"]`: the closer `c` at `k`, right after the quote at `q`,
    /// closes a bracket opened in the string's own text (from `content`), and the text
    /// goes on after it to a quote that ends the value on the same line. The quote at `q`
    /// is an inch mark or a quotation inside brackets, not the string's end. Bounded.
    fn closes_own_bracket(&self, content: usize, q: usize, c: u8, k: usize) -> bool {
        let opener = match c {
            b')' => b'(',
            b']' => b'[',
            _ => b'{',
        };
        let text = self.b.get(content.max(q.saturating_sub(LOOKAHEAD))..q).unwrap_or_default();
        if memchr::memchr_iter(opener, text).count() <= memchr::memchr_iter(c, text).count() {
            return false;
        }
        let limit = self.end.min(k + 1 + LOOKAHEAD);
        let mut m = k + 1;
        while m < limit && !matches!(self.b[m], b'"' | b'\n' | b'\r' | b'{' | b'[' | b'}' | b']' | b':') {
            m += 1;
        }
        // The quote is glued to the text before it (`tall"`), as a closing quote is: not one
        // that opens the next element (`] , "`).
        // Invisible characters are layout here too (`], \u{200b}"`).
        let mut before = m;
        loop {
            let n = invisible_before(self.b, before);
            if n == 0 {
                break;
            }
            before -= n;
        }
        let glued = !is_ws(self.b[before - 1]) && self.b[before - 1] != b',';
        let after = skip_layout(self.b, m + 1, self.end);
        glued && self.at(m) == Some(b'"') && matches!(self.at(after), None | Some(b',' | b']' | b'}' | b')'))
    }

    /// Does the closer `c` at `k` plausibly end the string's container? Some open frame
    /// must close with it, and unless it ends the top-level value, what follows must be
    /// a delimiter: `"a": "['"]("` has a `]` that closes nothing.
    pub(super) fn closer_fits(&self, c: u8, k: usize) -> bool {
        if !self.stack.iter().any(|f| closes(*f, c)) {
            // `{"a": "x"]`: the last byte of the text, a closer of the wrong kind, ends the
            // value all the same (a typo for the right one).
            return skip_layout(self.b, k + 1, self.end) >= self.end;
        }
        let ends_top = self.stack.len() == 1 && self.stack.first().is_some_and(|f| closes(*f, c));
        if ends_top {
            return true;
        }
        let n = skip_layout(self.b, k + 1, self.end);
        match self.at(n) {
            None | Some(b',' | b'}' | b']' | b')' | b':') => true,
            Some(_) => comment_starts(self.b, n),
        }
    }

    /// Does some open frame close with `c`?
    pub(super) fn any_closes(&self, c: u8) -> bool {
        self.stack.iter().any(|f| closes(*f, c))
    }

    /// After a closing quote and a space, words: `"xxxxx" true}` or `"a" b", "c"`. True
    /// when the words end where a member ends (a closer, or a stray quote then a
    /// delimiter), so the quote before them really closed the string.
    pub(super) fn words_then_end(&self, k: usize, ctx: Ctx) -> bool {
        let limit = self.end.min(k + LOOKAHEAD);
        let mut m = k;
        while m < limit && (ident_at(self.b, m) || self.b[m] == b' ') {
            m += 1;
        }
        match self.at(m) {
            None => m < limit,
            Some(c @ (b'}' | b']' | b')')) => self.any_closes(c),
            // `["a" b", "c"]`: in an array the words are the next element, its opening quote
            // missing. In an object no member can start with them (`{"size": "6" screen"}`):
            // the first quote was part of the text (an inch mark), the string runs on.
            Some(b'"') if ctx == Ctx::ArrValue => {
                let n = skip_layout(self.b, m + 1, self.end);
                matches!(self.at(n), None | Some(b',' | b'}' | b']'))
            }
            Some(b'"') => false,
            Some(b',') if ctx == Ctx::ArrValue => {
                let n = skip_layout(self.b, m + 1, self.end);
                self.at(n).is_none_or(|_| value_starts(self.b, n))
            }
            _ => false,
        }
    }

    /// The input ended inside a string that opened at `open`.
    #[cold]
    pub(super) fn string_at_eof(
        &mut self,
        open: usize,
        qlen: usize,
        piece: usize,
        ctx: Ctx,
        checkpoint: usize,
    ) -> Result<Option<usize>> {
        let content = open + qlen;
        if ctx == Ctx::Key {
            // A key cut off: drop it, it names nothing certain (and the comma that was
            // inserted before it).
            self.edits.rollback(checkpoint, open);
            self.forget_missing_comma();
            self.cut_token = Some((UncertainKind::Key, open, false));
            self.edits.delete(open, self.end, Some(K::TruncatedKey));
            self.pos = self.end;
            return Ok(None);
        }
        if ctx == Ctx::ObjValue
            && let Some(tail) = self.closers_at_tail(piece)
            && let Some(comma) = member_inside(self.b, piece, tail)
        {
            // `{"a": "first, b: 1}`: the string never closes, the text ends with the
            // object's closer, and `, b:` inside reads as the next member: the closing
            // quote is missing before the comma, as when `"b"` is quoted. Or the text was
            // cut inside `"first, b: 1}"`: then the string is cut short and `b` is no
            // member the model wrote. Both are reported uncertain (see `record_split`).
            let end = self.close_before(piece, comma, checkpoint);
            self.record_split(open);
            return Ok(Some(end));
        }
        if let Some(end) = self.closers_at_tail(piece) {
            // `{"key": "value}`: the closers are real, the closing quote is missing. Or
            // the text was cut inside `"value}"`: either way the string touches the end.
            self.edits.rollback(checkpoint, end);
            self.edits.insert(end, "\"", Some(K::MissingQuote));
            self.record_cut_with(Some((UncertainKind::String, open, true)), false);
            self.pos = end;
            return Ok(Some(end));
        }
        let empty = self.b.get(content..self.end).is_none_or(|t| t.iter().all(|&c| is_ws(c)));
        if empty && ctx == Ctx::Top {
            return Err(self
                .error(ErrorKind::NoJson, "input ends inside an empty string", open)
                .with_hint("the text was cut off: send the whole value"));
        }
        if empty {
            // `["` or `{"a": "`: a value cut before its first character carries nothing
            // (in an object its member goes when the frames are closed).
            self.edits.rollback(checkpoint, open);
            if ctx == Ctx::ArrValue {
                self.forget_missing_comma();
            }
            self.cut_token = Some((UncertainKind::String, open, false));
            self.edits.delete(open, self.end, Some(K::TruncatedString));
            self.pos = self.end;
            return Ok(None);
        }
        self.edits.insert(self.end, "\"", Some(K::TruncatedString));
        if ctx == Ctx::Top {
            self.record_top_cut(open);
        } else {
            self.cut_token = Some((UncertainKind::String, open, true));
        }
        self.pos = self.end;
        Ok(Some(self.end))
    }

    /// When the text of an unterminated string ends with closers that close every open
    /// frame (and are not balanced by openers inside the string), where the string ends.
    pub(super) fn closers_at_tail(&self, content: usize) -> Option<usize> {
        let mut k = self.end;
        let mut depth = self.stack.len();
        if depth == 0 {
            return None;
        }
        while k > content && is_ws(self.b[k - 1]) {
            k -= 1;
        }
        let total = depth;
        while depth > 0 && k > content {
            // Read backwards, the last closer closes the outermost frame.
            let f = self.stack.get(total - depth)?;
            if !closes(*f, self.b[k - 1]) {
                return None;
            }
            depth -= 1;
            k -= 1;
            while k > content && is_ws(self.b[k - 1]) {
                k -= 1;
            }
        }
        if depth > 0 {
            return None;
        }
        // `"fn main() {}` is code that was cut, not a missing quote.
        let text = self.b.get(content..k)?;
        let opens = text.iter().filter(|&&c| c == b'{' || c == b'[').count();
        let shuts = text.iter().filter(|&&c| c == b'}' || c == b']').count();
        (opens <= shuts).then_some(k)
    }

    /// An escape at `i` inside a string quoted with `q`; returns where scanning resumes.
    pub(super) fn escape(&mut self, i: usize, q: Quote) -> usize {
        let Some(n) = self.at(i + 1) else {
            // A backslash cut off by the end of input.
            self.edits.delete(i, i + 1, Some(K::TruncatedToken));
            return i + 1;
        };
        match n {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i + 2,
            b'u' => self.unicode_escape(i),
            b'\'' | b'`' => {
                let own = (n == b'\'' && q == Quote::Single) || (n == b'`' && q == Quote::Backtick);
                self.edits.delete(i, i + 1, (!own).then_some(K::InvalidEscape));
                i + 2
            }
            b'x' => match (self.at(i + 2), self.at(i + 3)) {
                (Some(a), Some(b)) if a.is_ascii_hexdigit() && b.is_ascii_hexdigit() => {
                    let text = format!("\\u00{}{}", a as char, b as char);
                    self.edits.replace(i, i + 4, text, Some(K::InvalidEscape));
                    i + 4
                }
                _ => {
                    self.edits.insert(i, "\\", Some(K::InvalidEscape));
                    i + 1
                }
            },
            b'v' => {
                self.edits.replace(i, i + 2, "\\u000b", Some(K::InvalidEscape));
                i + 2
            }
            b'0' if !self.at(i + 2).is_some_and(|c| c.is_ascii_digit()) => {
                self.edits.replace(i, i + 2, "\\u0000", Some(K::InvalidEscape));
                i + 2
            }
            b'\n' => {
                self.edits.delete(i, i + 2, Some(K::InvalidEscape));
                i + 2
            }
            b'\r' => {
                let end = if self.at(i + 2) == Some(b'\n') { i + 3 } else { i + 2 };
                self.edits.delete(i, end, Some(K::InvalidEscape));
                end
            }
            // `\„`, `\“`, `\’`: a typographic quote escaped as if it were `"` or `'`; it needs
            // no escape, and the backslash was not meant as text.
            0xE2 if matches!((self.at(i + 2), self.at(i + 3)), (Some(0x80), Some(0x98 | 0x99 | 0x9C..=0x9E))) => {
                self.edits.delete(i, i + 1, Some(K::InvalidEscape));
                i + 4
            }
            0xE2 if matches!((self.at(i + 2), self.at(i + 3)), (Some(0x80), Some(0xA8 | 0xA9))) => {
                self.edits.delete(i, i + 4, Some(K::InvalidEscape));
                i + 4
            }
            _ => {
                // `\s`, `\d`, `C:\Users`: the backslash is meant literally.
                self.edits.insert(i, "\\", Some(K::InvalidEscape));
                i + 1
            }
        }
    }

    pub(super) fn unicode_escape(&mut self, i: usize) -> usize {
        let Some(v) = hex4(self.b, i + 2) else {
            if self.end < i + 6 && self.b[i + 2..self.end].iter().all(u8::is_ascii_hexdigit) {
                // `\u12` cut off by the end of input.
                self.edits.delete(i, self.end, Some(K::TruncatedToken));
                return self.end;
            }
            self.edits.insert(i, "\\", Some(K::InvalidEscape));
            return i + 1;
        };
        if (0xD800..0xDC00).contains(&v) {
            let low = (self.b.get(i + 6..i + 8) == Some(b"\\u"))
                .then(|| hex4(self.b, i + 8))
                .flatten()
                .is_some_and(|w| (0xDC00..0xE000).contains(&w));
            if low {
                return i + 12;
            }
            // The first half of a pair cut off by the end of input (`\ud83d\ude`): drop it.
            let rest = self.b.get(i + 6..self.end).unwrap_or_default();
            if rest.len() < 6
                && rest
                    .iter()
                    .enumerate()
                    .all(|(k, &c)| [c == b'\\', c == b'u'].get(k).copied().unwrap_or(c.is_ascii_hexdigit()))
            {
                self.edits.delete(i, self.end, Some(K::TruncatedToken));
                return self.end;
            }
        }
        if (0xD800..0xE000).contains(&v) {
            self.edits.replace(i, i + 6, "\\ufffd", Some(K::LoneSurrogate));
        }
        i + 6
    }
}

/// The first `,` in `b[from..to]` followed by an unquoted key and `:` (`, b: 1`).
fn member_inside(b: &[u8], from: usize, to: usize) -> Option<usize> {
    let mut i = from;
    while let Some(c) = memchr_in(b, b',', i, to) {
        let k = skip_layout(b, c + 1, to);
        if b.get(k).is_some_and(|&x| is_ident_start(x)) && ident_then_colon(b, k, to) {
            // The colon ends a key, not a scheme (`, https://…`).
            let colon = memchr_in(b, b':', k, to).unwrap_or(to);
            if b.get(colon + 1) != Some(&b'/') {
                return Some(c);
            }
        }
        i = c + 1;
    }
    None
}

/// `„` (U+201E), `“` (U+201C) or `”` (U+201D) at `i`.
fn is_typographic_double(b: &[u8], i: usize) -> bool {
    matches!((b.get(i + 1), b.get(i + 2)), (Some(0x80), Some(0x9C..=0x9E)))
}

fn quote_fix(q: Quote) -> K {
    match q {
        Quote::Double | Quote::Single => K::SingleQuotes,
        Quote::Backtick => K::BacktickQuotes,
        Quote::SmartDouble | Quote::SmartSingle => K::SmartQuotes,
    }
}
