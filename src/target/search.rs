//! Where target files are looked for.

use std::path::{Path, PathBuf};

use super::Target;
use crate::error::{Error, Result};
use crate::text::{self, EXCERPT_CHARS};

/// Where targets are looked for, by name: the directories in order (the
/// person's own `$XDG_CONFIG_HOME/bernstein/skills/targets`, then the
/// `targets/` directory beside the spec in use). A name with a `/` or
/// ending in `.yaml` is a file.
#[derive(Debug, Clone, Default)]
pub struct TargetSearch {
    /// The directories, first match wins.
    pub dirs: Vec<PathBuf>,
}

impl TargetSearch {
    /// The target named `name` (or the file `name`).
    pub fn find(&self, name: &str) -> Result<Target> {
        if name.contains('/') || name.ends_with(".yaml") {
            return Target::load(Path::new(name));
        }
        if crate::layer::check_name(name).is_ok() {
            for dir in &self.dirs {
                let path = dir.join(format!("{name}.yaml"));
                if path.is_file() {
                    return Target::load(&path);
                }
            }
        }
        let known = self.names();
        // A misspelling, or the start of a name (`claude` for
        // `claude-code`).
        let suggestion =
            crate::error::did_you_mean_or_prefix(name, known.iter().map(String::as_str));
        // Every name, up to a bound no directory of targets reaches.
        const SHOWN: usize = 64;
        let mut all: Vec<String> = known
            .iter()
            .take(SHOWN)
            .map(|k| text::excerpt(k, EXCERPT_CHARS))
            .collect();
        if known.len() > SHOWN {
            all.push(format!("and {} more", known.len() - SHOWN));
        }
        Err(Error::Refused {
            kind: crate::error::ErrorKind::NotFound,
            path: None,
            message: format!(
                "no target '{}'{}; the targets are: {} (found in {})",
                text::excerpt(name, EXCERPT_CHARS),
                suggestion
                    .map(|s| format!(" (did you mean '{s}'?)"))
                    .unwrap_or_default(),
                if all.is_empty() {
                    "none".to_owned()
                } else {
                    all.join(", ")
                },
                self.dirs
                    .iter()
                    .map(|d| text::path(d))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
    }

    /// Every target name found, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .dirs
            .iter()
            .filter_map(|d| std::fs::read_dir(d).ok())
            .flatten()
            .filter_map(|e| {
                let name = e.ok()?.file_name().into_string().ok()?;
                name.strip_suffix(".yaml").map(str::to_owned)
            })
            .filter(|n| !n.starts_with('.'))
            .collect();
        out.sort();
        out.dedup();
        out
    }
}
