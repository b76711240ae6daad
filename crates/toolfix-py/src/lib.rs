//! The `toolfix` Python package's native module (`toolfix._toolfix`): the library's
//! lenient JSON, tool-call repair and whole-reply fixing, with values converted without a
//! JSON round trip. The framework hooks are pure Python (`python/toolfix/`).
//!
//! Built by maturin (`pyproject.toml`), which sets `PYO3_BUILD_EXTENSION_MODULE` so the
//! wheel does not link libpython; a plain `cargo build` or `cargo clippy` of this crate
//! links it as PyO3 does by default, so the workspace's commands need nothing more than
//! `python3`.

mod convert;
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

#[pymodule]
fn _toolfix(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("RepairError", m.py().get_type::<json::RepairError>())?;
    m.add_function(wrap_pyfunction!(json::loads, m)?)?;
    m.add_function(wrap_pyfunction!(json::repair_json, m)?)?;
    m.add_function(wrap_pyfunction!(fix_reply, m)?)?;
    m.add_class::<tools::PyToolSet>()?;
    m.add_class::<tools::PyCallOutcome>()?;
    m.add_class::<reply::PyFixedReply>()?;
    m.add_class::<reply::PyFixedCall>()?;
    m.add_class::<stream::PyReplyStream>()?;
    m.add_class::<stream::PyEvent>()?;
    Ok(())
}
