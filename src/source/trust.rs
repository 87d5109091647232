//! Trusting a project's own layer before it reaches outside the project.
//!
//! A project-local team layer (`.bernstein/skills/` in a git work tree)
//! arrives with every clone: whoever can land a commit in the repository
//! writes it. Inside the repository that is the point, and every command
//! may read it. But an export into a place outside the repository — the
//! person's `~/.claude/skills`, which every later agent session loads in
//! every project — would let a cloned repository rewrite the person's
//! global skills, or switch them off. So such an export takes a
//! project-local layer only when the person has said they trust it, the
//! way git's `safe.directory`, direnv's `allow` and mise's `trust` work:
//!
//! - `bernstein skills trust`, run in the project, records a [`Snapshot`]
//!   of the layer (the SHA-256 of every file in it) in a trust file kept
//!   outside every repository ([`TrustStore`], under `$XDG_STATE_HOME`;
//!   a store that lies inside the project it would judge, as when the
//!   home directory is that project's work tree, is refused);
//! - an export outside the project compares the layer with that snapshot
//!   and refuses, before anything is written or removed, when the project
//!   was never trusted or when any file was added, removed or changed
//!   since: the error lists what changed, so the person reviews it before
//!   it takes effect, and trusts it again.
//!
//! Only a layer found from the working directory needs trust; one the
//! person names (a flag, a variable) or the XDG place is their own say.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::confine::{EntryKind, Root};
use super::env::Env;
pub use super::project::Project;
use super::project::ProjectFile;
use crate::beneath::private::PrivateDir;
use crate::digest::Digest;
use crate::error::{Error, ErrorKind, Result};

/// The variable that places the state directory, for the advice of a
/// refusal.
const STATE_VARIABLE: &str = "XDG_STATE_HOME";

/// The trust file's name in the state directory.
pub const TRUST_FILE: &str = "trusted.json";

/// The trust file's format version.
const VERSION: u64 = 1;

/// The largest trust file read: it holds one line per file of each trusted
/// project layer, far below this for any real set of projects.
const MAX_TRUST_BYTES: u64 = 16 << 20;

/// The most files one snapshot takes: a layer with more is refused rather
/// than hashed without end.
const MAX_FILES: usize = 100_000;

/// The most entries (files, directories, anything) one snapshot visits.
const MAX_ENTRIES: usize = 200_000;

/// The deepest directory a snapshot walks into.
const MAX_DEPTH: usize = 16;

/// The largest file a snapshot hashes: a skill's files together are capped
/// at 64 MiB ([`crate::source::files::FileLimits`]), so one file is too.
const MAX_FILE_BYTES: u64 = 64 << 20;

/// What a layer holds: the SHA-256 of every file in it, by its path
/// relative to the layer (`/`-separated). Hidden entries are no part of a
/// layer and are not taken.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Path → SHA-256 (stored as bare hexadecimal).
    pub files: BTreeMap<String, Digest>,
}

/// One difference between a trusted snapshot and the layer now.
pub use crate::error::FileChange as Change;

impl Snapshot {
    /// Hashes every file beneath `root`, each read confined beneath it
    /// (symlinks that stay inside are followed, as every layer read
    /// does). A file that cannot be read, or a layer over the caps, is an
    /// error naming it: a snapshot that skipped it would trust what no one
    /// saw.
    pub fn of(root: &Root) -> Result<Snapshot> {
        let mut snapshot = Snapshot::default();
        let mut entries = 0usize;
        let mut stack: Vec<(PathBuf, usize)> = vec![(PathBuf::new(), 0)];
        let refuse = |rel: &Path, kind: ErrorKind, message: String| Error::Refused {
            kind,
            path: Some(root.path().join(rel)),
            message,
        };
        let refused = |rel: &Path, r: super::confine::Refusal| {
            refuse(
                rel,
                r.error_kind(),
                r.describe(&root.path().join(rel), "team layer"),
            )
        };
        let too_many = || {
            refuse(
                Path::new(""),
                ErrorKind::Invalid,
                format!("the layer holds more than {MAX_ENTRIES} entries"),
            )
        };
        while let Some((dir, depth)) = stack.pop() {
            // Listed at most one entry past the cap.
            let mut budget = (MAX_ENTRIES - entries).saturating_add(1);
            let (_, list) = match root.entries(&dir, &mut budget) {
                Ok(listed) => listed,
                Err(r) if r.is_over_budget() => return Err(too_many()),
                Err(r) => return Err(refused(&dir, r)),
            };
            for entry in list {
                entries += 1;
                if entries > MAX_ENTRIES {
                    return Err(too_many());
                }
                let Some(name) = entry.name.to_str() else {
                    // Never a skill nor one of its files (see `layers`).
                    continue;
                };
                if name.starts_with('.') {
                    continue;
                }
                let rel = dir.join(name);
                let kind = if entry.is_symlink {
                    match root.metadata(&rel) {
                        Ok(meta) => meta.kind,
                        Err(r) if r.is_not_found() => continue,
                        Err(r) => return Err(refused(&rel, r)),
                    }
                } else if entry.is_dir {
                    EntryKind::Dir
                } else {
                    EntryKind::File
                };
                match kind {
                    EntryKind::Dir if depth + 1 > MAX_DEPTH => {
                        return Err(refuse(
                            &rel,
                            ErrorKind::Invalid,
                            format!("directories nest more than {MAX_DEPTH} levels deep"),
                        ));
                    }
                    EntryKind::Dir => stack.push((rel, depth + 1)),
                    _ => {
                        let bytes = root
                            .read(&rel, MAX_FILE_BYTES)
                            .map_err(|r| refused(&rel, r))?;
                        if snapshot.files.len() >= MAX_FILES {
                            return Err(refuse(
                                Path::new(""),
                                ErrorKind::Invalid,
                                format!("the layer holds more than {MAX_FILES} files"),
                            ));
                        }
                        let key = rel
                            .components()
                            .map(|c| c.as_os_str().to_string_lossy())
                            .collect::<Vec<_>>()
                            .join("/");
                        snapshot.files.insert(key, Digest::of(&bytes));
                    }
                }
            }
        }
        Ok(snapshot)
    }

    /// What `project` holds that a command reads: its layer (`root`, when
    /// it is a directory that was opened) with [`Snapshot::of`], and every
    /// project file beside it ([`ProjectFile::BESIDE_LAYER`], as
    /// `../sources.lock`), read capped. A symbolic link or other
    /// non-regular file in a project file's place is an error naming it.
    /// The project files are trusted whether or not the layer exists: a
    /// project that takes skills from upstream and customises none has
    /// only them, and they decide what an export writes.
    /// Errors name the files as seen from `cwd`.
    pub fn of_project(
        project: &Project,
        root: Option<&Root>,
        cwd: Option<&Path>,
    ) -> Result<Snapshot> {
        let mut snapshot = match root {
            Some(root) => Snapshot::of(root)?,
            None => Snapshot::default(),
        };
        let shown = |path: &Path| super::project::relative_to(path, cwd);
        let not_regular = |path: &Path| Error::Refused {
            kind: ErrorKind::Unsafe,
            path: Some(shown(path)),
            message: "not a regular file (a symbolic link, a directory or \
                      unreadable); refused"
                .into(),
        };
        for f in ProjectFile::BESIDE_LAYER {
            let path = project.file(f);
            match crate::beneath::kind_of(&path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Ok(EntryKind::File) => {}
                _ => return Err(not_regular(&path)),
            }
            let bytes = super::read_bounded(&path, MAX_FILE_BYTES).map_err(|r| Error::Refused {
                kind: r.error_kind(),
                path: Some(shown(&path)),
                message: r.describe(&shown(&path), "project"),
            })?;
            snapshot
                .files
                .insert(format!("../{}", f.name()), Digest::of(&bytes));
        }
        Ok(snapshot)
    }

    /// What changed from `self` (trusted) to `now`, sorted by file.
    pub fn changes_to(&self, now: &Snapshot) -> Vec<Change> {
        let mut out = Vec::new();
        for (file, digest) in &now.files {
            match self.files.get(file) {
                None => out.push(Change::Added(file.clone())),
                Some(d) if d != digest => out.push(Change::Changed(file.clone())),
                Some(_) => {}
            }
        }
        for file in self.files.keys() {
            if !now.files.contains_key(file) {
                out.push(Change::Removed(file.clone()));
            }
        }
        out.sort_by(|a, b| a.file().cmp(b.file()));
        out
    }
}

/// Whether a project's layer is trusted as it is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustState {
    /// Trusted, and unchanged since.
    Trusted,
    /// Never trusted (or trust was revoked).
    Untrusted,
    /// Trusted once; these files changed since.
    Changed(Vec<Change>),
}

/// The trust file as written: sorted, no timestamps.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Stored {
    version: u64,
    /// Layer directory (absolute) → its trusted snapshot.
    projects: BTreeMap<String, Snapshot>,
}

/// Where the person's trust is kept: `$XDG_STATE_HOME/bernstein/skills/`
/// [`TRUST_FILE`] (by default `~/.local/state/...`), outside every
/// repository. With neither variable set there is nowhere to keep it, and
/// nothing is trusted.
#[derive(Debug, Clone)]
pub struct TrustStore {
    file: Option<PathBuf>,
}

impl TrustStore {
    /// The store an environment points at.
    pub fn of(env: &Env) -> TrustStore {
        TrustStore {
            file: env.state_dir().map(|d| d.join(TRUST_FILE)),
        }
    }

    /// A store kept in `file` (for tests and embedders).
    pub fn at(file: PathBuf) -> TrustStore {
        TrustStore { file: Some(file) }
    }

    /// The trust file, if there is a place for it.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// The directory the trust file is kept in, opened and checked as
    /// the person's own (`beneath::private`), made when `create`; `None`
    /// when it does not exist.
    fn dir(&self, create: bool) -> Result<Option<(PrivateDir, &OsStr)>> {
        let Some(file) = &self.file else {
            return Ok(None);
        };
        let (Some(dir), Some(name)) = (file.parent(), file.file_name()) else {
            return Ok(None);
        };
        let dir =
            PrivateDir::open(dir, create).map_err(|r| Error::not_private(r, STATE_VARIABLE))?;
        Ok(dir.map(|d| (d, name)))
    }

    fn load(&self) -> Result<Stored> {
        let Some((dir, name)) = self.dir(false)? else {
            return Ok(Stored::default());
        };
        let file = dir.path().join(name);
        let bytes = match dir.read(name, MAX_TRUST_BYTES) {
            Ok(Some(b)) if b.len() as u64 > MAX_TRUST_BYTES => {
                return Err(Error::Refused {
                    kind: ErrorKind::Invalid,
                    path: Some(file),
                    message: format!(
                        "the trust file is over {} MiB; remove it and trust each project again",
                        MAX_TRUST_BYTES >> 20
                    ),
                });
            }
            Ok(Some(b)) => b,
            Ok(None) => return Ok(Stored::default()),
            Err(r) => return Err(Error::not_private(r, STATE_VARIABLE)),
        };
        let stored: Stored = serde_json::from_slice(&bytes).map_err(|e| Error::Refused {
            kind: ErrorKind::Invalid,
            path: Some(file.clone()),
            message: format!(
                "cannot read the trust file: {e}; remove it and trust each project again"
            ),
        })?;
        if stored.version != VERSION {
            return Err(Error::Refused {
                kind: ErrorKind::Invalid,
                path: Some(file.clone()),
                message: format!(
                    "trust file version {} is not {VERSION}; remove it and trust each project again",
                    stored.version
                ),
            });
        }
        Ok(stored)
    }

    fn save(&self, stored: &Stored) -> Result<()> {
        let Some((dir, name)) = self.dir(true)? else {
            return Err(no_place());
        };
        let mut bytes = serde_json::to_vec_pretty(stored).expect("plain data serializes");
        bytes.push(b'\n');
        // A new file beside it, then a rename: a reader never sees half.
        dir.write(&name.to_string_lossy(), |w| w.write_all(&bytes))
            .map_err(|source| Error::Write {
                path: dir.path().join(name),
                source,
            })
    }

    /// Refuses a store that lies inside `project` (the home directory is
    /// its root or inside it, or `XDG_STATE_HOME` points into it): whoever
    /// writes the project could ship the trust that judges it, so none is
    /// taken from there, or written there.
    fn outside(&self, project: &Project) -> Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        if !super::project::inside(&project.root, file, &project.root) {
            return Ok(());
        }
        Err(Error::Refused {
            kind: crate::error::ErrorKind::Unsafe,
            path: Some(file.clone()),
            message: format!(
                "the trust store lies inside the project at {}, whose files a clone or a pull may write, so no trust is taken from there or kept there; set {STATE_VARIABLE} to a directory outside every repository (`export {STATE_VARIABLE}=...`), then run `bernstein skills trust` here",
                crate::text::path(&project.root)
            ),
        })
    }

    /// Whether `project`'s layer, as `now` holds it, is trusted.
    pub fn state(&self, project: &Project, now: &Snapshot) -> Result<TrustState> {
        self.outside(project)?;
        let stored = self.load()?;
        Ok(match stored.projects.get(&key(project)) {
            None => TrustState::Untrusted,
            Some(trusted) => {
                let changes = trusted.changes_to(now);
                if changes.is_empty() {
                    TrustState::Trusted
                } else {
                    TrustState::Changed(changes)
                }
            }
        })
    }

    /// Trusts `project`'s layer as `now` holds it; returns the state it was
    /// in before (what changed since the last trust).
    pub fn trust(&self, project: &Project, now: Snapshot) -> Result<TrustState> {
        if self.file.is_none() {
            return Err(no_place());
        }
        self.outside(project)?;
        let mut stored = self.load()?;
        stored.version = VERSION;
        let before = match stored.projects.get(&key(project)) {
            None => TrustState::Untrusted,
            Some(old) => match old.changes_to(&now) {
                c if c.is_empty() => TrustState::Trusted,
                c => TrustState::Changed(c),
            },
        };
        stored.projects.insert(key(project), now);
        self.save(&stored)?;
        Ok(before)
    }

    /// Forgets `project`; was it trusted?
    pub fn revoke(&self, project: &Project) -> Result<bool> {
        let mut stored = self.load()?;
        let was = stored.projects.remove(&key(project)).is_some();
        if was {
            self.save(&stored)?;
        }
        Ok(was)
    }

    /// Every trusted layer directory, sorted.
    pub fn list(&self) -> Result<Vec<PathBuf>> {
        Ok(self
            .load()?
            .projects
            .into_keys()
            .map(PathBuf::from)
            .collect())
    }
}

fn key(project: &Project) -> String {
    project.layer.display().to_string()
}

fn no_place() -> Error {
    Error::Refused {
        kind: ErrorKind::NoPlace,
        path: None,
        message: "nowhere to keep trust: neither XDG_STATE_HOME nor HOME is set".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(files: &[(&str, &str)]) -> Snapshot {
        Snapshot {
            files: files
                .iter()
                .map(|(f, d)| ((*f).to_owned(), Digest::of(d)))
                .collect(),
        }
    }

    #[test]
    fn changes_are_sorted_by_file() {
        let old = snap(&[("a.yaml", "1"), ("b/SKILL.md", "2"), ("c.yaml", "3")]);
        let now = snap(&[("a.yaml", "1"), ("b/SKILL.md", "9"), ("d.yaml", "4")]);
        assert_eq!(
            old.changes_to(&now),
            vec![
                Change::Changed("b/SKILL.md".into()),
                Change::Removed("c.yaml".into()),
                Change::Added("d.yaml".into()),
            ]
        );
        assert!(now.changes_to(&now).is_empty());
    }
}
