//! "Did you mean …": the registered names closest to a name that matched none, for tool
//! names, schema keywords and type names alike.
//!
//! Two names are close when, compared without case and separators, one is an edit or two
//! away from the other (insertions, deletions, substitutions, swaps of neighbours; at most
//! one edit for every four characters), or one contains the other. Bounded: names longer
//! than [`MAX_LEN`] characters get no suggestion.

use super::view::normalise;

/// The longest name compared, in characters (longer ones are no typo).
const MAX_LEN: usize = 64;
/// The most candidates compared: past them, no more are looked at (each comparison costs
/// at most `MAX_LEN`² steps, so a search is bounded).
const MAX_CANDIDATES: usize = 4096;
/// The most suggestions returned.
pub(crate) const MAX_SUGGESTIONS: usize = 3;

/// The names among `candidates` closest to `name`, best first, at most
/// [`MAX_SUGGESTIONS`]. An exact match is not a suggestion.
pub(crate) fn closest<'c, I>(name: &str, candidates: I) -> Vec<&'c str>
where
    I: IntoIterator<Item = &'c str>,
{
    let wanted: Vec<char> = normalise(name).chars().collect();
    if wanted.is_empty() || wanted.len() > MAX_LEN {
        return Vec::new();
    }
    let mut scored: Vec<(usize, &'c str)> = Vec::new();
    for candidate in candidates.into_iter().take(MAX_CANDIDATES) {
        if candidate == name {
            continue;
        }
        let have: Vec<char> = normalise(candidate).chars().collect();
        if have.is_empty() || have.len() > MAX_LEN {
            continue;
        }
        if let Some(score) = score(&wanted, &have)
            && !scored.iter().any(|(_, c)| *c == candidate)
        {
            scored.push((score, candidate));
        }
    }
    scored.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().take(MAX_SUGGESTIONS).map(|(_, c)| c).collect()
}

/// How far apart two normalised names are, when they are close at all (lower is closer).
fn score(wanted: &[char], have: &[char]) -> Option<usize> {
    let longest = wanted.len().max(have.len());
    // One edit per four characters; names of one or two characters must match exactly.
    let budget = if longest < 3 { 0 } else { (longest / 4).max(1) };
    if let Some(d) = distance(wanted, have, budget) {
        return Some(d);
    }
    // One contains the other (`weather` in `get_weather`), when the shorter is not tiny.
    let (short, long) = if wanted.len() <= have.len() { (wanted, have) } else { (have, wanted) };
    if short.len() >= 4 && long.windows(short.len()).any(|w| w == short) {
        return Some(budget + 1 + long.len() - short.len());
    }
    None
}

/// The optimal-string-alignment distance between `a` and `b` (Levenshtein plus swaps of
/// neighbours), or `None` when it is over `budget`.
pub(crate) fn distance(a: &[char], b: &[char], budget: usize) -> Option<usize> {
    const FAR: usize = usize::MAX / 4;
    if a.len().abs_diff(b.len()) > budget {
        return None;
    }
    let at = |row: &[usize], j: usize| row.get(j).copied().unwrap_or(FAR);
    // Rows i - 2, i - 1 and i of the table; `row[j]` is the distance of a[..i] to b[..j].
    let mut before: Vec<usize> = Vec::with_capacity(b.len() + 1);
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut row: Vec<usize> = Vec::with_capacity(b.len() + 1);
    for (i, &ca) in a.iter().enumerate() {
        row.clear();
        row.push(i + 1);
        let mut best = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            let mut d = (at(&prev, j) + cost).min(at(&prev, j + 1) + 1).min(at(&row, j) + 1);
            if i > 0 && j > 0 && a.get(i - 1) == Some(&cb) && b.get(j - 1) == Some(&ca) {
                d = d.min(at(&before, j - 1) + 1);
            }
            row.push(d);
            best = best.min(d);
        }
        if best > budget {
            return None;
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut row);
    }
    let d = at(&prev, b.len());
    (d <= budget).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_their_name() {
        let names = ["get_weather", "read_file", "write_file", "search"];
        assert_eq!(closest("get_wether", names), ["get_weather"]);
        assert_eq!(closest("GetWaether", names), ["get_weather"]);
        assert_eq!(closest("weather", names), ["get_weather"]);
        assert_eq!(closest("red_file", names), ["read_file"]);
        assert_eq!(closest("serch", names), ["search"]);
        assert!(closest("delete_everything", names).is_empty());
        assert!(closest("", names).is_empty());
        assert!(closest("search", names).is_empty());
        assert!(closest("y", ["x", "ab"]).is_empty(), "short names need an exact match");
        assert_eq!(closest("Y", ["x", "y"]), ["y"]);
    }

    #[test]
    fn keywords_and_types() {
        let types = ["string", "integer", "number", "boolean", "array", "object", "null"];
        assert_eq!(closest("strng", types), ["string"]);
        assert_eq!(closest("interger", types), ["integer"]);
        assert_eq!(closest("bool", types), ["boolean"]);
        assert!(closest("float", types).is_empty());
        assert_eq!(closest("requried", ["required", "properties"]), ["required"]);
    }

    #[test]
    fn ranked_and_capped() {
        let names = ["file_a", "file_b", "file_c", "file_d", "file_"];
        let got = closest("file", names);
        assert_eq!(got.len(), MAX_SUGGESTIONS);
        assert_eq!(got[0], "file_");
    }

    #[test]
    fn long_names_are_bounded() {
        let long = "x".repeat(10_000);
        assert!(closest(&long, ["x"]).is_empty());
    }
}
