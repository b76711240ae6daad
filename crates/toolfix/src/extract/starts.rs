//! Where a marker can start: the prefilter in front of the marker automaton.
//!
//! Walking the Aho-Corasick automaton costs some 30 instructions per byte of prose, and
//! most replies are prose. [`Starts`] is built from the registry's markers (the same list
//! the automaton is built from) and finds every place one of them can begin without
//! walking the automaton: markers whose first byte is ASCII punctuation (`<`, `[`, `{`,
//! `` ` ``, `]`, `>`, ...) by that byte, with `memchr`; the few that begin with a letter, a
//! space or a non-ASCII character (` functools[`, `Action:`, `◁think▷`) whole, with a
//! small automaton of their own (vectorised, one pass for all). Where the CPU allows,
//! every one of those bytes (the first bytes and the bytes the words are looked for by)
//! is found in one vectorised pass (`aho-corasick`'s packed Teddy searcher, one byte per
//! bucket), instead of one `memchr3` pass per three bytes. The marker automaton is
//! then run anchored at each place found, in order: the first
//! match is the one an unanchored leftmost-longest search would find. Exact by
//! construction: a marker that starts at a byte either starts with one of the bytes
//! looked for, or is itself looked for.

use aho_corasick::{AhoCorasick, Anchored, Input, Match, MatchKind, packed};

/// The first window [`Starts::next`] looks in; each next one is twice as long, so the
/// work is proportional to the distance to the place found.
const FIRST_WINDOW: usize = 256;

/// Every place a marker can start (a place found may hold none: the automaton decides).
pub(crate) struct Starts {
    /// The first bytes looked for, in groups of at most three (one `memchr3` each).
    bytes: Vec<Vec<u8>>,
    /// The markers looked for whole, each by one byte of it that is rare in prose (found
    /// with `memchr`, then the word compared where it would start).
    words: Vec<Word>,
    /// The bytes the words are looked for by, in groups of at most three.
    triggers: Vec<Vec<u8>>,
    /// The largest offset of a word's byte in the word.
    max_offset: usize,
    /// The same words, one automaton with a vectorised prefilter (one pass for all of
    /// them, some 1.2 instructions per byte): used where their bytes come thick (`None`
    /// when there are no words).
    dense_words: Option<AhoCorasick>,
    /// The longest word, in bytes.
    longest_word: usize,
    /// Every marker by its first byte (each list sorted by bytes), for the partial
    /// markers at the end of a text.
    by_first: Vec<Vec<&'static str>>,
    /// Which pairs of bytes begin a marker of two bytes or more: one bit per pair
    /// (first * 256 + second).
    pairs: Vec<u64>,
    /// The longest marker, in bytes.
    longest: usize,
    /// Every byte looked for (the first bytes and the words' bytes), one vectorised pass
    /// for all of them (`None` where the packed searcher cannot run, or would not pay:
    /// the searches above then run by groups).
    one_pass: Option<packed::Searcher>,
    /// What each byte is to [`Starts::one_pass`]: [`FIRST`], [`TRIGGER`], both or none.
    class: [u8; 256],
}

/// A marker starts with this byte.
const FIRST: u8 = 1;
/// A whole-word marker is looked for by this byte.
const TRIGGER: u8 = 2;

/// What the one pass found.
enum OnePass {
    /// The first place a marker may start.
    Found(usize),
    /// No marker starts in the span.
    None,
    /// The words' bytes come too thick: search by groups instead.
    Dense,
}

impl Starts {
    /// The prefilter for `patterns` (every marker of the automaton).
    pub(crate) fn new(patterns: &[&'static str]) -> Starts {
        // Punctuation is rare in prose: each occurrence is worth a look. A marker that
        // begins with a letter, a space or a non-ASCII character (common) is looked for
        // whole.
        let (punctuation, mut words): (Vec<&'static str>, Vec<&'static str>) = patterns
            .iter()
            .filter(|p| !p.is_empty())
            .partition(|p| p.as_bytes().first().is_some_and(u8::is_ascii_punctuation));
        let mut first: Vec<u8> = punctuation.iter().filter_map(|p| p.as_bytes().first().copied()).collect();
        first.sort_unstable();
        first.dedup();
        words.sort_unstable();
        words.dedup();
        // A word that starts with another one is found where that one is.
        let kept: Vec<&'static str> =
            words.iter().filter(|w| !words.iter().any(|o| o.len() < w.len() && w.starts_with(*o))).copied().collect();
        let mut by_first: Vec<Vec<&'static str>> = vec![Vec::new(); 256];
        let mut pairs = vec![0u64; 256 * 256 / 64];
        for m in patterns {
            if let Some(list) = m.as_bytes().first().and_then(|&b| by_first.get_mut(usize::from(b))) {
                list.push(m);
            }
            if let [a, b, ..] = m.as_bytes() {
                let bit = usize::from(*a) * 256 + usize::from(*b);
                if let Some(w) = pairs.get_mut(bit / 64) {
                    *w |= 1 << (bit % 64);
                }
            }
        }
        for list in &mut by_first {
            list.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
            list.dedup();
        }
        let mut triggers: Vec<u8> = Vec::new();
        let words: Vec<Word> = kept
            .iter()
            .filter_map(|w| {
                let word = Word::new(w.as_bytes(), &triggers)?;
                if !triggers.contains(&word.trigger) {
                    triggers.push(word.trigger);
                }
                Some(word)
            })
            .collect();
        let mut class = [0u8; 256];
        for &b in &first {
            if let Some(c) = class.get_mut(usize::from(b)) {
                *c |= FIRST;
            }
        }
        for &b in &triggers {
            if let Some(c) = class.get_mut(usize::from(b)) {
                *c |= TRIGGER;
            }
        }
        let looked_for: Vec<[u8; 1]> =
            (0..=255u8).filter(|b| class.get(usize::from(*b)).is_some_and(|c| *c != 0)).map(|b| [b]).collect();
        // Teddy (SIMD, no `unsafe` here) finds the first of up to 16 single bytes in one
        // pass, where `memchr3` needs one pass per three; without it (another CPU), or
        // with more bytes, the groups search as before.
        let one_pass = (!looked_for.is_empty())
            .then(|| packed::Config::new().only_teddy(true).builder().extend(&looked_for).build())
            .flatten();
        Starts {
            one_pass,
            class,
            by_first,
            pairs,
            longest: patterns.iter().map(|p| p.len()).max().unwrap_or(0),
            bytes: first.chunks(3).map(<[u8]>::to_vec).collect(),
            longest_word: kept.iter().map(|w| w.len()).max().unwrap_or(0),
            dense_words: (!kept.is_empty())
                .then(|| AhoCorasick::builder().match_kind(MatchKind::LeftmostFirst).build(&kept).ok())
                .flatten(),
            triggers: triggers.chunks(3).map(<[u8]>::to_vec).collect(),
            max_offset: words.iter().map(|w| w.offset).max().unwrap_or(0),
            words,
        }
    }

    /// Where the end of `text` (from `from` on) could be the start of a marker: the first
    /// byte whose rest of the text is a proper prefix of a marker; `text.len()` when none.
    pub(crate) fn partial(&self, text: &[u8], from: usize) -> usize {
        let start = from.max(text.len().saturating_sub(self.longest.saturating_sub(1)));
        let tail = text.get(start..).unwrap_or_default();
        for (i, &b) in tail.iter().enumerate() {
            // Most bytes begin no marker, or not with the byte after them: table look-ups.
            // (A marker never begins with a continuation byte, so its position is a char
            // boundary.)
            let Some(list) = self.by_first.get(usize::from(b)).filter(|l| !l.is_empty()) else { continue };
            if let Some(&next) = tail.get(i + 1)
                && !self.has_pair(b, next)
            {
                continue;
            }
            if tail.get(i..).is_some_and(|rest| is_proper_prefix_of_any(rest, list)) {
                return start + i;
            }
        }
        text.len()
    }

    fn has_pair(&self, first: u8, second: u8) -> bool {
        let bit = usize::from(first) * 256 + usize::from(second);
        self.pairs.get(bit / 64).is_some_and(|w| w & (1 << (bit % 64)) != 0)
    }

    /// The first place in `hay[at..end]` where a marker may start (`words`: what earlier
    /// calls of the same search learnt about where the whole-word markers are).
    fn next(&self, hay: &[u8], mut at: usize, end: usize, words: &mut WordCache) -> Option<usize> {
        if !words.by_groups
            && let Some(searcher) = &self.one_pass
        {
            match self.one_pass(searcher, hay, at, end) {
                OnePass::Found(p) => return Some(p),
                OnePass::None => return None,
                OnePass::Dense => words.by_groups = true,
            }
        }
        let mut window = FIRST_WINDOW;
        while at < end {
            let stop = at.saturating_add(window).min(end);
            if let Some(found) = self.within(hay, at, stop, end, words) {
                return Some(found);
            }
            at = stop;
            window = window.saturating_mul(2);
        }
        None
    }

    /// The first place in `hay[at..end]` where a marker may start, found in one pass over
    /// every byte looked for: a first byte is a place; a word's byte is one where the word
    /// is there around it. `Dense` when the words' bytes come thick and start no word.
    fn one_pass(&self, searcher: &packed::Searcher, hay: &[u8], at: usize, end: usize) -> OnePass {
        let mut best: Option<usize> = None;
        let mut misses = 0usize;
        let mut q = at;
        loop {
            // A byte at or past `best + max_offset` starts no word before `best`.
            let stop = best.map_or(end, |b| b.saturating_add(self.max_offset).min(end));
            let Some(window) = hay.get(q..stop).filter(|w| !w.is_empty()) else { break };
            let found = if window.len() < searcher.minimum_len() {
                window.iter().position(|&b| self.class.get(usize::from(b)).is_some_and(|c| *c != 0))
            } else {
                searcher.find(window).map(|m| m.start())
            };
            let Some(i) = found else { break };
            let p = q + i;
            let Some(&byte) = hay.get(p) else { break };
            let class = self.class.get(usize::from(byte)).copied().unwrap_or(0);
            if class & FIRST != 0 && best.is_none_or(|b| p < b) {
                best = Some(p);
            }
            if class & TRIGGER != 0 {
                let mut hit = false;
                for w in self.words.iter().filter(|w| w.trigger == byte) {
                    if let Some(s) = p.checked_sub(w.offset)
                        && s >= at
                        && best.is_none_or(|b| s < b)
                        && s.saturating_add(w.text.len()) <= end
                        && hay.get(s..).is_some_and(|rest| rest.starts_with(w.text))
                    {
                        best = Some(s);
                        hit = true;
                    }
                }
                if !hit && class & FIRST == 0 {
                    misses += 1;
                    if misses >= DENSE_TRIGGERS && p.saturating_sub(at) < misses * DENSE_TRIGGER_SPACING {
                        return OnePass::Dense;
                    }
                }
            }
            q = p + 1;
        }
        best.map_or(OnePass::None, OnePass::Found)
    }

    /// The first place in `[at, stop)` where a marker may start (a word found there may
    /// run on past `stop`, up to `end`).
    fn within(&self, hay: &[u8], at: usize, stop: usize, end: usize, words: &mut WordCache) -> Option<usize> {
        let mut best: Option<usize> = None;
        let mut limit = stop;
        for group in &self.bytes {
            let Some(window) = hay.get(at..limit) else { continue };
            let found = match group.as_slice() {
                [a] => memchr::memchr(*a, window),
                [a, b] => memchr::memchr2(*a, *b, window),
                [a, b, c] => memchr::memchr3(*a, *b, *c, window),
                _ => None,
            };
            if let Some(i) = found {
                best = Some(at + i);
                limit = at + i;
            }
        }
        if let Some(w) = self.next_word(hay, at, limit, end, words) {
            best = Some(w);
        }
        best
    }

    /// The first place in `[at, limit)` where a whole-word marker starts, searching only
    /// what `cache` does not already know.
    fn next_word(&self, hay: &[u8], at: usize, limit: usize, end: usize, cache: &mut WordCache) -> Option<usize> {
        if self.words.is_empty() {
            return None;
        }
        if let Some(p) = cache.next {
            if p >= at {
                return (p < limit).then_some(p);
            }
            cache.next = None;
        }
        let from = if (cache.clear_from..=cache.clear_to).contains(&at) { cache.clear_to } else { at };
        if from >= limit {
            return None;
        }
        match self.triggered_word(hay, from, limit, end) {
            Triggered::Found(s) => {
                cache.next = Some(s);
                cache.clear_from = at;
                cache.clear_to = s;
                return Some(s);
            }
            Triggered::None => {
                cache.clear_from = at;
                cache.clear_to = limit;
                return None;
            }
            Triggered::Dense => {}
        }
        let words = self.dense_words.as_ref()?;
        let word_end = limit.saturating_add(self.longest_word).min(end);
        match words.try_find(Input::new(hay).span(from..word_end)) {
            Ok(Some(m)) => {
                cache.next = Some(m.start());
                cache.clear_from = at;
                cache.clear_to = m.start();
                (m.start() < limit).then_some(m.start())
            }
            Ok(None) => {
                // Every word that starts before `word_end - longest_word + 1` fits in
                // the span searched (any that starts later and fits before `end` may
                // still be there, unless the span reached `end`).
                cache.clear_from = at;
                cache.clear_to = if word_end == end {
                    end
                } else {
                    from.max(word_end.saturating_sub(self.longest_word.saturating_sub(1)))
                };
                None
            }
            Err(_) => {
                // The search cannot fail on this automaton (unanchored, no limits); if
                // it did, every place would be a candidate.
                Some(at)
            }
        }
    }

    /// The first place in `[from, limit)` where a word starts (and ends by `end`), found
    /// by the words' bytes; `Dense` when those bytes come too thick to pay (the automaton
    /// then searches instead).
    fn triggered_word(&self, hay: &[u8], from: usize, limit: usize, end: usize) -> Triggered {
        let mut best = limit;
        let mut misses = 0usize;
        for group in &self.triggers {
            let mut at = from;
            loop {
                // A byte at or past `best + max_offset` starts no word before `best`.
                let stop = best.saturating_add(self.max_offset).min(end);
                let Some(window) = hay.get(at..stop).filter(|w| !w.is_empty()) else { break };
                let found = match group.as_slice() {
                    [a] => memchr::memchr(*a, window),
                    [a, b] => memchr::memchr2(*a, *b, window),
                    [a, b, c] => memchr::memchr3(*a, *b, *c, window),
                    _ => None,
                };
                let Some(i) = found else { break };
                let q = at + i;
                let byte = hay.get(q).copied();
                let mut hit = false;
                for w in self.words.iter().filter(|w| Some(w.trigger) == byte) {
                    if let Some(s) = q.checked_sub(w.offset)
                        && (from..best).contains(&s)
                        && s.saturating_add(w.text.len()) <= end
                        && hay.get(s..).is_some_and(|rest| rest.starts_with(w.text))
                    {
                        best = s;
                        hit = true;
                    }
                }
                if !hit {
                    misses += 1;
                    if misses >= DENSE_TRIGGERS && q.saturating_sub(from) < misses * DENSE_TRIGGER_SPACING {
                        return Triggered::Dense;
                    }
                }
                at = q + 1;
            }
        }
        if best < limit { Triggered::Found(best) } else { Triggered::None }
    }
}

/// A whole-word marker and the byte it is looked for by.
struct Word {
    text: &'static [u8],
    /// The byte (of those in the word, the one rarest in prose: see [`rarity`]).
    trigger: u8,
    /// Where it is in the word.
    offset: usize,
}

impl Word {
    /// `text` looked for by its rarest byte (of equally rare ones, one already in `taken`,
    /// else the first).
    fn new(text: &'static [u8], taken: &[u8]) -> Option<Word> {
        let rarest = text.iter().map(|&b| rarity(b)).min()?;
        let mut candidates = text.iter().enumerate().filter(|&(_, &b)| rarity(b) == rarest);
        let first = candidates.clone().next()?;
        let (offset, &trigger) = candidates.find(|(_, b)| taken.contains(b)).unwrap_or(first);
        Some(Word { text, trigger, offset })
    }
}

/// How common a byte is in prose, lowest first: the punctuation of markup; a UTF-8
/// continuation byte or the punctuation of prose; another non-ASCII byte; a letter or a
/// digit; a space or a control character.
fn rarity(b: u8) -> u8 {
    match b {
        b'.' | b',' | b'\'' | b'"' | b'-' | b'(' | b')' | b'!' | b'?' | b';' | b'/' => 1,
        _ if b.is_ascii_punctuation() => 0,
        0x81..=0xBF => 1,
        0x80..=0xFF => 2,
        _ if b.is_ascii_alphanumeric() => 3,
        _ => 4,
    }
}

/// What a search by the words' bytes found.
enum Triggered {
    /// The first word starts here.
    Found(usize),
    /// No word starts in the span.
    None,
    /// The bytes come too thick: search with the automaton.
    Dense,
}

/// After this many bytes of words that start no word, [`Starts::triggered_word`] checks
/// how close they come.
const DENSE_TRIGGERS: usize = 16;
/// Closer than this on average (in bytes), the automaton searches instead.
const DENSE_TRIGGER_SPACING: usize = 32;

/// True when `rest` is a proper prefix of a marker of `sorted` (sorted by bytes: the
/// markers that start with `rest` follow one another from the first one not below it).
fn is_proper_prefix_of_any(rest: &[u8], sorted: &[&str]) -> bool {
    let from = sorted.partition_point(|m| m.as_bytes() < rest);
    sorted
        .get(from..)
        .unwrap_or_default()
        .iter()
        .take_while(|m| m.as_bytes().starts_with(rest))
        .any(|m| m.len() > rest.len())
}

/// What one search learnt about the whole-word markers: none starts in
/// `[clear_from, clear_to)`, and `next` is the first start found at or after `clear_to`.
#[derive(Default)]
struct WordCache {
    clear_from: usize,
    clear_to: usize,
    next: Option<usize>,
    /// The words' bytes came thick in this search: it goes on by groups.
    by_groups: bool,
}

/// The leftmost marker in `text[from..end]` (the longest of those starting there), as an
/// unanchored leftmost-longest search of every marker over that span finds it;
/// `automaton` is that search's automaton, built to run anchored; `unanchored` the same
/// markers, searched unanchored where the places come thick.
pub(crate) fn find(
    automaton: &AhoCorasick,
    unanchored: &AhoCorasick,
    starts: &Starts,
    text: &str,
    from: usize,
    end: usize,
) -> Option<Match> {
    let end = end.min(text.len());
    let mut at = from;
    let mut misses = 0usize;
    let mut words = WordCache::default();
    while at < end {
        if misses >= DENSE_MISSES && (at - from) < misses * DENSE_SPACING {
            // Places that start no marker come thick (markup-heavy text, JSON): the
            // prefilter costs more than it saves, so the automaton walks the rest itself.
            // No marker starts before `at` (every place there was tried), so its first
            // match is the one looked for.
            return unanchored.try_find(Input::new(text).span(at..end)).ok().flatten();
        }
        let start = starts.next(text.as_bytes(), at, end, &mut words)?;
        let input = Input::new(text).span(start..end).anchored(Anchored::Yes);
        if let Ok(Some(m)) = automaton.try_find(input) {
            return Some(m);
        }
        misses += 1;
        at = start + 1;
    }
    None
}

/// After this many places that start no marker, [`find`] checks how close they come.
const DENSE_MISSES: usize = 4;
/// Places closer than this on average (in bytes) are too thick for the prefilter.
const DENSE_SPACING: usize = 64;

#[cfg(test)]
pub(crate) mod tests {
    use super::super::registry::dispatch;
    use aho_corasick::{AhoCorasick, Input, Match, MatchKind};
    use std::cell::Cell;
    use std::sync::OnceLock;

    thread_local! {
        /// Tests only: the scan searches with the unanchored automaton, no prefilter.
        static FULL: Cell<bool> = const { Cell::new(false) };
    }

    /// The unanchored leftmost-longest automaton over every marker (what the prefilter
    /// must agree with).
    fn unanchored() -> &'static AhoCorasick {
        static ALL: OnceLock<AhoCorasick> = OnceLock::new();
        ALL.get_or_init(|| {
            let d = dispatch().unwrap();
            AhoCorasick::builder().match_kind(MatchKind::LeftmostLongest).build(&d.patterns).unwrap()
        })
    }

    /// True inside [`full_scan`].
    pub(crate) fn is_full() -> bool {
        FULL.with(Cell::get)
    }

    /// The search without the prefilter.
    pub(crate) fn full_search(text: &str, from: usize, end: usize) -> Option<Match> {
        unanchored().find(Input::new(text).span(from..end.min(text.len())))
    }

    /// Run `f` with the scan searching every byte with the unanchored automaton.
    pub(crate) fn full_scan<T>(f: impl FnOnce() -> T) -> T {
        FULL.with(|c| c.set(true));
        let out = f();
        FULL.with(|c| c.set(false));
        out
    }

    /// The prefiltered search finds what the unanchored search finds, from every position
    /// of texts full of markers, cut markers, near-markers and prose.
    #[test]
    fn find_is_the_automaton_search() {
        let d = dispatch().unwrap();
        // An empty marker would start everywhere (the prefilter leaves none out).
        assert!(d.patterns.iter().all(|p| !p.is_empty()));
        let mut texts: Vec<String> = vec![
            "The forecast covers every city. functools[ and  functools[{\"a\":1}] Action: x".to_owned(),
            "◁think▷ hm ◁/think▷ ◁ think <tool_call><tool_cal <｜tool▁calls▁begin｜> [TOOL_CALLS] ```json".to_owned(),
            "x".repeat(700) + "<|python_tag|>" + &"y ".repeat(300) + "Action:" + &"z".repeat(2000) + "[",
            "a >> b >>> c ]<]minimax[>[<tool_call> ` `` ```".to_owned(),
            // The bytes the words are looked for by, thick (the automaton takes over)
            // and thin, around words.
            "a: [b] ◁▷: ".repeat(40) + "Action: functools[ ◁think▷" + &": ".repeat(30) + " functools[ ◁/think▷",
        ];
        texts.push(d.patterns.join(" "));
        texts.push(d.patterns.join(""));
        texts.push(d.patterns.iter().map(|p| p.get(..p.len() / 2).unwrap_or(p)).collect::<Vec<_>>().join("·"));
        for text in &texts {
            for from in (0..text.len()).filter(|i| text.is_char_boundary(*i)) {
                for end in [text.len(), (from + 40).min(text.len())] {
                    let want = unanchored().find(Input::new(text.as_str()).span(from..end));
                    assert_eq!(d.find(text, from, end, false), want, "{text:?} from {from} to {end}");
                    assert_eq!(d.find(text, from, end, true), want, "{text:?} from {from} to {end}");
                }
            }
        }
    }

    /// A text of whole markers, cut markers and prose (`pieces`: marker index, where to
    /// cut it, prose after it).
    pub(crate) fn mix(pieces: &[(usize, usize, String)]) -> String {
        let d = dispatch().unwrap();
        let mut text = String::new();
        for (marker, cut, prose) in pieces {
            if let Some(m) = d.patterns.get(*marker % d.patterns.len().max(1)) {
                let mut end = (*cut).min(m.len());
                while !m.is_char_boundary(end) {
                    end -= 1;
                }
                text.push_str(if *cut % 3 == 0 { m } else { m.get(..end).unwrap_or(m) });
            }
            text.push_str(prose);
            if *cut % 5 == 0 {
                text.push_str(&"prose and more prose ".repeat(*cut * 4));
            }
        }
        text
    }

    /// Call-shaped pieces the extractors read beyond the markers themselves: bare JSON
    /// calls, Python call lists, a declared tool's name glued to its arguments, a leading
    /// recipient, reasoning around calls.
    const SHAPES: &[&str] = &[
        "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}",
        "[{\"name\": \"get_time\", \"arguments\": {}}]",
        "[get_weather(city=\"Paris\")]",
        "get_weather {\"city\": \"Oslo\"}",
        "get_time(properties = {})",
        "<tool_call>{\"name\": \"get_time\", \"arguments\": {}}</tool_call>",
        "<think>maybe get_weather</think>",
        "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n```",
        "functions.get_time\n{}",
        "Action: get_weather\nAction Input: {\"city\": \"Lima\"}",
        "[TOOL_CALLS]get_time[ARGS]{}",
    ];

    fn tools() -> &'static crate::schema::ToolSet {
        static TOOLS: OnceLock<crate::schema::ToolSet> = OnceLock::new();
        TOOLS.get_or_init(|| {
            let object = serde_json::json!({"type": "object", "properties": {"city": {"type": "string"}}});
            crate::schema::ToolSet::new(&[
                serde_json::json!({"name": "get_weather", "parameters": object}),
                serde_json::json!({"name": "get_time", "parameters": {"type": "object"}}),
            ])
            .unwrap()
        })
    }

    /// The whole-text extraction and the streamed one (in chunks of `chunk` bytes).
    fn read(text: &str, chunk: usize) -> (super::super::Extraction<'_>, Vec<super::super::stream::StreamEvent>) {
        let tools: &dyn super::super::ToolLookup = tools();
        let whole = super::super::extract(&super::super::Message::new(text), Some(tools));
        let mut stream = super::super::stream::StreamExtractor::new(Some(tools), super::super::Options::default());
        let mut events = Vec::new();
        for piece in text.as_bytes().chunks(chunk.max(1)) {
            events.extend(stream.push(piece));
        }
        events.extend(stream.finish());
        (whole, events)
    }

    proptest::proptest! {
        /// The prefiltered scan reads every text as the scan of every byte does, whole and
        /// streamed: markers, cut markers, call shapes and prose in any mix.
        #[test]
        fn prefiltered_scan_is_the_full_scan(
            pieces in proptest::collection::vec(
                (0usize..400, 0usize..64, "[a-zA-Z .,:{}\\[\\]<>|`\"◁▷()=_\n]{0,24}"), 0..16),
            shapes in proptest::collection::vec((0usize..64, 0usize..400), 0..6),
            chunk in 1usize..64,
        ) {
            let mut text = mix(&pieces);
            for (shape, at) in &shapes {
                let mut at = (*at).min(text.len());
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                text.insert_str(at, SHAPES[*shape % SHAPES.len()]);
            }
            let fast = read(&text, chunk);
            let full = full_scan(|| read(&text, chunk));
            proptest::prop_assert_eq!(fast.0, full.0);
            proptest::prop_assert_eq!(fast.1, full.1);
        }

        /// The same over random mixes, long enough that the prefilter's windows grow.
        #[test]
        fn find_is_the_automaton_search_on_any_mix(
            pieces in proptest::collection::vec(
                (0usize..400, 0usize..64, "[a-zA-Z .,:{}\\[\\]<>|`\"◁▷()=_]{0,40}"), 0..40),
        ) {
            let d = dispatch().unwrap();
            let text = mix(&pieces);
            let mut from = 0;
            while from < text.len() {
                let want = unanchored().find(Input::new(text.as_str()).span(from..text.len()));
                proptest::prop_assert_eq!(d.find(&text, from, text.len(), false), want);
                proptest::prop_assert_eq!(d.find(&text, from, text.len(), true), want);
                from = want.map_or(text.len(), |m| {
                    let mut next = m.start() + 1;
                    while !text.is_char_boundary(next) {
                        next += 1;
                    }
                    next
                });
            }
        }
    }
}
