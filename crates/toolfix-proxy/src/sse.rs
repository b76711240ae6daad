//! Server-sent events, read from bytes that arrive in any pieces: `data:` lines joined,
//! comments skipped, `\n`, `\r\n` and `\r` line ends, one event per blank line. Each event
//! keeps its raw bytes, so an event the proxy does not change goes out as it came.

use bytes::Bytes;

/// One event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Event {
    /// The `data` lines, joined by `\n`.
    pub(crate) data: String,
    /// The raw bytes of the event, its closing blank line included.
    pub(crate) raw: Bytes,
}

/// The event being read is longer than the cap.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooLong;

/// The push parser.
#[derive(Debug)]
pub(crate) struct Parser {
    buf: Vec<u8>,
    /// Where the next line starts.
    pos: usize,
    /// The `data` of the event being read (`None`: no data line yet).
    data: Option<String>,
    max: usize,
}

impl Parser {
    /// A parser that refuses events longer than `max` bytes.
    pub(crate) fn new(max: usize) -> Self {
        Parser { buf: Vec::new(), pos: 0, data: None, max }
    }

    /// Feed bytes; get every event they complete.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<Vec<Event>, TooLong> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        self.lines(false, &mut out);
        if self.buf.len() > self.max {
            return Err(TooLong);
        }
        Ok(out)
    }

    /// The input ended: the last event, when it lacked its blank line. Its raw bytes get
    /// the blank line it lacked: passed on as they came, they would be an event a client
    /// never dispatches (the format drops an unfinished event at the end of the stream),
    /// or one it joins to the next frame the proxy sends (its error event, say).
    pub(crate) fn finish(mut self) -> Option<Event> {
        let mut out = Vec::new();
        self.lines(true, &mut out);
        if self.buf.len() > self.pos {
            // A last line without its line end.
            self.buf.push(b'\n');
            self.lines(true, &mut out);
        }
        let data = self.data.take()?;
        // The buffer ends with a line end here; the blank line after it: after a lone
        // `\r`, a `\r\n` (a `\n` would join the `\r` as one line end).
        let end: &[u8] = if self.buf.ends_with(b"\n") { b"\n" } else { b"\r\n" };
        self.buf.extend_from_slice(end);
        Some(Event { data, raw: Bytes::from(std::mem::take(&mut self.buf)) })
    }

    fn lines(&mut self, at_end: bool, out: &mut Vec<Event>) {
        loop {
            let rest = self.buf.get(self.pos..).unwrap_or_default();
            let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') else { return };
            let line_end = self.pos + end;
            let next = match self.buf.get(line_end) {
                Some(b'\r') => match self.buf.get(line_end + 1) {
                    Some(b'\n') => line_end + 2,
                    Some(_) => line_end + 1,
                    // A `\r` last: a `\n` may follow in the next piece.
                    None if at_end => line_end + 1,
                    None => return,
                },
                _ => line_end + 1,
            };
            let line = self.buf.get(self.pos..line_end).unwrap_or_default();
            if line.is_empty() {
                if let Some(data) = self.data.take() {
                    let raw: Vec<u8> = self.buf.drain(..next).collect();
                    out.push(Event { data, raw: Bytes::from(raw) });
                    self.pos = 0;
                } else {
                    // A blank line with no event before it: dropped.
                    self.buf.drain(..next);
                    self.pos = 0;
                }
                continue;
            }
            self.field(line_end);
            self.pos = next;
        }
    }

    fn field(&mut self, line_end: usize) {
        let line = self.buf.get(self.pos..line_end).unwrap_or_default();
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => return, // a comment
            Some(i) => {
                let v = line.get(i + 1..).unwrap_or_default();
                (line.get(..i).unwrap_or_default(), v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &[][..]),
        };
        if name == b"data" {
            let text = String::from_utf8_lossy(value);
            match &mut self.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(&text);
                }
                None => self.data = Some(text.into_owned()),
            }
        }
    }
}

/// An event that carries `data`, ready to send.
pub(crate) fn frame(data: &str) -> Bytes {
    let mut out = Vec::with_capacity(data.len() + 8);
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(data.as_bytes());
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// An event with an `event:` name line and its `data`, ready to send.
pub(crate) fn named(event: &str, data: &str) -> Bytes {
    let mut out = Vec::with_capacity(event.len() + data.len() + 16);
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(event.as_bytes());
    out.extend_from_slice(b"\ndata: ");
    out.extend_from_slice(data.as_bytes());
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8], cut: usize) -> Vec<(String, Vec<u8>)> {
        let mut p = Parser::new(1 << 20);
        let (a, b) = input.split_at(cut);
        let mut events = p.push(a).unwrap();
        events.extend(p.push(b).unwrap());
        events.extend(p.finish());
        events.into_iter().map(|e| (e.data, e.raw.to_vec())).collect()
    }

    #[test]
    fn every_split_gives_the_same_events() {
        let input =
            b": ping\n\ndata: {\"a\":1}\n\nevent: x\r\ndata: two\r\ndata: lines\r\n\r\ndata:[DONE]\r\rdata: tail";
        let whole = all(input, 0);
        assert_eq!(
            whole.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(),
            ["{\"a\":1}", "two\nlines", "[DONE]", "tail"]
        );
        assert_eq!(whole[0].1, b"data: {\"a\":1}\n\n");
        for cut in 0..=input.len() {
            assert_eq!(all(input, cut), whole, "cut at {cut}");
        }
    }

    /// Regression (found by the fuzzing property tests): an event the stream ended before
    /// its blank line was given back without it, so passed on it merged with the proxy's
    /// next frame (`data: {chunk}\ndata: {error}`: no JSON) or was never dispatched.
    #[test]
    fn an_event_cut_before_its_blank_line_gets_it() {
        for (input, raw) in [
            (&b"data: {\"a\":1}"[..], &b"data: {\"a\":1}\n\n"[..]),
            (b"data: {\"a\":1}\n", b"data: {\"a\":1}\n\n"),
            (b"data: {\"a\":1}\r\n", b"data: {\"a\":1}\r\n\n"),
            (b"data: {\"a\":1}\r", b"data: {\"a\":1}\r\r\n"),
        ] {
            let mut p = Parser::new(1 << 20);
            assert!(p.push(input).unwrap().is_empty());
            let event = p.finish().expect("the event");
            assert_eq!(event.data, "{\"a\":1}");
            assert_eq!(event.raw.as_ref(), raw, "{input:?}");
            // Read again, the raw bytes are one whole event.
            let mut again = Parser::new(1 << 20);
            assert_eq!(again.push(raw).unwrap().len(), 1, "{raw:?}");
        }
    }

    #[test]
    fn an_endless_event_is_refused() {
        let mut p = Parser::new(16);
        assert_eq!(p.push(b"data: 0123456789abcdef"), Err(TooLong));
    }
}
