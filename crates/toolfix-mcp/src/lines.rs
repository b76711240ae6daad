//! Newline framing with a cap: a line within the cap comes whole; a longer one comes in
//! pieces that are passed through as they arrive, so memory stays bounded.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// What the reader yields.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    /// A whole line, newline included when there was one (the last line of a stream may
    /// have none).
    Line(Vec<u8>),
    /// A piece of a line over the cap, to pass through as is.
    Part(Vec<u8>),
    /// End of stream.
    Eof,
}

/// A capped line reader.
#[derive(Debug)]
pub(crate) struct Frames<R> {
    inner: R,
    max: usize,
    buf: Vec<u8>,
    oversize: bool,
}

impl<R: AsyncBufRead + Unpin> Frames<R> {
    pub(crate) fn new(inner: R, max: usize) -> Self {
        Frames { inner, max, buf: Vec::new(), oversize: false }
    }

    /// The next frame.
    pub(crate) async fn next(&mut self) -> std::io::Result<Frame> {
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                self.oversize = false;
                if self.buf.is_empty() {
                    return Ok(Frame::Eof);
                }
                return Ok(Frame::Line(std::mem::take(&mut self.buf)));
            }
            let (end, complete) = match memchr::memchr(b'\n', available) {
                Some(i) => (i + 1, true),
                None => (available.len(), false),
            };
            let chunk = available.get(..end).unwrap_or(available);
            if self.oversize {
                let part = chunk.to_vec();
                self.inner.consume(end);
                self.oversize = !complete;
                return Ok(Frame::Part(part));
            }
            // The newline does not count against the cap.
            let content = self.buf.len() + end - usize::from(complete);
            if content > self.max {
                let mut part = std::mem::take(&mut self.buf);
                part.extend_from_slice(chunk);
                self.inner.consume(end);
                self.oversize = !complete;
                return Ok(Frame::Part(part));
            }
            self.buf.extend_from_slice(chunk);
            self.inner.consume(end);
            if complete {
                return Ok(Frame::Line(std::mem::take(&mut self.buf)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn all(input: &[u8], max: usize, capacity: usize) -> Vec<Frame> {
        let mut frames = Frames::new(tokio::io::BufReader::with_capacity(capacity, input), max);
        let mut out = Vec::new();
        loop {
            match frames.next().await.unwrap() {
                Frame::Eof => return out,
                f => out.push(f),
            }
        }
    }

    #[tokio::test]
    async fn lines_within_the_cap_come_whole_and_longer_ones_in_parts() {
        let input = b"ab\n0123456789\ncd";
        let frames = all(input, 4, 3).await;
        assert_eq!(frames.first(), Some(&Frame::Line(b"ab\n".to_vec())));
        assert_eq!(frames.last(), Some(&Frame::Line(b"cd".to_vec())));
        let parts: Vec<u8> = frames
            .iter()
            .filter_map(|f| match f {
                Frame::Part(p) => Some(p.clone()),
                _ => None,
            })
            .flatten()
            .collect();
        assert_eq!(parts, b"0123456789\n");
        // Exactly at the cap is a line.
        assert_eq!(all(b"abcd\n", 4, 2).await, vec![Frame::Line(b"abcd\n".to_vec())]);
    }
}
