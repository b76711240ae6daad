//! `CallFixer`: the library's per-call entry, for front ends that meet calls one at a time.

use crate::convert::py_to_value;
use crate::json::DETACH_BYTES;
use crate::reply::PyFixedCall;
use crate::tools::PyToolSet;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::sync::Mutex;
use toolfix::{CallFixer, FixOptions};

/// Fixes calls one at a time with the semantics of a whole reply: the name resolved, the
/// arguments repaired, the tool's side effects, the cut-off rule, an id, and the storm
/// guard over the session's calls (`record_result` tells it what each call returned).
#[pyclass(frozen, module = "toolfix", name = "CallFixer")]
#[derive(Debug)]
pub(crate) struct PyCallFixer {
    inner: Mutex<CallFixer>,
}

#[pymethods]
impl PyCallFixer {
    /// A fixer for the tools offered (`None`: salvage and the cut-off rule only) and the
    /// conversation so far (`messages`, for the storm guard and fresh ids).
    #[new]
    #[pyo3(signature = (tools = None, history = None))]
    fn new(tools: Option<&PyToolSet>, history: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let history = history.filter(|h| !h.is_none()).map(py_to_value).transpose()?;
        let fixer = CallFixer::new(tools.map(|t| &t.inner), history.as_ref(), &FixOptions::default());
        Ok(PyCallFixer { inner: Mutex::new(fixer) })
    }

    /// Fix one call: `name` and `arguments` as the model wrote them (text, or a dict a
    /// framework parsed), its `id` when it has one (kept; otherwise a fresh one), and
    /// `at_cut=True` when the model's output may have been cut by the token limit inside it.
    #[pyo3(signature = (name, arguments, id = None, at_cut = false))]
    fn fix(
        &self,
        py: Python<'_>,
        name: &str,
        arguments: &Bound<'_, PyAny>,
        id: Option<&str>,
        at_cut: bool,
    ) -> PyResult<PyFixedCall> {
        let owned;
        let text = if let Ok(s) = arguments.cast::<PyString>() {
            s.to_str()?
        } else {
            owned = py_to_value(arguments)?.to_string();
            &owned
        };
        let mut fixer = self.inner.lock().map_err(|_| PyRuntimeError::new_err("the fixer failed earlier"))?;
        let call = if text.len() >= DETACH_BYTES {
            let fixer = &mut *fixer;
            py.detach(|| fixer.fix(name, text, id, at_cut))
        } else {
            fixer.fix(name, text, id, at_cut)
        };
        Ok(PyFixedCall { inner: call })
    }

    /// Tell the storm guard what the call with this id returned: repeats only count while
    /// they get the same result.
    fn record_result(&self, id: &str, result: &str) -> PyResult<()> {
        let mut fixer = self.inner.lock().map_err(|_| PyRuntimeError::new_err("the fixer failed earlier"))?;
        fixer.record_result(id, result);
        Ok(())
    }
}
