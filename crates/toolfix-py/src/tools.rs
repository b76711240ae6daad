//! `ToolSet` (tool definitions compiled once) and `CallOutcome` (what became of a call).

use crate::convert::{json_to_py, py_to_value, serialized_to_py};
use crate::json::DETACH_BYTES;
use crate::reply::PyFixedReply;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyType};
use serde_json::{Value, json};
use toolfix::{CallOptions, CallOutcome, Effect, ToolSet};

/// Tool definitions, each schema compiled once; cheap to share between threads.
#[pyclass(frozen, module = "toolfix", name = "ToolSet")]
#[derive(Clone, Debug)]
pub(crate) struct PyToolSet {
    pub(crate) inner: ToolSet,
}

/// A `ValueError` for a tool list the library refuses.
fn definition_error(e: &toolfix::Error) -> PyErr {
    PyValueError::new_err(e.report())
}

/// An effect by its Python name.
fn effect_named(name: &str) -> PyResult<Effect> {
    Effect::from_name(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown effect {name:?} (expected \"read_only\", \"idempotent\" or \"mutating\")"
        ))
    })
}

fn build(
    definitions: &[Value],
    read_only: Option<Vec<String>>,
    idempotent: Option<Vec<String>>,
    partial: bool,
) -> PyResult<PyToolSet> {
    let mut set = if partial {
        ToolSet::new_partial(definitions).0
    } else {
        ToolSet::new(definitions).map_err(|e| definition_error(&e))?
    };
    for (names, effect) in [(read_only, Effect::ReadOnly), (idempotent, Effect::Idempotent)] {
        for name in names.unwrap_or_default() {
            if partial && set.broken_names().contains(&name.as_str()) {
                continue;
            }
            set = set.with_effect(&name, effect).map_err(|e| definition_error(&e))?;
        }
    }
    Ok(PyToolSet { inner: set })
}

/// The definitions in a Python list (or any iterable) of tools.
fn definitions(tools: &Bound<'_, PyAny>) -> PyResult<Vec<Value>> {
    match py_to_value(tools) {
        Ok(Value::Array(items)) => Ok(items),
        Ok(_) => Err(PyValueError::new_err("tools must be a list of tool definitions")),
        Err(e) => {
            // Any other iterable of definitions.
            let Ok(iter) = tools.try_iter() else { return Err(e) };
            iter.map(|t| py_to_value(&t?)).collect()
        }
    }
}

#[pymethods]
impl PyToolSet {
    /// Tool definitions in any form the library reads: OpenAI (`{"type": "function",
    /// "function": {...}}`), bare (`{"name", "description", "parameters"}`), MCP
    /// (`inputSchema`) or Anthropic (`input_schema`), as dicts or SDK objects. `read_only`
    /// names tools declared free of side effects (MCP's `readOnlyHint` and `x-toolfix`
    /// hints are read too). A definition the library cannot read raises `ValueError`;
    /// with `partial=True` it is left out instead (listed in `broken`, calls to it refused).
    #[new]
    #[pyo3(signature = (tools, *, read_only = None, idempotent = None, partial = false))]
    fn new(
        tools: &Bound<'_, PyAny>,
        read_only: Option<Vec<String>>,
        idempotent: Option<Vec<String>>,
        partial: bool,
    ) -> PyResult<Self> {
        build(&definitions(tools)?, read_only, idempotent, partial)
    }

    /// Tools in OpenAI form (Chat Completions or Responses).
    #[classmethod]
    #[pyo3(signature = (tools, *, read_only = None, idempotent = None))]
    fn from_openai(
        _cls: &Bound<'_, PyType>,
        tools: &Bound<'_, PyAny>,
        read_only: Option<Vec<String>>,
        idempotent: Option<Vec<String>>,
    ) -> PyResult<Self> {
        Self::new(tools, read_only, idempotent, false)
    }

    /// Tools in Anthropic form (`{"name", "description", "input_schema"}`).
    #[classmethod]
    #[pyo3(signature = (tools, *, read_only = None, idempotent = None))]
    fn from_anthropic(
        _cls: &Bound<'_, PyType>,
        tools: &Bound<'_, PyAny>,
        read_only: Option<Vec<String>>,
        idempotent: Option<Vec<String>>,
    ) -> PyResult<Self> {
        Self::new(tools, read_only, idempotent, false)
    }

    /// Tools in MCP form (`{"name", "description", "inputSchema", "annotations"?}`), as
    /// dicts or `mcp.types.Tool` objects.
    #[classmethod]
    #[pyo3(signature = (tools, *, read_only = None, idempotent = None))]
    fn from_mcp(
        _cls: &Bound<'_, PyType>,
        tools: &Bound<'_, PyAny>,
        read_only: Option<Vec<String>>,
        idempotent: Option<Vec<String>>,
    ) -> PyResult<Self> {
        Self::new(tools, read_only, idempotent, false)
    }

    /// Tools from pydantic models: each model's class name is the tool's name, its
    /// docstring the description, `model_json_schema()` the parameters.
    #[classmethod]
    #[pyo3(signature = (models, *, read_only = None, idempotent = None))]
    fn from_pydantic(
        _cls: &Bound<'_, PyType>,
        models: &Bound<'_, PyAny>,
        read_only: Option<Vec<String>>,
        idempotent: Option<Vec<String>>,
    ) -> PyResult<Self> {
        let mut defs = Vec::new();
        for model in models.try_iter()? {
            let model = model?;
            let name: String = model.getattr("__name__")?.extract()?;
            let doc: Option<String> = model.getattr("__doc__")?.extract()?;
            let schema = py_to_value(&model.call_method0("model_json_schema")?)?;
            let description = doc.map(|d| d.trim().to_owned()).unwrap_or_default();
            defs.push(json!({"name": name, "description": description, "parameters": schema}));
        }
        build(&defs, read_only, idempotent, false)
    }

    /// Tools from plain JSON Schemas: `{name: schema}`.
    #[classmethod]
    #[pyo3(signature = (schemas, *, read_only = None, idempotent = None))]
    fn from_schemas(
        _cls: &Bound<'_, PyType>,
        schemas: &Bound<'_, PyDict>,
        read_only: Option<Vec<String>>,
        idempotent: Option<Vec<String>>,
    ) -> PyResult<Self> {
        let mut defs = Vec::new();
        for (name, schema) in schemas.iter() {
            let name: String = name.extract()?;
            defs.push(json!({"name": name, "parameters": py_to_value(&schema)?}));
        }
        build(&defs, read_only, idempotent, false)
    }

    /// The names of tools whose definition is broken (with `partial=True`; calls to them
    /// are refused, the message naming the definition's problem).
    #[getter]
    fn broken(&self) -> Vec<String> {
        self.inner.broken_names().into_iter().map(str::to_owned).collect()
    }

    /// The declared tool names, in order.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.inner.tools().iter().map(|t| t.name().to_owned()).collect()
    }

    /// What running the tool `name` (resolved as calls are) does: `"read_only"`,
    /// `"idempotent"` or `"mutating"` (the default), `None` for no such tool.
    fn effect(&self, name: &str) -> Option<&'static str> {
        self.inner.tool(name).ok().map(|t| t.effect().as_str())
    }

    /// True when the tool `name` (resolved as calls are) is declared read-only.
    fn is_read_only(&self, name: &str) -> bool {
        self.inner.tool(name).is_ok_and(toolfix::Tool::is_read_only)
    }

    /// The same tools, with the effect of `name` declared: `"read_only"`, `"idempotent"`
    /// or `"mutating"`.
    fn with_effect(&self, name: &str, effect: &str) -> PyResult<Self> {
        let inner = self.inner.clone().with_effect(name, effect_named(effect)?).map_err(|e| definition_error(&e))?;
        Ok(PyToolSet { inner })
    }

    /// The same tools, with `name` declared read-only (or, `False`, mutating).
    #[pyo3(signature = (name, read_only = true))]
    fn with_read_only(&self, name: &str, read_only: bool) -> PyResult<Self> {
        let effect = if read_only { Effect::ReadOnly } else { Effect::Mutating };
        let inner = self.inner.clone().with_effect(name, effect).map_err(|e| definition_error(&e))?;
        Ok(PyToolSet { inner })
    }

    fn __len__(&self) -> usize {
        self.inner.tools().len()
    }

    fn __contains__(&self, name: &str) -> bool {
        self.inner.tools().iter().any(|t| t.name() == name)
    }

    fn __repr__(&self) -> String {
        format!("ToolSet({:?})", self.names())
    }

    /// Repair one call: `arguments` as the model wrote them (a string) or as a framework
    /// parsed them (a dict). `hit_token_limit=True` when the model's output stopped at the
    /// token limit (`finish_reason == "length"`): a tool that may change things then gets no
    /// call whose text was left open.
    #[pyo3(signature = (name, arguments, *, hit_token_limit = false))]
    fn repair_call(
        &self,
        py: Python<'_>,
        name: &str,
        arguments: &Bound<'_, PyAny>,
        hit_token_limit: bool,
    ) -> PyResult<PyCallOutcome> {
        let options = CallOptions::default().with_hit_token_limit(hit_token_limit);
        let outcome = if let Ok(s) = arguments.cast::<PyString>() {
            let text = s.to_str()?;
            if text.len() >= DETACH_BYTES {
                py.detach(|| self.inner.repair_call_with(name, text, &options))
            } else {
                self.inner.repair_call_with(name, text, &options)
            }
        } else {
            let text = py_to_value(arguments)?.to_string();
            self.inner.repair_call_with(name, &text, &options)
        };
        Ok(PyCallOutcome { inner: outcome })
    }

    /// Fix a whole reply: calls found in `content` and `reasoning_content` (40 model
    /// formats) and the server's `tool_calls` (OpenAI shape), each repaired against its
    /// tool, repeats stopped; `history` is the conversation's messages (for the storm
    /// guard and fresh ids).
    #[pyo3(signature = (content = None, reasoning_content = None, tool_calls = None, finish_reason = None, history = None))]
    fn fix_reply(
        &self,
        py: Python<'_>,
        content: Option<&str>,
        reasoning_content: Option<&str>,
        tool_calls: Option<&Bound<'_, PyAny>>,
        finish_reason: Option<&str>,
        history: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyFixedReply> {
        crate::reply::fix(py, Some(&self.inner), content, reasoning_content, tool_calls, finish_reason, history)
    }
}

/// `fix_reply` on no tool set (salvage and the cut-off rule only): used by the module-level
/// function.
pub(crate) fn fix_without_tools(
    py: Python<'_>,
    content: Option<&str>,
    reasoning_content: Option<&str>,
    tool_calls: Option<&Bound<'_, PyAny>>,
    finish_reason: Option<&str>,
    history: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyFixedReply> {
    crate::reply::fix(py, None, content, reasoning_content, tool_calls, finish_reason, history)
}

/// What became of one call: arguments the schema accepts, or a refusal the model can act on.
#[pyclass(frozen, module = "toolfix", name = "CallOutcome")]
#[derive(Debug)]
pub(crate) struct PyCallOutcome {
    pub(crate) inner: CallOutcome,
}

#[pymethods]
impl PyCallOutcome {
    /// The tool's declared name when the name resolved (`get_weather` for `GetWeather`),
    /// otherwise the name as sent.
    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// True when the call can run (untouched or repaired).
    #[getter]
    fn ok(&self) -> bool {
        self.inner.is_ok()
    }

    /// `"untouched"` (valid as sent), `"repaired"` or `"rejected"`.
    #[getter]
    fn outcome(&self) -> &'static str {
        self.inner.outcome().as_str()
    }

    /// The accepted arguments as a new dict (`None` when refused).
    #[getter]
    fn arguments<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner.arguments_text().map(|t| json_to_py(py, t)).transpose()
    }

    /// The accepted arguments as JSON text: the model's text byte for byte when it was
    /// valid; otherwise every unchanged part as written (`None` when refused).
    #[getter]
    fn arguments_json(&self) -> Option<&str> {
        self.inner.arguments_text()
    }

    /// The schema-level repairs: `{"kind", "path", "before"?, "after"?}` each.
    #[getter]
    fn repairs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        serialized_to_py(py, &self.inner.repairs())
    }

    /// The text-level fixes: `{"kind", "span": {"start", "end"}}` each (byte offsets).
    #[getter]
    fn text_fixes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        serialized_to_py(py, &self.inner.report().text_fixes)
    }

    /// Notes for the model (defaults filled, values dropped).
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.inner.notes().to_vec()
    }

    /// The refusal the model can act on (`None` when the call is accepted).
    #[getter]
    fn message(&self) -> Option<&str> {
        self.inner.refusal().map(|r| r.message.as_str())
    }

    /// The refusal's issues: `{"path", "expected", "received"?, "hint"?}` each.
    #[getter]
    fn issues<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.inner.refusal() {
            Some(r) => serialized_to_py(py, &r.issues),
            None => Ok(PyList::empty(py).into_any()),
        }
    }

    /// The whole outcome as the command line writes it (`toolfix repair --batch`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        serialized_to_py(py, &self.inner)
    }

    fn __bool__(&self) -> bool {
        self.inner.is_ok()
    }

    fn __repr__(&self) -> String {
        match self.inner.refusal() {
            None => format!(
                "CallOutcome(name={:?}, outcome={:?}, arguments_json={:?})",
                self.inner.name(),
                self.inner.outcome().as_str(),
                self.inner.arguments_text().unwrap_or("")
            ),
            Some(r) => {
                format!("CallOutcome(name={:?}, outcome=\"rejected\", message={:?})", self.inner.name(), r.message)
            }
        }
    }
}
