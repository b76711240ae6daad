//! Fuzz the lenient parser: any UTF-8 input must not panic; when salvage succeeds, the
//! output must be strict JSON (serde_json parses it) and salvaging it again finds nothing
//! to fix. Differential: input comes back untouched exactly when serde_json reads it (the
//! strict pass agrees with serde_json), and the duplicate-key report of a salvage is the
//! one of its text. A `Salvager` kept across inputs answers what `salvage` answers.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::cell::RefCell;

thread_local! {
    /// One salvager for every input of the run: its buffers carry over.
    static SALVAGER: RefCell<toolfix::salvage::Salvager> = RefCell::new(toolfix::salvage::Salvager::new());
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // A lone surrogate escape is the one valid text salvage changes.
    let lone = serde_json::from_str::<serde_json::Value>(text).err().is_some_and(|e| {
        let m = e.to_string();
        m.contains("surrogate") || m.contains("hex escape")
    });
    let serde_ok = serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() && !lone;
    let salvaged = toolfix::salvage::salvage(text);
    SALVAGER.with(|s| {
        let reused = s.borrow_mut().salvage(text, &toolfix::Limits::default());
        match (&reused, &salvaged) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "a reused salvager differs on {text:?}"),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "a reused salvager differs on {text:?}"),
            _ => panic!("a reused salvager differs on {text:?}: {reused:?} / {salvaged:?}"),
        }
    });
    let untouched = salvaged.as_ref().is_ok_and(|o| o.is_untouched() && o.text() == text);
    // serde_json stops at 127 levels of nesting; salvage reads 128.
    let deep = text.bytes().filter(|&c| c == b'[' || c == b'{').count() >= 127;
    assert!(
        untouched == serde_ok || (untouched && deep),
        "strict pass disagrees with serde_json (untouched {untouched}, serde {serde_ok}):\ninput: {text:?}"
    );
    let Ok(out) = salvaged else { return };
    assert_eq!(out.duplicate_keys(), toolfix::salvage::duplicate_keys(out.text()), "duplicate keys of {text:?}");
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
