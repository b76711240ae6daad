#![expect(clippy::unwrap_used, reason = "tests")]
//! Properties of `salvage` over generated JSON, damaged JSON and arbitrary text.

use proptest::prelude::*;
use serde_json::Value;
use std::fmt::Write as _;
use toolfix::salvage::salvage;

/// Arbitrary JSON values (serde_json), rendered compact or pretty.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e15f64..1e15).prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::String),
        "[a-z\"\\\\/\n\t{}\\[\\]:,' ]{0,10}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("\\PC{0,8}", inner), 0..6).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// True when a string in JSON text `t` holds a UTF-16 surrogate escape that is not half of
/// a pair (`"\ud800"`, `"\udc00x"`), which no Rust string can hold.
fn has_lone_surrogate(t: &str) -> bool {
    let b = t.as_bytes();
    let mut i = 0;
    let mut in_string = false;
    // The last escape was a high surrogate: only a low one may follow.
    let mut high = false;
    while i < b.len() {
        let c = b[i];
        if !in_string {
            in_string = c == b'"';
            i += 1;
            continue;
        }
        let (code, len) = match (c, b.get(i + 1)) {
            (b'\\', Some(b'u')) => (t.get(i + 2..i + 6).and_then(|h| u16::from_str_radix(h, 16).ok()), 6),
            (b'\\', _) => (None, 2),
            _ => (None, 1),
        };
        match code {
            Some(0xD800..=0xDBFF) if !high => high = true,
            Some(0xDC00..=0xDFFF) if high => high = false,
            Some(0xD800..=0xDFFF) => return true,
            _ if high => return true,
            _ => {}
        }
        in_string = c != b'"';
        i += len;
    }
    high
}

#[test]
fn lone_surrogates_are_found() {
    for (t, lone) in [
        (r#""\ud800""#, true),
        (r#""\udc00""#, true),
        (r#""\ud800x""#, true),
        (r#""\ud800\ud800""#, true),
        (r#""\ud83d\ude00""#, false),
        (r#""\\ud800""#, false),
        (r#"[1e999, "\ud8000"]"#, true),
        (r#"{"a": "\u0041"}"#, false),
        (r"\ud800", false),
    ] {
        assert_eq!(has_lone_surrogate(t), lone, "{t}");
    }
}

fn rendered() -> impl Strategy<Value = String> {
    (json_value(), any::<bool>()).prop_map(|(v, pretty)| {
        if pretty { serde_json::to_string_pretty(&v).unwrap() } else { serde_json::to_string(&v).unwrap() }
    })
}

/// Places between the tokens of valid JSON `text`: next to a structural byte outside
/// strings, and both ends.
fn between_tokens(text: &str) -> Vec<usize> {
    let b = text.as_bytes();
    let mut places = vec![0, b.len()];
    let mut in_string = false;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' if in_string => i += 1,
            b'"' => {
                if in_string {
                    places.push(i + 1);
                } else {
                    places.push(i);
                }
                in_string = !in_string;
            }
            b'{' | b'}' | b'[' | b']' | b',' | b':' if !in_string => places.extend([i, i + 1]),
            _ => {}
        }
        i += 1;
    }
    places.sort_unstable();
    places.dedup();
    places
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Text serde_json accepts comes back untouched and equal.
    #[test]
    fn valid_json_is_untouched(text in rendered()) {
        let out = salvage(&text).unwrap();
        prop_assert!(out.is_untouched(), "fixes on valid input: {:?}", out.fixes());
        prop_assert_eq!(out.text(), text.as_str());
    }

    /// The lenient parser alone (deep limit off the fast path) agrees on valid input.
    #[test]
    fn lenient_path_leaves_valid_json_alone(text in rendered()) {
        let limits = toolfix::Limits::default().with_max_depth(64);
        let out = toolfix::salvage::salvage_with(&text, &limits).unwrap();
        prop_assert!(out.is_untouched(), "fixes on valid input: {:?}", out.fixes());
    }

    /// Whatever the input, a result is strict JSON, and salvage is idempotent.
    #[test]
    fn output_is_strict_and_idempotent(text in "\\PC{0,80}") {
        if let Ok(out) = salvage(&text) {
            let parsed = serde_json::from_str::<Value>(out.text());
            prop_assert!(parsed.is_ok(), "not strict JSON: {:?} from {:?}", out.text(), text);
            let again = salvage(out.text()).unwrap();
            prop_assert!(again.is_untouched(), "second pass fixed {:?}", again.fixes());
        }
    }

    /// Damage from the alphabet of real breakage: same properties.
    #[test]
    fn damaged_json_output_is_strict(text in rendered(), cuts in prop::collection::vec((any::<prop::sample::Index>(), 0usize..12), 1..4)) {
        const DAMAGE: [&str; 12] = ["'", ",", "}", "]", "\"", "True", "//c\n", "...", "\n", "{", "[", ":"];
        let mut s = text.clone();
        for (at, what) in cuts {
            let mut i = at.index(s.len() + 1);
            while !s.is_char_boundary(i) { i -= 1; }
            s.insert_str(i, DAMAGE[what]);
        }
        if let Ok(out) = salvage(&s) {
            prop_assert!(serde_json::from_str::<Value>(out.text()).is_ok(), "not strict JSON: {:?} from {:?}", out.text(), s);
            let again = salvage(out.text()).unwrap();
            prop_assert!(again.is_untouched(), "second pass fixed {:?} in {:?}", again.fixes(), out.text());
        }
    }

    /// Comments holding commas and brackets between the tokens, the text then cut
    /// anywhere (a cut key or a placeholder drops its member, and the comma before it
    /// must be the one outside the comments): the output is strict JSON, idempotent.
    #[test]
    fn comments_holding_commas_then_a_cut_give_strict_json(
        text in rendered(),
        picks in prop::collection::vec((any::<prop::sample::Index>(), 0usize..6), 1..5),
        cut in any::<prop::sample::Index>(),
        tail in prop::sample::select(vec!["", "\"k", "k", "\"k\": ...", "...", ", \"k\": ...}"]),
    ) {
        const COMMENTS: [&str; 6] = ["#,\n", "// a, b\n", "/* , */", "# }, ]\n", "/*,*/,", " // x,\n,"];
        let places = between_tokens(&text);
        let mut chosen: Vec<(usize, &str)> =
            picks.iter().map(|(at, c)| (places[at.index(places.len())], COMMENTS[*c])).collect();
        chosen.sort_unstable();
        let mut damaged = String::new();
        let mut copied = 0;
        for (at, c) in chosen {
            damaged.push_str(&text[copied..at]);
            damaged.push_str(c);
            copied = at;
        }
        damaged.push_str(&text[copied..]);
        let mut at = cut.index(damaged.len() + 1);
        while !damaged.is_char_boundary(at) {
            at -= 1;
        }
        damaged.truncate(at);
        damaged.push_str(tail);
        if let Ok(out) = salvage(&damaged) {
            prop_assert!(serde_json::from_str::<Value>(out.text()).is_ok(), "not strict JSON: {:?} from {:?}", out.text(), damaged);
            let again = salvage(out.text()).unwrap();
            prop_assert!(again.is_untouched(), "second pass fixed {:?} in {:?}", again.fixes(), out.text());
        }
    }

    /// The strict pass agrees with serde_json: text comes back untouched exactly when
    /// serde_json reads it and holds no lone surrogate escape (generated JSON, damaged
    /// JSON, and text from JSON's alphabet),
    /// and the duplicate-key report of a salvage is the one of its text.
    #[test]
    fn the_strict_pass_agrees_with_serde_json(
        text in rendered(),
        cuts in prop::collection::vec((any::<prop::sample::Index>(), 0usize..16), 0..3),
        noise in "[\\[\\]{}\",: 0-9eE.+\\-tfnrul\\\\/ud8]{0,24}",
    ) {
        const DAMAGE: [&str; 16] = ["'", ",", "}", "]", "\"", "\\", "\\u", "\\ud800", "\\udc00", "0", ".", "e", "-", "\u{1}", " ", "\"a\": 1"];
        let mut s = text.clone();
        for (at, what) in cuts {
            let mut i = at.index(s.len() + 1);
            while !s.is_char_boundary(i) { i -= 1; }
            s.insert_str(i, DAMAGE[what]);
        }
        for t in [s.as_str(), noise.as_str()] {
            // JSON text allows numbers past f64 (`1e400`), which a `Value` cannot hold; a lone
            // surrogate escape is the one valid text salvage changes.
            // (serde_json names only the first error: a number out of range before the
            // surrogate hides it, so the escapes are read here too.)
            let lone = has_lone_surrogate(t) || serde_json::from_str::<Value>(t).err().is_some_and(|e| { let m = e.to_string(); m.contains("surrogate") || m.contains("hex escape") });
            let serde_ok = serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok() && !lone;
            let out = salvage(t);
            let untouched = out.as_ref().is_ok_and(|o| o.is_untouched() && o.text() == t);
            prop_assert_eq!(untouched, serde_ok, "{:?}", t);
            if let Ok(out) = out {
                prop_assert_eq!(out.duplicate_keys(), toolfix::salvage::duplicate_keys(out.text()), "{:?}", t);
            }
        }
    }

    /// Keys written in every style (double, single, no quotes, escapes, typographic) with
    /// repeats: the duplicate-key report of a salvage, which the parser fills as it reads,
    /// is the one a parse of its text gives.
    #[test]
    fn repeated_keys_in_any_style_are_reported(
        members in prop::collection::vec((0usize..4, 0usize..6, 0u8..3, any::<bool>()), 0..24),
    ) {
        const KEYS: [&str; 4] = ["a", "b", "k1", "x y"];
        let mut text = String::from("{");
        for (n, (key, style, value, nested)) in members.iter().enumerate() {
            if n > 0 {
                text.push_str(", ");
            }
            let k = KEYS[*key];
            let written = match style {
                0 => format!("\"{k}\""),
                1 => format!("'{k}'"),
                2 if !k.contains(' ') => k.to_owned(),
                3 => format!("\"\\u{:04x}{}\"", u32::from(k.as_bytes()[0]), &k[1..]),
                4 => format!("\u{201c}{k}\u{201d}"),
                _ => format!("\"{k}\""),
            };
            if *nested {
                let _ = write!(text, "{written}: {{{written}: {value}, {written}: True}}");
            } else {
                let _ = write!(text, "{written}: {value}");
            }
        }
        text.push('}');
        let out = salvage(&text).unwrap();
        prop_assert_eq!(out.duplicate_keys(), toolfix::salvage::duplicate_keys(out.text()), "{}", text);
    }

    /// Every prefix of valid JSON repairs to strict JSON or errors, without panicking.
    #[test]
    fn truncations_repair_or_error(text in rendered(), at in any::<prop::sample::Index>()) {
        let mut i = at.index(text.len() + 1);
        while !text.is_char_boundary(i) { i -= 1; }
        let cut = &text[..i];
        if let Ok(out) = salvage(cut) {
            prop_assert!(serde_json::from_str::<Value>(out.text()).is_ok(), "not strict JSON: {:?} from {:?}", out.text(), cut);
        }
    }

    /// Issue 24 §5: Unicode spaces and format characters between the tokens of valid JSON
    /// are removed, each reported with its span, and nothing else changes: never read as
    /// a key, a value or a part of one.
    #[test]
    fn invisible_characters_between_tokens_change_nothing(
        text in rendered(),
        picks in prop::collection::vec((any::<prop::sample::Index>(), 0usize..12), 1..6),
    ) {
        const INVISIBLE: [char; 12] = [
            '\u{a0}', '\u{200b}', '\u{feff}', '\u{2060}', '\u{180e}', '\u{3000}', '\u{202f}', '\u{ad}',
            '\u{2028}', '\u{200e}', '\u{1680}', '\u{e0020}',
        ];
        let places = between_tokens(&text);
        let mut chosen: Vec<(usize, char)> =
            picks.iter().map(|(at, c)| (places[at.index(places.len())], INVISIBLE[*c])).collect();
        chosen.sort_unstable();
        let mut damaged = String::new();
        let mut spans = Vec::new();
        let mut copied = 0;
        for (at, c) in chosen {
            damaged.push_str(&text[copied..at]);
            let start = damaged.len();
            damaged.push(c);
            spans.push((start, damaged.len()));
            copied = at;
        }
        damaged.push_str(&text[copied..]);
        let out = salvage(&damaged).unwrap();
        let want: Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(serde_json::from_str::<Value>(out.text()).unwrap(), want, "{:?}", damaged);
        for f in out.fixes() {
            prop_assert_eq!(f.kind, toolfix::salvage::FixKind::InvisibleCharacter, "{:?}: {:?}", damaged, out.fixes());
        }
        // Each character is reported (neighbours may be reported together).
        for (start, end) in spans {
            prop_assert!(
                out.fixes().iter().any(|f| f.span.start <= start && end <= f.span.end),
                "{:?}: {}..{} not reported in {:?}", damaged, start, end, out.fixes()
            );
        }
    }
}
