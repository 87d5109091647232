//! Layered AI-agent skills: resolve a skill from up to three layers (base,
//! team, user) and merge them field by field under a merge specification
//! that is data.
//!
//! The pipeline, each step its own module:
//!
//! 1. [`spec`]: read `mergespec.yaml` into a checked [`MergeSpec`];
//! 2. [`validate`]: generate the fragment JSON Schema from it and compile it once;
//! 3. [`layer`]: find the layer directories and each skill's file in them;
//! 4. [`fragment`]: load each file (YAML, SKILL.md, TOML) into a [`Fragment`];
//! 5. [`mod@merge`]: the interpreter, producing an [`Effective`] skill with
//!    [`provenance`] for every value;
//! 6. [`check`]: the checks only the merged skill can answer (required
//!    fields, the name taken from the file name);
//! 7. [`render`]: deterministic JSON.
//!
//! ```
//! use std::path::Path;
//! use bernstein_skills::{merge, render, Fragment, Layer, MergeSpec, Validator};
//! use bernstein_skills::fragment::LoadOptions;
//! use bernstein_skills::layer::Form;
//!
//! let spec = MergeSpec::from_str(
//!     "version: 1\nname_field: name\nfields:\n  name: {strategy: OVERRIDE, type: string}\n  \
//!      tags: {strategy: APPEND, items: string}\n  metadata: {strategy: DEEP_MERGE}\n",
//!     Path::new("mergespec.yaml"),
//! )?;
//! let opts = LoadOptions::default();
//! let base = Fragment::from_str("tags: [a]\nmetadata: {limits: {max: 1, t: 0.2}}\n".into(),
//!     Form::Yaml, Layer::Base, Path::new("base/writer.yaml"), &opts).unwrap();
//! let user = Fragment::from_str("tags = [\"b\"]\nmetadata.limits.max = 2\n".into(),
//!     Form::Toml, Layer::User, Path::new("user/writer.toml"), &opts).unwrap();
//!
//! let validator = Validator::new(&spec);
//! assert!(validator.check(&spec, &base).is_empty() && validator.check(&spec, &user).is_empty());
//!
//! let fragments = [base, user];
//! let skill = merge(&spec, "writer", &fragments);
//! assert_eq!(render::to_json(&skill.to_value()), r#"{
//!   "layers_present": [
//!     "base",
//!     "user"
//!   ],
//!   "metadata": {
//!     "limits": {
//!       "max": 2,
//!       "t": 0.2
//!     }
//!   },
//!   "name": "writer",
//!   "tags": [
//!     "a",
//!     "b"
//!   ]
//! }
//! "#);
//! # Ok::<(), bernstein_skills::Error>(())
//! ```
#![warn(missing_docs)]
// A located `Diagnostic` is the error of one fragment; it is returned once
// per file, off the hot path, so its size does not matter.
#![allow(clippy::result_large_err)]

pub mod check;
pub mod confine;
pub mod engine;
pub mod error;
pub mod explain;
pub mod export;
pub mod files;
pub mod fragment;
pub mod impact;
pub mod layer;
pub mod merge;
pub mod ownership;
pub mod par;
pub mod provenance;
pub mod render;
pub mod skillmd;
pub mod spec;
pub mod target;
pub mod text;
pub mod validate;
pub mod yaml_out;

pub use engine::{Resolved, Skills};
pub use error::{Diagnostic, DiagnosticKind, Error, Result, Severity};
pub use fragment::Fragment;
pub use layer::{Env, Layer, Layers};
pub use merge::{Effective, merge};
pub use spec::MergeSpec;
pub use validate::Validator;
