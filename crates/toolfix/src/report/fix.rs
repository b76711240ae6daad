//! What salvage changed: one [`TextFix`] per repair, with its kind and span.

use crate::span::Span;
use serde::Serialize;

/// One text-level repair: what kind, and which bytes of the original text it concerned.
///
/// An insertion has an empty span at the insertion point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct TextFix {
    /// What was repaired.
    pub kind: FixKind,
    /// Where, in the text given to [`salvage`](crate::salvage::salvage).
    pub span: Span,
}

macro_rules! fix_kinds {
    ($( $(#[$doc:meta])* $variant:ident => $name:literal, )*) => {
        /// The kind of a text-level repair. `as_str` gives the stable snake_case name used
        /// in reports and on the command line.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum FixKind {
            $( $(#[$doc])* $variant, )*
        }

        impl FixKind {
            /// Every kind, in declaration order.
            pub const ALL: &'static [FixKind] = &[ $( FixKind::$variant, )* ];

            /// The stable snake_case name of this kind.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self { $( FixKind::$variant => $name, )* }
            }
        }
    };
}

fix_kinds! {
    /// A Markdown code fence around the JSON was removed.
    CodeFence => "code_fence",
    /// Prose before or after the JSON was removed.
    SurroundingProse => "surrounding_prose",
    /// A JSONP wrapper `callback( ... );` was removed.
    JsonpWrapper => "jsonp_wrapper",
    /// A `//`, `/* */`, `#` or `<!-- -->` comment was removed.
    Comment => "comment",
    /// A comma before a closing bracket was removed.
    TrailingComma => "trailing_comma",
    /// A comma right after an opening bracket was removed.
    LeadingComma => "leading_comma",
    /// A repeated comma was removed.
    DoubledComma => "doubled_comma",
    /// A comma between two values or members was inserted.
    MissingComma => "missing_comma",
    /// A colon between a key and its value was inserted.
    MissingColon => "missing_colon",
    /// A string in single quotes was requoted.
    SingleQuotes => "single_quotes",
    /// A string in typographic quotes (“ ” ‘ ’ „) was requoted.
    SmartQuotes => "smart_quotes",
    /// A string in backticks was requoted.
    BacktickQuotes => "backtick_quotes",
    /// An object key without quotes was quoted.
    UnquotedKey => "unquoted_key",
    /// A string value without quotes was quoted.
    UnquotedString => "unquoted_string",
    /// Python `True`, `False` or `None` was mapped to JSON.
    PythonLiteral => "python_literal",
    /// JS `undefined`, `NaN` or `Infinity` was mapped to `null`.
    JsLiteral => "js_literal",
    /// A literal in the wrong case (`TRUE`, `Null`) was lowercased.
    LiteralCase => "literal_case",
    /// A raw control character (newline, tab, ...) inside a string was escaped.
    ControlCharacter => "control_character",
    /// A quote inside a string that the structure shows is not its end was escaped.
    InnerQuote => "inner_quote",
    /// A string's closing quote that the structure shows is missing was inserted.
    MissingQuote => "missing_quote",
    /// An escape JSON does not have (`\'`, `\x41`, `\a`, a line continuation) was rewritten.
    InvalidEscape => "invalid_escape",
    /// A lone UTF-16 surrogate escape was replaced by U+FFFD.
    LoneSurrogate => "lone_surrogate",
    /// A number JSON does not allow (`+1`, `.5`, `1.`, `0x1F`, `1_000`, `01`) was normalised.
    NumberFormat => "number_format",
    /// Something that is not a JSON number (`1/3`, `1.2.3`, `57eeee-...`) was kept as a string.
    NumberAsString => "number_as_string",
    /// A `...` placeholder in an array or object was removed.
    Ellipsis => "ellipsis",
    /// String concatenation `"a" + "b"` was joined.
    StringConcatenation => "string_concatenation",
    /// A closing bracket with nothing to close was removed.
    ExtraClosingBracket => "extra_closing_bracket",
    /// A closing bracket the structure shows is missing was inserted: an object glued to
    /// the next element of its array (`[{"i": 1{"i": 2}]`).
    MissingBracket => "missing_bracket",
    /// A closing bracket of the wrong kind was replaced.
    MismatchedBracket => "mismatched_bracket",
    /// A Python tuple `( ... )` or set `{a, b}` was turned into an array.
    TupleOrSet => "tuple_or_set",
    /// An array written with key-value pairs was turned into an object.
    ArrayAsObject => "array_as_object",
    /// A wrapper such as `ObjectId("...")` or `NumberLong(...)` was removed.
    MongoWrapper => "mongo_wrapper",
    /// JSON written with escaped quotes (`{\"a\": 1}`) was unescaped.
    EscapedJson => "escaped_json",
    /// A value was missing after a key: `""` was inserted.
    MissingValue => "missing_value",
    /// Text between members that is not JSON was removed.
    StrayText => "stray_text",
    /// A character outside strings that JSON does not allow there and that shows nothing:
    /// whitespace JSON does not have (NBSP, U+2000–U+200A, U+3000, vertical tab, form feed,
    /// line and paragraph separators) or an invisible format character (zero-width space,
    /// BOM, word joiner, soft hyphen, bidi controls, …) was removed.
    InvisibleCharacter => "invisible_character",
    /// An identical repeat of the top-level value was removed.
    DuplicateValue => "duplicate_value",
    /// Several distinct top-level values were gathered into an array.
    MultipleValues => "multiple_values",
    /// An empty container next to another top-level value was removed.
    EmptyValueDropped => "empty_value_dropped",
    /// A closing bracket that ended the top-level value too early was removed.
    PrematureClose => "premature_close",
    /// Input ended inside a string: the string was closed. Its value was cut off.
    TruncatedString => "truncated_string",
    /// Input ended inside arrays or objects: they were closed.
    TruncatedContainer => "truncated_container",
    /// Input ended inside a key, or after a key before its value was complete (`{"a":`,
    /// `{"a": tr`): the member was left out, key and all.
    TruncatedKey => "truncated_key",
    /// Input ended inside a number or literal: the incomplete token was cut back.
    TruncatedToken => "truncated_token",
    /// A string touching the cut of truncated text: it may be shorter than meant.
    UncertainString => "uncertain_string",
    /// A number touching the cut of truncated text: `5` may have been `50`.
    UncertainNumber => "uncertain_number",
    /// An incomplete literal (`tr`, `fal`, `nu`) at the cut of truncated text.
    UncertainLiteral => "uncertain_literal",
    /// A key cut off, or a member cut before its value, at the cut of truncated text.
    UncertainKey => "uncertain_key",
    /// An array or object left open at the cut of truncated text: it may lack members.
    UncertainContainer => "uncertain_container",
}

impl FixKind {
    /// True for the kinds that say the input was cut off before its end.
    #[must_use]
    pub const fn is_truncation(self) -> bool {
        matches!(
            self,
            FixKind::TruncatedString
                | FixKind::TruncatedContainer
                | FixKind::TruncatedKey
                | FixKind::TruncatedToken
                | FixKind::UncertainString
                | FixKind::UncertainNumber
                | FixKind::UncertainLiteral
                | FixKind::UncertainKey
                | FixKind::UncertainContainer
        )
    }
}

impl std::fmt::Display for FixKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for FixKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_snake_case() {
        let mut seen = std::collections::HashSet::new();
        for k in FixKind::ALL {
            assert!(seen.insert(k.as_str()), "duplicate name {k}");
            assert!(k.as_str().bytes().all(|b| b.is_ascii_lowercase() || b == b'_'));
        }
    }
}
