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
    let strings: Vec<&str> = options.iter().filter_map(|o| o.as_str()).collect();
    let by_case: Vec<&str> = strings.iter().copied().filter(|o| o.eq_ignore_ascii_case(s)).collect();
    let matches = if by_case.is_empty() {
        let key = view::normalise(s);
        strings.iter().copied().filter(|o| view::normalise(o) == key).collect()
    } else {
        by_case
    };
    match matches.as_slice() {
        [one] => {
            let after = Value::String((*one).to_owned());
            let before = std::mem::replace(value, after.clone());
            cx.record(RepairKind::EnumMatched, path, Some(before), Some(after));
        }
        [] => {}
        many => {
            let names = many.iter().map(|m| (*m).to_owned()).collect();
            cx.problem(path, ProblemKind::AmbiguousEnum(names));
        }
    }
}
