//! The `toolfix` Python package's native module (`toolfix._toolfix`): the library's
//! lenient JSON, tool-call repair and whole-reply fixing, with values converted without a
//! JSON round trip. The framework hooks are pure Python (`python/toolfix/`).
//!
//! Built by maturin (`pyproject.toml`), which sets `PYO3_BUILD_EXTENSION_MODULE` so the
//! wheel does not link libpython; a plain `cargo build` or `cargo clippy` of this crate
//! links it as PyO3 does by default, so the workspace's commands need nothing more than
//! `python3`.

mod convert;
mod fixer;
mod json;
mod reply;
mod stream;
mod tools;

use pyo3::prelude::*;

/// Fix a whole reply without tools: calls found and their JSON salvaged; the cut-off rule
/// applies as to a tool that may change things. See `ToolSet.fix_reply`.
#[pyfunction]
#[pyo3(signature = (content = None, reasoning_content = None, tool_calls = None, finish_reason = None, history = None))]
fn fix_reply(
    py: Python<'_>,
    content: Option<&str>,
    reasoning_content: Option<&str>,
    tool_calls: Option<&Bound<'_, PyAny>>,
    finish_reason: Option<&str>,
    history: Option<&Bound<'_, PyAny>>,
) -> PyResult<reply::PyFixedReply> {
    tools::fix_without_tools(py, content, reasoning_content, tool_calls, finish_reason, history)
}

/// Seconds that `repair_call` takes over `calls` (name, arguments) `repeat` times, in Rust
/// alone, outcomes dropped: the benchmark script's baseline for the Python call's overhead.
#[pyfunction]
#[expect(clippy::needless_pass_by_value, reason = "PyO3 extracts the list by value")]
fn _time_repair_calls(tools: &tools::PyToolSet, calls: Vec<(String, String)>, repeat: usize) -> f64 {
    let start = std::time::Instant::now();
    for _ in 0..repeat {
        for (name, text) in &calls {
            std::hint::black_box(tools.inner.repair_call(name, text));
        }
    }
    start.elapsed().as_secs_f64()
}

/// Seconds that `salvage` takes over `texts` `repeat` times, in Rust alone: the benchmark
/// script's baseline for `loads`.
#[pyfunction]
#[expect(clippy::needless_pass_by_value, reason = "PyO3 extracts the list by value")]
fn _time_salvage(texts: Vec<String>, repeat: usize) -> f64 {
    let start = std::time::Instant::now();
    for _ in 0..repeat {
        for text in &texts {
            let _ = std::hint::black_box(toolfix::salvage::salvage(text));
        }
    }
    start.elapsed().as_secs_f64()
}

#[pymodule]
fn _toolfix(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("RepairError", m.py().get_type::<json::RepairError>())?;
    m.add_function(wrap_pyfunction!(json::loads, m)?)?;
    m.add_function(wrap_pyfunction!(json::repair_json, m)?)?;
    m.add_function(wrap_pyfunction!(fix_reply, m)?)?;
    m.add_function(wrap_pyfunction!(_time_repair_calls, m)?)?;
    m.add_function(wrap_pyfunction!(_time_salvage, m)?)?;
    m.add_class::<tools::PyToolSet>()?;
    m.add_class::<tools::PyCallOutcome>()?;
    m.add_class::<reply::PyFixedReply>()?;
    m.add_class::<reply::PyFixedCall>()?;
    m.add_class::<fixer::PyCallFixer>()?;
    m.add_class::<stream::PyReplyStream>()?;
    m.add_class::<stream::PyEvent>()?;
    Ok(())
}
