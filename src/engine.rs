//! The pipeline put together: a checked spec, its compiled schema, the
//! layer directories and the load options, with the operations the CLI
//! offers (list, resolve, validate).

use std::sync::OnceLock;

use crate::error::{Diagnostic, DiagnosticKind, Error, Result};
use crate::fragment::{Fragment, LoadOptions};
use crate::layer::{check_name, Layer, Layers, Located};
use crate::merge::{merge, Effective};
use crate::spec::MergeSpec;
use crate::validate::Validator;

/// A spec, its schema (compiled on first use) and the layers to read.
#[derive(Debug)]
pub struct Skills {
    spec: MergeSpec,
    validator: OnceLock<Validator>,
    layers: Layers,
    options: LoadOptions,
}

/// A resolved skill: its validated fragments and the merge of them.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// Each contributing layer's fragment, base first.
    pub fragments: Vec<Fragment>,
    /// The effective skill.
    pub effective: Effective,
}

impl Skills {
    /// Puts a spec and layers together. `max_bytes` caps fragment size.
    pub fn new(spec: MergeSpec, layers: Layers, max_bytes: u64) -> Skills {
        let options = LoadOptions {
            max_bytes,
            body_field: spec.body_field.clone(),
        };
        Skills {
            spec,
            validator: OnceLock::new(),
            layers,
            options,
        }
    }

    /// The spec.
    pub fn spec(&self) -> &MergeSpec {
        &self.spec
    }

    /// The layers.
    pub fn layers(&self) -> &Layers {
        &self.layers
    }

    /// The compiled fragment schema (compiled once, on first use).
    pub fn validator(&self) -> &Validator {
        self.validator.get_or_init(|| Validator::new(&self.spec))
    }

    /// Every skill name in any layer, with the layers that hold it.
    pub fn list(&self) -> Vec<(String, Vec<Layer>)> {
        self.layers.names()
    }

    /// Where skill `name` is in each layer.
    pub fn locate(&self, name: &str) -> Result<Vec<Located>> {
        check_name(name).map_err(|reason| Error::InvalidName {
            name: name.to_owned(),
            reason,
        })?;
        Ok(self.layers.locate(name))
    }

    /// Loads and validates one located fragment; all its errors on failure.
    pub fn load(&self, located: &Located) -> std::result::Result<Fragment, Vec<Diagnostic>> {
        let fragment = Fragment::load(located, &self.options).map_err(|d| vec![d])?;
        let errors = self.validator().check(&self.spec, &fragment);
        if errors.is_empty() {
            Ok(fragment)
        } else {
            Err(errors)
        }
    }

    /// Loads, validates and merges skill `name`. Every problem in every
    /// layer is reported together.
    pub fn resolve(&self, name: &str) -> Result<Resolved> {
        let located = self.locate(name)?;
        if located.is_empty() {
            return Err(Error::NotFound {
                name: name.to_owned(),
                searched: self.layers.dirs().iter().map(|d| d.path.clone()).collect(),
            });
        }
        let mut fragments = Vec::with_capacity(located.len());
        let mut errors = Vec::new();
        for l in &located {
            match self.load(l) {
                Ok(f) => fragments.push(f),
                Err(es) => errors.extend(es),
            }
        }
        if !errors.is_empty() {
            return Err(Error::Invalid(errors));
        }
        let effective = merge(&self.spec, name, &fragments);
        Ok(Resolved {
            fragments,
            effective,
        })
    }

    /// Warnings about the layer directories themselves.
    pub fn layer_warnings(&self) -> Vec<Diagnostic> {
        self.layers
            .dirs()
            .iter()
            .filter(|d| d.not_a_directory)
            .map(|d| {
                Diagnostic::warning(Some(&d.path), DiagnosticKind::LayerNotDirectory { layer: d.layer })
                    .in_layer(d.layer)
            })
            .collect()
    }
}
