//! Reasoning the library moves out of a reply's text, for the streaming adapters that
//! write it back in a block or item of the proxy's own (Anthropic Messages' `thinking`
//! block, OpenAI Responses' `reasoning` item).

use std::mem;
use toolfix::{FixedReply, ReplyEvent};

/// The reasoning the library moved out of the text: the fixed reply's reasoning past the
/// reply's own (its `thinking` blocks' or `reasoning` items' text: the library puts that
/// first, then a newline, then what it moved). `None` when nothing was moved.
pub(crate) fn moved<'a>(own: Option<&str>, fixed: Option<&'a str>) -> Option<&'a str> {
    let all = fixed?;
    let rest = match own {
        Some(t) => all.strip_prefix(t)?.strip_prefix('\n')?,
        None => all,
    };
    Some(rest).filter(|r| !r.is_empty())
}

/// What a stream has moved out of the text so far, as the library counts it: the moved
/// reasoning it sent (or holds), then the text it released since, which the library may
/// still take as reasoning (`ContentWasReasoning`: reasoning forced open by the prompt).
#[derive(Debug, Default)]
pub(crate) struct MovedSoFar {
    /// Reasoning moved out of the text, as the library counts it (its moved reasoning is
    /// this, then what it moves at the end).
    moved: String,
    /// Text released since the library last took the text so far as reasoning.
    content_since: String,
    /// Text that went out turned out to be reasoning (it is not sent again).
    pub(crate) content_was_reasoning: bool,
}

impl MovedSoFar {
    /// Text released to the client.
    pub(crate) fn content(&mut self, text: &str) {
        self.content_since.push_str(text);
    }

    /// Reasoning moved out of the text (sent in the proxy's block, or held for it).
    pub(crate) fn reasoning(&mut self, text: &str) {
        self.moved.push_str(text);
    }

    /// The library took the text so far as reasoning; it went out as text.
    pub(crate) fn was_reasoning(&mut self) {
        self.content_was_reasoning = true;
        self.moved.push_str(&mem::take(&mut self.content_since));
    }

    /// The last events (from the library's `finish`): their text, and the moved reasoning
    /// not yet counted. There the reasoning events mix the reply's own reasoning (`fed`:
    /// its text as fed) with what was moved, so what was moved is read from the fixed reply.
    pub(crate) fn last(&mut self, events: Vec<ReplyEvent>, fixed: &FixedReply, fed: Option<&str>) -> (String, String) {
        let mut text = String::new();
        for e in events {
            match e {
                ReplyEvent::Content(t) => {
                    self.content(&t);
                    text.push_str(&t);
                }
                ReplyEvent::ContentWasReasoning => self.was_reasoning(),
                _ => {}
            }
        }
        let all = moved(fed, fixed.reasoning_content.as_deref()).unwrap_or("");
        let rest = all.strip_prefix(self.moved.as_str()).unwrap_or("").to_owned();
        (text, rest)
    }
}
