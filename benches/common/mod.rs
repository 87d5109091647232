//! Fixtures shared by the benches: the shipped spec and one typical
//! three-layer skill (`benches/fixtures/`, a skill `gen-tree` generated:
//! a 4.6 KB base `SKILL.md`, a team `.yaml` and a user `.toml`), plus a
//! 2 KB base `.yaml` of another skill.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use bernstein_skills::fragment::LoadOptions;
use bernstein_skills::layer::Form;
use bernstein_skills::{Fragment, Layer, MergeSpec};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

pub fn spec_path() -> PathBuf {
    root().join("spec/mergespec.yaml")
}

pub fn spec() -> MergeSpec {
    MergeSpec::load(&spec_path()).expect("the shipped spec loads")
}

pub fn options(spec: &MergeSpec) -> LoadOptions {
    LoadOptions {
        body_field: spec.body_field.clone(),
        ..LoadOptions::default()
    }
}

/// One fixture file: its text, form, layer and path.
pub struct Source {
    pub text: String,
    pub form: Form,
    pub layer: Layer,
    pub path: PathBuf,
}

impl Source {
    fn read(rel: &str, form: Form, layer: Layer) -> Source {
        let path = root().join("benches/fixtures").join(rel);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        Source {
            text,
            form,
            layer,
            path,
        }
    }

    pub fn parse(&self, options: &LoadOptions) -> Fragment {
        Fragment::from_str(
            self.text.clone(),
            self.form,
            self.layer,
            &self.path,
            options,
        )
        .expect("fixture parses")
    }
}

/// The skill present in all three layers: base SKILL.md, team YAML, user TOML.
pub const SKILL: &str = "skill-00081";

pub fn three_layers() -> [Source; 3] {
    [
        Source::read("base/skill-00081/SKILL.md", Form::SkillMd, Layer::Base),
        Source::read("team/skill-00081.yaml", Form::Yaml, Layer::Team),
        Source::read("user/skill-00081.toml", Form::Toml, Layer::User),
    ]
}

/// A base-layer `.yaml` skill (with a short body as a block scalar).
pub fn base_yaml() -> Source {
    Source::read("base/skill-00001.yaml", Form::Yaml, Layer::Base)
}
