//! [`ToolError`], the closed set of ways a tool call fails in an agent loop, and
//! [`ExecError`], what a tool handler returns when it fails.

use serde_json::Value;
use toolfix::Refusal;

/// How a tool classifies its own failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transience {
    /// Worth trying again unchanged (a timeout, a busy resource).
    Transient,
    /// Trying again unchanged gives the same failure.
    Permanent,
}

/// How serious an escalation is; the caller decides what each level means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// Worth a log line.
    Low,
    /// Worth a person's look.
    Medium,
    /// Stop this call's line of work.
    High,
    /// Security or data integrity is at stake.
    Critical,
}

impl Severity {
    /// The lowercase name: `low`, `medium`, `high`, `critical`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }
}

/// The failure a tool handler returns: a message, transient or permanent, and whether it
/// is fatal (a security or data-corruption error: the loop stops hard).
///
/// ```
/// use toolfix_agent::{ExecError, Transience};
///
/// let e = ExecError::transient("upstream timed out");
/// assert_eq!(e.transience(), Transience::Transient);
/// assert!(ExecError::fatal("checksum mismatch after write").is_fatal());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ExecError {
    message: String,
    transience: Transience,
    fatal: bool,
}

impl ExecError {
    /// A failure worth retrying unchanged (only ever retried on tools that do not mutate).
    pub fn transient(message: impl Into<String>) -> ExecError {
        ExecError { message: message.into(), transience: Transience::Transient, fatal: false }
    }

    /// A failure that retrying unchanged will not cure.
    pub fn permanent(message: impl Into<String>) -> ExecError {
        ExecError { message: message.into(), transience: Transience::Permanent, fatal: false }
    }

    /// A security or data-corruption failure: permanent, and the default handler stops hard.
    pub fn fatal(message: impl Into<String>) -> ExecError {
        ExecError { message: message.into(), transience: Transience::Permanent, fatal: true }
    }

    /// The tool's own message.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Transient or permanent.
    #[must_use]
    pub fn transience(&self) -> Transience {
        self.transience
    }

    /// True for a security or data-corruption failure.
    #[must_use]
    pub fn is_fatal(&self) -> bool {
        self.fatal
    }
}

/// Why a tool call failed, as data. Each variant renders, through one renderer, into a
/// message a model can act on ([`ToolError::message`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ToolError {
    /// The arguments are not valid for the tool's schema, after repair and every fixer.
    #[error("invalid arguments for `{tool}`: {}", refusal.message)]
    InvalidArgs {
        /// The tool's name (as sent when it did not resolve).
        tool: String,
        /// The arguments as the model wrote them.
        raw: String,
        /// The parse error or schema refusal, with its issues.
        refusal: Refusal,
        /// The tool's parameters schema (`null` for an unknown tool).
        schema: Value,
    },
    /// The arguments passed the schema but did not bind to the handler's type.
    #[error("arguments for `{tool}` do not bind to `{type_name}`: {error}")]
    Deserialization {
        /// The tool's name.
        tool: String,
        /// The value that did not bind.
        value: Value,
        /// The Rust type it failed to bind to.
        type_name: &'static str,
        /// The deserializer's message.
        error: String,
        /// True when the tool is marked sensitive: messages do not echo the value.
        sensitive: bool,
    },
    /// The tool ran and failed.
    #[error("`{tool}` failed: {}", error.message())]
    Execution {
        /// The tool's name.
        tool: String,
        /// The arguments it ran with.
        arguments: Value,
        /// The tool's own error, transient or permanent.
        error: ExecError,
    },
    /// The storm guard stopped a call that repeats the same call again and again; it did
    /// not run.
    #[error("`{tool}` was not run: it repeats the same call ({repeats} times in the window)")]
    Repeated {
        /// The tool's name.
        tool: String,
        /// How many times the same call appears in the guard's window, this one included.
        repeats: usize,
        /// The guard's message for the model (written by `toolfix::feedback`).
        message: String,
    },
    /// Someone gave up: a fixer, the retry loop or the per-turn counter.
    #[error("escalated by {who} ({}): {why}", severity.as_str())]
    Escalation {
        /// Who gave up: a fixer's name, `tool`, `retry`, `turn`.
        who: String,
        /// Why.
        why: Reason,
        /// How serious it is.
        severity: Severity,
        /// The error that led here.
        original: Box<ToolError>,
        /// Attempts made before giving up.
        attempts: u32,
    },
}

impl ToolError {
    /// The tool the error is about (for an escalation, the original error's tool).
    #[must_use]
    pub fn tool(&self) -> &str {
        match self {
            ToolError::InvalidArgs { tool, .. }
            | ToolError::Deserialization { tool, .. }
            | ToolError::Execution { tool, .. }
            | ToolError::Repeated { tool, .. } => tool,
            ToolError::Escalation { original, .. } => original.tool(),
        }
    }

    /// Wrap this error in an escalation.
    #[must_use]
    pub fn escalate(self, who: impl Into<String>, why: Reason, severity: Severity, attempts: u32) -> ToolError {
        ToolError::Escalation { who: who.into(), why, severity, original: Box::new(self), attempts }
    }
}

/// Why a call was escalated, as data; `feedback` writes its words (for the model and for
/// [`Display`](std::fmt::Display)).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reason {
    /// A fixer said the call cannot be fixed, in its own words (`CANNOT_FIX: why`).
    CannotFix(String),
    /// The tool's execution policy escalated its failure (the tool's own message).
    ToolFailed(String),
    /// A tool that changes things failed with a transient error: it is never retried,
    /// since the failed run may have taken effect.
    NotRetried,
    /// Still failing after this many attempts.
    StillFailing {
        /// Attempts made.
        attempts: u32,
    },
    /// This many calls of the turn failed repair: the caller should switch to a stronger
    /// model.
    TurnFailed {
        /// Calls that failed repair.
        failures: u32,
    },
}

/// Why setting up a dispatcher or fixer failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A tool definition did not compile, or its name is taken.
    #[error(transparent)]
    Definition(#[from] toolfix::Error),
    /// No tool of that name is registered.
    #[error("no tool is named `{0}`")]
    UnknownTool(String),
    /// A model reply could not be read (larger than the limits allow).
    #[error("the reply could not be read: {0}")]
    Reply(toolfix::Error),
    /// The HTTP client for the LLM fixer could not be built.
    #[error("the http client could not be built: {0}")]
    Client(String),
}
