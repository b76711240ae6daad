//! The dispatcher's outcomes and bounds, one test per handler kind and outcome. Time is
//! tokio's paused clock: no test sleeps.

#![expect(clippy::unwrap_used, reason = "tests")]

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;
use toolfix_agent::{
    Backoff, Bounds, BoxFuture, Call, Dispatcher, Effect, ExecError, FixAnswer, FixRequest, Fixer, Handlers, Jitter,
    OnExecution, Outcome, Reason, Severity, TokioTimer, ToolError, Turn, text_fixer,
};

#[derive(Debug, Deserialize, JsonSchema)]
struct Write {
    path: String,
    content: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Fetch {
    url: String,
}

/// A counter of runs, shared with a handler.
fn counter() -> Arc<AtomicU32> {
    Arc::new(AtomicU32::new(0))
}

fn runs(c: &AtomicU32) -> u32 {
    c.load(Ordering::SeqCst)
}

/// A dispatcher with `write` (mutating, succeeds) counting its runs.
fn with_write(runs: &Arc<AtomicU32>) -> Dispatcher {
    let mut d = Dispatcher::new(TokioTimer).with_jitter(Jitter::seeded(1));
    let r = Arc::clone(runs);
    d.register("write", "Write a file.", Effect::Mutating, move |w: Write| {
        r.fetch_add(1, Ordering::SeqCst);
        async move { Ok::<_, ExecError>(format!("wrote {} bytes to {}", w.content.len(), w.path)) }
    })
    .unwrap();
    d
}

/// A fixer that records that it ran and answers `answer`.
struct Scripted {
    name: &'static str,
    answer: FixAnswer,
    model: bool,
    calls: Arc<AtomicU32>,
}

impl Fixer for Scripted {
    fn name(&self) -> &str {
        self.name
    }
    fn uses_model(&self) -> bool {
        self.model
    }
    fn fix<'a>(&'a self, _: FixRequest<'a>) -> BoxFuture<'a, FixAnswer> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(std::future::ready(self.answer.clone()))
    }
}

fn scripted(name: &'static str, answer: FixAnswer, calls: &Arc<AtomicU32>) -> Scripted {
    Scripted { name, answer, model: false, calls: Arc::clone(calls) }
}

#[tokio::test]
async fn valid_call_runs_untouched() {
    let ran = counter();
    let d = with_write(&ran);
    let out = d.dispatch(&mut Turn::new(), &Call::new("write", r#"{"path": "/a", "content": "hi"}"#)).await;
    let Outcome::Result(s) = out else { panic!("{out:?}") };
    assert_eq!(s.output, "wrote 2 bytes to /a");
    assert!(s.repairs.is_empty() && s.fixed_by.is_none() && s.retries == 0);
    assert_eq!(runs(&ran), 1);
}

#[tokio::test]
async fn pipeline_repair_runs_without_fixers() {
    let ran = counter();
    let d = with_write(&ran);
    let out = d.dispatch(&mut Turn::new(), &Call::new("Write", "{'path': '/a', 'content': 'hi',}")).await;
    let Outcome::Result(s) = out else { panic!("{out:?}") };
    assert_eq!(s.tool, "write");
    assert_eq!(s.arguments, json!({"path": "/a", "content": "hi"}));
}

#[tokio::test]
async fn deterministic_fixer_fixes_and_the_fix_is_validated() {
    let ran = counter();
    let mut d = with_write(&ran);
    // `path=/a content=hi`: not JSON; a deterministic fixer for this model's habit.
    let fixer = text_fixer("key_equals_value", |raw| {
        let mut map = serde_json::Map::new();
        for pair in raw.split_whitespace() {
            let (k, v) = pair.split_once('=')?;
            map.insert(k.to_owned(), Value::String(v.to_owned()));
        }
        Some(Value::Object(map).to_string())
    });
    d.set_handlers("write", Handlers::new().fixer(fixer)).unwrap();
    let mut turn = Turn::new();
    let out = d.dispatch(&mut turn, &Call::new("write", "path=/a content=hi")).await;
    let Outcome::Result(s) = out else { panic!("{out:?}") };
    assert_eq!(s.fixed_by.as_deref(), Some("key_equals_value"));
    assert_eq!(s.arguments, json!({"path": "/a", "content": "hi"}));
    assert_eq!(turn.attempts(), 1);
    assert_eq!(turn.failures(), 0);
}

#[tokio::test]
async fn a_fix_that_does_not_validate_never_reaches_the_tool() {
    let ran = counter();
    let mut d = with_write(&ran);
    let calls = counter();
    let bad = FixAnswer::Fixed(r#"{"path": "/a"}"#.to_owned()); // content still missing
    let worse = FixAnswer::Fixed("not json at all {{{".to_owned());
    d.set_handlers(
        "write",
        Handlers::new().fixer(scripted("bad", bad, &calls)).fixer(scripted("worse", worse, &calls)),
    )
    .unwrap();
    let mut turn = Turn::new();
    let out = d.dispatch(&mut turn, &Call::new("write", r#"{"path": "/a""#)).await;
    let Outcome::Retry { message, error } = out else { panic!("{out:?}") };
    assert_eq!(runs(&ran), 0, "the tool never ran");
    assert_eq!(runs(&calls), 2, "each fixer ran once");
    assert_eq!(turn.attempts(), 2, "a fix that does not validate counts as an attempt");
    assert!(matches!(error, ToolError::InvalidArgs { .. }));
    assert!(message.contains("/content"), "{message}");
}

#[tokio::test]
async fn fixers_are_bounded_per_call_and_per_turn() {
    let ran = counter();
    let calls = counter();
    let mut d = with_write(&ran).with_bounds(Bounds::default().with_fix_attempts_per_call(2).with_attempts_per_turn(3));
    let mut handlers = Handlers::new();
    for _ in 0..5 {
        handlers = handlers.fixer(scripted("decliner", FixAnswer::Decline, &calls));
    }
    d.set_handlers("write", handlers).unwrap();
    let mut turn = Turn::new();
    let bad = Call::new("write", "{}");
    assert!(matches!(d.dispatch(&mut turn, &bad).await, Outcome::Retry { .. }));
    assert_eq!(runs(&calls), 2, "per call");
    assert!(matches!(d.dispatch(&mut turn, &bad).await, Outcome::Retry { .. }));
    assert_eq!(runs(&calls), 3, "per turn");
    assert_eq!(turn.attempts(), 3);
}

#[tokio::test]
async fn model_fixers_are_skipped_when_output_was_cut_off() {
    let ran = counter();
    let calls = counter();
    let mut d = with_write(&ran);
    let llm = Scripted {
        name: "llm",
        answer: FixAnswer::Fixed(r#"{"path": "/a", "content": "invented"}"#.into()),
        model: true,
        calls: Arc::clone(&calls),
    };
    d.set_handlers("write", Handlers::new().fixer(llm)).unwrap();
    let cut = Call::new("write", r#"{"path": "/a", "cont"#).with_hit_token_limit(true);
    let out = d.dispatch(&mut Turn::new(), &cut).await;
    assert!(matches!(out, Outcome::Retry { .. }), "{out:?}");
    assert_eq!(runs(&calls), 0);
    assert_eq!(runs(&ran), 0);
    // The same call not cut off: the model fixer runs, and its fix is validated.
    let out = d.dispatch(&mut Turn::new(), &cut.with_hit_token_limit(false)).await;
    assert!(matches!(out, Outcome::Result(_)), "{out:?}");
    assert_eq!(runs(&calls), 1);
}

#[tokio::test]
async fn cannot_fix_escalates_with_its_full_context() {
    let ran = counter();
    let calls = counter();
    let mut d = with_write(&ran);
    let declines = scripted("first", FixAnswer::Decline, &calls);
    let gives_up = scripted("llm", FixAnswer::CannotFix("the content is not in the call".into()), &calls);
    d.set_handlers("write", Handlers::new().fixer(declines).fixer(gives_up)).unwrap();
    let out = d.dispatch(&mut Turn::new(), &Call::new("write", r#"{"path": "/a"}"#)).await;
    let Outcome::Escalation(ToolError::Escalation { who, why, severity, original, attempts }) = out else {
        panic!("{out:?}")
    };
    assert_eq!(
        (who.as_str(), why, severity, attempts),
        ("llm", Reason::CannotFix("the content is not in the call".into()), Severity::Medium, 2)
    );
    let ToolError::InvalidArgs { tool, raw, refusal, schema } = *original else { panic!() };
    assert_eq!((tool.as_str(), raw.as_str()), ("write", r#"{"path": "/a"}"#));
    assert_eq!(refusal.issues[0].path, "/content");
    assert_eq!(schema["required"], json!(["path", "content"]));
    assert_eq!(runs(&ran), 0);
}

/// A `fetch` tool failing with `error` its first `fails` runs, recording when each run started.
fn flaky(effect: Effect, fails: u32, error: ExecError, policy: OnExecution) -> (Dispatcher, Arc<Mutex<Vec<Instant>>>) {
    let mut d = Dispatcher::new(TokioTimer).with_jitter(Jitter::seeded(42));
    let starts = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&starts);
    d.register("fetch", "Fetch a URL.", effect, move |f: Fetch| {
        let mut list = s.lock().unwrap();
        list.push(Instant::now());
        let n = list.len() as u32;
        let error = error.clone();
        async move { if n <= fails { Err(error) } else { Ok(format!("body of {}", f.url)) } }
    })
    .unwrap();
    d.set_handlers("fetch", Handlers::new().on_execution(policy)).unwrap();
    (d, starts)
}

fn fetch() -> Call {
    Call::new("fetch", r#"{"url": "https://example.invalid"}"#)
}

#[tokio::test(start_paused = true)]
async fn transient_errors_are_retried_with_growing_capped_backoff() {
    let backoff = Backoff::new(Duration::from_millis(100), Duration::from_millis(500));
    let (d, starts) = flaky(Effect::Idempotent, 5, ExecError::transient("timeout"), OnExecution::retry(backoff, 6));
    let mut turn = Turn::new();
    let out = d.dispatch(&mut turn, &fetch()).await;
    let Outcome::Result(s) = out else { panic!("{out:?}") };
    assert_eq!(s.retries, 5);
    assert_eq!(turn.attempts(), 5);
    let starts = starts.lock().unwrap();
    let gaps: Vec<Duration> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(gaps.len(), 5);
    for (n, gap) in gaps.iter().enumerate() {
        let ceiling = backoff.ceiling(n as u32);
        let floor = (Duration::from_millis(50) * (1 << n)).min(Duration::from_millis(500));
        assert!(*gap >= floor && *gap <= ceiling, "retry {n}: {gap:?} not in [{floor:?}, {ceiling:?}]");
    }
    assert!(gaps.windows(2).all(|w| w[1] >= w[0]), "{gaps:?}");
    assert!(gaps.iter().all(|g| *g <= Duration::from_millis(500)), "{gaps:?}");
}

#[tokio::test(start_paused = true)]
async fn retries_stop_at_the_bound_and_escalate() {
    let policy = OnExecution::retry(Backoff::default(), 3);
    let (d, starts) = flaky(Effect::ReadOnly, u32::MAX, ExecError::transient("503"), policy);
    let out = d.dispatch(&mut Turn::new(), &fetch()).await;
    let Outcome::Escalation(ToolError::Escalation { who, severity, attempts, original, .. }) = out else {
        panic!("{out:?}")
    };
    assert_eq!((who.as_str(), severity, attempts), ("retry", Severity::Medium, 4));
    assert!(matches!(*original, ToolError::Execution { ref error, .. } if error.message() == "503"));
    assert_eq!(starts.lock().unwrap().len(), 4, "one run and three retries");
}

#[tokio::test(start_paused = true)]
async fn a_mutating_tool_is_never_retried() {
    let (d, starts) = flaky(Effect::Mutating, 1, ExecError::transient("timeout"), OnExecution::default());
    let out = d.dispatch(&mut Turn::new(), &fetch()).await;
    let Outcome::Escalation(ToolError::Escalation { who, severity, .. }) = &out else { panic!("{out:?}") };
    assert_eq!((who.as_str(), *severity), ("retry", Severity::High));
    assert_eq!(starts.lock().unwrap().len(), 1);
    assert!(out.message_for_model().contains("Do not send it again"), "{}", out.message_for_model());
}

#[tokio::test(start_paused = true)]
async fn permanent_errors_go_back_to_the_model() {
    let (d, starts) = flaky(Effect::ReadOnly, 1, ExecError::permanent("404 not found"), OnExecution::default());
    let out = d.dispatch(&mut Turn::new(), &fetch()).await;
    let Outcome::Retry { message, error } = out else { panic!("{out:?}") };
    assert!(message.contains("404 not found") && message.contains("change the arguments"), "{message}");
    assert!(matches!(error, ToolError::Execution { .. }));
    assert_eq!(starts.lock().unwrap().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn fatal_errors_stop_hard_and_policies_escalate() {
    let (d, _) = flaky(Effect::ReadOnly, 1, ExecError::fatal("signature mismatch"), OnExecution::default());
    assert!(matches!(d.dispatch(&mut Turn::new(), &fetch()).await, Outcome::HardStop(ToolError::Execution { .. })));
    let (d, _) = flaky(Effect::ReadOnly, 1, ExecError::permanent("quota"), OnExecution::escalate(Severity::Low));
    let out = d.dispatch(&mut Turn::new(), &fetch()).await;
    assert!(matches!(out, Outcome::Escalation(ToolError::Escalation { severity: Severity::Low, .. })), "{out:?}");
    let (d, starts) = flaky(Effect::ReadOnly, 1, ExecError::transient("x"), OnExecution::hard_stop());
    assert!(matches!(d.dispatch(&mut Turn::new(), &fetch()).await, Outcome::HardStop(_)));
    assert_eq!(starts.lock().unwrap().len(), 1);
}

/// An absolute path: the schema says string, binding checks more.
#[derive(Debug, JsonSchema)]
#[schemars(transparent)]
struct AbsPath(String);

impl<'de> Deserialize<'de> for AbsPath {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<AbsPath, D::Error> {
        let s = String::deserialize(d)?;
        if s.starts_with('/') { Ok(AbsPath(s)) } else { Err(serde::de::Error::custom("the path is not absolute")) }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Read {
    path: AbsPath,
}

fn reader(ran: &Arc<AtomicU32>) -> Dispatcher {
    let mut d = Dispatcher::new(TokioTimer);
    let r = Arc::clone(ran);
    d.register("read", "Read a file.", Effect::ReadOnly, move |a: Read| {
        r.fetch_add(1, Ordering::SeqCst);
        async move { Ok::<_, ExecError>(a.path.0) }
    })
    .unwrap();
    d
}

#[tokio::test]
async fn sanitiser_makes_a_value_bind_and_is_validated() {
    let ran = counter();
    let mut d = reader(&ran);
    let call = Call::new("read", r#"{"path": "etc/hosts"}"#);
    let out = d.dispatch(&mut Turn::new(), &call).await;
    let Outcome::Retry { error: ToolError::Deserialization { type_name, error, .. }, message } = out else {
        panic!("{out:?}")
    };
    assert!(type_name.ends_with("Read") && error.contains("not absolute"), "{type_name} {error}");
    assert!(message.contains("not absolute"), "{message}");
    d.set_handlers(
        "read",
        Handlers::new().sanitiser(|v| {
            let p = v.get("path")?.as_str()?;
            Some(json!({"path": format!("/{p}")}))
        }),
    )
    .unwrap();
    let Outcome::Result(s) = d.dispatch(&mut Turn::new(), &call).await else { panic!() };
    assert!(s.sanitised);
    assert_eq!(s.output, "/etc/hosts");
    // A sanitiser whose output breaks the schema: never run.
    d.set_handlers("read", Handlers::new().sanitiser(|_| Some(json!({"path": 5})))).unwrap();
    let out = d.dispatch(&mut Turn::new(), &call).await;
    assert!(matches!(out, Outcome::Retry { error: ToolError::Deserialization { .. }, .. }), "{out:?}");
    assert_eq!(runs(&ran), 1);
}

#[tokio::test]
async fn repeated_repair_failures_ask_for_a_stronger_model() {
    let ran = counter();
    let d = with_write(&ran).with_bounds(Bounds::default().with_failures_before_switch(3));
    let mut turn = Turn::new();
    let bad = Call::new("write", r#"{"path": 1}"#);
    for _ in 0..2 {
        assert!(matches!(d.dispatch(&mut turn, &bad).await, Outcome::Retry { .. }));
        assert!(!turn.switch_model());
    }
    let out = d.dispatch(&mut turn, &bad).await;
    let Outcome::Escalation(ToolError::Escalation { who, why, severity, .. }) = out else { panic!("{out:?}") };
    assert_eq!((who.as_str(), severity), ("turn", Severity::High));
    assert_eq!(why, Reason::TurnFailed { failures: 3 });
    assert!(why.to_string().contains("stronger model"), "{why}");
    assert!(turn.switch_model());
    assert_eq!(runs(&ran), 0);
}

#[tokio::test]
async fn unknown_tools_are_refused_with_the_names_offered() {
    let ran = counter();
    let d = with_write(&ran);
    let out = d.dispatch(&mut Turn::new(), &Call::new("delete", "{}")).await;
    let Outcome::Retry { message, error: ToolError::InvalidArgs { schema, .. } } = out else { panic!("{out:?}") };
    assert!(message.contains("`write`"), "{message}");
    assert_eq!(schema, Value::Null);
}

#[tokio::test]
async fn per_tool_handlers_override_defaults() {
    let ran = counter();
    let default_calls = counter();
    let own_calls = counter();
    let mut d = with_write(&ran).with_default_handlers(Handlers::new().fixer(scripted(
        "default",
        FixAnswer::Decline,
        &default_calls,
    )));
    let bad = Call::new("write", "{}");
    let _ = d.dispatch(&mut Turn::new(), &bad).await;
    assert_eq!(runs(&default_calls), 1);
    d.set_handlers("write", Handlers::new().fixer(scripted("own", FixAnswer::Decline, &own_calls))).unwrap();
    let _ = d.dispatch(&mut Turn::new(), &bad).await;
    assert_eq!((runs(&default_calls), runs(&own_calls)), (1, 1));
    d.set_handlers("write", Handlers::new().no_fixers()).unwrap();
    let _ = d.dispatch(&mut Turn::new(), &bad).await;
    assert_eq!((runs(&default_calls), runs(&own_calls)), (1, 1));
    assert!(d.set_handlers("nope", Handlers::new()).is_err());
}

#[test]
fn definitions_come_from_the_types() {
    let d = with_write(&counter());
    let defs = d.definitions();
    assert_eq!(defs[0]["function"]["name"], "write");
    assert_eq!(defs[0]["function"]["parameters"]["required"], json!(["path", "content"]));
    let mut d = d;
    assert!(d.register("write", "", Effect::Mutating, |_: Write| async { Ok::<_, ExecError>(()) }).is_err());
}

#[tokio::test]
async fn library_extensions_apply_to_registered_tools() {
    use toolfix::schema::Extensions;
    let ran = counter();
    let ext = Extensions::new()
        .with_field_matcher(|given, _| (given == "body").then(|| "content".to_owned()))
        .with_contract("write", "paths are absolute");
    let mut d = Dispatcher::new(TokioTimer).with_extensions(ext);
    let r = Arc::clone(&ran);
    d.register("write", "Write a file.", Effect::Mutating, move |w: Write| {
        r.fetch_add(1, Ordering::SeqCst);
        async move { Ok::<_, ExecError>(w.content) }
    })
    .unwrap();
    assert_eq!(d.definitions()[0]["function"]["description"], "Write a file.\n\nContract: paths are absolute");
    let out = d.dispatch(&mut Turn::new(), &Call::new("write", r#"{"path": "/a", "body": "hi"}"#)).await;
    let Outcome::Result(s) = out else { panic!("{out:?}") };
    assert_eq!(s.repairs[0].kind.as_str(), "extension_matched");
    let out = d.dispatch(&mut Turn::new(), &Call::new("write", r#"{"path": "/a"}"#)).await;
    assert!(out.message_for_model().contains("Contract for `write`: paths are absolute"));
}

#[tokio::test]
async fn uncertain_matches_run_only_read_only_tools_that_accept_them_and_are_marked() {
    let ran = counter();
    let mut d = reader(&ran);
    let typo = Call::new("read", r#"{"pth": "/etc/hosts"}"#);
    // Not accepted by default.
    assert!(matches!(d.dispatch(&mut Turn::new(), &typo).await, Outcome::Retry { .. }));
    d.set_handlers("read", Handlers::new().accept_uncertain(true)).unwrap();
    let out = d.dispatch(&mut Turn::new(), &typo).await;
    let Outcome::Result(s) = out else { panic!("{out:?}") };
    assert!(s.uncertain);
    assert_eq!(s.repairs[0].kind.as_str(), "uncertain_match");
    assert_eq!(s.output, "/etc/hosts");
    // A tool that changes things never runs on an uncertain match, even when asked.
    let wrote = counter();
    let mut w = with_write(&wrote);
    w.set_handlers("write", Handlers::new().accept_uncertain(true)).unwrap();
    let out = w.dispatch(&mut Turn::new(), &Call::new("write", r#"{"pth": "/a", "content": "x"}"#)).await;
    assert!(matches!(out, Outcome::Retry { .. }), "{out:?}");
    assert_eq!(runs(&wrote), 0);
}

#[tokio::test(start_paused = true)]
async fn retries_share_the_turn_bound() {
    let policy = OnExecution::retry(Backoff::default(), 5);
    let (d, starts) = flaky(Effect::Idempotent, u32::MAX, ExecError::transient("busy"), policy);
    let d = d.with_bounds(Bounds::default().with_attempts_per_turn(2));
    let mut turn = Turn::new();
    let out = d.dispatch(&mut turn, &fetch()).await;
    assert!(matches!(out, Outcome::Escalation(ToolError::Escalation { attempts: 3, .. })), "{out:?}");
    assert_eq!(starts.lock().unwrap().len(), 3, "one run and the two retries the turn allows");
    // The turn is spent: the next call gets no retry.
    let out = d.dispatch(&mut turn, &fetch()).await;
    assert!(matches!(out, Outcome::Escalation(ToolError::Escalation { attempts: 1, .. })), "{out:?}");
    assert_eq!(starts.lock().unwrap().len(), 4);
}

#[tokio::test]
async fn dispatch_reply_runs_calls_written_in_content_or_reasoning_and_stops_storms() {
    let ran = counter();
    let d = with_write(&ran);
    // Hermes markup in `content`: found, moved, run.
    let hermes = r#"Saving it.<tool_call>{"name": "write", "arguments": {"path": "/a", "content": "x"}}</tool_call>"#;
    let done = d.dispatch_reply(&mut Turn::new(), &toolfix::Reply::new(hermes), None).await.unwrap();
    assert_eq!(done.content, "Saving it.");
    let [(call, Outcome::Result(ok))] = done.calls.as_slice() else { panic!("{:?}", done.calls) };
    assert_eq!((call.channel, call.status), (toolfix::extract::Channel::Content, toolfix::CallStatus::Repaired));
    assert_eq!(ok.output, json!("wrote 1 bytes to /a"));
    // The same call left in the reasoning, with no answer: found and run.
    let thought = r#"<tool_call>{"name": "write", "arguments": {"path": "/b", "content": "yz"}}</tool_call>"#;
    let reply = toolfix::Reply::new("").with_reasoning_content(thought);
    let done = d.dispatch_reply(&mut Turn::new(), &reply, None).await.unwrap();
    let [(call, Outcome::Result(_))] = done.calls.as_slice() else { panic!("{:?}", done.calls) };
    assert_eq!(call.channel, toolfix::extract::Channel::Reasoning);
    assert_eq!(runs(&ran), 2);
    // Two earlier identical writes in the history: the third is not run.
    let args = r#"{"path": "/a", "content": "x"}"#;
    let turn_of = |id: &str| {
        json!([{"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
            "function": {"name": "write", "arguments": args}}]},
            {"role": "tool", "tool_call_id": id, "content": "wrote 1 bytes to /a"}])
    };
    let mut history = turn_of("1");
    history.as_array_mut().unwrap().extend(turn_of("2").as_array().unwrap().iter().cloned());
    let calls = json!([{"id": "3", "type": "function", "function": {"name": "write", "arguments": args}}]);
    let reply = toolfix::Reply::new("").with_tool_calls(&calls);
    let done = d.dispatch_reply(&mut Turn::new(), &reply, Some(&history)).await.unwrap();
    let [(call, Outcome::Retry { error: ToolError::Repeated { repeats: 3, .. }, message })] = done.calls.as_slice()
    else {
        panic!("{:?}", done.calls)
    };
    assert_eq!(call.id, "3");
    assert!(message.contains("same result"), "{message}");
    assert_eq!(runs(&ran), 2);
}
