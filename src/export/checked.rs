//! What `export --check` found in one directory, as one typed report: the
//! command line prints it as text or serialises it (docs/json.md, each
//! entry of `export --check --json`'s `checks`, and of `audit --json`'s),
//! and every other front end gets the same value.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use super::{Drift, EntryKind, ExportOptions, Format};
use crate::engine::Skills;
use crate::error::Result;
use crate::layer::Layer;
use crate::source::LayerDir;

/// What differs between a directory and what an export would write there
/// ([`Skills::check_export`]): `{"dir", "format", "target", "shared_with",
/// "up_to_date", "drift", "layers"}`.
#[derive(Debug, Clone, Serialize)]
pub struct DirCheck {
    /// The directory, as it was given.
    #[serde(serialize_with = "display")]
    pub dir: PathBuf,
    /// What is written per skill there: the target's format, else the one
    /// asked for.
    #[serde(serialize_with = "label")]
    pub format: Format,
    /// The target the directory is written for, if any.
    pub target: Option<String>,
    /// The other targets reading the directory, written for too.
    pub shared_with: Vec<String>,
    /// Nothing differs.
    pub up_to_date: bool,
    /// Every difference, by skill name (a skill may have several kinds).
    pub drift: Vec<SkillDrift>,
    /// The layers the export takes, base first: without the user layer
    /// for a directory the project commits.
    pub layers: Vec<Layer>,
    /// Where each layer is and why, for a front end that says so
    /// (`places` in docs/json.md); not part of the check's document.
    #[serde(skip)]
    pub places: Vec<LayerDir>,
}

/// One skill's drift: `{"skill", "drift", "file", "what", "diff"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillDrift {
    /// The skill.
    pub skill: String,
    /// How it differs.
    #[serde(flatten)]
    pub drift: Drift,
    /// Where its output lies, unescaped: `DIR/NAME.json`, or the directory
    /// `DIR/NAME/` (ending in `/`).
    pub file: String,
}

impl Drift {
    /// Its kind as the JSON names it: `added`, `removed`, `changed`,
    /// `hand-edited`, `hand-added`, `unmanaged`, `unconfirmed`, `extra`.
    pub fn label(&self) -> &'static str {
        match self {
            Drift::Added => "added",
            Drift::Removed => "removed",
            Drift::Unmanaged(_) => "unmanaged",
            Drift::Changed(_) => "changed",
            Drift::HandEdited(_) => "hand-edited",
            Drift::HandAdded(_) => "hand-added",
            Drift::Unconfirmed(_) => "unconfirmed",
            Drift::Extra(_) => "extra",
        }
    }

    /// What is at the skill's place, for output export did not write.
    pub fn what(&self) -> Option<EntryKind> {
        match self {
            Drift::Unmanaged(what) | Drift::Extra(what) => Some(*what),
            _ => None,
        }
    }

    /// The lines that say how, each a short escaped diff line.
    pub fn lines(&self) -> &[String] {
        match self {
            Drift::Changed(lines)
            | Drift::HandEdited(lines)
            | Drift::HandAdded(lines)
            | Drift::Unconfirmed(lines) => lines,
            Drift::Added | Drift::Removed | Drift::Unmanaged(_) | Drift::Extra(_) => &[],
        }
    }
}

/// `{"drift", "what", "diff"}`: its kind, what is there in words (or
/// `null`) and its lines.
impl Serialize for Drift {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("drift", self.label())?;
        map.serialize_entry("what", &self.what().map(EntryKind::words))?;
        map.serialize_entry("diff", self.lines())?;
        map.end()
    }
}

/// Where a skill's output lies in `dir` for `format`: the file
/// `DIR/NAME.json`, or the directory `DIR/NAME`.
pub fn skill_place(dir: &Path, format: Format, name: &str) -> PathBuf {
    match format {
        Format::Json => dir.join(format!("{name}.json")),
        Format::Skill => dir.join(name),
    }
}

impl Skills {
    /// What differs between `dir` and what an export with `options` would
    /// write there ([`Skills::export_drift_with`], whose errors it
    /// returns), writing nothing, with the layers the export takes.
    pub fn check_export(&self, dir: &Path, options: &ExportOptions) -> Result<DirCheck> {
        let format = options.effective_format();
        let drift: Vec<SkillDrift> = self
            .export_drift_with(dir, options)?
            .into_iter()
            .map(|(skill, drift)| {
                let mut file = skill_place(dir, format, &skill).display().to_string();
                if format == Format::Skill {
                    file.push('/');
                }
                SkillDrift { skill, drift, file }
            })
            .collect();
        let dirs = self.layers().dirs();
        let taken: BTreeSet<Layer> = dirs
            .iter()
            .filter(|d| d.left_out.is_none())
            .map(|d| d.layer)
            .collect();
        Ok(DirCheck {
            dir: dir.to_path_buf(),
            format,
            target: options.target.map(|t| t.name.clone()),
            shared_with: options
                .target
                .map(|t| t.shared_with().to_vec())
                .unwrap_or_default(),
            up_to_date: drift.is_empty(),
            drift,
            layers: taken.into_iter().collect(),
            places: dirs.to_vec(),
        })
    }
}

/// A path as JSON shows it: unescaped.
pub(crate) fn display<S: Serializer>(path: &Path, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.collect_str(&path.display())
}

/// A format by its label (`json`, `skill`).
fn label<S: Serializer>(format: &Format, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(format.label())
}
