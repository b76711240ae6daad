//! Extension points as data the core reads: a field-name matcher, a value coercer, format
//! normalisers (per `format` or `x-toolfix` `semantic` tag) and a refusal renderer
//! registered on a [`ToolSet`] ([`Extensions`], [`ToolSet::with_extensions`]); contract
//! hints per tool ([`Tool::contract`], [`Tool::description_for_model`]).
//!
//! Repair uses the matcher, coercer and normalisers as one more family, only at the places
//! validation flagged and only on a call the built-in repairs could not settle; the result
//! must validate. `feedback` appends the contract to refusals and hands them to the
//! renderer. A valid call never reaches them.
//!
//! ```
//! use serde_json::json;
//! use toolfix::ToolSet;
//! use toolfix::schema::Extensions;
//!
//! let tools = ToolSet::new(&[json!({"name": "open", "parameters": {"type": "object",
//!     "properties": {"path": {"type": "string"}}, "required": ["path"],
//!     "additionalProperties": false}})]).unwrap();
//! let tools = tools.with_extensions(
//!     Extensions::new()
//!         .with_field_matcher(|given, _declared| (given == "file").then(|| "path".to_owned()))
//!         .with_contract("open", "paths are absolute"),
//! );
//! let fixed = tools.repair_call("open", r#"{"file": "/a"}"#);
//! assert_eq!(fixed.arguments(), Some(&json!({"path": "/a"})));
//! assert_eq!(fixed.repairs()[0].kind.as_str(), "extension_matched");
//! let refused = tools.repair_call("open", "{}");
//! assert!(refused.refusal().unwrap().message.contains("paths are absolute"));
//! ```

use super::{Tool, ToolSet};
use crate::report::Refusal;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// Maps a key the schema does not declare (`given`) to a declared name, or `None`.
pub type FieldMatcher = dyn Fn(&str, &[&str]) -> Option<String> + Send + Sync;
/// Converts a value its schema node refuses (`value`, `node`) into one it may accept.
pub type ValueCoercer = dyn Fn(&Value, &Value) -> Option<Value> + Send + Sync;
/// Rewrites a string of one format or tag into its canonical form.
pub type FormatNormaliser = dyn Fn(&str) -> Option<String> + Send + Sync;
/// Writes the message of a refusal (given the tool, with its contract hint appended).
pub type RefusalRenderer = dyn Fn(&Tool, &Refusal) -> String + Send + Sync;

/// Extension points for a [`ToolSet`].
#[derive(Clone, Default)]
pub struct Extensions {
    matcher: Option<Arc<FieldMatcher>>,
    coercer: Option<Arc<ValueCoercer>>,
    normalisers: Vec<(String, Arc<FormatNormaliser>)>,
    renderer: Option<Arc<RefusalRenderer>>,
    contracts: Vec<(String, String)>,
}

impl fmt::Debug for Extensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Extensions")
            .field("matcher", &self.matcher.is_some())
            .field("coercer", &self.coercer.is_some())
            .field("normalisers", &self.normalisers.iter().map(|(t, _)| t).collect::<Vec<_>>())
            .field("renderer", &self.renderer.is_some())
            .field("contracts", &self.contracts)
            .finish()
    }
}

impl Extensions {
    /// No extension.
    #[must_use]
    pub fn new() -> Extensions {
        Extensions::default()
    }

    /// Match undeclared keys to declared names (`given`, `declared`) → name. Used where the
    /// built-in rules found no certain match; the result must be declared and not given.
    #[must_use]
    pub fn with_field_matcher(
        mut self,
        matcher: impl Fn(&str, &[&str]) -> Option<String> + Send + Sync + 'static,
    ) -> Extensions {
        self.matcher = Some(Arc::new(matcher));
        self
    }

    /// Convert values their schema node refuses (`value`, `node`) → new value.
    #[must_use]
    pub fn with_value_coercer(
        mut self,
        coercer: impl Fn(&Value, &Value) -> Option<Value> + Send + Sync + 'static,
    ) -> Extensions {
        self.coercer = Some(Arc::new(coercer));
        self
    }

    /// Normalise refused strings whose node has `"format": tag` or an `x-toolfix`
    /// `semantic` tag equal to `tag`.
    #[must_use]
    pub fn with_format_normaliser(
        mut self,
        tag: &str,
        normalise: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Extensions {
        self.normalisers.push((tag.to_owned(), Arc::new(normalise)));
        self
    }

    /// Write refusal messages (capped at 4 KiB like the built-in ones).
    #[must_use]
    pub fn with_refusal_renderer(
        mut self,
        render: impl Fn(&Tool, &Refusal) -> String + Send + Sync + 'static,
    ) -> Extensions {
        self.renderer = Some(Arc::new(render));
        self
    }

    /// A short free-text contract for tool `name` ("paths are absolute"), appended to its
    /// description for the model and to its refusals. Overrides `x-toolfix.contract`.
    #[must_use]
    pub fn with_contract(mut self, name: &str, contract: &str) -> Extensions {
        self.contracts.retain(|(n, _)| n != name);
        self.contracts.push((name.to_owned(), contract.to_owned()));
        self
    }

    /// True when some extension repairs values (matcher, coercer or normaliser).
    pub(crate) fn repairs_values(&self) -> bool {
        self.matcher.is_some() || self.coercer.is_some() || !self.normalisers.is_empty()
    }

    pub(crate) fn matcher(&self) -> Option<&FieldMatcher> {
        self.matcher.as_deref()
    }

    pub(crate) fn coercer(&self) -> Option<&ValueCoercer> {
        self.coercer.as_deref()
    }

    pub(crate) fn normaliser(&self, tag: &str) -> Option<&FormatNormaliser> {
        self.normalisers.iter().find(|(t, _)| t == tag).map(|(_, n)| &**n)
    }

    pub(crate) fn renderer(&self) -> Option<&RefusalRenderer> {
        self.renderer.as_deref()
    }
}

impl ToolSet {
    /// This set with `extensions` on every tool.
    #[must_use]
    pub fn with_extensions(self, extensions: Extensions) -> ToolSet {
        let ext = Arc::new(extensions);
        self.with_every_tool(|tool| tool.set_extensions(Some(Arc::clone(&ext))))
    }
}

impl Tool {
    /// The tool's contract hint: the one registered with [`Extensions::with_contract`], or
    /// the definition's `x-toolfix.contract`.
    #[must_use]
    pub fn contract(&self) -> Option<&str> {
        let registered =
            self.extensions().and_then(|e| e.contracts.iter().find(|(n, _)| n == self.name()).map(|(_, c)| c.as_str()));
        registered.or_else(|| self.parameters().get("x-toolfix")?.get("contract")?.as_str())
    }
}
