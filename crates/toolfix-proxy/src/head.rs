//! HTTP/1.1 heads of the common shape, read without `httparse`: decide or defer.
//!
//! Nearly every head the proxy reads (a client's request at the front, an upstream's
//! answer) has one plain shape: `POST SP target SP HTTP/1.1 CRLF` or `HTTP/1.1 SP 3DIGIT SP
//! reason CRLF`, then `name: value CRLF` lines with token names and values of visible
//! ASCII, spaces, tabs and obs-text, then an empty line. `request` and `response` read
//! that shape, a word at a time where they can (~4 times fewer instructions than
//! `httparse`, whose per-line calls to its run-time chosen vector code cost more than a
//! short line's bytes). Whenever anything is not the plain shape (a bare LF, obs-fold, a
//! space before a colon, a byte `httparse` refuses or one it reads in a special way, a
//! head not whole yet, more lines than the caller has room for), they return `None` and
//! the caller parses the head with `httparse` as before. So every head they decide is one
//! `httparse` reads the same way (same length, same lines, same request or status line);
//! the property tests below and the fuzz target `head` compare the two.
//!
//! Both read each byte of the buffer at most once and never index out of range; a partial
//! head is deferred after at most one pass over it (the caller's `httparse` parse makes
//! the second).
//!
//! Not part of the proxy's API: public only for the fuzz target (`compare`, with the
//! feature `fuzzing`); nothing else in it is reachable outside the crate.
#![doc(hidden)]

use std::ops::Range;

/// A piece of a head, as offsets into the buffer it was read from.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) start: u32,
    pub(crate) end: u32,
}

impl Span {
    fn new(start: usize, end: usize) -> Span {
        // Heads are read only from buffers shorter than `u32::MAX` (see `fits`).
        Span { start: start as u32, end: end as u32 }
    }

    pub(crate) fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }

    /// Where `piece`, a slice of `buf` (a name, value or target `httparse` read from it),
    /// lies in `buf`.
    pub(crate) fn within(buf: &[u8], piece: &[u8]) -> Span {
        let start = (piece.as_ptr() as usize).wrapping_sub(buf.as_ptr() as usize);
        Span::new(start, start + piece.len())
    }
}

/// A header line: its name and its value (leading and trailing blanks left out).
pub(crate) type Field = (Span, Span);

/// A request head of the common shape (the method `POST`, the version HTTP/1.1).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Request {
    /// Bytes of the head, up to and including its empty line.
    pub(crate) len: usize,
    /// The request target.
    pub(crate) target: Span,
    /// How many header lines (their spans are the first of the fields given).
    pub(crate) count: usize,
}

/// An answer head of the common shape (the version HTTP/1.1).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Response {
    /// Bytes of the head, up to and including its empty line.
    pub(crate) len: usize,
    /// The three-digit status code, as written (any value from 000 to 999).
    pub(crate) code: u16,
    /// The reason phrase.
    pub(crate) reason: Span,
    /// How many header lines (their spans are the first of the fields given).
    pub(crate) count: usize,
}

/// Read a `POST` request head of the common shape at the start of `buf`, its header lines
/// into `fields`; `None` to leave the head to `httparse` (anything else, or not whole yet).
pub(crate) fn request(buf: &[u8], fields: &mut [Field]) -> Option<Request> {
    if !fits(buf) {
        return None;
    }
    if !buf.starts_with(b"POST ") {
        return None;
    }
    // The target: visible ASCII (bytes from 0x80 up `httparse` checks as UTF-8: deferred).
    let end = first_special(buf, 5, Blanks::Stop, High::Stop)?;
    if end == 5 || buf.get(end..end + 11)? != b" HTTP/1.1\r\n" {
        return None;
    }
    let (len, count) = lines(buf, end + 11, fields)?;
    Some(Request { len, target: Span::new(5, end), count })
}

/// Read an HTTP/1.1 answer head of the common shape at the start of `buf`, its header
/// lines into `fields`; `None` to leave the head to `httparse`.
pub(crate) fn response(buf: &[u8], fields: &mut [Field]) -> Option<Response> {
    if !fits(buf) {
        return None;
    }
    let Some(&[b'H', b'T', b'T', b'P', b'/', b'1', b'.', b'1', b' ', a, b, c, b' ']) = buf.get(..13) else {
        return None;
    };
    if ![a, b, c].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let code = [a, b, c].iter().fold(0u16, |n, &d| n * 10 + u16::from(d - b'0'));
    // The reason: spaces, tabs and visible ASCII (obs-text makes `httparse` give an
    // empty reason: deferred), then CRLF.
    let end = first_special(buf, 13, Blanks::Pass, High::Stop)?;
    if buf.get(end..end + 2)? != b"\r\n" {
        return None;
    }
    let (len, count) = lines(buf, end + 2, fields)?;
    Some(Response { len, code, reason: Span::new(13, end), count })
}

/// Whether the buffer's offsets fit a [`Span`].
fn fits(buf: &[u8]) -> bool {
    u32::try_from(buf.len()).is_ok()
}

/// The header lines from `at` to the empty line that ends the head: the head's length
/// and the number of lines, each in `fields`.
fn lines(buf: &[u8], mut at: usize, fields: &mut [Field]) -> Option<(usize, usize)> {
    let mut count = 0;
    loop {
        if buf.get(at..at + 2)? == b"\r\n" {
            return Some((at + 2, count));
        }
        // A token, then a colon at once (`httparse` refuses a blank before it).
        let colon = name_end(buf, at)?;
        if colon == at || buf.get(colon) != Some(&b':') {
            return None;
        }
        let (value, next) = value(buf, colon + 1)?;
        *fields.get_mut(count)? = (Span::new(at, colon), value);
        count += 1;
        at = next;
    }
}

/// Where the header name starting at `at` ends (the first byte that is no `tchar`):
/// letters and dashes eight at a time, the rest of a name with another `tchar` byte by byte.
#[inline]
fn name_end(buf: &[u8], at: usize) -> Option<usize> {
    let mut i = at;
    while let Some(x) = word_at(buf, i) {
        let odd = not_plain_name(x);
        if odd != 0 {
            i += (odd.trailing_zeros() / 8) as usize;
            break;
        }
        i += 8;
    }
    // The usual end: the colon right where the plain bytes stop.
    if buf.get(i) == Some(&b':') {
        return Some(i);
    }
    Some(i + buf.get(i..)?.iter().position(|&b| !is_token(b))?)
}

/// The high bit of each byte of the word that is not an ASCII letter or dash (what names
/// are made of; a digit or another `tchar` is read byte by byte). With every byte below
/// 0x80, no sum carries out of its byte, so each byte's test is exact; a byte from 0x80
/// up is flagged itself and can only disturb the bytes above it.
#[inline]
fn not_plain_name(x: u64) -> u64 {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    // `b + (0x80 - lo)` has its high bit set when `b >= lo`; `b + (0x7f - hi)` when `b > hi`.
    let lower = x | (ONES * 0x20);
    let letter = lower.wrapping_add(ONES * (0x80 - 0x61)) & !lower.wrapping_add(ONES * (0x7f - 0x7a));
    let dash = !(x ^ (ONES * 0x2d)).wrapping_add(ONES * 0x7f);
    !(letter | dash) & HIGHS | x & HIGHS
}

/// A header value starting at `at` (just after the colon): its span without the blanks
/// around it, and where the next line starts. An empty value lies where its CRLF starts,
/// as `httparse` places it.
#[inline]
fn value(buf: &[u8], at: usize) -> Option<(Span, usize)> {
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    // Usually one space, then the value.
    let start = match buf.get(at..at + 2)? {
        [b' ', b] if !blank(b) => at + 1,
        _ => at + buf.get(at..)?.iter().position(|b| !blank(b))?,
    };
    let cr = first_special(buf, start, Blanks::Pass, High::Pass)?;
    if buf.get(cr..cr + 2)? != b"\r\n" {
        return None;
    }
    let value = buf.get(start..cr)?;
    // Usually no blank before the CRLF.
    let kept = match value.last() {
        Some(b) if blank(b) => value.iter().rposition(|b| !blank(b)).map_or(0, |i| i + 1),
        _ => value.len(),
    };
    Some((Span::new(start, start + kept), cr + 2))
}

/// Whether tabs and spaces are part of what [`first_special`] scans.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Blanks {
    Pass,
    Stop,
}

/// Whether bytes from 0x80 up are part of what [`first_special`] scans.
#[derive(Clone, Copy, PartialEq, Eq)]
enum High {
    Pass,
    Stop,
}

/// The offset of the first byte of `buf` from `at` on that is a control (below 0x20, or
/// DEL), a tab or space when `blanks` stops there, or from 0x80 up when `high` stops
/// there. `None` when there is none (the head is not whole yet). Eight bytes at a time;
/// a tab where blanks pass (rare) is stepped over and the scan goes on after it.
#[expect(clippy::inline_always, reason = "inlined, its `blanks` and `high` are constants in each scan")]
#[inline(always)]
fn first_special(buf: &[u8], at: usize, blanks: Blanks, high: High) -> Option<usize> {
    let mut i = at;
    while let Some(x) = word_at(buf, i) {
        let found = flagged(x, blanks, high);
        if found == 0 {
            i += 8;
            continue;
        }
        let j = i + (found.trailing_zeros() / 8) as usize;
        if blanks == Blanks::Pass && buf.get(j) == Some(&b'\t') {
            i = j + 1;
            continue;
        }
        return Some(j);
    }
    let special = |b: u8| match b {
        b'\t' => blanks == Blanks::Stop,
        b' ' => blanks == Blanks::Stop,
        0..0x20 | 0x7f => true,
        0x80.. => high == High::Stop,
        _ => false,
    };
    Some(i + buf.get(i..)?.iter().position(|&b| special(b))?)
}

/// The eight bytes at `at`, the first the lowest.
#[expect(clippy::inline_always, reason = "a load, in every word loop")]
#[inline(always)]
fn word_at(buf: &[u8], at: usize) -> Option<u64> {
    let bytes: [u8; 8] = buf.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(bytes))
}

/// The high bit of each byte of the word that is a control, DEL, a blank when `blanks`
/// stops there (a tab counts as a control), or from 0x80 up when `high` stops there. The
/// sums are of the bytes' low seven bits, so none carries out of its byte: each byte's
/// test is exact.
#[inline(always)]
fn flagged(x: u64, blanks: Blanks, high: High) -> u64 {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let low = x & !HIGHS;
    // `b + (0x80 - lo)` has its high bit set when `b >= lo`; `b + 1` when `b` is 0x7f.
    let lo = if blanks == Blanks::Stop { 0x21 } else { 0x20 };
    let plain = low.wrapping_add(ONES * (0x80 - lo)) & !low.wrapping_add(ONES);
    let ok = if high == High::Stop { plain & !x } else { plain | x };
    !ok & HIGHS
}

/// Whether `name`, a header name read from a head (so `tchar` bytes only), is `known`
/// (lower-case letters and dashes) in any case. Setting bit 5 lower-cases a letter and
/// leaves a dash; the only other byte it makes a letter or dash of is a control (CR),
/// which no name holds: so this is `eq_ignore_ascii_case`, a word at a time.
pub(crate) fn is_named(name: &[u8], known: &[u8]) -> bool {
    name.len() == known.len() && equal_words(name, known, 0x20)
}

/// Whether two byte strings are equal, a word at a time.
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && equal_words(a, b, 0)
}

/// Whether `a` with `fold` set in each byte is `b` (of the same length): in words of
/// eight bytes (the last one overlapping), or four, or byte by byte below four.
#[inline]
fn equal_words(a: &[u8], b: &[u8], fold: u8) -> bool {
    let n = a.len();
    if n >= 8 {
        let wide = u64::from_ne_bytes([fold; 8]);
        let mut i = 0;
        while i + 8 < n {
            if word_at(a, i).map(|w| w | wide) != word_at(b, i) {
                return false;
            }
            i += 8;
        }
        return word_at(a, n - 8).map(|w| w | wide) == word_at(b, n - 8);
    }
    if n >= 4 {
        let wide = u32::from_ne_bytes([fold; 4]);
        let half = |s: &[u8], at: usize| s.get(at..at + 4).and_then(|h| h.try_into().ok()).map(u32::from_ne_bytes);
        return half(a, 0).map(|w| w | wide) == half(b, 0) && half(a, n - 4).map(|w| w | wide) == half(b, n - 4);
    }
    a.iter().zip(b).all(|(&x, &y)| x | fold == y)
}

/// A header name's byte (RFC 9110's `tchar`, as `httparse` reads it).
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-' | b'.' | b'^' | b'_' | b'`' | b'|' | b'~'
        )
}

/// Read `buf` both ways, as a request and as an answer head, with room for `room` lines:
/// wherever [`request`] or [`response`] decides, `httparse` (with as many header slots)
/// must read the same head. For the fuzz target `head` and the property tests.
///
/// # Panics
///
/// When a decision differs from `httparse`'s: that is what the fuzzer looks for.
#[cfg(any(test, feature = "fuzzing"))]
pub fn compare(buf: &[u8], room: usize) {
    let mut fields = vec![Field::default(); room];
    let mut theirs = vec![httparse::EMPTY_HEADER; room];
    let base = buf.as_ptr() as usize;
    let at = |s: &[u8]| {
        let start = s.as_ptr() as usize - base;
        Span::new(start, start + s.len())
    };
    if let Some(mine) = request(buf, &mut fields) {
        let mut parsed = httparse::Request::new(&mut theirs);
        assert_eq!(parsed.parse(buf), Ok(httparse::Status::Complete(mine.len)), "{buf:?}");
        assert_eq!((parsed.method, parsed.version), (Some("POST"), Some(1)));
        assert_eq!(parsed.path.map(|p| at(p.as_bytes())), Some(mine.target));
        let lines: Vec<Field> = parsed.headers.iter().map(|h| (at(h.name.as_bytes()), at(h.value))).collect();
        assert_eq!(lines.as_slice(), fields.get(..mine.count).unwrap_or_default(), "{buf:?}");
    }
    if let Some(mine) = response(buf, &mut fields) {
        let mut parsed = httparse::Response::new(&mut theirs);
        assert_eq!(parsed.parse(buf), Ok(httparse::Status::Complete(mine.len)), "{buf:?}");
        assert_eq!((parsed.version, parsed.code), (Some(1), Some(mine.code)));
        assert_eq!(parsed.reason.map(|r| at(r.as_bytes())), Some(mine.reason));
        let lines: Vec<Field> = parsed.headers.iter().map(|h| (at(h.name.as_bytes()), at(h.value))).collect();
        assert_eq!(lines.as_slice(), fields.get(..mine.count).unwrap_or_default(), "{buf:?}");
    }
}

#[cfg(test)]
mod tests {
    use super::{Blanks, Field, High, compare, first_special, is_named, is_token, name_end, request, response, same};
    use proptest::prelude::*;

    /// The heads the proxy usually reads are decided here, not deferred.
    #[test]
    fn the_usual_heads_are_decided() {
        let mut fields = [Field::default(); 8];
        let ask = b"POST /v1/chat/completions HTTP/1.1\r\ncontent-type: application/json\r\naccept: */*\r\n\
            host: 127.0.0.1:8080\r\ncontent-length: 1234\r\n\r\n{\"model\"";
        let head = request(ask, &mut fields).unwrap();
        assert_eq!((head.len, head.count), (ask.len() - 8, 4));
        assert_eq!(&ask[head.target.range()], b"/v1/chat/completions");
        assert_eq!(&ask[fields[3].1.range()], b"1234");
        let answer = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 4170\r\n\
            date: Sat, 28 Nov 2026 01:18:56 GMT\r\nx-odd:\t a\tb \t\r\nempty:  \r\n\r\n";
        let head = response(answer, &mut fields).unwrap();
        assert_eq!((head.len, head.code, head.count), (answer.len(), 200, 5));
        assert_eq!(&answer[head.reason.range()], b"OK");
        assert_eq!(&answer[fields[3].1.range()], b"a\tb");
        assert_eq!(fields[4].1.start, fields[4].1.end);
        for cut in 0..answer.len() {
            assert!(response(&answer[..cut], &mut fields).is_none());
            compare(&answer[..cut], 8);
        }
        compare(ask, 8);
        compare(answer, 8);
    }

    #[test]
    fn odd_heads_are_deferred() {
        let mut fields = [Field::default(); 4];
        for odd in [
            &b"\r\nPOST / HTTP/1.1\r\n\r\n"[..],
            b"POST  / HTTP/1.1\r\n\r\n",
            b"POST / HTTP/1.0\r\n\r\n",
            b"POST /\xc3\xa9 HTTP/1.1\r\n\r\n",
            b"POST / HTTP/1.1\n\r\n",
            b"POST / HTTP/1.1\r\na: b\n\r\n",
            b"POST / HTTP/1.1\r\na : b\r\n\r\n",
            b"POST / HTTP/1.1\r\na: b\r\n c\r\n\r\n",
            b"POST / HTTP/1.1\r\na: b\x7f\r\n\r\n",
            b"POST / HTTP/1.1\r\na: b\r\n\n",
            b"POST / HTTP/1.1\r\na: 1\r\nb: 2\r\nc: 3\r\nd: 4\r\ne: 5\r\n\r\n",
        ] {
            assert!(request(odd, &mut fields).is_none(), "{odd:?}");
            compare(odd, 4);
        }
        for odd in [&b"HTTP/1.1 200\r\n\r\n"[..], b"HTTP/1.1 200 \xffK\r\n\r\n", b"HTTP/1.0 200 OK\r\n\r\n"] {
            assert!(response(odd, &mut fields).is_none(), "{odd:?}");
        }
    }

    /// The word-at-a-time scan finds what a byte-at-a-time one finds.
    #[test]
    fn the_scan_is_the_bytewise_scan() {
        let bytes: Vec<u8> = (0..=255u8).collect();
        for blanks in [Blanks::Pass, Blanks::Stop] {
            for high in [High::Pass, High::Stop] {
                let special = |b: u8| {
                    (b < 0x20 && !(b == b'\t' && blanks == Blanks::Pass))
                        || b == 0x7f
                        || (b == b' ' && blanks == Blanks::Stop)
                        || (b >= 0x80 && high == High::Stop)
                };
                for &x in &bytes {
                    for len in [1, 7, 8, 9, 17] {
                        let mut piece: Vec<u8> = b"abcdefghijklmnopqrstuvwxyz".to_vec();
                        let to = len.min(piece.len());
                        piece[to - 1] = x;
                        piece.insert(0, b'\t');
                        piece.insert(to / 2, b'\t');
                        let want = piece.iter().position(|&b| special(b));
                        assert_eq!(first_special(&piece, 0, blanks, high), want, "{piece:?}");
                    }
                }
            }
        }
    }

    /// The word-at-a-time name scan ends where a byte-at-a-time one does.
    #[test]
    fn the_name_scan_is_the_bytewise_scan() {
        for b in 0..=255u8 {
            for len in 0..20 {
                let mut piece: Vec<u8> = b"Content-Type-0123456789xyz".to_vec();
                piece[len] = b;
                piece.extend_from_slice(b": x");
                let want = piece.iter().position(|&c| !is_token(c));
                assert_eq!(name_end(&piece, 0), want, "{piece:?}");
                let from_one = piece[1..].iter().position(|&c| !is_token(c)).map(|w| w + 1);
                assert_eq!(name_end(&piece, 1), from_one, "{piece:?}");
            }
        }
    }

    /// The word-at-a-time comparisons are the byte-at-a-time ones (for names of `tchar`s).
    #[test]
    fn names_compare_as_bytes_do() {
        let known = [
            "te",
            "host",
            "date",
            "accept",
            "trailer",
            "connection",
            "keep-alive",
            "content-type",
            "authorization",
            "content-length",
            "accept-encoding",
            "transfer-encoding",
            "proxy-authorization",
        ];
        let tchars: Vec<u8> = (0..=255u8).filter(|&b| is_token(b)).collect();
        for k in known {
            let mut names = vec![k.to_owned(), k.to_uppercase(), format!("{k}s"), k[1..].to_owned()];
            for at in 0..k.len() {
                for &t in &tchars {
                    let mut v = k.as_bytes().to_vec();
                    v[at] = t;
                    names.push(String::from_utf8(v).unwrap());
                }
            }
            for name in &names {
                assert_eq!(is_named(name.as_bytes(), k.as_bytes()), name.eq_ignore_ascii_case(k), "{name} {k}");
                assert_eq!(same(name.as_bytes(), k.as_bytes()), name == k, "{name} {k}");
            }
            for b in 0..=255u8 {
                let mut v = k.as_bytes().to_vec();
                v[0] = b;
                assert_eq!(same(&v, k.as_bytes()), v == k.as_bytes());
            }
        }
    }

    /// A start line, plain or with one oddity.
    fn start() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            4 => Just(b"POST /v1/chat/completions HTTP/1.1\r\n".to_vec()),
            4 => Just(b"HTTP/1.1 200 OK\r\n".to_vec()),
            1 => "(POST|GET|HTTP/1\\.1|HTTP/1\\.0|\r\n|\n| |\t){1,3}".prop_map(String::into_bytes),
            2 => prop::collection::vec(
                prop_oneof![
                    Just(b"POST".to_vec()), Just(b"HTTP/1.1".to_vec()), Just(b"HTTP/1.0".to_vec()),
                    Just(b" ".to_vec()), Just(b"\t".to_vec()), Just(b"\r\n".to_vec()), Just(b"\n".to_vec()),
                    Just(b"\r".to_vec()), Just(b"/v1/x?a=b".to_vec()), Just(b"204".to_vec()), Just(b"99".to_vec()),
                    Just(b"OK".to_vec()), Just(b"\xc3\xa9".to_vec()), Just(b"\xff".to_vec()), Just(b"\x7f".to_vec()),
                    prop::collection::vec(any::<u8>(), 1..4),
                ],
                1..8,
            ).prop_map(|p| p.concat()),
        ]
    }

    /// A header line, plain or with oddities (blanks, controls, obs-text, folds, bare LF).
    fn line() -> impl Strategy<Value = Vec<u8>> {
        let name = prop_oneof![
            16 => "[a-zA-Z0-9!#$%&'*+.^_`|~-]{1,20}".prop_map(String::into_bytes),
            1 => prop::collection::vec(any::<u8>(), 0..6),
            1 => "[a-z]{0,5}[ \t(\"/:;@\\[\\]{}][a-z]{0,5}".prop_map(String::into_bytes),
        ];
        let blanks = "[ \t]{0,3}".prop_map(String::into_bytes);
        let value = prop_oneof![
            16 => "[ -~]{0,40}".prop_map(String::into_bytes),
            4 => prop::collection::vec(prop_oneof![4 => 0x20u8..0x7f, 1 => Just(b'\t'), 1 => 0x80u8..=0xff], 0..40),
            1 => prop::collection::vec(any::<u8>(), 0..20),
        ];
        let end = prop_oneof![40 => Just(&b"\r\n"[..]), 1 => Just(&b"\n"[..]), 1 => Just(&b"\r"[..]), 1 => Just(&b"\r\n "[..]), 1 => Just(&b"\r\n\t"[..])];
        (
            name,
            prop_oneof![40 => Just(&b":"[..]), 1 => Just(&b" :"[..]), 1 => Just(&b""[..])],
            blanks.clone(),
            value,
            blanks,
            end,
        )
            .prop_map(|(n, c, b1, v, b2, e)| [n, c.to_vec(), b1, v, b2, e.to_vec()].concat())
    }

    fn head() -> impl Strategy<Value = Vec<u8>> {
        let end = prop_oneof![16 => Just(&b"\r\n"[..]), 1 => Just(&b"\n"[..]), 1 => Just(&b""[..])];
        (start(), prop::collection::vec(line(), 0..10), end, prop::collection::vec(any::<u8>(), 0..12))
            .prop_map(|(s, lines, e, tail)| [s, lines.concat(), e.to_vec(), tail].concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5000))]

        /// Heads valid, near-valid and broken, cut at every byte: wherever the fast
        /// read decides, `httparse` reads the same.
        #[test]
        fn decided_heads_are_httparse_heads(head in head(), room in 0usize..12) {
            for cut in 0..=head.len() {
                compare(&head[..cut], room);
            }
        }

        /// The plain shape itself is always decided (given the room).
        #[test]
        fn plain_heads_are_decided(
            names in prop::collection::vec("[a-zA-Z0-9-]{1,16}", 0..8),
            values in prop::collection::vec("[ -~]{0,30}", 8),
            code in 100u16..1000,
        ) {
            let mut ask = b"POST /v1/messages HTTP/1.1\r\n".to_vec();
            let mut answer = format!("HTTP/1.1 {code} Fine Thanks\r\n").into_bytes();
            for (name, value) in names.iter().zip(&values) {
                let line = format!("{name}: {value}\r\n");
                ask.extend_from_slice(line.as_bytes());
                answer.extend_from_slice(line.as_bytes());
            }
            ask.extend_from_slice(b"\r\n");
            answer.extend_from_slice(b"\r\n");
            let mut fields = [Field::default(); 8];
            prop_assert!(request(&ask, &mut fields).is_some_and(|h| h.len == ask.len() && h.count == names.len()));
            prop_assert!(response(&answer, &mut fields).is_some_and(|h| h.len == answer.len() && h.code == code));
            compare(&ask, 8);
            compare(&answer, 8);
        }
    }
}
