//! Upstream sources: skill collections in git repositories that feed the
//! base layer, pinned by a lock and kept in a verified cache
//! (docs/upstream.md).
//!
//! - [`sources`]: `sources.toml`, what the team asked for (a repository,
//!   a ref, a subdirectory, some of its skills), committed beside the team
//!   layer directory.
//! - [`lock`]: `sources.lock`, what that resolved to: per source the ref
//!   asked for, the commit, and the SHA-256 of every file of every skill
//!   taken. Deterministic, sorted, no timestamps.
//! - [`git`]: fetching one commit with the system `git`, shallow, in a
//!   repository of our own with hooks, system configuration and
//!   transports other than https, ssh and file turned off; the tree is
//!   read as data (`ls-tree`, `cat-file`), never checked out, so nothing
//!   the repository holds is ever a symlink or a hook on this machine.
//! - [`cache`]: the files of each locked source under
//!   `$XDG_CACHE_HOME/bernstein/skills/sources/`, checked against the lock
//!   every time they are read ([`attach`]).
//! - [`add`] and [`update`]: the two commands that fetch and lock, each
//!   as a plan (fetched, checked as a layer, reviewed, decided; nothing
//!   written) and a write step the front end takes when it accepts;
//!   [`import`] reads another installer's `skills-lock.json` for `add`;
//!   [`verify`] checks the cache against the lock.
//!
//! Every name and byte from upstream is attacker-written: a skill's name is
//! checked as a layer's is ([`crate::layer::check_name`]), hidden entries
//! are not taken, symlinks and submodules are refused, and the layers' caps
//! on files apply ([`crate::source::files::FileLimits`]).

pub mod add;
pub mod cache;
pub mod check;
pub mod git;
pub mod history;
pub mod import;
pub mod location;
pub mod lock;
pub mod marketplace;
pub mod render;
pub mod report;
pub mod review;
pub mod sources;
pub mod update;
pub mod verify;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::digest::Digest;
use crate::error::{Error, ErrorKind, Result};
use crate::layer::Layer;
use crate::source::Layers;

pub use cache::Cache;
pub use lock::{Lock, LockedSource};
pub use sources::{Policy, SourceSpec, SourcesFile};

/// The file that lists the sources, in the directory that holds the team
/// layer's directory (`.bernstein/sources.toml` beside
/// `.bernstein/skills/`).
pub const SOURCES_FILE: &str = "sources.toml";
/// The lock, beside [`SOURCES_FILE`].
pub const LOCK_FILE: &str = "sources.lock";

/// Where a project's sources file, lock and targets file are: in the
/// project's `.bernstein/` ([`crate::source::project`]) when the team
/// layer is the project's own, else beside the team layer's directory (one
/// a flag, a variable or the XDG default names: `DIR/sources.toml` for
/// `DIR/team`).
///
/// The paths are as a person standing in the working directory would type
/// them (`.bernstein/sources.lock`, `../.bernstein/sources.lock`); files are
/// opened at [`Paths::io`], against the working directory the layers were
/// chosen in, so a front end that is not running there (Python's
/// `Project(path)`) reads the same files.
#[derive(Debug, Clone)]
pub struct Paths {
    /// `sources.toml`.
    pub sources: PathBuf,
    /// `sources.lock`.
    pub lock: PathBuf,
    /// `targets.toml`.
    pub targets: PathBuf,
    /// The working directory the paths are relative to.
    cwd: Option<PathBuf>,
}

impl Paths {
    /// The sources file, lock and targets file for these layers.
    pub fn of(layers: &Layers) -> Paths {
        if let Some((project, cwd)) = layers.project() {
            return Paths::of_project(project, Some(cwd));
        }
        let team = layers
            .dirs()
            .iter()
            .find(|d| d.layer == Layer::Team)
            .map(|d| d.path.as_path())
            .unwrap_or(Path::new(".bernstein/skills"));
        let dir = team
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        Paths {
            cwd: layers.cwd().map(Path::to_path_buf),
            ..Paths::in_dir(dir)
        }
    }

    /// The files in `dir` (the person's own configuration directory, for
    /// `add --global`).
    pub fn in_dir(dir: &Path) -> Paths {
        Paths {
            sources: dir.join(SOURCES_FILE),
            lock: dir.join(LOCK_FILE),
            targets: dir.join(TARGETS_FILE),
            cwd: None,
        }
    }

    /// The files of `project`, shown relative to `cwd`.
    pub fn of_project(project: &crate::source::Project, cwd: Option<&Path>) -> Paths {
        use crate::source::ProjectFile;
        let shown = |f| crate::source::project::relative_to(&project.file(f), cwd);
        Paths {
            sources: shown(ProjectFile::Sources),
            lock: shown(ProjectFile::Lock),
            targets: shown(ProjectFile::Targets),
            cwd: cwd.map(Path::to_path_buf),
        }
    }

    /// Where `path` (one of these) is opened: against the working
    /// directory the paths are relative to.
    pub fn io(&self, path: &Path) -> PathBuf {
        match &self.cwd {
            Some(cwd) if path.is_relative() => cwd.join(path),
            _ => path.to_path_buf(),
        }
    }

    /// Takes the lock that serialises the commands writing these files
    /// (`add`, `update`: two at once would each write a lock the other did
    /// not see) in `cache`, or refuses when another holds it; held until
    /// the guard is dropped ([`Cache::lock`]).
    pub fn hold(&self, cache: &Cache) -> Result<cache::CacheLock> {
        let io = self.io(&self.lock);
        cache.lock(&io).map_err(|e| e.shown_as(&io, &self.lock))
    }

    /// `read(io_path)`, its errors naming `path` as the person sees it.
    pub fn read<T>(&self, path: &Path, read: impl FnOnce(&Path) -> Result<T>) -> Result<T> {
        let io = self.io(path);
        read(&io).map_err(|e| e.shown_as(&io, path))
    }

    /// `write(io_path)`, its errors naming `path` as the person sees it.
    pub fn write<T>(&self, path: &Path, write: impl FnOnce(&Path) -> Result<T>) -> Result<T> {
        self.read(path, write)
    }
}

/// A refusal of `kind` about one file: `Error::Refused` at `path`.
pub(crate) fn refused(kind: ErrorKind, path: &Path, message: impl Into<String>) -> Error {
    Error::Refused {
        kind,
        path: Some(PathBuf::from(crate::text::path(path))),
        message: message.into(),
    }
}

/// The skill a locked file belongs to: its first path component.
pub fn skill_of(file: &str) -> &str {
    file.split('/').next().unwrap_or(file)
}

/// The sources and lock of these layers, read and checked against each
/// other: `None` when neither file exists. Every source of the sources file
/// must be locked with the same repository and subdirectory, and the lock
/// may name no other source.
pub fn read_project(paths: &Paths, policy: &Policy) -> Result<Option<(SourcesFile, Lock)>> {
    let sources = paths.read(&paths.sources, |p| SourcesFile::read(p, policy))?;
    let lock = paths.read(&paths.lock, Lock::read)?;
    let (sources, lock) = match (sources, lock) {
        (None, None) => return Ok(None),
        (None, Some(_)) => {
            return Err(refused(
                ErrorKind::Stale,
                &paths.lock,
                format!(
                    "there is a lock but no {}; restore it, or remove the lock",
                    crate::text::path(&paths.sources)
                ),
            ));
        }
        (Some(s), None) => (s, Lock::default()),
        (Some(s), Some(l)) => (s, l),
    };
    check_locked(&sources, &lock, paths)?;
    Ok(Some((sources, lock)))
}

/// Does the lock match the sources file?
fn check_locked(sources: &SourcesFile, lock: &Lock, paths: &Paths) -> Result<()> {
    for s in &sources.sources {
        match lock.sources.get(&s.name) {
            None => {
                return Err(refused(
                    ErrorKind::Stale,
                    &paths.lock,
                    format!(
                        "source '{}' of {} is not locked; run `bernstein skills update --yes` to fetch and lock it",
                        crate::text::escape(&s.name),
                        crate::text::path(&paths.sources)
                    ),
                ));
            }
            Some(l) if !update::out_of_step(s, l).is_empty() => {
                return Err(refused(
                    ErrorKind::Stale,
                    &paths.lock,
                    format!(
                        "source '{}' changed in {} since it was locked ({}); run `bernstein skills update --yes` to lock it again",
                        crate::text::escape(&s.name),
                        crate::text::path(&paths.sources),
                        update::out_of_step(s, l).join(", ")
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    let listed: std::collections::BTreeSet<&str> =
        sources.sources.iter().map(|s| s.name.as_str()).collect();
    if let Some(name) = lock.sources.keys().find(|n| !listed.contains(n.as_str())) {
        return Err(refused(
            ErrorKind::Stale,
            &paths.lock,
            format!(
                "the lock names source '{}', which {} no longer lists; run `bernstein skills update --yes` to drop it",
                crate::text::escape(name),
                crate::text::path(&paths.sources)
            ),
        ));
    }
    // Two sources with a skill of the same name: the lock takes each skill
    // from one source only (the sources file's `prefer` decides).
    let mut owner: BTreeMap<&str, &str> = BTreeMap::new();
    for (name, l) in &lock.sources {
        for skill in l.skills_taken() {
            if let Some(other) = owner.insert(skill, name) {
                return Err(refused(
                    ErrorKind::Stale,
                    &paths.lock,
                    format!(
                        "skill '{}' is locked from two sources, '{}' and '{}'; run `bernstein skills update --yes` to lock it again",
                        crate::text::escape(skill),
                        crate::text::escape(other),
                        crate::text::escape(name)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The layers with a base layer for every locked source of the project
/// (the sources file and lock beside the team layer, [`Paths::of`]; every
/// source allowed by `policy` and the file's `[allow]`), read
/// from `cache` and verified against the lock as they are read: every file
/// read from a source's entry is hashed and compared with its digest in
/// the lock ([`content_check`]), so that a command pays for the files it
/// reads, not for the whole collection. What cannot be used (a broken
/// sources file or lock, a source missing from the cache, a skill that the
/// local base layer has too) is a refused base layer: every command that
/// reads layers reports it as an error, and nothing of that source is
/// merged; a file that does not match is refused where it is read.
pub fn attach(mut layers: Layers, cache: Option<&Cache>, policy: &Policy) -> Layers {
    let paths = Paths::of(&layers);
    // A project whose `.bernstein` is a symbolic link or not a directory
    // has its layer refused already; nothing is read through it.
    if let Some((project, _)) = layers.project()
        && !crate::beneath::kind_of(&project.dir).is_ok_and(|k| k == crate::beneath::EntryKind::Dir)
    {
        return layers;
    }
    let project = match read_project(&paths, policy) {
        Ok(Some(p)) => p,
        Ok(None) => return layers,
        Err(e) => {
            layers.add_upstream_base(paths.lock.clone(), "sources".into(), Some(e), None);
            return layers;
        }
    };
    let (_, lock) = project;
    // The local base layer's skills, which no source may also have (the
    // team and user layers are not listed for them): a base layer too large
    // to list refuses the sources, as an unreadable lock.
    let local = match layers.names_in(Layer::Base) {
        Ok(local) => local,
        Err(e) => {
            layers.add_upstream_base(paths.lock.clone(), "sources".into(), Some(e), None);
            return layers;
        }
    };
    for (name, locked) in lock.sources {
        let from = format!("{name} at {}", locked.commit);
        let Some(cache) = cache else {
            layers.add_upstream_base(
                paths.lock.clone(),
                from,
                Some(Error::Refused {
                    kind: ErrorKind::NoPlace,
                    path: None,
                    message: "no cache directory: set $XDG_CACHE_HOME or $HOME".into(),
                }),
                None,
            );
            continue;
        };
        let dir = cache.dir_of(&name, &locked);
        let problem = locked
            .skills_taken()
            .into_iter()
            .find(|s| local.contains(*s))
            .map(|skill| Error::Refused {
                kind: ErrorKind::Conflict,
                path: None,
                message: format!(
                    "skill '{}' is in the local base layer and in source '{}'; remove one of them",
                    crate::text::escape(skill),
                    crate::text::escape(&name)
                ),
            });
        for skill in &locked.removed {
            layers.note_removed_upstream(skill, &name);
        }
        let check = content_check(dir.clone(), locked);
        layers.add_upstream_base(dir, from, problem, Some(check));
    }
    layers
}

/// The check of every file read from a source's cache entry `dir`: it
/// must be one the lock names, with the lock's digest; and of every file a
/// listing meets there: one the lock names, with the lock's execute bit.
pub fn content_check(dir: PathBuf, locked: LockedSource) -> crate::source::ContentCheck {
    let files = std::sync::Arc::new(locked.files);
    let executable: std::sync::Arc<std::collections::BTreeSet<String>> =
        std::sync::Arc::new(locked.executable.into_iter().collect());
    let dir = std::sync::Arc::new(dir);
    let fix = {
        let dir = dir.clone();
        move || {
            format!(
                "remove {} and run `bernstein skills verify` to fetch it again",
                crate::text::path(&dir)
            )
        }
    };
    let not_locked = {
        let fix = fix.clone();
        move || {
            format!(
                "not in sources.lock; nothing of this file is used; {}",
                fix()
            )
        }
    };
    let read = {
        let (files, fix, not_locked) = (files.clone(), fix.clone(), not_locked.clone());
        move |rel: &Path, bytes: &[u8]| {
            let key = rel.to_str().unwrap_or("");
            let Some(want) = files.get(key) else {
                return Err(not_locked());
            };
            let found = Digest::of(bytes);
            if Digest::parse(want) == Some(found) {
                Ok(())
            } else {
                Err(format!(
                    "does not match sources.lock (lock {want}, file {found}); nothing of this file is used; {}",
                    fix()
                ))
            }
        }
    };
    let listed = move |rel: &Path, x: bool| {
        let key = rel.to_str().unwrap_or("");
        if !files.contains_key(key) {
            return Err(not_locked());
        }
        if executable.contains(key) != x {
            return Err(format!(
                "its execute bit is not what sources.lock says; nothing of this file is used; {}",
                fix()
            ));
        }
        Ok(())
    };
    crate::source::ContentCheck {
        read: std::sync::Arc::new(read),
        listed: std::sync::Arc::new(listed),
    }
}

/// The lock's entry for `spec` at the fetched commit, asked for `git_ref`.
pub fn entry(spec: &SourceSpec, git_ref: Option<&str>, fetched: &git::Fetched) -> LockedSource {
    LockedSource {
        url: spec.url.clone(),
        git_ref: git_ref.map(str::to_owned),
        commit: fetched.commit.clone(),
        path: spec.path.clone(),
        plugin: spec.plugin.clone(),
        skills: spec.skills.clone(),
        executable: fetched.executable.iter().cloned().collect(),
        removed: Vec::new(),
        files: fetched.digests(),
    }
}

/// The files of a locked source, as [`git::fetch`] would give them: from
/// the cache, verified, or else fetched at the locked commit and checked
/// against the lock (a file that differs is refused with both digests).
/// `fetched_now` is true when it was fetched.
pub fn load_locked(
    cache: &Cache,
    name: &str,
    locked: &LockedSource,
) -> Result<(git::Fetched, bool)> {
    if cache.has(name, locked) {
        return Ok((from_cache(cache, name, locked)?, false));
    }
    let fetched = fetch_locked(locked)?;
    check_against_lock(&fetched, name, locked)?;
    Ok((fetched, true))
}

/// A locked source's files read from its cache entry, which is verified
/// first: every problem is refused, each where it is.
fn from_cache(cache: &Cache, name: &str, locked: &LockedSource) -> Result<git::Fetched> {
    let problems = cache.problems(name, locked);
    if !problems.is_empty() {
        return Err(Error::Invalid(
            problems
                .iter()
                .map(|p| {
                    crate::error::Diagnostic::error(
                        Some(&p.path()),
                        crate::error::DiagnosticKind::Refused {
                            reason: format!(
                                "source '{}': {}",
                                crate::text::escape(name),
                                p.reason()
                            ),
                        },
                    )
                    .in_layer(Layer::Base)
                })
                .collect(),
        ));
    }
    let dir = cache.dir_of(name, locked);
    let entry = cache
        .open_entry(name, locked)
        .map_err(|message| refused(ErrorKind::Io, &dir, message))?;
    let mut fetched = git::Fetched {
        commit: locked.commit.clone(),
        executable: locked.executable.iter().cloned().collect(),
        ..git::Fetched::default()
    };
    for file in locked.files.keys() {
        let path = dir.join(file);
        let bytes = entry
            .read(file)
            .map_err(|message| refused(ErrorKind::Io, &path, message))?;
        fetched.files.insert(file.clone(), bytes);
    }
    Ok(fetched)
}

/// A locked source fetched at its locked commit, only the skills it took.
/// A lock a pull request changed alone may name a commit its ref never
/// held: refused before anything of it is fetched.
fn fetch_locked(locked: &LockedSource) -> Result<git::Fetched> {
    history::check_in_ref(
        &locked.url,
        locked.git_ref.as_deref(),
        &locked.commit,
        "the lock",
    )?;
    let mut fetched = git::fetch(&git::Want {
        url: &locked.url,
        rev: Some(&locked.commit),
        path: locked.path.as_deref(),
        plugin: locked.plugin.as_deref(),
        skills: locked.skills.as_deref(),
        discover: false,
    })?;
    let taken: std::collections::BTreeSet<String> = locked
        .skills_taken()
        .into_iter()
        .map(str::to_owned)
        .collect();
    fetched.retain_skills(|s| taken.contains(s));
    Ok(fetched)
}

/// Refuses what was fetched unless it is what the lock says: each file
/// with its digest (both digests named when one differs), no file more,
/// the same execute bits.
fn check_against_lock(fetched: &git::Fetched, name: &str, locked: &LockedSource) -> Result<()> {
    let mismatch = |what: String| Error::Refused {
        kind: ErrorKind::Unsafe,
        path: None,
        message: format!(
            "source '{}' at {}: {what}; nothing was written",
            crate::text::escape(name),
            locked.commit,
        ),
    };
    for (file, want) in &locked.files {
        let got = fetched.files.get(file).map(Digest::of);
        if got.is_none() || got != locked.digest(file) {
            let got = got.map_or_else(|| "sha256:(missing)".to_owned(), |d| d.to_string());
            return Err(mismatch(format!(
                "{}: does not match the lock (lock {want}, fetched {got})",
                crate::text::escape(file)
            )));
        }
    }
    if let Some(extra) = fetched
        .files
        .keys()
        .find(|f| !locked.files.contains_key(*f))
    {
        return Err(mismatch(format!(
            "{}: fetched but not in the lock",
            crate::text::escape(extra)
        )));
    }
    let executable: Vec<String> = fetched.executable.iter().cloned().collect();
    if executable != locked.executable {
        return Err(mismatch(
            "the execute bits fetched are not the lock's".to_owned(),
        ));
    }
    Ok(())
}

/// The skills of the local base layer, with their paths: what no source
/// may also have.
///
/// # Errors
///
/// When a layer's directory holds more entries than a layer may
/// ([`Layers::catalog`]).
pub fn local_base(layers: &Layers) -> crate::Result<BTreeMap<String, PathBuf>> {
    Ok(layers
        .catalog()?
        .into_iter()
        .filter_map(|(name, located)| {
            let l = located.into_iter().find(|l| l.layer == Layer::Base)?;
            Some((name, l.path))
        })
        .collect())
}

/// Takes each skill from one source: where two sources have a skill of the
/// same name, the one the sources file's `prefer` names keeps it and the
/// others drop it; without a `prefer` for it, an error naming both. A
/// skill that the local base layer (`local`) has too is an error naming
/// both.
pub fn resolve(
    file: &SourcesFile,
    fetched: &mut BTreeMap<String, git::Fetched>,
    local: &BTreeMap<String, PathBuf>,
    sources_path: &Path,
) -> Result<()> {
    let mut providers: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, f) in fetched.iter() {
        for skill in f.skills() {
            providers
                .entry(skill.to_owned())
                .or_default()
                .push(name.clone());
        }
    }
    for (skill, from) in &providers {
        if let Some(dir) = local.get(skill) {
            return Err(refused(
                ErrorKind::Conflict,
                sources_path,
                format!(
                    "skill '{}' is in source '{}' and in the local base layer ({}); remove it from one of them (take only some skills of the source with `skills = [...]`)",
                    crate::text::escape(skill),
                    crate::text::escape(&from[0]),
                    crate::text::path(dir)
                ),
            ));
        }
        if from.len() < 2 {
            continue;
        }
        let Some(winner) = file.prefer.get(skill).filter(|w| from.contains(w)) else {
            return Err(refused(
                ErrorKind::Conflict,
                sources_path,
                format!(
                    "skill '{}' is in sources '{}' and '{}'; say which wins in this file: [prefer] {} = \"{}\"",
                    crate::text::escape(skill),
                    crate::text::escape(&from[0]),
                    crate::text::escape(&from[1]),
                    crate::text::escape(skill),
                    crate::text::escape(&from[0]),
                ),
            ));
        };
        for loser in from.iter().filter(|n| *n != winner) {
            if let Some(f) = fetched.get_mut(loser) {
                f.retain_skills(|s| s != skill);
            }
        }
    }
    Ok(())
}

/// The file in which a project names the targets it exports to, beside
/// [`SOURCES_FILE`]: `targets = ["claude-code", "agents"]`.
pub const TARGETS_FILE: &str = "targets.toml";

/// The most a targets file may hold.
const MAX_TARGETS_BYTES: u64 = 64 * 1024;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TargetsFile {
    targets: Vec<String>,
}

/// The targets this project says it exports to ([`TARGETS_FILE`] beside
/// the team layer's directory), with the file: `None` when there is no
/// such file. A symlink, a file over 64 KiB, a key other than `targets`
/// or a name that cannot be a target's is one error at the file.
pub fn project_targets(layers: &Layers) -> Result<Option<(PathBuf, Vec<String>)>> {
    let paths = Paths::of(layers);
    let path = paths.targets.clone();
    let Some(text) = paths.read(&path, |p| sources::read_text(p, MAX_TARGETS_BYTES))? else {
        return Ok(None);
    };
    let file: TargetsFile =
        toml::from_str(&text).map_err(|e| sources::toml_error(&path, &text, &e))?;
    for name in &file.targets {
        if crate::layer::check_name(name).is_err() || name.chars().count() > 64 {
            return Err(refused(
                ErrorKind::Invalid,
                &path,
                format!(
                    "'{}' is not a target's name (one word, such as 'claude-code')",
                    crate::text::excerpt(name, crate::text::EXCERPT_CHARS)
                ),
            ));
        }
    }
    Ok(Some((path, file.targets)))
}

#[cfg(test)]
mod project_files_tests {
    /// The names this module reads are the project's.
    #[test]
    fn the_files_are_the_projects() {
        use crate::source::ProjectFile;
        assert_eq!(super::SOURCES_FILE, ProjectFile::Sources.name());
        assert_eq!(super::LOCK_FILE, ProjectFile::Lock.name());
        assert_eq!(super::TARGETS_FILE, ProjectFile::Targets.name());
    }
}
