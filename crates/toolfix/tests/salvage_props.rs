#![expect(clippy::unwrap_used, reason = "tests")]
//! Properties of `salvage` over generated JSON, damaged JSON and arbitrary text.

use proptest::prelude::*;
use serde_json::Value;
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

fn rendered() -> impl Strategy<Value = String> {
    (json_value(), any::<bool>()).prop_map(|(v, pretty)| {
        if pretty { serde_json::to_string_pretty(&v).unwrap() } else { serde_json::to_string(&v).unwrap() }
    })
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
        // Places between tokens: next to a structural byte outside strings.
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
