//! The 106 hand-written repair cases (fixtures/repair/cases.jsonl) through the pipeline.
#![expect(clippy::unwrap_used, reason = "tests")]

use serde_json::Value;
use toolfix::ToolSet;

const CASES: &str = include_str!("fixtures/repair/cases.jsonl");

fn check(case: &Value) -> Result<(), String> {
    let tool = &case["tool"];
    let tools = ToolSet::new(std::slice::from_ref(tool)).map_err(|e| format!("tools: {e}"))?;
    let raw = case["arguments"].as_str().unwrap();
    let out = tools.repair_call(tool["name"].as_str().unwrap(), raw);
    let expected = &case["expected"];
    let want_ok = expected["ok"].as_bool().unwrap();
    if !want_ok {
        return match out.refusal() {
            Some(r) if !r.message.is_empty() => Ok(()),
            Some(_) => Err("refused with an empty message".into()),
            None => Err(format!("accepted {:?}, repairs {:?}", out.arguments_text(), kinds(&out))),
        };
    }
    let Some(text) = out.arguments_text() else {
        return Err(format!("refused: {}", out.refusal().unwrap().message));
    };
    let got: Value = serde_json::from_str(text).map_err(|e| format!("output is not JSON ({e}): {text}"))?;
    if &got != out.arguments().unwrap() {
        return Err(format!("text {text} and value {} disagree", out.arguments().unwrap()));
    }
    if got != expected["arguments"] {
        return Err(format!("arguments {text}, expected {}", expected["arguments"]));
    }
    let mut want: Vec<String> =
        expected["repairs"].as_array().unwrap().iter().map(|k| k.as_str().unwrap().to_owned()).collect();
    let mut have = kinds(&out);
    want.sort();
    have.sort();
    if want != have {
        return Err(format!("repairs {have:?}, expected {want:?}"));
    }
    let strict_input: Option<Value> = serde_json::from_str(raw).ok();
    if want.is_empty() && strict_input.as_ref() == Some(&expected["arguments"]) && text != raw {
        return Err(format!("valid input not returned byte for byte: {text:?}"));
    }
    Ok(())
}

fn kinds(out: &toolfix::CallOutcome) -> Vec<String> {
    out.repairs().iter().map(|r| r.kind.as_str().to_owned()).collect()
}

#[test]
fn every_case_passes() {
    let mut failures = Vec::new();
    let mut n = 0;
    for line in CASES.lines().filter(|l| !l.trim().is_empty()) {
        n += 1;
        let case: Value = serde_json::from_str(line).unwrap();
        if let Err(e) = check(&case) {
            failures.push(format!("{}: {e}", case["id"].as_str().unwrap()));
        }
    }
    assert_eq!(n, 106);
    assert!(failures.is_empty(), "{} of {n} cases fail:\n{}", failures.len(), failures.join("\n"));
}
