//! The declared tool a call that names none must mean (a server call with an empty name,
//! a Kimi K2 call with a bare counter id): only when that is certain.

use super::ToolLookup;
use serde_json::Value;

/// The tool a call without a name must mean: the only tool offered, or the only one whose
/// schema has every argument key. `None` when that is not unique (no guess).
pub(crate) fn infer_name(tools: &dyn ToolLookup, arguments: &str) -> Option<String> {
    let names = tools.names();
    if let [only] = names.as_slice() {
        return Some((*only).to_owned());
    }
    let value = crate::salvage::salvage(arguments).ok()?.to_value().ok()?;
    let keys: Vec<&String> = value.as_object()?.keys().collect();
    if keys.is_empty() {
        return None;
    }
    let mut fits = names.iter().filter(|name| {
        let props = tools.parameters(name).and_then(|s| s.get("properties")).and_then(Value::as_object);
        props.is_some_and(|props| keys.iter().all(|k| props.contains_key(k.as_str())))
    });
    let first = fits.next()?;
    fits.next().is_none().then(|| (*first).to_owned())
}
