//! The benchmark inputs (`benches/inputs`) as a correctness test: the damaged tool calls
//! salvage to the value the model meant, and the damaged document to the valid one's.

#[path = "../benches/inputs/mod.rs"]
mod inputs;

use toolfix::Limits;

/// The share of the 10,000 benchmark calls that must salvage to exactly their intended
/// value: all of them, as measured (the target is 99.5%).
const MIN_RATE: f64 = 1.0;

#[test]
fn small_calls_salvage_to_the_intended_value() {
    let calls = inputs::small_calls(10_000);
    let (ok, failures) = inputs::score(&calls);
    let rate = ok as f64 / calls.len() as f64;
    eprintln!("{ok} of {} salvaged to the intended value; failures per damage kind: {failures:?}", calls.len());
    assert!(
        rate >= MIN_RATE,
        "{ok} of {} repaired exactly ({rate:.4}); failures per damage kind: {failures:?}",
        calls.len()
    );
}

#[test]
fn damaged_document_salvages_to_the_valid_one() {
    let limits = Limits::default().with_max_input_bytes(1 << 20);
    let (valid, value) = inputs::valid_document(200_000);
    let out = toolfix::salvage::salvage_with(&valid, &limits).unwrap();
    assert!(out.is_untouched());
    assert_eq!(out.to_value().unwrap(), value);
    let (damaged, intended, sites) = inputs::damaged_document(200_000);
    assert!(sites > 100, "{sites} damage sites");
    let out = toolfix::salvage::salvage_with(&damaged, &limits).unwrap();
    assert!(!out.is_untouched());
    assert_eq!(out.to_value().unwrap(), intended);
}
