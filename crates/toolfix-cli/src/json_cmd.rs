//! `toolfix json`: lenient JSON salvage.

use crate::args::JsonArgs;
use crate::batch::Text;
use crate::batch::{self, Line};
use crate::out::UNRECOVERED;
use crate::out::{self, Stdout};
use anyhow::Result;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::cell::RefCell;
use std::process::ExitCode;
use toolfix::salvage::{Salvager, TextFix};

/// A batch line: `{"id"?, "input": "<text>"}`; other members are ignored.
#[derive(Deserialize)]
pub(crate) struct Envelope<'a> {
    #[serde(borrow)]
    pub(crate) id: Option<&'a RawValue>,
    #[serde(borrow)]
    pub(crate) input: Option<&'a RawValue>,
}

pub(crate) fn run(args: &JsonArgs) -> Result<ExitCode> {
    let limits = args.io.limits();
    if args.io.batch {
        let mut input = args.io.open()?;
        let mut scratch = Scratch::default();
        // One salvager for every line (it keeps the parser's vectors), used by one line at
        // a time.
        let salvager = RefCell::new(Salvager::new());
        // The common line is read from its bytes (its id and text checked as UTF-8, the
        // rest is ASCII); any other is checked whole, then read by serde.
        batch::run_with(
            &mut input,
            batch::line_limit(limits.max_input_bytes),
            |bytes, answer| match batch::plain_id_and_text(bytes, &mut scratch.plain) {
                Some((id, text)) => {
                    let obj = batch::answer_with_plain_id(answer, id);
                    salvage_answer(obj, text, &mut salvager.borrow_mut(), &limits);
                    true
                }
                None => false,
            },
            |line, answer| one(line, answer, &mut scratch.text, &mut salvager.borrow_mut(), &limits),
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let input = match args.io.read(limits.max_input_bytes)? {
        Ok(text) => text,
        Err(size) => {
            eprintln!("{}", crate::args::too_large(size, limits.max_input_bytes));
            return Ok(ExitCode::from(UNRECOVERED));
        }
    };
    match toolfix::salvage::salvage_with(&input, &limits) {
        Ok(s) => {
            let mut stdout = Stdout::new();
            stdout.text(s.text())?;
            stdout.finish()?;
            if args.report {
                for f in s.fixes() {
                    eprintln!("{} at {} {:?}", f.kind, f.span, input.get(f.span.range()).unwrap_or(""));
                }
            }
            // Legal JSON, but parsers disagree on which value wins: always said.
            for d in s.duplicate_keys() {
                let values: Vec<String> = d.values.iter().map(ToString::to_string).collect();
                let which = if d.values_agree() { "the same value" } else { "different values" };
                eprintln!(
                    "duplicate_key at {}: given {} times, {which} ({})",
                    d.pointer,
                    values.len(),
                    values.join(", ")
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("error: {}", e.report());
            Ok(ExitCode::from(UNRECOVERED))
        }
    }
}

/// The buffers one batch line's input is unescaped into, reused across lines.
#[derive(Default)]
struct Scratch {
    /// The common line's input ([`batch::plain_id_and_text`]).
    plain: Vec<u8>,
    /// Any other line's ([`out::json_str`]).
    text: String,
}

/// Answer one batch line that is not the common one: read by serde.
fn one(line: Line<'_>, answer: &mut String, scratch: &mut String, salvager: &mut Salvager, limits: &toolfix::Limits) {
    let Some(envelope) = line.parse::<Envelope<'_>>(answer) else { return };
    let id = envelope.id.map(RawValue::get);
    let Some(raw) = envelope.input.map(RawValue::get) else {
        batch::answer_with_id(answer, id).str("error", "missing `input`").finish();
        return;
    };
    let owned;
    let text = if let Some(text) = out::json_str(raw, scratch) {
        text
    } else {
        // Not a string, or an escape left to serde (surrogate pairs).
        let Ok(Text(text)) = serde_json::from_str::<Text<'_>>(raw) else {
            batch::answer_with_id(answer, id).str("error", "`input` must be a string").finish();
            return;
        };
        owned = text;
        &owned
    };
    salvage_answer(batch::answer_with_id(answer, id), text, salvager, limits);
}

/// The answer to a line with this input text, its id written into `obj` already:
/// `{"id","output":<value>,"fixes":[{"kind","span"}]}` or `{"id","error"}`.
fn salvage_answer(mut obj: out::Obj<'_>, text: &str, salvager: &mut Salvager, limits: &toolfix::Limits) {
    match salvager.salvage(text, limits) {
        Ok(s) => {
            obj.raw("output", s.text());
            push_fixes(obj.key("fixes"), s.fixes());
            push_duplicates(&mut obj, &s);
            // Its text and fixes buffers are the room for the next line's.
            salvager.recycle(s);
        }
        Err(e) => {
            obj.str("error", &e.to_string());
        }
    }
    obj.finish();
}

/// `"duplicates":[{"pointer","values"}]` when some object gives a key twice (legal JSON,
/// but parsers disagree on which value wins); nothing otherwise.
fn push_duplicates(obj: &mut out::Obj<'_>, salvaged: &toolfix::salvage::Salvaged<'_>) {
    let dupes = salvaged.duplicate_keys();
    if dupes.is_empty() {
        return;
    }
    let list: Vec<serde_json::Value> =
        dupes.iter().map(|d| serde_json::json!({"pointer": d.pointer, "values": d.values})).collect();
    obj.raw_line("duplicates", &serde_json::Value::Array(list).to_string());
}

/// The fixes of a salvage as a JSON array of `{"kind","span":[start,end]}`.
pub(crate) fn push_fixes(out: &mut String, fixes: &[TextFix]) {
    out.push('[');
    for (i, f) in fixes.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"kind\":\"");
        out.push_str(f.kind.as_str());
        out.push_str("\",\"span\":[");
        out::push_usize(out, f.span.start);
        out.push(',');
        out::push_usize(out, f.span.end);
        out.push_str("]}");
    }
    out.push(']');
}
