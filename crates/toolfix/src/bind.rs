//! Typed binding: one Rust type is the source of both the schema shown to the model and
//! the value the tool receives.
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use toolfix::bind::tool_for;
//! use toolfix::schema::ToolSet;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Search {
//!     query: String,
//!     limit: Option<u32>,
//! }
//!
//! let tools = ToolSet::from_tools(vec![tool_for::<Search>("search", "Search the notes.").unwrap()]).unwrap();
//! let call = tools.repair_call("search", r#"{"query": "rust", "limit": "5"}"#);
//! let args: Search = call.bind().unwrap();
//! assert_eq!(args.limit, Some(5));
//! ```

use crate::error::{Error, ErrorKind, Result};
use crate::report::Refusal;
use crate::schema::Tool;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A tool whose `parameters` schema is derived from `T`.
///
/// # Errors
///
/// [`ErrorKind::ToolDefinition`] when the derived schema does not compile.
pub fn tool_for<T: JsonSchema>(name: &str, description: &str) -> Result<Tool> {
    Tool::from_parts(name, description, schema_for::<T>())
}

/// The JSON Schema of `T` as a value (draft 2020-12).
#[must_use]
pub fn schema_for<T: JsonSchema>() -> Value {
    let mut schema = schemars::schema_for!(T).to_value();
    if let Some(map) = schema.as_object_mut() {
        map.shift_remove("title");
    }
    schema
}

/// Deserialize accepted arguments into `T`.
pub(crate) fn bind_value<T: DeserializeOwned>(arguments: Option<&Value>, refusal: Option<&Refusal>) -> Result<T> {
    match (arguments, refusal) {
        (Some(v), _) => T::deserialize(v)
            .map_err(|e| Error::new(ErrorKind::Bind, format!("the arguments do not fit the type: {e}"))),
        (None, Some(r)) => Err(Error::new(ErrorKind::Bind, "the call was refused").with_hint(r.message.clone())),
        (None, None) => Err(Error::new(ErrorKind::Bind, "the call has no arguments")),
    }
}
