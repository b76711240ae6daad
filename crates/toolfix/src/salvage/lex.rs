//! Byte classes and small lookahead helpers for the lenient parser. Pure functions of the
//! text: no state, no edits.

use crate::pointer::scan::first_in;

/// The longest text a lookahead scans for a key or a short string. Keeps every lookahead
/// bounded, so the parser stays linear on hostile input.
pub(super) const LOOKAHEAD: usize = 256;

/// JSON whitespace.
pub(super) const fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Bytes that may appear in an unquoted key or identifier (non-ASCII bytes included, so
/// `ümlåût` is a key).
pub(super) const fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'-' | b'.') || b >= 0x80
}

/// Bytes that may start an identifier.
pub(super) const fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || matches!(b, b'_' | b'$') || b >= 0x80
}

/// The quote that opens a string at `b[i..]`, if any: (byte length, kind).
pub(super) fn open_quote(b: &[u8], i: usize) -> Option<(usize, Quote)> {
    match b.get(i)? {
        b'"' => Some((1, Quote::Double)),
        b'\'' => Some((1, Quote::Single)),
        b'`' => Some((1, Quote::Backtick)),
        // ´ U+00B4, an accent typed for a quote: as a backtick.
        0xC2 if b.get(i + 1) == Some(&0xB4) => Some((2, Quote::Backtick)),
        0xE2 => match (b.get(i + 1), b.get(i + 2)) {
            // “ U+201C, ” U+201D (some models open with it too)
            (Some(0x80), Some(0x9C | 0x9D)) => Some((3, Quote::SmartDouble)),
            // ‘ U+2018, ’ U+2019
            (Some(0x80), Some(0x98 | 0x99)) => Some((3, Quote::SmartSingle)),
            _ => None,
        },
        _ => None,
    }
}

/// A string's quoting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Quote {
    Double,
    Single,
    Backtick,
    SmartDouble,
    SmartSingle,
}

impl Quote {
    /// The length of a closing quote of this kind at `b[i..]`, if there is one.
    #[inline]
    pub(super) fn close_at(self, b: &[u8], i: usize) -> Option<usize> {
        match self {
            Quote::Double => (b.get(i) == Some(&b'"')).then_some(1),
            Quote::Single => (b.get(i) == Some(&b'\'')).then_some(1),
            // A string opened with a quote-like accent or a typographic single quote closes
            // with any of them: `‘a'`, `` `a´ ``.
            Quote::Backtick => single_like(b, i),
            Quote::SmartDouble => match (b.get(i), b.get(i + 1), b.get(i + 2)) {
                (Some(0xE2), Some(0x80), Some(0x9C | 0x9D)) => Some(3),
                // A plain quote may close a smart-quoted key: {“key": 1}
                _ => (b.get(i) == Some(&b'"')).then_some(1),
            },
            Quote::SmartSingle => single_like(b, i),
        }
    }

    /// True when the string may close with any single-quote-like character (so the fast
    /// scan must stop at each: `'`, `` ` ``, and the lead bytes of `‘’` and `´`).
    pub(super) const fn closes_loosely(self) -> bool {
        matches!(self, Quote::Backtick | Quote::SmartSingle)
    }

    /// The first byte of a closing quote (for the fast scan).
    pub(super) const fn close_byte(self) -> u8 {
        match self {
            Quote::Double => b'"',
            Quote::Single => b'\'',
            Quote::Backtick => b'`',
            Quote::SmartDouble | Quote::SmartSingle => 0xE2,
        }
    }
}

/// The length of a single-quote-like character at `b[i..]`: `'`, `` ` ``, `‘`, `’` or `´`.
fn single_like(b: &[u8], i: usize) -> Option<usize> {
    match (b.get(i)?, b.get(i + 1), b.get(i + 2)) {
        (b'\'' | b'`', _, _) => Some(1),
        (0xC2, Some(0xB4), _) => Some(2),
        (0xE2, Some(0x80), Some(0x98 | 0x99)) => Some(3),
        _ => None,
    }
}

/// A Markdown fence marker at `i`: where its run of backticks ends, and where the language
/// tag written right after it (`json`, `c++`, possibly empty) ends.
pub(super) fn fence_at(b: &[u8], i: usize, end: usize) -> (usize, usize) {
    let mut ticks = i;
    while ticks < end && b[ticks] == b'`' {
        ticks += 1;
    }
    let mut tag = ticks;
    while tag < end && (b[tag].is_ascii_alphanumeric() || matches!(b[tag], b'_' | b'+' | b'-')) {
        tag += 1;
    }
    (ticks, tag)
}

/// A fingerprint of a key's text: its length and first eight bytes. Two keys with
/// different fingerprints differ; equal fingerprints are compared in full.
#[inline]
pub(crate) fn fingerprint(key: &[u8]) -> u64 {
    let mut head = [0u8; 8];
    let n = key.len().min(8);
    head[..n].copy_from_slice(&key[..n]);
    u64::from_le_bytes(head) ^ (key.len() as u64).rotate_right(8)
}

/// [`fingerprint`] of the key `b[from..to]`: when eight bytes of `b` start at `from` (the
/// common case, a key followed by its quote and colon), one load and a mask rather than a
/// copy of a length known only at run time.
#[inline]
pub(crate) fn fingerprint_at(b: &[u8], from: usize, to: usize) -> u64 {
    let len = to.saturating_sub(from);
    match b.get(from..from + 8).and_then(|w| <[u8; 8]>::try_from(w).ok()) {
        Some(word) if to <= b.len() => {
            let mask = if len >= 8 { u64::MAX } else { (1u64 << (8 * len)) - 1 };
            (u64::from_le_bytes(word) & mask) ^ (len as u64).rotate_right(8)
        }
        _ => fingerprint(b.get(from..to).unwrap_or_default()),
    }
}

/// Index of the first byte at or after `i` that is not JSON whitespace.
pub(super) fn skip_ws(b: &[u8], mut i: usize, end: usize) -> usize {
    while i < end && is_ws(b[i]) {
        i += 1;
    }
    i
}

/// Index of the first byte at or after `i` that is neither JSON whitespace nor an
/// [invisible character](invisible_len): what a lookahead reads past to see the structure.
/// The parser itself deletes such characters ([`Parser::skip_trivia`](super::parser::Parser));
/// a lookahead only looks through them.
#[inline]
pub(super) fn skip_layout(b: &[u8], i: usize, end: usize) -> usize {
    let mut i = skip_ws(b, i, end);
    while i < end && b[i] >= 0xC2 {
        let n = invisible_len(b, i);
        if n == 0 || i + n > end {
            break;
        }
        i = skip_ws(b, i + n, end);
    }
    i
}

/// Past layout and short comments from `i` (`/* … */`, `// …` and `# …` to the end of the
/// line, each closing within [`LOOKAHEAD`] bytes): where the next token starts, for
/// `"a" + /* note */ "b"`. A longer or unclosed comment stops the skip (bounded, so the
/// parser stays linear).
pub(super) fn skip_gap(b: &[u8], i: usize, end: usize) -> usize {
    let mut i = skip_layout(b, i, end);
    loop {
        let limit = end.min(i + LOOKAHEAD);
        let close = match (b.get(i), b.get(i + 1)) {
            (Some(b'/'), Some(b'*')) => find(b, b"*/", i + 2, limit).map(|p| p + 2),
            (Some(b'/'), Some(b'/')) | (Some(b'#'), _) => {
                b.get(i..limit).and_then(|t| memchr::memchr2(b'\n', b'\r', t)).map(|p| i + p)
            }
            _ => None,
        };
        match close {
            Some(c) if c <= end => i = skip_layout(b, c, end),
            _ => return i,
        }
    }
}

/// Byte length of the character at `i` when it is whitespace JSON does not have or an
/// invisible format character (Unicode categories Zs, Zl, Zp and Cf, and NEL): NBSP,
/// U+2000–U+200A, U+202F, U+205F, U+3000, zero-width space, joiners and marks, U+2028 and
/// U+2029, the BOM, soft hyphen, U+180E, word joiner, bidi controls, tag characters, …;
/// else 0. Outside strings such a character is removed; it is never part of a key or a
/// word.
pub(super) fn invisible_len(b: &[u8], i: usize) -> usize {
    let Some(&c0) = b.get(i) else { return 0 };
    let cont = |k: usize| b.get(i + k).map_or(0x40, |&c| u32::from(c) ^ 0x80);
    let (cp, n) = match c0 {
        0xC2..=0xDF => ((u32::from(c0) & 0x1F) << 6 | cont(1), 2),
        0xE0..=0xEF => ((u32::from(c0) & 0x0F) << 12 | cont(1) << 6 | cont(2), 3),
        0xF0..=0xF4 => ((u32::from(c0) & 0x07) << 18 | cont(1) << 12 | cont(2) << 6 | cont(3), 4),
        _ => return 0,
    };
    // A byte that is not a continuation byte (`^ 0x80` leaves bits 6–7 set) decodes to
    // a value outside the ranges below only by chance: check them.
    if (1..n).any(|k| cont(k) > 0x3F) {
        return 0;
    }
    if is_invisible(cp) { n } else { 0 }
}

/// Unicode Zs (but U+0020), Zl, Zp and Cf, and NEL (U+0085).
pub(super) const fn is_invisible(cp: u32) -> bool {
    matches!(
        cp,
        0x85 | 0xA0
            | 0xAD
            | 0x600..=0x605
            | 0x61C
            | 0x6DD
            | 0x70F
            | 0x890..=0x891
            | 0x8E2
            | 0x1680
            | 0x180E
            | 0x2000..=0x200F
            | 0x2028..=0x202F
            | 0x205F..=0x2064
            | 0x2066..=0x206F
            | 0x3000
            | 0xFEFF
            | 0xFFF9..=0xFFFB
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0001
            | 0xE0020..=0xE007F
    )
}

/// Byte length of an [invisible character](invisible_len) that ends at `e`, or 0.
pub(super) fn invisible_before(b: &[u8], e: usize) -> usize {
    (2..=4).find(|&n| e >= n && invisible_len(b, e - n) == n).unwrap_or(0)
}

/// Where the identifier (an unquoted key or word) starting at `i` ends: at the first byte
/// that is not [`is_ident`], or at an [invisible character](invisible_len) that
/// [breaks](breaks_ident) it.
pub(super) fn ident_end(b: &[u8], i: usize, end: usize) -> usize {
    let mut j = i;
    while j < end && is_ident(b[j]) && !breaks_ident(b, j) {
        j += 1;
    }
    j
}

/// True when the byte at `i` continues an identifier: [`is_ident`], and not the start of
/// an invisible character that [breaks](breaks_ident) it.
#[inline]
pub(super) fn ident_at(b: &[u8], i: usize) -> bool {
    b.get(i).is_some_and(|&c| is_ident(c)) && !breaks_ident(b, i)
}

/// True when an [invisible character](invisible_len) at `j` ends an identifier: all but
/// the zero-width non-joiner and joiner (U+200C, U+200D), which ECMAScript (and so JSON5)
/// allows inside one, as Persian and Indic words need them.
#[inline]
pub(super) fn breaks_ident(b: &[u8], j: usize) -> bool {
    b.get(j).is_some_and(|&c| c >= 0xC2)
        && !matches!(b.get(j..j + 3), Some([0xE2, 0x80, 0x8C | 0x8D]))
        && invisible_len(b, j) > 0
}

/// What ends the text of a double-quoted string for [`quoted_then`]: `"`, `\` and a
/// line end.
static QUOTED_STOP: [bool; 256] = {
    let mut t = [false; 256];
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t[b'\n' as usize] = true;
    t
};

/// True when `b[i..end]` starts with `"…"` (a short double- or single-quoted string)
/// followed, after whitespace, by a byte in `after`.
pub(super) fn quoted_then(b: &[u8], i: usize, end: usize, after: &[u8]) -> bool {
    let Some((qlen, q)) = open_quote(b, i) else {
        return false;
    };
    let limit = end.min(i + LOOKAHEAD);
    let mut j = i + qlen;
    if q == Quote::Double {
        // The common case: a short key, read in a tight loop (a `memchr3` call costs more
        // than the few bytes it would skip).
        while let Some(p) = b.get(j..limit).and_then(|rest| first_in(rest, &QUOTED_STOP)) {
            j += p;
            match b.get(j) {
                Some(b'\\') => j += 2,
                Some(b'"') => {
                    let k = skip_layout(b, j + 1, end);
                    return k < end && b.get(k).is_some_and(|c| after.contains(c));
                }
                _ => return false,
            }
        }
        return false;
    }
    while j < limit {
        let c = b[j];
        if c == b'\\' {
            j += 2;
            continue;
        }
        if c == b'\n' {
            return false;
        }
        let n = q.close_at(b, j);
        if let Some(n) = n {
            let k = skip_layout(b, j + n, end);
            return k < end && after.contains(&b[k]);
        }
        j += 1;
    }
    false
}

/// True when a short quoted string starts at `i`, closes on the same line, and is not
/// glued to a word after it: `"a" "b" "c"` (elements missing their commas).
pub(super) fn quoted_closes(b: &[u8], i: usize, end: usize) -> bool {
    let Some((qlen, q)) = open_quote(b, i) else {
        return false;
    };
    let limit = end.min(i + LOOKAHEAD);
    let mut j = i + qlen;
    while j < limit {
        if b[j] == b'\\' {
            j += 2;
            continue;
        }
        if b[j] == b'\n' {
            return false;
        }
        if let Some(n) = q.close_at(b, j) {
            return !ident_at(b, j + n);
        }
        j += 1;
    }
    false
}

/// True when `b[i..end]` starts with an identifier followed, after whitespace, by `:`.
pub(super) fn ident_then_colon(b: &[u8], i: usize, end: usize) -> bool {
    let j = ident_end(b, i, end.min(i + LOOKAHEAD));
    if j == i {
        return false;
    }
    let k = skip_layout(b, j, end);
    k < end && b[k] == b':'
}

/// `b":` at `i`: a key whose opening quote is missing, its closing quote glued to it and
/// followed by `:` (`{"a": 1, b": 2}`, `{first name": "x"}`): where that quote is. The key
/// is short, on one line, and holds no quote, backslash or structure.
pub(super) fn key_missing_open_quote(b: &[u8], i: usize, end: usize) -> Option<usize> {
    if !b.get(i).is_some_and(|&c| is_ident_start(c) || c.is_ascii_digit()) {
        return None;
    }
    let limit = end.min(i + LOOKAHEAD);
    let mut j = i;
    while j < limit && !matches!(b[j], b'"' | b'\'' | b'\\' | b'\n' | b'\r' | b'{' | b'}' | b'[' | b']' | b',' | b':') {
        j += 1;
    }
    let glued = j > i && !is_ws(b[j - 1]) && invisible_before(b, j) == 0;
    (glued && b.get(j) == Some(&b'"') && b.get(skip_layout(b, j + 1, end)) == Some(&b':')).then_some(j)
}

/// True when a key (quoted or not, or missing its opening quote) followed by `:` starts
/// at `i`.
pub(super) fn key_then_colon(b: &[u8], i: usize, end: usize) -> bool {
    quoted_then(b, i, end, b":") || ident_then_colon(b, i, end) || key_missing_open_quote(b, i, end).is_some()
}

/// Like [`key_then_colon`], but a key cut off by the end of input counts too: `"a": "x", "b`.
pub(super) fn key_or_cut_key(b: &[u8], i: usize, end: usize) -> bool {
    if key_then_colon(b, i, end) {
        return true;
    }
    // A quoted key that runs into the end, or is followed only by whitespace.
    if let Some((qlen, q)) = open_quote(b, i) {
        // Not bounded by the lookahead: a key may be long, and the scan stops at the next
        // quote or line end (the next place the string's own scan looks at).
        let mut j = i + qlen;
        while j < end {
            match b[j] {
                b'\\' => j += 1,
                b'\n' => return false,
                _ if q.close_at(b, j).is_some() => {
                    let n = skip_layout(b, j + q.close_at(b, j).unwrap_or(1), end);
                    // A key longer than the lookahead of `key_then_colon`.
                    return n >= end || (j >= i + LOOKAHEAD && b[n] == b':');
                }
                _ => {}
            }
            j += 1;
        }
        return j >= end;
    }
    let j = ident_end(b, i, end);
    j > i && skip_layout(b, j, end) >= end
}

/// `text`, trailing whitespace aside, is one line ending in its only `"`, with no
/// structure (`{[]}:`) before it: where that quote is (never at 0: some text comes first).
pub(super) fn line_then_quote(text: &[u8]) -> Option<usize> {
    let mut e = text.len();
    while e > 0 && is_ws(text[e - 1]) {
        e -= 1;
    }
    let plain = |c: &u8| !matches!(c, b'"' | b'{' | b'[' | b'}' | b']' | b':' | b'\n' | b'\r');
    (e > 1 && text[e - 1] == b'"' && text[..e - 1].iter().all(plain)).then(|| e - 1)
}

/// True when a comment starts at `i` (`//`, `/*`, `#` or `<!--`), or a Markdown fence
/// marker: trivia the parser removes, so what is before it may end there.
pub(super) fn comment_starts(b: &[u8], i: usize) -> bool {
    match b.get(i) {
        Some(b'#') => true,
        Some(b'/') => matches!(b.get(i + 1), Some(b'/' | b'*')),
        Some(b'<') => b.get(i..i + 4) == Some(b"<!--"),
        Some(b'`') => b.get(i..i + 3) == Some(b"```"),
        _ => false,
    }
}

/// True when the bytes at `i` spell `word` and no identifier byte follows.
pub(super) fn word_at(b: &[u8], i: usize, word: &[u8]) -> bool {
    let after = i + word.len();
    b.get(i..after) == Some(word) && !ident_at(b, after)
}

/// True when a JSON value plausibly starts at `i` (for lookahead after a comma in an array),
/// including a literal cut off by the end of the text (`["", n`).
pub(super) fn value_starts(b: &[u8], i: usize) -> bool {
    match b.get(i) {
        Some(b'"' | b'\'' | b'`' | b'{' | b'[' | b'(' | b'-' | b'+' | b'.' | b'0'..=b'9') => true,
        Some(0xC2 | 0xE2) => open_quote(b, i).is_some(),
        Some(_) => {
            const LITERALS: &[&[u8]] =
                &[b"true", b"false", b"null", b"True", b"False", b"None", b"NaN", b"Infinity", b"undefined"];
            let cut = b.get(i..).filter(|rest| rest.len() < 5 && rest.iter().all(u8::is_ascii_alphabetic));
            LITERALS.iter().any(|w| word_at(b, i, w) || cut.is_some_and(|rest| w.starts_with(rest)))
        }
        None => false,
    }
}

/// True when `b[i..]` starts with `...` or `…`.
pub(super) fn ellipsis_len(b: &[u8], i: usize) -> usize {
    if b.get(i..i + 3) == Some(b"...") {
        let mut j = i + 3;
        while b.get(j) == Some(&b'.') {
            j += 1;
        }
        j - i
    } else if b.get(i..i + 3) == Some("…".as_bytes()) {
        3
    } else {
        0
    }
}

/// The JSON escape for control byte `c`.
pub(super) fn control_escape(c: u8) -> &'static str {
    const HEX: [&str; 32] = [
        "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006", "\\u0007", "\\b", "\\t", "\\n",
        "\\u000b", "\\f", "\\r", "\\u000e", "\\u000f", "\\u0010", "\\u0011", "\\u0012", "\\u0013", "\\u0014",
        "\\u0015", "\\u0016", "\\u0017", "\\u0018", "\\u0019", "\\u001a", "\\u001b", "\\u001c", "\\u001d", "\\u001e",
        "\\u001f",
    ];
    HEX.get(usize::from(c)).copied().unwrap_or("\\u0000")
}

/// Parse 4 hex digits at `b[i..i+4]`.
pub(super) fn hex4(b: &[u8], i: usize) -> Option<u16> {
    let s = b.get(i..i + 4)?;
    let mut v: u16 = 0;
    for &c in s {
        let d = (c as char).to_digit(16)?;
        v = v * 16 + d as u16;
    }
    Some(v)
}

/// True when `s` is a number in strict JSON grammar.
pub(super) fn is_json_number(s: &[u8]) -> bool {
    let mut i = 0;
    if s.first() == Some(&b'-') {
        i += 1;
    }
    match s.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while s.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        _ => return false,
    }
    if s.get(i) == Some(&b'.') {
        i += 1;
        let d = i;
        while s.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == d {
            return false;
        }
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let d = i;
        while s.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == d {
            return false;
        }
    }
    i == s.len()
}

/// A hexadecimal digit string as decimal digits (no sign), for `0x1F`-style numbers.
pub(super) fn hex_to_decimal(hex: &[u8]) -> Option<String> {
    // Little-endian base-10^9 limbs; hex is at most 64 digits, so this stays small.
    if hex.is_empty() || hex.len() > 64 {
        return None;
    }
    if hex.len() <= 15 {
        // Fits in a u64: no limbs.
        let mut v = 0u64;
        for &c in hex {
            v = v * 16 + u64::from((c as char).to_digit(16)?);
        }
        return Some(v.to_string());
    }
    let mut limbs: Vec<u64> = vec![0];
    for &c in hex {
        let d = u64::from((c as char).to_digit(16)?);
        let mut carry = d;
        for limb in &mut limbs {
            let v = *limb * 16 + carry;
            *limb = v % 1_000_000_000;
            carry = v / 1_000_000_000;
        }
        if carry > 0 {
            limbs.push(carry);
        }
    }
    let mut out = String::new();
    let mut iter = limbs.iter().rev();
    if let Some(first) = iter.next() {
        out.push_str(&first.to_string());
    }
    for limb in iter {
        let digits = limb.to_string();
        out.extend(std::iter::repeat_n('0', 9 - digits.len().min(9)));
        out.push_str(&digits);
    }
    Some(out)
}

pub(crate) fn memchr_in(b: &[u8], needle: u8, from: usize, to: usize) -> Option<usize> {
    b.get(from..to)?.iter().position(|&c| c == needle).map(|p| p + from)
}

/// The first `needle` (a short one: a fence or a comment's end) in `b[from..to]`: its
/// first byte found by `memchr`, the rest compared (no searcher is built per call).
pub(crate) fn find(b: &[u8], needle: &[u8], from: usize, to: usize) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let hay = b.get(from..to)?;
    let mut i = 0;
    while let Some(p) = hay.get(i..).and_then(|h| memchr::memchr(first, h)) {
        let at = i + p;
        if hay.get(at + 1..at + 1 + rest.len()) == Some(rest) {
            return Some(from + at);
        }
        i = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fingerprint_read_in_place_is_the_fingerprint_of_the_copy() {
        let text = b"\"k\": 1, \"a longer key\": \"\xc3\xa9\"";
        for from in 0..=text.len() {
            for to in from..=text.len() {
                assert_eq!(fingerprint_at(text, from, to), fingerprint(&text[from..to]), "{from}..{to}");
            }
        }
    }

    #[test]
    fn json_numbers() {
        for ok in ["0", "-0", "1.5", "1e10", "-1.25E+4", "12345678901234567890"] {
            assert!(is_json_number(ok.as_bytes()), "{ok}");
        }
        for bad in ["", "-", "01", "1.", ".5", "+1", "1e", "0x1", "1_0", "--1"] {
            assert!(!is_json_number(bad.as_bytes()), "{bad}");
        }
    }

    #[test]
    fn hex_converts_beyond_u64() {
        assert_eq!(hex_to_decimal(b"ff").as_deref(), Some("255"));
        assert_eq!(hex_to_decimal(b"0123456789abcdefABCDEF").as_deref(), Some("1375488932539311409843695"));
        assert_eq!(hex_to_decimal(b"0").as_deref(), Some("0"));
        assert_eq!(hex_to_decimal(b"00fffffffffffff").as_deref(), Some("4503599627370495"));
        assert_eq!(hex_to_decimal(b"fffffffffffffff").as_deref(), Some("1152921504606846975"));
        assert_eq!(hex_to_decimal(b"ffffffffffffffff").as_deref(), Some("18446744073709551615"));
        assert_eq!(hex_to_decimal(b"fg"), None);
        assert_eq!(hex_to_decimal(b"xyz"), None);
    }

    #[test]
    fn lookaheads() {
        let b = br#" "key" : 1"#;
        assert!(key_then_colon(b, 1, b.len()));
        assert!(ident_then_colon(b"abc  :", 0, 6));
        assert!(!ident_then_colon(b"abc def:", 0, 8));
        assert!(value_starts(b"true]", 0));
        assert!(!value_starts(b"sic tamet", 0));
        assert!(value_starts(b"nu", 0) && value_starts(b"fals", 0) && !value_starts(b"nux", 0));
    }
}
