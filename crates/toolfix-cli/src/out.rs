//! Writing the CLI's output: JSON objects built member by member into a reused buffer
//! (raw JSON text embedded as written, so numbers and key order survive), and stdout
//! itself, buffered, flushed per answer when a reader may be waiting on it.

use std::io::{self, Write};

/// Exit code 1: some input could not be recovered, or a call was refused.
pub(crate) const UNRECOVERED: u8 = 1;

/// One JSON object written member by member into `text`.
#[derive(Debug)]
pub(crate) struct Obj<'b> {
    text: &'b mut String,
    empty: bool,
}

impl<'b> Obj<'b> {
    /// Start an object at the end of `text`.
    pub(crate) fn new(text: &'b mut String) -> Self {
        text.push('{');
        Obj { text, empty: true }
    }

    /// Start member `key` (a name of the wire shapes: nothing to escape); its value comes
    /// next.
    pub(crate) fn key(&mut self, key: &str) -> &mut String {
        if !self.empty {
            self.text.push(',');
        }
        self.empty = false;
        // Keys are the CLI's own names: plain ASCII, nothing to escape.
        self.text.push('"');
        self.text.push_str(key);
        self.text.push_str("\":");
        self.text
    }

    /// A member whose value is strict JSON text (compacted onto one line here).
    pub(crate) fn raw(&mut self, key: &str, json: &str) -> &mut Self {
        let text = self.key(key);
        toolfix::salvage::compact_into(text, json);
        self
    }

    /// A member whose value is strict JSON text, kept as written when it is on one line
    /// (arguments keep the model's bytes), compacted otherwise.
    pub(crate) fn raw_as_written(&mut self, key: &str, json: &str) -> &mut Self {
        if json.contains(['\n', '\r']) { self.raw(key, json) } else { self.raw_line(key, json) }
    }

    /// A member whose value is JSON text already on one line.
    pub(crate) fn raw_line(&mut self, key: &str, json: &str) -> &mut Self {
        self.key(key).push_str(json);
        self
    }

    /// A string member.
    pub(crate) fn str(&mut self, key: &str, s: &str) -> &mut Self {
        let text = self.key(key);
        push_quoted(text, s);
        self
    }

    /// A member holding anything serde can write.
    pub(crate) fn ser<T: serde::Serialize + ?Sized>(&mut self, key: &str, value: &T) -> &mut Self {
        let json = serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned());
        self.raw_line(key, &escape_line_separators(json))
    }

    /// A boolean member.
    pub(crate) fn bool(&mut self, key: &str, b: bool) -> &mut Self {
        self.key(key).push_str(if b { "true" } else { "false" });
        self
    }

    /// A number member.
    pub(crate) fn usize(&mut self, key: &str, n: usize) -> &mut Self {
        let text = self.key(key);
        push_usize(text, n);
        self
    }

    /// Close the object.
    pub(crate) fn finish(&mut self) {
        self.text.push('}');
    }
}

/// A byte in every lane of a word, and the top bit of every lane.
const LANES: u64 = 0x0101_0101_0101_0101;
const TOPS: u64 = LANES << 7;

/// The lanes of `x` that equal `c` (top bit set), exact for the lowest one (a lane above a
/// match may be flagged too): bytes compared eight at a time.
#[inline]
fn lanes_equal(x: u64, c: u8) -> u64 {
    let t = x ^ (LANES * u64::from(c));
    t.wrapping_sub(LANES) & !t & TOPS
}

/// The lanes of the word `x` (eight bytes, little-endian) that end plain JSON string text:
/// `"`, `\`, or a control byte when `controls`; exact for the lowest one.
#[inline]
pub(crate) fn stop_lanes(x: u64, controls: bool) -> u64 {
    let mut m = lanes_equal(x, b'"') | lanes_equal(x, b'\\');
    if controls {
        m |= x.wrapping_sub(LANES * 0x20) & !x & TOPS;
    }
    m
}

/// Where `b` first holds a byte that ends plain JSON string text at or after `i`: `"`,
/// `\`, or a control byte when `controls`; `b.len()` when none does. Eight bytes at a
/// time, as escaped and long inputs are common.
pub(crate) fn string_stop(b: &[u8], mut i: usize, controls: bool) -> usize {
    while let Some(chunk) = b.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let m = stop_lanes(u64::from_le_bytes(word), controls);
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    let rest = b.get(i..).unwrap_or_default();
    i + rest.iter().position(|&c| c == b'"' || c == b'\\' || (controls && c < 0x20)).unwrap_or(rest.len())
}

/// The text of a JSON string literal `raw` (quotes included, as a `RawValue` holds it):
/// borrowed when it has no escape, else unescaped into `scratch`. `None` when `raw` is not
/// a string (or holds an escaped surrogate: then ask serde).
pub(crate) fn json_str<'a>(raw: &'a str, scratch: &'a mut String) -> Option<&'a str> {
    let body = raw.strip_prefix('"')?.strip_suffix('"')?;
    let b = body.as_bytes();
    let Some(first) = memchr::memchr(b'\\', b) else { return Some(body) };
    scratch.clear();
    scratch.reserve(b.len());
    let mut copied = 0;
    let mut i = first;
    while i < b.len() {
        if b[i] != b'\\' {
            // The text up to the next escape (a quote is only ever escaped in a string
            // literal) is copied in one piece.
            i = string_stop(b, i, false);
            continue;
        }
        scratch.push_str(body.get(copied..i)?);
        let (ch, len) = match b.get(i + 1)? {
            // `\"`, `\\`, `\/` stand for their second byte: it starts the next piece
            // copied (one copy per escape, not a copy and a `char`).
            b'"' | b'\\' | b'/' => {
                copied = i + 1;
                i += 2;
                continue;
            }
            b'b' => ('\u{8}', 2),
            b'f' => ('\u{c}', 2),
            b'n' => ('\n', 2),
            b'r' => ('\r', 2),
            b't' => ('\t', 2),
            b'u' => {
                let code = u32::from_str_radix(body.get(i + 2..i + 6)?, 16).ok()?;
                (char::from_u32(code)?, 6)
            }
            _ => return None,
        };
        scratch.push(ch);
        i += len;
        copied = i;
    }
    scratch.push_str(body.get(copied..)?);
    Some(scratch)
}

/// `n` in decimal, appended to `out`.
pub(crate) fn push_usize(out: &mut String, n: usize) {
    // Spans of tool calls are short: up to three digits are pushed as characters (no
    // formatting buffer, no copy of a slice of run-time length).
    let digit = |d: usize| char::from(b'0' + (d % 10) as u8);
    if n < 10 {
        out.push(digit(n));
    } else if n < 100 {
        out.push(digit(n / 10));
        out.push(digit(n));
    } else if n < 1000 {
        out.push(digit(n / 100));
        out.push(digit(n / 10));
        out.push(digit(n));
    } else {
        out.push_str(itoa::Buffer::new().format(n));
    }
}

/// `s` as a JSON string literal, appended to `out`, with U+2028/U+2029 escaped so no line
/// splitter breaks the line.
pub(crate) fn push_quoted(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let b = s.as_bytes();
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let escape: &str =
            match c {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0x08 => "\\b",
                0x0c => "\\f",
                0..0x20 => "",
                // U+2028 and U+2029 are E2 80 A8 and E2 80 A9.
                0xE2 if b.get(i + 1) == Some(&0x80) && matches!(b.get(i + 2), Some(0xA8 | 0xA9)) => {
                    if b[i + 2] == 0xA8 { "\\u2028" } else { "\\u2029" }
                }
                _ => {
                    i += 1;
                    continue;
                }
            };
        out.push_str(s.get(copied..i).unwrap_or(""));
        if escape.is_empty() {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(c >> 4)]));
            out.push(char::from(HEX[usize::from(c & 15)]));
            i += 1;
        } else if escape.starts_with("\\u2") {
            out.push_str(escape);
            i += 3;
        } else {
            out.push_str(escape);
            i += 1;
        }
        copied = i;
    }
    out.push_str(s.get(copied..).unwrap_or(""));
    out.push('"');
}

/// serde_json writes U+2028/U+2029 as themselves; a JSON Lines reader that splits on
/// Unicode line breaks would cut the line there.
fn escape_line_separators(json: String) -> String {
    if json.contains(['\u{2028}', '\u{2029}']) {
        json.replace('\u{2028}', "\\u2028").replace('\u{2029}', "\\u2029")
    } else {
        json
    }
}

/// Stdout, buffered. Answers are flushed one by one when stdout is not a regular file (a
/// pipe, a terminal, a co-process's reader), so a reader never waits on a full buffer.
pub(crate) struct Stdout {
    w: io::BufWriter<io::StdoutLock<'static>>,
    to_file: bool,
}

impl std::fmt::Debug for Stdout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stdout").field("to_file", &self.to_file).finish_non_exhaustive()
    }
}

impl Stdout {
    pub(crate) fn new() -> Self {
        Stdout { w: io::BufWriter::with_capacity(64 * 1024, io::stdout().lock()), to_file: stdout_is_file() }
    }

    /// Write `line` and a newline.
    pub(crate) fn line(&mut self, line: &str) -> io::Result<()> {
        self.w.write_all(line.as_bytes())?;
        self.w.write_all(b"\n")
    }

    /// Write `text`, with a newline unless it ends with one.
    pub(crate) fn text(&mut self, text: &str) -> io::Result<()> {
        self.w.write_all(text.as_bytes())?;
        if !text.ends_with('\n') {
            self.w.write_all(b"\n")?;
        }
        Ok(())
    }

    /// The end of an answer. Not a regular file: flush, unless `more` says the next line
    /// is already at hand (asked only then) (so a co-process, which sends one line and waits, gets each
    /// answer at once). A regular file: only the buffer's size decides.
    pub(crate) fn answered(&mut self, more: impl FnOnce() -> bool) -> io::Result<()> {
        if !self.to_file && !more() {
            self.w.flush()?;
        }
        Ok(())
    }

    /// Flush what is left.
    pub(crate) fn finish(mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// Write `line` and a newline to stdout, as an error (not a panic, as `println!` would)
/// when stdout is closed.
pub(crate) fn print_line(line: &str) -> io::Result<()> {
    let mut stdout = Stdout::new();
    stdout.line(line)?;
    stdout.finish()
}

#[cfg(unix)]
fn stdout_is_file() -> bool {
    use std::os::fd::AsFd as _;
    io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .and_then(|fd| std::fs::File::from(fd).metadata().ok())
        .is_some_and(|m| m.is_file())
}

#[cfg(not(unix))]
fn stdout_is_file() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_usize_writes_what_display_writes() {
        for n in (0..=2000).chain([9_999, 10_000, 123_456_789, usize::MAX]) {
            let mut out = String::from("x");
            push_usize(&mut out, n);
            assert_eq!(out, format!("x{n}"));
        }
    }

    #[test]
    fn push_quoted_agrees_with_serde_and_escapes_line_separators() {
        for s in [
            "",
            "plain",
            "a\"b\\c",
            "tab\tnl\nret\r",
            "\u{1}\u{8}\u{c}\u{1f}\u{7f}",
            "é👩‍💻",
            "x\u{2028}y\u{2029}z\u{2027}",
        ] {
            let mut out = String::new();
            push_quoted(&mut out, s);
            assert_eq!(serde_json::from_str::<String>(&out).unwrap(), s);
            assert!(!out.contains(['\u{2028}', '\u{2029}']), "{out}");
            if !s.contains(['\u{2028}', '\u{2029}']) {
                assert_eq!(out, serde_json::to_string(s).unwrap());
            }
        }
    }

    #[test]
    fn raw_members_are_compacted() {
        for (json, compacted) in [
            ("{}", "{}"),
            ("{ \"a\" : [1, 2.0],\n \"b c\": \"x y\" }", r#"{"a":[1,2.0],"b c":"x y"}"#),
            ("[\"q\\\" \\\\\", 1 ]", r#"["q\" \\",1]"#),
            (" 1 ", "1"),
            ("\"open", "\"open"),
        ] {
            let mut out = String::new();
            Obj::new(&mut out).raw("v", json);
            assert_eq!(out, format!("{{\"v\":{compacted}"), "{json}");
        }
    }

    #[test]
    fn string_stop_finds_what_a_byte_loop_finds() {
        let naive = |b: &[u8], i: usize, controls: bool| {
            i + b[i..].iter().position(|&c| c == b'"' || c == b'\\' || (controls && c < 0x20)).unwrap_or(b.len() - i)
        };
        let texts: [&[u8]; 8] = [
            b"",
            b"plain text with no stop at all, longer than a word",
            b"a\"b",
            b"0123456789abcdef\\x",
            "é👩‍💻 \u{7f}\u{80}\u{ff} tail\"".as_bytes(),
            b"\x1f\x00 control first",
            b"almost!\x21\x23\x5b\x5d\x1fend",
            b"\"\"\"\\\\\"",
        ];
        for b in texts {
            for i in 0..=b.len() {
                for controls in [false, true] {
                    assert_eq!(
                        string_stop(b, i, controls),
                        naive(b, i, controls),
                        "{:?} at {i}",
                        String::from_utf8_lossy(b)
                    );
                }
            }
        }
    }

    #[test]
    fn json_str_unescapes_as_serde_does() {
        let mut scratch = String::new();
        for raw in [r#""""#, r#""plain""#, r#""a\"b\\c\/d\b\f\n\r\t""#, r#""\u00e9\u0041""#] {
            let ours = json_str(raw, &mut scratch).map(str::to_owned);
            assert_eq!(ours, Some(serde_json::from_str::<String>(raw).unwrap()), "{raw}");
        }
        assert_eq!(json_str("12", &mut scratch), None);
        assert_eq!(json_str(r#""\ud83d\ude00""#, &mut scratch), None);
    }
}
