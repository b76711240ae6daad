//! Corruption tests over real BFCL tool schemas (fixtures/bfcl/calls.jsonl): ground-truth
//! arguments that validate are damaged one repair kind at a time and combined, and every
//! result must be the ground truth exactly or a refusal — never a wrong value.

use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use toolfix::ToolSet;

const CALLS: &str = include_str!("fixtures/bfcl/calls.jsonl");

#[derive(Default, Debug)]
struct Tally {
    recovered: usize,
    refused: usize,
    wrong: Vec<String>,
}

enum Want {
    Exactly(Value),
    Refusal,
}

fn prop_type<'a>(schema: &'a Value, key: &str) -> Option<&'a str> {
    let p = schema.pointer(&format!("/properties/{key}"))?;
    if p.get("enum").is_some() || p.get("anyOf").is_some() || p.get("oneOf").is_some() {
        return None;
    }
    p.get("type")?.as_str()
}

fn to_camel(s: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for c in s.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn to_snake(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_uppercase() {
            out.push('_');
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn normalise(s: &str) -> String {
    s.chars().filter(|c| !matches!(c, '_' | '-' | ' ')).flat_map(char::to_lowercase).collect()
}

/// Every corruption of `args` under `schema`, with what must come back.
fn corruptions(schema: &Value, args: &Map<String, Value>) -> Vec<(&'static str, Value, String, Want)> {
    let mut out = Vec::new();
    let truth = Value::Object(args.clone());
    let props: Vec<String> = schema["properties"].as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
    let required: Vec<String> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    let unique_norm = |k: &str| props.iter().filter(|p| normalise(p) == normalise(k)).count() == 1;
    let text = |v: &Value| v.to_string();
    let with = |k: &str, v: Value| {
        let mut m = args.clone();
        m.insert(k.to_owned(), v);
        Value::Object(m)
    };
    for (k, v) in args {
        let ty = prop_type(schema, k);
        match (ty, v) {
            (Some("integer" | "number"), Value::Number(n)) => {
                out.push((
                    "stringified_number",
                    schema.clone(),
                    text(&with(k, Value::String(n.to_string()))),
                    Want::Exactly(truth.clone()),
                ));
                if ty == Some("integer") {
                    out.push(("fractional_for_integer", schema.clone(), text(&with(k, json!("3.5"))), Want::Refusal));
                    out.push(("word_for_integer", schema.clone(), text(&with(k, json!("abc"))), Want::Refusal));
                }
            }
            (Some("boolean"), Value::Bool(b)) => {
                let s = if *b { "True" } else { "false" };
                out.push(("stringified_bool", schema.clone(), text(&with(k, json!(s))), Want::Exactly(truth.clone())));
            }
            (Some("array"), Value::Array(_)) => {
                out.push((
                    "stringified_array",
                    schema.clone(),
                    text(&with(k, Value::String(v.to_string()))),
                    Want::Exactly(truth.clone()),
                ));
            }
            (Some("string"), Value::String(s)) if s.len() > 4 => {
                // Cut inside this string: the tool is not read-only, so it must be refused.
                let full = text(&truth);
                let needle = Value::String(s.clone()).to_string();
                if let Some(at) = full.find(&needle) {
                    let cut = at + needle.len() / 2;
                    if full.is_char_boundary(cut) {
                        out.push(("truncated_string", schema.clone(), full[..cut].to_owned(), Want::Refusal));
                    }
                }
            }
            _ => {}
        }
        // Renamed keys, camel and snake.
        for renamed in [to_camel(k), to_snake(k)] {
            if renamed != *k && !props.contains(&renamed) && unique_norm(k) {
                let mut m = Map::new();
                for (k2, v2) in args {
                    m.insert(if k2 == k { renamed.clone() } else { k2.clone() }, v2.clone());
                }
                out.push((
                    "renamed_key",
                    schema.clone(),
                    text(&Value::Object(m.clone())),
                    Want::Exactly(truth.clone()),
                ));
                // Ambiguous: a second property that normalises alike.
                let mut s2 = schema.clone();
                let twin = k.to_uppercase();
                if twin != *k && twin != renamed {
                    let p = s2["properties"][k.as_str()].clone();
                    s2["properties"][twin.as_str()] = p;
                    out.push(("ambiguous_name", s2, text(&Value::Object(m)), Want::Refusal));
                }
            }
        }
    }
    // Null for an optional property that does not allow null.
    if let Some(opt) = props
        .iter()
        .find(|p| !required.contains(p) && !args.contains_key(*p) && prop_type(schema, p).is_some_and(|t| t != "null"))
    {
        out.push(("null_optional", schema.clone(), text(&with(opt, Value::Null)), Want::Exactly(truth.clone())));
    }
    // Missing required.
    if let Some(req) = required.iter().find(|r| args.contains_key(*r)) {
        let mut m = args.clone();
        m.shift_remove(req);
        out.push(("missing_required", schema.clone(), text(&Value::Object(m)), Want::Refusal));
    }
    if !props.iter().any(|p| p == "arguments") && !args.is_empty() {
        out.push(("wrapper", schema.clone(), text(&json!({"arguments": truth})), Want::Exactly(truth.clone())));
    }
    out.push(("document_string", schema.clone(), text(&Value::String(text(&truth))), Want::Exactly(truth.clone())));
    // Combined: a stringified number and a renamed key inside a wrapper.
    let num = args.iter().find(|(k, v)| v.is_number() && matches!(prop_type(schema, k), Some("integer" | "number")));
    let ren = args.keys().find(|k| to_camel(k) != **k && !props.contains(&to_camel(k)) && unique_norm(k));
    if let (Some((nk, nv)), Some(rk)) = (num, ren)
        && nk != rk
        && !props.iter().any(|p| p == "arguments")
    {
        let mut m = Map::new();
        for (k2, v2) in args {
            let v2 = if k2 == nk { Value::String(nv.to_string()) } else { v2.clone() };
            m.insert(if k2 == rk { to_camel(k2) } else { k2.clone() }, v2);
        }
        out.push(("combined", schema.clone(), text(&json!({"arguments": m})), Want::Exactly(truth.clone())));
    }
    out
}

#[test]
fn corrupted_calls_are_recovered_exactly_or_refused() {
    let mut tallies: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut baseline_valid = 0;
    let mut baseline_skipped = 0;
    for line in CALLS.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        let mut tool = case["tool"].clone();
        // Closed schemas, so a renamed key is an error and not an extra property.
        if tool["parameters"].get("additionalProperties").is_none() {
            tool["parameters"]["additionalProperties"] = json!(false);
        }
        let name = tool["name"].as_str().unwrap().to_owned();
        let Ok(tools) = ToolSet::new(std::slice::from_ref(&tool)) else {
            baseline_skipped += 1;
            continue;
        };
        let args = case["arguments"].as_object().unwrap();
        let raw = case["arguments"].to_string();
        let valid = tools.repair_call(&name, &raw);
        if !tools.tools()[0].is_valid(&case["arguments"]) {
            baseline_skipped += 1;
            continue;
        }
        assert_eq!(valid.arguments_text(), Some(raw.as_str()), "{}: valid call not untouched", case["id"]);
        assert!(valid.repairs().is_empty());
        baseline_valid += 1;
        for (kind, schema, text, want) in corruptions(&tool["parameters"], args) {
            let mut t = tool.clone();
            t["parameters"] = schema;
            let tools = ToolSet::new(std::slice::from_ref(&t)).unwrap();
            let out = tools.repair_call(&name, &text);
            let tally = tallies.entry(kind).or_default();
            match (out.arguments(), &want) {
                (None, _) => tally.refused += 1,
                (Some(got), Want::Exactly(truth)) if got == truth => {
                    assert!(tools.tools()[0].is_valid(got));
                    tally.recovered += 1;
                }
                (Some(got), _) => tally.wrong.push(format!("{} {kind}: {text} -> {got}", case["id"])),
            }
        }
    }
    let mut report = format!(
        "baseline: {baseline_valid} valid ground-truth calls ({baseline_skipped} skipped: schema or truth invalid)\n"
    );
    let mut wrong = Vec::new();
    for (kind, t) in &tallies {
        let _ = writeln!(
            report,
            "{kind:24} recovered {:4}  refused {:4}  wrong {:3}",
            t.recovered,
            t.refused,
            t.wrong.len()
        );
        wrong.extend(t.wrong.iter().cloned());
    }
    println!("{report}");
    assert!(baseline_valid >= 250, "{report}");
    assert!(wrong.is_empty(), "{report}\n{}", wrong.join("\n"));
    for kind in [
        "stringified_number",
        "stringified_bool",
        "stringified_array",
        "renamed_key",
        "null_optional",
        "wrapper",
        "document_string",
        "combined",
    ] {
        let t = &tallies[kind];
        assert!(t.recovered * 10 >= (t.recovered + t.refused) * 9, "{kind} recovered too few:\n{report}");
    }
    for kind in ["fractional_for_integer", "word_for_integer", "missing_required", "ambiguous_name", "truncated_string"]
    {
        assert_eq!(tallies[kind].recovered, 0, "{kind}");
    }
}
