//! toolfix makes LLM tool calls land.
//!
//! Models emit tool calls that are almost right. toolfix recovers every call that can be
//! recovered honestly, leaves valid calls byte for byte untouched, refuses to guess where a
//! guess could be wrong, and when it refuses, writes an error the model can act on.
//!
//! The pipeline, one module per stage:
//!
//! 1. `extract`: find tool calls in every channel and model format;
//! 2. [`salvage`]: lenient JSON with a report of every text fix;
//! 3. `validate` and `repair`: check against the tool's schema, repair only where it
//!    disagreed;
//! 4. `bind`: into a typed Rust value;
//! 5. `guard`: break loops of repeated calls.
//!
//! # Untrusted input
//!
//! Every entry point is bounded by [`Limits`]: input size, nesting depth, linear time, no
//! recursion driven by the input, and no panic on any input.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod error;
pub mod extract;
mod limits;
pub mod salvage;
mod span;

pub use error::{Error, ErrorKind, Result};
pub use limits::Limits;
pub use span::Span;
