//! The LLM fixer against a fake OpenAI-compatible endpoint on loopback: good, bad,
//! invented, refusing, failing and hanging answers.

#![expect(clippy::unwrap_used, reason = "tests")]

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use toolfix_agent::{Call, Dispatcher, Effect, ExecError, Handlers, LlmFixer, Outcome, TokioTimer, ToolError, Turn};

enum Answer {
    Text(&'static str),
    Status(StatusCode),
    Hang,
}

#[derive(Default)]
struct Fake {
    answers: Mutex<VecDeque<Answer>>,
    seen: Mutex<Vec<Value>>,
}

async fn chat(State(fake): State<Arc<Fake>>, Json(body): Json<Value>) -> Response {
    fake.seen.lock().unwrap().push(body);
    let next = fake.answers.lock().unwrap().pop_front();
    match next {
        Some(Answer::Text(text)) => {
            Json(json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}))
                .into_response()
        }
        Some(Answer::Status(code)) => code.into_response(),
        Some(Answer::Hang) => std::future::pending().await,
        None => StatusCode::GONE.into_response(),
    }
}

/// A fake endpoint answering `answers` in order; its base URL and the requests it saw.
async fn serve(answers: Vec<Answer>) -> (String, Arc<Fake>) {
    let fake = Arc::new(Fake { answers: Mutex::new(answers.into()), ..Fake::default() });
    let app = axum::Router::new().route("/v1/chat/completions", post(chat)).with_state(Arc::clone(&fake));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/v1"), fake)
}

#[derive(Deserialize, JsonSchema)]
struct Write {
    path: String,
    content: String,
}

async fn setup(answers: Vec<Answer>, timeout: Duration) -> (Dispatcher, Arc<Fake>, Arc<AtomicU32>) {
    let (url, fake) = serve(answers).await;
    let ran = Arc::new(AtomicU32::new(0));
    let r = Arc::clone(&ran);
    let mut d = Dispatcher::new(TokioTimer);
    d.register("write", "Write a file.", Effect::Mutating, move |w: Write| {
        r.fetch_add(1, Ordering::SeqCst);
        async move { Ok::<_, ExecError>(format!("{}:{}", w.path, w.content)) }
    })
    .unwrap();
    let fixer = LlmFixer::new(&url, "fixer-model").unwrap().with_attempts(2).with_timeout(timeout);
    d.set_handlers("write", Handlers::new().fixer(fixer)).unwrap();
    (d, fake, ran)
}

const PROSE: &str = "write the text hi into /tmp/a";

fn prose() -> Call {
    Call::new("write", PROSE)
}

#[tokio::test]
async fn a_good_answer_is_validated_and_runs() {
    let (d, fake, ran) =
        setup(vec![Answer::Text("```json\n{\"path\": \"/tmp/a\", \"content\": \"hi\"}\n```")], Duration::from_secs(10))
            .await;
    let out = d.dispatch(&mut Turn::new(), &prose()).await;
    let Outcome::Result(s) = out else { panic!("{out:?}") };
    assert_eq!(s.fixed_by.as_deref(), Some("llm"));
    assert_eq!(s.output, "/tmp/a:hi");
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    let seen = fake.seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["temperature"], 0);
    assert_eq!(seen[0]["model"], "fixer-model");
    assert!(seen[0]["messages"][0]["content"].as_str().unwrap().contains("never invent"));
    let user = seen[0]["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains(PROSE) && user.contains("\"required\"") && user.contains("refused"), "{user}");
    insta::assert_snapshot!("system_prompt", seen[0]["messages"][0]["content"].as_str().unwrap());
    insta::assert_snapshot!("user_prompt", user);
}

#[tokio::test]
async fn a_bad_answer_is_fed_back_then_the_fix_is_accepted() {
    let answers =
        vec![Answer::Text("{\"path\": \"/tmp/a\"}"), Answer::Text("{\"path\": \"/tmp/a\", \"content\": \"hi\"}")];
    let (d, fake, ran) = setup(answers, Duration::from_secs(10)).await;
    let out = d.dispatch(&mut Turn::new(), &prose()).await;
    assert!(matches!(out, Outcome::Result(_)), "{out:?}");
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    let seen = fake.seen.lock().unwrap();
    let feedback = seen[1]["messages"][3]["content"].as_str().unwrap();
    assert!(feedback.contains("/content"), "{feedback}");
}

#[tokio::test]
async fn bad_and_invented_answers_never_reach_the_tool() {
    for answers in [
        vec![Answer::Text("{\"path\": \"/tmp/a\"}"), Answer::Text("not json")],
        vec![
            Answer::Text("{\"path\": \"/tmp/a\", \"content\": \"made up\"}"),
            Answer::Text("{\"path\": \"/tmp/b\", \"content\": \"hi\"}"),
        ],
    ] {
        let (d, fake, ran) = setup(answers, Duration::from_secs(10)).await;
        let out = d.dispatch(&mut Turn::new(), &prose()).await;
        assert!(matches!(out, Outcome::Retry { error: ToolError::InvalidArgs { .. }, .. }), "{out:?}");
        assert_eq!(ran.load(Ordering::SeqCst), 0);
        assert_eq!(fake.seen.lock().unwrap().len(), 2, "attempts are bounded");
    }
}

#[tokio::test]
async fn cannot_fix_becomes_an_escalation() {
    let (d, _, ran) =
        setup(vec![Answer::Text("CANNOT_FIX: the content to write is not given")], Duration::from_secs(10)).await;
    let out = d.dispatch(&mut Turn::new(), &Call::new("write", "write /tmp/a")).await;
    let Outcome::Escalation(ToolError::Escalation { who, why, original, .. }) = out else { panic!("{out:?}") };
    assert_eq!(
        (who.as_str(), why),
        ("llm", toolfix_agent::Reason::CannotFix("the content to write is not given".into()))
    );
    assert!(matches!(*original, ToolError::InvalidArgs { ref raw, .. } if raw == "write /tmp/a"));
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn failing_and_hanging_endpoints_decline() {
    for answer in [Answer::Status(StatusCode::INTERNAL_SERVER_ERROR), Answer::Hang] {
        let (d, fake, ran) = setup(vec![answer], Duration::from_millis(300)).await;
        let out = d.dispatch(&mut Turn::new(), &prose()).await;
        assert!(matches!(out, Outcome::Retry { .. }), "{out:?}");
        assert_eq!(ran.load(Ordering::SeqCst), 0);
        assert_eq!(fake.seen.lock().unwrap().len(), 1, "a transport failure ends the fixer's attempts");
    }
}

#[tokio::test]
async fn never_asked_about_output_cut_off_by_the_token_limit() {
    let (d, fake, ran) =
        setup(vec![Answer::Text("{\"path\": \"/tmp/a\", \"content\": \"hi\"}")], Duration::from_secs(10)).await;
    let cut = Call::new("write", r#"{"path": "/tmp/a", "content": "hi"#).with_hit_token_limit(true);
    let out = d.dispatch(&mut Turn::new(), &cut).await;
    assert!(matches!(out, Outcome::Retry { .. }), "{out:?}");
    assert!(fake.seen.lock().unwrap().is_empty());
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}
