#![expect(clippy::unwrap_used, clippy::panic, reason = "tests")]
//! A valid document cut at any byte never salvages to a value the document did not
//! contain: every member and element of the output is in the original at the same place,
//! and a value that differs from the original (a string or number cut short, `null` for a
//! value cut to nothing, a container left open) is reported uncertain at its pointer.

use proptest::prelude::*;
use std::fmt::Write as _;
use toolfix::salvage::{Uncertain, UncertainKind, salvage};

// ---------------------------------------------------------------------------------------
// Generated documents, written as text: strings with every escape form, numbers with
// sign, fraction and exponent, rendered compact or pretty.

/// A string as written: each char with how to write it (raw, short escape, `\u`).
type Chars = Vec<(char, u8)>;

#[derive(Clone, Debug)]
enum G {
    Null,
    Bool(bool),
    Num(String),
    Str(Chars),
    Arr(Vec<G>),
    Obj(Vec<(Chars, G)>),
}

fn chars(max: usize) -> impl Strategy<Value = Chars> {
    let c = prop_oneof![
        20 => prop::char::range('a', 'z').prop_map(String::from),
        10 => prop::sample::select(vec!['"', '\\', '/', '\n', '\t', '\r', '\u{8}', '\u{c}', '\u{0}', '\u{1f}', ' ', ':', ',', '{', '}', '[', ']', '~', '\'']).prop_map(String::from),
        10 => prop::sample::select(vec!['é', '€', 'ß', '中', '😀', '\u{10ffff}', '\u{fffd}', '\u{7f}', '\u{a0}', '\u{2028}', '“', '”', '‘', '’', '…']).prop_map(String::from),
        5 => any::<char>().prop_map(String::from),
        // Text that looks like structure, prose or wrappers to a lenient parser.
        10 => prop::sample::select(vec![
            "```", "```json\n", "\n```", "//", "/*", "*/", "#", "<!--", "-->", "\\u", "\\ud83d", "{\"a\": 1}", "[1, 2]",
            "', '", "\", \"", "\": \"", "\":", "True", "None", "NaN", "null", "true", "...", "+", "0x1", "-1", "1e5",
            "callback(", ");", "ObjectId(", "\\\"", " + \"", "Here is the JSON:\n",
        ])
        .prop_map(String::from),
        // Longer than the parser's lookahead (256 bytes).
        1 => (250usize..300).prop_map(|n| "k".repeat(n)),
    ];
    prop::collection::vec((c, 0u8..4), 0..max).prop_map(|v| {
        v.into_iter().flat_map(|(s, style)| s.chars().map(move |c| (c, style)).collect::<Vec<_>>()).collect()
    })
}

fn number() -> impl Strategy<Value = String> {
    let int = prop_oneof![Just("0".to_string()), "[1-9][0-9]{0,6}|[1-9][0-9]{15,25}"];
    let frac = prop::option::of("[0-9]{1,3}");
    let exp = prop::option::of(("[eE]", "[+-]?", "[0-9]{1,2}"));
    (any::<bool>(), int, frac, exp).prop_map(|(neg, int, frac, exp)| {
        let mut s = String::new();
        if neg {
            s.push('-');
        }
        s.push_str(&int);
        if let Some(f) = frac {
            s.push('.');
            s.push_str(&f);
        }
        if let Some((e, sign, d)) = exp {
            s.push_str(&e);
            s.push_str(&sign);
            s.push_str(&d);
        }
        s
    })
}

fn doc() -> impl Strategy<Value = G> {
    let leaf = prop_oneof![
        Just(G::Null),
        any::<bool>().prop_map(G::Bool),
        number().prop_map(G::Num),
        chars(10).prop_map(G::Str),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(G::Arr),
            prop::collection::vec((chars(6), inner), 0..6).prop_map(|kv| {
                // Distinct keys: which of two equal keys wins is another question.
                let mut seen = Vec::new();
                let kv = kv
                    .into_iter()
                    .filter(|(k, _)| {
                        let d: String = k.iter().map(|c| c.0).collect();
                        let new = !seen.contains(&d);
                        seen.push(d);
                        new
                    })
                    .collect();
                G::Obj(kv)
            }),
        ]
    })
}

fn write_str(out: &mut String, s: &Chars) {
    out.push('"');
    for &(c, style) in s {
        let short = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\n' => Some("\\n"),
            '\t' => Some("\\t"),
            '\r' => Some("\\r"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            '/' if style == 3 => Some("\\/"),
            _ => None,
        };
        let must_escape = c < ' ' || c == '"' || c == '\\';
        match (short, style) {
            (Some(e), 0 | 1 | 3) => out.push_str(e),
            _ if style == 2 || must_escape => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    write!(out, "\\u{u:04x}").unwrap();
                }
            }
            _ => out.push(c),
        }
    }
    out.push('"');
}

/// How a document is laid out.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Layout {
    Compact,
    /// As `serde_json::to_string_pretty`.
    Pretty,
    /// A space around every token: `{ "a" : [ 1 , 2 ] }`.
    Spaced,
    /// Pretty, with CRLF line ends, tab indents, and whitespace around the document.
    Tabs,
}

fn render(g: &G, layout: Layout, indent: usize, out: &mut String) {
    let pretty = layout == Layout::Pretty;
    let spaced = layout == Layout::Spaced;
    let nl = |out: &mut String, n: usize| {
        if pretty {
            out.push('\n');
            out.push_str(&"  ".repeat(n));
        } else if layout == Layout::Tabs {
            out.push_str("\r\n");
            out.push_str(&"\t".repeat(n));
        } else if spaced {
            out.push(' ');
        }
    };
    let comma = |out: &mut String| out.push_str(if spaced { " ," } else { "," });
    match g {
        G::Null => out.push_str("null"),
        G::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        G::Num(n) => out.push_str(n),
        G::Str(s) => write_str(out, s),
        G::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    comma(out);
                }
                nl(out, indent + 1);
                render(item, layout, indent + 1, out);
            }
            if !items.is_empty() {
                nl(out, indent);
            }
            out.push(']');
        }
        G::Obj(members) => {
            out.push('{');
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    comma(out);
                }
                nl(out, indent + 1);
                write_str(out, k);
                out.push_str(match layout {
                    Layout::Compact => ":",
                    Layout::Pretty | Layout::Tabs => ": ",
                    Layout::Spaced => " : ",
                });
                render(v, layout, indent + 1, out);
            }
            if !members.is_empty() {
                nl(out, indent);
            }
            out.push('}');
        }
    }
}

fn rendered() -> impl Strategy<Value = String> {
    let layout = prop::sample::select(vec![Layout::Compact, Layout::Pretty, Layout::Spaced, Layout::Tabs]);
    (doc(), layout).prop_map(|(g, layout)| {
        let mut s = String::new();
        if layout == Layout::Tabs {
            s.push_str("\n ");
        }
        render(&g, layout, 0, &mut s);
        if layout == Layout::Tabs {
            s.push_str("\r\n");
        }
        s
    })
}

// ---------------------------------------------------------------------------------------
// A strict JSON reader that keeps number text as written and each value's span.

#[derive(Debug, PartialEq)]
enum V {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<N>),
    Obj(Vec<(String, N)>),
}

#[derive(Debug)]
struct N {
    v: V,
    end: usize,
}

impl PartialEq for N {
    fn eq(&self, other: &Self) -> bool {
        self.v == other.v
    }
}

struct Reader<'a> {
    b: &'a [u8],
    s: &'a str,
    i: usize,
}

impl Reader<'_> {
    fn ws(&mut self) {
        while matches!(self.b.get(self.i), Some(b' ' | b'\n' | b'\t' | b'\r')) {
            self.i += 1;
        }
    }

    fn value(&mut self) -> N {
        self.ws();
        let v = match self.b[self.i] {
            b'n' => {
                self.i += 4;
                V::Null
            }
            b't' => {
                self.i += 4;
                V::Bool(true)
            }
            b'f' => {
                self.i += 5;
                V::Bool(false)
            }
            b'"' => V::Str(self.string()),
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.b[self.i] == b']' {
                    self.i += 1;
                } else {
                    loop {
                        items.push(self.value());
                        self.ws();
                        self.i += 1;
                        if self.b[self.i - 1] == b']' {
                            break;
                        }
                    }
                }
                V::Arr(items)
            }
            b'{' => {
                self.i += 1;
                let mut members = Vec::new();
                self.ws();
                if self.b[self.i] == b'}' {
                    self.i += 1;
                } else {
                    loop {
                        self.ws();
                        let k = self.string();
                        self.ws();
                        assert_eq!(self.b[self.i], b':');
                        self.i += 1;
                        members.push((k, self.value()));
                        self.ws();
                        self.i += 1;
                        if self.b[self.i - 1] == b'}' {
                            break;
                        }
                    }
                }
                V::Obj(members)
            }
            _ => {
                let start = self.i;
                while matches!(self.b.get(self.i), Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')) {
                    self.i += 1;
                }
                V::Num(self.s[start..self.i].to_string())
            }
        };
        N { v, end: self.i }
    }

    fn hex(&mut self) -> u32 {
        let h = u32::from_str_radix(&self.s[self.i..self.i + 4], 16).unwrap();
        self.i += 4;
        h
    }

    fn string(&mut self) -> String {
        assert_eq!(self.b[self.i], b'"');
        self.i += 1;
        let mut out = String::new();
        loop {
            let c = self.s[self.i..].chars().next().unwrap();
            self.i += c.len_utf8();
            match c {
                '"' => return out,
                '\\' => {
                    let e = self.b[self.i];
                    self.i += 1;
                    out.push(match e {
                        b'n' => '\n',
                        b't' => '\t',
                        b'r' => '\r',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'u' => {
                            let h = self.hex();
                            if (0xd800..0xdc00).contains(&h) && self.s[self.i..].starts_with("\\u") {
                                let save = self.i;
                                self.i += 2;
                                let l = self.hex();
                                if (0xdc00..0xe000).contains(&l) {
                                    char::from_u32(0x10000 + ((h - 0xd800) << 10) + (l - 0xdc00)).unwrap()
                                } else {
                                    self.i = save;
                                    '\u{fffd}'
                                }
                            } else {
                                char::from_u32(h).unwrap_or('\u{fffd}')
                            }
                        }
                        other => char::from(other),
                    });
                }
                c => out.push(c),
            }
        }
    }
}

fn read(text: &str) -> N {
    let mut r = Reader { b: text.as_bytes(), s: text, i: 0 };
    let n = r.value();
    r.ws();
    assert_eq!(r.i, text.len(), "trailing text in {text:?}");
    n
}

// ---------------------------------------------------------------------------------------
// Containment.

fn segment(path: &str, key: &str) -> String {
    format!("{path}/{}", key.replace('~', "~0").replace('/', "~1"))
}

struct Cut<'a> {
    at: usize,
    uncertain: &'a [Uncertain],
    /// Salvage reported a truncation (the top-level container was left open).
    truncated: bool,
    /// The output is a top-level number the cut text left unreported: `12` of `123` is
    /// itself strict JSON (nothing says it was cut), and `0.` of `0.5` is cut back to `0`
    /// with a [`FixKind::TruncatedToken`](toolfix::salvage::FixKind) but no
    /// [`Truncation`](toolfix::salvage::Truncation), which only describes text that ended
    /// with an array, object or string open. Either way it must be a prefix of the original.
    top_number: bool,
}

impl Cut<'_> {
    fn listed(&self, ptr: &str) -> bool {
        self.uncertain.iter().any(|u| u.pointer == ptr)
    }
}

/// Check that `w` (salvaged from the cut text) is contained in `v` (the original) at `ptr`.
fn contained(v: &N, w: &N, ptr: &str, cut: &Cut<'_>, errs: &mut Vec<String>) {
    // The original value was not complete in the cut text: it may differ if reported.
    let open = v.end > cut.at;
    let may_differ = open && cut.listed(ptr);
    match (&v.v, &w.v) {
        (V::Obj(vm), V::Obj(wm)) => {
            // A string that never closed may have been cut (`{"a": "x, b: 1}` of
            // `{"a": "x, b: 1}"}`) or lack its closing quote: salvage reads what follows it
            // as members, and reports the string uncertain. Those members may be ones the
            // original did not hold.
            let split = open
                && wm.iter().any(|(k, _)| {
                    cut.uncertain.iter().any(|u| u.kind == UncertainKind::String && u.pointer == segment(ptr, k))
                });
            if wm.len() > vm.len() && !split {
                errs.push(format!("{ptr:?}: {} members, the original has {}", wm.len(), vm.len()));
            }
            for (i, (k, wv)) in wm.iter().enumerate() {
                if wm[..i].iter().any(|(k2, _)| k2 == k) {
                    errs.push(format!("{ptr:?}: key {k:?} twice"));
                }
                match vm.iter().find(|(vk, _)| vk == k) {
                    Some((_, vv)) => contained(vv, wv, &segment(ptr, k), cut, errs),
                    None if split => {}
                    None => errs.push(format!("{ptr:?}: invented key {k:?}")),
                }
            }
            // The top-level container is open whenever salvage reports a truncation.
            if wm.len() < vm.len() && !(may_differ || (open && ptr.is_empty() && cut.truncated)) {
                errs.push(format!("{ptr:?}: members dropped, not reported uncertain"));
            }
        }
        (V::Arr(va), V::Arr(wa)) => {
            if wa.len() > va.len() {
                errs.push(format!("{ptr:?}: {} elements, the original has {}", wa.len(), va.len()));
            }
            for (i, (vv, wv)) in va.iter().zip(wa).enumerate() {
                contained(vv, wv, &format!("{ptr}/{i}"), cut, errs);
            }
            if wa.len() < va.len() && !(may_differ || (open && ptr.is_empty() && cut.truncated)) {
                errs.push(format!("{ptr:?}: elements dropped, not reported uncertain"));
            }
        }
        (V::Str(a), V::Str(b)) if a != b => {
            if !may_differ {
                errs.push(format!("{ptr:?}: string {b:?} for {a:?}, not reported uncertain"));
            } else if !a.starts_with(b.as_str()) {
                errs.push(format!("{ptr:?}: string {b:?} is no prefix of {a:?}"));
            }
        }
        (V::Num(a), V::Num(b)) if a != b => {
            let top = ptr.is_empty() && cut.top_number;
            if !(may_differ || (open && top)) {
                errs.push(format!("{ptr:?}: number {b} for {a}, not reported uncertain"));
            } else if !a.starts_with(b.as_str()) {
                errs.push(format!("{ptr:?}: number {b} is no prefix of {a}"));
            }
        }
        // `null` for a value cut to nothing (`{"a": ` or `{"a": tr`).
        (_, V::Null) if v.v != V::Null && !may_differ => {
            errs.push(format!("{ptr:?}: null for {:?}, not reported uncertain", v.v));
        }
        (_, V::Null) => {}
        (a, b) if a != b => errs.push(format!("{ptr:?}: {b:?} for {a:?}")),
        _ => {}
    }
}

/// The value at JSON pointer `ptr` in `n`.
fn at<'a>(n: &'a N, ptr: &str) -> Option<&'a N> {
    if ptr.is_empty() {
        return Some(n);
    }
    let rest = ptr.strip_prefix('/')?;
    let (seg, tail) = match rest.find('/') {
        Some(p) => (&rest[..p], &rest[p..]),
        None => (rest, ""),
    };
    let key = seg.replace("~1", "/").replace("~0", "~");
    match &n.v {
        V::Obj(m) => at(&m.iter().find(|(k, _)| *k == key)?.1, tail),
        V::Arr(a) => at(a.get(key.parse::<usize>().ok()?)?, tail),
        _ => None,
    }
}

/// Every failure of the property for `text` cut at `i`, as messages.
fn cut_errors(text: &str, i: usize) -> Vec<String> {
    let v = read(text);
    let prefix = &text[..i];
    let Ok(out) = salvage(prefix) else { return Vec::new() };
    let mut errs = Vec::new();
    if serde_json::from_str::<serde_json::Value>(out.text()).is_err() {
        return vec![format!("not strict JSON: {:?}", out.text())];
    }
    let again = salvage(out.text()).unwrap();
    if !again.is_untouched() || again.text() != out.text() {
        errs.push(format!("second pass changed {:?} to {:?}", out.text(), again.text()));
    }
    let w = read(out.text());
    let uncertain = out.truncation().map_or(&[][..], |t| t.uncertain());
    for u in uncertain {
        if u.kept && at(&w, &u.pointer).is_none() {
            errs.push(format!("uncertain {:?} kept, but not in the output", u.pointer));
        }
        if u.span.start > u.span.end || u.span.end > i {
            errs.push(format!("uncertain {:?} has span {:?} past the cut", u.pointer, u.span));
        }
        // A value left out is not in the output (a key cut off names its object).
        if !u.kept && u.kind != UncertainKind::Key && at(&w, &u.pointer).is_some() {
            errs.push(format!("uncertain {:?} left out, but in the output", u.pointer));
        }
    }
    let cut = Cut {
        at: i,
        uncertain,
        truncated: out.truncation().is_some(),
        top_number: out.truncation().is_none() && (out.is_untouched() || out.is_truncated()),
    };
    contained(&v, &w, "", &cut, &mut errs);
    if !errs.is_empty() {
        errs.push(format!("cut {prefix:?} salvaged to {:?}, uncertain {uncertain:?}", out.text()));
    }
    errs
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("CUT_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(2000), ..ProptestConfig::default() })]

    /// Every cut of a valid document salvages (or fails) to a value the document held.
    #[test]
    fn a_cut_document_holds_only_what_the_original_held(text in rendered(), picks in prop::collection::vec(any::<prop::sample::Index>(), 120)) {
        // Every cut of a short document; of a long one (salvage is linear, the cuts are
        // not), the cuts near its end and a sample of the others.
        let all: Vec<usize> = (1..text.len()).filter(|&i| text.is_char_boundary(i)).collect();
        let cuts: Vec<usize> = if all.len() <= 400 {
            all
        } else {
            let mut some: Vec<usize> = picks.iter().map(|p| all[p.index(all.len())]).collect();
            some.extend(&all[all.len() - 40..]);
            some
        };
        for i in cuts {
            let errs = cut_errors(&text, i);
            prop_assert!(errs.is_empty(), "{}\noriginal {:?}", errs.join("\n"), text);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Regressions: exact input → exact output.

#[track_caller]
fn cut_to(input: &str, want: &str) {
    let out = salvage(input).unwrap_or_else(|e| panic!("{input:?}: {}", e.report()));
    assert_eq!(out.text(), want, "input {input:?}");
}

#[test]
fn the_reader_reads_what_it_is_given() {
    let n = read(r#"{"a\u00e9\ud83d\ude00": [1, -2.5e+3, "x\"\/"], "b": null}"#);
    let V::Obj(m) = &n.v else { panic!("{n:?}") };
    assert_eq!(m[0].0, "aé😀");
    assert_eq!(at(&n, "/aé😀/1").unwrap().v, V::Num("-2.5e+3".into()));
    assert_eq!(at(&n, "/aé😀/2").unwrap().v, V::Str("x\"/".into()));
    assert!(cut_errors(r#"{"a": [1, 22]}"#, 11).is_empty());
    cut_to(r#"{"a": [1, 2"#, r#"{"a": [1, 2]}"#);
}

/// A complete string then a literal cut off: the quote did close the string (it was
/// taken for an inner quote, and the string ran to the cut: `["\",n"]`).
#[test]
fn a_literal_cut_after_a_string_is_not_part_of_it() {
    cut_to(r#"["",n"#, r#"[""]"#);
    cut_to(r#"["a", tr"#, r#"["a" ]"#);
    cut_to(r#"["a", fals"#, r#"["a" ]"#);
}

/// The first half of a surrogate pair at the cut is half a character: dropped, not
/// replaced by U+FFFD (which the original did not hold).
#[test]
fn half_a_surrogate_pair_at_the_cut_is_dropped() {
    cut_to(r#"{"":"\ud83d"#, r#"{"":""}"#);
    cut_to(r#"{"":"a\ud83d\u"#, r#"{"":"a"}"#);
    cut_to(r#"{"":"a\ud83d\ude0"#, r#"{"":"a"}"#);
    cut_to(r#"["\ud83d\ude00"#, r#"["\ud83d\ude00"]"#);
    // A lone surrogate in complete text is still replaced.
    cut_to(r#"["\ud83d", 1"#, r#"["\ufffd", 1]"#);
}

/// A top-level string cut off holds its fences as text: the fence body was returned as if
/// it were the document (`"see ```[1]``` o` gave `[1]`).
#[test]
fn fences_inside_a_cut_string_are_text() {
    cut_to("\"\\n```{", "\"\\n```{\"");
    cut_to("\"see ```[1]``` o", "\"see ```[1]``` o\"");
    cut_to("\"```json\\n{\\\"a\\\": 1}\\n```", "\"```json\\n{\\\"a\\\": 1}\\n```\"");
    // A reply that quotes a word before its fence keeps the fence.
    cut_to("\"Sure\" here:\n```json\n{\"a\": 1}\n```", "{\"a\": 1}");
}

/// A key longer than the parser's lookahead after a string value: the value's closing
/// quote was taken for an inner quote, and the value swallowed the key
/// (`{"a": "x\", \"kkk…"}`, even with nothing reported uncertain).
#[test]
fn a_long_key_does_not_reopen_the_value_before_it() {
    let k = "k".repeat(300);
    cut_to(&format!(r#"{{"a": "x", "{k}"#), r#"{"a": "x" }"#);
    cut_to(&format!(r#"{{"a": "x", "{k}""#), r#"{"a": "x" }"#);
    cut_to(&format!(r#"{{"a": "x", "{k}":"#), r#"{"a": "x" }"#);
    cut_to(&format!(r#"{{"a": "x", "{k}": "v"#), &format!(r#"{{"a": "x", "{k}": "v"}}"#));
    cut_to(&format!(r#"{{"a": "x", "{k}": 1, "b": 2"#), &format!(r#"{{"a": "x", "{k}": 1, "b": 2}}"#));
}
