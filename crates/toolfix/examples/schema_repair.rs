//! Schema repair on the realistic workload of `scripts/bench/gen_inputs.py`: one
//! [`ToolSet`] of its six schemas (tool `t{i}` for schema `i`), built once; then, per call,
//! `repair_call(name, text)` and its arguments text. `scripts/schema-instructions.sh`
//! counts instructions of it under callgrind for N calls and for 1 call, so the start-up
//! and the one-time build cancel out.
//!
//! ```text
//! cargo run --release -p toolfix --example schema_repair -- DIR damaged|valid|baseline N [--check]
//! ```
//!
//! - `damaged`: `schema_calls_damaged.json` (type-level damage, half with syntax damage);
//!   `--check` compares each accepted value with `calls_expected.json`.
//! - `valid`: `schema_calls_valid.json`; `--check` requires every call back byte for byte.
//! - `baseline`: a bare `serde_json` parse and the compiled `jsonschema` validator's
//!   `is_valid` on `schema_calls_valid.json`, in this same binary.

use serde_json::Value;
use std::hint::black_box;
use std::process::ExitCode;
use toolfix::ToolSet;

fn read(dir: &str, file: &str) -> Result<Value, String> {
    let text = std::fs::read_to_string(format!("{dir}/{file}")).map_err(|e| format!("{dir}/{file}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{dir}/{file}: {e}"))
}

fn calls(value: &Value) -> Vec<(String, String)> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|row| Some((format!("t{}", row.get(0)?.as_u64()?), row.get(1)?.as_str()?.to_owned())))
        .collect()
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, mode, n, rest @ ..] = args.as_slice() else {
        return Err("usage: schema_repair DIR damaged|valid|baseline N [--check]".to_owned());
    };
    let n: usize = n.parse().map_err(|_| "N must be a number".to_owned())?;
    let check = rest.iter().any(|a| a == "--check");
    let schemas = read(dir, "schemas.json")?;
    let definitions: Vec<Value> = schemas
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, s)| serde_json::json!({"name": format!("t{i}"), "parameters": s}))
        .collect();
    let tools = ToolSet::new(&definitions).map_err(|e| e.to_string())?;
    let file = if mode == "damaged" { "schema_calls_damaged.json" } else { "schema_calls_valid.json" };
    let all = calls(&read(dir, file)?);
    let expected = if check && mode == "damaged" { Some(read(dir, "calls_expected.json")?) } else { None };
    let (mut ok, mut wrong) = (0usize, 0usize);
    match mode.as_str() {
        "damaged" | "valid" => {
            for (i, (name, text)) in all.iter().take(n).enumerate() {
                let outcome = tools.repair_call(black_box(name), black_box(text));
                let good = match (&expected, outcome.arguments()) {
                    (Some(exp), Some(value)) => exp.get(i) == Some(value),
                    (None, Some(_)) => !check || outcome.arguments_text() == Some(text.as_str()),
                    (_, None) => false,
                };
                if good {
                    ok += 1;
                } else {
                    wrong += 1;
                }
                black_box(outcome);
            }
        }
        "baseline" => {
            let validators: Vec<jsonschema::Validator> = schemas
                .as_array()
                .into_iter()
                .flatten()
                .map(|s| jsonschema::validator_for(s).map_err(|e| e.to_string()))
                .collect::<Result<_, _>>()?;
            for (name, text) in all.iter().take(n) {
                let i: usize = name.get(1..).and_then(|d| d.parse().ok()).unwrap_or(0);
                let value: Value = serde_json::from_str(black_box(text)).map_err(|e| e.to_string())?;
                let valid = validators.get(i).is_some_and(|v| v.is_valid(&value));
                if valid {
                    ok += 1;
                } else {
                    wrong += 1;
                }
                black_box(value);
            }
        }
        other => return Err(format!("unknown mode {other}")),
    }
    if check {
        println!("{ok} correct, {wrong} not, of {}", ok + wrong);
        if wrong > 0 {
            return Err(format!("{wrong} calls did not come back as expected"));
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
