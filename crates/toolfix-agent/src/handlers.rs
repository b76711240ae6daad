//! What to do when a call fails, per tool or by default: a chain of [`Fixer`]s for invalid
//! arguments, a sanitiser for values that do not bind, and an [`OnExecution`] policy for
//! tool failures. A per-tool [`Handlers`] overrides the default one field by field.

use crate::backoff::{Backoff, BoxFuture};
use crate::error::{ExecError, Severity, Transience};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use toolfix::{Refusal, Tool};

/// What a fixer is given: the tool, the arguments as the model wrote them, and why the
/// pipeline refused them.
#[derive(Clone, Copy, Debug)]
pub struct FixRequest<'a> {
    /// The tool called.
    pub tool: &'a Tool,
    /// The arguments as the model wrote them.
    pub raw: &'a str,
    /// The pipeline's refusal.
    pub refusal: &'a Refusal,
}

/// A fixer's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FixAnswer {
    /// New argument text. It goes through the whole pipeline again and must validate.
    Fixed(String),
    /// Not this fixer's case: the next one is tried.
    Decline,
    /// The fixer knows the call cannot be fixed (a value is missing): an escalation.
    CannotFix(String),
}

/// One step of the invalid-arguments chain.
pub trait Fixer: Send + Sync {
    /// A short name, shown in outcomes and escalations.
    fn name(&self) -> &str;

    /// True when the fixer asks a model: such a fixer is never used on output that was cut
    /// off by the token limit (the missing part needs the model that wrote it).
    fn uses_model(&self) -> bool {
        false
    }

    /// Try to fix the call.
    fn fix<'a>(&'a self, request: FixRequest<'a>) -> BoxFuture<'a, FixAnswer>;
}

/// A deterministic fixer from a function over the raw text: `Some(text)` is a fix, `None`
/// declines.
///
/// ```
/// use toolfix_agent::{Fixer, text_fixer};
///
/// // Models that write `path=/tmp/a` instead of JSON for a one-field tool.
/// let fixer = text_fixer("key_equals_value", |raw| {
///     let (k, v) = raw.split_once('=')?;
///     Some(serde_json::json!({ k.trim(): v.trim() }).to_string())
/// });
/// assert_eq!(fixer.name(), "key_equals_value");
/// ```
pub fn text_fixer<F>(name: &str, fix: F) -> impl Fixer + 'static
where
    F: Fn(&str) -> Option<String> + Send + Sync + 'static,
{
    TextFixer { name: name.to_owned(), fix }
}

struct TextFixer<F> {
    name: String,
    fix: F,
}

impl<F> Fixer for TextFixer<F>
where
    F: Fn(&str) -> Option<String> + Send + Sync,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn fix<'a>(&'a self, request: FixRequest<'a>) -> BoxFuture<'a, FixAnswer> {
        let answer = (self.fix)(request.raw).map_or(FixAnswer::Decline, FixAnswer::Fixed);
        Box::pin(std::future::ready(answer))
    }
}

/// What the execution policy decides for one tool failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Retry after a backoff. Honoured only for a transient error on a tool that does not
    /// mutate, within the retry bound; otherwise the call escalates.
    Retry,
    /// Give the model the tool's error so it can change course.
    Reprompt,
    /// Hand the failure to the caller.
    Escalate(Severity),
    /// Stop the loop (security, data corruption).
    HardStop,
}

/// A function from a tool failure to a [`Decision`].
pub type Decide = Arc<dyn Fn(&ExecError) -> Decision + Send + Sync>;

/// The execution policy: how to decide, how long to wait, how many retries.
#[derive(Clone)]
pub struct OnExecution {
    pub(crate) decide: Decide,
    pub(crate) backoff: Backoff,
    pub(crate) max_retries: u32,
}

impl fmt::Debug for OnExecution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnExecution")
            .field("backoff", &self.backoff)
            .field("max_retries", &self.max_retries)
            .finish_non_exhaustive()
    }
}

impl Default for OnExecution {
    /// Fatal → hard stop; transient → retry (3 times, default backoff); permanent →
    /// re-prompt.
    fn default() -> OnExecution {
        OnExecution::retry(Backoff::default(), 3)
    }
}

impl OnExecution {
    /// The default decision with this backoff and retry bound.
    #[must_use]
    pub fn retry(backoff: Backoff, max_retries: u32) -> OnExecution {
        OnExecution { decide: Arc::new(default_decision), backoff, max_retries }
    }

    /// Every failure escalates with `severity` (fatal ones still stop hard).
    #[must_use]
    pub fn escalate(severity: Severity) -> OnExecution {
        OnExecution::default()
            .with_decide(move |e| if e.is_fatal() { Decision::HardStop } else { Decision::Escalate(severity) })
    }

    /// Every failure stops the loop.
    #[must_use]
    pub fn hard_stop() -> OnExecution {
        OnExecution::default().with_decide(|_| Decision::HardStop)
    }

    /// This policy deciding with `decide`.
    #[must_use]
    pub fn with_decide(self, decide: impl Fn(&ExecError) -> Decision + Send + Sync + 'static) -> OnExecution {
        OnExecution { decide: Arc::new(decide), ..self }
    }

    /// This policy with another backoff.
    #[must_use]
    pub fn with_backoff(self, backoff: Backoff) -> OnExecution {
        OnExecution { backoff, ..self }
    }

    /// This policy with another retry bound.
    #[must_use]
    pub fn with_max_retries(self, max_retries: u32) -> OnExecution {
        OnExecution { max_retries, ..self }
    }
}

fn default_decision(error: &ExecError) -> Decision {
    match error.transience() {
        _ if error.is_fatal() => Decision::HardStop,
        Transience::Transient => Decision::Retry,
        Transience::Permanent => Decision::Reprompt,
    }
}

/// A function that may turn a value that did not bind into one that does (`None`: no).
pub type Sanitiser = Arc<dyn Fn(&Value) -> Option<Value> + Send + Sync>;

/// The recovery declared for a tool, or by default. Unset fields fall back to the default
/// handlers' ones.
///
/// ```
/// use toolfix_agent::{Handlers, OnExecution, Severity, text_fixer};
///
/// let handlers = Handlers::new()
///     .fixer(text_fixer("trim", |raw| Some(raw.trim_matches('`').to_owned())))
///     .sanitiser(|v| Some(v.clone()))
///     .on_execution(OnExecution::escalate(Severity::High));
/// # let _ = handlers;
/// ```
#[derive(Clone, Default)]
pub struct Handlers {
    pub(crate) fixers: Option<Vec<Arc<dyn Fixer>>>,
    pub(crate) sanitiser: Option<Sanitiser>,
    pub(crate) execution: Option<OnExecution>,
}

impl fmt::Debug for Handlers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Option<Vec<&str>> = self.fixers.as_ref().map(|l| l.iter().map(|x| x.name()).collect());
        f.debug_struct("Handlers")
            .field("fixers", &names)
            .field("sanitiser", &self.sanitiser.is_some())
            .field("execution", &self.execution)
            .finish()
    }
}

impl Handlers {
    /// No handler set: everything falls back to the defaults.
    #[must_use]
    pub fn new() -> Handlers {
        Handlers::default()
    }

    /// Append a fixer to the invalid-arguments chain (tried in order).
    #[must_use]
    pub fn fixer(mut self, fixer: impl Fixer + 'static) -> Handlers {
        self.fixers.get_or_insert_with(Vec::new).push(Arc::new(fixer));
        self
    }

    /// An empty fixer chain: no fixer runs for this tool, whatever the defaults hold.
    #[must_use]
    pub fn no_fixers(mut self) -> Handlers {
        self.fixers = Some(Vec::new());
        self
    }

    /// The sanitiser for values that do not bind.
    #[must_use]
    pub fn sanitiser(mut self, sanitise: impl Fn(&Value) -> Option<Value> + Send + Sync + 'static) -> Handlers {
        self.sanitiser = Some(Arc::new(sanitise));
        self
    }

    /// The execution policy.
    #[must_use]
    pub fn on_execution(mut self, policy: OnExecution) -> Handlers {
        self.execution = Some(policy);
        self
    }

    /// `self` where set, `default` elsewhere.
    pub(crate) fn over(&self, default: &Handlers) -> Handlers {
        Handlers {
            fixers: self.fixers.clone().or_else(|| default.fixers.clone()),
            sanitiser: self.sanitiser.clone().or_else(|| default.sanitiser.clone()),
            execution: self.execution.clone().or_else(|| default.execution.clone()),
        }
    }
}
