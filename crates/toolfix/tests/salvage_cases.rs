#![expect(clippy::panic, reason = "tests")]
//! One row per repair the issue asks for: input, the repaired text, and the fix kinds
//! reported. Also the inputs that must be refused.

use toolfix::salvage::{FixKind as K, salvage};

#[track_caller]
fn check(input: &str, want: &str, kinds: &[K]) {
    let out = match salvage(input) {
        Ok(out) => out,
        Err(e) => panic!("{input:?}: {}", e.report()),
    };
    assert_eq!(out.text(), want, "input {input:?}");
    let mut got: Vec<K> = out.fixes().iter().map(|f| f.kind).collect();
    got.dedup();
    let mut got_set = got.clone();
    got_set.sort();
    got_set.dedup();
    let mut want_set = kinds.to_vec();
    want_set.sort();
    want_set.dedup();
    assert_eq!(got_set, want_set, "fix kinds for {input:?}: {:?}", out.fixes());
    assert!(serde_json::from_str::<serde_json::Value>(out.text()).is_ok());
    // Every fix span lies inside the input.
    for f in out.fixes() {
        assert!(f.span.end <= input.len() && f.span.start <= f.span.end, "{f:?}");
    }
}

#[test]
fn fences_prose_and_wrappers() {
    check("```json\n{\"a\": 1}\n```", "{\"a\": 1}", &[K::CodeFence]);
    check("```\n[1, 2]\n```", "[1, 2]", &[K::CodeFence]);
    check("Here you go:\n```json\n{\"a\": 1}\n```\nAnything else?", "{\"a\": 1}", &[K::CodeFence, K::SurroundingProse]);
    check("Sure! {\"a\": 1} Hope that helps.", "{\"a\": 1}", &[K::SurroundingProse]);
    check("callback({\"a\": 1});", "{\"a\": 1}", &[K::JsonpWrapper]);
    check("{\"a\": 1}```", "{\"a\": 1}", &[K::CodeFence]);
    check(
        "{\"id\": ObjectId(\"507f1f77\"), \"n\": NumberLong(42)}",
        "{\"id\": \"507f1f77\", \"n\": 42}",
        &[K::MongoWrapper],
    );
    check("{\"at\": ISODate(\"2024-01-01T00:00:00Z\")}", "{\"at\": \"2024-01-01T00:00:00Z\"}", &[K::MongoWrapper]);
}

#[test]
fn comments() {
    check("{\"a\": 1, // one\n\"b\": 2}", "{\"a\": 1, \n\"b\": 2}", &[K::Comment]);
    check("{\"a\": /* x */ 1}", "{\"a\":  1}", &[K::Comment]);
    check("{\"a\": 1 # py\n}", "{\"a\": 1 \n}", &[K::Comment]);
    check("[1, <!-- c --> 2]", "[1,  2]", &[K::Comment]);
    check("{\"url\": \"http://x.com/a\"}  ", "{\"url\": \"http://x.com/a\"}  ", &[]);
}

#[test]
fn commas_and_colons() {
    check("[1, 2, ]", "[1, 2 ]", &[K::TrailingComma]);
    check("{\"a\": 1,}", "{\"a\": 1}", &[K::TrailingComma]);
    check("[, 1]", "[ 1]", &[K::LeadingComma]);
    check("[1,, 2]", "[1, 2]", &[K::DoubledComma]);
    check("{\"a\": 1 \"b\": 2}", "{\"a\": 1, \"b\": 2}", &[K::MissingComma]);
    check("[1 2 3]", "[1, 2, 3]", &[K::MissingComma]);
    check("{\"a\" 1}", "{\"a\": 1}", &[K::MissingColon]);
    check("{\"a\" = 1}", "{\"a\" : 1}", &[K::MissingColon]);
}

#[test]
fn quotes() {
    check("{'a': 'b'}", "{\"a\": \"b\"}", &[K::SingleQuotes]);
    check("{'a': 'say \"hi\"'}", "{\"a\": \"say \\\"hi\\\"\"}", &[K::SingleQuotes]);
    check("{'a': 'it\\'s'}", "{\"a\": \"it's\"}", &[K::SingleQuotes]);
    check("{“a”: “b”}", "{\"a\": \"b\"}", &[K::SmartQuotes]);
    check("{‘a’: ‘b’}", "{\"a\": \"b\"}", &[K::SmartQuotes]);
    check("{`a`: `b`}", "{\"a\": \"b\"}", &[K::BacktickQuotes]);
    check("{a: 1, b_c: 2, $d: 3}", "{\"a\": 1, \"b_c\": 2, \"$d\": 3}", &[K::UnquotedKey]);
    check("{\"a\": hello world}", "{\"a\": \"hello world\"}", &[K::UnquotedString]);
    check("{\"a\": \"b\" + \"c\"}", "{\"a\": \"bc\"}", &[K::StringConcatenation]);
}

#[test]
fn literals_and_numbers() {
    check("{\"a\": True, \"b\": False, \"c\": None}", "{\"a\": true, \"b\": false, \"c\": null}", &[K::PythonLiteral]);
    check("[undefined, NaN, Infinity, -Infinity]", "[null, null, null, null]", &[K::JsLiteral]);
    check("[TRUE, Null]", "[true, null]", &[K::LiteralCase]);
    check("[+1, .5, 5., 0x1F, 1_000]", "[1, 0.5, 5, 31, 1000]", &[K::NumberFormat]);
    check("[1.0, 12345678901234567890, -0.0, 1e300]", "[1.0, 12345678901234567890, -0.0, 1e300]", &[]);
    // Valid JSON, untouched, though no f64 holds it: only `to_value` refuses it.
    let out = salvage("[1e400]").unwrap();
    assert!(out.is_untouched() && out.to_value().is_err());
    check("{\"v\": 1/3, \"id\": 57ee-45}", "{\"v\": \"1/3\", \"id\": \"57ee-45\"}", &[K::NumberAsString]);
    check("{\"zip\": 02134}", "{\"zip\": \"02134\"}", &[K::NumberAsString]);
}

#[test]
fn strings() {
    check("{\"a\": \"line\nbreak\ttab\"}", "{\"a\": \"line\\nbreak\\ttab\"}", &[K::ControlCharacter]);
    check("{\"re\": \"\\d+\\s\"}", "{\"re\": \"\\\\d+\\\\s\"}", &[K::InvalidEscape]);
    check("{\"a\": \"\\x41\\v\"}", "{\"a\": \"\\u0041\\u000b\"}", &[K::InvalidEscape]);
    check("{\"a\": \"\\ud800\"}", "{\"a\": \"\\ufffd\"}", &[K::LoneSurrogate]);
    check("{\"a\": \"\\ud83d\\ude80\"}", "{\"a\": \"\\ud83d\\ude80\"}", &[]);
    check(
        "{\"html\": \"<a href=\"x\">y</a>\", \"ok\": true}",
        "{\"html\": \"<a href=\\\"x\\\">y</a>\", \"ok\": true}",
        &[K::InnerQuote],
    );
    check(
        "{\"city\": \"New York, \"zip\": \"10001\"}",
        "{\"city\": \"New York\", \"zip\": \"10001\"}",
        &[K::MissingQuote],
    );
    check(
        "{\"a\": \"caf\u{e9} \u{1F469}\u{200D}\u{1F4BB}\"}",
        "{\"a\": \"caf\u{e9} \u{1F469}\u{200D}\u{1F4BB}\"}",
        &[],
    );
}

#[test]
fn brackets() {
    check("{\"a\": [1, 2}", "{\"a\": [1, 2]}", &[K::MismatchedBracket]);
    check("[1, 2]]", "[1, 2]", &[K::ExtraClosingBracket]);
    check("[{\"a\": 1}}, {\"b\": 2}]", "[{\"a\": 1}, {\"b\": 2}]", &[K::ExtraClosingBracket]);
    check("{\"a\": (1, 2), \"b\": (3)}", "{\"a\": [1, 2], \"b\": 3}", &[K::TupleOrSet]);
    check("{'x', 'y'}", "[\"x\", \"y\"]", &[K::TupleOrSet, K::SingleQuotes]);
    check("[1, 2, ...]", "[1, 2 ]", &[K::Ellipsis, K::TrailingComma]);
    check("{\"a\": 1}, \"b\": 2}", "{\"a\": 1, \"b\": 2}", &[K::PrematureClose]);
}

#[test]
fn escaped_json() {
    check("{\\\"a\\\": 1, \\\"b\\\": \\\"x\\\"}", "{\"a\": 1, \"b\": \"x\"}", &[K::EscapedJson]);
    check("\\\"text\\\"", "\"text\"", &[K::EscapedJson]);
    // A strict JSON string that holds JSON is valid, and stays a string.
    check("\"{\\\"a\\\":1}\"", "\"{\\\"a\\\":1}\"", &[]);
}

#[test]
fn several_values() {
    check("{\"a\": 1}\n{\"a\": 1}", "{\"a\": 1}", &[K::DuplicateValue]);
    check("{\"a\": 1}\n{\"b\": 2}", "[{\"a\": 1},{\"b\": 2}]", &[K::MultipleValues]);
    check("[]{\"a\": 1}", "{\"a\": 1}", &[K::EmptyValueDropped]);
}

#[test]
fn truncation() {
    // Every value that touches the cut is reported as uncertain, with its kind.
    check("{\"a\": \"cut", "{\"a\": \"cut\"}", &[K::UncertainString, K::TruncatedString, K::TruncatedContainer]);
    check("{\"a\": [1, 2", "{\"a\": [1, 2]}", &[K::UncertainContainer, K::UncertainNumber, K::TruncatedContainer]);
    check("{\"a\":", "{}", &[K::UncertainKey, K::TruncatedKey, K::TruncatedContainer]);
    check(
        "{\"a\": 1, \"b\": tr",
        "{\"a\": 1 }",
        &[K::UncertainLiteral, K::TruncatedKey, K::TrailingComma, K::TruncatedContainer],
    );
    check(
        "{\"a\": 1, \"b",
        "{\"a\": 1 }",
        &[K::UncertainKey, K::TruncatedKey, K::TrailingComma, K::TruncatedContainer],
    );
    check("[1, tr", "[1 ]", &[K::UncertainLiteral, K::TruncatedToken, K::TrailingComma, K::TruncatedContainer]);
    check("[1.5e", "[1.5]", &[K::UncertainNumber, K::TruncatedToken, K::TruncatedContainer]);
    check(
        "{\"a\": \"x\\",
        "{\"a\": \"x\"}",
        &[K::UncertainString, K::TruncatedToken, K::TruncatedString, K::TruncatedContainer],
    );
    // Only the top-level closer missing after a complete value: closed, nothing uncertain.
    check("{\"a\": [1, \"x\"]", "{\"a\": [1, \"x\"]}", &[K::TruncatedContainer]);
    check("[\"x\", true", "[\"x\", true]", &[K::TruncatedContainer]);
    // An array left open inside may lack elements.
    check("{\"a\": [true", "{\"a\": [true]}", &[K::UncertainContainer, K::TruncatedContainer]);
    check("{\"a\": true", "{\"a\": true}", &[K::TruncatedContainer]);
    let out = salvage("{\"path\": \"/tmp/a\", \"content\": \"hello wor").unwrap();
    assert!(out.has_truncated_string());
    let out = salvage("{\"a\": [1, 2").unwrap();
    assert!(out.is_truncated() && !out.has_truncated_string());
}

#[test]
fn refusals() {
    for input in ["", "  ", "I cannot do that.", "]", "}", "\"", "tru", "True"] {
        assert!(salvage(input).is_err(), "{input:?} should be refused");
    }
    let err = salvage("I cannot do that.").unwrap_err();
    assert_eq!(err.kind(), toolfix::ErrorKind::NoJson);
    assert_eq!((err.line(), err.column()), (Some(1), Some(1)));
}

/// Inputs that broke an earlier version (found by the property tests): each must give
/// strict JSON that a second salvage leaves alone.
#[test]
fn regressions() {
    for input in [
        ",[null,{\"\":-\"1000000000}]", // a comma inserted before a key that was then dropped
        "[\n  [[{]\n]'",                // an element cut to nothing kept its inserted comma
        "True[\n  [\n    null,\n    null...\n  ]\n]", // an ellipsis glued to the last element
        "[//c\n][",                     // a dropped duplicate kept the closer inserted at its end
        "[{\"\":[-1]1000000000000,null,null],\"x\":\"\"}]", // a typo closer left a trailing comma
        "``{0,",                        // an insertion ordered after a replacement at one place
        "(g1}",                         // a typo closer of a tuple was both replaced and deleted
        "[1,2 …,1,2 …, ]2\n`",          // `…` after an element got a comma inserted before it, left behind
        "{\"\"ISODate(Date(",           // wrappers cut before their value left the key without one
        "[1 ObjectId(",                 // and an element cut to nothing kept its inserted comma
        "[1, ObjectId( ",               // or its written one
        "{b: ...}",                     // an unquoted key's opening quote stayed when its member went
        "{\"\",1:...",                  // (found by fuzzing)
        "{\"\"key\": ...",              // a key with a quote inside was not found back exactly
        "{\"\".\".,\"c\"...",           // nor was `".,"c"`; and a lone `.` became `0`
        "{c\"\"+//,\n\u{201c}:\"a",     // a lost quote looked for before the comma of a joined comment
    ] {
        let out = salvage(input).unwrap();
        assert!(serde_json::from_str::<serde_json::Value>(out.text()).is_ok(), "{input:?} -> {:?}", out.text());
        assert!(salvage(out.text()).unwrap().is_untouched(), "{input:?} -> {:?}", out.text());
    }
    // A sign with no number (`[-]`, found by fuzzing as `[{"":[-]1000…`) is refused.
    assert!(salvage("[{\"\":[-]1000000000000,null,null],\"x\":\"\"}]").is_err());
    // Text then `{\`: an unbalanced mess, not a value built from its fragments.
    assert!(salvage("\u{5e6}\u{5bc}{\\").is_err());
    // `["k": v]` with an unquoted first element: the `{` went after the quote inserted at
    // the key (found by fuzzing); such an element is refused now.
    // A wrapper holds one value: two would be two values where one belongs (fuzzing:
    // `{""ObjectId(b,c` gave `{"":"b","c"}`).
    assert!(salvage("{\"a\": ObjectId(b, c)}").is_err());
    assert!(salvage("{\"\"ObjectId(b,c").is_err());
    // Nor can it hold none (`ISODate()` left `"t": ,`).
    assert!(salvage("{\"t\": ISODate(), \"a\": 1}").is_err());
    assert!(salvage("[\n   ar\"}: 1/3, t \"foo\": \"bar\"ru[\n    fal\n]}").is_err());
}

/// Issue 14 §9: invisible characters outside strings are removed and reported (a zero-width
/// space before a value used to make the value unquoted text); inside strings they stay.
#[test]
fn invisible_characters() {
    check("{\"a\":\u{200b} 1}", "{\"a\": 1}", &[K::InvisibleCharacter]);
    check("{\"a\": [1,\u{2060} 2]}", "{\"a\": [1, 2]}", &[K::InvisibleCharacter]);
    check("{\"a\":\u{200d}\u{200c}true}", "{\"a\":true}", &[K::InvisibleCharacter]);
    check("{\"a\":\u{3000}\"x\u{200b}y\"}", "{\"a\":\"x\u{200b}y\"}", &[K::InvisibleCharacter]);
    check("{\"x\u{200b}\": \"\u{200b}\"}", "{\"x\u{200b}\": \"\u{200b}\"}", &[]);
    // Issue 24 §5: any Unicode space or format character (Zs, Cf) outside strings is
    // removed and reported, and never read as a key or merged into a neighbour.
    check("[\u{200b}\"x\", \u{a0}\"y\"]", "[\"x\", \"y\"]", &[K::InvisibleCharacter]);
    check("{a\u{a0}: 1, b\u{180e}: \u{ad}2}", "{\"a\": 1, \"b\": 2}", &[K::UnquotedKey, K::InvisibleCharacter]);
    check("[true\u{2060}, null\u{feff}]", "[true, null]", &[K::InvisibleCharacter]);
    check("{\"k\": hello\u{3000}}", "{\"k\": \"hello\"}", &[K::UnquotedString, K::InvisibleCharacter]);
    // The zero-width (non-)joiner is part of an identifier (ECMAScript, JSON5).
    check("{a\u{200c}b: 1}", "{\"a\u{200c}b\": 1}", &[K::UnquotedKey]);
}

/// Issue 14 §6: a placeholder where a key would be is dropped and reported, never a key
/// (`{"a": 1, ...}` used to gain a `"..."` key with a `null` value).
#[test]
fn placeholder_is_never_a_key() {
    check("{\"a\": 1, ...}", "{\"a\": 1 }", &[K::Ellipsis, K::TrailingComma]);
    check("{\"a\": 1, \u{2026}, \"b\": 2}", "{\"a\": 1,  \"b\": 2}", &[K::Ellipsis]);
    check("{..., \"a\": 1}", "{ \"a\": 1}", &[K::Ellipsis]);
}

/// Issue 14 §4/§5: `{a 'b'}` is a key and its value with the colon missing; it used to drop
/// `a` as prose and invent `{"b": null}`. Prose before a quoted key is still dropped.
#[test]
fn unquoted_key_then_value() {
    check("{a 'b'}", "{\"a\": \"b\"}", &[K::UnquotedKey, K::MissingColon, K::SingleQuotes]);
    check("{a \"b\", c: 1}", "{\"a\": \"b\", \"c\": 1}", &[K::UnquotedKey, K::MissingColon]);
    check("{\"a\": 1, NOTE \"b\": 2}", "{\"a\": 1, \"b\": 2}", &[K::StrayText]);
}

/// Issue 14 §1: a top-level sequence of scalars is one array, in order, nothing dropped
/// (`1,2,3` used to come back as `1`).
#[test]
fn top_level_sequences() {
    check("1,2,3", "[1,2,3]", &[K::MultipleValues]);
    check("1,1,2", "[1,1,2]", &[K::MultipleValues]);
    check("\"a\", \"b\"", "[\"a\",\"b\"]", &[K::MultipleValues]);
    check("1\n2\n3", "[1,2,3]", &[K::MultipleValues]);
    check("true, false, null", "[true,false,null]", &[K::MultipleValues]);
    check("{\"a\":1}, 2", "[{\"a\":1},2]", &[K::MultipleValues]);
    // Identical documents are still one.
    check("{\"a\":1}\n{\"a\":1}", "{\"a\":1}", &[K::DuplicateValue]);
    // No comma between scalars on one line: the rest is prose.
    check("42 is the answer", "42", &[K::SurroundingProse]);
}

/// Issue 14 §2: a top-level string with an unescaped inch mark is not cut at it.
#[test]
fn top_level_string_with_an_inner_quote() {
    check("\"He is 6'2\" tall\"", "\"He is 6'2\\\" tall\"", &[K::InnerQuote]);
    check("\"a 12\" pipe\"", "\"a 12\\\" pipe\"", &[K::InnerQuote]);
    // Two strings, or a string then prose: the first string, as before.
    check("\"a\" \"b\"", "\"a\"", &[K::SurroundingProse]);
    check("\"abc\" and more prose", "\"abc\"", &[K::SurroundingProse]);
    check("\"x\" tall, \"y\"", "\"x\"", &[K::SurroundingProse]);
}

/// Issue 14 §6: a placeholder where a value would be stands for no value: the member goes
/// (reported), never a `"..."` string.
#[test]
fn placeholder_is_never_a_value() {
    check("{\"a\": 1, \"b\": ..., \"c\": 2}", "{\"a\": 1,  \"c\": 2}", &[K::Ellipsis]);
    check("{\"a\": 1, \"b\": ...}", "{\"a\": 1 }", &[K::Ellipsis, K::TrailingComma]);
    check("{\"b\": \u{2026}, \"c\": 2}", "{ \"c\": 2}", &[K::Ellipsis]);
    check("{\"b\": ...}", "{}", &[K::Ellipsis]);
    // Not a placeholder: a number-like word stays a string, as before.
    check("{\"v\": ...5}", "{\"v\": \"...5\"}", &[K::NumberAsString]);
}

/// Found by `damaged_json_output_is_strict`: a requoted key before a placeholder value.
#[test]
fn placeholder_value_after_a_requoted_key() {
    check("{'}'...", "{}", &[K::Ellipsis, K::TruncatedContainer]);
}

/// Found by `damaged_json_output_is_strict`: the comma before a member whose key follows
/// stray text, or was inserted, is not left behind when a placeholder value drops it.
#[test]
fn placeholder_value_keeps_commas_right() {
    check(
        "{\"a\": 1, \"k\",: \"x\"...\n}",
        "{\"a\": 1, \"k\": null \n}",
        &[K::MissingValue, K::StrayText, K::Ellipsis, K::TrailingComma],
    );
    check("{\"a\": 1, NOTE \"b\": ...}", "{\"a\": 1 }", &[K::StrayText, K::Ellipsis, K::TrailingComma]);
    // With the comma inserted, the placeholder stays a string (as before this fix).
    check(
        "{\"a\": 1 \"b\": ..., \"c\": 2}",
        "{\"a\": 1, \"b\": \"...\", \"c\": 2}",
        &[K::MissingComma, K::NumberAsString],
    );
}

/// The parser compares keys as they come, and an object with many keys when it closes:
/// the duplicate-key report of a salvage is the one of its text either way.
#[test]
fn duplicate_keys_are_found_in_objects_of_any_size() {
    for n in [2, 15, 17, 63, 64, 65, 200] {
        let keys: Vec<String> = (0..n).map(|i| format!("'k{i}': {i}")).collect();
        let unique = format!("{{{}}}", keys.join(", "));
        let out = salvage(&unique).unwrap();
        assert!(out.duplicate_keys().is_empty(), "{n} keys");
        for repeat in [0, n / 2, n - 1] {
            let text = format!("{{{}, k{repeat}: 0}}", keys.join(", "));
            let out = salvage(&text).unwrap();
            let found = out.duplicate_keys();
            assert_eq!(found, toolfix::salvage::duplicate_keys(out.text()), "{n} keys, k{repeat} again");
            assert_eq!(found.len(), 1, "{n} keys, k{repeat} again");
        }
    }
}

/// An invisible character between `,` and the next element's quote is layout: the quote
/// before the `]` closed its string (`"["`), it is not a quote inside brackets
/// (found by `invisible_characters_between_tokens_change_nothing`).
#[test]
fn invisible_character_before_the_next_element_is_layout() {
    check(
        "[[null\u{1680},\"[\"],\u{200b}\")\"\u{200b}]\u{200b}\u{2060}",
        "[[null,\"[\"],\")\"]",
        &[K::InvisibleCharacter],
    );
}

#[test]
fn a_separator_after_the_only_value_is_reported() {
    // Found by the one-pass reader's property test: `0,` came out as `0` with no fix, so the
    // text counted as untouched although a byte was dropped.
    check("0,", "0", &[K::TrailingComma]);
    check("0;", "0", &[K::TrailingComma]);
    check("{\"a\": 1},", "{\"a\": 1}", &[K::TrailingComma]);
    check("{\"a\": 1} ,, ", "{\"a\": 1}", &[K::TrailingComma]);
    check("[1, 2];\n", "[1, 2]", &[K::TrailingComma]);
    assert!(salvage("{\"a\": 1}\n").is_ok_and(|s| s.is_untouched()));
}
