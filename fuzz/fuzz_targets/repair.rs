//! Fuzz the schema stage: the input is split at the first NUL byte into a schema (JSON
//! text) and argument text; building the tool may fail, the pipeline must never panic,
//! and every accepted result must validate.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (schema, arguments) = text.split_once('\0').unwrap_or((r#"{"type": "object"}"#, text));
    let Ok(schema) = serde_json::from_str::<Value>(schema) else { return };
    let Ok(tools) = toolfix::ToolSet::new(&[json!({"name": "t", "parameters": schema})]) else { return };
    let out = tools.repair_call("t", arguments);
    if let Some(value) = out.arguments() {
        assert!(tools.tools()[0].is_valid(value));
        let again = tools.repair_call("t", out.arguments_text().unwrap_or_default());
        assert!(again.is_ok());
    }
    // The outcome as the CLI writes it: serialising never fails.
    assert!(serde_json::to_string(&out).is_ok());
});
