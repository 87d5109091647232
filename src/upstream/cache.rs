//! The cache of fetched sources: `$XDG_CACHE_HOME/bernstein/skills/sources/
//! KEY/SKILL/PATH`, one directory per locked source, named by a digest of
//! what the lock says of it (its commit, every file's name, digest and
//! execute bit), so that two locks of the same commit with different
//! skills never share one, and an entry never changes once written.
//!
//! An entry is written whole into a temporary directory beside it and
//! renamed into place, so a fetch interrupted at any point (`kill -9`)
//! leaves no entry, and two fetches at once each rename a complete one
//! (the second finds the first's and checks it). It is verified against
//! the lock every time it is read ([`Cache::verify`]): every locked file
//! must be there with its digest and execute bit, and nothing else may be.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use super::git::Fetched;
use super::lock::LockedSource;
use crate::beneath::EntryKind;
use crate::beneath::lock::{Held, Share, Wait};
use crate::beneath::private::{LockRefusal, PrivateDir};
use crate::beneath::walk::{MAX_DEPTH, Tree, Unlisted};
use crate::beneath::write::NewTree;
use crate::digest::Digest;
use crate::error::{Error, ErrorKind, Result};
use crate::source::Root;
use crate::source::files::FileLimits;

/// Where fetched sources are kept.
#[derive(Debug, Clone)]
pub struct Cache {
    /// `$XDG_CACHE_HOME/bernstein/skills/sources`.
    pub dir: PathBuf,
}

/// Why a cache entry cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The entry is not in the cache.
    Missing {
        /// Its directory.
        dir: PathBuf,
    },
    /// A file's contents are not what the lock says.
    Mismatch {
        /// The entry's directory.
        dir: PathBuf,
        /// The file, `SKILL/PATH`.
        file: String,
        /// The lock's digest, as the lock writes it (`sha256:HEX`).
        locked: String,
        /// The file's.
        found: Digest,
    },
    /// Anything else: a file missing, one too many, a symlink, an execute
    /// bit, an unreadable file.
    Other {
        /// The entry's directory.
        dir: PathBuf,
        /// The file, `SKILL/PATH` (empty: the entry itself).
        file: String,
        /// What is wrong.
        message: String,
    },
}

impl Problem {
    /// Where the problem is: the file, or the entry when it is about the
    /// entry.
    pub fn path(&self) -> PathBuf {
        match self {
            Problem::Missing { dir } => dir.clone(),
            Problem::Mismatch { dir, file, .. } | Problem::Other { dir, file, .. } => {
                if file.is_empty() {
                    dir.clone()
                } else {
                    dir.join(file)
                }
            }
        }
    }

    /// What is wrong at [`Problem::path`], and the fix: the message
    /// without the file it names.
    pub fn reason(&self) -> String {
        let fix = || {
            format!(
                "nothing of this source is used; remove {} and run `bernstein skills verify` to fetch it again",
                crate::text::path(self.dir())
            )
        };
        match self {
            Problem::Mismatch { locked, found, .. } => format!(
                "does not match the lock (lock {locked}, file {found}); {}",
                fix()
            ),
            Problem::Other { message, .. } => format!("{message}; {}", fix()),
            Problem::Missing { .. } => self.to_string(),
        }
    }

    /// The entry's directory.
    pub fn dir(&self) -> &Path {
        match self {
            Problem::Missing { dir }
            | Problem::Mismatch { dir, .. }
            | Problem::Other { dir, .. } => dir,
        }
    }
}

/// The most problems [`Cache::problems`] lists for one entry.
pub const MAX_PROBLEMS: usize = 50;

/// What a problem message ends with: what is refused, and the fix.
const REFETCH: &str = "nothing of this source is used; remove this cache entry and run `bernstein skills verify` to fetch it again";

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Missing { .. } => write!(
                f,
                "not in the cache; run `bernstein skills verify` to fetch it"
            ),
            Problem::Mismatch {
                file,
                locked,
                found,
                ..
            } => write!(
                f,
                "{}: does not match the lock (lock {locked}, file {found}); {REFETCH}",
                crate::text::escape(file),
            ),
            Problem::Other { file, message, .. } => write!(
                f,
                "{}{message}; {REFETCH}",
                if file.is_empty() {
                    String::new()
                } else {
                    format!("{}: ", crate::text::escape(file))
                },
            ),
        }
    }
}

impl Cache {
    /// `$XDG_CACHE_HOME/bernstein/skills/sources`, or `~/.cache/…`; `None`
    /// when neither gives an absolute path.
    pub fn new(xdg_cache_home: Option<PathBuf>, home: Option<PathBuf>) -> Option<Cache> {
        let base = xdg_cache_home
            .filter(|p| p.is_absolute())
            .or_else(|| home.filter(|p| p.is_absolute()).map(|h| h.join(".cache")))?;
        Some(Cache {
            dir: base.join("bernstein/skills/sources"),
        })
    }

    /// The cache an environment points at: [`Cache::new`] from its
    /// `XDG_CACHE_HOME` and `HOME`.
    pub fn of(env: &crate::source::Env) -> Option<Cache> {
        Cache::new(env.xdg_cache_home.clone(), env.home.clone())
    }

    /// The entry's key: a digest of everything the lock says of its files.
    pub fn key(locked: &LockedSource) -> String {
        let mut text = format!("bernstein-skills source v1\n{}\n", locked.commit);
        for (file, digest) in &locked.files {
            let x = if locked.executable.contains(file) {
                " x"
            } else {
                ""
            };
            text.push_str(&format!("{file} {digest}{x}\n"));
        }
        Digest::of(text).to_hex()[..32].to_owned()
    }

    /// The entry's directory: `NAME@COMMIT-KEY`, where the first twelve
    /// digits of the commit and sixteen of the key are kept, so that every
    /// path a command prints of a file from a source (`explain`, `show
    /// --files`, `list --layered`) names the source and the commit.
    pub fn dir_of(&self, name: &str, locked: &LockedSource) -> PathBuf {
        let commit = &locked.commit[..locked.commit.len().min(12)];
        let key = Cache::key(locked);
        self.dir.join(format!("{name}@{commit}-{}", &key[..16]))
    }

    /// The cache's directory, opened and checked as the person's own
    /// (`beneath::private`: `bernstein/skills/sources` below the base,
    /// private, nobody else's, never through another user's symlink), made
    /// when missing and `create`.
    fn private_dir(&self, create: bool) -> Result<Option<PrivateDir>> {
        let not_private = |r| Error::not_private(r, "XDG_CACHE_HOME");
        let (Some(parent), Some(name)) = (self.dir.parent(), self.dir.file_name()) else {
            return Ok(None);
        };
        let Some(parent) = PrivateDir::open(parent, create).map_err(not_private)? else {
            return Ok(None);
        };
        parent.subdir(name, create).map_err(not_private)
    }

    /// Takes the lock that serialises the updates of the project lock
    /// `lock_path` (two at once would each write a lock the other did not
    /// see), or refuses when another holds it: a lock file in the cache's
    /// `.locks/`, named by a digest of `lock_path`'s absolute path, opened
    /// without following a symlink. Held until the guard is dropped.
    pub fn lock(&self, lock_path: &Path) -> Result<CacheLock> {
        let dir = self.private_dir(true)?.expect("made when missing");
        let locks = dir
            .subdir(std::ffi::OsStr::new(".locks"), true)
            .map_err(|r| Error::not_private(r, "XDG_CACHE_HOME"))?
            .expect("made when missing");
        let abs = std::path::absolute(lock_path).unwrap_or_else(|_| lock_path.to_path_buf());
        let key = Digest::of(abs.as_os_str().as_encoded_bytes()).to_hex();
        match locks.lock(std::ffi::OsStr::new(&key[..32]), Share::Exclusive, Wait::Refuse) {
            Ok(held) => Ok(CacheLock { _held: held }),
            Err(LockRefusal::Held) => Err(Error::Refused {
                kind: ErrorKind::Busy,
                path: Some(PathBuf::from(crate::text::path(lock_path))),
                message: "another `bernstein skills add` or `update` is writing this lock; run this again when it ends".into(),
            }),
            Err(LockRefusal::NotPrivate(r)) => Err(Error::not_private(r, "XDG_CACHE_HOME")),
        }
    }

    /// The entry of `locked`, open for reading its files as
    /// [`Cache::verify`] reads them; why not, for a person, when it cannot
    /// be opened.
    pub fn open_entry(
        &self,
        name: &str,
        locked: &LockedSource,
    ) -> std::result::Result<EntryFiles, String> {
        let dir = self.dir_of(name, locked);
        let boundary = crate::source::confine::Boundary::default();
        match Root::open(&dir, &boundary) {
            Ok(Some(root)) => Ok(EntryFiles { root, dir }),
            Ok(None) => Err("cannot read: it is not in the cache".into()),
            Err(r) => Err(r.describe(&dir)),
        }
    }

    /// Is the entry in the cache (not yet verified)?
    pub fn has(&self, name: &str, locked: &LockedSource) -> bool {
        crate::beneath::kind_of(&self.dir_of(name, locked)).is_ok()
    }

    /// Checks the entry against the lock: every file there with its digest
    /// and execute bit, read beneath the entry (no symlink followed), and
    /// nothing else in it. The first problem ([`Cache::problems`] has them
    /// all).
    pub fn verify(&self, name: &str, locked: &LockedSource) -> std::result::Result<(), Problem> {
        match self.problems(name, locked).into_iter().next() {
            Some(p) => Err(p),
            None => Ok(()),
        }
    }

    /// Every problem of the entry ([`Cache::verify`]), in the lock's order
    /// of files, then what is there that the lock does not name; at most
    /// [`MAX_PROBLEMS`], and the walk is bounded by the entries the lock
    /// names.
    pub fn problems(&self, name: &str, locked: &LockedSource) -> Vec<Problem> {
        let dir = self.dir_of(name, locked);
        let root = match Root::open(&dir, &crate::source::confine::Boundary::default()) {
            Ok(Some(root)) => root,
            Ok(None) => return vec![Problem::Missing { dir }],
            Err(r) => return vec![other(&dir, dir.clone(), &r.describe(&dir))],
        };
        let mut out = Vec::new();
        locked_file_problems(&root, &dir, locked, &mut out);
        if out.len() < MAX_PROBLEMS {
            unlocked_entries(&root, &dir, locked, &mut out);
        }
        out.truncate(MAX_PROBLEMS);
        out
    }

    /// Lays out the fetched files, as an entry holds them, in a new
    /// directory of the cache (made private when missing), or of the
    /// temporary directory when the cache cannot hold one: for the check
    /// that reads them as a layer ([`super::check::as_layer`]), then, in
    /// the cache, renamed into place by [`Cache::store`], so that every
    /// file is written once.
    pub fn stage(&self, fetched: &Fetched) -> Result<Staged> {
        let tree = match self.new_tree() {
            Ok(tree) => tree,
            Err(_) => {
                let temp = std::env::temp_dir();
                NewTree::create_in(&temp, "bernstein-check-").map_err(|e| write_fail(&temp, e))?
            }
        };
        Staged::lay_out(tree, fetched)
    }

    /// A new directory of the cache (made private when missing), for an
    /// entry to be built in and renamed into place.
    fn new_tree(&self) -> Result<NewTree> {
        let parent = self.private_dir(true)?.expect("made when missing");
        parent
            .new_tree(".tmp-")
            .map_err(|e| write_fail(&self.dir, e))
    }

    /// Writes the fetched files as the entry of `locked` (whose digests
    /// they must match), whole or not at all, renaming `staged` into place
    /// when it holds them ([`Cache::stage`]); an entry already there is
    /// verified instead.
    pub fn store(
        &self,
        name: &str,
        locked: &LockedSource,
        fetched: &Fetched,
        staged: Option<Staged>,
    ) -> Result<PathBuf> {
        let dir = self.dir_of(name, locked);
        if self.has(name, locked) {
            self.verify(name, locked).map_err(|p| Error::Refused {
                kind: ErrorKind::Unsafe,
                path: Some(PathBuf::from(crate::text::path(p.dir()))),
                message: p.to_string(),
            })?;
            return Ok(dir);
        }
        for (file, bytes) in &fetched.files {
            if locked.digest(file) != Some(Digest::of(bytes)) {
                return Err(Error::Refused {
                    kind: ErrorKind::Unsafe,
                    path: None,
                    message: format!(
                        "{}: the fetched file does not match the lock; nothing was written",
                        crate::text::escape(file)
                    ),
                });
            }
        }
        if fetched.files.len() != locked.files.len() {
            return Err(Error::Refused {
                kind: ErrorKind::Unsafe,
                path: None,
                message: "the fetched files are not the locked ones; nothing was written".into(),
            });
        }
        // The tree the check read, when it is in the cache and holds these
        // very files; else they are laid out now, in the cache or not at
        // all.
        let tree = match staged.filter(|s| s.holds(fetched)) {
            Some(Staged { tree, .. }) if tree.path().starts_with(&self.dir) => tree,
            _ => Staged::lay_out(self.new_tree()?, fetched)?.tree,
        };
        let leaf = dir.file_name().expect("an entry's name");
        match tree.install(leaf) {
            Ok(()) => Ok(dir),
            Err(_) if self.has(name, locked) => {
                // Another fetch put the same entry in place first.
                self.verify(name, locked).map_err(|p| Error::Refused {
                    kind: ErrorKind::Unsafe,
                    path: Some(PathBuf::from(crate::text::path(p.dir()))),
                    message: p.to_string(),
                })?;
                Ok(dir)
            }
            Err(e) => Err(write_fail(&dir, e)),
        }
    }
}

/// A problem of `path` in the entry at `dir` other than a digest's.
fn other(dir: &Path, path: PathBuf, message: &str) -> Problem {
    Problem::Other {
        dir: dir.to_path_buf(),
        file: path
            .strip_prefix(dir)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default(),
        message: message.to_owned(),
    }
}

/// Pushes onto `out` the problems of the files the lock names, in its
/// order, until there are [`MAX_PROBLEMS`]: a file that cannot be read
/// beneath the entry (`root`, at `dir`), a digest that differs, an execute
/// bit that is not the lock's.
fn locked_file_problems(root: &Root, dir: &Path, locked: &LockedSource, out: &mut Vec<Problem>) {
    let max = FileLimits::default().max_total_bytes;
    for (file, digest) in &locked.files {
        if out.len() >= MAX_PROBLEMS {
            return;
        }
        let path = dir.join(file);
        let bytes = match root.read(Path::new(file), max) {
            Ok(b) => b,
            Err(r) => {
                out.push(other(dir, path.clone(), &r.describe(&path, "cache")));
                continue;
            }
        };
        let found = Digest::of(&bytes);
        if Digest::parse(digest) != Some(found) {
            out.push(Problem::Mismatch {
                dir: dir.to_path_buf(),
                file: file.clone(),
                locked: digest.clone(),
                found,
            });
            continue;
        }
        match root.metadata(Path::new(file)) {
            Err(r) => out.push(other(dir, path.clone(), &r.describe(&path, "cache"))),
            Ok(meta) if meta.executable != locked.executable.contains(file) => {
                out.push(other(
                    dir,
                    path,
                    "its execute bit is not what the lock says",
                ));
            }
            Ok(_) => {}
        }
    }
}

/// Pushes onto `out` what the entry (`root`, at `dir`) holds that the lock
/// does not name: a file planted there would reach the base layer
/// unverified. Breadth first, each directory's entries by name: the same
/// list on every machine. Bounded by the entries the lock names (and the
/// problems reported), and by the depth of the cache's walks.
fn unlocked_entries(root: &Root, dir: &Path, locked: &LockedSource, out: &mut Vec<Problem>) {
    let locked_dirs: BTreeSet<PathBuf> = locked
        .files
        .keys()
        .flat_map(|f| {
            Path::new(f)
                .ancestors()
                .skip(1)
                .map(Path::to_path_buf)
                .collect::<Vec<_>>()
        })
        .collect();
    let budget = locked.files.len() + locked_dirs.len() + MAX_PROBLEMS;
    let mut tree = Tree::new(root.fd(), budget, MAX_DEPTH);
    while let Some((rel, listed)) = tree.next_dir() {
        if out.len() >= MAX_PROBLEMS {
            break;
        }
        let names = match listed {
            Ok(names) => names,
            Err(Unlisted::TooMany) => {
                out.push(other(
                    dir,
                    dir.join(&rel),
                    "holds more entries than the lock names",
                ));
                break;
            }
            Err(Unlisted::TooDeep) => {
                out.push(other(
                    dir,
                    dir.join(&rel),
                    &format!("is nested deeper than {MAX_DEPTH} directories"),
                ));
                continue;
            }
            Err(Unlisted::Io(e)) => {
                out.push(other(dir, dir.join(&rel), &format!("cannot list: {e}")));
                continue;
            }
        };
        for (name, kind) in names {
            let r = rel.join(name);
            let known_file = r.to_str().is_some_and(|s| locked.files.contains_key(s));
            if known_file && kind == EntryKind::File {
                continue;
            }
            if kind == EntryKind::Dir && locked_dirs.contains(&r) {
                tree.descend(r);
                continue;
            }
            // A locked file that is not a regular file was reported when
            // it was read.
            if !known_file {
                out.push(other(dir, dir.join(&r), "is not in the lock"));
            }
        }
    }
}

/// Fetched files laid out by [`Cache::stage`]; removed when dropped
/// before [`Cache::store`] installs them.
#[derive(Debug)]
pub struct Staged {
    tree: NewTree,
    files: BTreeSet<String>,
    executable: BTreeSet<String>,
}

impl Staged {
    /// Writes `fetched`'s files into `tree`, with their execute bits.
    fn lay_out(tree: NewTree, fetched: &Fetched) -> Result<Staged> {
        for (file, bytes) in &fetched.files {
            let mode = if fetched.executable.contains(file) {
                0o755
            } else {
                0o644
            };
            tree.add(Path::new(file), bytes, mode, true)
                .map_err(|e| write_fail(&tree.path().join(file), e))?;
        }
        Ok(Staged {
            tree,
            files: fetched.files.keys().cloned().collect(),
            executable: fetched.executable.clone(),
        })
    }

    /// The directory that holds the files, one directory per skill.
    pub fn path(&self) -> &Path {
        self.tree.path()
    }

    /// Does it hold exactly `fetched`'s files (a source that lost a skill
    /// to another, `[prefer]`, holds fewer)?
    fn holds(&self, fetched: &Fetched) -> bool {
        self.executable == fetched.executable && self.files.iter().eq(fetched.files.keys())
    }
}

/// A cache entry open for reading ([`Cache::open_entry`]): every file read
/// beneath it, never through a symbolic link, at most a source's cap.
#[derive(Debug)]
pub struct EntryFiles {
    root: crate::source::Root,
    dir: PathBuf,
}

impl EntryFiles {
    /// The bytes of its file `file` (`SKILL/PATH`), or why not, for a
    /// person.
    pub fn read(&self, file: &str) -> std::result::Result<Vec<u8>, String> {
        let max = FileLimits::default().max_total_bytes;
        self.root.read(Path::new(file), max).map_err(|r| match r {
            crate::source::confine::Refusal::Io(e) => format!("cannot read: {e}"),
            r => r.describe(&self.dir.join(file), "cache"),
        })
    }
}

/// The lock [`Cache::lock`] took, held until dropped.
#[derive(Debug)]
pub struct CacheLock {
    _held: Held,
}

/// The error for writing `path` in the cache.
fn write_fail(path: &Path, e: std::io::Error) -> Error {
    Error::Write {
        path: PathBuf::from(crate::text::path(path)),
        source: e,
    }
}
