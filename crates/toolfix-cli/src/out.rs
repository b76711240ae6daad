//! Writing the CLI's output: JSON objects built member by member into a reused buffer
//! (raw JSON text embedded as written, so numbers and key order survive), and stdout
//! itself, buffered, flushed per answer when a reader may be waiting on it.

use std::io::{self, Write};

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

    /// Start member `key`; its value comes next.
    pub(crate) fn key(&mut self, key: &str) -> &mut String {
        if !self.empty {
            self.text.push(',');
        }
        self.empty = false;
        push_quoted(self.text, key);
        self.text.push(':');
        self.text
    }

    /// A member whose value is strict JSON text (compacted onto one line here).
    pub(crate) fn raw(&mut self, key: &str, json: &str) -> &mut Self {
        let text = self.key(key);
        push_compact(text, json);
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

/// `json` without layout whitespace, appended to `out`.
pub(crate) fn push_compact(out: &mut String, json: &str) {
    if json.bytes().any(|b| matches!(b, b' ' | b'\n' | b'\r' | b'\t')) {
        out.push_str(&toolfix::salvage::compact(json));
    } else {
        out.push_str(json);
    }
}

/// `n` in decimal, appended to `out`.
pub(crate) fn push_usize(out: &mut String, n: usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[i..] {
        out.push(char::from(d));
    }
}

/// `s` as a JSON string literal, appended to `out`, with U+2028/U+2029 escaped so no line
/// splitter breaks the line.
pub(crate) fn push_quoted(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let mut copied = 0;
    for (i, c) in s.char_indices() {
        let escape: Option<&str> = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            '\u{2028}' => Some("\\u2028"),
            '\u{2029}' => Some("\\u2029"),
            c if (c as u32) < 0x20 => Some(""),
            _ => None,
        };
        if let Some(e) = escape {
            out.push_str(&s[copied..i]);
            if e.is_empty() {
                let b = c as u32 as usize;
                out.push_str("\\u00");
                out.push(char::from(HEX[b >> 4]));
                out.push(char::from(HEX[b & 15]));
            } else {
                out.push_str(e);
            }
            copied = i + c.len_utf8();
        }
    }
    out.push_str(&s[copied..]);
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
    /// is already at hand (so a co-process, which sends one line and waits, gets each
    /// answer at once). A regular file: only the buffer's size decides.
    pub(crate) fn answered(&mut self, more: bool) -> io::Result<()> {
        if !self.to_file && !more {
            self.w.flush()?;
        }
        Ok(())
    }

    /// Flush what is left.
    pub(crate) fn finish(mut self) -> io::Result<()> {
        self.w.flush()
    }
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
