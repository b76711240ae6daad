//! The [`Dispatcher`]: tools registered once with typed async handlers; [`Dispatcher::dispatch`]
//! runs the pipeline, binding, execution and the declared recovery for one call.

use crate::backoff::{BoxFuture, Jitter, Timer};
use crate::error::{Error, ExecError, Reason, Severity, ToolError, Transience};
use crate::handlers::{Decision, FixAnswer, FixRequest, Handlers};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use toolfix::salvage::TextFix;
use toolfix::schema::Extensions;
use toolfix::{CallOutcome, Effect, FixOptions, FixedCall, Limits, Repair, Reply, Tool, ToolSet, fix_reply};

/// One tool call from the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The tool name as the model wrote it.
    pub name: String,
    /// The arguments as the model wrote them.
    pub arguments: String,
    /// True when the model's output was cut off by the token limit
    /// (`finish_reason == "length"`): no model-based fixer is used.
    pub hit_token_limit: bool,
}

impl Call {
    /// A call to `name` with `arguments` as written.
    pub fn new(name: impl Into<String>, arguments: impl Into<String>) -> Call {
        Call { name: name.into(), arguments: arguments.into(), hit_token_limit: false }
    }

    /// This call, marked as cut off by the token limit or not.
    #[must_use]
    pub fn with_hit_token_limit(self, hit_token_limit: bool) -> Call {
        Call { hit_token_limit, ..self }
    }
}

/// Bounds on recovery work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Bounds {
    /// Fixer runs per call (default 3).
    pub fix_attempts_per_call: u32,
    /// Fixer runs, sanitiser runs and retries per turn, all calls together (default 12).
    pub attempts_per_turn: u32,
    /// Calls that failed repair in a turn before the turn escalates, asking the caller to
    /// switch to a stronger model (default 3).
    pub failures_before_switch: u32,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds { fix_attempts_per_call: 3, attempts_per_turn: 12, failures_before_switch: 3 }
    }
}

impl Bounds {
    /// These bounds with `n` fixer runs per call.
    #[must_use]
    pub fn with_fix_attempts_per_call(self, n: u32) -> Bounds {
        Bounds { fix_attempts_per_call: n, ..self }
    }

    /// These bounds with `n` attempts per turn.
    #[must_use]
    pub fn with_attempts_per_turn(self, n: u32) -> Bounds {
        Bounds { attempts_per_turn: n, ..self }
    }

    /// These bounds escalating after `n` failed calls in a turn.
    #[must_use]
    pub fn with_failures_before_switch(self, n: u32) -> Bounds {
        Bounds { failures_before_switch: n, ..self }
    }
}

/// The recovery state of one model turn: attempts spent and calls that failed repair.
/// Start a new one for each model reply.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Turn {
    attempts: u32,
    failures: u32,
    switch_model: bool,
}

impl Turn {
    /// A fresh turn.
    #[must_use]
    pub fn new() -> Turn {
        Turn::default()
    }

    /// Fixer runs, sanitiser runs and retries spent so far.
    #[must_use]
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Calls that failed repair so far.
    #[must_use]
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// True once the failures passed [`Bounds::failures_before_switch`]: the caller should
    /// switch to a stronger model (which one is the caller's choice).
    #[must_use]
    pub fn switch_model(&self) -> bool {
        self.switch_model
    }
}

/// A call that ran.
#[derive(Clone, Debug, PartialEq)]
pub struct Success {
    /// The tool's declared name.
    pub tool: String,
    /// What the tool returned.
    pub output: Value,
    /// The arguments it ran with.
    pub arguments: Value,
    /// The pipeline's text fixes (JSON syntax) on the arguments that ran.
    pub text_fixes: Vec<TextFix>,
    /// The pipeline's schema repairs on the arguments that ran.
    pub repairs: Vec<Repair>,
    /// The fixer whose fix ran, if one was needed.
    pub fixed_by: Option<String>,
    /// True when the arguments rest on an uncertain property-name match
    /// ([`Handlers::accept_uncertain`], read-only tools only).
    pub uncertain: bool,
    /// True when the sanitiser made the value bind.
    pub sanitised: bool,
    /// Retries after transient failures.
    pub retries: u32,
}

/// What became of one call.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The tool ran.
    Result(Success),
    /// Send `message` to the model as the call's result so it can try again.
    Retry {
        /// The message for the model.
        message: String,
        /// The error, as data.
        error: ToolError,
    },
    /// A [`ToolError::Escalation`] for the caller.
    Escalation(ToolError),
    /// Stop the loop.
    HardStop(ToolError),
}

impl Outcome {
    /// The text to put in the tool-result message for the model: the output, the retry
    /// message, or the error's message.
    #[must_use]
    pub fn message_for_model(&self) -> String {
        match self {
            Outcome::Result(s) => match &s.output {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            },
            Outcome::Retry { message, .. } => message.clone(),
            Outcome::Escalation(e) | Outcome::HardStop(e) => e.message(),
        }
    }
}

/// The calls of one model reply ([`Dispatcher::dispatch_reply`]) and what became of each.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Dispatched {
    /// Each call, in reply order (its id, its name and where it was found), with what
    /// became of it: answer the model with [`Outcome::message_for_model`] under the call's
    /// id.
    pub calls: Vec<(FixedCall, Outcome)>,
    /// The reply's prose, call markup taken out.
    pub content: String,
    /// The reply's reasoning (reasoning blocks found in `content` included).
    pub reasoning_content: Option<String>,
}

/// Arguments the pipeline (or a fix) accepted, with how.
struct Accepted {
    value: Value,
    text_fixes: Vec<TextFix>,
    repairs: Vec<Repair>,
    fixed_by: Option<String>,
    uncertain: bool,
}

impl Accepted {
    fn from(outcome: &CallOutcome, fixed_by: Option<String>) -> Accepted {
        Accepted {
            value: outcome.arguments().cloned().unwrap_or(Value::Null),
            text_fixes: outcome.report().text_fixes.clone(),
            repairs: outcome.repairs().to_vec(),
            fixed_by,
            uncertain: false,
        }
    }
}

enum Failure {
    Bind(String),
    Exec(ExecError),
}

type Run = Arc<dyn Fn(Value) -> BoxFuture<'static, Result<Value, Failure>> + Send + Sync>;

struct Entry {
    effect: Effect,
    handlers: Handlers,
    run: Run,
    type_name: &'static str,
}

/// Tools with typed async handlers and their declared recovery.
///
/// ```
/// # #[cfg(feature = "tokio")] {
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use toolfix_agent::{Call, Dispatcher, Effect, ExecError, Outcome, TokioTimer, Turn};
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Add { a: i64, b: i64 }
///
/// let mut tools = Dispatcher::new(TokioTimer);
/// tools.register("add", "Add two integers.", Effect::ReadOnly,
///     |x: Add| async move { Ok::<_, ExecError>(x.a + x.b) }).unwrap();
///
/// let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
/// let outcome = rt.block_on(tools.dispatch(&mut Turn::new(), &Call::new("add", r#"{"a": 2, "b": "3"}"#)));
/// let Outcome::Result(done) = outcome else { panic!() };
/// assert_eq!(done.output, 5);
/// # }
/// ```
pub struct Dispatcher {
    tools: ToolSet,
    entries: HashMap<String, Entry>,
    defaults: Handlers,
    timer: Arc<dyn Timer>,
    jitter: Jitter,
    bounds: Bounds,
    limits: Limits,
    extensions: Option<Extensions>,
}

impl fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dispatcher")
            .field("tools", &self.tools.tools().iter().map(Tool::name).collect::<Vec<_>>())
            .field("defaults", &self.defaults)
            .field("bounds", &self.bounds)
            .finish_non_exhaustive()
    }
}

impl Dispatcher {
    /// An empty dispatcher sleeping on `timer` between retries.
    pub fn new(timer: impl Timer + 'static) -> Dispatcher {
        Dispatcher {
            tools: ToolSet::default(),
            entries: HashMap::new(),
            defaults: Handlers::new(),
            timer: Arc::new(timer),
            jitter: Jitter::default(),
            bounds: Bounds::default(),
            limits: Limits::default(),
            extensions: None,
        }
    }

    /// This dispatcher with library extension points (field-name matcher, value coercer,
    /// format normalisers, refusal renderer, contract hints) on its tools.
    #[must_use]
    pub fn with_extensions(mut self, extensions: Extensions) -> Dispatcher {
        self.tools = self.tools.with_extensions(extensions.clone());
        self.extensions = Some(extensions);
        self
    }

    /// This dispatcher with default handlers (per-tool ones override them field by field).
    #[must_use]
    pub fn with_default_handlers(mut self, handlers: Handlers) -> Dispatcher {
        self.defaults = handlers;
        self
    }

    /// This dispatcher with other bounds.
    #[must_use]
    pub fn with_bounds(mut self, bounds: Bounds) -> Dispatcher {
        self.bounds = bounds;
        self
    }

    /// This dispatcher with another jitter source (a fixed seed for reproducible delays).
    #[must_use]
    pub fn with_jitter(mut self, jitter: Jitter) -> Dispatcher {
        self.jitter = jitter;
        self
    }

    /// This dispatcher with other input limits for the pipeline.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Dispatcher {
        self.limits = limits;
        self
    }

    /// Register tool `name`: the schema comes from `A` (via schemars), `effect` declares
    /// what it does, `handler` runs it.
    ///
    /// # Errors
    ///
    /// When the derived schema does not compile or a tool of that name exists.
    pub fn register<A, R, F, Fut>(
        &mut self,
        name: &str,
        description: &str,
        effect: Effect,
        handler: F,
    ) -> Result<(), Error>
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: Serialize + 'static,
        F: Fn(A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ExecError>> + Send + 'static,
    {
        let tool = toolfix::bind::tool_for::<A>(name, description)?;
        let mut all = self.tools.tools().to_vec();
        all.push(tool);
        let mut tools = ToolSet::from_tools(all)?;
        tools = tools.with_effect(name, effect)?;
        if let Some(ext) = &self.extensions {
            tools = tools.with_extensions(ext.clone());
        }
        let handler = Arc::new(handler);
        let run: Run = Arc::new(move |value: Value| {
            let handler = Arc::clone(&handler);
            Box::pin(async move {
                let args = A::deserialize(value).map_err(|e| Failure::Bind(e.to_string()))?;
                let out = handler(args).await.map_err(Failure::Exec)?;
                serde_json::to_value(out)
                    .map_err(|e| Failure::Exec(ExecError::permanent(format!("the result does not serialise: {e}"))))
            })
        });
        self.tools = tools;
        let type_name = std::any::type_name::<A>();
        self.entries.insert(name.to_owned(), Entry { effect, handlers: Handlers::new(), run, type_name });
        Ok(())
    }

    /// Declare the recovery for tool `name`, over the defaults.
    ///
    /// # Errors
    ///
    /// When no tool of that name is registered.
    pub fn set_handlers(&mut self, name: &str, handlers: Handlers) -> Result<(), Error> {
        let entry = self.entries.get_mut(name).ok_or_else(|| Error::UnknownTool(name.to_owned()))?;
        entry.handlers = handlers;
        Ok(())
    }

    /// The registered tools, for rendering them to the model.
    #[must_use]
    pub fn tools(&self) -> &ToolSet {
        &self.tools
    }

    /// The tool definitions in OpenAI form (`{"type": "function", "function": {..}}`), each
    /// description followed by the tool's contract hint.
    #[must_use]
    pub fn definitions(&self) -> Vec<Value> {
        self.tools
            .tools()
            .iter()
            .map(|t| {
                serde_json::json!({"type": "function", "function": {
                    "name": t.name(), "description": t.description_for_model(), "parameters": t.parameters_shown()}})
            })
            .collect()
    }

    /// Run one call: pipeline, fixers when refused, binding (sanitiser when it does not
    /// bind), execution and the declared recovery. Every fix goes through the whole
    /// pipeline again and must validate; nothing unvalidated reaches a tool.
    pub async fn dispatch(&self, turn: &mut Turn, call: &Call) -> Outcome {
        let options = toolfix::CallOptions::from(self.limits).with_hit_token_limit(call.hit_token_limit);
        let first = self.tools.repair_call_with(&call.name, &call.arguments, &options);
        self.settle(turn, call, first).await
    }

    /// Run every call of a model reply, as [`dispatch`](Self::dispatch) runs one: the calls
    /// the server parsed and those the model left in `content` or its reasoning (in any of
    /// the formats `toolfix` reads), each kept once, with ids, the cut-off rule of
    /// `finish_reason: "length"` and the storm guard over `history` (the conversation's
    /// `messages`, when known) — the library's whole-reply entry, [`toolfix::fix_reply`].
    ///
    /// ```
    /// # #[cfg(feature = "tokio")] {
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    /// use toolfix::Reply;
    /// use toolfix_agent::{Dispatcher, Effect, ExecError, Outcome, TokioTimer, Turn};
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Read { path: String }
    ///
    /// let mut tools = Dispatcher::new(TokioTimer);
    /// tools.register("read_file", "Read a file.", Effect::ReadOnly,
    ///     |r: Read| async move { Ok::<_, ExecError>(format!("contents of {}", r.path)) }).unwrap();
    /// // The model wrote its call in `content`, Hermes style, instead of `tool_calls`.
    /// let reply = Reply::new("<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.md\"}}</tool_call>");
    /// let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let done = rt.block_on(tools.dispatch_reply(&mut Turn::new(), &reply, None)).unwrap();
    /// let (call, outcome) = &done.calls[0];
    /// assert_eq!(call.name, "read_file");
    /// assert_eq!(outcome.message_for_model(), "contents of a.md");
    /// assert_eq!(done.content, "");
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Reply`] when the reply is larger than the limits allow.
    pub async fn dispatch_reply(
        &self,
        turn: &mut Turn,
        reply: &Reply<'_>,
        history: Option<&Value>,
    ) -> Result<Dispatched, Error> {
        let options = FixOptions::default().with_limits(self.limits);
        let fixed = fix_reply(reply, Some(&self.tools), history, &options).map_err(Error::Reply)?;
        let mut calls = Vec::with_capacity(fixed.calls.len());
        for call in fixed.calls {
            let outcome = if let Some(s) = call.suppressed() {
                let error =
                    ToolError::Repeated { tool: s.tool.clone(), repeats: s.repeats, message: s.message.clone() };
                Outcome::Retry { message: error.message(), error }
            } else {
                let written = Call::new(call.written_name.clone(), call.written_arguments())
                    .with_hit_token_limit(reply.hit_token_limit());
                self.settle(turn, &written, call.outcome().clone()).await
            };
            calls.push((call, outcome));
        }
        Ok(Dispatched { calls, content: fixed.content, reasoning_content: fixed.reasoning_content })
    }

    /// The rest of a call once the pipeline gave its `first` outcome: fixers when refused,
    /// binding, execution and recovery.
    async fn settle(&self, turn: &mut Turn, call: &Call, first: CallOutcome) -> Outcome {
        let (Some(entry), Ok(tool)) = (self.entries.get(first.name()), self.tools.tool(first.name())) else {
            let error = ToolError::InvalidArgs {
                tool: call.name.clone(),
                raw: call.arguments.clone(),
                refusal: refusal_of(&first),
                schema: Value::Null,
            };
            return self.failed(turn, error);
        };
        let handlers = entry.handlers.over(&self.defaults);
        let accepted = if first.is_ok() {
            Accepted::from(&first, None)
        } else {
            match self.fix(turn, tool, entry.effect, call, &first, &handlers).await {
                Ok(accepted) => accepted,
                Err(outcome) => return outcome,
            }
        };
        let Accepted { mut value, text_fixes, mut repairs, fixed_by, uncertain } = accepted;
        let mut sanitised = false;
        let mut retries = 0;
        let policy = handlers.execution.clone().unwrap_or_default();
        loop {
            match (entry.run)(value.clone()).await {
                Ok(output) => {
                    let tool = tool.name().to_owned();
                    return Outcome::Result(Success {
                        tool,
                        output,
                        arguments: value,
                        text_fixes,
                        repairs,
                        fixed_by,
                        uncertain,
                        sanitised,
                        retries,
                    });
                }
                Err(Failure::Bind(error)) => {
                    let failure = ToolError::Deserialization {
                        tool: tool.name().to_owned(),
                        value: value.clone(),
                        type_name: entry.type_name,
                        error,
                        sensitive: tool.is_sensitive(),
                    };
                    let Some(sanitise) = handlers.sanitiser.as_ref().filter(|_| !sanitised) else {
                        return self.failed(turn, failure);
                    };
                    if turn.attempts >= self.bounds.attempts_per_turn {
                        return self.failed(turn, failure);
                    }
                    turn.attempts += 1;
                    let again = sanitise(&value).map(|clean| self.tools.repair_value(tool.name(), &clean));
                    let Some(again) = again.filter(CallOutcome::is_ok) else {
                        return self.failed(turn, failure);
                    };
                    value = again.arguments().cloned().unwrap_or(Value::Null);
                    repairs.extend_from_slice(again.repairs());
                    sanitised = true;
                }
                Err(Failure::Exec(error)) => {
                    let decision = (policy.decide)(&error);
                    let transient = error.transience() == Transience::Transient;
                    let why = error.message().to_owned();
                    let failure =
                        ToolError::Execution { tool: tool.name().to_owned(), arguments: value.clone(), error };
                    match decision {
                        Decision::HardStop => return Outcome::HardStop(failure),
                        Decision::Escalate(severity) => {
                            return Outcome::Escalation(failure.escalate(
                                "tool",
                                Reason::ToolFailed(why),
                                severity,
                                retries + 1,
                            ));
                        }
                        Decision::Retry if transient => {
                            if entry.effect == Effect::Mutating {
                                return Outcome::Escalation(failure.escalate(
                                    "retry",
                                    Reason::NotRetried,
                                    Severity::High,
                                    1,
                                ));
                            }
                            if retries >= policy.max_retries || turn.attempts >= self.bounds.attempts_per_turn {
                                let why = Reason::StillFailing { attempts: retries + 1 };
                                return Outcome::Escalation(failure.escalate(
                                    "retry",
                                    why,
                                    Severity::Medium,
                                    retries + 1,
                                ));
                            }
                            self.timer.sleep(policy.backoff.delay(retries, &self.jitter)).await;
                            retries += 1;
                            turn.attempts += 1;
                        }
                        Decision::Retry | Decision::Reprompt => {
                            return Outcome::Retry { message: failure.message(), error: failure };
                        }
                    }
                }
            }
        }
    }

    /// Run the fixer chain on a refused call: the first fix that validates, or the outcome
    /// to return.
    async fn fix(
        &self,
        turn: &mut Turn,
        tool: &Tool,
        effect: Effect,
        call: &Call,
        refused: &CallOutcome,
        handlers: &Handlers,
    ) -> Result<Accepted, Outcome> {
        let refusal = refusal_of(refused);
        let invalid = || ToolError::InvalidArgs {
            tool: tool.name().to_owned(),
            raw: call.arguments.clone(),
            refusal: refusal.clone(),
            schema: tool.parameters_shown(),
        };
        let mut attempts = 0;
        for fixer in handlers.fixers.iter().flatten() {
            if fixer.uses_model() && call.hit_token_limit {
                continue;
            }
            if attempts >= self.bounds.fix_attempts_per_call || turn.attempts >= self.bounds.attempts_per_turn {
                break;
            }
            attempts += 1;
            turn.attempts += 1;
            match fixer.fix(FixRequest { tool, raw: &call.arguments, refusal: &refusal }).await {
                FixAnswer::Decline => {}
                FixAnswer::CannotFix(why) => {
                    turn.failures += 1;
                    let why = Reason::CannotFix(why);
                    return Err(Outcome::Escalation(invalid().escalate(fixer.name(), why, Severity::Medium, attempts)));
                }
                FixAnswer::Fixed(text) => {
                    let again =
                        self.tools.repair_call_with(tool.name(), &text, &toolfix::CallOptions::from(self.limits));
                    if again.is_ok() {
                        return Ok(Accepted::from(&again, Some(fixer.name().to_owned())));
                    }
                }
            }
        }
        // Last, for read-only tools whose handlers accept it: an uncertain name match.
        if handlers.uncertain == Some(true)
            && effect == Effect::ReadOnly
            && !call.hit_token_limit
            && let (_, Some(found)) = self.tools.repair_call_uncertain(tool.name(), &call.arguments)
        {
            return Ok(Accepted {
                value: found.arguments().clone(),
                text_fixes: refused.report().text_fixes.clone(),
                repairs: found.repairs().to_vec(),
                fixed_by: None,
                uncertain: true,
            });
        }
        Err(self.failed(turn, invalid()))
    }

    /// A call that failed repair: a retry message, or past the turn's threshold, an
    /// escalation asking for a stronger model.
    fn failed(&self, turn: &mut Turn, error: ToolError) -> Outcome {
        turn.failures += 1;
        if turn.failures >= self.bounds.failures_before_switch {
            turn.switch_model = true;
            let why = Reason::TurnFailed { failures: turn.failures };
            let attempts = turn.attempts;
            return Outcome::Escalation(error.escalate("turn", why, Severity::High, attempts));
        }
        Outcome::Retry { message: error.message(), error }
    }
}

fn refusal_of(outcome: &CallOutcome) -> toolfix::Refusal {
    outcome.refusal().cloned().unwrap_or_default()
}
