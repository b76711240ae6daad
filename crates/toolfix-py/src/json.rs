//! `loads` and `repair_json`: the library's lenient JSON (`toolfix::salvage`), shaped like
//! the same-named `json_repair` functions.

use crate::convert::{json_to_py, value_to_py};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use std::fmt::Write as _;
use toolfix::Limits;
use toolfix::salvage::{FixKind, Salvaged};

create_exception!(
    toolfix,
    RepairError,
    PyValueError,
    "Text that holds no JSON that can be recovered without guessing (or, with `strict=True`, \
     JSON that needed a repair strict mode refuses). A `ValueError`; `pos` is the character \
     offset, `lineno` and `colno` are 1-based, `kind` a stable name, `hint` a fix when known."
);

/// Inputs at least this long are salvaged with the GIL released.
pub(crate) const DETACH_BYTES: usize = 32 * 1024;

/// The fixes `strict=True` refuses: each needs a decision about structure that the text
/// does not settle (as `json_repair`'s strict mode refuses several top-level values, a
/// missing separator or an empty value), and every value that touches the cut of text that
/// was evidently cut off.
const STRICT_REFUSES: &[FixKind] = &[
    FixKind::MultipleValues,
    FixKind::DuplicateValue,
    FixKind::EmptyValueDropped,
    FixKind::MissingColon,
    FixKind::MissingValue,
    FixKind::StrayText,
    FixKind::PrematureClose,
    FixKind::ArrayAsObject,
    FixKind::UncertainString,
    FixKind::UncertainNumber,
    FixKind::UncertainLiteral,
    FixKind::UncertainKey,
    FixKind::UncertainContainer,
];

/// The limits for a call: the library's, with another input cap when given.
pub(crate) fn limits(max_input_bytes: Option<usize>) -> Limits {
    let limits = Limits::default();
    match max_input_bytes {
        Some(n) => limits.with_max_input_bytes(n),
        None => limits,
    }
}

/// Salvage `text`, with the GIL released for long inputs.
fn salvage<'t>(py: Python<'_>, text: &'t str, limits: &Limits) -> PyResult<Salvaged<'t>> {
    let out = if text.len() >= DETACH_BYTES {
        py.detach(|| toolfix::salvage::salvage_with(text, limits))
    } else {
        toolfix::salvage::salvage_with(text, limits)
    };
    out.map_err(|e| repair_error(py, text, &e))
}

/// A `RepairError` for a library error in `text`.
pub(crate) fn repair_error(py: Python<'_>, text: &str, e: &toolfix::Error) -> PyErr {
    let err = RepairError::new_err(e.report());
    let value = err.value(py);
    let pos = e.offset().map(|o| text.get(..o).map_or(0, |s| s.chars().count()));
    let _ = value.setattr("kind", e.kind().as_str());
    let _ = value.setattr("msg", e.message());
    let _ = value.setattr("pos", pos);
    let _ = value.setattr("lineno", e.line());
    let _ = value.setattr("colno", e.column());
    let _ = value.setattr("hint", e.hint());
    err
}

/// A `RepairError` of strict mode: `fix` was needed at its span.
fn strict_error(py: Python<'_>, text: &str, kind: &str, start: usize, what: &str) -> PyErr {
    let (line, column) = line_column(text, start);
    let err = RepairError::new_err(format!(
        "strict mode: {what} at line {line}, column {column} (byte {start}); call without strict=True to accept it"
    ));
    let value = err.value(py);
    let _ = value.setattr("kind", kind);
    let _ = value.setattr("msg", what);
    let _ = value.setattr("pos", text.get(..start).map_or(0, |s| s.chars().count()));
    let _ = value.setattr("lineno", line);
    let _ = value.setattr("colno", column);
    let _ = value.setattr("hint", py.None());
    err
}

fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Strict mode: the first fix it refuses, or a key given twice with different values.
fn check_strict(py: Python<'_>, text: &str, s: &Salvaged<'_>) -> PyResult<()> {
    if let Some(f) = s.fixes().iter().find(|f| STRICT_REFUSES.contains(&f.kind)) {
        let what = format!("the text needed `{}`", f.kind.as_str());
        return Err(strict_error(py, text, f.kind.as_str(), f.span.start, &what));
    }
    if let Some(d) = toolfix::salvage::duplicate_keys(s.text()).iter().find(|d| !d.values_agree()) {
        let what = format!("the key at {} is given twice with different values", d.pointer);
        return Err(strict_error(py, text, "duplicate_key", 0, &what));
    }
    Ok(())
}

/// The log of `logging=True`: one `{"kind", "span": (start, end), "text"}` per fix (spans
/// are character offsets into the input; `text` is what the span covers), then one
/// `{"kind": "duplicate_key", "pointer", "values"}` per key given twice.
fn log<'py>(py: Python<'py>, text: &str, s: &Salvaged<'_>) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    let chars = CharIndex::new(text);
    for f in s.fixes() {
        let d = PyDict::new(py);
        d.set_item("kind", f.kind.as_str())?;
        d.set_item("span", PyTuple::new(py, [chars.at(f.span.start), chars.at(f.span.end)])?)?;
        d.set_item("text", text.get(f.span.range()).unwrap_or(""))?;
        list.append(d)?;
    }
    for dup in toolfix::salvage::duplicate_keys(s.text()) {
        let d = PyDict::new(py);
        d.set_item("kind", "duplicate_key")?;
        d.set_item("pointer", &dup.pointer)?;
        let values = PyList::empty(py);
        for v in &dup.values {
            values.append(value_to_py(py, v)?)?;
        }
        d.set_item("values", values)?;
        list.append(d)?;
    }
    Ok(list)
}

/// Byte offsets to character offsets (Python indexes strings by character).
struct CharIndex<'t> {
    text: &'t str,
    ascii: bool,
}

impl<'t> CharIndex<'t> {
    fn new(text: &'t str) -> Self {
        CharIndex { text, ascii: text.is_ascii() }
    }

    fn at(&self, byte: usize) -> usize {
        if self.ascii { byte } else { self.text.get(..byte).map_or(byte, |s| s.chars().count()) }
    }
}

/// Repair `text` and return the value, as `json_repair.loads` does.
///
/// Text that holds no recoverable JSON raises `RepairError` (`json_repair` returns `""`).
/// A value cut off by the end of the text is kept as written, never completed; with
/// `logging=True` it is listed as `uncertain_*`. `strict=True` raises instead of making a
/// structural guess (see the package docs).
#[pyfunction]
#[pyo3(signature = (text, *, strict = false, logging = false, max_input_bytes = None))]
pub(crate) fn loads<'py>(
    py: Python<'py>,
    text: &str,
    strict: bool,
    logging: bool,
    max_input_bytes: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let s = salvage(py, text, &limits(max_input_bytes))?;
    if strict {
        check_strict(py, text, &s)?;
    }
    let value = json_to_py(py, s.text())?;
    if logging {
        return Ok(PyTuple::new(py, [value, log(py, text, &s)?.into_any()])?.into_any());
    }
    Ok(value)
}

/// How `repair_json` lays out its text.
#[derive(Clone, Debug)]
enum Indent {
    /// As the model wrote it.
    AsWritten,
    /// One member per line, each level indented by this string (`json.dumps(indent=...)`).
    By(String),
}

/// Repair `text` and return strict JSON text, as `json_repair.repair_json` does.
///
/// The text keeps numbers, escapes, key order and layout as written (valid input comes
/// back byte for byte, except that `ensure_ascii=True` escapes non-ASCII characters as
/// `\uXXXX`); `indent` lays it out as `json.dumps(indent=...)` would. `return_objects=True`
/// returns the value instead, as `loads`.
#[pyfunction]
#[pyo3(signature = (
    text, *, return_objects = false, logging = false, ensure_ascii = true, indent = None,
    strict = false, max_input_bytes = None
))]
#[expect(clippy::too_many_arguments, reason = "the keyword arguments of json_repair.repair_json")]
#[expect(clippy::fn_params_excessive_bools, reason = "the keyword arguments of json_repair.repair_json")]
pub(crate) fn repair_json<'py>(
    py: Python<'py>,
    text: &str,
    return_objects: bool,
    logging: bool,
    ensure_ascii: bool,
    indent: Option<&Bound<'py, PyAny>>,
    strict: bool,
    max_input_bytes: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    if return_objects {
        return loads(py, text, strict, logging, max_input_bytes);
    }
    let indent = match indent {
        None => Indent::AsWritten,
        Some(i) => {
            if let Ok(s) = i.cast::<PyString>() {
                Indent::By(s.to_str()?.to_owned())
            } else {
                let n: i64 = i.extract()?;
                Indent::By(" ".repeat(usize::try_from(n).unwrap_or(0)))
            }
        }
    };
    let s = salvage(py, text, &limits(max_input_bytes))?;
    if strict {
        check_strict(py, text, &s)?;
    }
    let out = match &indent {
        Indent::AsWritten if !ensure_ascii || s.text().is_ascii() => PyString::new(py, s.text()),
        Indent::AsWritten => PyString::new(py, &layout(s.text(), None, true)),
        Indent::By(unit) => PyString::new(py, &layout(s.text(), Some(unit), ensure_ascii)),
    };
    if logging {
        return Ok(PyTuple::new(py, [out.into_any(), log(py, text, &s)?.into_any()])?.into_any());
    }
    Ok(out.into_any())
}

/// Strict JSON `json` laid out again: with `indent`, one member per line as
/// `json.dumps(indent=...)` does (whitespace outside strings replaced); with
/// `ensure_ascii`, every non-ASCII character in a string written as `\uXXXX` (a surrogate
/// pair above U+FFFF). Tokens are copied as written.
fn layout(json: &str, indent: Option<&str>, ensure_ascii: bool) -> String {
    let b = json.as_bytes();
    let mut out = String::with_capacity(json.len() + json.len() / 4);
    let mut depth = 0usize;
    let mut i = 0;
    let newline = |out: &mut String, depth: usize| {
        if let Some(unit) = indent {
            out.push('\n');
            for _ in 0..depth {
                out.push_str(unit);
            }
        }
    };
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => {
                let start = i;
                i += 1;
                while let Some(&d) = b.get(i) {
                    i += match d {
                        b'\\' => 2,
                        b'"' => break,
                        _ => 1,
                    };
                }
                i += 1;
                let s = json.get(start..i.min(json.len())).unwrap_or("");
                if ensure_ascii && !s.is_ascii() {
                    for ch in s.chars() {
                        if ch.is_ascii() {
                            out.push(ch);
                        } else {
                            let mut units = [0u16; 2];
                            for u in ch.encode_utf16(&mut units) {
                                let _ = write!(out, "\\u{u:04x}");
                            }
                        }
                    }
                } else {
                    out.push_str(s);
                }
                continue;
            }
            b' ' | b'\t' | b'\n' | b'\r' if indent.is_some() => {}
            b'{' | b'[' => {
                out.push(c as char);
                depth += 1;
                // An empty container stays `[]` / `{}`.
                let next = json.get(i + 1..).map(str::trim_start).and_then(|r| r.bytes().next());
                if !matches!(next, Some(b'}' | b']')) {
                    newline(&mut out, depth);
                }
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                let prev = out.trim_end().bytes().last();
                if indent.is_some() && !matches!(prev, Some(b'{' | b'[')) {
                    newline(&mut out, depth);
                }
                out.push(c as char);
            }
            b',' => {
                out.push(',');
                newline(&mut out, depth);
            }
            b':' if indent.is_some() => out.push_str(": "),
            _ => {
                let start = i;
                while let Some(&d) = b.get(i + 1) {
                    if matches!(d, b'"' | b'{' | b'[' | b'}' | b']' | b',' | b':' | b' ' | b'\t' | b'\n' | b'\r') {
                        break;
                    }
                    i += 1;
                }
                out.push_str(json.get(start..=i).unwrap_or(""));
            }
        }
        i += 1;
    }
    out
}
