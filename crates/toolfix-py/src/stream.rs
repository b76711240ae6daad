//! `ReplyStream`: the library's streaming fixer for one reply.
//!
//! `toolfix::ReplyStream` owns what it reads with (no borrow, `Send`), so the Python object
//! holds it directly, behind a lock. Work on a long piece runs with the GIL released; a
//! second thread that pushes meanwhile is told the stream is in use rather than waiting
//! (waiting for the lock with the GIL held would stop the first thread from taking it back).

use crate::convert::py_to_value;
use crate::json::DETACH_BYTES;
use crate::reply::{PyFixedCall, PyFixedReply, note};
use crate::tools::PyToolSet;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::{Mutex, MutexGuard, TryLockError};
use toolfix::{FixOptions, ReplyEvent, ReplyStream, ToolCallDelta};

/// The streaming counterpart of `ToolSet.fix_reply`: push the reply's deltas as they arrive,
/// get events back (prose safe to show now, each call once it is complete and fixed);
/// `finish()` returns the last events and what `fix_reply` returns for the same reply.
#[pyclass(frozen, module = "toolfix", name = "ReplyStream")]
pub(crate) struct PyReplyStream {
    /// `None` once finished.
    inner: Mutex<Option<ReplyStream>>,
}

impl std::fmt::Debug for PyReplyStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplyStream").finish_non_exhaustive()
    }
}

impl PyReplyStream {
    /// The stream, locked; an error when it is finished or another thread is pushing.
    fn lock(&self) -> PyResult<MutexGuard<'_, Option<ReplyStream>>> {
        let guard = match self.inner.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::WouldBlock) => {
                return Err(PyRuntimeError::new_err("the stream is in use by another thread"));
            }
            Err(TryLockError::Poisoned(_)) => return Err(PyRuntimeError::new_err("the stream failed earlier")),
        };
        if guard.is_none() {
            return Err(PyRuntimeError::new_err("the stream is finished"));
        }
        Ok(guard)
    }

    /// Run `push` on the stream (with the GIL released when the piece is long) and turn its
    /// events into Python objects.
    fn push<F>(&self, py: Python<'_>, bytes: usize, push: F) -> PyResult<Vec<PyEvent>>
    where
        F: FnOnce(&mut ReplyStream) -> toolfix::Result<Vec<ReplyEvent>> + Send,
    {
        let mut guard = self.lock()?;
        let Some(stream) = guard.as_mut() else {
            return Err(PyRuntimeError::new_err("the stream is finished"));
        };
        let events = if bytes >= DETACH_BYTES { py.detach(|| push(stream)) } else { push(stream) };
        drop(guard);
        match events {
            Ok(events) => events.into_iter().map(|e| PyEvent::new(py, e)).collect(),
            Err(e) => Err(PyValueError::new_err(e.report())),
        }
    }
}

#[pymethods]
impl PyReplyStream {
    /// A stream for one reply, with the tools offered (`None`: salvage only) and the
    /// conversation so far (for the storm guard and fresh ids).
    #[new]
    #[pyo3(signature = (tools = None, history = None))]
    fn new(tools: Option<&PyToolSet>, history: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let history = history.filter(|h| !h.is_none()).map(py_to_value).transpose()?;
        let stream = ReplyStream::new(tools.map(|t| &t.inner), history.as_ref(), FixOptions::default());
        Ok(PyReplyStream { inner: Mutex::new(Some(stream)) })
    }

    /// Feed the next piece of `content`.
    fn push_content(&self, py: Python<'_>, text: &str) -> PyResult<Vec<PyEvent>> {
        self.push(py, text.len(), |s| s.push_content(text))
    }

    /// Feed the next piece of `reasoning_content`.
    fn push_reasoning(&self, py: Python<'_>, text: &str) -> PyResult<Vec<PyEvent>> {
        self.push(py, text.len(), |s| s.push_reasoning(text))
    }

    /// Feed a `tool_calls` delta: the call's `index` and, as this delta carries them, its
    /// `id`, `name` and the next piece of its `arguments`. A call is complete when a delta
    /// for a later index arrives, or at the end.
    #[pyo3(signature = (index, id = None, name = None, arguments = None))]
    fn push_tool_call(
        &self,
        py: Python<'_>,
        index: usize,
        id: Option<&str>,
        name: Option<&str>,
        arguments: Option<&str>,
    ) -> PyResult<Vec<PyEvent>> {
        let bytes = arguments.map_or(0, str::len);
        self.push(py, bytes, |s| {
            let mut delta = ToolCallDelta::new(index);
            if let Some(id) = id {
                delta = delta.with_id(id);
            }
            if let Some(name) = name {
                delta = delta.with_name(name);
            }
            if let Some(a) = arguments {
                delta = delta.with_arguments(a);
            }
            Ok(s.push_tool_call(delta))
        })
    }

    /// The reply ended, with the server's `finish_reason`: the last events and the whole
    /// fixed reply, equal to what `fix_reply` returns for the same reply.
    #[pyo3(signature = (finish_reason = None))]
    fn finish(&self, py: Python<'_>, finish_reason: Option<&str>) -> PyResult<(Vec<PyEvent>, PyFixedReply)> {
        let stream = self.lock()?.take();
        let Some(stream) = stream else {
            return Err(PyRuntimeError::new_err("the stream is finished"));
        };
        let (events, fixed) = if received_bytes(&stream) >= DETACH_BYTES {
            py.detach(|| stream.finish(finish_reason))
        } else {
            stream.finish(finish_reason)
        };
        let events = events.into_iter().map(|e| PyEvent::new(py, e)).collect::<PyResult<_>>()?;
        Ok((events, PyFixedReply { inner: fixed }))
    }
}

/// How much text the stream has received (what finishing it reads).
fn received_bytes(stream: &ReplyStream) -> usize {
    let r = stream.received();
    r.content.len()
        + r.reasoning_content.as_ref().map_or(0, String::len)
        + r.tool_calls.iter().map(|c| c.arguments.len()).sum::<usize>()
}

/// One thing the stream tells: `kind` is `"content"` or `"reasoning"` (with `text`),
/// `"content_was_reasoning"` (every `content` event so far was reasoning whose open tag
/// never came), `"call"` (with `call`, complete and fixed) or `"note"` (with `note`).
#[pyclass(frozen, module = "toolfix", name = "StreamEvent")]
#[derive(Debug)]
pub(crate) struct PyEvent {
    #[pyo3(get)]
    kind: &'static str,
    #[pyo3(get)]
    text: Option<String>,
    #[pyo3(get)]
    call: Option<Py<PyFixedCall>>,
    #[pyo3(get)]
    note: Option<Py<PyDict>>,
}

impl PyEvent {
    fn new(py: Python<'_>, event: ReplyEvent) -> PyResult<Self> {
        let mut e = PyEvent { kind: "note", text: None, call: None, note: None };
        match event {
            ReplyEvent::Content(t) => (e.kind, e.text) = ("content", Some(t)),
            ReplyEvent::Reasoning(t) => (e.kind, e.text) = ("reasoning", Some(t)),
            ReplyEvent::ContentWasReasoning => e.kind = "content_was_reasoning",
            ReplyEvent::Call(c) => (e.kind, e.call) = ("call", Some(Py::new(py, PyFixedCall { inner: *c })?)),
            ReplyEvent::Note(n) => e.note = Some(note(py, &n)?.unbind()),
            _ => {}
        }
        Ok(e)
    }
}

#[pymethods]
impl PyEvent {
    fn __repr__(&self, py: Python<'_>) -> String {
        match (&self.text, &self.call, &self.note) {
            (Some(t), _, _) => format!("StreamEvent({}, {t:?})", self.kind),
            (_, Some(c), _) => {
                format!("StreamEvent(call, {})", c.bind(py).repr().map_or_else(|_| String::new(), |r| r.to_string()))
            }
            (_, _, Some(n)) => {
                format!("StreamEvent(note, {})", n.bind(py).repr().map_or_else(|_| String::new(), |r| r.to_string()))
            }
            _ => format!("StreamEvent({})", self.kind),
        }
    }
}
