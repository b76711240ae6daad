//! Keys: a member's key read in any of the ways models write it (quoted, single-quoted,
//! bare, its opening quote lost), noted for the duplicate check, and the colon after it.

use super::{Ctx, KEY_BITS_MAX, Kind, Parser, State};
use crate::error::{ErrorKind, Result};
use crate::report::UncertainKind;
use crate::salvage::FixKind as K;
use crate::salvage::lex::{
    breaks_ident, fingerprint_at, hex4, is_ident, is_ident_start, key_missing_open_quote, key_then_colon, open_quote,
    skip_layout, skip_ws, value_starts,
};

impl Parser<'_> {
    pub(super) fn key(&mut self) -> Result<()> {
        let i = self.pos;
        let c = self.b[i];
        let checkpoint = self.edits.checkpoint();
        let mut plain = false;
        let ahead = self.key_ahead.get().filter(|k| k.open == i && k.end == self.end);
        if let Some(k) = ahead {
            // Read by the look-ahead of the string before: what `plain_string` returns.
            self.pos = k.close + 1;
            plain = true;
        } else if self.plain_string(Ctx::Key).is_some() {
            // Read as `string` reads it, faster; its text is as written.
            plain = true;
        } else if open_quote(self.b, i).is_some() {
            let end = self.string(Ctx::Key)?;
            if end.is_none() {
                return Ok(()); // key cut off by the end of input: dropped
            }
        } else if c == b'{' || c == b'[' {
            return Err(self.error(ErrorKind::Syntax, "expected a key, found a value", i).with_hint(
                "a member needs a key: write `\"key\": value`, or put the value inside the array it belongs to",
            ));
        } else if let Some(q) = key_missing_open_quote(self.b, i, self.end) {
            // `{"a": 1, b": 2}`: a key whose closing quote and colon are there, its
            // opening quote lost.
            self.edits.insert(i, "\"", Some(K::MissingQuote));
            self.escape_raw(i, q);
            self.pos = q + 1;
        } else {
            let mut j = i;
            while j < self.end && (is_ident(self.b[j]) || self.b[j] == b'\\') && !breaks_ident(self.b, j) {
                j += 1;
            }
            if j == i {
                return Err(self
                    .error(ErrorKind::Syntax, "expected a key", i)
                    .with_hint("write the key in double quotes: `\"key\": value`"));
            }
            let k = skip_layout(self.b, j, self.end);
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
        if plain {
            self.note_key_text(i + 1, end - 1);
        } else {
            self.note_key(i, end, checkpoint);
        }
        let f = self.top();
        f.state = State::Colon;
        f.key_start = i;
        f.key_edits = checkpoint;
        f.key_end = end;
        f.pending_comma = None;
        // The colon that follows (the common case) is taken here, as the next step would.
        let k = ahead.map_or_else(|| skip_ws(self.b, end, self.end), |k| k.colon);
        if self.at(k) == Some(b':') {
            self.pos = k + 1;
            self.top().state = State::Value;
        }
        Ok(())
    }

    /// Note the key written at `start..end` (quotes included, when it has them), whose
    /// edits start at `checkpoint`: its text, when the output holds it as written (a key in
    /// `"` or `'` quotes, or none, with no escape and no edit inside); else the object's
    /// keys are not known.
    fn note_key(&mut self, start: usize, end: usize, checkpoint: usize) {
        if self.keys_may_repeat {
            // Already left to the scan of the repaired text: no more comparing.
            return;
        }
        let quoted = matches!(self.b.get(start), Some(b'"' | b'\''));
        let (from, to) = if quoted { (start + 1, end.saturating_sub(1)) } else { (start, end) };
        // A quoted key closed by its own quote; an unquoted one with no quote (not a key
        // whose opening quote was missing).
        let closed = if quoted {
            to > start && self.b.get(to) == self.b.get(start)
        } else {
            self.b.get(end.saturating_sub(1)) != Some(&b'"')
        };
        let text = self.b.get(from..to).filter(|t| closed && !t.contains(&b'\\'));
        if text.is_none() || self.edits.edits_inside(checkpoint, from, to) {
            self.keys_may_repeat = true;
            return;
        }
        self.note_key_text(from, to);
    }

    /// Note the key whose text, as the output holds it, is `from..to` of the input.
    fn note_key_text(&mut self, from: usize, to: usize) {
        if self.keys_may_repeat {
            return;
        }
        let Some(t) = self.b.get(from..to) else {
            self.keys_may_repeat = true;
            return;
        };
        let fp = fingerprint_at(self.b, from, to);
        let bit = 1u64 << (fp.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58);
        let (first, bits) = self.stack.last().map_or((0, 0), |f| (f.keys_from, f.key_bits));
        let count = self.keys.len().saturating_sub(first);
        // Up to `KEY_BITS_MAX` keys, a key is compared only when its bit was set; past
        // that, every key is compared when the object closes (sorted).
        if count < KEY_BITS_MAX && bits & bit != 0 {
            let b = self.b;
            let same = |&(f, e, p): &(usize, usize, u64)| p == fp && b.get(f..e) == Some(t);
            self.keys_may_repeat |= self.keys.get(first..).is_some_and(|keys| keys.iter().any(same));
        }
        if let Some(f) = self.stack.last_mut() {
            f.key_bits |= bit;
        }
        self.keys.push((from, to, fp));
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
    pub(super) fn stray_end(&self, from: usize) -> usize {
        let mut j = from;
        while j < self.end && !matches!(self.b[j], b'"' | b'\'' | b'{' | b'}' | b'[' | b']' | b',') {
            j += 1;
        }
        j
    }

    pub(super) fn colon(&mut self) -> Result<()> {
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
        let j = skip_layout(self.b, i + 1, self.end);
        !key_then_colon(self.b, j, self.end)
    }
}
