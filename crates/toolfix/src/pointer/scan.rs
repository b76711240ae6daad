//! Byte scans over JSON text shared by the readers: the one-pass reader here
//! ([`parse`](super::parse)) and salvage's strict and lenient passes (salvage uses
//! `pointer`, never the reverse, so the one copy lives at the lower of the two).

/// The bytes that end the plain text of a strict JSON string: `"`, `\\` and the control
/// characters (which strict JSON refuses unescaped); also the bytes a JSON string must
/// escape.
pub(crate) static STRING_STOP: [bool; 256] = controls_and(b"\"\\");

/// A byte table marking the control characters (below `0x20`) and the bytes of `extra`.
pub(crate) const fn controls_and(extra: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 0x20 {
        t[c] = true;
        c += 1;
    }
    let mut k = 0;
    while k < extra.len() {
        t[extra[k] as usize] = true;
        k += 1;
    }
    t
}

/// A byte in every lane of a word, and the top bit of every lane.
const LANES: u64 = 0x0101_0101_0101_0101;
const TOPS: u64 = LANES << 7;

/// The lanes of `x` that equal `c` (top bit set), exact for the lowest one.
#[inline]
pub(crate) fn lanes_equal(x: u64, c: u8) -> u64 {
    let t = x ^ (LANES * u64::from(c));
    t.wrapping_sub(LANES) & !t & TOPS
}

/// The lanes of `x` below `0x20` (a control character; top bit set), exact for the lowest
/// one.
#[inline]
pub(crate) fn lanes_control(x: u64) -> u64 {
    x.wrapping_sub(LANES * 0x20) & !x & TOPS
}

/// The first index at or after `i` whose byte `stops` flags (the top bit of its lane, no
/// other bit set; eight bytes at a time, read little-endian; only the lowest lane flagged
/// need be exact), or `b.len()` (or `i`, when
/// past the end).
#[inline]
pub(crate) fn next_lane(b: &[u8], mut i: usize, stops: impl Fn(u64) -> u64) -> usize {
    while let Some(chunk) = b.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let m = stops(u64::from_le_bytes(word));
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        let mut word = [0u8; 8];
        word[0] = c;
        if stops(u64::from_le_bytes(word)) & 0x80 != 0 {
            return i;
        }
        i += 1;
    }
    i
}

/// [`next_lane`] over whole words only: the first index flagged, or the first of the last
/// bytes too few for a word (for a caller that reads those itself).
#[inline]
pub(crate) fn next_lane_in_words(b: &[u8], mut i: usize, stops: impl Fn(u64) -> u64) -> usize {
    while let Some(chunk) = b.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let m = stops(u64::from_le_bytes(word));
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i
}

/// Where `rest` first holds a byte that `table` marks: the loop of a scan over plain text,
/// four bytes a turn (half the loop's own work per byte of a one-at-a-time `position`).
#[inline]
pub(crate) fn first_in(rest: &[u8], table: &[bool; 256]) -> Option<usize> {
    let hit = |c: u8| table[usize::from(c)];
    let mut k = 0;
    while let Some(&[c0, c1, c2, c3]) = rest.get(k..k + 4).and_then(|w| <&[u8; 4]>::try_from(w).ok()) {
        if hit(c0) {
            return Some(k);
        }
        if hit(c1) {
            return Some(k + 1);
        }
        if hit(c2) {
            return Some(k + 2);
        }
        if hit(c3) {
            return Some(k + 3);
        }
        k += 4;
    }
    rest.get(k..).and_then(|tail| tail.iter().position(|&c| hit(c))).map(|p| k + p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A word-at-a-time scan for string stops finds what a byte loop over the table finds.
        #[test]
        fn lanes_find_the_first_string_stop(text in proptest::collection::vec(any::<u8>(), 0..40), from in 0usize..44) {
            let found = next_lane(&text, from, |x| lanes_control(x) | lanes_equal(x, b'"') | lanes_equal(x, b'\\'));
            let expected = if from >= text.len() {
                from
            } else {
                text[from..].iter().position(|&c| STRING_STOP[usize::from(c)]).map_or(text.len(), |p| from + p)
            };
            prop_assert_eq!(found, expected);
            let rest = text.get(from..).unwrap_or_default();
            prop_assert_eq!(first_in(rest, &STRING_STOP), rest.iter().position(|&c| STRING_STOP[usize::from(c)]));
        }
    }
}
