//! Fuzz the lenient parser: any UTF-8 input must not panic; when salvage succeeds, the
//! output must be strict JSON (serde_json parses it) and salvaging it again finds nothing
//! to fix.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(out) = toolfix::salvage::salvage(text) else { return };
    let repaired = out.text();
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(repaired) {
        panic!("salvage output is not strict JSON ({e}):\ninput: {text:?}\noutput: {repaired:?}");
    }
    match toolfix::salvage::salvage(repaired) {
        Ok(again) => assert!(
            again.is_untouched() && again.text() == repaired,
            "salvage is not idempotent:\ninput: {text:?}\noutput: {repaired:?}\nagain: {:?} {:?}",
            again.text(),
            again.fixes()
        ),
        Err(e) => panic!("salvage refuses its own output ({e}):\ninput: {text:?}\noutput: {repaired:?}"),
    }
});
