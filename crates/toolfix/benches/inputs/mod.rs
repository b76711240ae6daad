//! Deterministic benchmark inputs, generated in the repository (no external data).
//!
//! Shared by `benches/salvage.rs`, `examples/workload.rs` and `tests/bench_inputs.rs`
//! through `#[path]`, so the benchmark, the instruction-count harness and the correctness
//! test all see the same bytes.
//!
//! - [`valid_document`]: a JSON document of about the requested size — an object with
//!   an array of records mixing objects, arrays, strings with escapes and non-ASCII text
//!   (some of it `\u`-escaped), integers, decimals and exponents, booleans and nulls.
//! - [`damaged_document`]: the same value written with about 1% of its tokens damaged
//!   (single quotes, unquoted keys, Python literals, trailing commas) and the closers at
//!   the end cut off. It salvages to exactly the value of [`valid_document`].
//! - [`small_calls`]: tool-call argument objects of about 200 bytes, each damaged in one
//!   to three [`Damage`] ways, each with the value the model meant.

use serde_json::{Value, json};
use std::fmt::Write as _;

/// A small, fast, deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n`.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A number in `-n..n`.
    fn signed(&mut self, n: u32) -> i64 {
        i64::try_from(self.next() % (2 * u64::from(n))).unwrap_or(0) - i64::from(n)
    }

    /// True with probability `p`.
    fn chance(&mut self, p: f64) -> bool {
        p >= 1.0 || (p > 0.0 && (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const WORDS: &[&str] = &[
    "alpha",
    "report",
    "quarterly",
    "rust",
    "error",
    "handling",
    "cache",
    "miss",
    "server",
    "latency",
    "déjà",
    "vu",
    "naïve",
    "café",
    "Zürich",
    "東京",
    "データ",
    "emoji🚀",
    "Ωmega",
    "straße",
    "résumé",
    "build",
    "deploy",
    "config",
];

const CITIES: &[&str] = &["Paris", "São Paulo", "Zürich", "Kraków", "東京", "Reykjavík", "New York", "Dubai"];

fn sentence(rng: &mut Rng, words: usize) -> String {
    let mut s = String::new();
    for i in 0..words {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(rng.pick(WORDS));
    }
    s
}

/// A string with the characters JSON must escape: quotes, backslashes, newlines, tabs.
fn escaped_text(rng: &mut Rng) -> String {
    match rng.below(5) {
        0 => format!("He said \"{}\" twice", sentence(rng, 2)),
        1 => format!("C:\\Users\\{}\\{}.txt", rng.pick(WORDS), rng.pick(WORDS)),
        2 => format!("{}\n{}\n", sentence(rng, 3), sentence(rng, 2)),
        3 => format!("col1\tcol2\t{}", rng.pick(WORDS)),
        _ => sentence(rng, 4),
    }
}

fn decimal(rng: &mut Rng) -> Value {
    let cents = rng.signed(1_000_000);
    json!(cents as f64 / 100.0)
}

fn record(rng: &mut Rng, id: usize) -> Value {
    let mut history = Vec::new();
    for _ in 0..rng.below(4) {
        history.push(json!({
            "t": 1_700_000_000 + rng.below(10_000_000),
            "delta": rng.signed(100),
            "ok": rng.chance(0.5),
            "note": if rng.chance(0.3) { Value::Null } else { json!(sentence(rng, 2)) },
        }));
    }
    let tags: Vec<Value> = (0..rng.below(4)).map(|_| json!(rng.pick(WORDS))).collect();
    json!({
        "id": id,
        "name": sentence(rng, 2),
        "email": format!("user{}@example.com", rng.below(100_000)),
        "score": decimal(rng),
        "ratio": json!((rng.below(1000) + 1) as f64 * 1e-7),
        "active": rng.chance(0.5),
        "manager": if rng.chance(0.5) { Value::Null } else { json!(rng.below(1000)) },
        "tags": tags,
        "address": {
            "street": format!("{} {}", rng.below(300) + 1, sentence(rng, 2)),
            "city": rng.pick(CITIES),
            "zip": format!("{:05}", rng.below(100_000)),
            "geo": [decimal(rng), decimal(rng)],
        },
        "notes": escaped_text(rng),
        "history": history,
    })
}

/// The value of [`valid_document`] and [`damaged_document`] for `bytes`.
fn document_value(bytes: usize) -> Value {
    let mut rng = Rng::new(1);
    let mut records = Vec::new();
    let mut size = 0;
    while size < bytes {
        let r = record(&mut rng, records.len());
        // Close enough: the record's compact length plus ", " separators.
        size += r.to_string().len() + 40;
        records.push(r);
    }
    json!({"version": 3, "generated": "2026-11-22T00:00:00Z", "records": records})
}

/// Per-site damage probabilities for [`write`]. 0 never, 1 always.
#[derive(Clone, Copy, Default)]
struct Style {
    single_quotes: f64,
    unquoted_keys: f64,
    python_literals: f64,
    trailing_commas: f64,
    /// Write some non-ASCII characters as `\u` escapes.
    unicode_escapes: f64,
    /// Newlines and two-space indentation instead of one line.
    pretty: bool,
}

/// Writes a value as (possibly damaged) JSON-like text, and counts the damage sites.
struct Writer<'a> {
    out: String,
    style: Style,
    rng: &'a mut Rng,
    damage: usize,
}

/// One step of the explicit stack in [`Writer::value`].
enum Step<'v> {
    Value(&'v Value, usize),
    Key(&'v str),
    Text(&'static str),
    Newline(usize),
    MaybeTrailingComma,
}

impl Writer<'_> {
    fn string(&mut self, s: &str, is_key: bool) {
        if is_key && self.rng.chance(self.style.unquoted_keys) && is_identifier(s) {
            self.damage += 1;
            self.out.push_str(s);
            return;
        }
        let single = self.rng.chance(self.style.single_quotes);
        self.damage += usize::from(single);
        let escape_unicode = !single && self.rng.chance(self.style.unicode_escapes);
        let quote = if single { '\'' } else { '"' };
        self.out.push(quote);
        for c in s.chars() {
            match c {
                '\\' => self.out.push_str("\\\\"),
                '\n' => self.out.push_str("\\n"),
                '\t' => self.out.push_str("\\t"),
                '\r' => self.out.push_str("\\r"),
                c if c == quote => {
                    self.out.push('\\');
                    self.out.push(c);
                }
                c if (c as u32) < 0x20 || (escape_unicode && !c.is_ascii()) => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        let _ = write!(self.out, "\\u{unit:04x}");
                    }
                }
                c => self.out.push(c),
            }
        }
        self.out.push(quote);
    }

    fn literal(&mut self, json: &'static str, python: &'static str) {
        if self.rng.chance(self.style.python_literals) {
            self.damage += 1;
            self.out.push_str(python);
        } else {
            self.out.push_str(json);
        }
    }

    fn value(&mut self, root: &Value) {
        let mut stack = vec![Step::Value(root, 0)];
        while let Some(step) = stack.pop() {
            match step {
                Step::Text(t) => self.out.push_str(t),
                Step::Key(k) => {
                    self.string(k, true);
                    self.out.push_str(": ");
                }
                Step::Newline(depth) => {
                    if self.style.pretty {
                        self.out.push('\n');
                        for _ in 0..depth {
                            self.out.push_str("  ");
                        }
                    }
                }
                Step::MaybeTrailingComma => {
                    if self.rng.chance(self.style.trailing_commas) {
                        self.damage += 1;
                        self.out.push(',');
                    }
                }
                Step::Value(v, depth) => match v {
                    Value::Null => self.literal("null", "None"),
                    Value::Bool(true) => self.literal("true", "True"),
                    Value::Bool(false) => self.literal("false", "False"),
                    Value::Number(n) => self.out.push_str(&n.to_string()),
                    Value::String(s) => self.string(s, false),
                    Value::Array(items) if items.is_empty() => self.out.push_str("[]"),
                    Value::Object(map) if map.is_empty() => self.out.push_str("{}"),
                    Value::Array(items) => {
                        self.out.push('[');
                        stack.push(Step::Text("]"));
                        stack.push(Step::Newline(depth));
                        stack.push(Step::MaybeTrailingComma);
                        for (i, item) in items.iter().enumerate().rev() {
                            stack.push(Step::Value(item, depth + 1));
                            stack.push(Step::Newline(depth + 1));
                            if i > 0 {
                                stack.push(Step::Text(if self.style.pretty { "," } else { ", " }));
                            }
                        }
                    }
                    Value::Object(map) => {
                        self.out.push('{');
                        stack.push(Step::Text("}"));
                        stack.push(Step::Newline(depth));
                        stack.push(Step::MaybeTrailingComma);
                        for (i, (k, item)) in map.iter().enumerate().rev() {
                            stack.push(Step::Value(item, depth + 1));
                            stack.push(Step::Key(k));
                            stack.push(Step::Newline(depth + 1));
                            if i > 0 {
                                stack.push(Step::Text(if self.style.pretty { "," } else { ", " }));
                            }
                        }
                    }
                },
            }
        }
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn write(value: &Value, style: Style, rng: &mut Rng) -> (String, usize) {
    let mut w = Writer { out: String::new(), style, rng, damage: 0 };
    w.value(value);
    (w.out, w.damage)
}

/// Drops the closing brackets (and whitespace) at the end: output cut off by a token limit
/// right after its last value.
fn cut_closers(text: &mut String) -> usize {
    let kept = text.trim_end_matches(|c: char| matches!(c, '}' | ']') || c.is_ascii_whitespace()).len();
    let cut = text.len() - kept;
    text.truncate(kept);
    cut
}

/// A valid JSON document of about `bytes` bytes, and its value.
pub(crate) fn valid_document(bytes: usize) -> (String, Value) {
    let value = document_value(bytes);
    let style = Style { unicode_escapes: 0.1, ..Style::default() };
    let (text, _) = write(&value, style, &mut Rng::new(2));
    (text, value)
}

/// The document of [`valid_document`] with about 1% of its tokens damaged and its closers
/// cut off; returns the text, the intended value and the number of damage sites.
pub(crate) fn damaged_document(bytes: usize) -> (String, Value, usize) {
    let value = document_value(bytes);
    let style = Style {
        single_quotes: 0.01,
        unquoted_keys: 0.01,
        python_literals: 0.01,
        trailing_commas: 0.01,
        unicode_escapes: 0.1,
        pretty: false,
    };
    let (mut text, damage) = write(&value, style, &mut Rng::new(2));
    cut_closers(&mut text);
    (text, value, damage + 1)
}

/// One way a model damages its tool-call arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Damage {
    /// A Markdown code fence around the JSON, with or without a language tag.
    Fence,
    /// Prose before and after the JSON.
    Prose,
    /// Every key and string in single quotes (Python `repr` style).
    SingleQuotes,
    /// `True`, `False`, `None`.
    PythonLiterals,
    /// Every key without quotes.
    UnquotedKeys,
    /// A comma after the last element of every array and object.
    TrailingCommas,
    /// The closing brackets at the end cut off (with anything after them).
    Truncation,
}

impl Damage {
    /// Every kind.
    pub(crate) const ALL: [Damage; 7] = [
        Damage::Fence,
        Damage::Prose,
        Damage::SingleQuotes,
        Damage::PythonLiterals,
        Damage::UnquotedKeys,
        Damage::TrailingCommas,
        Damage::Truncation,
    ];
}

/// A damaged tool call and the arguments the model meant.
pub(crate) struct Call {
    /// The text as the model sent it.
    pub(crate) text: String,
    /// The arguments it meant.
    pub(crate) intended: Value,
    /// How the text was damaged (one to three kinds, sorted).
    pub(crate) damage: Vec<Damage>,
}

fn arguments(rng: &mut Rng) -> Value {
    match rng.below(5) {
        0 => json!({
            "path": format!("src/{}/{}.rs", rng.pick(&["core", "net", "ui", "db"]), rng.pick(&["main", "lib", "mod"])),
            "content": format!("fn main() {{\n    println!(\"{}\");\n}}\n", sentence(rng, 4)),
            "create_dirs": rng.chance(0.5),
            "mode": null,
        }),
        1 => json!({
            "query": sentence(rng, 5),
            "limit": rng.below(100) + 1,
            "filters": {"lang": rng.pick(&["en", "de", "ja", "pt-BR"]), "since": "2024-01-01", "tags": [rng.pick(WORDS), rng.pick(WORDS)]},
            "exact": if rng.chance(0.5) { Value::Null } else { json!(rng.chance(0.5)) },
            "safe": true,
        }),
        2 => json!({
            "command": rng.pick(&["ls", "grep", "cargo", "git"]),
            "args": ["-l", format!("--name={}", rng.pick(WORDS)), "it's fine", format!("--message={}", sentence(rng, 3))],
            "cwd": format!("/home/{}/project", rng.pick(&["ana", "bo", "chen"])),
            "timeout_ms": (rng.below(60) + 1) * 1000,
            "env": null,
            "background": false,
        }),
        3 => json!({
            "city": rng.pick(CITIES),
            "days": rng.below(14) + 1,
            "units": rng.pick(&["metric", "imperial"]),
            "note": sentence(rng, 3),
            "include": ["hourly", "alerts"],
            "lat": decimal(rng),
            "lon": decimal(rng),
            "cache": true,
        }),
        _ => json!({
            "to": [format!("{}@example.com", rng.pick(&["ana", "bo", "chen"]))],
            "subject": format!("Re: {}", sentence(rng, 4)),
            "body": format!("Hi,\n\n{} \"{}\".\nThanks", sentence(rng, 4), rng.pick(WORDS)),
            "draft": rng.chance(0.5),
            "reply_to": null,
        }),
    }
}

const PROSE_BEFORE: &[&str] = &[
    "Sure! Here are the arguments:\n",
    "I'll call the tool with these arguments: ",
    "Calling search now.\n\n",
    "Here is the JSON you asked for:\n",
];
const PROSE_AFTER: &[&str] =
    &["\nLet me know if you need anything else.", "\n\nThis should do it.", " Hope this helps!", "\n"];

/// `count` damaged tool calls of about 200 bytes each, deterministic.
pub(crate) fn small_calls(count: usize) -> Vec<Call> {
    let mut rng = Rng::new(3);
    (0..count)
        .map(|_| {
            let intended = arguments(&mut rng);
            let mut damage = Vec::new();
            let kinds = 1 + rng.below(3);
            while damage.len() < kinds {
                let d = Damage::ALL[rng.below(Damage::ALL.len())];
                // Python literals need a literal to damage; every template has one.
                if !damage.contains(&d) {
                    damage.push(d);
                }
            }
            damage.sort();
            let has = |d| damage.contains(&d);
            let full = |on: bool| if on { 1.0 } else { 0.0 };
            let style = Style {
                single_quotes: full(has(Damage::SingleQuotes)),
                unquoted_keys: full(has(Damage::UnquotedKeys)),
                python_literals: full(has(Damage::PythonLiterals)),
                trailing_commas: full(has(Damage::TrailingCommas)),
                unicode_escapes: 0.0,
                pretty: rng.chance(0.3),
            };
            let (mut json, _) = write(&intended, style, &mut rng);
            let truncated = has(Damage::Truncation);
            if truncated {
                cut_closers(&mut json);
            }
            let mut text = String::new();
            if has(Damage::Prose) {
                text.push_str(rng.pick(PROSE_BEFORE));
            }
            if has(Damage::Fence) {
                text.push_str(rng.pick(&["```json\n", "```\n", "```JSON\n"]));
            }
            text.push_str(&json);
            if !truncated {
                if has(Damage::Fence) {
                    text.push_str("\n```");
                }
                if has(Damage::Prose) {
                    text.push_str(rng.pick(PROSE_AFTER));
                }
            }
            Call { text, intended, damage }
        })
        .collect()
}

/// How many calls salvage to exactly their intended value, and the failures per damage
/// kind (a call with two kinds counts for both).
pub(crate) fn score(calls: &[Call]) -> (usize, Vec<(Damage, usize)>) {
    let mut ok = 0;
    let mut failures: Vec<(Damage, usize)> = Damage::ALL.iter().map(|&d| (d, 0)).collect();
    for call in calls {
        let repaired = toolfix::salvage::salvage(&call.text).ok().and_then(|s| s.to_value().ok());
        if repaired.as_ref() == Some(&call.intended) {
            ok += 1;
        } else {
            for (d, n) in &mut failures {
                *n += usize::from(call.damage.contains(d));
            }
        }
    }
    (ok, failures)
}
