//! The document level: find the JSON in the text (fences, prose, JSONP), parse each
//! top-level value, and decide what several values mean.
//!
//! Policy for several top-level values (NDJSON, concatenated objects, several fences):
//! an identical repeat is dropped (a model that says the same thing twice meant it once),
//! an empty `{}` or `[]` beside a non-empty value is dropped, and distinct values are
//! gathered into an array, so nothing the model wrote is lost and the schema stage can
//! refuse an array where one object is wanted, with a message that says so. A sequence
//! with scalars (`1,2,1`) and documents each set apart by a comment (`/* 1 */ {} /* 2 */
//! {}`, as MongoDB lists them) are data in order: every value is kept.

use super::FixKind as K;
use super::edits::Edits;
use super::lex::find;
use super::lex::{fence_at, ident_then_colon, is_ident, is_ident_start, is_invisible, is_ws, open_quote, skip_ws};
use super::parser::{Buffers, Parser, ValueSpan};
use super::small::Small;
use crate::error::{Error, ErrorKind, Result};
use std::borrow::Cow;

/// How many places a first value may be tried at before giving up.
const START_ATTEMPTS: usize = 4;

/// Parse the whole document; returns the edits that make it strict JSON.
/// The parser works in the vectors of `buffers` and gives back the ones it does not return.
pub(super) fn parse(src: &str, max_depth: usize, escaped_ok: bool, buffers: &mut Buffers) -> Result<Edits> {
    let b = src.as_bytes();
    let regions = fence_regions(b);
    let mut p = Parser::new(src, max_depth, buffers);
    let mut values: Small<ValueSpan, 2> = Small::default();
    let mut jsonp = false;
    let mut first_error: Option<Error> = None;
    for &(start, end) in regions.as_slice() {
        p.end = end;
        p.pos = start;
        p.skip_trivia();
        let Some(first) = find_start(b, p.pos, end, &mut jsonp) else {
            continue;
        };
        if escaped_ok && is_escaped_json(b, first, end) {
            if let Some(v) = escaped(&mut p, src, first, end, max_depth)? {
                values.push(v);
            }
            continue;
        }
        // Try the first plausible start, then the next ones, a few times at most.
        let mut at = first;
        for _ in 0..START_ATTEMPTS {
            p.pos = at;
            let checkpoint = p.edits.checkpoint();
            match p.value() {
                Ok(v) => {
                    values.push(v);
                    more_values(&mut p, &mut values);
                    break;
                }
                Err(e) => {
                    p.edits.rollback(checkpoint, 0);
                    p.reset_stack();
                    // Retry only after an early failure at a `[`, which may have been prose
                    // (`[Note: …]` in a sentence), past the failure, and only at a start
                    // after that bracket closed: a start inside the value that failed
                    // would return a part of it as if it were the whole
                    // (`[{"a": {"b": 1 {"c": 2}]` is not `{"c": 2}`).
                    let failed_at = e.offset().unwrap_or(end);
                    first_error.get_or_insert(e);
                    let early = b.get(at) == Some(&b'[') && failed_at < at + 64;
                    match next_start(b, failed_at.max(at + 1), end) {
                        Some(n) if early && bracket_closes(b, at, n) => at = n,
                        _ => break,
                    }
                }
            }
        }
        if !values.is_empty() && p.pos < end {
            p.pos = end;
        }
    }
    if values.is_empty() {
        return Err(first_error.unwrap_or_else(|| {
            Error::at(ErrorKind::NoJson, "no JSON value found", src, skip_ws(b, 0, b.len()))
                .with_hint("send a JSON object such as {\"key\": \"value\"}")
        }));
    }
    if let ([v], Some(cut)) = (values.as_slice(), p.cut.as_ref())
        && cut.evident
        && (skip_ws(b, 0, b.len()) < v.start || b.get(v.start) == Some(&b'('))
        && matches!(p.edits.apply_range(src, v.start, v.end).trim(), "{}" | "[]")
    {
        // `}{`, `hello {`, `(((`: text and an opening bracket with nothing in it is not a
        // value, it is a mess; an empty container built from it would be a guess.
        return Err(Error::at(
            ErrorKind::NoJson,
            "no JSON value found: an opening bracket with nothing after it",
            src,
            v.start,
        )
        .with_hint("send a whole JSON object such as {\"key\": \"value\"}"));
    }
    // Several values are gathered into one array, a level deeper than each.
    let deepest = values.as_slice().iter().map(|v| v.depth).max().unwrap_or(0);
    if values.len() > 1
        && deepest >= max_depth
        && let Some(v) = values.as_slice().iter().find(|v| v.depth >= max_depth)
    {
        return Err(Error::at(
            ErrorKind::TooDeep,
            format!("nesting deeper than {max_depth} levels once the values are gathered into one array"),
            src,
            v.start,
        )
        .with_hint("send one value, or flatten it"));
    }
    let keys_unique = !p.keys_may_repeat;
    let cut = p.cut.take();
    let mut edits = p.into_buffers(buffers);
    edits.deepest = deepest;
    edits.cut = cut;
    edits.keys_unique = keys_unique;
    settle_values(src, &mut edits, values.as_slice(), jsonp);
    Ok(edits)
}

/// After a value: more values separated by whitespace, commas or semicolons. Arrays and
/// objects follow anything; a scalar follows after a comma (`1,2,3`), or on its own line
/// after a scalar (NDJSON of scalars).
fn more_values(p: &mut Parser<'_>, values: &mut Small<ValueSpan, 2>) {
    loop {
        let before = p.pos;
        p.skip_trivia();
        let b = p_bytes(p);
        let mut comma = false;
        while p.pos < p.end && matches!(b.get(p.pos), Some(b',' | b';')) {
            comma |= b.get(p.pos) == Some(&b',');
            p.pos += 1;
            p.skip_trivia();
        }
        if p.pos >= p.end {
            return;
        }
        if is_ident_start(b[p.pos]) && !comma {
            // `{"a": 1} or {"b": 2}`: prose between two objects. Another object with a
            // quoted key is a value the model wrote too (never dropped for the first);
            // brackets in prose (`see [1]`, `{curly}`) are not.
            match memchr::memchr(b'{', &b[p.pos..p.end]).map(|k| p.pos + k) {
                Some(k) if b.get(skip_ws(b, k + 1, p.end)) == Some(&b'"') => {
                    p.pos = k;
                }
                _ => return,
            }
        }
        let container = matches!(b.get(p.pos), Some(b'{' | b'['));
        let after_scalar = values.last().is_some_and(|v| is_scalar(b, v));
        let new_line = b.get(before..p.pos).is_some_and(|gap| gap.contains(&b'\n'));
        let scalar = matches!(b.get(p.pos), Some(b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'))
            && (comma || (after_scalar && new_line));
        if !container && !scalar {
            return;
        }
        let checkpoint = p.edits.checkpoint();
        let at = p.pos;
        if let Ok(v) = p.value() {
            values.push(v);
        } else {
            p.edits.rollback(checkpoint, at);
            p.reset_stack();
            p.pos = at;
            return;
        }
    }
}

fn p_bytes<'a>(p: &Parser<'a>) -> &'a [u8] {
    p.bytes()
}

/// The regions of a text to parse: one (the whole text, the common case, with no vector),
/// or the bodies of several Markdown fences.
enum Regions {
    One((usize, usize)),
    Many(Vec<(usize, usize)>),
}

impl Regions {
    fn as_slice(&self) -> &[(usize, usize)] {
        match self {
            Regions::One(r) => std::slice::from_ref(r),
            Regions::Many(v) => v,
        }
    }
}

/// The regions to parse: the bodies of Markdown fences that hold JSON, or the whole text.
fn fence_regions(b: &[u8]) -> Regions {
    let whole = Regions::One((0, b.len()));
    let first = skip_ws(b, 0, b.len());
    if matches!(b.get(first), Some(b'{' | b'[')) && !brackets_around_fence(b, first) {
        // JSON first: a fence can only be a stray closer at the end.
        let mut end = b.len();
        while end > first && is_ws(b[end - 1]) {
            end -= 1;
        }
        let mut k = end;
        while k > first && b[k - 1] == b'`' {
            k -= 1;
        }
        return if end - k >= 3 { Regions::One((0, k)) } else { whole };
    }
    if b.get(first) == Some(&b'"') {
        // A string that runs to the end (cut off) holds its fences as text.
        let mut k = first + 1;
        while k < b.len() && b[k] != b'"' {
            k += if b[k] == b'\\' { 2 } else { 1 };
        }
        if k >= b.len() {
            return whole;
        }
    }
    let mut regions = Vec::new();
    let mut i = 0;
    while let Some(open) = find(b, b"```", i, b.len()) {
        // The body starts after the backticks and the language tag.
        let body = fence_at(b, open, b.len()).1;
        let close = find(b, b"```", body, b.len());
        let body_end = close.unwrap_or(b.len());
        let s = skip_ws(b, body, body_end);
        if s < body_end && (starts_value(b, s) || b[s] == b'(') {
            regions.push((body, body_end));
        }
        let Some(close) = close else { break };
        i = close + 3;
        while b.get(i) == Some(&b'`') {
            i += 1;
        }
    }
    if regions.is_empty() { whole } else { Regions::Many(regions) }
}

/// `[```json {…} ```]`, `{```\n{…}\n```}`: the text is one fenced value inside a pair of
/// brackets and nothing else. The fence says where the value is; the brackets around it
/// are not part of it (an array or object holding a fence and nothing else would have
/// no key, or hold a fence marker as a value).
fn brackets_around_fence(b: &[u8], open: usize) -> bool {
    let fence = skip_ws(b, open + 1, b.len());
    if b.get(fence..fence + 3) != Some(b"```") {
        return false;
    }
    let closer = if b.get(open) == Some(&b'[') { b']' } else { b'}' };
    let mut end = b.len();
    while end > fence && is_ws(b[end - 1]) {
        end -= 1;
    }
    if end <= fence || b[end - 1] != closer {
        return false;
    }
    let mut ticks = end - 1;
    while ticks > fence && is_ws(b[ticks - 1]) {
        ticks -= 1;
    }
    ticks >= fence + 6 && b.get(ticks - 3..ticks) == Some(b"```")
}

fn starts_value(b: &[u8], i: usize) -> bool {
    matches!(b.get(i), Some(b'{' | b'[' | b'"' | b'-' | b'0'..=b'9')) || open_quote(b, i).is_some()
}

/// Where the first value of a region starts, skipping prose before it. Sets `jsonp` when
/// the value is wrapped as `callback( … )`.
fn find_start(b: &[u8], from: usize, end: usize, jsonp: &mut bool) -> Option<usize> {
    let s = skip_ws(b, from, end);
    if s >= end {
        return None;
    }
    let c = b[s];
    let digit_follows = b.get(s + 1).is_some_and(|d| d.is_ascii_digit() || *d == b'.');
    if matches!(c, b'{' | b'[' | b'(' | b'0'..=b'9') || open_quote(b, s).is_some() {
        return Some(s);
    }
    if matches!(c, b'-' | b'+' | b'.') && digit_follows {
        return Some(s);
    }
    if c == b'\\' && b.get(s + 1) == Some(&b'"') {
        return Some(s);
    }
    // JSONP: `callback({...});`
    if is_ident_start(c) {
        let mut j = s;
        while j < end && (is_ident(b[j]) || b[j] == b'.') {
            j += 1;
        }
        let k = skip_ws(b, j, end);
        let inner = skip_ws(b, k + 1, end);
        // A scalar inside (`callback(2);`) only when the call closes the text.
        let wrapped = matches!(b.get(inner), Some(b'{' | b'['))
            || (ends_with_call_close(b, inner, end)
                && (starts_value(b, inner)
                    || [&b"true"[..], b"false", b"null"].iter().any(|w| b[inner..].starts_with(w))));
        if b.get(k) == Some(&b'(') && wrapped {
            *jsonp = true;
            return Some(inner);
        }
        if matches!(&b[s..j], b"true" | b"false" | b"null") {
            return Some(s);
        }
    }
    next_start(b, s, end).or(Some(s))
}

/// True when `b[from..end]` ends with `)`, then perhaps `;` (a call that closes the text).
fn ends_with_call_close(b: &[u8], from: usize, end: usize) -> bool {
    let mut e = end;
    while e > from && is_ws(b[e - 1]) {
        e -= 1;
    }
    if e > from && b[e - 1] == b';' {
        e -= 1;
        while e > from && is_ws(b[e - 1]) {
            e -= 1;
        }
    }
    e > from + 1 && b[e - 1] == b')'
}

/// The next `{`, or `[` that opens something JSON-like, at or after `from`.
fn next_start(b: &[u8], from: usize, end: usize) -> Option<usize> {
    let mut i = from;
    while i < end {
        let c = *b.get(i)?;
        if c == b'{' {
            // `{"k"…`, `{'k'…`, `{}`, `{k: …`: not `{curly}` braces in prose.
            let k = skip_ws(b, i + 1, end);
            let keyed = match b.get(k) {
                None | Some(b'"' | b'\'' | b'}' | b'{') => true,
                Some(_) => open_quote(b, k).is_some() || ident_then_colon(b, k, end),
            };
            if keyed {
                return Some(i);
            }
        }
        if c == b'[' {
            let k = skip_ws(b, i + 1, end);
            if matches!(b.get(k), Some(b'{' | b'[' | b'"' | b'\'' | b']' | b'-' | b'0'..=b'9')) || k >= end {
                return Some(i);
            }
        }
        i += 1;
    }
    None
}

/// `{\"a\": 1}`: JSON whose quotes are all escaped.
fn is_escaped_json(b: &[u8], s: usize, end: usize) -> bool {
    let head = &b[s..end.min(s + 3)];
    head.starts_with(b"\\\"") || head == b"{\\\"" || head == b"[\\\""
}

/// Parse escaped JSON by unescaping one level and parsing that.
fn escaped(p: &mut Parser<'_>, src: &str, s: usize, end: usize, max_depth: usize) -> Result<Option<ValueSpan>> {
    let b = src.as_bytes();
    let mut text = String::with_capacity(end - s);
    let mut map: Vec<usize> = Vec::with_capacity(end - s + 1);
    let mut i = s;
    while i < end {
        let c = b[i];
        if c == b'\\' {
            let unescaped = match b.get(i + 1) {
                Some(b'"') => Some('"'),
                Some(b'\\') => Some('\\'),
                Some(b'/') => Some('/'),
                Some(b'n') => Some('\n'),
                Some(b't') => Some('\t'),
                Some(b'r') => Some('\r'),
                _ => None,
            };
            if let Some(u) = unescaped {
                text.push(u);
                map.push(i);
                i += 2;
                continue;
            }
        }
        let ch_len = utf8_len(c);
        if let Some(chunk) = src.get(i..i + ch_len) {
            text.push_str(chunk);
            map.extend((0..ch_len).map(|k| i + k));
        }
        i += ch_len.max(1);
    }
    map.push(end);
    let mut inner = parse(&text, max_depth, false, &mut Buffers::default())?;
    // Keys read from unescaped text are not compared with the input's.
    p.keys_may_repeat = true;
    p.cut = inner.cut.take().map(|t| t.mapped(|x| map.get(x).copied().unwrap_or(end)));
    let depth = inner.deepest;
    let (out, fixes) = inner.finish(&text);
    let out = out.trim().to_owned();
    p.edits.replace(s, end, Cow::Owned(out), Some(K::EscapedJson));
    for f in fixes {
        let a = map.get(f.span.start).copied().unwrap_or(end);
        let z = map.get(f.span.end).copied().unwrap_or(end);
        p.edits.note(a, z.max(a), f.kind);
    }
    p.pos = end;
    Ok(Some(ValueSpan { start: s, end, empty_container: false, depth }))
}

/// `text` without Markdown fence markers and their language tags.
fn without_fences(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = find(rest.as_bytes(), b"```", 0, rest.len()) {
        out.push_str(&rest[..i]);
        let after = rest[i..].trim_start_matches('`');
        let tag = after.bytes().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'+' | b'-')).count();
        rest = &after[tag..];
    }
    out.push_str(rest);
    out
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// True when the `[` at `open` is closed by a `]` before `to` (brackets counted as they
/// come; the text is prose or broken JSON, so quotes are not trusted).
fn bracket_closes(b: &[u8], open: usize, to: usize) -> bool {
    let mut depth = 0usize;
    for &c in b.get(open..to).unwrap_or_default() {
        match c {
            b'[' => depth += 1,
            b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// True when `b[from..to]` (the text between two values) holds a comment.
fn has_comment(b: &[u8], from: usize, to: usize) -> bool {
    (from..to).any(|i| b.get(i) != Some(&b'`') && super::lex::comment_starts(b, i))
}

/// True when the top-level value `v` is a scalar, not an array or object.
fn is_scalar(b: &[u8], v: &ValueSpan) -> bool {
    !matches!(b.get(v.start), Some(b'{' | b'[' | b'(' | b'\\'))
}

/// Drop what lies around and between the values, and apply the several-values policy.
fn settle_values(src: &str, edits: &mut Edits, values: &[ValueSpan], jsonp: bool) {
    let b = src.as_bytes();
    if let [v] = values {
        // One value, the common case: only what lies around it.
        gap(src, edits, 0, v.start, "", false, jsonp);
        gap(src, edits, v.end, b.len(), "", false, jsonp);
        return;
    }
    // Which values stay.
    let parsed: Vec<Option<serde_json::Value>> = if values.len() > 1 {
        values.iter().map(|v| serde_json::from_str(&edits.apply_range(src, v.start, v.end)).ok()).collect()
    } else {
        vec![None]
    };
    let is_empty = |n: usize| match parsed.get(n) {
        Some(Some(serde_json::Value::Array(a))) => a.is_empty(),
        Some(Some(serde_json::Value::Object(o))) => o.is_empty(),
        _ => values.get(n).is_some_and(|v| v.empty_container),
    };
    let any_full = (0..values.len()).any(|n| !is_empty(n));
    let first_empty = (0..values.len()).find(|&n| is_empty(n));
    let mut keep: Vec<usize> = Vec::new();
    // A sequence with scalars (`1,2,1`) is data in order, and so are documents each set
    // apart by a comment (MongoDB's `/* 1 */ {…} /* 2 */ {…}`): nothing is dropped from them.
    let labelled = values.windows(2).all(|w| has_comment(b, w[0].end, w[1].start));
    let sequence = labelled || values.iter().any(|v| is_scalar(b, v));
    for (n, v) in values.iter().enumerate() {
        if sequence {
            keep.push(n);
            continue;
        }
        if values.len() > 1 && is_empty(n) && (any_full || first_empty != Some(n)) {
            edits.clear_value(v.start, v.end);
            edits.delete(v.start, v.end, Some(K::EmptyValueDropped));
            continue;
        }
        let dup = parsed[n].is_some() && keep.iter().any(|&k| parsed[k].is_some() && parsed[k] == parsed[n]);
        if dup {
            edits.clear_value(v.start, v.end);
            edits.delete(v.start, v.end, Some(K::DuplicateValue));
            continue;
        }
        keep.push(n);
    }
    // The gaps: before, between and after the values.
    let mut cursor = 0;
    for (n, v) in values.iter().enumerate() {
        let kept_before = keep.iter().any(|&k| k < n);
        let sep = if keep.contains(&n) && kept_before { "," } else { "" };
        gap(src, edits, cursor, v.start, sep, values.len() > 1, jsonp);
        cursor = v.end;
    }
    gap(src, edits, cursor, b.len(), "", values.len() > 1, jsonp);
    if keep.len() > 1 {
        let first = values[keep[0]].start;
        let last = values[keep[keep.len() - 1]].end;
        edits.note(first, last, K::MultipleValues);
        edits.insert(first, "[", None);
        edits.insert(last, "]", None);
    }
}

/// `text` without whitespace, separators (`,` `;`) and invisible characters at either end.
/// Bytes first: when both ends stop at an ASCII byte (prose, the common gap), that is the
/// answer; else the same trim, a character at a time.
fn trim_separators(text: &str) -> &str {
    let trimmed = |c: u8| matches!(c, b'\t'..=b'\r' | b' ' | b',' | b';');
    let b = text.as_bytes();
    let start = b.iter().position(|&c| !trimmed(c)).unwrap_or(b.len());
    let end = b.iter().rposition(|&c| !trimmed(c)).map_or(start, |e| e + 1);
    match (b.get(start), end.checked_sub(1).and_then(|e| b.get(e))) {
        (Some(&first), Some(&last)) if first.is_ascii() && last.is_ascii() => text.get(start..end).unwrap_or(""),
        (None, _) => "",
        _ => text.trim_matches(|c: char| c.is_whitespace() || c == ',' || c == ';' || is_invisible(u32::from(c))),
    }
}

/// Replace the text between values (`start..end`) with `sep`, reporting what it held.
fn gap(src: &str, edits: &mut Edits, start: usize, end: usize, sep: &'static str, several: bool, jsonp: bool) {
    if start >= end {
        if !sep.is_empty() {
            edits.insert(start, sep, None);
        }
        return;
    }
    let text = &src[start..end];
    if text.bytes().all(is_ws) && sep.is_empty() && !several {
        return;
    }
    edits.clear_range(start, end);
    let fence = find(text.as_bytes(), b"```", 0, text.len()).is_some();
    let rest: Cow<'_, str> = if fence { Cow::Owned(without_fences(text)) } else { Cow::Borrowed(text) };
    let meaningful = trim_separators(&rest);
    let invisible = || rest.chars().any(|c| c != ' ' && is_invisible(u32::from(c)) || matches!(c, '\u{b}' | '\u{c}'));
    let kind = if jsonp && (meaningful.ends_with('(') || meaningful.starts_with(')')) {
        Some(K::JsonpWrapper)
    } else if !meaningful.is_empty() && meaningful.bytes().all(|c| matches!(c, b'}' | b']' | b')') || is_ws(c)) {
        Some(K::ExtraClosingBracket)
    } else if !meaningful.is_empty() {
        if meaningful.starts_with("//") || meaningful.starts_with("/*") || meaningful.starts_with('#') {
            Some(K::Comment)
        } else {
            Some(K::SurroundingProse)
        }
    } else if fence {
        Some(K::CodeFence)
    } else if !several && (start == 0 || end == src.len()) && rest.contains([',', ';']) {
        // `{"a": 1},` or `0;`: one value and a separator with nothing after it, dropped
        // (was dropped without a word, so the text counted as untouched). Around several
        // values the separators are reported with them (`multiple_values`).
        Some(K::TrailingComma)
    } else if invisible() {
        Some(K::InvisibleCharacter)
    } else {
        None
    };
    if fence && kind != Some(K::CodeFence) {
        edits.note(start, end, K::CodeFence);
    }
    edits.replace(start, end, sep, kind);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn trim_separators_is_the_trim_a_character_at_a_time(text in "[ \t\n\u{b}\u{c}\r\u{1c},;a:é\u{a0}\u{85}\u{200b}\u{feff}]{0,12}") {
            let slow = text.trim_matches(|c: char| c.is_whitespace() || c == ',' || c == ';' || is_invisible(u32::from(c)));
            prop_assert_eq!(trim_separators(&text), slow);
        }
    }
}
