//! Shared reading of JSON call bodies for the JSON-family formats.

pub(crate) mod call;
pub(crate) mod scan;
