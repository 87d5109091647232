//! Where skills come from: the layer directories, every read from them
//! confined beneath them ([`read_in_root`]), the skill files found in them
//! ([`layers`]) and the files a skill ships ([`files`]). The first stage of
//! the pipeline: nothing here parses a skill.

pub(crate) mod confine;
pub mod env;
pub mod files;
pub mod layers;
pub mod project;
pub mod trust;

pub use confine::{
    ContentCheck, EntryKind, Refusal as ReadRefusal, Root, open_bounded, read_bounded, read_in_root,
};
pub use env::{Env, variable};
pub(crate) use layers::unexportable_at;
pub use layers::{LayerDir, LayerFlags, Layers, Located, Place, PlaceSource, places};
pub use project::{Project, ProjectFile};
