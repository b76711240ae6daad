//! Inputs the fuzzer (`fuzz/`, target `salvage`) found to break salvage, kept as raw
//! files under `tests/regressions/salvage/`, one per bug. Each must salvage without
//! panicking, and when salvage succeeds its output must be strict JSON that salvages to
//! itself with no fixes. Calls that reached a tool when they should not have are kept the
//! same way: `tests/regressions/cut_calls/` (cut-off arguments) and
//! `tests/regressions/duplicate_keys/` (a key given twice), one file per bug.

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

/// Raw arguments, one file per bug class under `tests/regressions/<dir>/`.
#[expect(clippy::unwrap_used, reason = "tests")]
fn cases(dir: &str) -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions").join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(!files.is_empty());
    files
        .iter()
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(p).unwrap()))
        .collect()
}

/// Issue 9 §1: calls cut off at a number, literal, key, bracket, comma or inside an open
/// array were accepted for a tool that may change things. Each must be refused, saying so.
#[test]
fn cut_calls_are_refused_for_a_tool_that_changes_things() {
    let tools =
        toolfix::ToolSet::new(&[serde_json::json!({"name": "transfer", "parameters": {"type": "object"}})]).unwrap();
    for (name, raw) in cases("cut_calls") {
        let out = tools.repair_call("transfer", &raw);
        let refusal = out.refusal().unwrap_or_else(|| panic!("{name}: accepted {:?}", out.arguments_text()));
        assert!(refusal.message.contains("cut off"), "{name}: {}", refusal.message);
    }
}

/// Issue 9 §1: a key given twice with different values let the last one win silently.
#[test]
fn duplicate_keys_with_different_values_are_refused() {
    let tools = toolfix::ToolSet::new(&[serde_json::json!({"name": "set", "parameters": {"type": "object"}})]).unwrap();
    for (name, raw) in cases("duplicate_keys") {
        let out = tools.repair_call("set", &raw);
        let refusal = out.refusal().unwrap_or_else(|| panic!("{name}: accepted {:?}", out.arguments_text()));
        assert!(refusal.message.contains("/area") && refusal.message.contains("1800"), "{name}: {}", refusal.message);
    }
}
