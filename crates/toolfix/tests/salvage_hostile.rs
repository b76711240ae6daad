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
