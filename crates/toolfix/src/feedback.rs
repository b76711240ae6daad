//! The one module that writes prose for models: a refusal message per call, naming each
//! failing JSON pointer, what the schema expected (a compact rendering of that part of the
//! schema), what was received (shortened; never for sensitive tools), and a concrete fix.
//! Capped at [`MAX_MESSAGE_BYTES`], cut on a UTF-8 boundary.

use crate::pointer::Moves;
use crate::report::CallNote;
use crate::report::{Issue, Refusal, Signal};
use crate::salvage::{Truncation, UncertainKind};
use crate::schema::view::{self, Types};
use crate::schema::{NameError, Tool};
use crate::span::{floor_char_boundary, shorten};
use crate::validate::{Problem, ProblemKind, Violation, ViolationKind};
use serde_json::Value;
use std::fmt::Write as _;

mod front;
pub use front::{batched_call, call_result, gave_up, no_result, not_run, repeated_member, reprompt};

/// The longest refusal message, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 4096;
const MAX_RECEIVED: usize = 80;
const MAX_OPTIONS: usize = 12;

/// Build the refusal for a call whose (possibly partly repaired) `value` has `found`
/// violations, with `problems` repair could not settle. `original` maps a path back to
/// what the model sent.
pub(crate) fn refusal(
    tool: &Tool,
    found: &[Violation],
    problems: &[Problem],
    value: &Value,
    original: Option<(&Value, &Moves)>,
    truncated: bool,
) -> Refusal {
    let root = tool.parameters();
    let received_at = |path: &str| -> Option<String> {
        if tool.is_sensitive() {
            return None;
        }
        let v = original.and_then(|(o, m)| o.pointer(&m.origin(path))).or_else(|| value.pointer(path))?;
        Some(shorten(&v.to_string(), MAX_RECEIVED).into_owned())
    };
    let mut issues: Vec<Issue> = Vec::new();
    for v in found {
        if issues.iter().any(|i| i.path == v.path) {
            continue;
        }
        let node = v.schema_path.as_deref().and_then(|p| root.pointer(p)).or_else(|| view::node_at(root, &v.path));
        let expected = match (&v.kind, node) {
            (ViolationKind::Unexpected, _) => {
                let names = parent_properties(root, &v.path);
                format!("no property of this name (properties: {})", names.join(", "))
            }
            (ViolationKind::Missing, Some(n)) => format!("{} (required, missing)", describe(root, n)),
            (ViolationKind::Missing, None) => "a value (required, missing)".to_owned(),
            (_, Some(n)) => describe(root, n),
            (_, None) => "a valid value".to_owned(),
        };
        let received = if v.kind == ViolationKind::Missing { None } else { received_at(&v.path) };
        let hint = hint_for(root, v, node, value.pointer(&v.path), &parent_missing(root, &v.path, value));
        issues.push(Issue { path: v.path.as_ref().to_owned(), expected, received, hint });
    }
    for p in problems {
        let hint = problem_hint(&p.kind);
        if let Some(issue) = issues.iter_mut().find(|i| i.path == p.path) {
            issue.hint = Some(hint);
            continue;
        }
        if !p.kind.is_fatal() && !issues.is_empty() && !matches!(p.kind, ProblemKind::AmbiguousName(_)) {
            continue;
        }
        let expected = match &p.kind {
            ProblemKind::RequiredAny(group) => format!("at least one of {}", quote_all(group)),
            ProblemKind::DotConflict(_) => "one value per place".to_owned(),
            _ => view::node_at(root, &p.path)
                .map_or_else(|| "a property the schema declares".to_owned(), |n| describe(root, n)),
        };
        let received = if matches!(p.kind, ProblemKind::RequiredAny(_)) { None } else { received_at(&p.path) };
        issues.push(Issue { path: p.path.clone(), expected, received, hint: Some(hint) });
    }
    if issues.is_empty() {
        issues.push(Issue { path: String::new(), expected: "valid arguments".to_owned(), received: None, hint: None });
    }
    if truncated {
        // Truncation closing gives a dangling key null: that is where the output stopped.
        for issue in issues
            .iter_mut()
            .filter(|i| i.received.as_deref() == Some("null") || value.pointer(&i.path).is_some_and(Value::is_null))
        {
            issue.hint = Some("your output was cut off by the token limit before this value; a missing value is never made up, so send the call again, complete".to_owned());
        }
    }
    Refusal { message: message(tool.name(), &issues), issues }
}

/// A refusal for a call cut off inside a string.
pub(crate) fn truncated(tool: &Tool, path: Option<&str>, strict: bool) -> Refusal {
    let why = if strict {
        format!("`{}` is strict, so a cut-off call is never completed", tool.name())
    } else {
        format!("`{}` may change things, so a value cut off mid-string is never passed on", tool.name())
    };
    let issue = Issue {
        path: path.unwrap_or_default().to_owned(),
        expected: "the complete value".to_owned(),
        received: None,
        hint: Some(format!(
            "your output was cut off by the token limit ({why}); send the call again with shorter content"
        )),
    };
    Refusal { message: message(tool.name(), std::slice::from_ref(&issue)), issues: vec![issue] }
}

/// Why a cut-off call is refused.
#[derive(Clone, Copy, Debug)]
pub(crate) enum CutRefusal<'a> {
    /// The tool may change things: no cut-off call is run.
    MayChangeThings,
    /// A read-only tool, but the value at this pointer is required (or named by a hint).
    Required(&'a str),
    /// A read-only tool, but the string at this pointer never closed and was read as
    /// ending before `, key:` inside it: the members after it may not be the model's.
    Split(&'a str),
}

/// A refusal for a call whose text was cut off (issue 9 §1): says that the output was cut
/// off, where, and what to send again.
pub(crate) fn cut_off(tool: &Tool, cut: &Truncation, why: CutRefusal<'_>) -> Refusal {
    let place = cut_place(cut);
    let shorter = if cut.uncertain().last().is_some_and(|u| u.kind == UncertainKind::String) {
        " (if a long text does not fit, split the work into smaller calls)"
    } else {
        ""
    };
    let (path, expected, hint) = match why {
        CutRefusal::MayChangeThings => (
            cut.pointer().to_owned(),
            "the complete call".to_owned(),
            format!(
                "your output was cut off {place}; `{}` may change things, so a cut-off call is never run: send the whole call again with every value complete{shorter}",
                tool.name()
            ),
        ),
        CutRefusal::Required(pointer) => (
            pointer.to_owned(),
            "the complete value (required)".to_owned(),
            format!(
                "your output was cut off {place}; a required value that touches the cut is never passed on: send the call again with this value complete{shorter}"
            ),
        ),
        CutRefusal::Split(pointer) => (
            pointer.to_owned(),
            "a closed string".to_owned(),
            format!(
                "the string at {pointer} never closes: either your output was cut off {place}, or its closing quote is missing before a `, key:` inside it, so the members after it may not be the ones you meant; send the call again with every string closed"
            ),
        ),
    };
    let issue = Issue { path, expected, received: None, hint: Some(hint) };
    Refusal { message: message(tool.name(), std::slice::from_ref(&issue)), issues: vec![issue] }
}

/// Where a cut is, in words: `inside the string at /content (byte 31)`.
fn cut_place(cut: &Truncation) -> String {
    let at = |p: &str| if p.is_empty() { "the top level".to_owned() } else { p.to_owned() };
    let what = match cut.uncertain().last() {
        Some(u) => match u.kind {
            UncertainKind::String => format!("inside the string at {}", at(&u.pointer)),
            UncertainKind::Number => {
                format!("right after the number at {}, which may be longer than written", at(&u.pointer))
            }
            UncertainKind::Literal => format!("inside the literal at {}", at(&u.pointer)),
            UncertainKind::Member => format!("after the key {}, before its value", at(&u.pointer)),
            UncertainKind::Key => format!("inside a key, in the object at {}", at(&u.pointer)),
            UncertainKind::Array => format!("inside the array at {}", at(&u.pointer)),
            _ => format!("inside the object at {}", at(&u.pointer)),
        },
        None => "before the arguments were complete".to_owned(),
    };
    format!("{what} (byte {})", cut.at())
}

/// A refusal for arguments that give one key twice with different values.
pub(crate) fn duplicate_key(tool: &Tool, pointer: &str, values: &[String]) -> Refusal {
    let received = if tool.is_sensitive() { None } else { Some(values.join(", then ")) };
    let issue = Issue {
        path: pointer.to_owned(),
        expected: "one value per key".to_owned(),
        received,
        hint: Some(
            "the key is given more than once with different values, and tools disagree on which one wins: send the call again with the key once".to_owned(),
        ),
    };
    Refusal { message: message(tool.name(), std::slice::from_ref(&issue)), issues: vec![issue] }
}

/// A refusal for a string that holds the markup of another parameter of the call, where
/// it cannot be read as the parameters it holds with certainty
/// (`extract::split_leaked_markup`).
pub(crate) fn leaked_markup(tool: &Tool, pointer: &str, parameter: &str) -> Refusal {
    let issue = Issue {
        path: pointer.to_owned(),
        expected: format!("this value alone, `{parameter}` given as its own parameter"),
        received: None,
        hint: Some(format!(
            "the value holds call markup that opens the parameter `{parameter}`, so where this value ends is unclear: send the call again with each parameter's value on its own"
        )),
    };
    Refusal { message: message(tool.name(), std::slice::from_ref(&issue)), issues: vec![issue] }
}

/// A refusal for arguments that hold no JSON, or not an object.
pub(crate) fn not_an_object(tool: &Tool, value: &Value, received: &str) -> Refusal {
    let what = match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    not_arguments(tool, &format!("the arguments are {what}, not an object"), Some(received))
}

fn not_arguments(tool: &Tool, what: &str, received: Option<&str>) -> Refusal {
    let issue = Issue {
        path: String::new(),
        expected: describe(tool.parameters(), tool.parameters()),
        received: if tool.is_sensitive() { None } else { received.map(|r| shorten(r, MAX_RECEIVED).into_owned()) },
        hint: Some(format!("{what}; send the arguments as one JSON object")),
    };
    Refusal { message: message(tool.name(), std::slice::from_ref(&issue)), issues: vec![issue] }
}

/// A refusal for arguments that could not be read at all: over the size or depth limit
/// (said so, with the figures: never "not JSON" for valid JSON that is only too big), or
/// not JSON.
pub(crate) fn unreadable(
    tool: &Tool,
    error: &crate::error::Error,
    raw: &str,
    limits: &crate::limits::Limits,
) -> Refusal {
    let kind = match error.kind() {
        // A value deeper than serde_json's own cap fails late, as a syntax error.
        crate::error::ErrorKind::Syntax
            if nesting_depth(raw) > limits.max_depth.min(crate::limits::Limits::DEFAULT_MAX_DEPTH) =>
        {
            crate::error::ErrorKind::TooDeep
        }
        other => other,
    };
    let what = match kind {
        crate::error::ErrorKind::InputTooLarge => format!(
            "the arguments are too large ({} bytes, limit {}, raise `--max-input-bytes`), so they were not read; send shorter arguments",
            raw.len(),
            limits.max_input_bytes
        ),
        crate::error::ErrorKind::TooDeep => format!(
            "the arguments nest too deeply (more than {} levels of arrays and objects), so they were not read; send flatter arguments",
            limits.max_depth
        ),
        _ if tool.is_sensitive() => "the arguments are not JSON".to_owned(),
        _ => match error.hint() {
            Some(h) => format!("the arguments are not JSON ({}; {h})", error.message()),
            None => format!("the arguments are not JSON ({})", error.message()),
        },
    };
    let received = match kind {
        crate::error::ErrorKind::InputTooLarge | crate::error::ErrorKind::TooDeep => None,
        _ => Some(raw),
    };
    not_arguments(tool, &what, received)
}

/// The deepest nesting of arrays and objects in JSON text (brackets inside strings not
/// counted).
fn nesting_depth(text: &str) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for b in text.bytes() {
        match b {
            _ if escaped => escaped = false,
            b'\\' if in_string => escaped = true,
            b'"' => in_string = !in_string,
            b'[' | b'{' if !in_string => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' if !in_string => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// A refusal for a tool name that does not resolve.
pub(crate) fn unknown_tool(err: &NameError) -> Refusal {
    let (name, hint) = match err {
        NameError::Unknown { name, known, suggestions } => {
            let offered = quote_all(&known.iter().take(MAX_OPTIONS).cloned().collect::<Vec<_>>());
            let hint = match suggestions.as_slice() {
                [] if known.is_empty() => "no tools are offered, so answer without calling one".to_owned(),
                [] => format!("call one of the tools offered: {offered}"),
                [one] => format!("did you mean `{one}`? Use the exact name of an offered tool: {offered}"),
                many => format!("did you mean {}? Use the exact name of an offered tool: {offered}", quote_all(many)),
            };
            (name, hint)
        }
        NameError::Ambiguous { name, candidates } => {
            (name, format!("the name could be {}; use the exact name", quote_all(candidates)))
        }
        NameError::Broken { name, reason } => {
            let issue = Issue {
                path: String::new(),
                expected: "a tool whose definition is usable".to_owned(),
                received: None,
                hint: Some(format!(
                    "this is a fault in the tool's definition, not in your call ({}); the tool cannot be used until its definition is fixed, so do not retry it",
                    shorten(reason, 200)
                )),
            };
            let mut text =
                format!("The tool `{}` is unavailable: its definition is broken.\n", shorten(name, MAX_RECEIVED));
            line(&mut text, &issue);
            return Refusal { message: cap(text), issues: vec![issue] };
        }
    };
    let issue = Issue {
        path: String::new(),
        expected: "the name of an offered tool".to_owned(),
        received: Some(shorten(name, MAX_RECEIVED).into_owned()),
        hint: Some(hint),
    };
    let mut text = format!("The tool `{}` could not be called.\n", shorten(name, MAX_RECEIVED));
    line(&mut text, &issue);
    Refusal { message: cap(text), issues: vec![issue] }
}

/// The words of a note for the model.
pub(crate) fn note(note: &CallNote) -> String {
    match note {
        CallNote::Dropped { path } => format!("{path} is not a property of this tool and was ignored"),
        CallNote::Relational { field, default, given } => format!(
            "`{field}` was not given, so it was set to its default {default} because {} was given",
            quote_all(given)
        ),
        CallNote::CutDropped { path } => {
            format!("your output was cut off at {path}: that optional value was dropped, since it may be incomplete")
        }
        CallNote::DuplicateKept { path, times } => {
            format!("the key {path} was given {times} times with the same value: it is kept once")
        }
    }
}

/// A refusal as the model reads it: the tool's contract appended (`Contract for `x`: …`),
/// then the renderer registered on the tool set, if any, writes the message; capped.
pub(crate) fn finish(tool: &Tool, mut refusal: Refusal) -> Refusal {
    let renderer = tool.extensions().and_then(crate::schema::Extensions::renderer);
    let contract = tool.contract();
    if contract.is_none() && renderer.is_none() {
        return refusal;
    }
    if let Some(c) = contract {
        let _ = writeln!(refusal.message, "Contract for `{}`: {c}", tool.name());
    }
    if let Some(render) = renderer {
        refusal.message = render(tool, &refusal);
    }
    refusal.message = cap(refusal.message);
    refusal
}

impl Tool {
    /// The description to show a model: the description, then the contract hint
    /// ([`Tool::contract`]).
    ///
    /// ```
    /// use serde_json::json;
    /// use toolfix::Tool;
    ///
    /// let tool = Tool::from_definition(&json!({"name": "ls", "description": "List a directory.",
    ///     "parameters": {"type": "object", "x-toolfix": {"contract": "paths are absolute"}}})).unwrap();
    /// assert_eq!(tool.description_for_model(), "List a directory.\n\nContract: paths are absolute");
    /// ```
    #[must_use]
    pub fn description_for_model(&self) -> String {
        match self.contract() {
            Some(c) if self.description().is_empty() => format!("Contract: {c}"),
            Some(c) => format!("{}\n\nContract: {c}", self.description()),
            None => self.description().to_owned(),
        }
    }
}

/// The refusal for a call written in text where it reads as shown rather than made (an
/// example, a quote, a question asking first: `signals`), to a tool that may change things.
pub(crate) fn uncertain_call(tool: &str, signals: &[Signal]) -> Refusal {
    let name = shorten(tool, MAX_RECEIVED);
    let why: Vec<&str> = signals
        .iter()
        .filter_map(|s| match s {
            Signal::Negation => Some("your text says it is not run"),
            Signal::Quoted => Some("your text quotes it"),
            Signal::Example => Some("your text gives it as an example or a format"),
            Signal::Question => Some("your text asks before going ahead"),
            Signal::InlineCode => Some("it is written as inline code"),
            Signal::Illustration => Some("it is inside a code block of another language"),
            Signal::ProseAfter => Some("your text goes on after it"),
            Signal::MixedForms => Some("your text shows calls in several formats"),
            Signal::NativeCalls => Some("you also made tool calls of your own"),
            _ => None,
        })
        .collect();
    let because = if why.is_empty() { String::new() } else { format!(" ({})", why.join("; ")) };
    let hint =
        format!("if you meant to call `{name}`, make it a tool call; if you only showed it, say so and do not call it");
    let message = cap(format!(
        "The call to `{name}` written in your answer was not run: it reads as shown, not made{because}, and \
         `{name}` may change things. Fix: {hint}.\n"
    ));
    let issue = Issue { path: String::new(), expected: "a tool call".to_owned(), received: None, hint: Some(hint) };
    Refusal { message, issues: vec![issue] }
}

/// The message for a call the storm guard suppressed: what repeated, and a question about
/// what the model is trying to achieve.
pub(crate) fn storm(tool: &str, repeats: usize, window: usize, same_result: bool) -> String {
    let result = if same_result { ", and got the same result each time" } else { "" };
    cap(format!(
        "[toolfix] Not run: this is call {repeats} to `{}` with the same arguments within your last {window} tool \
         calls{result}. Repeating it will not give you anything new. What are you trying to achieve? If the result \
         was not what you expected, say what you expected, then change the arguments, use another tool, or answer \
         with what you have.",
        shorten(tool, MAX_RECEIVED)
    ))
}

fn message(tool: &str, issues: &[Issue]) -> String {
    let n = issues.len();
    let mut text = format!(
        "The call to `{tool}` was refused: {n} problem{} with its arguments. Fix {} and send the call again.\n",
        if n == 1 { "" } else { "s" },
        if n == 1 { "it" } else { "them" }
    );
    for issue in issues {
        line(&mut text, issue);
    }
    cap(text)
}

fn line(text: &mut String, issue: &Issue) {
    let at = if issue.path.is_empty() { "(arguments)" } else { issue.path.as_str() };
    let _ = write!(text, "- {at}: expected {}", issue.expected);
    if let Some(r) = &issue.received {
        let _ = write!(text, "; received {r}");
    }
    if let Some(h) = &issue.hint {
        let _ = write!(text, ". Fix: {h}");
    }
    text.push('\n');
}

fn cap(mut text: String) -> String {
    if text.len() > MAX_MESSAGE_BYTES {
        let cut = floor_char_boundary(&text, MAX_MESSAGE_BYTES - 4);
        text.truncate(cut);
        text.push('…');
    }
    text
}

fn quote_all(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

fn problem_hint(kind: &ProblemKind) -> String {
    match kind {
        ProblemKind::AmbiguousName(names) => format!("this could be {}; use the exact property name", quote_all(names)),
        ProblemKind::AmbiguousEnum(options) => {
            format!("the value matches {} when case is ignored; send the exact value", quote_all(options))
        }
        ProblemKind::UnparseableJson => {
            "the string starts like JSON but does not parse; send the array or object itself as JSON, complete"
                .to_owned()
        }
        ProblemKind::Fractional => {
            "send a whole number; the value has a fractional part and rounding it would be a guess".to_owned()
        }
        ProblemKind::DotConflict(at) => format!("this dotted key gives {at} a second value; send one value for it"),
        ProblemKind::RequiredAny(group) => format!("give {}", quote_all(group)),
    }
}

fn hint_for(
    root: &Value,
    v: &Violation,
    node: Option<&Value>,
    got: Option<&Value>,
    missing: &[String],
) -> Option<String> {
    let name = v.path.rsplit('/').next().unwrap_or_default();
    match &v.kind {
        ViolationKind::Missing => Some(format!("add `{name}`; a required value is never made up")),
        ViolationKind::Unexpected if missing.is_empty() => Some(format!("remove `{name}`")),
        ViolationKind::Unexpected => Some(format!("remove `{name}`, or use the missing {}", quote_all(missing))),
        ViolationKind::Keyword("enum") => {
            let options: Vec<String> = node
                .and_then(|n| view::enum_values(root, n))
                .unwrap_or_default()
                .iter()
                .take(MAX_OPTIONS)
                .map(ToString::to_string)
                .collect();
            let guess = got.and_then(Value::as_str).and_then(|g| {
                options.iter().find(|o| {
                    let o = o.trim_matches('"');
                    !g.is_empty() && (o.starts_with(g.get(..g.len().min(3)).unwrap_or_default()))
                })
            });
            Some(match guess {
                Some(g) => format!("use one of {}; did you mean {g}?", options.join(", ")),
                None => format!("use one of {}", options.join(", ")),
            })
        }
        ViolationKind::Keyword("type") => node.map(|n| {
            let t = view::types(root, n);
            let wanted = describe(root, n);
            match got {
                Some(Value::String(_)) if t.has(Types::INTEGER) && !t.has(Types::NUMBER) => {
                    "send an integer as a JSON number, without quotes".to_owned()
                }
                Some(Value::String(_)) if t.has(Types::NUMBER) => "send a JSON number, without quotes".to_owned(),
                Some(Value::String(_)) if t == Types::BOOLEAN => "send true or false, without quotes".to_owned(),
                Some(Value::Null) => {
                    format!("send {}; null is not allowed here", with_article(&wanted))
                }
                _ => format!("send {}", with_article(&wanted)),
            }
        }),
        ViolationKind::Keyword(
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "minLength" | "maxLength" | "minItems"
            | "maxItems" | "multipleOf",
        ) => Some("send a value within the limits shown; values are never clamped for you".to_owned()),
        ViolationKind::Keyword("pattern" | "format") => Some("send a value in the form shown".to_owned()),
        _ => None,
    }
}

fn with_article(what: &str) -> String {
    if what.starts_with("one of") || what.starts_with("any") {
        return what.to_owned();
    }
    let article = if what.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
    format!("{article} {what}")
}

fn parent_missing(root: &Value, path: &str, value: &Value) -> Vec<String> {
    let parent = path.rsplit_once('/').map_or("", |(p, _)| p);
    let Some(node) = view::node_at(root, parent) else {
        return Vec::new();
    };
    let ov = view::object_view(root, node);
    let obj = value.pointer(parent).and_then(Value::as_object);
    ov.required().filter(|r| obj.is_none_or(|o| !o.contains_key(*r))).map(str::to_owned).collect()
}

fn parent_properties(root: &Value, path: &str) -> Vec<String> {
    let parent = path.rsplit_once('/').map_or("", |(p, _)| p);
    view::node_at(root, parent)
        .map(|n| view::object_view(root, n).properties().take(MAX_OPTIONS * 2).map(|(k, _)| format!("`{k}`")).collect())
        .unwrap_or_default()
}

/// A compact rendering of a schema node: `integer (minimum 1)`, `one of "a", "b"`,
/// `array of string`.
pub(crate) fn describe(root: &Value, node: &Value) -> String {
    describe_at(root, node, 0)
}

fn describe_at(root: &Value, node: &Value, depth: usize) -> String {
    let node = view::resolve(root, node);
    if let Some(options) = view::enum_values(root, node) {
        let shown: Vec<String> = options.iter().take(MAX_OPTIONS).map(ToString::to_string).collect();
        let more = if options.len() > MAX_OPTIONS { ", …" } else { "" };
        return format!("one of {}{more}", shown.join(", "));
    }
    let t = view::types(root, node);
    let names = t.names();
    let mut out = if names.is_empty() { "any value".to_owned() } else { names.join(" or ") };
    if t.has(Types::ARRAY)
        && depth < 2
        && let Some(items) = view::items(root, node)
    {
        let _ = write!(out, " of {}", describe_at(root, items, depth + 1));
    }
    if t.has(Types::OBJECT) && depth < 2 {
        let ov = view::object_view(root, node);
        if ov.has_properties() {
            let props: Vec<String> = ov.properties().take(MAX_OPTIONS).map(|(k, _)| format!("`{k}`")).collect();
            let _ = write!(out, " with properties {}", props.join(", "));
            if ov.required().next().is_some() {
                let _ = write!(
                    out,
                    " (required: {})",
                    ov.required().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", ")
                );
            }
        }
    }
    let mut limits = Vec::new();
    for (key, label) in [
        ("minimum", "minimum"),
        ("maximum", "maximum"),
        ("exclusiveMinimum", "greater than"),
        ("exclusiveMaximum", "less than"),
        ("minLength", "min length"),
        ("maxLength", "max length"),
        ("minItems", "min items"),
        ("maxItems", "max items"),
        ("pattern", "pattern"),
        ("format", "format"),
        ("multipleOf", "multiple of"),
    ] {
        if let Some(v) = node.get(key) {
            limits.push(format!("{label} {v}"));
        }
    }
    if !limits.is_empty() {
        let _ = write!(out, " ({})", limits.join(", "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn describe_compact() {
        let root = json!({"$defs": {"p": {"enum": ["low", "high"]}}, "properties": {
            "n": {"type": "integer", "minimum": 1},
            "tags": {"type": "array", "items": {"type": "string"}},
            "p": {"$ref": "#/$defs/p"},
            "o": {"anyOf": [{"type": "integer"}, {"type": "null"}]}
        }});
        assert_eq!(describe(&root, &root["properties"]["n"]), "integer (minimum 1)");
        assert_eq!(describe(&root, &root["properties"]["tags"]), "array of string");
        assert_eq!(describe(&root, &root["properties"]["p"]), r#"one of "low", "high""#);
        assert_eq!(describe(&root, &root["properties"]["o"]), "integer or null");
    }

    #[test]
    fn message_is_capped_on_a_char_boundary() {
        let long = "é".repeat(5000);
        let out = cap(long);
        assert!(out.len() <= MAX_MESSAGE_BYTES);
    }
}

#[cfg(test)]
mod snapshots {
    use super::*;
    use serde_json::json;

    #[test]
    fn truncation_messages() {
        let tool = Tool::from_parts(
            "write_file",
            "",
            json!({"type": "object", "properties": {"content": {"type": "string"}}}),
        )
        .unwrap();
        insta::assert_snapshot!("truncated_write", truncated(&tool, Some("/content"), false).message);
        insta::assert_snapshot!("truncated_strict", truncated(&tool, None, true).message);
    }

    fn cut_of(text: &str) -> Truncation {
        crate::salvage::salvage(text).unwrap().truncation().unwrap().clone()
    }

    #[test]
    fn cut_off_messages() {
        let tool = Tool::from_parts(
            "transfer",
            "",
            json!({"type": "object", "properties": {"account": {"type": "string"}, "amount": {"type": "number"}}}),
        )
        .unwrap();
        let may = CutRefusal::MayChangeThings;
        insta::assert_snapshot!(
            "cut_number",
            cut_off(&tool, &cut_of(r#"{"account": "A-7", "amount": 50"#), may).message
        );
        insta::assert_snapshot!(
            "cut_literal",
            cut_off(&tool, &cut_of(r#"{"account": "A-7", "confirm": tr"#), may).message
        );
        insta::assert_snapshot!(
            "cut_string",
            cut_off(&tool, &cut_of(r#"{"account": "A-7", "memo": "rent for"#), may).message
        );
        insta::assert_snapshot!("cut_key", cut_off(&tool, &cut_of(r#"{"account": "A-7", "amount":"#), may).message);
        insta::assert_snapshot!("cut_list", cut_off(&tool, &cut_of(r#"{"ids": ["#), may).message);
        insta::assert_snapshot!("cut_comma", cut_off(&tool, &cut_of(r#"{"account": "A-7","#), may).message);
        let required = CutRefusal::Required("/query");
        insta::assert_snapshot!("cut_required", cut_off(&tool, &cut_of(r#"{"query": "hello wor"#), required).message);
    }

    #[test]
    fn duplicate_key_message() {
        let tool = Tool::from_parts("set_area", "", json!({"type": "object"})).unwrap();
        insta::assert_snapshot!(
            "duplicate_key",
            duplicate_key(&tool, "/area", &["1800".to_owned(), "1801".to_owned()]).message
        );
    }
}
