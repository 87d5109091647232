//! The one file-system layer: every walk beneath a root, every write, and
//! every lock the crate makes goes through this module, and no other module
//! makes the standard library's walking, writing, removing or locking calls
//! by path (`tests/it/repo/layout.rs` fails if one does; its allow-list
//! holds the one exception, with the reason). What it owns:
//!
//! - **Reaching a root** a pull request may have laid out: the boundary,
//!   the route to the root, and the walk of that route ([`open`]; below).
//! - **Walking beneath a root with caps** ([`walk`]): listings bounded by
//!   the entries they visit ([`list`], [`walk::entries`],
//!   [`walk::entries_at`]), and one walker of trees, breadth first, which
//!   its caller steers, bounded by entries and depth ([`walk::Tree`]: the
//!   cache's verify, the export's look at a skill's directory, and
//!   removals, [`walk::remove_tree`]), never following a symlink.
//! - **Looking at an entry without following it**: from a descriptor
//!   ([`kind_at`]) in a walk, by path ([`kind_of`]) for a path a person or
//!   a project names.
//! - **Reading a regular file** at most a cap, whatever its size claims
//!   ([`read_sized`]); what may be read beneath a layer is
//!   [`crate::source`]'s `confine` policy, on these calls.
//! - **Writing atomically** ([`write`]): a temporary file created
//!   exclusively, then renamed over its place ([`write::replace_beside`],
//!   [`write::write_atomic`], an export's [`write::Scratch`]); a file
//!   created only where nothing is ([`write::create_new_at`]); a tree built
//!   whole in a claimed directory and renamed into place, never over
//!   anything ([`write::NewTree`], [`write::rename_new`]: the cache's
//!   entries, a fetched source checked as a layer); directories a person
//!   named ([`write::make_dirs`]).
//! - **Locking, waiting or refusing** ([`lock`]): `flock` on an open file
//!   or directory, the one kind of lock the tool takes, and lock files
//!   opened without following a symlink.
//! - **Directories of the tool's own** ([`private`]: the state and the
//!   cache, made with mode 0700 and checked as the person's) and
//!   **directories a run claims while it lives** ([`claim`]: staging and
//!   scratch directories, swept once their run is gone).
//!
//! Two policies sit on top: reading a layer ([`crate::source`]'s `confine`:
//! symlinks that stay beneath the root are followed, hidden entries and
//! hard links refused) and writing an output directory ([`crate::export`]'s
//! `outdir`: nothing below it is ever followed, missing parents are
//! created, everything is locked). Each makes its descriptor-relative calls
//! on the descriptors this module opened.
//!
//! What both share:
//!
//! - **The boundary** ([`Boundary`]): the root of the git work tree the
//!   command runs in, else its working directory. Paths below it are what a
//!   pull request can commit; paths above it are the person's own (a home
//!   directory arranged with symlinks is normal).
//! - **The route** ([`Boundary::route`]): a path is made absolute against
//!   [`crate::source::Env::cwd`] (never the process's own), `..` resolved
//!   as written, as `cd` does. Outside the boundary as written, the person's
//!   links are followed until the path enters it. From there every
//!   component is opened with `O_NOFOLLOW` from the descriptor of the one
//!   before ([`open`]), so a symlink below the boundary is refused by name
//!   and swapping a component meanwhile gains nothing.
//! - **Entries** are looked at without following a symlink ([`kind_at`],
//!   [`list`]), and a listing is bounded by the entries it visits.

use std::ffi::{OsStr, OsString};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, CWD, FileType, Mode, OFlags, RawDir};
use rustix::io::Errno;

pub(crate) mod claim;
pub(crate) mod lock;
pub(crate) mod private;
pub(crate) mod walk;
pub(crate) mod write;

/// What an entry is, never following a symlink: for a layer's files, and
/// for what the output directory holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum EntryKind {
    /// A directory.
    Dir,
    /// A regular file.
    File,
    /// A symbolic link.
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

impl EntryKind {
    pub(crate) fn of(t: FileType) -> EntryKind {
        match t {
            FileType::Directory => EntryKind::Dir,
            FileType::RegularFile => EntryKind::File,
            FileType::Symlink => EntryKind::Symlink,
            _ => EntryKind::Other,
        }
    }

    /// The entry in words, after "is" (also its `Display`).
    pub fn words(self) -> &'static str {
        match self {
            EntryKind::Dir => "a directory",
            EntryKind::File => "a file",
            EntryKind::Symlink => "a symbolic link",
            EntryKind::Other => "not a regular file",
        }
    }
}

impl std::fmt::Display for EntryKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.words())
    }
}

/// Where the paths a pull request can commit begin: the root of the git
/// work tree the command runs in (the nearest directory, from the working
/// directory up, that holds a `.git` entry), else the working directory.
/// Below it, no component of a layer's or an output directory's path may
/// be a symlink.
#[derive(Debug, Clone, Default)]
pub(crate) struct Boundary {
    dir: Option<PathBuf>,
    /// The working directory relative paths are taken from.
    cwd: Option<PathBuf>,
}

impl Boundary {
    /// The boundary for a command run in `cwd` (an absolute, real path);
    /// none without one.
    pub(crate) fn of_cwd(cwd: Option<&Path>) -> Boundary {
        let Some(cwd) = cwd else {
            return Boundary::default();
        };
        Boundary {
            dir: Some(work_tree_of(cwd).unwrap_or(cwd).to_path_buf()),
            cwd: Some(cwd.to_path_buf()),
        }
    }

    /// The boundary at `dir` (relative to `cwd`) instead of the default.
    pub(crate) fn at(dir: &Path, cwd: Option<&Path>) -> Boundary {
        let cwd = cwd.map(Path::to_path_buf);
        let dir = normalize(&cwd.clone().unwrap_or_default().join(dir));
        Boundary {
            dir: Some(dir),
            cwd,
        }
    }

    #[cfg(test)]
    /// No boundary, for tests: only the last component is checked.
    pub fn none() -> Boundary {
        Boundary {
            dir: None,
            cwd: std::env::current_dir().ok(),
        }
    }

    /// The boundary directory, if any.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The working directory, if any.
    pub(crate) fn cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    /// `path` made absolute against the working directory, with `.` and
    /// `..` resolved lexically (the working directory is a real path, and
    /// below the boundary no component is allowed to be a symlink, so
    /// lexical is real).
    pub(crate) fn absolute(&self, path: &Path) -> PathBuf {
        let joined = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.cwd.clone().unwrap_or_default().join(path)
        };
        normalize(&joined)
    }

    /// How [`open`] reaches `path` (absolute, normalised); `None` for `/`.
    pub(crate) fn route(&self, path: &Path) -> Option<Route> {
        // The path is the boundary, or lies above it, or there is none: its
        // parent as given.
        let whole = |path: &Path| {
            Some(Route {
                base: path.parent()?.to_path_buf(),
                rest: vec![path.file_name()?.to_owned()],
                last_is_given: true,
            })
        };
        let Some(boundary) = self.dir() else {
            return whole(path);
        };
        if let Ok(rest) = path.strip_prefix(boundary) {
            if rest.as_os_str().is_empty() {
                return whole(path);
            }
            return Some(Route {
                base: boundary.to_path_buf(),
                rest: rest.iter().map(OsStr::to_owned).collect(),
                last_is_given: false,
            });
        }
        // Outside the boundary as written: follow the person's links until
        // the path enters it, if it does.
        let parts: Vec<&OsStr> = path.iter().collect();
        let mut prefix = PathBuf::from(parts.first().copied().unwrap_or(OsStr::new("/")));
        // Where `prefix` really is: one `lstat` per component, and the
        // whole resolution only where a component is a link.
        let mut real = prefix.clone();
        for i in 1..parts.len() {
            let next = prefix.join(parts[i]);
            let next_real = match std::fs::symlink_metadata(&next) {
                Ok(m) if m.file_type().is_symlink() => next.canonicalize(),
                Ok(_) => Ok(real.join(parts[i])),
                Err(e) => Err(e),
            };
            match next_real {
                Ok(r) if r.starts_with(boundary) => {
                    if i + 1 == parts.len() {
                        return whole(&r);
                    }
                    return Some(Route {
                        base: r,
                        rest: parts[i + 1..].iter().map(|p| p.to_os_string()).collect(),
                        last_is_given: false,
                    });
                }
                Ok(r) => {
                    prefix = next;
                    real = r;
                }
                Err(_) => {
                    return Some(Route {
                        base: prefix,
                        rest: parts[i..].iter().map(|p| p.to_os_string()).collect(),
                        last_is_given: false,
                    });
                }
            }
        }
        whole(path)
    }
}

/// The root of the git work tree holding `dir`: the nearest directory
/// with a `.git` entry (a directory, or a file for a worktree), if any.
pub(crate) fn work_tree_of(dir: &Path) -> Option<&Path> {
    dir.ancestors()
        .find(|d| std::fs::symlink_metadata(d.join(".git")).is_ok())
}

/// `.` and `..` resolved lexically, as written (not through links).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// Where a path leads: `base`, opened as given, then each of `rest`
/// (never empty) opened without following a symlink.
#[derive(Debug, Clone)]
pub(crate) struct Route {
    /// The directory the walk starts at.
    pub base: PathBuf,
    /// The components below it.
    pub rest: Vec<OsString>,
    /// The last component is the boundary or lies above it: the person's
    /// to arrange, so a policy may follow it if it is a symlink.
    pub last_is_given: bool,
}

/// Why [`open`] stopped before the last component.
#[derive(Debug)]
pub(crate) enum Stop {
    /// A directory on the way does not exist, and was not to be created.
    Missing,
    /// `at` is a symbolic link (to `target`, as written).
    Symlink {
        at: PathBuf,
        target: PathBuf,
        /// Is `at` the last component?
        last: bool,
    },
    /// `at` exists and is not a directory.
    NotDir { at: PathBuf, last: bool },
    /// The operating system refused at `at`, which is a directory (or
    /// could not be looked at).
    Io { at: PathBuf, error: std::io::Error },
}

/// A route walked: the directory holding its last component, open, and
/// the last component opened as a directory when it exists.
#[derive(Debug)]
pub(crate) struct Opened {
    /// The directory holding the last component.
    pub parent: OwnedFd,
    /// The path that led to it.
    pub parent_path: PathBuf,
    /// The last component's name.
    pub name: OsString,
    /// The last component, opened as a directory; `None` when missing.
    pub dir: Option<OwnedFd>,
    follow_last: bool,
}

impl Opened {
    /// Opens the last component again (it may have been created since).
    pub(crate) fn reopen(&self) -> Result<Option<OwnedFd>, Stop> {
        open_last(
            &self.parent,
            &self.name,
            self.follow_last,
            self.parent_path.join(&self.name),
        )
    }
}

/// Walks `route`: its base opened as given, each component below it with
/// `O_NOFOLLOW`, missing directories on the way created when `create`.
/// The last component is followed if it is a symlink only when the route
/// says it is the person's and `follow_given_last` allows it.
pub(crate) fn open(route: &Route, create: bool, follow_given_last: bool) -> Result<Opened, Stop> {
    let mut at = route.base.clone();
    let mut cur = match open_dir_at(CWD, &route.base, true) {
        Ok(fd) => fd,
        Err(Errno::NOENT | Errno::NOTDIR) if !create => return Err(Stop::Missing),
        Err(e) => {
            return Err(Stop::Io {
                at,
                error: e.into(),
            });
        }
    };
    let (last, dirs) = route.rest.split_last().ok_or(Stop::Missing)?;
    for name in dirs {
        at.push(name);
        cur = match open_dir_at(&cur, name.as_os_str(), false) {
            Ok(fd) => fd,
            Err(Errno::NOENT) if create => {
                match rustix::fs::mkdirat(&cur, name.as_os_str(), Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => {
                        return Err(Stop::Io {
                            at,
                            error: e.into(),
                        });
                    }
                }
                open_dir_at(&cur, name.as_os_str(), false)
                    .map_err(|e| stopped(&cur, name, at.clone(), e, false))?
            }
            Err(Errno::NOENT) => return Err(Stop::Missing),
            Err(e) => return Err(stopped(&cur, name, at, e, false)),
        };
    }
    let follow_last = route.last_is_given && follow_given_last;
    let dir = open_last(&cur, last, follow_last, at.join(last))?;
    Ok(Opened {
        parent: cur,
        parent_path: at,
        name: last.clone(),
        dir,
        follow_last,
    })
}

fn open_last(
    parent: &OwnedFd,
    name: &OsStr,
    follow: bool,
    at: PathBuf,
) -> Result<Option<OwnedFd>, Stop> {
    match open_dir_at(parent, name, follow) {
        Ok(fd) => Ok(Some(fd)),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(stopped(parent, name, at, e, true)),
    }
}

/// Why `name` in `dir` (at `at`) could not be opened as a directory.
fn stopped(dir: &OwnedFd, name: &OsStr, at: PathBuf, e: Errno, last: bool) -> Stop {
    match kind_at(dir, name) {
        Ok(EntryKind::Symlink) => Stop::Symlink {
            target: link_target(dir, name),
            at,
            last,
        },
        Ok(EntryKind::Dir) => Stop::Io {
            at,
            error: e.into(),
        },
        Ok(_) => Stop::NotDir { at, last },
        Err(e) => Stop::Io {
            at,
            error: e.into(),
        },
    }
}

/// Opens the directory `name` in `dir`, following a symlink there only
/// when `follow`.
pub(crate) fn open_dir_at(
    dir: impl AsFd,
    name: impl rustix::path::Arg,
    follow: bool,
) -> rustix::io::Result<OwnedFd> {
    let mut flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    if !follow {
        flags |= OFlags::NOFOLLOW;
    }
    rustix::fs::openat(dir, name, flags, Mode::empty())
}

/// What is at `path`, not following a symlink there (`lstat`): a look at
/// a path the person or a project names (is there a project's
/// `.bernstein/`, a file where one would be written?), never a step of a
/// walk beneath a root, which looks from a descriptor ([`kind_at`]).
pub(crate) fn kind_of(path: &Path) -> std::io::Result<EntryKind> {
    let t = std::fs::symlink_metadata(path)?.file_type();
    Ok(if t.is_dir() {
        EntryKind::Dir
    } else if t.is_file() {
        EntryKind::File
    } else if t.is_symlink() {
        EntryKind::Symlink
    } else {
        EntryKind::Other
    })
}

/// What is at `name` in `dir`, not following a symlink.
pub(crate) fn kind_at(
    dir: impl AsFd,
    name: impl rustix::path::Arg,
) -> rustix::io::Result<EntryKind> {
    let st = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
    Ok(EntryKind::of(FileType::from_raw_mode(st.st_mode)))
}

/// Where the symlink `name` in `dir` points, as written, for messages.
pub(crate) fn link_target(dir: impl AsFd, name: impl rustix::path::Arg) -> PathBuf {
    rustix::fs::readlinkat(dir, name, Vec::new())
        .map(|t| PathBuf::from(OsString::from_vec(t.into_bytes())))
        .unwrap_or_default()
}

/// The bytes of `file`, a regular file whose status gave `size`: at most
/// `max + 1` of them, so that the caller tells a file over `max` by the
/// length (the size is not trusted: the file may have grown since).
///
/// A read that stops short exactly at `size` is the end of the file, so
/// a file read whole costs one `read`, not a second one for the 0 that
/// `read_to_end` waits for; a short read anywhere else (a file system
/// that returns less than asked, a file that changed) reads on.
pub(crate) fn read_sized(
    file: &mut std::fs::File,
    size: u64,
    max: u64,
) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let limit = max.saturating_add(1);
    // Room for a byte past the size: how a file that grew shows.
    let mut bytes = vec![0u8; size.saturating_add(1).min(limit) as usize];
    let mut at = 0;
    loop {
        if at == bytes.len() {
            if at as u64 >= limit {
                break;
            }
            let more = (at as u64).max(8 * 1024).min(limit - at as u64) as usize;
            bytes.resize(at + more, 0);
        }
        match file.read(&mut bytes[at..]) {
            Ok(0) => break,
            Ok(n) => {
                at += n;
                if at as u64 == size && at < bytes.len() {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    bytes.truncate(at);
    Ok(bytes)
}

/// A fresh name: `prefix`, then 12 random hexadecimal digits.
pub(crate) fn random_name(prefix: &str) -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u32(std::process::id());
    format!("{prefix}{:012x}", h.finish() & 0xffff_ffff_ffff)
}

/// Why [`list`] stopped: more entries than its budget.
#[derive(Debug)]
struct OverBudget;

impl std::fmt::Display for OverBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("too many entries")
    }
}

impl std::error::Error for OverBudget {}

/// Did [`list`] stop at its budget (rather than on the operating system's
/// refusal)?
pub(crate) fn is_over_budget(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<OverBudget>())
}

/// One entry of a directory listing.
#[derive(Debug)]
pub(crate) struct Listed {
    pub name: OsString,
    /// What it is, not following a symlink; [`EntryKind::Other`] for an
    /// entry that went before it could be looked at.
    pub kind: EntryKind,
    /// Its inode number, as the listing gives it.
    pub ino: u64,
    /// A regular file's status, when the listing was asked for it.
    pub stat: Option<rustix::fs::Stat>,
}

/// Every entry of the directory `dir` but `.` and `..`, in the order the
/// kernel gives them, with the status of each regular file if `stat_files`
/// (one `fstatat` relative to the directory, not following a symlink); an
/// error once more than `budget` were visited.
///
/// It reads from the descriptor's own position, with no second descriptor
/// or heap buffer per directory: pass one just opened, and list it once (a
/// second listing of the same descriptor finds nothing).
pub(crate) fn list(
    dir: BorrowedFd<'_>,
    budget: &mut usize,
    stat_files: bool,
) -> std::io::Result<Vec<Listed>> {
    let mut buf = [MaybeUninit::<u8>::uninit(); 16 * 1024];
    let mut raw = RawDir::new(dir, &mut buf);
    let mut out = Vec::new();
    while let Some(entry) = raw.next() {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        if *budget == 0 {
            return Err(std::io::Error::other(OverBudget));
        }
        *budget -= 1;
        let name = OsStr::from_bytes(name).to_os_string();
        let ino = entry.ino();
        let mut ty = entry.file_type();
        let mut stat = None;
        if ty == FileType::Unknown || (stat_files && ty == FileType::RegularFile) {
            match rustix::fs::statat(dir, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => {
                    ty = FileType::from_raw_mode(st.st_mode);
                    if stat_files && ty == FileType::RegularFile {
                        stat = Some(st);
                    }
                }
                Err(_) => ty = FileType::Unknown,
            }
        }
        out.push(Listed {
            name,
            kind: EntryKind::of(ty),
            ino,
            stat,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_resolves_dots_as_written() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), Path::new("/a/c"));
        assert_eq!(normalize(Path::new("/../x")), Path::new("/x"));
        assert_eq!(normalize(Path::new("/a/b/")), Path::new("/a/b"));
    }

    #[test]
    fn the_boundary_is_the_nearest_directory_with_a_git_entry() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        std::fs::create_dir_all(repo.join("a/b")).unwrap();
        let of = |cwd: &Path| Boundary::of_cwd(Some(cwd)).dir().unwrap().to_path_buf();
        assert_eq!(of(&repo.join("a/b")), repo.join("a/b"));
        std::fs::write(repo.join(".git"), "gitdir: elsewhere\n").unwrap();
        assert_eq!(of(&repo.join("a/b")), repo);
    }

    #[test]
    fn a_sized_read_gets_the_whole_file_whatever_its_status_said() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("f");
        let text: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&p, &text).unwrap();
        let read = |size, max| read_sized(&mut std::fs::File::open(&p).unwrap(), size, max);
        // As the status said; smaller (the file grew); larger (it shrank).
        for size in [20_000, 0, 1, 100, 19_999, 25_000] {
            assert_eq!(read(size, 1 << 20).unwrap(), text, "size {size}");
        }
        // Past the cap: one byte more than the cap, never the whole file.
        assert_eq!(read(0, 1000).unwrap(), &text[..1001]);
        assert_eq!(read(20_000, 19_999).unwrap(), text);
        assert_eq!(read(20_000, 10).unwrap(), &text[..11]);
        std::fs::write(&p, "").unwrap();
        assert!(read(0, 10).unwrap().is_empty());
    }

    #[test]
    fn a_listing_stops_at_its_budget_and_never_follows_a_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        for i in 0..10 {
            std::fs::write(tmp.path().join(format!("f{i}")), "x").unwrap();
        }
        std::os::unix::fs::symlink("/etc", tmp.path().join("link")).unwrap();
        let open = || open_dir_at(CWD, tmp.path(), true).unwrap();
        let mut budget = 5;
        assert!(list(open().as_fd(), &mut budget, false).is_err());
        let mut budget = 11;
        let dir = open();
        let all = list(dir.as_fd(), &mut budget, true).unwrap();
        assert_eq!(budget, 0);
        let link = all.iter().find(|e| e.name == "link").unwrap();
        assert_eq!(link.kind, EntryKind::Symlink);
        assert!(link.stat.is_none());
        assert!(
            all.iter()
                .filter(|e| e.kind == EntryKind::File)
                .all(|e| e.stat.is_some())
        );
        // Listed once: the descriptor's position is past the last entry.
        let mut budget = 11;
        assert!(list(dir.as_fd(), &mut budget, true).unwrap().is_empty());
    }

    #[test]
    fn below_the_boundary_no_component_is_followed_above_it_the_persons_are() {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path().canonicalize().unwrap();
        let repo = top.join("repo");
        std::fs::create_dir_all(repo.join("real/out")).unwrap();
        std::fs::create_dir(repo.join(".git")).unwrap();
        std::os::unix::fs::symlink("real", repo.join("link")).unwrap();
        std::os::unix::fs::symlink(&repo, top.join("home-link")).unwrap();
        let b = Boundary::of_cwd(Some(&repo));
        // Below the boundary as written.
        let r = b.route(&repo.join("link/out")).unwrap();
        match open(&r, false, true) {
            Err(Stop::Symlink {
                at, last: false, ..
            }) => assert_eq!(at, repo.join("link")),
            other => panic!("{other:?}"),
        }
        // Entering it through the person's link: the same refusal.
        let r = b.route(&top.join("home-link/link/out")).unwrap();
        assert!(matches!(open(&r, false, true), Err(Stop::Symlink { .. })));
        // The real path opens; a missing one is missing unless created.
        let r = b.route(&repo.join("real/out")).unwrap();
        assert!(open(&r, false, false).unwrap().dir.is_some());
        let r = b.route(&repo.join("new/a/b")).unwrap();
        assert!(matches!(open(&r, false, false), Err(Stop::Missing)));
        let opened = open(&r, true, false).unwrap();
        assert!(opened.dir.is_none() && repo.join("new/a").is_dir());
    }
}
