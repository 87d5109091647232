//! The three layers, the forms a skill takes in one, and what a skill may
//! be named: the small vocabulary every stage of the pipeline shares.

use std::fmt;
use std::path::{Path, PathBuf};

/// One of the three layers, ordered by precedence: `Base < Team < User`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layer {
    /// The skill as shipped.
    Base,
    /// A project-shared override, usually tracked in git.
    Team,
    /// A personal override.
    User,
}

impl Layer {
    /// All layers, lowest precedence first: the order fragments are merged in.
    pub const ALL: [Layer; 3] = [Layer::Base, Layer::Team, Layer::User];

    /// The short label used in tables and JSON (`base`, `team`, `user`).
    pub fn label(self) -> &'static str {
        match self {
            Layer::Base => "base",
            Layer::Team => "team",
            Layer::User => "user",
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} layer", self.label())
    }
}

impl serde::Serialize for Layer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.label())
    }
}

/// The on-disk forms of a skill in one layer, in the order they are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Form {
    /// `<name>.yaml`
    Yaml,
    /// `<name>.yml`
    Yml,
    /// `<name>/SKILL.md` (or `<name>/skill.md`, which the Agent Skills
    /// reference validator accepts too): YAML frontmatter and a Markdown
    /// body.
    SkillMd,
    /// `<name>.toml`
    Toml,
    /// A `<name>/` directory with no `SKILL.md`, in a layer above base: the
    /// skill's files and no fields, as if it held an empty `SKILL.md`. It
    /// is tried last, so any other form of the skill in the layer wins and
    /// the directory is a shadowed form.
    Files,
}

/// The names of the file that makes a directory a skill, in the order they
/// win: the Agent Skills reference validator looks for `SKILL.md`, then
/// `skill.md`.
pub(crate) const SKILL_MD_NAMES: [&str; 2] = ["SKILL.md", "skill.md"];

impl Form {
    /// The forms that hold fields, in lookup order: the first that exists
    /// wins. [`Form::Files`] comes after all of them.
    pub const ALL: [Form; 4] = [Form::Yaml, Form::Yml, Form::SkillMd, Form::Toml];

    /// The path of this form of skill `name` inside `dir`.
    pub fn path_in(self, dir: &Path, name: &str) -> PathBuf {
        match self {
            Form::Yaml => dir.join(format!("{name}.yaml")),
            Form::Yml => dir.join(format!("{name}.yml")),
            Form::SkillMd => dir.join(name).join("SKILL.md"),
            Form::Toml => dir.join(format!("{name}.toml")),
            Form::Files => dir.join(name),
        }
    }

    /// The short name used by `--form` and in messages.
    pub fn label(self) -> &'static str {
        match self {
            Form::Yaml => "yaml",
            Form::Yml => "yml",
            Form::SkillMd => "md",
            Form::Toml => "toml",
            Form::Files => "files",
        }
    }

    /// Recognises a directory entry as a skill: `(name, form)`.
    /// A directory `name` is only a candidate; its `SKILL.md` must still exist.
    pub(crate) fn classify(file_name: &str, is_dir: bool) -> Option<(&str, Form)> {
        if is_dir {
            return Some((file_name, Form::SkillMd));
        }
        let (stem, ext) = file_name.rsplit_once('.')?;
        let form = match ext {
            "yaml" => Form::Yaml,
            "yml" => Form::Yml,
            "toml" => Form::Toml,
            _ => return None,
        };
        Some((stem, form))
    }
}

/// Why a skill name was refused.
pub fn check_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        Err("a skill name cannot be empty")
    } else if name == ".." {
        Err("a skill name cannot be '..'")
    } else if name.contains('/') || name.contains('\\') {
        Err("a skill name cannot contain a path separator")
    } else if name.starts_with('.') {
        Err("a skill name cannot start with '.'")
    } else if name.chars().any(char::is_control) {
        Err("a skill name cannot contain control characters")
    } else if name.chars().any(crate::text::is_bidi) {
        Err("a skill name cannot contain bidirectional control characters")
    } else if name.chars().any(crate::text::is_invisible) {
        Err("a skill name cannot contain invisible characters")
    } else {
        Ok(())
    }
}

/// The layers in words, for messages and hover text: `the base layer`,
/// `the base and team layers`, `the base, team and user layers`.
pub(crate) fn layers_phrase(layers: &[Layer]) -> String {
    let labels: Vec<&str> = layers.iter().map(|l| l.label()).collect();
    match labels.as_slice() {
        [] => "no layer".to_owned(),
        [one] => format!("the {one} layer"),
        [init @ .., last] => format!("the {} and {last} layers", init.join(", ")),
    }
}

/// The longest file name, in bytes, that file systems allow (`NAME_MAX`).
pub(crate) const FILE_NAME_MAX: usize = 255;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        for bad in [
            "",
            "..",
            "../x",
            "a/b",
            "/etc/passwd",
            ".hidden",
            "a\u{7}",
            "a\\b",
        ] {
            assert!(check_name(bad).is_err(), "{bad:?} should be refused");
        }
        for good in ["writer", "my-skill_2", "écrire"] {
            assert!(check_name(good).is_ok());
        }
    }

    #[test]
    fn precedence_order() {
        assert!(Layer::Base < Layer::Team && Layer::Team < Layer::User);
        assert_eq!(Layer::Team.to_string(), "team layer");
    }
}
