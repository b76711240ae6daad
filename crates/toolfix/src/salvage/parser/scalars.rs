//! Numbers, literals, wrappers and unquoted text: the scalars that are not quoted strings.

use super::{Ctx, Kind, Parser, State};
use crate::error::{ErrorKind, Result};
use crate::report::UncertainKind;
use crate::salvage::FixKind as K;
use crate::salvage::lex::{
    LOOKAHEAD, breaks_ident, control_escape, hex_to_decimal, invisible_before, is_ident, is_json_number, is_ws,
    line_then_quote, skip_layout,
};

/// Wrappers written by `MongoDB` shells and drivers, removed around their one value.
const WRAPPERS: &[&[u8]] = &[
    b"ObjectId",
    b"ISODate",
    b"NumberLong",
    b"NumberInt",
    b"NumberDecimal",
    b"NumberDouble",
    b"Date",
    b"UUID",
    b"Timestamp",
    b"Decimal128",
];

impl Parser<'_> {
    /// A number (or something that starts like one) at `self.pos`.
    pub(super) fn number(&mut self, ctx: Ctx) -> Result<()> {
        let start = self.pos;
        let mut j = start;
        while j < self.end {
            let c = self.b[j];
            let slash = c == b'/' && !matches!(self.at(j + 1), Some(b'/' | b'*'));
            if c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'+' | b'-') || slash {
                j += 1;
            } else {
                break;
            }
        }
        let tok = &self.b[start..j];
        if matches!(tok, b"-Infinity" | b"+Infinity" | b"-NaN" | b"+NaN") {
            self.edits.replace(start, j, "null", Some(K::JsLiteral));
            self.value_done(j, false);
            return Ok(());
        }
        if is_json_number(tok) {
            if j == self.end {
                // A number that runs into the end may be cut: `5` for `50`.
                self.cut_token = Some((UncertainKind::Number, start, true));
            }
            self.value_done(j, false);
            return Ok(());
        }
        if skip_layout(self.b, j, self.end) >= self.end {
            return self.number_at_eof(start, j, ctx);
        }
        if let Some(text) = normalise_number(tok) {
            self.edits.replace(start, j, text, Some(K::NumberFormat));
            self.value_done(j, false);
            return Ok(());
        }
        if ctx == Ctx::Top {
            return Err(self.error(ErrorKind::NoJson, "expected a JSON value, found text", start));
        }
        if matches!(tok, b"-" | b"+")
            && matches!(self.at(skip_layout(self.b, j, self.end)), Some(b',' | b']' | b'}' | b')'))
        {
            // `[1, -, 2]`: a sign with no digits is no number (a number lost, or a dash for
            // "none"): neither the string `"-"` nor `null` is what the model wrote.
            return Err(self
                .error(ErrorKind::Syntax, "a sign with no number after it", start)
                .with_hint("write the number, or null when there is none"));
        }
        self.unquoted(start, K::NumberAsString)
    }

    /// A number cut off by the end of input: keep what is complete, cut back the rest.
    #[cold]
    pub(super) fn number_at_eof(&mut self, start: usize, end: usize, ctx: Ctx) -> Result<()> {
        self.cut_token = Some((UncertainKind::Number, start, true));
        let mut k = end;
        while k > start && matches!(self.b[k - 1], b'.' | b'e' | b'E' | b'+' | b'-' | b'_' | b'x' | b'X') {
            k -= 1;
        }
        let tok = &self.b[start..k];
        let text = if is_json_number(tok) { None } else { normalise_number(tok) };
        if k > start && (is_json_number(tok) || text.is_some()) {
            if let Some(text) = text {
                self.edits.replace(start, k, text, Some(K::NumberFormat));
            }
            if k < end {
                self.edits.delete(k, end, Some(K::TruncatedToken));
            }
            self.value_done(end, false);
            return Ok(());
        }
        if ctx == Ctx::Top {
            return Err(self
                .error(ErrorKind::NoJson, "input ends inside a number", start)
                .with_hint("the number was cut off: send it whole"));
        }
        if k == start {
            self.cut_token = Some((UncertainKind::Number, start, false));
            // In an object the key stays (it gets `null`), and so does its comma.
            if ctx != Ctx::ObjValue {
                self.forget_missing_comma();
            }
            self.edits.delete(start, end, Some(K::TruncatedToken));
            self.pos = end;
            return Ok(());
        }
        self.unquoted(start, K::NumberAsString)
    }

    /// A word at `self.pos`: a literal, a wrapper, or unquoted text.
    pub(super) fn word(&mut self, ctx: Ctx) -> Result<()> {
        let start = self.pos;
        let mut j = start;
        while j < self.end
            && (self.b[j].is_ascii_alphanumeric() || matches!(self.b[j], b'_' | b'$') || self.b[j] >= 0x80)
            && !breaks_ident(self.b, j)
        {
            j += 1;
        }
        let w = &self.b[start..j];
        let delimited =
            self.at(j).is_none_or(|c| !is_ident(c) || c == b'.') || (j < self.end && breaks_ident(self.b, j));
        if delimited {
            if matches!(w, b"true" | b"false" | b"null") {
                self.value_done(j, false);
                return Ok(());
            }
            if let Some((text, kind)) = literal(w) {
                if ctx == Ctx::Top {
                    return Err(self
                        .error(ErrorKind::NoJson, "expected a JSON value, found a bare word", start)
                        .with_hint("send a JSON object or array; a bare word is not a value"));
                }
                self.edits.replace(start, j, text, Some(kind));
                self.value_done(j, false);
                return Ok(());
            }
        }
        let k = skip_layout(self.b, j, self.end);
        if self.at(k) == Some(b'(') && WRAPPERS.contains(&w) {
            self.edits.delete(start, k + 1, Some(K::MongoWrapper));
            self.push(Kind::Wrapper, start)?;
            self.pos = k + 1;
            return Ok(());
        }
        if w == b"new" {
            let d = skip_layout(self.b, j, self.end);
            if self.b.get(d..d + 4) == Some(b"Date") {
                let p = skip_layout(self.b, d + 4, self.end);
                if self.at(p) == Some(b'(') {
                    self.edits.delete(start, p + 1, Some(K::MongoWrapper));
                    self.push(Kind::Wrapper, start)?;
                    self.pos = p + 1;
                    return Ok(());
                }
            }
        }
        if skip_layout(self.b, j, self.end) >= self.end && is_literal_prefix(w) {
            if ctx == Ctx::Top {
                return Err(self
                    .error(ErrorKind::NoJson, "input ends inside a literal", start)
                    .with_hint("the text was cut off: send the whole value"));
            }
            if ctx != Ctx::ObjValue {
                self.forget_missing_comma();
            }
            self.cut_token = Some((UncertainKind::Literal, start, false));
            self.edits.delete(start, j, Some(K::TruncatedToken));
            self.pos = j;
            return Ok(());
        }
        if ctx == Ctx::Top {
            if let Some(q) = self.top_text_then_quote(start) {
                // `abc"`: the whole text is one line ending in a quote, the opening one lost.
                self.edits.insert(start, "\"", Some(K::MissingQuote));
                self.escape_raw(start, q);
                self.value_done(q + 1, true);
                return Ok(());
            }
            return Err(self
                .error(ErrorKind::NoJson, "expected a JSON value, found text", start)
                .with_hint("send a JSON object or array"));
        }
        self.unquoted(start, K::UnquotedString)
    }

    /// The top-level text from `start` is one short line that ends with its only `"`:
    /// where that quote is.
    pub(super) fn top_text_then_quote(&self, start: usize) -> Option<usize> {
        let q = line_then_quote(self.b.get(start..self.end)?)?;
        (q < LOOKAHEAD).then_some(start + q)
    }

    /// Unquoted text starting at `start`, up to the delimiter its context allows.
    pub(super) fn unquoted(&mut self, start: usize, kind: K) -> Result<()> {
        let mut j = start;
        let mut depth = 0usize;
        // Parentheses opened in the text (`F(3)`) close in it: their `)` is not a closer.
        let mut parens = 0usize;
        while j < self.end {
            match self.b[j] {
                b'\n' | b'\r' if depth == 0 => break,
                b',' if depth == 0 => break,
                b'"' => break,
                b')' if parens > 0 => parens -= 1,
                b'}' | b']' | b')' => {
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                }
                b'{' | b'[' => depth += 1,
                b'(' => parens += 1,
                _ => {}
            }
            j += 1;
        }
        let in_object = self.stack.last().is_some_and(|f| f.kind == Kind::Object && f.state == State::Value);
        if in_object && self.at(j) == Some(b',') {
            // `{"a": ipsum, sic, datum.",}`: a comma cannot start a member here (no key
            // follows), and a closing quote ends the text on this line: the opening quote
            // is the one missing.
            if let Some(q) = closing_quote_ahead(self.b, j, self.end) {
                j = q;
            }
        }
        // Whitespace after the text is not part of it, nor is an invisible character (the
        // next step removes it).
        let mut e = j;
        loop {
            if e > start && is_ws(self.b[e - 1]) {
                e -= 1;
            } else if e > start + 1 && invisible_before(self.b, e) > 0 {
                e -= invisible_before(self.b, e);
            } else {
                break;
            }
        }
        if e == start {
            return Err(self.error(ErrorKind::Syntax, "expected a value", start));
        }
        if self.at(j) == Some(b'"') && j == e {
            // `abcdef",`: the opening quote is missing, the closing one is there.
            let after = skip_layout(self.b, j + 1, self.end);
            if matches!(self.at(after), None | Some(b',' | b'}' | b']')) {
                if is_json_number(&self.b[start..e]) {
                    self.edits.delete(j, j + 1, Some(K::MissingQuote));
                    self.value_done(j + 1, false);
                } else {
                    self.edits.insert(start, "\"", Some(K::MissingQuote));
                    self.escape_raw(start, e);
                    self.value_done(j + 1, true);
                }
                return Ok(());
            }
        }
        self.edits.note(start, e, kind);
        self.edits.insert(start, "\"", None);
        self.escape_raw(start, e);
        self.edits.insert(e, "\"", None);
        if j >= self.end && !self.stack.is_empty() {
            // Unquoted text that runs into the end of input may have been cut.
            self.edits.note(e, e, K::TruncatedString);
            self.cut_token = Some((UncertainKind::String, start, true));
        }
        self.value_done(e, true);
        Ok(())
    }

    /// Escape backslashes and control characters in raw text being quoted.
    pub(super) fn escape_raw(&mut self, start: usize, end: usize) {
        for i in start..end {
            let c = self.b[i];
            if c == b'\\' {
                self.edits.insert(i, "\\", None);
            } else if c < 0x20 {
                self.edits.replace(i, i + 1, control_escape(c), None);
            }
        }
    }
}

/// From a comma at `from` in unquoted text: a `"` glued to the text, on the same line and
/// with no structure before it, followed by `,`, `}` or the end: where the text ends.
fn closing_quote_ahead(b: &[u8], from: usize, end: usize) -> Option<usize> {
    let limit = end.min(from + LOOKAHEAD);
    let mut i = from;
    while i < limit {
        match b[i] {
            b'"' => {
                let after = skip_layout(b, i + 1, end);
                let glued = !is_ws(b[i - 1]) && b[i - 1] != b',';
                return (glued && matches!(b.get(after), None | Some(b',' | b'}'))).then_some(i);
            }
            b'\n' | b'\r' | b':' | b'\'' | b'{' | b'[' | b'}' | b']' => return None,
            _ => i += 1,
        }
    }
    None
}

/// A literal JSON does not have, and what it becomes.
fn literal(w: &[u8]) -> Option<(&'static str, K)> {
    Some(match w {
        b"True" => ("true", K::PythonLiteral),
        b"False" => ("false", K::PythonLiteral),
        b"None" => ("null", K::PythonLiteral),
        b"undefined" | b"NaN" | b"Infinity" => ("null", K::JsLiteral),
        _ if w.eq_ignore_ascii_case(b"true") => ("true", K::LiteralCase),
        _ if w.eq_ignore_ascii_case(b"false") => ("false", K::LiteralCase),
        _ if w.eq_ignore_ascii_case(b"null") || w.eq_ignore_ascii_case(b"none") => ("null", K::LiteralCase),
        _ => return None,
    })
}

/// A proper prefix of a literal, as left by a cut-off output (`tr`, `fals`, `Non`).
fn is_literal_prefix(w: &[u8]) -> bool {
    const FULL: &[&[u8]] = &[b"true", b"false", b"null", b"True", b"False", b"None"];
    !w.is_empty() && FULL.iter().any(|f| f.len() > w.len() && f.starts_with(w))
}

/// A number JSON does not allow, rewritten: `+1`, `.5`, `1.`, `0x1F`, `1_000`, `1e`.
/// `None` when the token is not a number (leading zeros are not: `007` may be a code).
fn normalise_number(tok: &[u8]) -> Option<String> {
    let (sign, rest) = match tok.first()? {
        b'+' => ("", tok.get(1..)?),
        b'-' => ("-", tok.get(1..)?),
        _ => ("", tok),
    };
    if !rest.iter().any(u8::is_ascii_digit) {
        // `.`, `e`, `_`: no digit, no number (`.` is not `0`).
        return None;
    }
    if rest.len() > 2 && (rest.starts_with(b"0x") || rest.starts_with(b"0X")) {
        return hex_to_decimal(&rest[2..]).map(|d| if sign.is_empty() { d } else { format!("{sign}{d}") });
    }
    // One string, the sign first: the digits go after it.
    let mut s = String::with_capacity(tok.len() + 2);
    s.push_str(sign);
    let body = s.len();
    let mut prev = 0u8;
    for (n, &c) in rest.iter().enumerate() {
        if c == b'_' {
            let next_digit = rest.get(n + 1).is_some_and(u8::is_ascii_digit);
            if !(prev.is_ascii_digit() && next_digit) {
                return None;
            }
            continue;
        }
        s.push(c as char);
        prev = c;
    }
    if s[body..].starts_with('.') {
        s.insert(body, '0');
    }
    if let Some(p) = s[body..].find(".e").or_else(|| s[body..].find(".E")) {
        s.remove(body + p);
    }
    if s.ends_with("e-") || s.ends_with("e+") || s.ends_with("E-") || s.ends_with("E+") {
        s.pop();
    }
    if s.ends_with('.') || s.ends_with('e') || s.ends_with('E') {
        s.pop();
    }
    (is_json_number(s.as_bytes()) && s != sign).then_some(s)
}

#[cfg(test)]
mod tests {
    use super::normalise_number;

    #[test]
    fn numbers_normalise() {
        let n = |s: &str| normalise_number(s.as_bytes());
        assert_eq!(n("+1").as_deref(), Some("1"));
        assert_eq!(n(".5").as_deref(), Some("0.5"));
        assert_eq!(n("-.5").as_deref(), Some("-0.5"));
        assert_eq!(n("5.").as_deref(), Some("5"));
        assert_eq!(n("5.e4").as_deref(), Some("5e4"));
        assert_eq!(n("0xC8").as_deref(), Some("200"));
        assert_eq!(n("-0xC8").as_deref(), Some("-200"));
        assert_eq!(n("82_461_110").as_deref(), Some("82461110"));
        assert_eq!(n("1_234.5_6").as_deref(), Some("1234.56"));
        assert_eq!(n("1e").as_deref(), Some("1"));
        assert_eq!(n("2e-").as_deref(), Some("2"));
        assert_eq!(n("007"), None);
        assert_eq!(n("1.1.1"), None);
        assert_eq!(n("1/3"), None);
        assert_eq!(n("-"), None);
        assert_eq!(n("."), None);
        assert_eq!(n("-."), None);
    }
}
