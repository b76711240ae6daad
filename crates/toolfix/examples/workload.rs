//! One named workload, run a given number of times: the program `scripts/instructions.sh`
//! counts instructions of under callgrind (run once with 0 iterations to measure the
//! start-up and input generation, then subtract).
//!
//! ```text
//! cargo run --release -p toolfix --example workload -- <workload> <iterations>
//! ```
//!
//! Workloads (inputs from `benches/inputs`, the same as `benches/salvage.rs`):
//!
//! | name               | one iteration                                                     |
//! |--------------------|-------------------------------------------------------------------|
//! | `valid-1mb`        | salvage the ~1 MB valid document                                  |
//! | `serde-1mb`        | serde_json `IgnoredAny` over it, plus a copy of the text (baseline) |
//! | `damaged-1mb`      | salvage the ~1 MB document with ~1% damage                        |
//! | `small-calls`      | salvage 10,000 damaged tool-call arguments                        |
//! | `small-valid`      | salvage the same 10,000 calls' intended values as strict JSON     |
//! | `pipeline-valid`   | `ToolSet::repair_call` on 10,000 valid calls                      |
//! | `pipeline-baseline`| serde_json parse + `jsonschema` `is_valid` on the same (baseline) |
//! | `pipeline-damaged` | `ToolSet::repair_call` on 10,000 calls with type-level damage     |
//! | `score`            | print how many small calls salvage to the intended value          |
//! | `extract-100kb`    | `extract` over a 100 KB reply (reasoning, bracketed prose, calls)  |
//! | `extract-stream`   | the same through `StreamExtractor` in 64-byte chunks              |
//! | `extract-tools`    | `extract-100kb` with the tools declared                          |
//! | `extract-stream-tools` | `extract-stream` with the tools declared                      |
//!
//! The first line of output is `units <n> <unit>`: the bytes or calls of one iteration.

#[path = "../benches/inputs/extract.rs"]
mod extract_inputs;
#[path = "../benches/inputs/mod.rs"]
mod inputs;
#[path = "../benches/inputs/pipeline.rs"]
mod pipeline_inputs;

use pipeline_inputs::{DAMAGED as DAMAGED_CALLS, VALID as VALID_CALL, schema};
use serde_json::{Value, json};
use std::hint::black_box;
use std::process::ExitCode;
use toolfix::{Limits, ToolSet};

const DOCUMENT_BYTES: usize = 1 << 20;
const CALLS: usize = 10_000;

fn tools() -> Option<ToolSet> {
    ToolSet::new(&[json!({"name": "search", "parameters": schema()})]).ok()
}

fn run(workload: &str, iterations: usize) -> Result<(), String> {
    let limits = Limits::default().with_max_input_bytes(4 * DOCUMENT_BYTES);
    match workload {
        "valid-1mb" | "serde-1mb" => {
            let (text, _) = inputs::valid_document(DOCUMENT_BYTES);
            println!("units {} bytes", text.len());
            for _ in 0..iterations {
                if workload == "serde-1mb" {
                    serde_json::from_str::<serde::de::IgnoredAny>(black_box(&text)).map_err(|e| e.to_string())?;
                    black_box(black_box(text.as_str()).to_owned());
                } else {
                    black_box(toolfix::salvage::salvage_with(black_box(&text), &limits).map_err(|e| e.to_string())?);
                }
            }
        }
        "damaged-1mb" => {
            let (text, _, _) = inputs::damaged_document(DOCUMENT_BYTES);
            println!("units {} bytes", text.len());
            for _ in 0..iterations {
                black_box(toolfix::salvage::salvage_with(black_box(&text), &limits).map_err(|e| e.to_string())?);
            }
        }
        "small-calls" | "small-valid" => {
            let calls = inputs::small_calls(CALLS);
            let texts: Vec<String> = if workload == "small-valid" {
                calls.iter().map(|c| c.intended.to_string()).collect()
            } else {
                calls.into_iter().map(|c| c.text).collect()
            };
            println!("units {} calls", texts.len());
            for _ in 0..iterations {
                for text in &texts {
                    black_box(toolfix::salvage::salvage(black_box(text)).ok());
                }
            }
        }
        "pipeline-valid" | "pipeline-damaged" => {
            let tools = tools().ok_or("schema does not compile")?;
            println!("units {CALLS} calls");
            for _ in 0..iterations {
                for i in 0..CALLS {
                    let text =
                        if workload == "pipeline-valid" { VALID_CALL } else { DAMAGED_CALLS[i % DAMAGED_CALLS.len()] };
                    let out = tools.repair_call("search", black_box(text));
                    if !out.is_ok() {
                        return Err(format!("refused: {text}"));
                    }
                    black_box(out);
                }
            }
        }
        "pipeline-baseline" => {
            let validator = jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .build(&schema())
                .map_err(|e| e.to_string())?;
            println!("units {CALLS} calls");
            for _ in 0..iterations {
                for _ in 0..CALLS {
                    let value: Value = serde_json::from_str(black_box(VALID_CALL)).map_err(|e| e.to_string())?;
                    black_box(validator.is_valid(&value));
                }
            }
        }
        "score" => {
            let calls = inputs::small_calls(CALLS);
            let (ok, failures) = inputs::score(&calls);
            let bytes: usize = calls.iter().map(|c| c.text.len()).sum();
            println!(
                "{ok} of {} salvaged to the intended value (mean {} bytes); failures per damage kind: {failures:?}",
                calls.len(),
                bytes / calls.len()
            );
            for call in &calls {
                let repaired = toolfix::salvage::salvage(&call.text).ok().and_then(|s| s.to_value().ok());
                if repaired.as_ref() != Some(&call.intended) && iterations > 0 {
                    println!("{:?}\n{}\n=> {}\n", call.damage, call.text, repaired.unwrap_or_default());
                }
            }
        }
        "extract-100kb" | "extract-stream" | "extract-tools" | "extract-stream-tools" => {
            use toolfix::extract::stream::StreamExtractor;
            use toolfix::extract::{Message, Options, ToolLookup, extract};
            let text = extract_inputs::reply(100 * 1024);
            let declared: std::collections::HashMap<String, Value> = ["get_weather", "get_time", "search"]
                .iter()
                .map(|n| ((*n).to_owned(), json!({"type": "object"})))
                .collect();
            let tools = workload.ends_with("tools").then_some(&declared as &dyn ToolLookup);
            println!("units {} bytes", text.len());
            // The marker automaton is built once per process, on first use: build it in
            // every run (0 iterations too), so the figure is the per-byte cost alone.
            black_box(extract(&Message::new("<tool_call>"), tools).calls.len());
            for _ in 0..iterations {
                if workload.starts_with("extract-stream") {
                    let mut s = StreamExtractor::new(tools, Options::default());
                    let mut n = 0;
                    for chunk in black_box(text.as_bytes()).chunks(64) {
                        n += s.push(chunk).len();
                    }
                    black_box(n + s.finish().len());
                } else {
                    black_box(extract(&Message::new(black_box(&text)), tools).calls.len());
                }
            }
        }
        _ => return Err(format!("unknown workload {workload:?}")),
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(workload), Some(iterations)) = (args.first(), args.get(1).and_then(|n| n.parse().ok())) else {
        eprintln!("usage: workload <name> <iterations>");
        return ExitCode::from(2);
    };
    match run(workload, iterations) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("workload {workload}: {e}");
            ExitCode::FAILURE
        }
    }
}
