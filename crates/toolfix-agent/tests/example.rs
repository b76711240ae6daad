//! The `agent_loop` example runs and shows every kind of recovery, in order.

#[expect(dead_code, reason = "the example's `main` is not called here")]
#[path = "../examples/agent_loop.rs"]
mod agent_loop;

#[tokio::test]
async fn the_agent_loop_example_shows_every_recovery() {
    let log = agent_loop::run().await.map_err(|e| e.to_string());
    let log = log.as_deref().unwrap_or_default().join("\n");
    let order = [
        "[deterministic repair",
        "model calls write_note {\"path\": \"/later.txt\", \"content\": \"call mum\"} (written in content)",
        "[ran] {\"path\":\"/later.txt\",\"content\":\"call mum\"} -> \"wrote 8 bytes to /later.txt\"",
        "model calls list_notes {} (written in reasoning)",
        "-> \"/later.txt, /todo.txt\"",
        "[re-prompt] The call to `delete_note` was refused",
        "[retry with backoff (2 retries)]",
        "[LLM fix]",
        "[escalation] escalated by llm (medium): the content to append is not in the call",
        "[hard stop] `delete_note` failed: refusing to delete the root",
    ];
    let mut from = 0;
    for step in order {
        let at = log[from..].find(step).unwrap_or_else(|| panic!("{step:?} missing after byte {from} in:\n{log}"));
        from += at + step.len();
    }
    assert!(!log.contains("[done]"), "the hard stop ends the loop:\n{log}");
}
