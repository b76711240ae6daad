//! A complete small agent loop against a fake model server on loopback HTTP, showing each
//! kind of recovery as it happens: a deterministic repair, calls the model left in its
//! `content` and in its reasoning, a re-prompt, a retry with backoff, an LLM fix, an
//! escalation and a hard stop. Each model reply goes to `Dispatcher::dispatch_reply`
//! whole, so calls written in text are found too.
//!
//! Run it with `cargo run -p toolfix-agent --example agent_loop`.

use axum::Json;
use axum::extract::State;
use axum::routing::post;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use toolfix::Reply;
use toolfix::extract::Channel;
use toolfix_agent::{
    Backoff, Dispatcher, Effect, ExecError, Handlers, LlmFixer, OnExecution, Outcome, TokioTimer, Turn,
};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    run().await?;
    Ok(())
}

/// The loop; returns what it printed.
pub(crate) async fn run() -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let base = serve_fake_models().await?;
    let dispatcher = tools(&base)?;
    let http = reqwest::Client::new();
    let mut messages = vec![json!({"role": "user", "content": "Tidy up my notes."})];
    let mut log = Vec::new();
    let mut say = |line: String| {
        println!("{line}");
        log.push(line);
    };
    'turns: for _ in 0..10 {
        let body = json!({"model": "agent", "messages": messages, "tools": dispatcher.definitions()});
        let reply: Value = http
            .post(format!("{base}/chat/completions"))
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&body)?)
            .send()
            .await?
            .error_for_status()?
            .bytes()
            .await
            .map(|b| serde_json::from_slice(&b))??;
        let choice = &reply["choices"][0];
        let mut turn = Turn::new();
        let history = Value::Array(messages.clone());
        let done = dispatcher.dispatch_reply(&mut turn, &Reply::from_choice(choice), Some(&history)).await?;
        if done.calls.is_empty() {
            say(format!("[done] {}", done.content));
            break;
        }
        // The assistant turn as it will be remembered: its prose and its calls, with ids.
        let calls: Vec<Value> = done
            .calls
            .iter()
            .map(|(c, _)| {
                let arguments = c.arguments_text().unwrap_or(c.written_arguments());
                json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": arguments}})
            })
            .collect();
        messages.push(json!({"role": "assistant", "content": done.content, "tool_calls": calls}));
        for (call, outcome) in &done.calls {
            let place = match call.channel {
                Channel::Content => " (written in content)",
                Channel::Reasoning => " (written in reasoning)",
                _ => "",
            };
            say(format!("model calls {} {}{place}", call.written_name, call.written_arguments()));
            match outcome {
                Outcome::Result(done) => {
                    let mut fixes: Vec<&str> = done
                        .text_fixes
                        .iter()
                        .map(|f| f.kind.as_str())
                        .chain(done.repairs.iter().map(|r| r.kind.as_str()))
                        .collect();
                    fixes.dedup();
                    let how = match (&done.fixed_by, done.retries) {
                        (Some(by), _) if by == "llm" => "LLM fix".to_owned(),
                        (Some(by), _) => format!("fixed by {by}"),
                        (None, n) if n > 0 => format!("retry with backoff ({n} retries)"),
                        (None, _) if !fixes.is_empty() => format!("deterministic repair: {}", fixes.join(", ")),
                        (None, _) => "ran".to_owned(),
                    };
                    say(format!("  [{how}] {} -> {}", done.arguments, done.output));
                }
                Outcome::Retry { message, .. } => say(format!("  [re-prompt] {message}")),
                Outcome::Escalation(error) => say(format!("  [escalation] {error}")),
                Outcome::HardStop(error) => {
                    say(format!("  [hard stop] {error}"));
                    break 'turns;
                }
            }
            messages.push(json!({"role": "tool", "tool_call_id": call.id, "content": outcome.message_for_model()}));
        }
        if turn.switch_model() {
            say("  [escalation] too many failed repairs: switch to a stronger model".to_owned());
        }
    }
    Ok(log)
}

#[derive(Deserialize, JsonSchema)]
struct WriteNote {
    /// Absolute path of the note.
    path: String,
    /// The whole new content.
    content: String,
}

#[derive(Deserialize, JsonSchema)]
struct ReadNote {
    /// Absolute path of the note.
    path: String,
}

#[derive(Deserialize, JsonSchema)]
struct ListNotes {}

#[derive(Deserialize, JsonSchema)]
struct DeleteNote {
    /// Absolute path of the note.
    path: String,
}

/// The tools: a store of notes; `read_note` fails twice with a timeout before it answers;
/// deleting `/` is a data-integrity failure.
fn tools(base: &str) -> Result<Dispatcher, Box<dyn std::error::Error>> {
    let notes: Arc<Mutex<HashMap<String, String>>> = Arc::default();
    let mut d = Dispatcher::new(TokioTimer).with_default_handlers(
        Handlers::new()
            .fixer(LlmFixer::new(base, "fixer")?.with_timeout(Duration::from_secs(5)))
            .on_execution(OnExecution::retry(Backoff::new(Duration::from_millis(5), Duration::from_millis(50)), 3)),
    );
    let store = Arc::clone(&notes);
    d.register("write_note", "Write a note.", Effect::Idempotent, move |a: WriteNote| {
        store.lock().map(|mut n| n.insert(a.path.clone(), a.content.clone())).ok();
        async move { Ok::<_, ExecError>(format!("wrote {} bytes to {}", a.content.len(), a.path)) }
    })?;
    let store = Arc::clone(&notes);
    let timeouts = Arc::new(AtomicU32::new(0));
    d.register("read_note", "Read a note.", Effect::ReadOnly, move |a: ReadNote| {
        let text = store.lock().ok().and_then(|n| n.get(&a.path).cloned());
        let flaky = timeouts.fetch_add(1, Ordering::SeqCst) < 2;
        async move {
            match text {
                _ if flaky => Err(ExecError::transient("the note store timed out")),
                Some(t) => Ok(t),
                None => Err(ExecError::permanent(format!("no note at {}", a.path))),
            }
        }
    })?;
    let store = Arc::clone(&notes);
    d.register("list_notes", "List the notes.", Effect::ReadOnly, move |_: ListNotes| {
        let mut paths: Vec<String> = store.lock().map(|n| n.keys().cloned().collect()).unwrap_or_default();
        paths.sort();
        async move { Ok::<_, ExecError>(paths.join(", ")) }
    })?;
    d.register("delete_note", "Delete a note.", Effect::Mutating, move |a: DeleteNote| async move {
        if a.path == "/" {
            Err(ExecError::fatal("refusing to delete the root of the note store"))
        } else {
            Ok(format!("deleted {}", a.path))
        }
    })?;
    d.set_handlers("delete_note", Handlers::new().no_fixers())?;
    Ok(d)
}

/// One reply of the agent model.
enum Said {
    /// Calls in `tool_calls`: (name, arguments).
    Calls(&'static [(&'static str, &'static str)]),
    /// Text in `content` (a call written in it, in a model's own markup).
    Content(&'static str),
    /// Text in `reasoning_content`, with no `content`.
    Reasoning(&'static str),
}

/// The agent model's script, one reply per turn.
const SCRIPT: &[Said] = &[
    // Single quotes and a trailing comma: repaired by the pipeline.
    Said::Calls(&[("write_note", "{'path': '/todo.txt', 'content': 'buy milk',}")]),
    // The call written in `content`, Hermes style, instead of `tool_calls`: found and run.
    Said::Content(
        "I will note that too.\n<tool_call>{\"name\": \"write_note\", \"arguments\": {\"path\": \"/later.txt\", \"content\": \"call mum\"}}</tool_call>",
    ),
    // The call left in the reasoning, and no answer: found and run.
    Said::Reasoning(
        "The list should be read back. <tool_call>{\"name\": \"list_notes\", \"arguments\": {}}</tool_call>",
    ),
    // `path` missing (`note` is not a name the schema knows): the model is asked again.
    // Deletes have no fixers: a path to delete is never guessed.
    Said::Calls(&[("delete_note", r#"{"note": "/old.txt"}"#)]),
    // Read: two timeouts, retried with backoff. Then prose arguments: the LLM fixer.
    Said::Calls(&[("read_note", r#"{"path": "/todo.txt"}"#), ("write_note", "path /done.txt, content: milk bought")]),
    // The fixer cannot find a value that is not there: an escalation.
    Said::Calls(&[("write_note", "append to /done.txt")]),
    // Deleting the root: a hard stop.
    Said::Calls(&[("delete_note", r#"{"path": "/"}"#)]),
];

type Turns = Arc<AtomicUsize>;

async fn fake_chat(State(turns): State<Turns>, Json(body): Json<Value>) -> Json<Value> {
    let content =
        |text: &str| json!({"choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]});
    if body["model"] == "fixer" {
        let asked = body["messages"][1]["content"].as_str().unwrap_or_default();
        return Json(if asked.contains("path /done.txt, content: milk bought") {
            content(r#"{"path": "/done.txt", "content": "milk bought"}"#)
        } else {
            content("CANNOT_FIX: the content to append is not in the call")
        });
    }
    let n = turns.fetch_add(1, Ordering::SeqCst);
    let calls = match SCRIPT.get(n) {
        None => return Json(content("Your notes are tidy.")),
        Some(Said::Content(text)) => return Json(content(text)),
        Some(Said::Reasoning(text)) => {
            return Json(json!({"choices": [{"message": {"role": "assistant", "content": "",
                "reasoning_content": text}, "finish_reason": "stop"}]}));
        }
        Some(Said::Calls(calls)) => calls,
    };
    let calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| {
            json!({"id": format!("call_{n}_{i}"), "type": "function", "function": {"name": name, "arguments": args}})
        })
        .collect();
    Json(
        json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": calls}, "finish_reason": "tool_calls"}]}),
    )
}

/// Serve the fake models on a free loopback port; the OpenAI-style base URL.
async fn serve_fake_models() -> std::io::Result<String> {
    let app = axum::Router::new().route("/v1/chat/completions", post(fake_chat)).with_state(Turns::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(format!("http://{addr}/v1"))
}
