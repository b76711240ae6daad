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

/// The strict fast path tells surrogate pairs from lone surrogates (which alone change).
#[test]
fn surrogate_pairs_stay_untouched_and_lone_ones_are_fixed() {
    for valid in [r#""\ud83d\ude80""#, r#"["\\ud800", "\uD83D\uDE80x"]"#, r#"{"a": "\\\ud83d\ude80"}"#] {
        let out = toolfix::salvage::salvage(valid).unwrap();
        assert!(out.is_untouched(), "{valid}: {:?}", out.fixes());
    }
    for lone in [r#""\ud800""#, r#""\ude80\ud83d""#, r#""\ud83d\ud83d""#, r#"["\ud83d", "\ude80"]"#, r#""\\\udc00""#] {
        let out = toolfix::salvage::salvage(lone).unwrap();
        assert!(!out.is_untouched(), "{lone}");
        let text = out.text().to_ascii_lowercase();
        assert!(text.contains("\\ufffd") || text.contains('\u{FFFD}'), "{lone}: {text}");
    }
}
