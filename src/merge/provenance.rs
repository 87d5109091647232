//! Where each merged value came from.
//!
//! The interpreter produces values tagged with an [`Origin`] at the
//! granularity users ask about: each OVERRIDE field, each APPEND item, each
//! keyed entry, each DEEP_MERGE leaf. [`crate::merge::Effective::to_value`]
//! drops the tags for a values-only view.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use crate::layer::Layer;

/// The layer, file and place in that file a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The layer.
    pub layer: Layer,
    /// The fragment's file.
    pub path: Arc<Path>,
    /// The JSON pointer of the value inside that fragment.
    pub pointer: String,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.layer, self.path.display())
    }
}

/// A value some lower layer had, replaced by a higher one.
#[derive(Debug, Clone, PartialEq)]
pub struct Shadowed<'a> {
    /// The replaced value.
    pub value: Cow<'a, Value>,
    /// Where it came from.
    pub origin: Origin,
}

/// A merged value with its origin and the values it replaced (nearest first).
///
/// Values are borrowed from the fragments (or the spec's defaults) they came
/// from, so merging copies no values; only a value the merge makes itself
/// (the skill's name, when no layer sets it) is owned.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sourced<'a> {
    /// The value.
    pub value: Cow<'a, Value>,
    /// Who set it; `None` for a spec default no layer touched.
    pub origin: Option<Origin>,
    /// What it replaced, the most recent first.
    pub overrode: Vec<Shadowed<'a>>,
}

impl<'a> Sourced<'a> {
    /// A value set by `origin`, replacing nothing yet.
    pub fn new(value: &'a Value, origin: Origin) -> Sourced<'a> {
        Sourced {
            value: Cow::Borrowed(value),
            origin: Some(origin),
            overrode: Vec::new(),
        }
    }

    /// A spec default: no origin.
    pub fn default_value(value: &'a Value) -> Sourced<'a> {
        Sourced {
            value: Cow::Borrowed(value),
            origin: None,
            overrode: Vec::new(),
        }
    }

    /// `self` replaced by `value` from `origin`; `self` becomes shadowed.
    pub fn replaced_by(self, value: &'a Value, origin: Origin) -> Sourced<'a> {
        let mut overrode = self.overrode;
        if let Some(o) = self.origin {
            overrode.insert(
                0,
                Shadowed {
                    value: self.value,
                    origin: o,
                },
            );
        }
        Sourced {
            value: Cow::Borrowed(value),
            origin: Some(origin),
            overrode,
        }
    }
}
