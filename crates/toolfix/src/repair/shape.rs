//! Shape repairs: a JSON string decoded where an array or object is wanted, `{}` to `[]`,
//! a bare value wrapped in an array; scalar coercion is delegated to `coerce`.

use super::{Ctx, ProblemKind, coerce, repair_value};
use crate::pointer;
use crate::report::RepairKind;
use crate::schema::view::{self, Types};
use serde_json::Value;

/// Convert `value`, whose type `allowed` does not accept, when one conversion is certain.
pub(super) fn convert<'a>(
    cx: &mut Ctx<'a>,
    node: &'a Value,
    allowed: Types,
    value: &mut Value,
    path: &mut String,
    depth: usize,
) {
    let root = cx.root;
    let wants_container = allowed.has(Types::ARRAY) || allowed.has(Types::OBJECT);
    if let Value::String(s) = value
        && wants_container
    {
        let trimmed = s.trim_start();
        if trimmed.starts_with('[') || trimmed.starts_with('{') {
            match serde_json::from_str::<Value>(s) {
                Ok(decoded) if allowed.accepts(&decoded) => {
                    let before = std::mem::replace(value, decoded);
                    cx.record(RepairKind::JsonStringDecoded, &**path, Some(before), None);
                    repair_value(cx, node, value, path, depth + 1, true);
                    if let Some(last) =
                        cx.repairs.iter_mut().rev().find(|r| r.kind == RepairKind::JsonStringDecoded && r.path == *path)
                    {
                        last.after = Some(value.clone());
                    }
                }
                _ => cx.problem(path, ProblemKind::UnparseableJson),
            }
            return;
        }
    }
    if matches!(value, Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null)
        && let Some(after) = coerce::coerce(cx, allowed, value, path)
    {
        let before = std::mem::replace(value, after);
        cx.record(RepairKind::CoercedScalar, &**path, Some(before), Some(value.clone()));
        return;
    }
    if !allowed.has(Types::ARRAY) || allowed.has(Types::OBJECT) && value.is_object() {
        return;
    }
    if let Value::Object(map) = value
        && map.is_empty()
    {
        *value = Value::Array(Vec::new());
        cx.record(
            RepairKind::EmptyObjectToArray,
            &**path,
            Some(Value::Object(serde_json::Map::new())),
            Some(Value::Array(Vec::new())),
        );
        return;
    }
    if value.is_null() || value.is_array() {
        return;
    }
    // A bare value: wrapped when the items accept its type (or can take it after a
    // certain coercion, which the item repair then makes).
    let Some(items) = view::items(root, node) else {
        return;
    };
    let item_types = view::types(root, items);
    let fits = item_types.accepts(value)
        || (matches!(value, Value::String(_) | Value::Number(_) | Value::Bool(_))
            && coerce::coercible(item_types, value));
    if !fits {
        return;
    }
    let inner = std::mem::take(value);
    *value = Value::Array(vec![inner]);
    cx.record(RepairKind::WrappedInArray, &**path, None, None);
    let len = path.len();
    if let Value::Array(list) = value
        && let Some(item) = list.first_mut()
    {
        pointer::push(path, "0");
        // The item's original text now lives one level deeper.
        cx.moves.record(path.clone(), path.get(..len).unwrap_or_default().to_owned());
        repair_value(cx, items, item, path, depth + 1, true);
        path.truncate(len);
    }
    if let Some(rec) = cx.repairs.iter_mut().rev().find(|r| r.kind == RepairKind::WrappedInArray && r.path == *path) {
        rec.after = Some(value.clone());
        if let Value::Array(list) = value {
            rec.before = list.first().cloned();
        }
    }
}
