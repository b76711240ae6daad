//! Properties: whatever a fixer answers, the tool only ever runs with arguments its schema
//! accepts; backoff delays never shrink and never pass the cap.

use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use toolfix_agent::{
    Backoff, Call, Dispatcher, Effect, ExecError, Handlers, Jitter, Outcome, TokioTimer, Turn, text_fixer,
};

#[derive(Deserialize, JsonSchema)]
struct Move {
    from: String,
    to: String,
    overwrite: Option<bool>,
}

fn answers() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,40}",
        r#"\{"from": ?"[a-z/]{0,6}",? ?("to"|"too"|"dest"): ?("[a-z/]{0,6}"|[0-9]{1,3}|null|true)\}"#,
        r#"\{'from': '[a-z]{0,3}', 'to': '[a-z]{0,3}', 'overwrite': ('yes'|'true'|1|"x")\}"#,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn only_valid_arguments_reach_the_tool(raw in answers(), fix in answers()) {
        let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
        let s = Arc::clone(&seen);
        let mut d = Dispatcher::new(TokioTimer);
        d.register("mv", "Move a file.", Effect::Mutating, move |m: Move| {
            s.lock().unwrap().push(serde_json::json!({"from": m.from, "to": m.to, "overwrite": m.overwrite}));
            async { Ok::<_, ExecError>("moved") }
        }).unwrap();
        let fixed = fix.clone();
        d.set_handlers("mv", Handlers::new().fixer(text_fixer("any", move |_| Some(fixed.clone())))).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        let out = rt.block_on(d.dispatch(&mut Turn::new(), &Call::new("mv", raw.as_str())));
        let tool = d.tools().tool("mv").unwrap();
        match out {
            Outcome::Result(done) => {
                prop_assert!(tool.is_valid(&done.arguments), "{}", done.arguments);
                prop_assert_eq!(seen.lock().unwrap().len(), 1);
            }
            _ => prop_assert!(seen.lock().unwrap().is_empty()),
        }
    }

    #[test]
    fn backoff_never_shrinks_and_is_capped(base in 1u64..1_000, cap in 1u64..100_000, seed: u64) {
        let cap = Duration::from_millis(cap);
        let b = Backoff::new(Duration::from_millis(base), cap);
        let jitter = Jitter::seeded(seed);
        let mut last = Duration::ZERO;
        for n in 0..40 {
            let d = b.delay(n, &jitter);
            prop_assert!(d >= last, "retry {}: {:?} < {:?}", n, d, last);
            prop_assert!(d <= b.ceiling(n) && d <= cap.max(Duration::from_millis(base)));
            last = d;
        }
    }
}
