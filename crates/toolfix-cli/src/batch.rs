//! The JSON Lines driver shared by every `--batch` subcommand.
//!
//! It reads one line, answers it, and reads the next, so it works as a co-process and on
//! endless input in constant memory: one line buffer and one answer buffer, both reused.
//! One output line per non-blank input line, in order, carrying the input's `id`. Blank
//! lines are skipped. A line that is not valid UTF-8, not a JSON object, or longer than
//! the line limit gets an error line `{"id":null,"line":N,"error":"..."}` and the batch
//! goes on: nothing a line holds stops the run.

use crate::out::{Obj, Stdout};
use anyhow::Result;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::io::{self, BufRead, BufReader, Read};

/// A JSON string, borrowed from the line when it has no escapes.
#[derive(Deserialize)]
pub(crate) struct Text<'a>(#[serde(borrow)] pub(crate) Cow<'a, str>);

/// Where batch lines come from: a file or stdin, read through one buffer.
pub(crate) type Input = BufReader<Box<dyn Read>>;

/// One input line, as the driver hands it to a subcommand.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Line<'a> {
    /// The text of the line, without its newline.
    pub(crate) text: &'a str,
    /// Its number, from 1.
    pub(crate) number: usize,
}

impl<'a> Line<'a> {
    /// The line read as the envelope `T`, or the error line to answer with.
    pub(crate) fn parse<T: Deserialize<'a>>(&self, answer: &mut String) -> Option<T> {
        // A derived envelope would also read a JSON array (as the members in order).
        if !self.text.trim_start().starts_with('{') {
            let what = match serde_json::from_str::<&RawValue>(self.text) {
                Ok(_) => "JSON, but not an object".to_owned(),
                Err(e) => format!("not a JSON object: {e}"),
            };
            error_line(answer, self.number, &format!("line {} is {what}", self.number));
            return None;
        }
        match serde_json::from_str::<T>(self.text) {
            Ok(envelope) => Some(envelope),
            Err(e) => {
                let what = if e.is_data() { "not a valid request" } else { "not a JSON object" };
                error_line(answer, self.number, &format!("line {} is {what}: {e}", self.number));
                None
            }
        }
    }
}

/// Start the answer to a line: `{"id":<the line's id, or null>`.
pub(crate) fn answer<'b>(answer: &'b mut String, id: Option<&RawValue>) -> Obj<'b> {
    answer_with_id(answer, id.map(RawValue::get))
}

/// [`answer`], for an id given as its raw JSON text.
pub(crate) fn answer_with_id<'b>(answer: &'b mut String, id: Option<&str>) -> Obj<'b> {
    let mut obj = Obj::new(answer);
    match id {
        Some(id) => obj.raw("id", id),
        None => obj.raw_line("id", "null"),
    };
    obj
}

/// The id of the common batch line, as [`plain_id_and_text`] reads it (nothing to
/// compact either way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PlainId<'a> {
    /// A JSON string: its raw text, quotes and escapes as written (checked as UTF-8).
    Str(&'a str),
    /// A JSON integer: its bytes, an optional `-` and digits (ASCII, so not run through
    /// a UTF-8 check: that call cost more than writing the few digits one by one).
    Integer(&'a [u8]),
}

/// [`answer_with_id`], for an id as [`plain_id_and_text`] reads it.
pub(crate) fn answer_with_plain_id<'b>(answer: &'b mut String, id: PlainId<'_>) -> Obj<'b> {
    let mut obj = Obj::new(answer);
    match id {
        PlainId::Str(id) => {
            obj.raw_line("id", id);
        }
        PlainId::Integer(digits) => {
            let text = obj.key("id");
            for &d in digits {
                text.push(char::from(d));
            }
        }
    }
    obj
}

/// The raw JSON text of `"id"` and the text of `"input"` when `line` is exactly
/// `{"id": …, "input": "…"}` (in this order, the id a string or an integer, the input a
/// string, JSON whitespace anywhere), read without serde: the common batch line. The
/// input is unescaped as it is read (borrowed from the line when it has no escape, else
/// written into `scratch`). `None` for any other shape, which serde reads (and reports
/// on) as before; so is a string with a control character or an escape other than a
/// two-byte one, which serde may reject, and a line whose id or text is not UTF-8 (the
/// only bytes of the shape that may be other than ASCII: the line is UTF-8 when they are).
pub(crate) fn plain_id_and_text<'a>(line: &'a [u8], scratch: &'a mut Vec<u8>) -> Option<(PlainId<'a>, &'a str)> {
    let b = line;
    let i = expect(b, 0, b"{")?;
    let i = expect(b, i, b"\"id\"")?;
    let i = expect(b, i, b":")?;
    // The id and the text are the only bytes of the line that may be other than ASCII
    // (an integer id is ASCII).
    let (id, id_end) = if let Some(end) = plain_string_end(b, i) {
        (PlainId::Str(std::str::from_utf8(b.get(i..end)?).ok()?), end)
    } else {
        let end = plain_integer_end(b, i)?;
        (PlainId::Integer(b.get(i..end)?), end)
    };
    let i = expect(b, id_end, b",")?;
    let i = expect(b, i, b"\"input\"")?;
    let i = expect(b, i, b":")?;
    let (end, escaped) = unescape_plain(b, i, scratch)?;
    let rest = expect(b, end, b"}")?;
    if rest != b.len() {
        return None;
    }
    let text = match escaped {
        Some(len) => std::str::from_utf8(scratch.get(..len)?).ok()?,
        None => std::str::from_utf8(b.get(i + 1..end - 1)?).ok()?,
    };
    Some((id, text))
}

/// The JSON string at `i` (no control character, only two-byte escapes), unescaped into
/// `scratch`: the index past its closing quote, and when it held an escape, the length of
/// its text (the start of `scratch`; the rest is stale). Eight bytes
/// at a time: each word is copied whole, then the write position moves past the plain
/// bytes in it (`scratch` has room for a word past the text).
fn unescape_plain(b: &[u8], i: usize, scratch: &mut Vec<u8>) -> Option<(usize, Option<usize>)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let mut j = i + 1;
    // Room for the text and a word past it; the bytes are overwritten, never cleared.
    let room = b.len() - j + 8;
    if scratch.len() < room {
        scratch.resize(room, 0);
    }
    let mut w = 0;
    let mut escaped = false;
    loop {
        // Plain text, a word at a time; then the last few bytes one by one.
        while let Some(chunk) = b.get(j..j + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            scratch.get_mut(w..w + 8)?.copy_from_slice(chunk);
            let m = crate::out::stop_lanes(u64::from_le_bytes(word), true);
            if m != 0 {
                let n = (m.trailing_zeros() / 8) as usize;
                j += n;
                w += n;
                break;
            }
            j += 8;
            w += 8;
        }
        let c = *b.get(j)?;
        match c {
            b'"' => return Some((j + 1, escaped.then_some(w))),
            b'\\' => {
                // A table, not a match: one load (the escapes of a tool call are mostly
                // `\"`, about twenty a line).
                let unescaped = UNESCAPE[usize::from(*b.get(j + 1)?)];
                if unescaped == 0 {
                    return None;
                }
                *scratch.get_mut(w)? = unescaped;
                w += 1;
                j += 2;
                escaped = true;
            }
            0..0x20 => return None,
            _ => {
                *scratch.get_mut(w)? = c;
                w += 1;
                j += 1;
            }
        }
    }
}

/// The byte a two-byte escape `\c` stands for, at index `c`; 0 for any other `c`.
const UNESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t[b'/' as usize] = b'/';
    t[b'b' as usize] = 0x08;
    t[b'f' as usize] = 0x0c;
    t[b'n' as usize] = b'\n';
    t[b'r' as usize] = b'\r';
    t[b't' as usize] = b'\t';
    t
};

/// The end of the JSON integer at `i` (`0`, `-12`; no fraction or exponent, which serde
/// reads).
fn plain_integer_end(b: &[u8], i: usize) -> Option<usize> {
    let digits = if b.get(i) == Some(&b'-') { i + 1 } else { i };
    let end = digits + b.get(digits..)?.iter().take_while(|c| c.is_ascii_digit()).count();
    let leading_zero = b.get(digits) == Some(&b'0') && end > digits + 1;
    (end > digits && !leading_zero && !matches!(b.get(end), Some(b'.' | b'e' | b'E'))).then_some(end)
}

/// `token` at `i`, after whitespace: the index past it and the whitespace after it. (Its
/// length is a constant, so the comparison is a few loads, not a call to `memcmp`.)
fn expect<const N: usize>(b: &[u8], i: usize, token: &[u8; N]) -> Option<usize> {
    let i = skip_ws(b, i);
    (b.get(i..i + N)? == token.as_slice()).then(|| skip_ws(b, i + N))
}

/// The end (past the closing quote) of the JSON string at `i`, when it holds no control
/// character and only two-byte escapes.
fn plain_string_end(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let mut j = i + 1;
    loop {
        // Plain text is skipped a word at a time: only `"`, `\` and control bytes stop.
        j = crate::out::string_stop(b, j, true);
        match *b.get(j)? {
            b'"' => return Some(j + 1),
            b'\\' => {
                if !matches!(b.get(j + 1), Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't')) {
                    return None;
                }
                j += 2;
            }
            _ => return None,
        }
    }
}

/// Past JSON whitespace from `i`.
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The answer to a line that could not be read.
fn error_line(answer: &mut String, number: usize, message: &str) {
    answer.clear();
    let mut obj = Obj::new(answer);
    obj.raw_line("id", "null").usize("line", number).str("error", message).finish();
}

/// The longest line read, for inputs of `max_input_bytes`: room for the text written as a
/// JSON string (escapes) and for the other members (tools, history).
pub(crate) fn line_limit(max_input_bytes: usize) -> usize {
    max_input_bytes.saturating_mul(4).max(1 << 20)
}

/// Answer every line of `input` with `handle`, which writes one JSON object into the
/// (cleared) answer buffer. Returns on end of input or on an I/O error.
pub(crate) fn run<F>(input: &mut Input, limit: usize, handle: F) -> Result<()>
where
    F: FnMut(Line<'_>, &mut String),
{
    run_with(input, limit, |_, _| false, handle)
}

/// [`run`], where `plain` sees each line's bytes first, before they are checked as UTF-8:
/// when it answers (returns true), `handle` is not called. It must answer only a line it
/// has checked (what it reads of it is UTF-8).
pub(crate) fn run_with<P, F>(input: &mut Input, limit: usize, mut plain: P, mut handle: F) -> Result<()>
where
    P: FnMut(&[u8], &mut String) -> bool,
    F: FnMut(Line<'_>, &mut String),
{
    let mut out = Stdout::new();
    let mut buf = Vec::with_capacity(4096);
    let mut answer = String::with_capacity(4096);
    let mut number = 0;
    loop {
        answer.clear();
        // A whole line already in the reader's buffer is answered from there (not copied
        // into `buf` first); any other (at the end of the buffer, or longer than it) is
        // read into `buf`.
        let buffered = memchr::memchr(b'\n', input.buffer()).filter(|&n| n <= limit);
        let answered = if let Some(n) = buffered {
            number += 1;
            let answered =
                answer_line(input.buffer().get(..n).unwrap_or_default(), number, &mut answer, &mut plain, &mut handle);
            input.consume(n + 1);
            answered
        } else {
            buf.clear();
            let Some(length) = read_line(input, &mut buf, limit)? else { break };
            number += 1;
            if length > limit {
                let message = format!(
                    "line {number} is too large ({length} bytes, limit {limit} bytes; raise `--max-input-bytes`)"
                );
                error_line(&mut answer, number, &message);
                true
            } else {
                answer_line(&buf, number, &mut answer, &mut plain, &mut handle)
            }
        };
        if answered {
            out.line(&answer)?;
            out.answered(|| has_line(input))?;
        }
    }
    out.finish()?;
    Ok(())
}

/// Answer line `number` (its bytes, without the newline) into `answer`, as
/// [`run_with`] says; false for a blank line, which gets no answer.
fn answer_line<P, F>(line: &[u8], number: usize, answer: &mut String, plain: &mut P, handle: &mut F) -> bool
where
    P: FnMut(&[u8], &mut String) -> bool,
    F: FnMut(Line<'_>, &mut String),
{
    let bytes = line.strip_suffix(b"\r").unwrap_or(line);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return false;
    }
    if plain(bytes, answer) {
        // Answered.
    } else {
        match std::str::from_utf8(bytes) {
            Ok(text) => handle(Line { text, number }, answer),
            Err(e) => {
                let message = format!("line {number} is not valid UTF-8 (at byte {})", e.valid_up_to());
                error_line(answer, number, &message);
            }
        }
    }
    true
}

/// True when a whole next line is already buffered (reading it will not block).
fn has_line(input: &Input) -> bool {
    memchr::memchr(b'\n', input.buffer()).is_some()
}

/// Read one line into `buf` (without its `\n`), keeping at most `limit + 1` bytes of it;
/// returns the line's whole length, or `None` at the end of input.
fn read_line(input: &mut dyn BufRead, buf: &mut Vec<u8>, limit: usize) -> io::Result<Option<usize>> {
    let mut length = 0usize;
    let mut any = false;
    loop {
        let available = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(any.then_some(length));
        }
        any = true;
        let (take, end) = match memchr::memchr(b'\n', available) {
            Some(i) => (i, true),
            None => (available.len(), false),
        };
        let room = (limit + 1).saturating_sub(buf.len());
        buf.extend_from_slice(&available[..take.min(room)]);
        length = length.saturating_add(take);
        input.consume(if end { take + 1 } else { take });
        if end {
            return Ok(Some(length));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json_cmd::Envelope;

    /// The raw JSON text of a plain id.
    fn id_text(id: PlainId<'_>) -> String {
        match id {
            PlainId::Str(s) => s.to_owned(),
            PlainId::Integer(digits) => String::from_utf8(digits.to_vec()).unwrap(),
        }
    }

    /// An integer id is written as its digits, a string id as written.
    #[test]
    fn plain_ids_are_written_as_read() {
        for (id, written) in [
            (PlainId::Integer(b"-120"), r#"{"id":-120}"#),
            (PlainId::Integer(b"0"), r#"{"id":0}"#),
            (PlainId::Str(r#""a\"é""#), r#"{"id":"a\"é"}"#),
        ] {
            let mut answer = String::new();
            answer_with_plain_id(&mut answer, id).finish();
            assert_eq!(answer, written);
        }
    }

    #[test]
    fn plain_lines_read_as_serde_reads_them() {
        let plain = [
            r#"{"id": "a", "input": "{\"x\": 1}"}"#,
            r#"{"id":"","input":""}"#,
            " \t{ \"id\" :\r\"a b\" ,\n\"input\" : \"x\\\\y\\/\\b\\f\\n\\r\\t\" }  ",
            r#"{"id": "é", "input": "naïve 🚀"}"#,
        ];
        let mut scratch = Vec::new();
        // An integer id too.
        let integer_ids = [r#"{"id": 1, "input": "x"}"#, r#"{"id":-20,"input":"x"}"#, r#"{"id": 0 , "input": "x"}"#];
        for line in plain.into_iter().chain(integer_ids) {
            let serde: Envelope<'_> = serde_json::from_str(line).unwrap();
            let text: String = serde_json::from_str(serde.input.unwrap().get()).unwrap();
            let fast = plain_id_and_text(line.as_bytes(), &mut scratch).map(|(id, text)| (id_text(id), text));
            assert_eq!(fast, Some((serde.id.unwrap().get().to_owned(), text.as_str())), "{line}");
        }
        // Longer texts (read a word at a time), with escapes at every place in a word.
        for n in 0..24usize {
            let text = format!("{}\"{}\\é\n{}/", "a".repeat(n), "b".repeat(n % 9), "🚀".repeat(n % 3));
            let line = format!("{{\"id\": {n}, \"input\": {}}}", serde_json::to_string(&text).unwrap());
            let id = n.to_string();
            assert_eq!(
                plain_id_and_text(line.as_bytes(), &mut scratch),
                Some((PlainId::Integer(id.as_bytes()), text.as_str())),
                "{line}"
            );
        }
        let other = [
            r#"{"input": "x", "id": "a"}"#,
            r#"{"id": 1.5, "input": "x"}"#,
            r#"{"id": 1e3, "input": "x"}"#,
            r#"{"id": 01, "input": "x"}"#,
            r#"{"id": -, "input": "x"}"#,
            r#"{"id": null, "input": "x"}"#,
            r#"{"id": "a", "input": "x", "tools": []}"#,
            r#"{"id": "a", "input": "\u0041"}"#,
            "{\"id\": \"a\", \"input\": \"tab\there\"}",
            r#"{"id": "a", "input": "x"} x"#,
            r#"{"id": "a", "input": "x"}}"#,
            r#"{"id": "a", "input": "x""#,
            r#"{"id": "a", "input": "x\"}"#,
            r#"{"id": "a", "input": "\x"}"#,
            r#"[{"id": "a", "input": "x"}]"#,
            "\u{a0}{\"id\": \"a\", \"input\": \"x\"}",
            "",
        ];
        for line in other {
            assert_eq!(plain_id_and_text(line.as_bytes(), &mut scratch), None, "{line}");
        }
        // Bytes that are not UTF-8, in the id or the text (escaped or not): the line is
        // left to the check of the whole line, which reports it.
        for line in [
            &b"{\"id\": \"\xff\", \"input\": \"x\"}"[..],
            b"{\"id\": 1, \"input\": \"\xc3\"}",
            b"{\"id\": 1, \"input\": \"\\n\xe2\x80\"}",
        ] {
            assert_eq!(plain_id_and_text(line, &mut scratch), None, "{line:?}");
        }
    }
}
