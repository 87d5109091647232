//! `verify` and `audit`, as data: the project's locked sources checked
//! against the lock, and then each directory of the project's targets
//! against what an export would write there, on any clone with no
//! per-machine state. The command line prints the report, as text or as
//! the document docs/json.md gives; another front end gets the same value.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};

use super::{Context, Scope};
use crate::error::{Diagnostic, Error, ErrorKind, Result};
use crate::export::{DirCheck, ExportOptions};
use crate::spec::FoundSpec;
use crate::upstream::{self, Paths, verify::Verification};

/// How to audit.
#[derive(Default)]
pub struct AuditOptions<'a> {
    /// Worker threads for each directory's check; 0: one per core.
    pub jobs: usize,
    /// Called with a directory before waiting for an export into it to
    /// finish.
    pub on_wait: Option<&'a (dyn Fn(&Path) + Sync + 'static)>,
}

/// What `audit` found ([`Context::audit`]): `{"up_to_date", "sources",
/// "checks"}` (docs/json.md).
#[derive(Debug, Clone, Serialize)]
pub struct Audit {
    /// Every directory holds what the lock and the layers give.
    pub up_to_date: bool,
    /// The sources verified: `sources`.
    #[serde(flatten)]
    pub verified: Verification,
    /// Each directory of the project's targets, once, in the targets
    /// file's order.
    pub checks: Vec<AuditCheck>,
    /// Where the spec was found, and whether it is a stale installed copy
    /// (for a front end that warns about it).
    #[serde(skip)]
    pub spec: FoundSpec,
    /// What the layers warn about (a layer path that is not a directory).
    #[serde(skip)]
    pub warnings: Vec<Diagnostic>,
}

impl Audit {
    /// How many directories differ from what the lock and the layers give.
    pub fn differ(&self) -> usize {
        self.checks.iter().filter(|c| !c.up_to_date()).count()
    }
}

/// One directory of the project's targets, as an audit found it.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum AuditCheck {
    /// Checked as `export --check` checks it.
    Checked(DirCheck),
    /// Never exported: it does not exist.
    Missing(NeverExported),
}

impl AuditCheck {
    /// Nothing differs.
    pub fn up_to_date(&self) -> bool {
        match self {
            AuditCheck::Checked(c) => c.up_to_date,
            AuditCheck::Missing(_) => false,
        }
    }
}

/// A directory of the project's targets that was never exported:
/// `{"dir", "target", "shared_with", "up_to_date": false, "missing": true,
/// "drift": []}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeverExported {
    /// The directory, as a person standing in the working directory would
    /// type it.
    pub dir: PathBuf,
    /// The target it is written for.
    pub target: String,
    /// The other targets reading it.
    pub shared_with: Vec<String>,
}

impl Serialize for NeverExported {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut doc = s.serialize_struct("NeverExported", 6)?;
        doc.serialize_field("dir", &self.dir.display().to_string())?;
        doc.serialize_field("target", &self.target)?;
        doc.serialize_field("shared_with", &self.shared_with)?;
        doc.serialize_field("up_to_date", &false)?;
        doc.serialize_field("missing", &true)?;
        doc.serialize_field("drift", &[(); 0])?;
        doc.end()
    }
}

impl Context {
    /// `verify`: every source of the project's sources file, as its lock
    /// locks it, from the cache or fetched again at the locked commit (and
    /// then kept in the cache); a file unlike the lock, or a skill the
    /// local base layer has too, is an error. No sources file: nothing to
    /// verify.
    pub fn verify_sources(&self) -> Result<Verification> {
        let layers = self.layers_without_sources()?;
        let paths = Paths::of(&layers);
        let Some((file, lock)) = upstream::read_project(&paths, &self.policy())? else {
            return Ok(Verification {
                sources: Vec::new(),
                paths,
                has_sources: false,
            });
        };
        let cache = self.require_cache()?;
        let local = upstream::local_base(&layers)?;
        let sources = upstream::verify::verify(&file, &lock, &cache, &local, &paths)?;
        Ok(Verification {
            sources,
            paths,
            has_sources: true,
        })
    }

    /// `audit`: the sources verified ([`Context::verify_sources`]), then
    /// each directory of the project's targets (its `targets.toml`, at
    /// the project's places, each once with every target reading it)
    /// checked as `export --check` checks it, what no layer provides and
    /// no record lists included. Writes nothing but the cache. A project
    /// with no targets file is an error naming it.
    pub fn audit(&self, options: &AuditOptions) -> Result<Audit> {
        // The sources first: what the checks compare with comes from them.
        let verified = self.verify_sources()?;
        let layers = self.layers_without_sources()?;
        let Some((file, names)) = self.project_targets(&layers)? else {
            return Err(Error::Refused {
                kind: ErrorKind::NotFound,
                path: None,
                message: format!(
                    "the project names no targets to audit: {} does not exist; `bernstein \
                     skills sync --target NAME` exports to a target and records it there",
                    crate::text::path(&self.paths(&layers).targets)
                ),
            });
        };
        let (spec, found) = self.load_found_spec()?;
        let targets = self.targets_in_file(&spec, &file, &names)?;
        let places = self.target_places_in_file(&targets, &file, Scope::Project)?;
        let layers = self.layers()?;
        let warnings = layers.diagnostics();
        let skills = self.skills_with(spec, layers)?;
        let trust = self.trust_store();
        let state_dir = self.state_dir();
        let mut checks = Vec::new();
        for place in &places {
            let dir = self.shown(&place.dir);
            let target = place.target();
            let (skills, in_repository) = self.for_export(&skills, &dir);
            let export = ExportOptions {
                in_repository,
                extra: true,
                state_dir: state_dir.as_deref(),
                jobs: match options.jobs {
                    0 => crate::par::default_jobs(),
                    n => n,
                },
                on_wait: options.on_wait,
                target: Some(&target),
                trust: Some(&trust),
                ..ExportOptions::default()
            };
            checks.push(match skills.check_export(&dir, &export) {
                Ok(check) => AuditCheck::Checked(check),
                Err(Error::NotExported { .. }) => AuditCheck::Missing(NeverExported {
                    dir,
                    shared_with: target.shared_with().to_vec(),
                    target: target.name,
                }),
                Err(e) => return Err(e),
            });
        }
        let mut audit = Audit {
            up_to_date: true,
            verified,
            checks,
            spec: found,
            warnings,
        };
        audit.up_to_date = audit.differ() == 0;
        Ok(audit)
    }
}
