//! Hint checks, which run on valid calls too: Markdown auto-links unwrapped in path and
//! URL properties, relational defaults filled, `required_any` groups checked.

use super::{Ctx, ProblemKind};
use crate::pointer;
use crate::report::{CallNote, RepairKind};
use crate::schema::{Tool, view};
use serde_json::Value;

/// Apply every hint of `tool` to `value` (the whole arguments).
pub(crate) fn apply_hints(cx: &mut Ctx<'_>, tool: &Tool, value: &mut Value) {
    if tool.has_tagged_strings() && !cx.strict() {
        unwrap_links(cx, value);
    }
    let hints = tool.hints();
    let Value::Object(map) = value else { return };
    for group in &hints.relational {
        let given: Vec<&String> =
            group.fields.iter().filter(|f| map.get(f.as_str()).is_some_and(|v| !v.is_null())).collect();
        if given.is_empty() || given.len() == group.fields.len() {
            continue;
        }
        let given_names: Vec<String> = given.iter().map(|s| (*s).clone()).collect();
        for field in &group.fields {
            if map.get(field).is_some_and(|v| !v.is_null()) {
                continue;
            }
            let Some(default) = group.defaults.get(field) else {
                continue;
            };
            map.insert(field.clone(), default.clone());
            cx.record(RepairKind::RelationalDefault, pointer::join("", field), None, Some(default.clone()));
            cx.notes.push(CallNote::Relational {
                field: field.clone(),
                default: default.clone(),
                given: given_names.clone(),
            });
        }
    }
    for group in &hints.required_any {
        if !group.iter().any(|f| map.get(f).is_some_and(|v| !v.is_null())) {
            cx.problem("", ProblemKind::RequiredAny(group.clone()));
        }
    }
}

/// Walk the value along the schema and unwrap auto-links in tagged strings.
fn unwrap_links(cx: &mut Ctx<'_>, value: &mut Value) {
    let root = cx.root;
    let mut stack: Vec<(&Value, String, &mut Value)> = vec![(root, String::new(), value)];
    while let Some((node, path, v)) = stack.pop() {
        match v {
            Value::String(s) => {
                if view::is_path_or_url(root, node)
                    && let Some(out) = unwrap_autolinks(s)
                {
                    let before = std::mem::replace(s, out.clone());
                    cx.record(RepairKind::LinkUnwrapped, &path, Some(Value::String(before)), Some(Value::String(out)));
                }
            }
            Value::Object(map) => {
                let ov = view::object_view(root, node);
                for (k, child) in map.iter_mut() {
                    if let Some(schema) = ov.property(k) {
                        stack.push((schema, pointer::join(&path, k), child));
                    }
                }
            }
            Value::Array(list) => {
                if let Some(items) = view::items(root, node) {
                    for (i, child) in list.iter_mut().enumerate() {
                        stack.push((items, pointer::join(&path, &i.to_string()), child));
                    }
                }
            }
            _ => {}
        }
    }
}

/// `s` with every Markdown auto-link `[T](U)` (U is T, or `http://` / `https://` + T)
/// replaced by T; `None` when there is none.
pub(crate) fn unwrap_autolinks(s: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = s;
    let mut changed = false;
    while let Some(open) = rest.find('[') {
        let after = rest.get(open + 1..).unwrap_or_default();
        let Some(close) = after.find(']') else { break };
        let text = after.get(..close).unwrap_or_default();
        let tail = after.get(close + 1..).unwrap_or_default();
        let target =
            tail.strip_prefix('(').and_then(|t| t.find(')').map(|end| (t.get(..end).unwrap_or_default(), end)));
        match target {
            Some((url, end))
                if !text.is_empty()
                    && !text.contains('[')
                    && (url == text
                        || url.strip_prefix("http://") == Some(text)
                        || url.strip_prefix("https://") == Some(text)) =>
            {
                out.push_str(rest.get(..open).unwrap_or_default());
                out.push_str(text);
                // "[" + text + "](" + url + ")"
                let consumed = open + 1 + close + 1 + 1 + end + 1;
                rest = rest.get(consumed..).unwrap_or_default();
                changed = true;
            }
            _ => {
                out.push_str(rest.get(..=open).unwrap_or_default());
                rest = rest.get(open + 1..).unwrap_or_default();
            }
        }
    }
    out.push_str(rest);
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn autolinks() {
        assert_eq!(unwrap_autolinks("[notes.md](http://notes.md)").as_deref(), Some("notes.md"));
        assert_eq!(unwrap_autolinks("/home/ada/[main.py](http://main.py)").as_deref(), Some("/home/ada/main.py"));
        assert_eq!(unwrap_autolinks("[a](https://a) and [b](b)").as_deref(), Some("a and b"));
        assert_eq!(unwrap_autolinks("[docs](https://example.com/guide)"), None);
        assert_eq!(unwrap_autolinks("plain [x] text"), None);
    }
}
