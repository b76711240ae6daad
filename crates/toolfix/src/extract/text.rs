//! Small text primitives every format reader shares, so they agree: what whitespace is,
//! what a tool name looks like once leaked markup is taken off, how a marker is matched.

/// The first byte at or after `i` that is not whitespace (Unicode `White_Space`; ASCII
/// checked first). `i` past the end is returned as is.
pub(crate) fn skip_ws(text: &str, mut i: usize) -> usize {
    let bytes = text.as_bytes();
    while let Some(&b) = bytes.get(i) {
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c') {
            i += 1;
        } else if b >= 0x80 {
            match text.get(i..).and_then(|r| r.chars().next()) {
                Some(c) if c.is_whitespace() => i += c.len_utf8(),
                _ => return i,
            }
        } else {
            return i;
        }
    }
    i
}

/// True when `text` at `pos` starts with `prefix`.
pub(crate) fn is_at(text: &str, pos: usize, prefix: &str) -> bool {
    text.get(pos..).is_some_and(|rest| rest.starts_with(prefix))
}

/// `pos + marker.len()` when `text` at `pos` starts with `marker`.
pub(crate) fn after(text: &str, pos: usize, marker: &str) -> Option<usize> {
    is_at(text, pos, marker).then_some(pos + marker.len())
}

/// Where the calls of a section start when a format's section marker (`section`) is at
/// `at`, or its per-call marker (`call`: the section marker is missing).
pub(crate) fn section_start(text: &str, at: usize, section: &str, call: &str) -> Option<usize> {
    after(text, at, section).or_else(|| is_at(text, at, call).then_some(at))
}

/// `i` moved past `marker` (and the whitespace before it) when it follows; else `i`.
pub(crate) fn skip_closer(text: &str, i: usize, marker: &str) -> usize {
    after(text, skip_ws(text, i), marker).unwrap_or(i)
}

/// `i` moved past an opening code fence (```` ```json ```` and the whitespace after it)
/// when one starts there; else `i`.
pub(crate) fn skip_fence_open(text: &str, i: usize) -> usize {
    let Some(after_ticks) = text.get(i..).and_then(|r| r.strip_prefix("```")) else {
        return i;
    };
    let lang_len = after_ticks.bytes().take_while(u8::is_ascii_alphanumeric).count();
    skip_ws(text, i + 3 + lang_len)
}

/// True when the next non-whitespace at `pos` is markup (`<`) or the end of the text: what
/// follows a closed element of a call, unless the call's closers are missing and prose
/// goes on.
pub(crate) fn markup_or_end(text: &str, pos: usize) -> bool {
    let p = skip_ws(text, pos);
    text.get(p..).is_none_or(|rest| rest.is_empty() || rest.starts_with('<'))
}

/// The largest char boundary of `text` at or below `i`.
pub(crate) fn floor(text: &str, i: usize) -> usize {
    crate::span::floor_char_boundary(text, i)
}

/// Longest tool name accepted.
pub(crate) const MAX_NAME: usize = 256;

/// A tool name as written, with what leaked into it taken off: anything from a `<` on
/// (`get_weather</arg_value>`), surrounding quotes and backticks, surrounding whitespace.
/// `None` when nothing usable is left, or when what is left cannot be a name (whitespace,
/// brackets or braces inside, longer than [`MAX_NAME`]).
pub(crate) fn clean_name(raw: &str) -> Option<&str> {
    let cut = raw.find('<').and_then(|i| raw.get(..i)).unwrap_or(raw);
    let name = cut.trim().trim_matches(['"', '\'', '`']).trim();
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && !name.chars().any(|c| c.is_whitespace() || matches!(c, '{' | '}' | '(' | ')' | '[' | ']' | '>'));
    ok.then_some(name)
}

/// True when `name` looks like a tool name: letters, digits and `_-.:/` only (used where
/// nothing but the name says a call is meant: JSON in prose, names in headers).
pub(crate) fn is_identifier_like(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace() {
        assert_eq!(skip_ws(" \t\n\u{a0}x", 0), 5);
        assert_eq!(skip_ws("x", 0), 0);
        assert_eq!(skip_ws("  ", 5), 5);
        assert_eq!(skip_ws("\u{e9}", 0), 0);
    }

    #[test]
    fn names() {
        assert_eq!(clean_name(" get_weather</arg_value>"), Some("get_weather"));
        assert_eq!(clean_name("\"f\""), Some("f"));
        assert_eq!(clean_name("`functions.f`"), Some("functions.f"));
        assert_eq!(clean_name("   "), None);
        assert_eq!(clean_name("two words"), None);
        assert_eq!(clean_name("f{x}"), None);
        assert!(is_identifier_like("mcp:server/tool-1.x"));
        assert!(!is_identifier_like("a b"));
    }

    #[test]
    fn markers() {
        assert_eq!(after("<a>x", 0, "<a>"), Some(3));
        assert_eq!(skip_closer("x \n</a>y", 1, "</a>"), 7);
        assert_eq!(skip_closer("x y", 1, "</a>"), 1);
        assert_eq!(skip_fence_open("```json\n{", 0), 8);
        assert_eq!(skip_fence_open("{", 0), 0);
    }
}
