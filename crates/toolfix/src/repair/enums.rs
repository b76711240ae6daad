//! Enum values matched by case, then by separators, when exactly one option matches.

use super::{Ctx, ProblemKind};
use crate::report::RepairKind;
use crate::schema::view;
use serde_json::Value;

pub(super) fn match_enum<'a>(cx: &mut Ctx<'a>, node: &'a Value, value: &mut Value, path: &str) {
    let Value::String(s) = value else { return };
    let Some(options) = view::enum_values(cx.root, node) else {
        return;
    };
    if options.iter().any(|o| o.as_str() == Some(s.as_str())) {
        return;
    }
    // The options equal to `s` up to case; when none, up to case and separators. Told
    // without gathering them: a list is made only when several match (rare).
    let strings = || options.iter().filter_map(|o| o.as_str());
    let by_case = |o: &&str| o.eq_ignore_ascii_case(s);
    let by_name = |o: &&str| view::same_normalised(o, s);
    let found = if strings().any(|o| by_case(&o)) {
        unique(strings().filter(by_case))
    } else {
        unique(strings().filter(by_name))
    };
    match found {
        Ok(Some(one)) => {
            let after = Value::String(one.to_owned());
            let before = std::mem::replace(value, after.clone());
            cx.record(RepairKind::EnumMatched, path, Some(before), Some(after));
        }
        Ok(None) => {}
        Err(many) => {
            let names = many.iter().map(|m| (*m).to_owned()).collect();
            cx.problem(path, ProblemKind::AmbiguousEnum(names));
        }
    }
}

/// The one item of `items`, `None` when there is none, or all of them when there are
/// several.
fn unique<'o>(mut items: impl Iterator<Item = &'o str>) -> Result<Option<&'o str>, Vec<&'o str>> {
    let Some(first) = items.next() else { return Ok(None) };
    match items.next() {
        None => Ok(Some(first)),
        Some(second) => Err([first, second].into_iter().chain(items).collect()),
    }
}
