//! The output directory, found without following a symlink where one may
//! have been committed, opened once, locked, and then used only through its
//! descriptor.
//!
//! An output path often lies inside a repository that takes pull requests
//! (`--out build/skills`, `--check manifests`), and a symlink committed
//! there (`build -> /elsewhere`, `manifests/x -> /`) would send writes,
//! reads and walks anywhere. So:
//!
//! - **The path** is reached as every root is ([`crate::beneath`]): below
//!   the boundary (the root of the git work tree holding the working
//!   directory, else the working directory) each component must be a real
//!   directory, opened with `O_NOFOLLOW`, and a symlink is refused by name;
//!   above it, the person's links are taken as given. Missing directories
//!   on the way are created. Unlike a layer, the output directory itself
//!   may be a symlink when it lies above the boundary.
//! - **Below the directory,** every operation is made relative to its
//!   descriptor (`openat`, `mkdirat`, `renameat`, `unlinkat`) and never
//!   follows a symlink, so swapping a path component meanwhile gains
//!   nothing. Files are replaced by writing a temporary file (created
//!   exclusively) and renaming it over the old one; in an existing
//!   directory, the temporary files are made in a scratch directory of the
//!   export's own at its top, claimed as a staging directory is, so that an
//!   export killed midway leaves them only there, where the next export
//!   finds them and removes them ([`crate::beneath::write::Scratch`]).
//! - **Walks** never follow a symlink (it is a leaf, reported as one), list
//!   hidden entries below a skill's directory like any other (export never
//!   writes one there), and are bounded by the entries they visit, not only
//!   by what they keep.
//! - **Locks.** An export holds an exclusive `flock` on the directory (on its
//!   parent while the directory does not exist yet), `--check` a shared one,
//!   so two exports into one directory never interleave: the second waits.
//! - **A new directory** is built beside its place under a staging name and
//!   renamed into it whole, so it appears complete or not at all. The
//!   export holds a `flock` on its staging directory while it lives; another
//!   export removes a staging directory left behind only when it can take
//!   that lock itself (never by a process id, which means nothing in
//!   another PID namespace).

use std::cell::RefCell;
use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::{Mutex, OnceLock};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::record::Digest;
pub use crate::beneath::EntryKind;
use crate::beneath::claim::{self, Claim};
use crate::beneath::lock::{Busy, Share, Wait};
use crate::beneath::walk::{Tree, Unlisted};
use crate::beneath::write::{self, Scratch};
use crate::beneath::{self, Boundary, Stop, kind_at, link_target, open_dir_at};
use crate::digest::Hasher;
use crate::error::{Error, Result};
use crate::text;

/// How staging directories are named: this, the process id, `-`, random.
pub(crate) const STAGING_PREFIX: &str = ".bernstein-export-";

/// The most entries one listing of the output directory visits.
pub(crate) const MAX_ENTRIES: usize = 1_000_000;

/// The most entries a walk below one skill's directory visits.
pub(crate) const MAX_SKILL_ENTRIES: usize = 10_000;

/// The deepest a walk or a removal goes below the directory it starts at.
pub(crate) const MAX_DEPTH: usize = beneath::walk::MAX_DEPTH;

/// What a path of the output directory holds, against what export would
/// write there and what it wrote before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Probe {
    /// Nothing.
    Missing,
    /// A regular file.
    File {
        /// Whose bytes it holds.
        holds: Holds,
        /// Its execute bit.
        executable: bool,
    },
    /// Something export never writes (a symlink, a directory, a FIFO), or
    /// such a thing in place of one of its parent directories; in words.
    Blocked(String),
}

/// Whose bytes a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Holds {
    /// Exactly the expected bytes.
    New,
    /// The known content of this index.
    Known(usize),
    /// Anything else.
    Other,
}

/// Why a path below the directory could not be reached.
enum Reach {
    /// A parent directory is missing.
    Missing,
    /// Something other than a directory is in the way, in words.
    Blocked(String),
    /// The operating system refused.
    Io(std::io::Error),
}

/// A directory descriptor: the output directory's own, or one opened below.
enum DirFd<'a> {
    Root(BorrowedFd<'a>),
    Owned(OwnedFd),
    Shared(Rc<OwnedFd>),
}

impl AsFd for DirFd<'_> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            DirFd::Root(fd) => *fd,
            DirFd::Owned(fd) => fd.as_fd(),
            DirFd::Shared(fd) => fd.as_fd(),
        }
    }
}

/// The most directories a [`Cache`] keeps open.
const MAX_CACHED: usize = 64;

/// Directories below the output directory opened while looking at one
/// skill, kept open for its next file (at most `MAX_CACHED`): a skill's
/// files share a few directories, and opening each one once instead of
/// once per file halves the system calls of a check. Single-threaded: one
/// per skill, dropped with it.
#[derive(Default)]
pub(crate) struct Cache {
    dirs: RefCell<Vec<(String, Rc<OwnedFd>)>>,
}

impl Cache {
    fn get(&self, rel: &str) -> Option<Rc<OwnedFd>> {
        self.dirs
            .borrow()
            .iter()
            .find(|(r, _)| r == rel)
            .map(|(_, fd)| fd.clone())
    }

    fn put(&self, rel: &str, fd: OwnedFd) -> Rc<OwnedFd> {
        let fd = Rc::new(fd);
        let mut dirs = self.dirs.borrow_mut();
        if dirs.len() < MAX_CACHED {
            dirs.push((rel.to_owned(), fd.clone()));
        }
        fd
    }
}

/// An output directory, opened and locked; see the module documentation.
#[derive(Debug)]
pub struct OutDir {
    /// The path as the person gave it, for messages.
    given: PathBuf,
    /// The directory written: the output directory, or the staging
    /// directory while a new one is built.
    root: OwnedFd,
    /// The directory holding it.
    parent: OwnedFd,
    /// Its name in `parent`.
    name: OsString,
    /// The staging directory's name in `parent`, while a new one is built.
    staging: Option<OsString>,
    /// Holds the lock until dropped.
    _lock: File,
    stale_removed: Vec<PathBuf>,
    /// The directory's absolute path with no symlink in it (once in place),
    /// checked against its descriptor; `None` when it cannot be known.
    real: Option<PathBuf>,
    /// Where files replacing others are written first, made at the first
    /// such write and removed when the export ends ([`Scratch`]).
    scratch: OnceLock<Scratch>,
    /// Held while the scratch directory is made.
    scratch_made: Mutex<()>,
}

/// The claimed directories in `dir` (shown as `shown`) whose exports are
/// gone, removed ([`claim::sweep`]), as paths to show.
fn swept(dir: BorrowedFd<'_>, shown: &Path, locked: bool) -> Vec<PathBuf> {
    claim::sweep(dir, STAGING_PREFIX, locked, MAX_ENTRIES)
        .into_iter()
        .map(|name| shown.join(name))
        .collect()
}

/// The absolute path of the directory open as `fd` with no symlink in it,
/// found from `path` (which led to it) and checked against the descriptor:
/// `None` when the two disagree (something moved meanwhile) or either
/// cannot be looked at.
fn real_path(path: &Path, fd: BorrowedFd<'_>) -> Option<PathBuf> {
    let real = std::fs::canonicalize(path).ok()?;
    let at = rustix::fs::stat(&real).ok()?;
    let open = rustix::fs::fstat(fd).ok()?;
    (at.st_dev == open.st_dev && at.st_ino == open.st_ino).then_some(real)
}

fn io(e: Errno) -> std::io::Error {
    std::io::Error::from(e)
}

/// Whether an export writes or a check reads: what a refusal says.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    Write,
    Read,
}

impl Access {
    fn into_dir(self) -> &'static str {
        match self {
            Access::Write => "export writes only into a real directory (nothing was written)",
            Access::Read => "export --check reads manifests only from a real directory",
        }
    }

    fn through(self, boundary: &Path) -> String {
        match self {
            Access::Write => format!(
                "export writes only through real directories below {} (nothing was written)",
                text::path(boundary)
            ),
            Access::Read => format!(
                "export --check reads manifests only through real directories below {}",
                text::path(boundary)
            ),
        }
    }
}

/// A failure to open or create `path` for export.
fn write_error(path: &Path, source: std::io::Error) -> Error {
    Error::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// Why the output directory `given` cannot be opened with `access`, from
/// where the walk to it stopped: a symlink (the directory itself, or one
/// on the way inside `boundary_dir`), something that is not a directory,
/// an I/O error, or nothing there.
fn refusal(stop: Stop, given: &Path, access: Access, boundary_dir: &Path) -> Error {
    match stop {
        Stop::Symlink { at, target, last } => Error::Refused {
            kind: crate::error::ErrorKind::Unsafe,
            path: None,
            message: if last {
                format!(
                    "{}: is a symbolic link to {}; {}",
                    text::path(given),
                    text::path(&target),
                    access.into_dir()
                )
            } else {
                format!(
                    "{}: {} is a symbolic link to {}; {}",
                    text::path(given),
                    text::path(&at),
                    text::path(&target),
                    access.through(boundary_dir)
                )
            },
        },
        Stop::NotDir { at, last } => write_error(
            if last { given } else { &at },
            std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                "exists and is not a directory",
            ),
        ),
        Stop::Io { at, error } => write_error(&at, error),
        Stop::Missing => write_error(given, std::io::ErrorKind::NotFound.into()),
    }
}

/// Takes `file`'s lock, exclusive or shared; when another process holds
/// it, calls `on_wait` first, then waits.
fn lock(file: &File, shared: bool, given: &Path, on_wait: Option<&super::OnWait>) -> Result<()> {
    let share = if shared {
        Share::Shared
    } else {
        Share::Exclusive
    };
    let say = || {
        if let Some(f) = on_wait {
            f(given);
        }
    };
    beneath::lock::take(file.as_fd(), share, Wait::Block(Some(&say))).map_err(|busy| Error::Write {
        path: given.to_path_buf(),
        source: match busy {
            Busy::Io(e) => e,
            Busy::Held => std::io::Error::from(std::io::ErrorKind::WouldBlock),
        },
    })
}

/// Removes the directory `leaf` (at `rel`) in `dir` if it is empty: even
/// forced, export never deletes what a directory in its way holds.
fn remove_empty_dir(dir: impl AsFd, leaf: &str, rel: &str) -> std::io::Result<()> {
    match rustix::fs::unlinkat(dir, leaf, AtFlags::REMOVEDIR) {
        Ok(()) => Ok(()),
        Err(Errno::NOTEMPTY | Errno::EXIST) => Err(std::io::Error::new(
            std::io::ErrorKind::DirectoryNotEmpty,
            format!(
                "{} is a directory that is not empty; export does not delete what it holds (move it away)",
                text::escape(rel)
            ),
        )),
        Err(e) => Err(io(e)),
    }
}

impl OutDir {
    /// Opens `dir` for an export: finds it as the module documentation
    /// says (creating missing parents), removes stale staging directories
    /// beside it, and locks it, calling `on_wait` before waiting for
    /// another export. A `dir` that does not exist gets a staging directory
    /// that [`OutDir::finish`] renames into place.
    pub fn open(dir: &Path, on_wait: Option<&super::OnWait>) -> Result<OutDir> {
        let env = crate::source::Env::from_process();
        Self::open_with(dir, None, env.cwd.as_deref(), on_wait)
    }

    /// [`OutDir::open`] with another boundary than the default (the root
    /// of the git work tree holding the working directory, else the
    /// working directory).
    pub(crate) fn open_with(
        dir: &Path,
        boundary: Option<&Path>,
        cwd: Option<&Path>,
        on_wait: Option<&super::OnWait>,
    ) -> Result<OutDir> {
        Ok(Self::open_as(dir, Access::Write, boundary, cwd, on_wait)?
            .expect("a write creates what is missing"))
    }

    /// Opens `dir` for `export --check`, with a shared lock; `None` when it
    /// does not exist.
    pub(crate) fn open_read(
        dir: &Path,
        boundary: Option<&Path>,
        cwd: Option<&Path>,
        on_wait: Option<&super::OnWait>,
    ) -> Result<Option<OutDir>> {
        Self::open_as(dir, Access::Read, boundary, cwd, on_wait)
    }

    /// Opens `dir` (for a write, creating what is missing of it) through no
    /// symlink below `boundary` (by default the git work tree the command
    /// runs in, else the working directory), and locks it: shared to read,
    /// exclusive to write. `None` when reading a directory that does not
    /// exist.
    fn open_as(
        dir: &Path,
        access: Access,
        boundary: Option<&Path>,
        cwd: Option<&Path>,
        on_wait: Option<&super::OnWait>,
    ) -> Result<Option<OutDir>> {
        // `m/` and `m/.` name `m` itself.
        let given: PathBuf = dir.components().collect();
        let Some(cwd) = cwd else {
            let source = std::io::Error::other("no working directory");
            return Err(write_error(&given, source));
        };
        let bound = match boundary {
            Some(b) => Boundary::at(b, Some(cwd)),
            None => Boundary::of_cwd(Some(cwd)),
        };
        let boundary_dir = bound.dir().unwrap_or(cwd).to_path_buf();
        let refuse = |stop: Stop| refusal(stop, &given, access, &boundary_dir);
        let route = bound.route(&bound.absolute(&given)).ok_or_else(|| {
            let source = std::io::Error::other("cannot export into the root directory");
            write_error(&given, source)
        })?;
        let mut opened = match beneath::open(&route, access == Access::Write, true) {
            Ok(opened) => opened,
            Err(Stop::Missing) if access == Access::Read => return Ok(None),
            Err(stop) => return Err(refuse(stop)),
        };
        let shown_parent = given
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let shared = access == Access::Read;
        let place = opened.parent_path.join(&opened.name);
        let (root, parent_lock, stale_removed) = match opened.dir.take() {
            Some(root) => (root, None, None),
            None if shared => return Ok(None),
            None => {
                // A new directory: lock its parent, then look again
                // (another export may have created it meanwhile).
                let parent_lock = opened.parent.try_clone().map(File::from);
                let parent_lock = parent_lock.map_err(|e| write_error(&given, e))?;
                lock(&parent_lock, false, &given, on_wait)?;
                let stale_removed = swept(opened.parent.as_fd(), &shown_parent, true);
                match opened.reopen().map_err(refuse)? {
                    Some(root) => (root, Some(parent_lock), Some(stale_removed)),
                    None => return Self::stage(given, opened, parent_lock, stale_removed),
                }
            }
        };
        let lock_file = File::from(root.try_clone().map_err(|e| write_error(&given, e))?);
        lock(&lock_file, shared, &given, on_wait)?;
        drop(parent_lock);
        let mut stale_removed = match stale_removed {
            Some(removed) => removed,
            None if shared => Vec::new(),
            None => swept(opened.parent.as_fd(), &shown_parent, false),
        };
        if !shared {
            // What an export killed while writing into this directory left
            // of its own: its scratch directory, unclaimed now that it is
            // gone (this export holds the directory's lock).
            stale_removed.extend(swept(root.as_fd(), &given, true));
        }
        let real = real_path(&place, root.as_fd());
        Ok(Some(OutDir {
            given,
            root,
            parent: opened.parent,
            name: opened.name,
            staging: None,
            _lock: lock_file,
            stale_removed,
            real,
            scratch: OnceLock::new(),
            scratch_made: Mutex::new(()),
        }))
    }

    /// A staging directory for the new directory `opened.name`, built
    /// beside its place while `parent_lock` is held.
    fn stage(
        given: PathBuf,
        opened: beneath::Opened,
        parent_lock: File,
        stale_removed: Vec<PathBuf>,
    ) -> Result<Option<OutDir>> {
        let write_error = |source| Error::Write {
            path: given.clone(),
            source,
        };
        let beneath::Opened {
            parent,
            parent_path,
            name,
            ..
        } = opened;
        // The claim on the staging directory, held until this export ends
        // (`claim::sweep`). Nobody else can hold it: the parent's lock keeps
        // every cleanup out while the directory is new.
        let (staging, root) = Claim::create(parent.as_fd(), STAGING_PREFIX, 0o777)
            .map_err(write_error)?
            .into_parts();
        // Where it will be, once renamed into place.
        let real = real_path(&parent_path, parent.as_fd()).map(|p| p.join(&name));
        Ok(Some(OutDir {
            given,
            root,
            parent,
            name,
            staging: Some(staging),
            _lock: parent_lock,
            stale_removed,
            real,
            scratch: OnceLock::new(),
            scratch_made: Mutex::new(()),
        }))
    }

    /// The path as given, for messages.
    pub fn given(&self) -> &Path {
        &self.given
    }

    /// `rel` below the directory as the person would name it.
    pub fn shown(&self, rel: &str) -> PathBuf {
        self.given.join(rel)
    }

    /// Is this a new directory, built in staging until [`OutDir::finish`]?
    pub(crate) fn is_new(&self) -> bool {
        self.staging.is_some()
    }

    /// The directory's absolute path with no symlink in it (where it will
    /// be, for a new one), checked against its descriptor; `None` when it
    /// cannot be known. Export's ledger is kept by it.
    pub(crate) fn real_path(&self) -> Option<&Path> {
        self.real.as_deref()
    }

    /// The staging directories of interrupted exports removed when opening.
    pub fn stale_removed(&self) -> &[PathBuf] {
        &self.stale_removed
    }

    /// The directory holding `rel` and `rel`'s last component: every
    /// directory on the way opened without following a symlink; missing
    /// ones created when `create`; anything else in the way removed first
    /// when `replace` (a symlink is removed itself).
    fn parent_of<'r>(
        &self,
        rel: &'r str,
        create: bool,
        replace: bool,
        cache: Option<&Cache>,
    ) -> std::result::Result<(DirFd<'_>, &'r str), Reach> {
        let (dirs, leaf) = match rel.rsplit_once('/') {
            Some((dirs, leaf)) => (Some(dirs), leaf),
            None => (None, rel),
        };
        let mut cur = DirFd::Root(self.root.as_fd());
        let Some(dirs) = dirs else {
            return Ok((cur, leaf));
        };
        if let Some(fd) = cache.and_then(|c| c.get(dirs)) {
            return Ok((DirFd::Shared(fd), leaf));
        }
        let mut upto = 0;
        for part in dirs.split('/') {
            upto += part.len() + 1;
            if let Some(fd) = cache.and_then(|c| c.get(&rel[..upto - 1])) {
                cur = DirFd::Shared(fd);
                continue;
            }
            let next = match open_dir_at(&cur, part, false) {
                Ok(fd) => fd,
                Err(Errno::NOENT) if create => {
                    match rustix::fs::mkdirat(&cur, part, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(Reach::Io(io(e))),
                    }
                    open_dir_at(&cur, part, false).map_err(|e| Reach::Io(io(e)))?
                }
                Err(Errno::NOENT) => return Err(Reach::Missing),
                Err(e @ (Errno::LOOP | Errno::NOTDIR)) => {
                    let kind = kind_at(&cur, part).map_err(|_| Reach::Io(io(e)))?;
                    if !replace {
                        let mut what = format!("{} is {}", &rel[..upto - 1], kind.words());
                        if kind == EntryKind::Symlink {
                            what.push_str(&format!(" to {}", text::path(&link_target(&cur, part))));
                        }
                        return Err(Reach::Blocked(what));
                    }
                    rustix::fs::unlinkat(&cur, part, AtFlags::empty())
                        .map_err(|e| Reach::Io(io(e)))?;
                    rustix::fs::mkdirat(&cur, part, Mode::from_raw_mode(0o777))
                        .map_err(|e| Reach::Io(io(e)))?;
                    open_dir_at(&cur, part, false).map_err(|e| Reach::Io(io(e)))?
                }
                Err(e) => return Err(Reach::Io(io(e))),
            };
            cur = match cache {
                Some(c) => DirFd::Shared(c.put(&rel[..upto - 1], next)),
                None => DirFd::Owned(next),
            };
        }
        Ok((cur, leaf))
    }

    /// What is at `rel`, not following a symlink; `None` when nothing.
    pub(crate) fn kind(&self, rel: &str) -> Option<EntryKind> {
        let (dir, leaf) = self.parent_of(rel, false, false, None).ok()?;
        kind_at(&dir, leaf).ok()
    }

    /// Compares the file at `rel` with `expected` (what export would write)
    /// and the `known` contents export wrote there before (digest and
    /// size), reading it only when its size matches one of them, at most
    /// that many bytes, and hashing only what is not `expected`.
    pub(crate) fn probe(
        &self,
        rel: &str,
        expected: Option<&[u8]>,
        known: &[(Digest, u64)],
        cache: &Cache,
    ) -> Probe {
        let (dir, leaf) = match self.parent_of(rel, false, false, Some(cache)) {
            Ok(x) => x,
            Err(Reach::Missing) => return Probe::Missing,
            Err(Reach::Blocked(what)) => return Probe::Blocked(what),
            Err(Reach::Io(e)) => return Probe::Blocked(format!("{rel} cannot be read: {e}")),
        };
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
        let fd = match rustix::fs::openat(&dir, leaf, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Probe::Missing,
            Err(Errno::LOOP) => {
                return Probe::Blocked(format!(
                    "{rel} is a symbolic link to {}",
                    text::path(&link_target(&dir, leaf))
                ));
            }
            Err(e) => return Probe::Blocked(format!("{rel} cannot be read: {}", io(e))),
        };
        let Ok(st) = rustix::fs::fstat(&fd) else {
            return Probe::Blocked(format!("{rel} cannot be read"));
        };
        let kind = EntryKind::of(FileType::from_raw_mode(st.st_mode));
        if kind != EntryKind::File {
            return Probe::Blocked(format!("{rel} is {}", kind.words()));
        }
        let executable = st.st_mode & 0o111 != 0;
        let size = st.st_size as u64;
        let other = Probe::File {
            holds: Holds::Other,
            executable,
        };
        let mut new = expected.filter(|e| e.len() as u64 == size);
        let candidates: Vec<usize> = (0..known.len()).filter(|&i| known[i].1 == size).collect();
        if new.is_none() && candidates.is_empty() {
            return other;
        }
        let mut file = File::from(fd);
        let mut buf = vec![0u8; (size as usize).clamp(1, 64 * 1024) + 1];
        let mut hasher = new.is_none().then(Hasher::new);
        let mut at = 0usize;
        loop {
            let n = match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return other,
            };
            if (at + n) as u64 > size {
                // It grew since the fstat: not a file anyone wrote whole.
                return other;
            }
            if let Some(e) = new
                && e[at..at + n] != buf[..n]
            {
                new = None;
                if candidates.is_empty() {
                    return other;
                }
                let mut h = Hasher::new();
                h.update(&e[..at]);
                hasher = Some(h);
            }
            if let Some(h) = &mut hasher {
                h.update(&buf[..n]);
            }
            at += n;
            // A short read of a regular file is its end: no read for the 0.
            if at as u64 == size && n < buf.len() {
                break;
            }
        }
        if at as u64 != size {
            return other;
        }
        if new.is_some() {
            return Probe::File {
                holds: Holds::New,
                executable,
            };
        }
        let Some(digest) = hasher.map(Hasher::finish) else {
            return other;
        };
        let holds = candidates
            .into_iter()
            .find(|&i| known[i].0 == digest)
            .map_or(Holds::Other, Holds::Known);
        Probe::File { holds, executable }
    }

    /// The regular file at `rel`, if it is one of at most `cap` bytes.
    pub(crate) fn read(&self, rel: &str, cap: u64, cache: Option<&Cache>) -> Option<Vec<u8>> {
        let (mut file, size) = self.open_file(rel, cache)?;
        if size > cap {
            return None;
        }
        let out = beneath::read_sized(&mut file, size, cap).ok()?;
        (out.len() as u64 <= cap).then_some(out)
    }

    /// The regular file at `rel`, opened without following a symlink, and
    /// its size.
    pub(crate) fn open_file(&self, rel: &str, cache: Option<&Cache>) -> Option<(File, u64)> {
        let (dir, leaf) = self.parent_of(rel, false, false, cache).ok()?;
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
        let fd = rustix::fs::openat(&dir, leaf, flags, Mode::empty()).ok()?;
        let st = rustix::fs::fstat(&fd).ok()?;
        (FileType::from_raw_mode(st.st_mode) == FileType::RegularFile)
            .then(|| (File::from(fd), st.st_size as u64))
    }

    /// Writes `bytes` to `rel`: created directly in a new directory, else
    /// written to a temporary file beside it and renamed over it. Missing
    /// parent directories are created. With `replace`, a symlink, file or
    /// directory in the way is removed first (never followed); without,
    /// it is an error.
    pub fn write(
        &self,
        rel: &str,
        bytes: &[u8],
        executable: bool,
        replace: bool,
    ) -> std::io::Result<()> {
        self.write_with(rel, executable, replace, |f| f.write_all(bytes))
    }

    /// [`OutDir::write`] of what `fill` writes into the file (buffered), for
    /// contents too large to build in memory first.
    pub(crate) fn write_with(
        &self,
        rel: &str,
        executable: bool,
        replace: bool,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let fill = |file: &mut File| -> std::io::Result<()> {
            let mut w = std::io::BufWriter::with_capacity(64 * 1024, file);
            fill(&mut w)?;
            w.flush()
        };
        let (dir, leaf) = self
            .parent_of(rel, true, replace, None)
            .map_err(|r| match r {
                Reach::Missing => std::io::Error::from(std::io::ErrorKind::NotFound),
                Reach::Blocked(what) => {
                    std::io::Error::new(std::io::ErrorKind::NotADirectory, what)
                }
                Reach::Io(e) => e,
            })?;
        let mode = if executable { 0o777 } else { 0o666 };
        if self.staging.is_some() {
            return write::create_new(dir.as_fd(), leaf, mode, fill);
        }
        if replace && kind_at(&dir, leaf) == Ok(EntryKind::Dir) {
            remove_empty_dir(&dir, leaf, rel)?;
        }
        self.scratch()?.replace(dir.as_fd(), leaf, mode, fill)
    }

    /// The scratch directory, made at the first call.
    fn scratch(&self) -> std::io::Result<&Scratch> {
        if let Some(s) = self.scratch.get() {
            return Ok(s);
        }
        let _made = self.scratch_made.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = self.scratch.get() {
            return Ok(s);
        }
        let made = Scratch::create(self.root.as_fd(), STAGING_PREFIX)?;
        Ok(self.scratch.get_or_init(|| made))
    }

    /// Removes the file (or symlink) at `rel`, never following one; with
    /// `replace`, an empty directory there too. Returns whether something
    /// went.
    pub fn remove(&self, rel: &str, replace: bool) -> std::io::Result<bool> {
        let (dir, leaf) = match self.parent_of(rel, false, false, None) {
            Ok(x) => x,
            Err(Reach::Io(e)) => return Err(e),
            // Nothing there, or not through a real directory: nothing of ours.
            Err(_) => return Ok(false),
        };
        match rustix::fs::unlinkat(&dir, leaf, AtFlags::empty()) {
            Ok(()) => Ok(true),
            Err(Errno::NOENT) => Ok(false),
            Err(Errno::ISDIR | Errno::PERM) if replace => {
                remove_empty_dir(&dir, leaf, rel).map(|()| true)
            }
            Err(e) => Err(io(e)),
        }
    }

    /// Removes the directory `rel` if it is empty; returns whether it did.
    pub(crate) fn remove_dir_if_empty(&self, rel: &str) -> bool {
        match self.parent_of(rel, false, false, None) {
            Ok((dir, leaf)) => rustix::fs::unlinkat(&dir, leaf, AtFlags::REMOVEDIR).is_ok(),
            Err(_) => false,
        }
    }

    /// The entries of the directory itself, hidden ones left out, with what
    /// each is; an error naming the directory past [`MAX_ENTRIES`].
    pub(crate) fn list(&self) -> Result<Vec<(OsString, EntryKind)>> {
        let mut budget = MAX_ENTRIES;
        let mut all =
            beneath::walk::entries(&self.root, &mut budget).map_err(|source| Error::Write {
                path: self.given.clone(),
                source: if budget == 0 {
                    std::io::Error::other(format!(
                        "holds more than {MAX_ENTRIES} entries; refusing to list them"
                    ))
                } else {
                    source
                },
            })?;
        all.retain(|(name, _)| !name.as_bytes().starts_with(b"."));
        Ok(all)
    }

    /// Everything below directory `rel` (files, symlinks, other, and the
    /// directories as [`EntryKind::Dir`]), as paths relative to the output
    /// directory, sorted;
    /// hidden entries included (export never writes one inside a skill's
    /// directory, so each is a file planted there: `.setup.sh`, a `.git`
    /// directory's files); never following a symlink. Visits at most
    /// `budget` entries and [`MAX_DEPTH`] levels; the flag says whether it
    /// stopped early.
    pub(crate) fn leaves(
        &self,
        rel: &str,
        budget: usize,
        cache: &Cache,
    ) -> (Vec<(String, EntryKind)>, bool) {
        let mut out = Vec::new();
        let mut cut = false;
        let Ok((dir, leaf)) = self.parent_of(rel, false, false, Some(cache)) else {
            return (out, cut);
        };
        let Ok(fd) = open_dir_at(&dir, leaf, false) else {
            return (out, cut);
        };
        // Every directory it opens goes into `cache`, for the files looked
        // at next. Listing moves a descriptor's position, which opening
        // beneath it does not use; the skill's directory, just opened, is
        // listed from its own descriptor.
        let top = cache.put(rel, fd);
        let mut tree = Tree::of_unlisted(top.as_fd(), budget, MAX_DEPTH - 1);
        while let Some((sub, listed)) = tree.next_open_dir() {
            let here = if sub.as_os_str().is_empty() {
                rel.to_owned()
            } else {
                format!("{rel}/{}", sub.to_string_lossy())
            };
            let found = match listed {
                Ok((fd, found)) => {
                    if let Some(fd) = fd {
                        cache.put(&here, fd);
                    }
                    found
                }
                // A directory below that cannot be opened is not one export
                // writes into.
                Err(Unlisted::Io(_)) if !sub.as_os_str().is_empty() => {
                    out.push((here, EntryKind::Other));
                    continue;
                }
                Err(Unlisted::TooDeep | Unlisted::Io(_)) => {
                    cut = true;
                    continue;
                }
                Err(Unlisted::TooMany) => {
                    cut = true;
                    break;
                }
            };
            for (name, kind) in found {
                let path = format!("{here}/{}", name.to_string_lossy());
                if kind != EntryKind::Dir {
                    out.push((path, kind));
                    continue;
                }
                if sub.components().count() + 1 >= MAX_DEPTH {
                    cut = true;
                    continue;
                }
                out.push((path, EntryKind::Dir));
                tree.descend(sub.join(&name));
            }
        }
        out.sort();
        (out, cut)
    }

    /// Puts a new directory in its place, whole: a rename that fails if
    /// anything appeared there meanwhile (nothing is moved into it).
    pub fn finish(mut self) -> Result<()> {
        self.put_in_place()
    }

    /// [`OutDir::finish`], keeping the directory open and locked: what
    /// export still writes about it (its ledger) is written under the lock.
    pub(crate) fn put_in_place(&mut self) -> Result<()> {
        let Some(staging) = self.staging.take() else {
            return Ok(());
        };
        let renamed = write::rename_new(
            self.parent.as_fd(),
            &staging,
            self.parent.as_fd(),
            &self.name,
        );
        let result = match renamed {
            Ok(()) => return Ok(()),
            Err(Errno::EXIST | Errno::NOTEMPTY) => Err(Error::Refused {
                kind: crate::error::ErrorKind::Busy,
                path: None,
                message: format!(
                    "{}: appeared while the export was being written; nothing was put in it (run the export again)",
                    text::path(&self.given)
                ),
            }),
            Err(e) => Err(Error::Write {
                path: self.given.clone(),
                source: io(e),
            }),
        };
        let mut budget = usize::MAX;
        let _ = beneath::walk::remove_tree(&self.parent, &staging, &mut budget, MAX_DEPTH);
        result
    }
}

impl Drop for OutDir {
    fn drop(&mut self) {
        if let Some(staging) = &self.staging {
            let mut budget = usize::MAX;
            let _ = beneath::walk::remove_tree(&self.parent, staging, &mut budget, MAX_DEPTH);
        }
        if let Some(scratch) = self.scratch.take() {
            scratch.remove(self.root.as_fd());
        }
    }
}
