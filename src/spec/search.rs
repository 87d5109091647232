//! Where the spec is looked for, and which copy is used.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Where the spec is looked for, in order of precedence:
///
/// 1. an explicit path (`--spec`);
/// 2. the `BERNSTEIN_SKILLS_SPEC` variable;
/// 3. the copy the user installed beside the base layer
///    (`$XDG_DATA_HOME/bernstein/skills/mergespec.yaml`, written by
///    `bernstein skills spec --install`);
/// 4. the copy installed beside the binary, at the conventional place for a
///    prefix's data (`PREFIX/share/bernstein/skills/mergespec.yaml` for
///    `PREFIX/bin/bernstein`: what a wheel or a distribution's package
///    installs with it);
/// 5. for a development build run from its source tree only, that tree's
///    `spec/mergespec.yaml`.
///
/// A person's own choice (1, 2) comes before what was installed for them;
/// what they installed themselves (3) before what came with the binary (4),
/// so a copy they keep on purpose is not replaced by an upgrade.
///
/// The fields are the inputs, not the process's environment, so the order
/// is tested with plain paths.
#[derive(Debug, Clone, Default)]
pub struct SpecSearch {
    /// `--spec PATH`.
    pub explicit: Option<PathBuf>,
    /// `$BERNSTEIN_SKILLS_SPEC` (empty counts as unset).
    pub env_var: Option<PathBuf>,
    /// `$XDG_DATA_HOME/bernstein/skills` (`None` when neither it nor
    /// `$HOME` is an absolute path: never below the working directory).
    pub data_dir: Option<PathBuf>,
    /// `PREFIX/share/bernstein/skills` for the binary's `PREFIX/bin`
    /// ([`SpecSearch::beside_executable`]; `None` when the executable's
    /// path is unknown).
    pub beside_binary: Option<PathBuf>,
    /// The source tree's spec, for a development build (`None` otherwise).
    pub source_tree: Option<PathBuf>,
}

/// The name of the installed spec inside the data directory.
pub const INSTALLED_NAME: &str = "mergespec.yaml";

/// Where a prefix keeps the shipped spec and targets, relative to the
/// prefix (`/usr`, `/usr/local`, a virtual environment): the conventional
/// place for a program's installed data.
pub(crate) const SHARE_DIR: &str = "share/bernstein/skills";

/// Which place of the [`SpecSearch`] the spec in use came from, in order of
/// precedence (an earlier variant wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SpecSource {
    /// `--spec PATH`.
    Explicit,
    /// `$BERNSTEIN_SKILLS_SPEC`.
    EnvVar,
    /// The user's copy, `$XDG_DATA_HOME/bernstein/skills/mergespec.yaml`.
    Installed,
    /// The copy installed with the binary, `PREFIX/share/bernstein/skills`.
    BesideBinary,
    /// The source tree of a development build.
    SourceTree,
}

impl fmt::Display for SpecSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SpecSource::Explicit => "--spec",
            SpecSource::EnvVar => "$BERNSTEIN_SKILLS_SPEC",
            SpecSource::Installed => {
                "the installed copy (written by 'bernstein skills spec --install')"
            }
            SpecSource::BesideBinary => "shipped beside the binary",
            SpecSource::SourceTree => "the source tree of this development build",
        })
    }
}

/// The spec a [`SpecSearch`] chose, where it came from, and why the places
/// before it were passed over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundSpec {
    /// The spec file.
    pub path: PathBuf,
    /// Which place it is.
    pub source: SpecSource,
    /// Each place of higher precedence, with why it was not used
    /// (`--spec (not given)`), in order, escaped for printing.
    pub passed_over: Vec<String>,
    /// The person's installed copy ([`SpecSource::Installed`]) is not the
    /// spec this release ships ([`SHIPPED`]): an earlier release's, or
    /// edited; the merge then follows rules that this release's help,
    /// targets and schemas do not describe. Set by whoever read the file
    /// ([`crate::context::Context::load_found_spec`]).
    pub stale: bool,
}

/// The spec this release ships, as bytes: what `spec --install` writes
/// and an installed copy is compared with; never used for merging (the
/// spec is data, read from a file).
pub const SHIPPED: &[u8] = include_bytes!("../../spec/mergespec.yaml");

impl SpecSearch {
    /// The installed copy's path, if there is a data directory.
    pub fn installed(&self) -> Option<PathBuf> {
        self.data_dir.as_ref().map(|d| d.join(INSTALLED_NAME))
    }

    /// The directory of the spec and targets installed with the binary
    /// `exe` (its real path: a symbolic link to it says nothing about where
    /// it was installed): `PREFIX/share/bernstein/skills` for
    /// `PREFIX/bin/bernstein`.
    pub fn beside_executable(exe: &Path) -> Option<PathBuf> {
        Some(exe.parent()?.parent()?.join(SHARE_DIR))
    }

    /// The spec to use. An explicit path or the variable is used as given
    /// (an error then names that file); the installed copies and the source
    /// tree only if they exist. When none is found, one error lists every
    /// place searched, in order, and the fix.
    pub fn resolve(&self) -> Result<FoundSpec> {
        let mut passed_over = Vec::new();
        let found = |path: &Path, source, passed_over: Vec<String>| {
            Ok(FoundSpec {
                path: path.to_path_buf(),
                source,
                passed_over,
                stale: false,
            })
        };
        match &self.explicit {
            Some(p) => return found(p, SpecSource::Explicit, passed_over),
            None => passed_over.push("--spec (not given)".to_owned()),
        }
        match self.env_var.as_ref().filter(|p| !p.as_os_str().is_empty()) {
            Some(p) => return found(p, SpecSource::EnvVar, passed_over),
            None => passed_over.push("$BERNSTEIN_SKILLS_SPEC (not set)".to_owned()),
        }
        match self.installed() {
            Some(installed) if installed.is_file() => {
                return found(&installed, SpecSource::Installed, passed_over);
            }
            Some(installed) => {
                passed_over.push(format!("{} (no such file)", crate::text::path(&installed)))
            }
            None => passed_over.push(
                "$XDG_DATA_HOME/bernstein/skills (neither it nor $HOME is set to an absolute path)"
                    .to_owned(),
            ),
        }
        if let Some(dir) = &self.beside_binary {
            let beside = dir.join(INSTALLED_NAME);
            if beside.is_file() {
                return found(&beside, SpecSource::BesideBinary, passed_over);
            }
            passed_over.push(format!(
                "{} (beside the binary: no such file)",
                crate::text::path(&beside)
            ));
        }
        if let Some(src) = &self.source_tree {
            if src.is_file() {
                return found(src, SpecSource::SourceTree, passed_over);
            }
            passed_over.push(format!(
                "{} (the source tree of this development build: no such file)",
                crate::text::path(src)
            ));
        }
        Err(Error::Refused {
            kind: crate::error::ErrorKind::NotFound,
            path: None,
            message: format!(
                "no merge spec found; searched {}; run 'bernstein skills spec --install', or set BERNSTEIN_SKILLS_SPEC",
                passed_over.join(", ")
            ),
        })
    }
}
