//! Validation against a tool's compiled schema, as data: each failure a `Violation` with
//! a JSON pointer, the keyword and the schema path; `feedback` turns them into
//! [`Issue`](crate::report::Issue)s.

use crate::pointer;
use crate::schema::Tool;
use crate::schema::plain::Failure;
use serde_json::Value;
use std::borrow::Cow;

/// What a validator error says, before feedback turns it into words.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Violation<'t> {
    /// Where in the instance (for `required` and `additionalProperties`: the property);
    /// borrowed from the tool's plain schema where it can be.
    pub(crate) path: Cow<'t, str>,
    pub(crate) kind: ViolationKind,
    /// JSON pointer into the schema of the node that failed, when known.
    pub(crate) schema_path: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ViolationKind {
    /// A required property is missing.
    Missing,
    /// A property the schema does not allow.
    Unexpected,
    /// `anyOf` / `oneOf` / `not`: the whole node failed.
    Alternatives,
    /// Any other keyword.
    Keyword(&'static str),
}

impl ViolationKind {
    /// True for errors that cover a whole subtree rather than a point.
    pub(crate) fn is_coarse(&self) -> bool {
        matches!(self, ViolationKind::Alternatives)
    }
}

/// Something repair could not settle, kept for the refusal message.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Problem {
    pub(crate) path: String,
    pub(crate) kind: ProblemKind,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ProblemKind {
    /// A key matches several properties (or several keys one property).
    AmbiguousName(Vec<String>),
    /// An enum value matches several options when case or separators are ignored.
    AmbiguousEnum(Vec<String>),
    /// A string that starts like JSON but does not parse.
    UnparseableJson,
    /// A string with a fractional part where an integer is wanted.
    Fractional,
    /// A dotted key gives a value where one is already given.
    DotConflict(String),
    /// No member of a `required_any` group is present.
    RequiredAny(Vec<String>),
}

impl ProblemKind {
    /// Problems that refuse the call even when the result validates.
    pub(crate) fn is_fatal(&self) -> bool {
        matches!(self, ProblemKind::DotConflict(_) | ProblemKind::RequiredAny(_))
    }
}

fn keyword_name(kind: &jsonschema::error::ValidationErrorKind) -> &'static str {
    use jsonschema::error::ValidationErrorKind as K;
    match kind {
        K::Type { .. } => "type",
        K::Enum { .. } => "enum",
        K::Constant { .. } => "const",
        K::Minimum { .. } => "minimum",
        K::Maximum { .. } => "maximum",
        K::ExclusiveMinimum { .. } => "exclusiveMinimum",
        K::ExclusiveMaximum { .. } => "exclusiveMaximum",
        K::MinLength { .. } => "minLength",
        K::MaxLength { .. } => "maxLength",
        K::MinItems { .. } => "minItems",
        K::MaxItems { .. } => "maxItems",
        K::Pattern { .. } => "pattern",
        K::Format { .. } => "format",
        K::MultipleOf { .. } => "multipleOf",
        K::UniqueItems => "uniqueItems",
        K::MinProperties { .. } => "minProperties",
        K::MaxProperties { .. } => "maxProperties",
        K::FalseSchema => "false",
        _ => "schema",
    }
}

/// How much a violation says: repair needs only where and what; a refusal (and the
/// extensions, which look the failing schema node up) also the schema path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Detail {
    /// Path and kind; `schema_path` left `None`.
    Paths,
    /// Path, kind and schema path.
    Full,
}

/// Every violation of `instance` under `validator`, one per path and kind.
pub(crate) fn violations(validator: &jsonschema::Validator, instance: &Value) -> Vec<Violation<'static>> {
    violations_with(validator, instance, Detail::Full)
}

/// Where `instance` fails `tool`'s schema, saying as much as `detail` asks: for a plain
/// schema ([`Plain`](crate::schema::plain::Plain)) and paths alone, found by its one walk
/// (the places and kinds `jsonschema` names, without building its errors); otherwise as
/// [`violations_with`] finds them.
pub(crate) fn violations_found<'t>(tool: &'t Tool, instance: &Value, detail: Detail) -> Vec<Violation<'t>> {
    let Some(plain) = tool.plain().filter(|_| detail == Detail::Paths) else {
        return violations_with(tool.validator(), instance, detail);
    };
    let mut out: Vec<Violation> = plain.failures_as(instance, &|path, failure| {
        let kind = match failure {
            Failure::Type => ViolationKind::Keyword("type"),
            Failure::Enum => ViolationKind::Keyword("enum"),
            Failure::Missing => ViolationKind::Missing,
            Failure::Unexpected => ViolationKind::Unexpected,
        };
        Violation { path, kind, schema_path: None }
    });
    out.dedup_by(|a, b| a.path == b.path && a.kind == b.kind);
    out
}

/// [`violations`], saying as much as `detail` asks.
pub(crate) fn violations_with(
    validator: &jsonschema::Validator,
    instance: &Value,
    detail: Detail,
) -> Vec<Violation<'static>> {
    use jsonschema::error::ValidationErrorKind as K;
    let full = detail == Detail::Full;
    let mut out: Vec<Violation> = Vec::new();
    for err in validator.iter_errors(instance) {
        let at = err.instance_path().as_str();
        // The schema node that failed: the schema path without its keyword.
        let schema_node = || {
            let schema = err.schema_path().as_str();
            schema.as_bytes().iter().rposition(|&b| b == b'/').and_then(|i| schema.get(..i))
        };
        match err.kind() {
            K::Required { property } => {
                let name = property.as_str().unwrap_or_default();
                let schema_path = schema_node().filter(|_| full).map(|p| {
                    let mut sp = String::with_capacity(p.len() + name.len() + 12);
                    sp.push_str(p);
                    sp.push_str("/properties");
                    pointer::push(&mut sp, name);
                    sp
                });
                out.push(Violation { path: pointer::join(at, name).into(), kind: ViolationKind::Missing, schema_path });
            }
            K::AdditionalProperties { unexpected } | K::UnevaluatedProperties { unexpected } => {
                for name in unexpected {
                    out.push(Violation {
                        path: pointer::join(at, name).into(),
                        kind: ViolationKind::Unexpected,
                        schema_path: None,
                    });
                }
            }
            K::AnyOf { .. } | K::OneOfNotValid { .. } | K::OneOfMultipleValid { .. } | K::Not { .. } => {
                out.push(Violation {
                    path: at.to_owned().into(),
                    kind: ViolationKind::Alternatives,
                    schema_path: schema_node().filter(|_| full).map(str::to_owned),
                });
            }
            other => {
                out.push(Violation {
                    path: at.to_owned().into(),
                    kind: ViolationKind::Keyword(keyword_name(other)),
                    schema_path: schema_node().filter(|_| full).map(str::to_owned),
                });
            }
        }
    }
    out.dedup_by(|a, b| a.path == b.path && a.kind == b.kind);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn violations_point_at_properties() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["b"], "additionalProperties": false});
        let v = crate::schema::compile(&schema).unwrap();
        let got = violations(&v, &json!({"a": "x", "c": 1}));
        let paths: Vec<_> = got.iter().map(|v| (v.path.as_ref(), v.kind.clone())).collect();
        assert!(paths.contains(&("/a", ViolationKind::Keyword("type"))));
        assert!(paths.contains(&("/b", ViolationKind::Missing)));
        assert!(paths.contains(&("/c", ViolationKind::Unexpected)));
        let a = got.iter().find(|v| v.path == "/a").unwrap();
        assert_eq!(a.schema_path.as_deref(), Some("/properties/a"));
    }
}
