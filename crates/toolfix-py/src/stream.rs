//! `ReplyStream`: the library's streaming fixer for one reply.
//!
//! `toolfix::ReplyStream<'t>` borrows its `ToolSet`, and a Python object cannot hold a
//! borrow. Until the library offers a stream that owns its tools, each Python stream runs
//! the library's stream on a thread of its own that owns a clone of the `ToolSet` (an `Arc`
//! inside): every push is one message there and one answer back, with the GIL released
//! while waiting. The thread ends when the stream finishes or is dropped.

use crate::convert::py_to_value;
use crate::reply::{PyFixedCall, PyFixedReply, note};
use crate::tools::PyToolSet;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use toolfix::{FixOptions, FixedReply, ReplyEvent, ReplyStream, ToolCallDelta, ToolSet};

/// What the Python side asks the stream's thread.
enum Ask {
    Content(String),
    Reasoning(String),
    ToolCall { index: usize, id: Option<String>, name: Option<String>, arguments: Option<String> },
    Finish(Option<String>),
}

/// What the thread answers.
enum Answer {
    Events(toolfix::Result<Vec<ReplyEvent>>),
    Finished(Vec<ReplyEvent>, Box<FixedReply>),
}

/// The thread of one stream, and the ends of its channels.
struct Worker {
    ask: SyncSender<Ask>,
    answer: Receiver<Answer>,
}

/// Run one stream until it finishes or the asking end is dropped.
fn serve(tools: Option<&ToolSet>, history: Option<&Value>, asks: &Receiver<Ask>, answers: &SyncSender<Answer>) {
    let mut stream = ReplyStream::new(tools, history, FixOptions::default());
    while let Ok(ask) = asks.recv() {
        let answer = match ask {
            Ask::Content(t) => Answer::Events(stream.push_content(&t)),
            Ask::Reasoning(t) => Answer::Events(stream.push_reasoning(&t)),
            Ask::ToolCall { index, id, name, arguments } => {
                let mut delta = ToolCallDelta::new(index);
                if let Some(id) = &id {
                    delta = delta.with_id(id);
                }
                if let Some(name) = &name {
                    delta = delta.with_name(name);
                }
                if let Some(a) = &arguments {
                    delta = delta.with_arguments(a);
                }
                Answer::Events(Ok(stream.push_tool_call(delta)))
            }
            Ask::Finish(reason) => {
                let (events, fixed) = stream.finish(reason.as_deref());
                let _ = answers.send(Answer::Finished(events, Box::new(fixed)));
                return;
            }
        };
        if answers.send(answer).is_err() {
            return;
        }
    }
}

/// The streaming counterpart of `ToolSet.fix_reply`: push the reply's deltas as they arrive,
/// get events back (prose safe to show now, each call once it is complete and fixed);
/// `finish()` returns the last events and what `fix_reply` returns for the same reply.
#[pyclass(frozen, module = "toolfix", name = "ReplyStream")]
pub(crate) struct PyReplyStream {
    worker: Mutex<Option<Worker>>,
}

impl std::fmt::Debug for PyReplyStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplyStream").finish_non_exhaustive()
    }
}

impl PyReplyStream {
    fn ask(&self, py: Python<'_>, ask: Ask) -> PyResult<Answer> {
        // The worker leaves the lock while the thread works (a `Receiver` cannot be shared
        // with the thread that waits without the GIL), and comes back after.
        let worker = self.worker.lock().ok().and_then(|mut w| w.take());
        let Some(worker) = worker else {
            return Err(PyRuntimeError::new_err("the stream is finished, or in use by another thread"));
        };
        worker.ask.send(ask).map_err(|_| PyRuntimeError::new_err("the stream's thread ended"))?;
        let (worker, answer) = py.detach(move || {
            let answer = worker.answer.recv();
            (worker, answer)
        });
        if let Ok(mut slot) = self.worker.lock() {
            *slot = Some(worker);
        }
        answer.map_err(|_| PyRuntimeError::new_err("the stream's thread ended"))
    }

    fn events(&self, py: Python<'_>, ask: Ask) -> PyResult<Vec<PyEvent>> {
        match self.ask(py, ask)? {
            Answer::Events(Ok(events)) => events.into_iter().map(|e| PyEvent::new(py, e)).collect(),
            Answer::Events(Err(e)) => Err(PyValueError::new_err(e.report())),
            Answer::Finished(..) => Err(PyRuntimeError::new_err("the stream is finished")),
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
        let tools = tools.map(|t| t.inner.clone());
        let history = history.filter(|h| !h.is_none()).map(py_to_value).transpose()?;
        let (ask, asks) = sync_channel::<Ask>(1);
        let (answers, answer) = sync_channel::<Answer>(1);
        std::thread::Builder::new()
            .name("toolfix-stream".to_owned())
            .spawn(move || serve(tools.as_ref(), history.as_ref(), &asks, &answers))
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start the stream's thread: {e}")))?;
        Ok(PyReplyStream { worker: Mutex::new(Some(Worker { ask, answer })) })
    }

    /// Feed the next piece of `content`.
    fn push_content(&self, py: Python<'_>, text: String) -> PyResult<Vec<PyEvent>> {
        self.events(py, Ask::Content(text))
    }

    /// Feed the next piece of `reasoning_content`.
    fn push_reasoning(&self, py: Python<'_>, text: String) -> PyResult<Vec<PyEvent>> {
        self.events(py, Ask::Reasoning(text))
    }

    /// Feed a `tool_calls` delta: the call's `index` and, as this delta carries them, its
    /// `id`, `name` and the next piece of its `arguments`. A call is complete when a delta
    /// for a later index arrives, or at the end.
    #[pyo3(signature = (index, id = None, name = None, arguments = None))]
    fn push_tool_call(
        &self,
        py: Python<'_>,
        index: usize,
        id: Option<String>,
        name: Option<String>,
        arguments: Option<String>,
    ) -> PyResult<Vec<PyEvent>> {
        self.events(py, Ask::ToolCall { index, id, name, arguments })
    }

    /// The reply ended, with the server's `finish_reason`: the last events and the whole
    /// fixed reply, equal to what `fix_reply` returns for the same reply.
    #[pyo3(signature = (finish_reason = None))]
    fn finish(&self, py: Python<'_>, finish_reason: Option<String>) -> PyResult<(Vec<PyEvent>, PyFixedReply)> {
        let answer = self.ask(py, Ask::Finish(finish_reason))?;
        if let Ok(mut guard) = self.worker.lock() {
            guard.take();
        }
        match answer {
            Answer::Finished(events, fixed) => {
                let events = events.into_iter().map(|e| PyEvent::new(py, e)).collect::<PyResult<_>>()?;
                Ok((events, PyFixedReply { inner: *fixed }))
            }
            Answer::Events(_) => Err(PyRuntimeError::new_err("the stream did not finish")),
        }
    }
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
