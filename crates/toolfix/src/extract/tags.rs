//! A small, forgiving lexer for the XML-like tags of the markup formats.
//!
//! Tags are read one at a time from a position, so a parser scans forward once. A tag
//! may carry a namespace prefix (`steptml:`, `atem:`) or be a DSML tag, whose separators
//! are the full-width `｜` or ASCII `|`, repeated or not (`</｜｜DSML｜｜parameter>` is a
//! tokenizer-corrupted closer that still counts).

/// Longest tag accepted, from `<` to `>`.
const MAX_TAG: usize = 1024;

/// How tag names are written in a format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ns {
    /// `<name ...>`.
    Plain,
    /// `<prefixname ...>`, e.g. `steptml:`.
    Prefix(&'static str),
    /// `<｜DSML｜name ...>` with `｜` or `|`, possibly doubled.
    Dsml,
}

/// One tag found in the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tag<'a> {
    /// Byte of the `<`.
    pub(crate) start: usize,
    /// One past the `>`.
    pub(crate) end: usize,
    /// `</...>`.
    pub(crate) close: bool,
    /// The tag name, without prefix.
    pub(crate) name: &'a str,
    /// What follows the name up to `>` (attributes, or `=value`).
    pub(crate) rest: &'a str,
}

impl Tag<'_> {
    /// True for an opening tag called `name`.
    pub(crate) fn is_open(&self, name: &str) -> bool {
        !self.close && self.name == name
    }
    /// True for a closing tag called `name`.
    pub(crate) fn is_close(&self, name: &str) -> bool {
        self.close && self.name == name
    }
}

/// The tag at `pos` (where `text` has a `<`), if it is a well-formed tag in `ns`.
pub(crate) fn tag_at(text: &str, pos: usize, ns: Ns) -> Option<Tag<'_>> {
    let after = text.get(pos..)?.strip_prefix('<')?;
    let (close, mut rest) = match after.strip_prefix('/') {
        Some(r) => (true, r),
        None => (false, after),
    };
    match ns {
        Ns::Plain => {}
        Ns::Prefix(prefix) => rest = rest.strip_prefix(prefix)?,
        Ns::Dsml => {
            rest = skip_bars(rest)?;
            rest = rest.strip_prefix("DSML")?;
            rest = skip_bars(rest)?;
        }
    }
    let name_len = rest
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b':' | b'.')))
        .unwrap_or(rest.len());
    if name_len == 0 {
        return None;
    }
    let name = rest.get(..name_len)?;
    let tail = rest.get(name_len..)?;
    let limit = tail.len().min(MAX_TAG);
    let gt = tail.get(..limit)?.bytes().position(|b| matches!(b, b'>' | b'<' | b'\n'))?;
    if tail.as_bytes().get(gt) != Some(&b'>') {
        return None;
    }
    let attrs = tail.get(..gt)?;
    let end = text.len() - tail.len() + gt + 1;
    Some(Tag { start: pos, end, close, name, rest: attrs })
}

fn skip_bars(text: &str) -> Option<&str> {
    let trimmed = text.trim_start_matches(['｜', '|']);
    (trimmed.len() < text.len()).then_some(trimmed)
}

/// The next tag in `ns` at or after `from` (skipping `<` that start no tag).
pub(crate) fn next_tag(text: &str, from: usize, ns: Ns) -> Option<Tag<'_>> {
    let mut pos = from;
    loop {
        let lt = pos + text.get(pos..)?.find('<')?;
        if let Some(tag) = tag_at(text, lt, ns) {
            return Some(tag);
        }
        pos = lt + 1;
    }
}

/// The value of attribute `key` in a tag's `rest` (`name="x"`, `name='x'` or `name=x`).
pub(crate) fn attr<'a>(rest: &'a str, key: &str) -> Option<&'a str> {
    let mut search = rest;
    loop {
        let idx = search.find(key)?;
        let before_ok = idx == 0 || search.as_bytes().get(idx - 1).is_some_and(u8::is_ascii_whitespace);
        let after = search.get(idx + key.len()..)?;
        if before_ok && let Some(value) = after.trim_start().strip_prefix('=') {
            return Some(attr_value(value.trim_start()));
        }
        search = after;
    }
}

fn attr_value(value: &str) -> &str {
    // Typographic quotes too (`name=“k”`, DeepSeek's DSML written through a word
    // processor): the value is the same.
    for (open, close) in [('"', '"'), ('\'', '\''), ('“', '”'), ('”', '”'), ('‘', '’'), ('’', '’'), ('„', '“')]
    {
        if let Some(inner) = value.strip_prefix(open) {
            return inner.find(close).and_then(|end| inner.get(..end)).unwrap_or(inner);
        }
    }
    let end = value.find(|c: char| c.is_whitespace() || c == '/').unwrap_or(value.len());
    value.get(..end).unwrap_or(value)
}

/// Removes one framing newline after the open tag and one before the close tag.
pub(crate) fn strip_framing(value: &str) -> &str {
    let value = value.strip_prefix("\r\n").or_else(|| value.strip_prefix('\n')).unwrap_or(value);
    value.strip_suffix("\r\n").or_else(|| value.strip_suffix('\n')).unwrap_or(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexes_plain_and_prefixed() {
        let t = tag_at("<function=get_weather>", 0, Ns::Plain).unwrap();
        assert_eq!((t.name, t.rest, t.close, t.end), ("function", "=get_weather", false, 22));
        let t = tag_at("</steptml:parameter>x", 0, Ns::Prefix("steptml:")).unwrap();
        assert!(t.is_close("parameter"));
        assert!(tag_at("<function=get_weather\n<parameter=x>", 0, Ns::Plain).is_none());
    }

    #[test]
    fn lexes_dsml_variants() {
        for text in ["<｜DSML｜invoke name=\"a\">", "<|DSML|invoke name=\"a\">", "<｜｜DSML｜｜invoke name=\"a\">"]
        {
            let t = tag_at(text, 0, Ns::Dsml).unwrap();
            assert!(t.is_open("invoke"));
            assert_eq!(attr(t.rest, "name"), Some("a"));
        }
        assert!(tag_at("</｜｜DSML｜｜parameter>", 0, Ns::Dsml).unwrap().is_close("parameter"));
        assert!(tag_at("<DSML｜invoke>", 0, Ns::Dsml).is_none());
    }

    #[test]
    fn attributes() {
        assert_eq!(attr(r#" name="k" string="true""#, "string"), Some("true"));
        assert_eq!(attr(" name='k'", "name"), Some("k"));
        assert_eq!(attr(" name=k other", "name"), Some("k"));
        assert_eq!(attr(" rename=\"x\"", "name"), None);
        assert_eq!(attr(" name=“k” string=“true”", "name"), Some("k"));
        assert_eq!(attr(" name=“k” string=“true”", "string"), Some("true"));
    }
}
