//! Where skills come from: the layer directories, every read from them
//! confined beneath them ([`confine`]), the skill files found in them
//! ([`layers`]) and the files a skill ships ([`files`]). The first stage of
//! the pipeline: nothing here parses a skill.

pub mod confine;
pub mod files;
pub mod layers;

pub use layers::{
    Env, LayerDir, LayerFlags, Layers, Located, PROJECT_DIR, Place, PlaceSource, Skipped, names_in,
    places, unexportable, unexportable_at, variable,
};
