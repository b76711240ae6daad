//! Inputs the fuzzer (`fuzz/`, target `salvage`) found to break salvage, kept as raw
//! files under `tests/regressions/salvage/`, one per bug. Each must salvage without
//! panicking, and when salvage succeeds its output must be strict JSON that salvages to
//! itself with no fixes.

use std::path::Path;

#[test]
fn salvage_regressions() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions/salvage");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(!files.is_empty());
    let mut failures = Vec::new();
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let Ok(text) = std::str::from_utf8(&bytes) else { continue };
        let name = path.file_name().unwrap().to_string_lossy();
        let Ok(out) = toolfix::salvage::salvage(text) else { continue };
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(out.text()) {
            failures.push(format!("{name}: output is not strict JSON ({e}): {:?}", out.text()));
            continue;
        }
        match toolfix::salvage::salvage(out.text()) {
            Ok(again) if again.is_untouched() => {}
            Ok(again) => failures.push(format!("{name}: not idempotent: {:?} -> {:?}", out.text(), again.text())),
            Err(e) => failures.push(format!("{name}: output refused ({e}): {:?}", out.text())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
