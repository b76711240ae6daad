//! Hostile inputs return promptly with a result or a clear error (the algorithm is
//! linear; these tests only make sure nothing recurses, loops or panics).

use toolfix::salvage::salvage_with;
use toolfix::{ErrorKind, Limits};

fn big() -> Limits {
    Limits::default().with_max_input_bytes(2 << 20)
}

#[test]
fn a_megabyte_of_open_brackets_is_too_deep() {
    let text = "[".repeat(1 << 20);
    let err = salvage_with(&text, &big()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TooDeep);
}

#[test]
fn a_megabyte_of_dangling_keys_is_too_deep() {
    let text = "{\"a\":".repeat((1 << 20) / 5);
    let err = salvage_with(&text, &big()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TooDeep);
}

#[test]
fn an_unterminated_quarter_megabyte_string_is_closed() {
    let text = format!("{{\"a\": \"{}", "x".repeat(256 * 1024 - 10));
    let out = salvage_with(&text, &Limits::default()).unwrap();
    assert!(out.has_truncated_string());
    assert_eq!(out.text().len(), text.len() + 2);
}

#[test]
fn a_hundred_thousand_commas() {
    let text = format!("[{}]", ",".repeat(100_000));
    let out = salvage_with(&text, &Limits::default()).unwrap();
    assert_eq!(out.text(), "[]");
    let text = format!("{{\"a\": 1{}}}", ",".repeat(100_000));
    let out = salvage_with(&text, &Limits::default()).unwrap();
    assert_eq!(out.text(), "{\"a\": 1}");
}

#[test]
fn many_quotes_stay_linear() {
    let text = format!("{{\"a\": \"{}\"}}", "\" x ".repeat(50_000));
    let out = salvage_with(&text, &Limits::default()).unwrap();
    assert!(serde_json::from_str::<serde_json::Value>(out.text()).is_ok());
}

#[test]
fn oversized_input_is_refused_before_parsing() {
    let text = "x".repeat(Limits::DEFAULT_MAX_INPUT_BYTES + 1);
    let err = salvage_with(&text, &Limits::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InputTooLarge);
}

#[test]
fn empty_and_blank_input_are_errors() {
    for text in ["", "   ", "\n\t"] {
        let err = salvage_with(text, &Limits::default()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::EmptyInput);
    }
}

/// Issue 24 §5: the parts added for the classes of damage stay linear too: keys compared
/// as their objects close (many long keys, all equal, in many objects), comments around a
/// `+`, lookaheads through invisible characters, and objects glued in an array.
#[test]
fn the_issue_24_classes_stay_linear() {
    let key = "k".repeat(2_000);
    let object = format!("{{{}}}", (0..60).map(|i| format!("'{key}': {i}")).collect::<Vec<_>>().join(", "));
    let text = format!("[{}]", vec![object; 8].join(", "));
    let out = salvage_with(&text, &big()).unwrap();
    assert_eq!(out.duplicate_keys().len(), 8);
    let text = format!("[{}]", "\"a\" + /* c */ ".repeat(40_000) + "\"b\"");
    assert!(salvage_with(&text, &big()).is_ok());
    let text = format!("[{}1]", "\u{200b}\u{a0}".repeat(100_000));
    assert_eq!(salvage_with(&text, &big()).unwrap().text(), "[1]");
    let text = format!("[{}]", "{\"i\":1".repeat(50_000));
    let err = salvage_with(&text, &big());
    assert!(err.is_err() || err.is_ok_and(|o| serde_json::from_str::<serde_json::Value>(o.text()).is_ok()));
    let text = format!("[{}]", "{\"i\":1,".repeat(50_000));
    assert!(salvage_with(&text, &big()).is_ok_and(|o| serde_json::from_str::<serde_json::Value>(o.text()).is_ok()));
}

/// Several values gathered into one array nest a level deeper than each: at the depth
/// limit, they are refused (fuzzing: `2e\n[[[…` of 128 levels gave an output that salvage
/// then refused as too deep).
#[test]
fn values_gathered_past_the_depth_limit_are_refused() {
    let deep = format!("{}1{}", "[".repeat(128), "]".repeat(128));
    assert!(salvage_with(&deep, &Limits::default()).is_ok());
    let err = salvage_with(&format!("2\n{deep}"), &Limits::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TooDeep);
    let shallower = format!("{}1{}", "[".repeat(127), "]".repeat(127));
    let two = format!("2\n{shallower}");
    let out = salvage_with(&two, &Limits::default()).unwrap();
    assert!(salvage_with(out.text(), &Limits::default()).unwrap().is_untouched());
}
