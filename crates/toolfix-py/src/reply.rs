//! `fix_reply` → `FixedReply` of `FixedCall`s: the library's whole-reply entry.

use crate::convert::{json_to_py, py_to_value, serialized_to_py};
use crate::json::DETACH_BYTES;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use serde_json::Value;
use toolfix::extract::{Channel, Note};
use toolfix::{FixOptions, FixedCall, FixedReply, Reply, ToolSet};

/// The JSON value of an optional Python argument.
fn value_of(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Value>> {
    obj.filter(|o| !o.is_none()).map(py_to_value).transpose()
}

/// Run `fix_reply`, with the GIL released for long replies.
pub(crate) fn fix(
    py: Python<'_>,
    tools: Option<&ToolSet>,
    content: Option<&str>,
    reasoning_content: Option<&str>,
    tool_calls: Option<&Bound<'_, PyAny>>,
    finish_reason: Option<&str>,
    history: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyFixedReply> {
    let calls = value_of(tool_calls)?;
    let history = value_of(history)?;
    let mut reply = Reply::new(content.unwrap_or(""));
    if let Some(r) = reasoning_content {
        reply = reply.with_reasoning_content(r);
    }
    if let Some(c) = &calls {
        reply = reply.with_tool_calls(c);
    }
    if let Some(f) = finish_reason {
        reply = reply.with_finish_reason(f);
    }
    let options = FixOptions::default();
    let size = reply.content.len() + reply.reasoning_content.map_or(0, str::len);
    let run = || toolfix::fix_reply(&reply, tools, history.as_ref(), &options);
    let fixed = if size >= DETACH_BYTES { py.detach(run) } else { run() };
    match fixed {
        Ok(inner) => Ok(PyFixedReply { inner }),
        Err(e) => Err(PyValueError::new_err(e.report())),
    }
}

/// A fixed reply: the calls in order, and the prose and reasoning left.
#[pyclass(frozen, module = "toolfix", name = "FixedReply")]
#[derive(Debug)]
pub(crate) struct PyFixedReply {
    pub(crate) inner: FixedReply,
}

#[pymethods]
impl PyFixedReply {
    /// The calls, in order: `content` calls, then the server's, then calls found in
    /// reasoning (used only when no other channel had one).
    #[getter]
    fn calls(&self) -> Vec<PyFixedCall> {
        self.inner.calls.iter().map(|c| PyFixedCall { inner: c.clone() }).collect()
    }

    /// `content` without call markup.
    #[getter]
    fn content(&self) -> &str {
        &self.inner.content
    }

    /// The reasoning: the `reasoning_content` given and reasoning moved out of `content`.
    #[getter]
    fn reasoning_content(&self) -> Option<&str> {
        self.inner.reasoning_content.as_deref()
    }

    /// What the extractor saw and did not turn into a call: `{"kind", "span", "name"}`.
    #[getter]
    fn notes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        notes(py, &self.inner.notes)
    }

    /// `"no_calls"`, `"usable"` (every call can run) or `"refused"` (some call cannot).
    #[getter]
    fn outcome(&self) -> &'static str {
        match self.inner.outcome() {
            toolfix::ReplyOutcome::NoCalls => "no_calls",
            toolfix::ReplyOutcome::Usable => "usable",
            _ => "refused",
        }
    }

    /// True when some call was recovered, repaired or renamed (not every call an untouched
    /// server call).
    #[getter]
    fn changed_calls(&self) -> bool {
        self.inner.changed_calls()
    }

    /// The whole reply as the command line writes it (`toolfix fix --batch`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        serialized_to_py(py, &self.inner)
    }

    fn __repr__(&self) -> String {
        format!(
            "FixedReply(outcome={:?}, calls={}, content={:?})",
            self.outcome(),
            self.inner.calls.len(),
            toolfix_short(&self.inner.content)
        )
    }
}

fn toolfix_short(s: &str) -> String {
    let mut end = s.len().min(60);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let head = s.get(..end).unwrap_or("");
    if end < s.len() { format!("{head}…") } else { head.to_owned() }
}

/// Notes as dicts.
pub(crate) fn notes<'py>(py: Python<'py>, notes: &[Note]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for n in notes {
        list.append(note(py, n)?)?;
    }
    Ok(list)
}

/// One note: `{"kind", "span": (start, end), "name"}` (byte offsets into its channel).
pub(crate) fn note<'py>(py: Python<'py>, n: &Note) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("kind", n.kind.as_str())?;
    d.set_item("span", PyTuple::new(py, [n.span.start, n.span.end])?)?;
    d.set_item("name", n.name.as_deref())?;
    Ok(d)
}

/// One call of a fixed reply.
#[pyclass(frozen, module = "toolfix", name = "FixedCall")]
#[derive(Debug)]
pub(crate) struct PyFixedCall {
    pub(crate) inner: FixedCall,
}

#[pymethods]
impl PyFixedCall {
    /// The call id: the server's or the format's when given, otherwise fresh.
    #[getter]
    fn id(&self) -> &str {
        &self.inner.id
    }

    /// The tool's declared name when it resolved, otherwise the name as written.
    #[getter]
    fn name(&self) -> &str {
        &self.inner.name
    }

    /// The name as the model wrote it.
    #[getter]
    fn written_name(&self) -> &str {
        &self.inner.written_name
    }

    /// The arguments as the model wrote them, before any repair (for a call found in text,
    /// as its format gives them): what a call passed on unchanged, or a refused one, carries.
    #[getter]
    fn written_arguments(&self) -> &str {
        self.inner.written_arguments()
    }

    /// The format the call was found in (`"native"` for the server's calls, `"hermes"`, ...).
    #[getter]
    fn format(&self) -> &'static str {
        self.inner.format.as_str()
    }

    /// Where it was found: `"content"`, `"reasoning"` or `"tool_calls"`.
    #[getter]
    fn channel(&self) -> &'static str {
        match self.inner.channel {
            Channel::Content => "content",
            Channel::Reasoning => "reasoning",
            _ => "tool_calls",
        }
    }

    /// `"untouched"`, `"repaired"`, `"refused"` or `"suppressed"`.
    #[getter]
    fn status(&self) -> &'static str {
        self.inner.status.as_str()
    }

    /// True when the call can run.
    #[getter]
    fn ok(&self) -> bool {
        self.inner.status.is_usable()
    }

    /// The arguments to run the tool with, as a new dict (`None` when it cannot run).
    #[getter]
    fn arguments<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner.arguments_text().map(|t| json_to_py(py, t)).transpose()
    }

    /// The arguments as JSON text, the model's byte for byte when untouched.
    #[getter]
    fn arguments_json(&self) -> Option<&str> {
        self.inner.arguments_text()
    }

    /// The message for the model when the call cannot run: the refusal, or the storm
    /// guard's message.
    #[getter]
    fn message(&self) -> Option<&str> {
        self.inner.message()
    }

    /// True when the storm guard stopped the call.
    #[getter]
    fn suppressed(&self) -> bool {
        self.inner.suppressed().is_some()
    }

    /// The schema-level repairs: `{"kind", "path", "before"?, "after"?}` each.
    #[getter]
    fn repairs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        serialized_to_py(py, &self.inner.report().repairs)
    }

    /// The text-level fixes of the arguments.
    #[getter]
    fn text_fixes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        serialized_to_py(py, &self.inner.report().text_fixes)
    }

    /// Notes for the model.
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.inner.report().notes.clone()
    }

    /// The call as the command line writes it.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        serialized_to_py(py, &self.inner)
    }

    fn __repr__(&self) -> String {
        let detail = match (self.inner.arguments_text(), self.inner.message()) {
            (Some(a), _) => format!("arguments_json={a:?}"),
            (None, Some(m)) => format!("message={m:?}"),
            (None, None) => String::new(),
        };
        format!(
            "FixedCall(id={:?}, name={:?}, status={:?}, {detail})",
            self.inner.id,
            self.inner.name,
            self.inner.status.as_str()
        )
    }
}
