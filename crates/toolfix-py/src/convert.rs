//! Values between Rust and Python without a JSON round trip: strict JSON text (what the
//! library returns) read straight into Python objects, and Python objects (tool lists,
//! server tool calls, message histories) walked into `serde_json::Value`s.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};
use std::sync::Mutex;

/// Deepest nesting read from Python objects (tool schemas, histories): the library's own
/// default depth cap.
const MAX_DEPTH: usize = toolfix::Limits::DEFAULT_MAX_DEPTH;

/// An open array or object while reading JSON text.
enum Open<'py> {
    List(Bound<'py, PyList>),
    /// An object and the key read for its next member.
    Dict(Bound<'py, PyDict>, Option<Bound<'py, PyString>>),
}

/// Python objects for strict JSON `text` (as the library returns it: RFC 8259, no lone
/// surrogate): objects to `dict` (a key given twice: the last value, as `json.loads`),
/// arrays to `list`, integers of any size to `int`, other numbers to `float`.
///
/// Nesting is read with an explicit stack; text that is not strict JSON is a `ValueError`
/// (it cannot come from the library, but nothing here panics on it).
pub(crate) fn json_to_py<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    // The key cache is taken once per value, and only when free: building objects can run
    // Python code (a finalizer during garbage collection) that reads JSON again, on this
    // thread or another, so waiting for the lock could deadlock. Busy or poisoned, the
    // value is read without it.
    let mut keys = KEYS.try_lock().ok();
    let mut r = Reader { text, b: text.as_bytes(), i: 0, keys: keys.as_deref_mut() };
    let mut stack: Vec<Open<'py>> = Vec::new();
    loop {
        r.skip_ws();
        // A value starts here (or a container closes, or an object key comes).
        let value = match r.peek() {
            Some(b'{') => {
                r.i += 1;
                stack.push(Open::Dict(PyDict::new(py), None));
                r.skip_ws();
                if r.peek() == Some(b'}') {
                    r.i += 1;
                    pop(py, &mut stack)
                } else {
                    r.key(py, &mut stack)?;
                    continue;
                }
            }
            Some(b'[') => {
                r.i += 1;
                stack.push(Open::List(PyList::empty(py)));
                r.skip_ws();
                if r.peek() == Some(b']') {
                    r.i += 1;
                    pop(py, &mut stack)
                } else {
                    continue;
                }
            }
            _ => r.scalar(py)?,
        };
        // Put the value in its container, closing every container that ends after it.
        let mut value = value;
        loop {
            match stack.last_mut() {
                None => {
                    r.skip_ws();
                    return if r.i == r.b.len() { Ok(value) } else { Err(r.error("text after the value")) };
                }
                Some(Open::List(list)) => list.append(value)?,
                Some(Open::Dict(dict, key)) => match key.take() {
                    Some(k) => dict.set_item(k, value)?,
                    None => return Err(r.error("a member without a key")),
                },
            }
            r.skip_ws();
            match r.peek() {
                Some(b',') => {
                    r.i += 1;
                    if matches!(stack.last(), Some(Open::Dict(..))) {
                        r.skip_ws();
                        r.key(py, &mut stack)?;
                    }
                    break;
                }
                Some(b']' | b'}') => {
                    r.i += 1;
                    value = pop(py, &mut stack);
                }
                _ => return Err(r.error("expected `,` or a closing bracket")),
            }
        }
    }
}

/// The container on top of the stack, closed (`None` on an empty stack, which the
/// callers never have).
fn pop<'py>(py: Python<'py>, stack: &mut Vec<Open<'py>>) -> Bound<'py, PyAny> {
    match stack.pop() {
        Some(Open::List(l)) => l.into_any(),
        Some(Open::Dict(d, _)) => d.into_any(),
        None => py.None().into_bound(py),
    }
}

/// Object keys seen lately, as Python strings: tool-call arguments repeat the same few
/// keys, and a cached key costs neither a new string nor its hash. A fixed table of slots
/// indexed by an FNV-1a hash of the key's bytes; a slot holds the last key that hashed to
/// it. Only short keys without escapes are cached.
struct KeyCache {
    slots: Vec<Option<(Box<str>, Py<PyString>)>>,
}

const KEY_SLOTS: usize = 512;
const KEY_MAX_BYTES: usize = 48;

static KEYS: Mutex<KeyCache> = Mutex::new(KeyCache { slots: Vec::new() });

impl KeyCache {
    /// The Python string for `key` (its raw bytes in the text, with no escape).
    fn get<'py>(&mut self, py: Python<'py>, key: &str) -> Bound<'py, PyString> {
        if key.len() > KEY_MAX_BYTES {
            return PyString::new(py, key);
        }
        if self.slots.is_empty() {
            self.slots.resize_with(KEY_SLOTS, || None);
        }
        let Some(slot) = self.slots.get_mut(slot_of(key.as_bytes())) else { return PyString::new(py, key) };
        if let Some((k, s)) = slot.as_ref()
            && **k == *key
        {
            return s.bind(py).clone();
        }
        let s = PyString::new(py, key);
        *slot = Some((key.into(), s.clone().unbind()));
        s
    }
}

/// The cache slot of a key: a hash of its length and its first, middle and last bytes
/// (cheap, and enough to keep the few keys of tool arguments apart; a collision only costs
/// a new string).
fn slot_of(key: &[u8]) -> usize {
    let byte = |i: usize| key.get(i).copied().map_or(0, usize::from);
    let n = key.len();
    let h = n.wrapping_mul(0x9E37_79B9)
        ^ byte(0).wrapping_mul(0x85EB_CA6B)
        ^ byte(n / 2).wrapping_mul(0xC2B2_AE35)
        ^ byte(n.wrapping_sub(1)).wrapping_mul(0x27D4_EB2F);
    (h ^ (h >> 15)) % KEY_SLOTS
}

/// A cursor over strict JSON text.
struct Reader<'t, 'k> {
    text: &'t str,
    b: &'t [u8],
    i: usize,
    keys: Option<&'k mut KeyCache>,
}

impl Reader<'_, '_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    #[cold]
    fn error(&self, what: &str) -> PyErr {
        PyValueError::new_err(format!("not strict JSON at byte {}: {what}", self.i))
    }

    /// An object key and its colon; the key waits in the open object for its value.
    fn key<'py>(&mut self, py: Python<'py>, stack: &mut [Open<'py>]) -> PyResult<()> {
        if self.peek() != Some(b'"') {
            return Err(self.error("expected a key"));
        }
        let key = self.key_string(py)?;
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.error("expected `:`"));
        }
        self.i += 1;
        if let Some(Open::Dict(_, slot)) = stack.last_mut() {
            *slot = Some(key);
        }
        Ok(())
    }

    fn scalar<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.peek() {
            Some(b'"') => Ok(self.string(py)?.into_any()),
            Some(b't') => self.literal("true", PyBool::new(py, true).to_owned().into_any()),
            Some(b'f') => self.literal("false", PyBool::new(py, false).to_owned().into_any()),
            Some(b'n') => self.literal("null", py.None().into_bound(py)),
            Some(b'-' | b'0'..=b'9') => self.number(py),
            _ => Err(self.error("expected a value")),
        }
    }

    fn literal<'py>(&mut self, word: &str, value: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        if self.b.get(self.i..self.i + word.len()) == Some(word.as_bytes()) {
            self.i += word.len();
            Ok(value)
        } else {
            Err(self.error("expected a literal"))
        }
    }

    fn number<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let start = self.i;
        let mut integer = true;
        while let Some(c) = self.peek() {
            match c {
                b'0'..=b'9' | b'-' | b'+' => {}
                b'.' | b'e' | b'E' => integer = false,
                _ => break,
            }
            self.i += 1;
        }
        let s = self.text.get(start..self.i).unwrap_or("");
        if integer {
            if let Ok(n) = s.parse::<i64>() {
                return Ok(n.into_pyobject(py)?.into_any());
            }
            // Any size, as `json.loads` reads it.
            return py.get_type::<PyInt>().call1((s,));
        }
        match s.parse::<f64>() {
            Ok(f) => Ok(PyFloat::new(py, f).into_any()),
            Err(_) => Err(self.error("not a number")),
        }
    }

    /// A key at the cursor (on its opening quote): from the cache when it has no escape.
    fn key_string<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
        let start = self.i + 1;
        let end = self.b.get(start..).and_then(|rest| memchr::memchr2(b'"', b'\\', rest));
        match (end, self.keys.as_deref_mut()) {
            (Some(n), Some(keys)) if self.b.get(start + n) == Some(&b'"') => {
                let key = self.text.get(start..start + n).unwrap_or("");
                self.i = start + n + 1;
                Ok(keys.get(py, key))
            }
            _ => self.string(py),
        }
    }

    /// A string at the cursor (on its opening quote).
    fn string<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
        self.i += 1;
        let start = self.i;
        // Fast path: no escape, the bytes are the string.
        let stop = self.b.get(start..).and_then(|rest| memchr::memchr2(b'"', b'\\', rest));
        self.i = stop.map_or(self.b.len(), |n| start + n);
        if self.peek() == Some(b'"') {
            let s = self.text.get(start..self.i).unwrap_or("");
            self.i += 1;
            return Ok(PyString::new(py, s));
        }
        let mut out = String::from(self.text.get(start..self.i).unwrap_or(""));
        loop {
            let Some(c) = self.peek() else { return Err(self.error("a string without its closing quote")) };
            match c {
                b'"' => {
                    self.i += 1;
                    return Ok(PyString::new(py, &out));
                }
                b'\\' => {
                    self.i += 1;
                    let Some(e) = self.peek() else { return Err(self.error("an escape at the end")) };
                    self.i += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => out.push(self.unicode_escape()?),
                        _ => return Err(self.error("an unknown escape")),
                    }
                }
                _ => {
                    // Copy the run of plain bytes up to the next quote or backslash.
                    let from = self.i;
                    while !matches!(self.peek(), Some(b'"' | b'\\') | None) {
                        self.i += 1;
                    }
                    out.push_str(self.text.get(from..self.i).unwrap_or(""));
                }
            }
        }
    }

    /// The character of a `\uXXXX` escape whose `\u` was read (a surrogate pair read
    /// whole; a lone surrogate, which the library never returns, becomes U+FFFD).
    fn unicode_escape(&mut self) -> PyResult<char> {
        let hi = self.hex4()?;
        if (0xD800..0xDC00).contains(&hi) && self.b.get(self.i..self.i + 2) == Some(b"\\u") {
            let save = self.i;
            self.i += 2;
            let lo = self.hex4()?;
            if (0xDC00..0xE000).contains(&lo) {
                let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                return Ok(char::from_u32(c).unwrap_or('\u{FFFD}'));
            }
            self.i = save;
        }
        Ok(char::from_u32(hi).unwrap_or('\u{FFFD}'))
    }

    fn hex4(&mut self) -> PyResult<u32> {
        let digits = self.text.get(self.i..self.i + 4).ok_or_else(|| self.error("a short `\\u` escape"))?;
        let n = u32::from_str_radix(digits, 16).map_err(|_| self.error("a bad `\\u` escape"))?;
        self.i += 4;
        Ok(n)
    }
}

/// A `serde_json::Value` for a Python object: `dict` (string keys), `list`, `tuple`, `str`,
/// `bool`, `int`, `float` (finite), `None`, and any object with pydantic's `model_dump`
/// (OpenAI and MCP SDK types), dumped in JSON mode by alias.
///
/// # Errors
///
/// `TypeError` for anything else, `ValueError` past 128 levels of nesting or for a
/// non-finite float or an integer JSON cannot carry exactly.
pub(crate) fn py_to_value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    to_value(obj, 0)
}

fn to_value(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err(format!("nested deeper than {MAX_DEPTH} levels")));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_str()?.to_owned()));
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(n) = obj.extract::<i64>() {
            return Ok(Value::from(n));
        }
        if let Ok(n) = obj.extract::<u64>() {
            return Ok(Value::from(n));
        }
        return Err(PyValueError::new_err("an integer too large for JSON tool data"));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Number::from_f64(f.value())
            .map(Value::Number)
            .ok_or_else(|| PyValueError::new_err("a float that is not finite (NaN or infinity)"));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            let key = k.cast::<PyString>().map_err(|_| PyTypeError::new_err("a dict key that is not a string"))?;
            map.insert(key.to_str()?.to_owned(), to_value(&v, depth + 1)?);
        }
        return Ok(Value::Object(map));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return l.iter().map(|v| to_value(&v, depth + 1)).collect::<PyResult<Vec<_>>>().map(Value::Array);
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return t.iter().map(|v| to_value(&v, depth + 1)).collect::<PyResult<Vec<_>>>().map(Value::Array);
    }
    if obj.hasattr("model_dump")? {
        let kwargs = PyDict::new(obj.py());
        kwargs.set_item("mode", "json")?;
        kwargs.set_item("by_alias", true)?;
        kwargs.set_item("exclude_none", true)?;
        let dumped = obj.call_method("model_dump", (), Some(&kwargs))?;
        return to_value(&dumped, depth + 1);
    }
    Err(PyTypeError::new_err(format!(
        "cannot read a {} as JSON (expected dict, list, str, int, float, bool or None)",
        obj.get_type().name()?
    )))
}

/// A Python object for a `serde_json::Value` (reports: repair values, issues, notes).
pub(crate) fn value_to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for v in items {
                list.append(value_to_py(py, v)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, value_to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// A Python object for anything the library serialises (reports, issues, notes): through
/// its `Serialize` form, the same as the command line's JSON.
pub(crate) fn serialized_to_py<'py>(py: Python<'py>, value: &impl serde::Serialize) -> PyResult<Bound<'py, PyAny>> {
    let v = serde_json::to_value(value).map_err(|e| PyValueError::new_err(e.to_string()))?;
    value_to_py(py, &v)
}
