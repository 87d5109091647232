//! Layered AI-agent skills: resolve a skill from up to three layers (base,
//! team, user) and merge them field by field under a merge specification
//! that is data.
//!
//! The pipeline, one module per stage, each using only the stages before
//! it (a test holds the layout to that):
//!
//! 1. [`spec`]: read `mergespec.yaml` into a checked [`MergeSpec`] (which
//!    also generates the fragment JSON Schema editors and [`validate`] use);
//! 2. [`source`]: find the layer directories and each skill's file in them,
//!    every read confined beneath its layer ([`source::read_in_root`]);
//! 3. [`fragment`]: load each file (YAML, SKILL.md, TOML) into a [`Fragment`];
//! 4. [`validate`]: judge each fragment by the schema compiled once
//!    (`jsonschema`), and by the spec's ownership of fields and files;
//! 5. [`mod@merge`]: the interpreter, producing an [`Effective`] skill with
//!    provenance for every value ([`merge::provenance`]);
//! 6. [`postmerge`]: what only the merged skill can answer (required fields of
//!    the spec, the name taken from the file name);
//! 7. [`target`]: a consumer's rules, renderings and translations, applied
//!    to the effective skill where its output is made;
//! 8. [`output`]: deterministic JSON, a `SKILL.md`, the story of each value;
//! 9. [`export`]: the effective skills written into a directory that may
//!    hold other things, owning only what it wrote.
//!
//! [`Skills`] ([`engine`]) puts the stages together for a spec and a set of
//! layers; [`layer`], [`error`], [`text`] and [`digest`] are the vocabulary
//! they share.
//! `examples/library.rs` runs the whole pipeline over the bundled example
//! layers (`cargo run --example library`). The parsers, the confined walk,
//! each strategy's merge and export's record are private to the crate.
//!
//! ```
//! use std::path::Path;
//! use bernstein_skills::{merge, output::render, Fragment, Layer, MergeSpec, Validator};
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
//! assert!(validator.validate(&spec, &base).is_empty() && validator.validate(&spec, &user).is_empty());
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
// Every system call goes through a crate's safe wrapper (rustix, tempfile,
// mimalloc); no unsafe block of our own.
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// A located `Diagnostic` is the error of one fragment; it is returned once
// per file, off the hot path, so its size does not matter.
#![allow(clippy::result_large_err)]

pub(crate) mod beneath;
pub mod context;
pub mod digest;
pub mod engine;
pub mod error;
pub mod export;
pub mod fragment;
pub mod impact;
pub mod layer;
pub mod merge;
pub mod output;
#[doc(hidden)]
pub mod par;
pub mod postmerge;
pub mod report;
pub mod source;
pub mod spec;
pub mod target;
pub mod text;
pub mod upstream;
pub mod validate;

pub use context::Context;
pub use digest::Digest;
pub use engine::Skills;
pub use error::{Diagnostic, DiagnosticKind, Error, ErrorKind, Result, Severity};
pub use fragment::Fragment;
pub use layer::Layer;
pub use merge::{Effective, Resolved, merge};
pub use source::{Env, Layers};
pub use spec::MergeSpec;
pub use validate::Validator;
