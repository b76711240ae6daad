//! Was call markup found in a reply's text meant to run, or only shown?
//!
//! Models leak real calls into `content` (the server's parser missed them), and they also
//! *show* calls: they explain a format, quote a request, propose a call and ask first, or
//! echo the tool definitions of their prompt. Both write the same markup. What tells them
//! apart is the reply's own structure, read here without a model: where the markup sits
//! and what surrounds it. Markup is read in **groups**: call regions that follow each
//! other with nothing but layout between.
//!
//! The signals, in the order they decide (the design doc's table gives the reason for each):
//!
//! | signal | what | weight |
//! |---|---|---|
//! | `definition` | the "call" is a tool definition: its arguments are a JSON Schema (`{"type": "object", "properties": …}`) | never a call |
//! | `negation` | "I will not", "did not call", "not run" next to it | shown |
//! | `quoted` | "you wrote", "the payload", "the request body", "what the API expects" | shown |
//! | `example` | "for example", "e.g.", "looks like", "such as", "the format", "the syntax", "for reference" just before it | shown |
//! | `question` | a question asking to go ahead after it ("Shall I…?", "Do you want me to…?") | shown |
//! | `inline_code` | inside `single backticks` | shown |
//! | `illustration` | inside a fence tagged with another language (```` ```xml ````, ```` ```text ````) | shown |
//! | `ends_reply` | nothing but layout after it: the place a leak ends a reply | makes "shown" uncertain |
//! | `prose_after` | the text goes on after it | weak |
//! | `mixed_forms` | call markup of several formats in one text | weak |
//! | `native_calls` | the server returned calls of its own in the same reply | weak |
//! | `goes_on` | (reasoning) the reasoning goes on after it: a draft or a mention | shown |
//!
//! Three outcomes: a **call** (leaked, meant to run); **prose** (shown: the markup stays in
//! the text, and a [`NoteKind::ShownCall`](super::NoteKind::ShownCall) note says why);
//! **uncertain** (the signals disagree: a shown signal, yet the markup ends the reply; or
//! two weak signals): extraction reports the call with [`Intent::Uncertain`], and the
//! whole-reply layer runs it only for a tool declared read-only — a tool that may change
//! things gets a refusal asking the model to call it as a tool call if it meant to.
//!
//! Only text near the markup counts: the [`BEFORE`] bytes before a group (back to the
//! previous group) and the [`AFTER`] bytes after it (up to the next group), so a stream
//! decides each group as soon as those bytes are known, the same way a whole text does.

use super::{Format, ToolLookup};
pub use crate::report::{Intent, Signal};
pub use crate::schema::LeakedCalls;

/// Bytes before a group read for its cues.
pub(crate) const BEFORE: usize = 256;
/// Bytes after a group read for its cues.
pub(crate) const AFTER: usize = 384;

/// A set of signals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Signals(u16);

const STRONG: u16 = Signal::Negation.bit()
    | Signal::Quoted.bit()
    | Signal::Example.bit()
    | Signal::Question.bit()
    | Signal::InlineCode.bit()
    | Signal::Illustration.bit();
const WEAK: [Signal; 3] = [Signal::ProseAfter, Signal::MixedForms, Signal::NativeCalls];

impl From<&[Signal]> for Signals {
    fn from(list: &[Signal]) -> Signals {
        list.iter().fold(Signals::default(), |s, x| s.with(*x))
    }
}

/// A call written in `content` when the server also returned calls of its own: one more
/// weak signal ([`Signal::NativeCalls`]), which may make it uncertain. `tool_policy` is the
/// tool's own [`LeakedCalls`], if any; `default` the options'.
pub(crate) fn beside_native_calls(
    intent: Intent,
    signals: &[Signal],
    tool_policy: Option<LeakedCalls>,
    default: LeakedCalls,
) -> (Intent, Vec<Signal>) {
    let s = Signals::from(signals).with(Signal::NativeCalls);
    let intent = match decide(s, Place::Answer, tool_policy.unwrap_or(default)) {
        Verdict::Taken(Intent::Uncertain) => Intent::Uncertain,
        _ => intent,
    };
    (intent, s.to_vec())
}

impl Signals {
    pub(crate) fn with(mut self, signal: Signal) -> Signals {
        self.0 |= signal.bit();
        self
    }

    pub(crate) fn has(self, signal: Signal) -> bool {
        self.0 & signal.bit() != 0
    }

    pub(crate) fn union(self, other: Signals) -> Signals {
        Signals(self.0 | other.0)
    }

    fn strong(self) -> bool {
        self.0 & STRONG != 0
    }

    /// The signals, in [`Signal::ALL`] order.
    pub(crate) fn to_vec(self) -> Vec<Signal> {
        Signal::ALL.iter().copied().filter(|s| self.has(*s)).collect()
    }
}

/// What a group of call markup was meant as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Shown: the markup stays in the text.
    Prose,
    /// Taken as a call, with its intent.
    Taken(Intent),
}

/// Where the markup was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// The answer (`content`).
    Answer,
    /// `reasoning_content`: the server ended the reasoning, so reasoning that goes on
    /// after the markup shows it was a draft or a mention.
    Reasoning,
    /// A reasoning block inside `content`: a call there may be where the reasoning ends
    /// (a server's reasoning parser reads it so when the block never closes), so only the
    /// cues around it count.
    Block,
}

/// The verdict on a group with these `signals` under `policy`.
pub(crate) fn decide(signals: Signals, place: Place, policy: LeakedCalls) -> Verdict {
    if signals.has(Signal::Definition) || policy == LeakedCalls::Never {
        return Verdict::Prose;
    }
    if policy == LeakedCalls::Trust {
        return Verdict::Taken(Intent::Call);
    }
    match place {
        Place::Reasoning | Place::Block if signals.strong() || signals.has(Signal::GoesOn) => Verdict::Prose,
        Place::Reasoning | Place::Block => Verdict::Taken(Intent::Call),
        Place::Answer if signals.strong() => {
            if signals.has(Signal::EndsReply) {
                Verdict::Taken(Intent::Uncertain)
            } else {
                Verdict::Prose
            }
        }
        Place::Answer if WEAK.iter().filter(|s| signals.has(**s)).count() >= 2 => Verdict::Taken(Intent::Uncertain),
        Place::Answer => Verdict::Taken(Intent::Call),
    }
}

/// The window of `text` before a group that starts at `start`, back to `floor` (the end of
/// the previous group) or [`BEFORE`] bytes.
pub(crate) fn before_window(text: &str, floor: usize, start: usize) -> &str {
    let from = crate::span::ceil_char_boundary(text, start.saturating_sub(BEFORE).max(floor));
    text.get(from..start).unwrap_or_default()
}

/// The window of `text` after a group that ends at `end`: up to `ceiling` (the start of
/// the next group, or the end of the text) or [`AFTER`] bytes.
pub(crate) fn after_window(text: &str, end: usize, ceiling: usize) -> &str {
    let to = crate::span::floor_char_boundary(text, ceiling.min(end.saturating_add(AFTER)));
    text.get(end..to.max(end)).unwrap_or_default()
}

/// Phrases before call markup that say it is shown, not run.
const BEFORE_CUES: &[(&str, Signal)] = &[
    ("for example", Signal::Example),
    ("for instance", Signal::Example),
    ("e.g.", Signal::Example),
    ("example:", Signal::Example),
    ("an example", Signal::Example),
    ("example call", Signal::Example),
    ("looks like", Signal::Example),
    ("look like", Signal::Example),
    ("would look", Signal::Example),
    ("such as", Signal::Example),
    ("for reference", Signal::Example),
    ("the format", Signal::Example),
    ("this format", Signal::Example),
    ("the syntax", Signal::Example),
    ("syntax is", Signal::Example),
    ("you could call", Signal::Example),
    ("you can call", Signal::Example),
    ("you would call", Signal::Example),
    ("could be called", Signal::Example),
    ("will not run", Signal::Negation),
    ("won't run", Signal::Negation),
    ("will not call", Signal::Negation),
    ("won't call", Signal::Negation),
    ("will not execute", Signal::Negation),
    ("won't execute", Signal::Negation),
    ("not going to run", Signal::Negation),
    ("not going to call", Signal::Negation),
    ("did not call", Signal::Negation),
    ("didn't call", Signal::Negation),
    ("did not run", Signal::Negation),
    ("didn't run", Signal::Negation),
    ("without calling", Signal::Negation),
    ("without running", Signal::Negation),
    ("do not run", Signal::Negation),
    ("don't run", Signal::Negation),
    ("not calling", Signal::Negation),
    ("before i run", Signal::Negation),
    ("before running", Signal::Negation),
    ("you wrote", Signal::Quoted),
    ("you sent", Signal::Quoted),
    ("you asked me to run", Signal::Quoted),
    ("your call", Signal::Quoted),
    ("your request", Signal::Quoted),
    ("the payload", Signal::Quoted),
    ("the request body", Signal::Quoted),
    ("the api expects", Signal::Quoted),
];

/// Phrases before call markup in reasoning that say it is thought about, not made.
const MUSING: &[&str] = &[
    "think about",
    "could call",
    "might call",
    "should i call",
    "maybe call",
    "or i could",
    "i could use",
    "whether to call",
];

/// The musing cues in reasoning before call markup ([`Signal::Example`]).
fn musing(window: &str) -> Signals {
    let recent = window.rsplit_once("\n\n").map_or(window, |(_, r)| r).to_lowercase();
    if MUSING.iter().any(|m| recent.contains(m)) {
        Signals::default().with(Signal::Example)
    } else {
        Signals::default()
    }
}

/// Phrases after call markup that say it is shown, not run.
const AFTER_CUES: &[(&str, Signal)] = &[
    ("did not call", Signal::Negation),
    ("didn't call", Signal::Negation),
    ("did not run", Signal::Negation),
    ("didn't run", Signal::Negation),
    ("have not run", Signal::Negation),
    ("haven't run", Signal::Negation),
    ("have not called", Signal::Negation),
    ("haven't called", Signal::Negation),
    ("not been run", Signal::Negation),
    ("not been called", Signal::Negation),
    ("will not run", Signal::Negation),
    ("won't run", Signal::Negation),
    ("is what the api expects", Signal::Quoted),
    ("is an example", Signal::Example),
    ("is just an example", Signal::Example),
    ("for illustration", Signal::Example),
];

/// Phrases that, in a sentence ending with `?` after the markup, ask to go ahead.
const ASKING: &[&str] = &[
    "shall i",
    "should i",
    "do you want me to",
    "would you like me to",
    "want me to",
    "go ahead",
    "proceed",
    "confirm",
    "is that ok",
    "is this ok",
    "is that okay",
    "is this okay",
    "ok to run",
    "okay to run",
    "may i",
    "can i run",
];

/// End-of-turn tokens that count as layout after markup.
const END_TOKENS: &[&str] = &[
    "<|im_end|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|end|>",
    "<|return|>",
    "<|endoftext|>",
    "</s>",
    "<|END_OF_TURN_TOKEN|>",
    "<end_of_turn>",
    "<|end_of_text|>",
    "<｜end▁of▁sentence｜>",
];

/// The cues in the window before a group (`window` ends where the group starts).
pub(crate) fn before(window: &str) -> Signals {
    let mut s = Signals::default();
    // Only the sentence or two right before the markup: from the last paragraph break.
    let recent = window.rsplit_once("\n\n").map_or(window, |(_, r)| r);
    let lower = recent.to_lowercase();
    for (cue, signal) in BEFORE_CUES {
        if lower.contains(cue) {
            s = s.with(*signal);
        }
    }
    let trimmed = window.trim_end_matches([' ', '\t']);
    if trimmed.ends_with('`') && !trimmed.ends_with("```") {
        s = s.with(Signal::InlineCode);
    }
    if let Some(lang) = open_fence_language(window)
        && !matches!(lang.as_str(), "" | "json" | "jsonc" | "json5" | "tool_call" | "tool_code" | "tool" | "function")
    {
        s = s.with(Signal::Illustration);
    }
    s
}

/// The language tag of a fence opened in `window` and not closed before its end.
fn open_fence_language(window: &str) -> Option<String> {
    let mut open: Option<String> = None;
    for line in window.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("```") {
            open = match open {
                Some(_) => None,
                None => Some(rest.trim().to_lowercase()),
            };
        }
    }
    open
}

/// The cues in the window after a group, and whether it is only layout (whitespace and
/// end-of-turn tokens).
pub(crate) fn after(window: &str) -> (Signals, bool) {
    let mut rest = window;
    loop {
        rest = rest.trim_start();
        // The fence that closes around the markup belongs with it.
        if let Some(r) = rest.strip_prefix("```").filter(|r| r.is_empty() || r.starts_with(['\n', '\r'])) {
            rest = r;
            continue;
        }
        match END_TOKENS.iter().find(|t| rest.starts_with(**t)) {
            Some(t) => rest = rest.get(t.len()..).unwrap_or_default(),
            None => break,
        }
    }
    let mut s = Signals::default();
    if rest.is_empty() {
        return (s, true);
    }
    s = s.with(Signal::ProseAfter);
    if window.trim_start().starts_with('`') && !window.trim_start().starts_with("```") {
        s = s.with(Signal::InlineCode);
    }
    let lower = rest.to_lowercase();
    for (cue, signal) in AFTER_CUES {
        if lower.contains(cue) {
            s = s.with(*signal);
        }
    }
    // A sentence that ends with `?` and asks to go ahead.
    let mut start = 0;
    for (i, c) in lower.char_indices() {
        if matches!(c, '.' | '!' | '\n') {
            start = i + c.len_utf8();
        } else if c == '?' {
            let sentence = lower.get(start..i).unwrap_or_default();
            if ASKING.iter().any(|a| sentence.contains(a)) {
                s = s.with(Signal::Question);
                break;
            }
            start = i + 1;
        }
    }
    (s, false)
}

/// True when the window after a reasoning call holds more reasoning (not only layout, or a
/// closing marker and what follows it).
pub(crate) fn goes_on(window: &str) -> bool {
    let t = window.trim_start();
    !(t.is_empty() || t.starts_with("</") || t.starts_with("<|") || t.starts_with("[/") || t.starts_with("[END"))
}

/// True when `arguments` are a tool's definition rather than its arguments: a JSON Schema
/// object (`{"type": "object", "properties": {…}}`, maybe with `required`,
/// `additionalProperties`, `$schema`, `title`, `description`) and nothing else.
pub(crate) fn is_definition(arguments: &str) -> bool {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(arguments.trim()) else {
        return false;
    };
    let schema_keys = ["type", "properties", "required", "additionalProperties", "$schema", "title", "description"];
    map.get("type").and_then(serde_json::Value::as_str) == Some("object")
        && map.get("properties").is_some_and(serde_json::Value::is_object)
        && map.keys().all(|k| schema_keys.contains(&k.as_str()))
}

/// True when the text between two call regions is only layout (the regions are one group).
pub(crate) fn only_layout(between: &str) -> bool {
    after(between).1
}

/// The formats seen so far in a text (for [`Signal::MixedForms`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct Forms(Vec<Format>);

impl Forms {
    pub(crate) fn add(&mut self, format: Format) {
        if !self.0.contains(&format) {
            self.0.push(format);
        }
    }

    pub(crate) fn mixed(&self) -> bool {
        self.0.len() > 1
    }
}

/// The verdict on a group of call markup: `before` and `after` its windows (see
/// [`before_window`], [`after_window`]), `reaches_end` when the after window runs to the
/// end of the text, `calls` the (name, arguments) of the calls read in it, `mixed` when the text so far holds
/// markup of several formats. The policy is the tools' own when every call's tool says
/// `trust`, or any says `never`; `default` otherwise.
#[expect(clippy::too_many_arguments, reason = "the facts a verdict rests on, each read by the driver")]
pub(crate) fn judge(
    before_text: &str,
    after_text: &str,
    reaches_end: bool,
    calls: &[(&str, &str)],
    mixed: bool,
    place: Place,
    default: LeakedCalls,
    tools: Option<&dyn ToolLookup>,
) -> (Verdict, Signals) {
    let mut signals = before(before_text);
    let (found, layout) = after(after_text);
    signals = signals.union(found);
    if layout && reaches_end {
        signals = signals.with(Signal::EndsReply);
    }
    if place == Place::Reasoning && goes_on(after_text) {
        signals = signals.with(Signal::GoesOn);
    }
    if place != Place::Answer {
        signals = signals.union(musing(before_text));
    }
    if mixed {
        signals = signals.with(Signal::MixedForms);
    }
    if calls.iter().any(|(_, arguments)| is_definition(arguments)) {
        signals = signals.with(Signal::Definition);
    }
    let own = |(name, _): &(&str, &str)| tools.and_then(|t| t.leaked_calls(name));
    let policy = if calls.iter().any(|c| own(c) == Some(LeakedCalls::Never)) {
        LeakedCalls::Never
    } else if !calls.is_empty() && calls.iter().all(|c| own(c) == Some(LeakedCalls::Trust)) {
        LeakedCalls::Trust
    } else {
        default
    };
    (decide(signals, place, policy), signals)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(before_text: &str, after_text: &str) -> Verdict {
        let (a, layout) = after(after_text);
        let mut s = before(before_text).union(a);
        if layout {
            s = s.with(Signal::EndsReply);
        }
        decide(s, Place::Answer, LeakedCalls::Infer)
    }

    #[test]
    fn leaks_are_calls() {
        assert_eq!(answer("Let me check the weather.\n", ""), Verdict::Taken(Intent::Call));
        assert_eq!(answer("", "<|im_end|>\n"), Verdict::Taken(Intent::Call));
        assert_eq!(answer("Sure.", "Would you like to know more?"), Verdict::Taken(Intent::Call));
        assert_eq!(answer("```json\n", "\n```"), Verdict::Taken(Intent::Call));
    }

    #[test]
    fn shown_calls_are_prose() {
        let before = "I will not delete anything yet. For reference, a deletion call looks like this:\n```\n";
        assert_eq!(answer(before, "\n```\nShall I go ahead?"), Verdict::Prose);
        assert_eq!(answer("The payload ", " is what the API expects; I did not call it."), Verdict::Prose);
        assert_eq!(answer("Use `", "` to list files."), Verdict::Prose);
        assert_eq!(answer("```xml\n", "\n```\nThat is the markup."), Verdict::Prose);
        assert_eq!(answer("I can run this:\n", "\nDo you want me to run it?"), Verdict::Prose);
    }

    #[test]
    fn shown_but_ending_the_reply_is_uncertain() {
        assert_eq!(answer("For example: ", ""), Verdict::Taken(Intent::Uncertain));
    }

    #[test]
    fn definitions_are_never_calls() {
        assert!(is_definition(
            r#"{"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}"#
        ));
        assert!(!is_definition(r#"{"type": "object", "properties": {}, "path": "/a"}"#));
        assert!(!is_definition(r#"{"path": "/a"}"#));
        let s = Signals::default().with(Signal::Definition);
        assert_eq!(decide(s, Place::Answer, LeakedCalls::Trust), Verdict::Prose);
    }

    #[test]
    fn reasoning_that_goes_on_is_a_mention() {
        assert!(goes_on(" and then I should check the units."));
        assert!(!goes_on("\n</think>\nOK"));
        let s = Signals::default().with(Signal::GoesOn);
        assert_eq!(decide(s, Place::Reasoning, LeakedCalls::Infer), Verdict::Prose);
        assert_eq!(decide(Signals::default(), Place::Reasoning, LeakedCalls::Infer), Verdict::Taken(Intent::Call));
    }

    #[test]
    fn policies() {
        let shown = Signals::default().with(Signal::Example);
        assert_eq!(decide(shown, Place::Answer, LeakedCalls::Trust), Verdict::Taken(Intent::Call));
        assert_eq!(decide(Signals::default(), Place::Answer, LeakedCalls::Never), Verdict::Prose);
    }
}
