//! What the pipeline hands on: the effective skill as deterministic JSON
//! ([`render`]), as a `SKILL.md` ([`skillmd`], its frontmatter written by
//! [`yaml_out`] so every YAML reader reads it alike), and as the story of
//! each value ([`explain`]).

pub mod explain;
pub mod render;
pub mod skillmd;
pub mod yaml_out;
