//! Trivia: what lies between tokens and goes — whitespace JSON does not have (Unicode
//! spaces and format characters), comments, and Markdown fence markers inside the value.

use super::Parser;
use crate::salvage::FixKind as K;
use crate::salvage::lex::{fence_at, invisible_len, is_ws, skip_ws};
use crate::salvage::lex::{find, memchr_in};

/// The bytes after JSON whitespace that may start more trivia: a comment, a fence marker,
/// a vertical tab or form feed, or a non-ASCII space (lead bytes from `0xC2`); every byte
/// [`Parser::skip_trivia_slow`] handles.
static MAY_BE_TRIVIA: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0xC2;
    while c < 256 {
        t[c] = true;
        c += 1;
    }
    t[b'/' as usize] = true;
    t[b'#' as usize] = true;
    t[b'`' as usize] = true;
    t[b'<' as usize] = true;
    t[0x0B] = true;
    t[0x0C] = true;
    t
};

impl Parser<'_> {
    /// Skip whitespace and comments, deleting comments and non-JSON whitespace.
    #[inline]
    pub(in crate::salvage) fn skip_trivia(&mut self) {
        // Fast path: JSON whitespace, then a byte that starts no comment or odd space.
        let i = skip_ws(self.b, self.pos, self.end);
        self.pos = i;
        if self.at(i).is_none_or(|c| !MAY_BE_TRIVIA[usize::from(c)]) {
            return;
        }
        self.skip_trivia_slow();
    }

    /// [`Parser::skip_trivia`] past a byte that may start a comment or non-JSON whitespace
    /// (every byte its `match` handles must be in the fast path's list).
    #[inline(never)]
    pub(super) fn skip_trivia_slow(&mut self) {
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
                    self.edits.delete(i, i + 1, Some(K::InvisibleCharacter));
                    self.pos = i + 1;
                }
                0xC2.. => {
                    let n = invisible_len(self.b, i);
                    if n == 0 || i + n > self.end {
                        return;
                    }
                    self.edits.delete(i, i + n, Some(K::InvisibleCharacter));
                    self.pos = i + n;
                }
                _ => return,
            }
        }
    }

    /// A Markdown fence marker where a value, key or delimiter belongs (`{"a": ```json
    /// {…}```}`, `[```\n{…}\n```]`): JSON has no backticks outside strings, so it goes,
    /// with the language tag of an opening one.
    pub(super) fn fence_marker(&mut self, i: usize) {
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
    pub(super) fn quoted_fence(&mut self, i: usize) -> bool {
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

    pub(super) fn line_comment(&mut self, i: usize) {
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
}
