//! How a cut-off text ended: where, whether it shows that more was coming, and which
//! values touch the cut (and so may be shorter than the model meant).

use super::FixKind;
use crate::span::Span;
use serde::Serialize;

/// The end of a text that stopped with something still open (an array, an object or a
/// string), as [`Salvaged::truncation`](crate::salvage::Salvaged::truncation) reports it.
///
/// The text is **evidently cut** ([`Truncation::is_evident`]) when it ends inside a token
/// (a string, number, literal or key), right after `,` or `:`, or right after an opening
/// bracket: more was coming. When it ends right after a complete value with only closers
/// missing, it is not: models often drop the last brace. A caller that knows the output hit
/// the token limit treats both the same.
///
/// ```
/// use toolfix::salvage::{salvage, UncertainKind};
///
/// let cut = salvage(r#"{"account": "A-7", "amount": 50"#).unwrap();
/// let t = cut.truncation().unwrap();
/// assert!(t.is_evident());
/// assert_eq!(t.at(), 31);
/// assert_eq!(t.uncertain()[0].kind, UncertainKind::Number); // 50 may have been 500
/// assert_eq!(t.uncertain()[0].pointer, "/amount");
///
/// // Only the closing brace is missing: closed, nothing uncertain.
/// let closed = salvage(r#"{"account": "A-7""#).unwrap();
/// assert!(!closed.truncation().unwrap().is_evident());
/// assert!(closed.truncation().unwrap().uncertain().is_empty());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Truncation {
    pub(crate) at: usize,
    pub(crate) evident: bool,
    pub(crate) uncertain: Vec<Uncertain>,
}

impl Truncation {
    /// Byte offset in the input where the text stops.
    #[must_use]
    pub fn at(&self) -> usize {
        self.at
    }

    /// True when the text ends with evidence that more was coming (inside a token, after
    /// `,` or `:`, or after an opening bracket), not merely with closers missing.
    #[must_use]
    pub fn is_evident(&self) -> bool {
        self.evident
    }

    /// The values that touch the cut, outermost first: each open array or object below
    /// the top level, then the token at the cut. A number, string or literal there may be
    /// shorter than meant (`5` for `50`), and an open container may lack members.
    #[must_use]
    pub fn uncertain(&self) -> &[Uncertain] {
        &self.uncertain
    }

    /// The deepest place of the cut as a JSON pointer into the repaired value (`""` when
    /// the cut is at the top level with no value at it).
    #[must_use]
    pub fn pointer(&self) -> &str {
        self.uncertain.last().map_or("", |u| u.pointer.as_str())
    }

    /// The same truncation with every offset passed through `map` (for text that was
    /// parsed after unescaping).
    pub(crate) fn mapped(mut self, map: impl Fn(usize) -> usize) -> Self {
        self.at = map(self.at);
        for u in &mut self.uncertain {
            u.span = Span::new(map(u.span.start), map(u.span.end).max(map(u.span.start)));
        }
        self
    }
}

/// One value that touches the cut.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Uncertain {
    /// What it is.
    pub kind: UncertainKind,
    /// Its bytes in the input, up to the cut.
    pub span: Span,
    /// Where it is, as a JSON pointer into the repaired value.
    pub pointer: String,
    /// True when the repaired value holds it (closed or cut back); false when salvage left
    /// it out: a cut key, a `tr` in an array, and a member whose value the cut left
    /// missing or cut to nothing (`{"a":`, `{"a": tr`), which goes key and all.
    pub kept: bool,
}

/// The kind of an [`Uncertain`] value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UncertainKind {
    /// A string cut off (or running into the cut, unquoted).
    String,
    /// A number at the cut: `7` may be `70`; `7.`, `-` and `1e` are incomplete.
    Number,
    /// An incomplete literal: `tr`, `fal`, `nu`.
    Literal,
    /// A key cut off (`{"na`); its pointer is the object's.
    Key,
    /// A member cut before its value (`{"name":`): left out, key and all; its pointer is
    /// the member's.
    Member,
    /// An array left open at the cut: `[` is not an empty list.
    Array,
    /// An object left open at the cut, below the top level.
    Object,
}

impl UncertainKind {
    /// The stable snake_case name.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            UncertainKind::String => "string",
            UncertainKind::Number => "number",
            UncertainKind::Literal => "literal",
            UncertainKind::Key => "key",
            UncertainKind::Member => "member",
            UncertainKind::Array => "array",
            UncertainKind::Object => "object",
        }
    }

    /// The fix that reports a value of this kind.
    #[must_use]
    pub const fn fix_kind(self) -> FixKind {
        match self {
            UncertainKind::String => FixKind::UncertainString,
            UncertainKind::Number => FixKind::UncertainNumber,
            UncertainKind::Literal => FixKind::UncertainLiteral,
            UncertainKind::Key | UncertainKind::Member => FixKind::UncertainKey,
            UncertainKind::Array | UncertainKind::Object => FixKind::UncertainContainer,
        }
    }
}

impl std::fmt::Display for UncertainKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for UncertainKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}
