//! What a call written in a reply's text was meant as, and the signals read around it
//! (`extract::intent` reads them; the whole-reply layer reports them).

use serde::Serialize;

/// What call markup written in a reply's text was meant as, when it was taken as a call.
///
/// ```
/// use toolfix::extract::{extract, Intent, Message};
///
/// let leak = "Checking.\n<tool_call>{\"name\": \"ls\", \"arguments\": {}}</tool_call>";
/// assert_eq!(extract(&Message::new(leak), None).calls[0].intent, Intent::Call);
///
/// let asked = "For example: <tool_call>{\"name\": \"rm\", \"arguments\": {\"path\": \"/a\"}}</tool_call>";
/// let out = extract(&Message::new(asked), None);
/// assert_eq!(out.calls[0].intent, Intent::Uncertain); // shown, yet it ends the reply
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Intent {
    /// Meant to run (a leak), or a server-parsed call.
    #[default]
    Call,
    /// The signals disagree: run only for a tool that cannot change anything.
    Uncertain,
}

impl Intent {
    /// True for [`Intent::Call`].
    #[must_use]
    pub const fn is_call(&self) -> bool {
        matches!(self, Intent::Call)
    }

    /// The stable `snake_case` name.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Intent::Call => "call",
            Intent::Uncertain => "uncertain",
        }
    }
}

macro_rules! signals {
    ($( $(#[$doc:meta])* $variant:ident = $bit:literal => $name:literal, )*) => {
        /// A fact about where call markup sits that bears on whether it was meant to run
        /// (the table is in `toolfix::extract::intent`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Signal {
            $( $(#[$doc])* $variant, )*
        }

        impl Signal {
            /// Every signal, in the order they are reported.
            pub const ALL: &'static [Signal] = &[ $( Signal::$variant, )* ];

            /// The stable `snake_case` name.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self { $( Signal::$variant => $name, )* }
            }

            pub(crate) const fn bit(self) -> u16 {
                match self { $( Signal::$variant => 1 << $bit, )* }
            }
        }
    };
}

signals! {
    /// The "call" is a tool definition (its arguments are a JSON Schema): never a call.
    Definition = 0 => "definition",
    /// Words that say it is not run ("I will not", "did not call").
    Negation = 1 => "negation",
    /// Words that say it is quoted ("you wrote", "the payload", "what the API expects").
    Quoted = 2 => "quoted",
    /// Words that say it is an example ("for example", "looks like", "the format").
    Example = 3 => "example",
    /// A question asking to go ahead follows it.
    Question = 4 => "question",
    /// It is inside `single backticks`.
    InlineCode = 5 => "inline_code",
    /// It is inside a fence tagged with another language.
    Illustration = 6 => "illustration",
    /// Nothing but layout follows it: where a leak ends a reply.
    EndsReply = 7 => "ends_reply",
    /// The text goes on after it.
    ProseAfter = 8 => "prose_after",
    /// Call markup of several formats in one text.
    MixedForms = 9 => "mixed_forms",
    /// The server returned calls of its own in the same reply.
    NativeCalls = 10 => "native_calls",
    /// The reasoning goes on after it (a draft or a mention).
    GoesOn = 11 => "goes_on",
}

impl Serialize for Signal {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}
