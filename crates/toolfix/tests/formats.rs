//! The tool-call format corpus, judged like `score_formats.py`: the multiset of calls
//! (names equal, arguments equal as JSON values, only the expected keys where
//! `args_asserted` is `partial`) and, where `content_asserted`, the prose after whitespace
//! normalisation. Rows in `intended_differences.txt` are deliberate departures.

use crate::common;

use common::{Case, Outcome, judge, load_cases, run_case};
use std::collections::BTreeMap;

#[test]
fn corpus_and_own_cases() {
    let mut cases = load_cases("tests/fixtures/formats/cases.jsonl");
    cases.extend(load_cases("tests/fixtures/formats/own_cases.jsonl"));
    cases.extend(load_cases("tests/fixtures/formats/own_markup_cases.jsonl"));
    let intended = common::intended_differences();
    let gaps = common::known_gaps();
    let listed = |id: &str| intended.contains_key(id) || gaps.contains_key(id);
    let supported = toolfix::extract::supported_formats();

    let mut per_format: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    let mut unexpected = Vec::new();
    let mut stale = Vec::new();
    let (mut reasoning_rows, mut reasoning_ok) = (0, 0);
    for case in &cases {
        let counts = per_format.entry(case.format.clone()).or_default();
        counts.0 += 1;
        let wired = toolfix::extract::Format::from_name(&case.format).is_some_and(|f| supported.contains(&f));
        if !wired {
            counts.2 += 1;
            continue;
        }
        let out = run_case(case);
        if let Some(r) = &case.expected_reasoning {
            reasoning_rows += 1;
            if common::norm_ws(out["reasoning_content"].as_str().unwrap_or("")) == common::norm_ws(r) {
                reasoning_ok += 1;
            }
        }
        match judge(case, &out) {
            Outcome::Pass => {
                counts.1 += 1;
                if listed(&case.id) {
                    stale.push(case.id.clone());
                }
            }
            Outcome::Fail(why) => {
                if !listed(&case.id) {
                    unexpected.push(format!("{} [{why}]\n    got: {}", case.id, out));
                }
            }
        }
    }
    let (mut n, mut pass, mut skipped) = (0, 0, 0);
    eprintln!("format                 cases  passed  not-wired");
    for (format, (c, p, s)) in &per_format {
        eprintln!("{format:<22} {c:>5}  {p:>6}  {s:>9}");
        n += c;
        pass += p;
        skipped += s;
    }
    eprintln!("total                  {n:>5}  {pass:>6}  {skipped:>9}");
    eprintln!("intended differences: {}, known gaps: {}", intended.len(), gaps.len());
    eprintln!("reasoning_ok: {reasoning_ok}/{reasoning_rows}");
    assert_eq!(reasoning_ok, reasoning_rows, "reasoning_content differs");
    assert!(unexpected.is_empty(), "{} unexpected failures:\n{}", unexpected.len(), unexpected.join("\n"));
    assert!(stale.is_empty(), "listed as intended differences but pass: {stale:?}");
}

#[test]
fn own_cases_cover_every_json_family_format() {
    let own = load_cases("tests/fixtures/formats/own_cases.jsonl");
    for f in [
        "apriel",
        "firefunction_v2",
        "functionary_v3_1",
        "functionary_v3_2",
        "command_r_plus",
        "apertus",
        "nemotron",
        "json",
    ] {
        assert!(own.iter().any(|c: &Case| c.format == f), "no own case for {f}");
    }
}

#[test]
fn readme_formats_table_lists_every_format() {
    let readme = std::fs::read_to_string("../../README.md").unwrap();
    for f in toolfix::extract::Format::ALL {
        assert!(readme.contains(&format!("| `{f}` |")), "README formats table has no row for {f}");
    }
}

/// Every format is reachable: some case reports it under its own name (formats that
/// share markup are told apart by what their models write around it).
#[test]
fn every_format_is_reported_under_its_own_name() {
    let mut cases = load_cases("tests/fixtures/formats/cases.jsonl");
    cases.extend(load_cases("tests/fixtures/formats/own_cases.jsonl"));
    cases.extend(load_cases("tests/fixtures/formats/own_markup_cases.jsonl"));
    let mut reported = std::collections::BTreeSet::new();
    for case in &cases {
        let tools = case.tools.as_ref().map(|t| t as &dyn toolfix::extract::ToolLookup);
        for c in toolfix::extract::extract(&common::message(case), tools).calls {
            if c.format.as_str() == case.format {
                reported.insert(c.format);
            }
        }
    }
    for f in toolfix::extract::Format::ALL {
        assert!(reported.contains(f), "no case reports {f}");
    }
}
