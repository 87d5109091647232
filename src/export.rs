//! Effective manifests: every effective skill written as `<name>.json`, and
//! a check that committed manifests still match, for review in CI.
//!
//! Skills are resolved and written one at a time on each worker, so memory
//! stays flat however many skills there are.
//!
//! Every manifest is written atomically ([`OutDir`]). Into a directory that
//! already exists, each file is replaced by a rename, and a manifest whose
//! bytes have not changed is not touched. A directory that does not exist
//! yet is built beside its final place and renamed into it once complete,
//! and only if every skill was written, so nobody ever sees half an export,
//! and its files need no rename each.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::engine::{Skills, write_atomic_mode};
use crate::error::{Diagnostic, DiagnosticKind, Error, Result};
use crate::layer::Located;
use crate::render;
use crate::text::{EXCERPT_CHARS, excerpt};

/// What [`Skills::export`] did.
#[derive(Debug, Default)]
pub struct Exported {
    /// Manifests written (new or changed).
    pub written: usize,
    /// Manifests already up to date.
    pub unchanged: usize,
    /// Stale manifests removed (with `prune`).
    pub removed: Vec<String>,
    /// Skills that could not be resolved, with why.
    pub failed: Vec<Error>,
    /// Manifests not written because something else failed: after a failed
    /// write no more are written, and into a new directory nothing is put in
    /// place once anything failed (what was staged is removed).
    pub not_written: usize,
    /// The output directory did not exist: it appears only if nothing failed.
    pub new_dir: bool,
    /// Staging directories of earlier exports whose process is gone, removed.
    pub stale_removed: Vec<PathBuf>,
}

/// The longest file name, in bytes, that file systems allow (`NAME_MAX`).
pub const FILE_NAME_MAX: usize = 255;

/// Why skill `name` cannot be exported, if it cannot: its manifest's file
/// name, `<name>.json`, would be longer than [`FILE_NAME_MAX`] bytes (a
/// layer can hold such a name as `<name>.yml` or `<name>/SKILL.md`).
pub fn unexportable(name: &str) -> Option<DiagnosticKind> {
    let bytes = name.len() + ".json".len();
    (bytes > FILE_NAME_MAX).then_some(DiagnosticKind::NameTooLong {
        bytes,
        limit: FILE_NAME_MAX,
    })
}

/// [`unexportable`] as an error located at the skill's first file.
pub fn unexportable_at(name: &str, located: &[Located]) -> Option<Diagnostic> {
    let kind = unexportable(name)?;
    let first = located.first();
    let mut d = Diagnostic::error(first.map(|l| l.path.as_path()), kind);
    d.layer = first.map(|l| l.layer);
    Some(d)
}

/// How a committed manifest differs from the effective skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drift {
    /// The skill exists but has no manifest.
    Added,
    /// A manifest whose skill no longer exists.
    Removed,
    /// The manifest differs; a short line diff (each line an escaped excerpt).
    Changed(Vec<String>),
    /// The manifest cannot be compared: it is a symlink out of the
    /// manifests directory, not a regular file, or too large. Never read.
    Refused(String),
}

/// What `export` writes for each skill.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Format {
    /// `DIR/<name>.json`: the `show` JSON.
    #[default]
    Json,
    /// `DIR/<name>/SKILL.md` and the skill's files: an Agent Skills
    /// directory any agent loads ([`crate::skillmd`], [`crate::files`]).
    Skill,
}

/// The skills `dir` holds in `format`: `<name>.json` stems, or the names of
/// entries that are directories (or links, so that a prune removes them).
fn entries_in(dir: &Path, format: Format) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return BTreeSet::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            if name.starts_with('.') {
                return None;
            }
            match format {
                Format::Json => name.strip_suffix(".json").map(str::to_owned),
                Format::Skill => e
                    .file_type()
                    .is_ok_and(|t| t.is_dir() || t.is_symlink())
                    .then_some(name),
            }
        })
        .collect()
}

/// One file of a skill's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutFile {
    /// Its path relative to the output directory, `/`-separated.
    pub rel: String,
    /// Its contents.
    pub bytes: Vec<u8>,
    /// Written with the execute bits (a script that was executable in its
    /// layer stays executable).
    pub executable: bool,
}

impl OutFile {
    /// A plain (not executable) file.
    pub fn new(rel: String, bytes: Vec<u8>) -> OutFile {
        OutFile {
            rel,
            bytes,
            executable: false,
        }
    }
}

/// One skill's output.
pub type Rendered = Vec<OutFile>;

/// Makes `dir/rel`'s parent directories real directories inside `dir`: a
/// missing one is created, a symlink or file in the way is removed first
/// (never followed). `dir` itself was checked by [`OutDir::open`].
fn ensure_parents(dir: &Path, rel: &str) -> Result<()> {
    let mut at = dir.to_path_buf();
    let mut parts: Vec<&str> = rel.split('/').collect();
    parts.pop();
    for part in parts {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_dir() => continue,
            Ok(_) => std::fs::remove_file(&at).map_err(write_error(&at))?,
            Err(_) => {}
        }
        std::fs::create_dir(&at).map_err(write_error(&at))?;
    }
    Ok(())
}

/// Every entry below `dir` (relative paths, `/`-separated), not following
/// symlinks: files and links as leaves, directories after their contents.
fn walk_out(dir: &Path, prefix: &str, out: &mut Vec<(String, bool)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        let rel = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        if is_dir {
            walk_out(&e.path(), &rel, out);
        }
        out.push((rel, is_dir));
    }
}

/// Where [`Skills::export`] writes: an output directory that existed (files
/// replaced one by one, atomically) or a new one being built under a
/// temporary name beside it (files created directly; [`OutDir::finish`]
/// renames the whole directory into place). Dropped without `finish`, a
/// half-built new directory is removed.
///
/// A staging directory is named `.bernstein-export-<pid>-<random>`, short
/// and independent of the output directory's name; opening an `OutDir`
/// first removes the staging directories of that naming beside it whose
/// process is gone (an interrupted export), never following a symlink.
#[derive(Debug)]
pub struct OutDir {
    dir: PathBuf,
    staging: Option<PathBuf>,
    existing: BTreeSet<String>,
    format: Format,
    /// An existing `dir`, which reads stay beneath.
    root: Option<crate::confine::Root>,
    stale_removed: Vec<PathBuf>,
}

/// How staging directories are named: this, the process id, `-`, random.
const STAGING_PREFIX: &str = ".bernstein-export-";

/// Is process `pid` (still) running? Unknown counts as yes.
fn alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return true;
        };
        if pid <= 0 {
            return true;
        }
        // SAFETY: signal 0 sends nothing; it only checks the pid exists.
        let rc = unsafe { libc::kill(pid, 0) };
        rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Removes the staging directories in `parent` left by exports whose process
/// is gone; returns them. A symlink of that name is removed itself, never
/// its target, and nothing inside a directory is followed.
fn remove_stale_staging(parent: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.filter_map(|e| e.ok()) {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(STAGING_PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .filter(|(pid, random)| pid.bytes().all(|b| b.is_ascii_digit()) && !random.is_empty())
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if alive(pid) {
            continue;
        }
        let path = entry.path();
        let gone = match entry.file_type() {
            // remove_dir_all removes a symlink itself, and never follows one
            // inside the directory.
            Ok(t) if t.is_dir() => std::fs::remove_dir_all(&path).is_ok(),
            Ok(t) if t.is_symlink() => std::fs::remove_file(&path).is_ok(),
            _ => false,
        };
        if gone {
            removed.push(path);
        }
    }
    removed.sort();
    removed
}

impl OutDir {
    /// Opens `dir` for writing manifests: removes stale staging directories
    /// beside it, then lists the manifests it holds, or, when it does not
    /// exist, creates its temporary stand-in.
    ///
    /// A `dir` that is a symlink is refused before anything is done: the
    /// output directory may come from strangers, and a link could make
    /// `--prune` delete files anywhere.
    pub fn open(dir: &Path) -> Result<OutDir> {
        OutDir::open_as(dir, Format::Json)
    }

    /// [`OutDir::open`] for skills in `format`.
    pub fn open_as(dir: &Path, format: Format) -> Result<OutDir> {
        // `m/` and `m/.` name the link `m` itself, not the directory it
        // points to.
        let dir: PathBuf = dir.components().collect();
        let dir = dir.as_path();
        refuse_symlink(dir, WRITES_ONLY)?;
        let parent = dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let stale_removed = remove_stale_staging(parent);
        if dir.exists() && !dir.is_dir() {
            return Err(Error::Write {
                path: dir.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotADirectory,
                    "exists and is not a directory",
                ),
            });
        }
        if dir.is_dir() {
            return Ok(OutDir {
                dir: dir.to_path_buf(),
                staging: None,
                existing: entries_in(dir, format),
                format,
                root: crate::confine::Root::open(dir, &crate::confine::Boundary::none())
                    .ok()
                    .flatten(),
                stale_removed,
            });
        }
        std::fs::create_dir_all(parent).map_err(write_error(parent))?;
        // create_dir under a fresh random name: fails on anything already
        // there, a symlink included, and then another name is tried.
        let (_, tmp) = tempfile::Builder::new()
            .prefix(&format!("{STAGING_PREFIX}{}-", std::process::id()))
            .make_in(parent, |p| std::fs::create_dir(p))
            .map_err(write_error(dir))?
            .keep()
            .map_err(|e| Error::Write {
                path: dir.to_path_buf(),
                source: e.error,
            })?;
        // make_in made the path absolute; keep the caller's form.
        let staging = parent.join(tmp.file_name().unwrap_or_default());
        Ok(OutDir {
            dir: dir.to_path_buf(),
            staging: Some(staging),
            existing: BTreeSet::new(),
            format,
            root: None,
            stale_removed,
        })
    }

    /// The staging directories of interrupted exports removed by [`OutDir::open`].
    pub fn stale_removed(&self) -> &[PathBuf] {
        &self.stale_removed
    }

    /// Writes `name.json` unless it already holds exactly `text`. Returns
    /// whether it wrote.
    pub fn put(&self, name: &str, text: &[u8]) -> Result<bool> {
        self.put_skill(name, &[OutFile::new(format!("{name}.json"), text.to_vec())])
    }

    /// Writes skill `name`'s output (paths relative to the directory), each
    /// file unless it already holds exactly those bytes; in the skill format
    /// also removes files of the skill's directory that are no longer part
    /// of it. Returns whether anything changed.
    pub fn put_skill(&self, name: &str, files: &[OutFile]) -> Result<bool> {
        if let Some(staging) = &self.staging {
            for OutFile {
                rel,
                bytes,
                executable,
            } in files
            {
                let path = staging.join(rel);
                let fail = |source| Error::Write {
                    path: self.dir.join(rel),
                    source,
                };
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(fail)?;
                }
                let mut options = std::fs::OpenOptions::new();
                options.write(true).create_new(true);
                #[cfg(unix)]
                std::os::unix::fs::OpenOptionsExt::mode(&mut options, file_mode(*executable));
                let mut f = options.open(&path).map_err(fail)?;
                std::io::Write::write_all(&mut f, bytes).map_err(fail)?;
            }
            return Ok(true);
        }
        let mut changed = false;
        for OutFile {
            rel,
            bytes,
            executable,
        } in files
        {
            ensure_parents(&self.dir, rel)?;
            let path = self.dir.join(rel);
            // Compared only when it is a regular file inside the directory
            // (the reader refuses symlinks out and anything not regular);
            // otherwise it is replaced by the rename, never written through.
            let same = self.existing.contains(name)
                && is_regular_file(&path)
                && is_executable(&path) == *executable
                && self.root.as_ref().is_some_and(|root| {
                    crate::confine::read_in_root(root, &path, bytes.len() as u64)
                        .is_ok_and(|old| &old == bytes)
                });
            if !same {
                write_atomic_mode(&path, bytes, *executable)?;
                changed = true;
            }
        }
        if self.format == Format::Skill {
            changed |= self.remove_extra(name, files)?;
        }
        Ok(changed)
    }

    /// Removes what `dir/name/` holds beyond `files` (never following a
    /// symlink: a link is removed itself). Returns whether it removed any.
    fn remove_extra(&self, name: &str, files: &[OutFile]) -> Result<bool> {
        let keep: BTreeSet<&str> = files.iter().map(|f| f.rel.as_str()).collect();
        let keep_dir = |rel: &str| keep.iter().any(|k| k.starts_with(&format!("{rel}/")));
        let mut found = Vec::new();
        walk_out(&self.dir.join(name), name, &mut found);
        let mut removed = false;
        for (rel, is_dir) in found {
            let path = self.dir.join(&rel);
            if is_dir {
                if !keep_dir(&rel) {
                    std::fs::remove_dir(&path).map_err(write_error(&path))?;
                    removed = true;
                }
            } else if !keep.contains(rel.as_str()) {
                std::fs::remove_file(&path).map_err(write_error(&path))?;
                removed = true;
            }
        }
        Ok(removed)
    }

    /// Removes skill `name`'s output (a manifest, or a skill directory, or a
    /// link standing in its place, never followed).
    pub fn remove(&self, name: &str) -> Result<()> {
        let path = match self.format {
            Format::Json => self.dir.join(format!("{name}.json")),
            Format::Skill => self.dir.join(name),
        };
        let is_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_dir());
        if is_dir {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        }
        .map_err(|source| Error::Write { path, source })
    }

    /// Is this a new directory, built in staging until [`OutDir::finish`]?
    pub fn is_new(&self) -> bool {
        self.staging.is_some()
    }

    /// The manifests the directory held when it was opened.
    pub fn existing(&self) -> &BTreeSet<String> {
        &self.existing
    }

    /// Puts a new directory in its place. Should another process have
    /// created it meanwhile, the files are moved into it one by one (each
    /// move atomic) instead; should a symlink have appeared there, nothing
    /// is moved through it.
    pub fn finish(mut self) -> Result<()> {
        let Some(staging) = self.staging.take() else {
            return Ok(());
        };
        if std::fs::rename(&staging, &self.dir).is_ok() {
            return Ok(());
        }
        let moved = (|| {
            match std::fs::create_dir(&self.dir) {
                Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                    return Err(write_error(&self.dir)(e));
                }
                _ => refuse_symlink(&self.dir, WRITES_ONLY)?,
            }
            for entry in std::fs::read_dir(&staging).map_err(write_error(&staging))? {
                let entry = entry.map_err(write_error(&staging))?;
                let to = self.dir.join(entry.file_name());
                std::fs::rename(entry.path(), &to).map_err(write_error(&to))?;
            }
            Ok(())
        })();
        let _ = std::fs::remove_dir_all(&staging);
        moved
    }
}

/// The permission bits of a file export creates (the umask applies).
fn file_mode(executable: bool) -> u32 {
    if executable { 0o777 } else { 0o666 }
}

/// Does `path` have an execute bit (not following a symlink)?
fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::symlink_metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// Is `path` a regular file (not following a symlink)?
fn is_regular_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
}

/// Why an `--out` directory that is a symlink is refused.
const WRITES_ONLY: &str = "export writes only into a real directory (nothing was written)";

/// Refuses a directory `dir` that is a symlink, naming its target and `what`
/// the command needs instead.
fn refuse_symlink(dir: &Path, what: &str) -> Result<()> {
    let is_link = std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return Ok(());
    }
    let target = std::fs::read_link(dir).unwrap_or_default();
    Err(Error::Refused {
        path: None,
        message: format!(
            "{}: is a symbolic link to {}; {what}",
            crate::text::path(dir),
            crate::text::path(&target)
        ),
    })
}

/// Turns an I/O error on `path` into [`Error::Write`].
fn write_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.to_path_buf();
    move |source| Error::Write { path, source }
}

impl Drop for OutDir {
    fn drop(&mut self) {
        if let Some(staging) = &self.staging {
            let _ = std::fs::remove_dir_all(staging);
        }
    }
}

impl Skills {
    /// The effective skill's manifest: the `show` JSON.
    pub fn manifest(&self, name: &str) -> Result<String> {
        Ok(render::effective_to_json(&self.resolve(name)?.effective()))
    }

    fn manifest_of(&self, name: &str, located: &[Located]) -> Result<String> {
        Ok(render::effective_to_json(
            &self.resolve_located(name, located)?.effective(),
        ))
    }

    /// What skill `name` exports as in `format` (paths relative to the
    /// output directory); an error if it cannot be exported.
    pub fn rendered(&self, name: &str, located: &[Located], format: Format) -> Result<Rendered> {
        if let Some(d) = unexportable_at(name, located) {
            return Err(d.into());
        }
        match format {
            Format::Json => Ok(vec![OutFile::new(
                format!("{name}.json"),
                self.manifest_of(name, located)?.into_bytes(),
            )]),
            Format::Skill => {
                let resolved = self.resolve_located(name, located)?;
                let skill_md = crate::skillmd::render(self.spec(), &resolved.effective());
                let mut out = vec![OutFile::new(
                    format!("{name}/SKILL.md"),
                    skill_md.into_bytes(),
                )];
                for f in self.files_of(located)? {
                    // Copied as bytes, never parsed; confined like every read.
                    let bytes =
                        crate::confine::read_in_root(&f.root, &f.source.path, f.source.size)
                            .map_err(|r| {
                                Error::from(
                                    Diagnostic::error(
                                        Some(&f.source.path),
                                        DiagnosticKind::Refused {
                                            reason: r.describe(
                                                &f.source.path,
                                                &f.source.layer.to_string(),
                                            ),
                                        },
                                    )
                                    .in_layer(f.source.layer),
                                )
                            })?;
                    out.push(OutFile {
                        rel: format!("{name}/{}", f.rel),
                        bytes,
                        executable: f.source.executable,
                    });
                }
                Ok(out)
            }
        }
    }

    /// Writes every effective skill to `dir/<name>.json` atomically; see
    /// [`Skills::export_as`].
    pub fn export(&self, dir: &Path, prune: bool, jobs: usize) -> Result<Exported> {
        self.export_as(dir, Format::Json, prune, jobs)
    }

    /// Writes every effective skill to `dir` in `format` atomically. With
    /// `prune`, removes the output of skills that no longer exist (not when
    /// any skill failed: its output is kept). A `dir` that does not exist
    /// appears whole or not at all: if any skill fails to resolve or to be
    /// written, nothing is put in place. In an existing `dir`, every file is
    /// left either as it was or as it should be.
    pub fn export_as(
        &self,
        dir: &Path,
        format: Format,
        prune: bool,
        jobs: usize,
    ) -> Result<Exported> {
        let out_dir = OutDir::open_as(dir, format)?;
        let new_dir = out_dir.is_new();
        let catalog = self.layers().catalog();
        // Once a write fails (a full disk, a read-only file system), or into
        // a new directory anything fails, writing more is pointless: the
        // other skills are still resolved, to report every broken one.
        let stop = AtomicBool::new(false);
        // One small result per skill (errors boxed): with 100,000 skills the
        // results are held three times over while the workers' parts are
        // put back in order. `None`: not written.
        let results = crate::par::map(&catalog, jobs, |(name, located)| {
            let files = self.rendered(name, located, format).map_err(|e| {
                if new_dir {
                    stop.store(true, Ordering::Relaxed);
                }
                Box::new(e)
            })?;
            if stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            out_dir.put_skill(name, &files).map(Some).map_err(|e| {
                stop.store(true, Ordering::Relaxed);
                Box::new(e)
            })
        });
        let mut out = Exported {
            stale_removed: out_dir.stale_removed().to_vec(),
            new_dir,
            ..Exported::default()
        };
        for r in results {
            match r {
                Ok(Some(true)) => out.written += 1,
                Ok(Some(false)) => out.unchanged += 1,
                Ok(None) => out.not_written += 1,
                Err(e) => out.failed.push(*e),
            }
        }
        if !out.failed.is_empty() && new_dir {
            // Whole or not at all: dropped, the staging directory goes.
            drop(out_dir);
            out.not_written += std::mem::take(&mut out.written);
            return Ok(out);
        }
        let existed = out_dir.existing().clone();
        if prune && out.failed.is_empty() {
            let live: BTreeSet<&str> = catalog.iter().map(|(n, _)| n.as_str()).collect();
            for stale in existed {
                if !live.contains(stale.as_str()) {
                    out_dir.remove(&stale)?;
                    out.removed.push(stale);
                }
            }
        }
        out_dir.finish()?;
        Ok(out)
    }

    /// Compares `dir`'s manifests with the effective skills; see
    /// [`Skills::check_export_as`].
    pub fn check_export(&self, dir: &Path, jobs: usize) -> Result<Vec<(String, Drift)>> {
        self.check_export_as(dir, Format::Json, jobs)
    }

    /// Compares what `dir` holds with what exporting in `format` would write,
    /// writing nothing. Returns every drift, by name; a skill that fails to
    /// resolve is an error.
    pub fn check_export_as(
        &self,
        dir: &Path,
        format: Format,
        jobs: usize,
    ) -> Result<Vec<(String, Drift)>> {
        // As for --out: the manifests directory is where reads stay, so it
        // must be a real directory, not a link to one somewhere else.
        let dir: PathBuf = dir.components().collect();
        let dir = dir.as_path();
        refuse_symlink(
            dir,
            "export --check reads manifests only from a real directory",
        )?;
        let catalog = self.layers().catalog();
        let root = crate::confine::Root::open(dir, &crate::confine::Boundary::none())
            .ok()
            .flatten();
        let cap = self.max_manifest_bytes();
        let results = crate::par::map(&catalog, jobs, |(name, located)| -> Result<Option<Drift>> {
            let files = self.rendered(name, located, format)?;
            let Some(root) = &root else {
                return Ok(Some(Drift::Added));
            };
            Ok(match format {
                Format::Json => {
                    let OutFile {
                        rel, bytes: text, ..
                    } = &files[0];
                    let path = dir.join(rel);
                    match crate::confine::read_in_root(root, &path, cap) {
                        Err(r) if r.is_not_found() => Some(Drift::Added),
                        Err(r) => Some(Drift::Refused(r.describe(&path, "manifests directory"))),
                        Ok(old) if &old == text => None,
                        Ok(old) => Some(Drift::Changed(short_diff(
                            &String::from_utf8_lossy(&old),
                            &String::from_utf8_lossy(text),
                            12,
                        ))),
                    }
                }
                Format::Skill => skill_drift(dir, root, name, &files, cap),
            })
        });
        let mut out = Vec::new();
        let mut errors = Vec::new();
        for ((name, _), r) in catalog.iter().zip(results) {
            match r {
                Ok(Some(d)) => out.push((name.clone(), d)),
                Ok(None) => {}
                Err(e) => errors.push(e),
            }
        }
        if !errors.is_empty() {
            let diags = errors
                .iter()
                .flat_map(|e| e.diagnostics().to_vec())
                .collect::<Vec<_>>();
            return Err(if diags.is_empty() {
                errors.remove(0)
            } else {
                Error::Invalid(diags)
            });
        }
        let live: BTreeSet<&str> = catalog.iter().map(|(n, _)| n.as_str()).collect();
        for stale in entries_in(dir, format) {
            if !live.contains(stale.as_str()) {
                out.push((stale, Drift::Removed));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }
}

/// How skill directory `dir/name/` differs from `files`: `+ path` for a
/// file it lacks, `- path` for one it has beyond them, `~ path (N → M
/// bytes)` for other content, and the SKILL.md as a short diff. `None`
/// when they are the same.
fn skill_drift(
    dir: &Path,
    root: &crate::confine::Root,
    name: &str,
    files: &[OutFile],
    cap: u64,
) -> Option<Drift> {
    let skill_dir = dir.join(name);
    if std::fs::symlink_metadata(&skill_dir).is_err() {
        return Some(Drift::Added);
    }
    let mut lines = Vec::new();
    let shown = |rel: &str| {
        excerpt(
            rel.strip_prefix(name)
                .unwrap_or(rel)
                .trim_start_matches('/'),
            EXCERPT_CHARS,
        )
    };
    for OutFile {
        rel,
        bytes,
        executable,
    } in files
    {
        let path = dir.join(rel);
        if is_regular_file(&path) && is_executable(&path) != *executable {
            lines.push(format!(
                "~ {} (execute bit {})",
                shown(rel),
                if *executable { "missing" } else { "set" }
            ));
        }
        match crate::confine::read_in_root(root, &path, cap) {
            Err(r) if r.is_not_found() => lines.push(format!("+ {}", shown(rel))),
            Err(r) => lines.push(format!(
                "! {}: {}",
                shown(rel),
                r.describe(&path, "output directory")
            )),
            Ok(old) if &old == bytes => {}
            Ok(old) if rel.ends_with("/SKILL.md") && rel.matches('/').count() == 1 => {
                lines.push(format!("~ {}", shown(rel)));
                lines.extend(
                    short_diff(
                        &String::from_utf8_lossy(&old),
                        &String::from_utf8_lossy(bytes),
                        12,
                    )
                    .into_iter()
                    .map(|l| format!("  {l}")),
                );
            }
            Ok(old) => lines.push(format!(
                "~ {} ({} → {} bytes)",
                shown(rel),
                old.len(),
                bytes.len()
            )),
        }
    }
    let expected: BTreeSet<&str> = files.iter().map(|f| f.rel.as_str()).collect();
    let mut found = Vec::new();
    walk_out(&skill_dir, name, &mut found);
    for (rel, is_dir) in found {
        if !is_dir && !expected.contains(rel.as_str()) {
            lines.push(format!("- {}", shown(&rel)));
        }
    }
    (!lines.is_empty()).then_some(Drift::Changed(lines))
}

/// A unified-style line diff of `old` → `new`, at most `max` changed lines,
/// each an escaped excerpt ([`crate::text::excerpt`]): a diff can neither
/// dump a file nor write control characters into a CI log.
pub fn short_diff(old: &str, new: &str, max: usize) -> Vec<String> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    // The walk below matches the lines the two share at the start one by
    // one, so they need no table: it is built for the rest only. (Lines
    // shared at the end do need it: where a line repeats, which of its
    // copies the walk matches depends on them.)
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[prefix..], &b[prefix..]);
    // Longest common subsequence table, one row after another.
    let (n, m) = (a.len(), b.len());
    if n.saturating_mul(m) > 4_000_000 {
        return vec![format!("- ({n} lines)"), format!("+ ({m} lines)")];
    }
    let w = m + 1;
    let mut lcs = vec![0u32; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i * w + j] = if a[i] == b[j] {
                lcs[(i + 1) * w + j + 1] + 1
            } else {
                lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    let mut more = 0;
    let mut emit = |line: String, out: &mut Vec<String>| {
        if out.len() < max {
            out.push(line);
        } else {
            more += 1;
        }
    };
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
            emit(format!("-{}", excerpt(a[i], EXCERPT_CHARS)), &mut out);
            i += 1;
        } else {
            emit(format!("+{}", excerpt(b[j], EXCERPT_CHARS)), &mut out);
            j += 1;
        }
    }
    if more > 0 {
        out.push(format!("... {more} more changed line(s)"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::OutDir;

    #[test]
    fn a_new_directory_created_meanwhile_gets_the_files_moved_in() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("m");
        let out = OutDir::open(&dir).unwrap();
        out.put("a", b"1").unwrap();
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("other.txt"), "kept").unwrap();
        out.finish().unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("a.json")).unwrap(), "1");
        assert_eq!(
            std::fs::read_to_string(dir.join("other.txt")).unwrap(),
            "kept"
        );
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    }

    #[test]
    fn an_unfinished_new_directory_leaves_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let out = OutDir::open(&tmp.path().join("m")).unwrap();
        out.put("a", b"1").unwrap();
        drop(out);
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    #[test]
    fn an_existing_directory_is_written_in_place_and_unchanged_files_kept() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a.json"), "1").unwrap();
        let out = OutDir::open(tmp.path()).unwrap();
        assert!(!out.put("a", b"1").unwrap());
        assert!(out.put("b", b"2").unwrap());
        out.finish().unwrap();
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("b.json")).unwrap(),
            "2"
        );
    }

    #[test]
    fn names_whose_manifest_file_name_is_over_255_bytes_cannot_be_exported() {
        assert_eq!(super::unexportable(&"a".repeat(250)), None);
        assert_eq!(
            super::unexportable(&"é".repeat(126)),
            Some(crate::DiagnosticKind::NameTooLong {
                bytes: 257,
                limit: 255
            })
        );
    }

    /// `short_diff` as it was before the common start was left out of the table.
    fn full_table_diff(old: &str, new: &str, max: usize) -> Vec<String> {
        use crate::text::{EXCERPT_CHARS, excerpt};
        let a: Vec<&str> = old.lines().collect();
        let b: Vec<&str> = new.lines().collect();
        let (n, m) = (a.len(), b.len());
        let mut lcs = vec![vec![0u32; m + 1]; n + 1];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i][j] = if a[i] == b[j] {
                    lcs[i + 1][j + 1] + 1
                } else {
                    lcs[i + 1][j].max(lcs[i][j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::new();
        while i < n || j < m {
            if i < n && j < m && a[i] == b[j] {
                i += 1;
                j += 1;
            } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
                out.push(format!("-{}", excerpt(a[i], EXCERPT_CHARS)));
                i += 1;
            } else {
                out.push(format!("+{}", excerpt(b[j], EXCERPT_CHARS)));
                j += 1;
            }
        }
        if out.len() > max {
            let more = out.len() - max;
            out.truncate(max);
            out.push(format!("... {more} more changed line(s)"));
        }
        out
    }

    #[test]
    fn leaving_out_the_common_start_changes_no_diff() {
        // Every pair of texts of up to 6 lines over a 3-line alphabet, in a
        // fixed pseudo-random sample.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |k: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % k
        };
        for _ in 0..20_000 {
            let mut text = || {
                (0..next(7))
                    .map(|_| ["x", "y", "z"][next(3) as usize])
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            let (a, b) = (text(), text());
            let max = 1 + next(5) as usize;
            assert_eq!(
                super::short_diff(&a, &b, max),
                full_table_diff(&a, &b, max),
                "{a:?} -> {b:?}"
            );
        }
    }

    #[test]
    fn diff_shows_changed_lines() {
        let d = super::short_diff("a\nb\nc\n", "a\nB\nc\nd\n", 10);
        assert_eq!(d, ["-b", "+B", "+d"]);
    }
}
