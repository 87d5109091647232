//! Reading files that an attacker may have laid out: beneath a root,
//! never hidden, regular files only, bounded.
//!
//! A team layer is a git directory that takes pull requests from strangers,
//! and CI reads it. A symlink committed there can point anywhere
//! (`env/SKILL.md -> /proc/self/environ`, `leak/SKILL.md -> ../.git/config`),
//! the layer directory itself can be a committed symlink (`team -> ../..`),
//! and a fan of symlinks between a few directories can make a naive walk
//! visit millions of paths. So every read from a layer goes through a
//! [`Root`]:
//!
//! 1. **The root is opened once**, as a directory file descriptor, the way
//!    every root is reached ([`crate::beneath`]): below the `Boundary` (the
//!    git work tree the command runs in, else the working directory) no
//!    component of its path may be a symlink, and the root itself may never
//!    be one: those are files a pull request can commit. Components above
//!    the boundary are taken as the person gave them (a home directory
//!    managed by symlinks is normal).
//! 2. **Every path is resolved beneath the root by the kernel**:
//!    `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)`
//!    from the root's descriptor, one system call, for the common path
//!    without symlinks. A path that holds a symlink (or a kernel without
//!    `openat2`) is walked component by component with `openat(O_NOFOLLOW)`
//!    from the root's descriptor, following a symlink only while it stays
//!    beneath the root, at most 40 of them. Either way no step trusts a
//!    path string, so swapping a component between a check and an open
//!    gains nothing, and nothing depends on `/proc`.
//! 3. **No hidden component**: the path as resolved, relative to the root,
//!    may hold no component that starts with a dot (`.git`, `.env`),
//!    whether it was named or reached through a symlink.
//! 4. **Only regular files are read**, opened without blocking, and at most
//!    the cap, whatever size the file claims.
//! 5. **No hard links**, unless the root allows them ([`Root::allow_hard_links`]):
//!    a regular file with more than one link may be the same file as one
//!    anywhere else on its file system (a tarball or a shared folder carries
//!    hard links where git carries none), so its contents are not the
//!    layer's to give. The count is read from the opened descriptor, so
//!    nothing can swap the file between the check and the read.
//!
//! A refusal carries the reason and the resolved target, never any content.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

pub use crate::beneath::EntryKind;
use crate::beneath::{self, Stop};
pub(crate) use crate::beneath::{Boundary, normalize};

/// Why a file was not read.
#[derive(Debug)]
pub enum Refusal {
    /// Its path leaves the root (through a symlink or `..`).
    Escapes {
        /// Where it resolves.
        target: PathBuf,
    },
    /// It resolves into `/proc` or `/sys`, or is on procfs or sysfs.
    Special {
        /// Where it resolves.
        target: PathBuf,
    },
    /// Its resolved path, relative to the root, has a hidden component.
    Hidden {
        /// The resolved path relative to the root.
        resolved: PathBuf,
    },
    /// Resolving it followed more symlinks than `MAX_SYMLINKS`.
    Loop,
    /// It is not a regular file.
    NotRegular {
        /// What it is, in words ("a FIFO").
        what: &'static str,
    },
    /// It is a regular file with more than one hard link, beneath a root
    /// that does not allow them.
    HardLinked {
        /// How many links it has.
        links: u64,
    },
    /// It is larger than the cap.
    TooLarge {
        /// Its size (at least; reading stops past the cap).
        size: u64,
        /// The cap.
        limit: u64,
    },
    /// The operating system refused (not found, permission, ...).
    Io(std::io::Error),
    /// Its contents are not what the root's [`ContentCheck`] expects (a
    /// file of a source's cache that does not match the lock).
    Unverified {
        /// Why, with the fix.
        reason: String,
    },
}

impl Refusal {
    /// The reason in words, for a message about `path` in `root_label`
    /// (`team layer`). Paths are escaped.
    pub fn describe(&self, path: &Path, root_label: &str) -> String {
        match self {
            Refusal::Escapes { target } => format!(
                "refusing to follow a symlink out of the {root_label}: {} -> {}",
                crate::text::path(path),
                crate::text::path(target)
            ),
            Refusal::Special { target } if target == path => format!(
                "refusing to read a file of the kernel's process or device views: {}",
                crate::text::path(path)
            ),
            Refusal::Special { target } => format!(
                "refusing to read a file of the kernel's process or device views: {} -> {}",
                crate::text::path(path),
                crate::text::path(target)
            ),
            Refusal::Hidden { resolved } => format!(
                "refusing to read a hidden entry of the {root_label}: {} -> {}",
                crate::text::path(path),
                crate::text::path(resolved)
            ),
            Refusal::Loop => format!(
                "refusing to follow more than {MAX_SYMLINKS} symlinks: {}",
                crate::text::path(path)
            ),
            Refusal::NotRegular { what } => {
                format!("refusing to read {what}; only regular files are read")
            }
            Refusal::HardLinked { links } => format!(
                "refusing to read a file with {links} hard links in the {root_label}: {}; a hard \
                 link can be a file from anywhere on the same file system (copy the file in \
                 instead, or pass --allow-hard-links to trust this layout)",
                crate::text::path(path)
            ),
            Refusal::TooLarge { size, limit } => {
                format!("file is {size} bytes, over the {limit}-byte limit")
            }
            Refusal::Io(e) => format!("cannot read file: {e}"),
            Refusal::Unverified { reason } => reason.clone(),
        }
    }

    /// What kind of error refusing a read for this reason is: the
    /// operating system's failure, a file over its cap, or a layout refused
    /// to protect the person.
    pub fn error_kind(&self) -> crate::error::ErrorKind {
        use crate::error::ErrorKind;
        match self {
            Refusal::Io(e) if e.kind() == std::io::ErrorKind::NotFound => ErrorKind::NotFound,
            Refusal::Io(_) => ErrorKind::Io,
            Refusal::TooLarge { .. } => ErrorKind::Invalid,
            _ => ErrorKind::Unsafe,
        }
    }

    /// Did a listing stop at its budget of entries?
    pub fn is_over_budget(&self) -> bool {
        matches!(self, Refusal::Io(e) if beneath::is_over_budget(e))
    }

    /// Is this "the file does not exist"?
    pub fn is_not_found(&self) -> bool {
        matches!(self, Refusal::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

impl From<Errno> for Refusal {
    fn from(e: Errno) -> Refusal {
        Refusal::Io(e.into())
    }
}

/// The most symlinks one resolution follows (Linux's own limit).
pub(crate) const MAX_SYMLINKS: usize = 40;

/// Where the kernel shows processes and devices as files
/// (`/proc/self/environ`, a process's secrets; `/sys`): never read,
/// wherever a root is, and neither is a file on procfs or sysfs mounted
/// elsewhere ([`on_kernel_fs`]). Device nodes (`/dev/zero`) are refused
/// because they are not regular files, as everything that is not one is;
/// a regular file below `/dev` is on a tmpfs (`/dev/shm`) and read as any
/// other.
const SPECIAL: [&str; 2] = ["/proc", "/sys"];

/// sysfs's file-system magic number (`SYSFS_MAGIC` of `linux/magic.h`;
/// rustix names procfs's only).
const SYSFS_MAGIC: rustix::fs::FsWord = 0x6265_6572;

fn is_special(real: &Path) -> bool {
    SPECIAL.iter().any(|s| real.starts_with(s))
}

/// Is the open file or directory `fd` on procfs or sysfs?
fn on_kernel_fs(fd: BorrowedFd<'_>) -> bool {
    rustix::fs::fstatfs(fd)
        .is_ok_and(|s| s.f_type == rustix::fs::PROC_SUPER_MAGIC || s.f_type == SYSFS_MAGIC)
}

/// Why a root (a layer directory) was not opened.
#[derive(Debug)]
pub(crate) enum RootRefusal {
    /// The root, or a component of its path below the boundary, is a symlink.
    Symlink {
        /// The component that is a symlink.
        at: PathBuf,
        /// Is it the root itself (not a directory above it)?
        whole: bool,
        /// Where it points, as written.
        target: PathBuf,
    },
    /// It exists and is not a directory.
    NotADirectory,
    /// It resolves into `/proc` or `/sys`, or is on procfs or sysfs.
    Special {
        /// Where it resolves.
        target: PathBuf,
    },
    /// The operating system refused.
    Io(std::io::Error),
}

impl RootRefusal {
    /// The reason in words, for a message about root `path`.
    pub fn describe(&self, path: &Path) -> String {
        match self {
            RootRefusal::Symlink {
                target,
                whole: true,
                ..
            } => format!(
                "{} is a symbolic link (to {}); a layer directory is never followed through a \
                 symlink: give the real directory",
                crate::text::path(path),
                crate::text::path(target)
            ),
            RootRefusal::Symlink { at, target, .. } => format!(
                "{} leads through {}, a symbolic link (to {}) inside the working tree; a layer \
                 directory is never reached through a symlink there: give the real directory",
                crate::text::path(path),
                crate::text::path(at),
                crate::text::path(target)
            ),
            RootRefusal::NotADirectory => format!("{} is not a directory", crate::text::path(path)),
            RootRefusal::Special { target } => format!(
                "{} resolves to {}, where no layer is read",
                crate::text::path(path),
                crate::text::path(target)
            ),
            RootRefusal::Io(e) => format!("cannot open {}: {e}", crate::text::path(path)),
        }
    }
}

/// Opens the directory at `path` (absolute, normalised), never through a
/// symlink below `boundary` nor at its last component
/// ([`crate::beneath::open`]). `Ok(None)` when it does not exist.
pub(crate) fn open_dir_beneath(
    path: &Path,
    boundary: &Boundary,
) -> Result<Option<OwnedFd>, RootRefusal> {
    let Some(route) = boundary.route(path) else {
        // `/` itself.
        return beneath::open_dir_at(rustix::fs::CWD, path, true)
            .map(Some)
            .map_err(|e| RootRefusal::Io(e.into()));
    };
    match beneath::open(&route, false, false) {
        Ok(opened) => Ok(opened.dir),
        Err(Stop::Missing | Stop::NotDir { last: false, .. }) => Ok(None),
        Err(Stop::Symlink { at, target, last }) => Err(RootRefusal::Symlink {
            at,
            whole: last,
            target,
        }),
        Err(Stop::NotDir { last: true, .. }) => Err(RootRefusal::NotADirectory),
        Err(Stop::Io { error, .. }) => Err(RootRefusal::Io(error)),
    }
}

/// A check of the contents of every file read beneath a root, given its
/// path relative to the root: a base layer fed by a source compares each
/// file with its digest in the lock as it is read (`crate::upstream`).
#[derive(Clone)]
pub struct ContentCheck {
    /// The check of a file's contents, as it is read.
    #[allow(clippy::type_complexity)]
    pub read: std::sync::Arc<dyn Fn(&Path, &[u8]) -> Result<(), String> + Send + Sync>,
    /// The check of a file a listing meets, before anything reads it: its
    /// path and whether it has an execute bit (a source's file that its
    /// lock does not name, or whose bit is not the lock's, is refused by
    /// every command that lists it).
    #[allow(clippy::type_complexity)]
    pub listed: std::sync::Arc<dyn Fn(&Path, bool) -> Result<(), String> + Send + Sync>,
}

impl std::fmt::Debug for ContentCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ContentCheck")
    }
}

/// A directory every read stays beneath: see the module docs.
#[derive(Debug)]
pub struct Root {
    fd: OwnedFd,
    /// The path as given, for messages.
    path: PathBuf,
    /// Its real path: an absolute symlink that stays below it is followed.
    real: PathBuf,
    /// Regular files with more than one link may be read (rule 5).
    hard_links: bool,
    /// What every file read must pass, if anything.
    check: Option<ContentCheck>,
}

/// What [`Root::metadata`] reports about a file beneath a root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    /// Its type.
    pub kind: EntryKind,
    /// Its size in bytes.
    pub size: u64,
    /// It has an execute bit.
    pub executable: bool,
    /// Its device and inode: the same directory reached twice is walked once.
    pub id: (u64, u64),
    /// Its number of hard links.
    pub links: u64,
}

/// One entry of a directory beneath a root, as the directory lists it
/// (a symlink is not followed).
#[derive(Debug, Clone)]
pub struct Entry {
    /// Its name.
    pub name: OsString,
    /// Is it a symlink?
    pub is_symlink: bool,
    /// Is it a directory (not following a symlink)?
    pub is_dir: bool,
    /// A regular file's [`Meta`], from `entries_with_files`.
    pub meta: Option<Meta>,
    /// Its inode number, as the listing gives it.
    pub ino: u64,
}

/// Has `openat2` been found missing (an old kernel, a sandbox that filters
/// it)? Then every path is walked component by component.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

impl Root {
    /// Opens `path` as a root, checked against `boundary` (see the module
    /// docs). `Ok(None)` when it does not exist.
    pub(crate) fn open(path: &Path, boundary: &Boundary) -> Result<Option<Root>, RootRefusal> {
        let abs = boundary.absolute(path);
        let Some(fd) = open_dir_beneath(&abs, boundary)? else {
            return Ok(None);
        };
        let real = std::fs::canonicalize(&abs).unwrap_or(abs);
        if is_special(&real) || on_kernel_fs(fd.as_fd()) {
            return Err(RootRefusal::Special { target: real });
        }
        Ok(Some(Root {
            fd,
            path: path.to_path_buf(),
            real,
            hard_links: false,
            check: None,
        }))
    }

    /// Lets regular files with more than one hard link be read beneath
    /// this root (see the module docs, rule 5): for a layer installed by
    /// the person or a package manager, which may deduplicate files with
    /// hard links.
    pub(crate) fn allow_hard_links(&mut self) {
        self.hard_links = true;
    }

    /// Another handle on the same directory, allowing hard links beneath
    /// it ([`Root::allow_hard_links`]).
    pub(crate) fn try_clone_allowing_hard_links(&self) -> std::io::Result<Root> {
        Ok(Root {
            fd: self.fd.try_clone()?,
            path: self.path.clone(),
            real: self.real.clone(),
            hard_links: true,
            check: self.check.clone(),
        })
    }

    /// Checks every file read beneath the root with `check`
    /// ([`ContentCheck`]): one that fails it is refused
    /// ([`Refusal::Unverified`]).
    pub(crate) fn set_check(&mut self, check: ContentCheck) {
        self.check = Some(check);
    }

    /// [`ContentCheck::listed`] for the file at `rel` that a listing met,
    /// if the root has a check.
    pub(crate) fn check_listed(&self, rel: &Path, executable: bool) -> Result<(), Refusal> {
        match &self.check {
            Some(check) => {
                (check.listed)(rel, executable).map_err(|reason| Refusal::Unverified { reason })
            }
            None => Ok(()),
        }
    }

    /// May regular files with more than one hard link be read beneath it?
    pub fn allows_hard_links(&self) -> bool {
        self.hard_links
    }

    /// [`Refusal::HardLinked`] for a regular file with `meta`, if this root
    /// does not allow it.
    pub(crate) fn check_links(&self, meta: &Meta) -> Result<(), Refusal> {
        if self.hard_links || meta.kind != EntryKind::File || meta.links <= 1 {
            return Ok(());
        }
        Err(Refusal::HardLinked { links: meta.links })
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The root's directory, open: for a walk beneath it
    /// ([`crate::beneath::walk::Tree`]).
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Its real path.
    pub fn real(&self) -> &Path {
        &self.real
    }

    /// `path` (below [`Root::path`]) relative to the root.
    pub fn rel<'p>(&self, path: &'p Path) -> Option<&'p Path> {
        path.strip_prefix(&self.path).ok()
    }

    /// Reads the regular file at `rel` beneath the root, at most `max` bytes;
    /// one with more than one hard link only if the root allows it.
    pub fn read(&self, rel: &Path, max: u64) -> Result<Vec<u8>, Refusal> {
        let fd = self.resolve(
            rel,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        )?;
        let bytes = read_regular(fd, max, !self.hard_links)?;
        if let Some(check) = &self.check {
            (check.read)(rel, &bytes).map_err(|reason| Refusal::Unverified { reason })?;
        }
        Ok(bytes)
    }

    /// What is at `rel` beneath the root (following symlinks that stay
    /// beneath it).
    pub fn metadata(&self, rel: &Path) -> Result<Meta, Refusal> {
        let fd = self.resolve(rel, OFlags::PATH | OFlags::CLOEXEC)?;
        meta_of(&fd)
    }

    /// The entries of the directory at `rel` beneath the root, sorted by
    /// name, and that directory's own `Meta`; at most `budget` entries
    /// visited (taken from it), else [`Refusal::is_over_budget`].
    pub fn entries(&self, rel: &Path, budget: &mut usize) -> Result<(Meta, Vec<Entry>), Refusal> {
        let fd = self.resolve(rel, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC)?;
        let meta = meta_of(&fd)?;
        Ok((meta, read_dir(fd, false, budget)?))
    }

    /// [`Root::entries`], with the [`Meta`] of each regular file
    /// ([`Entry::meta`]), read by one `fstatat` relative to the open
    /// directory that does not follow a symlink: an entry of a directory
    /// beneath the root that is no symlink is beneath the root too, so it
    /// needs no walk of its own. Walks that need every file's size use
    /// this instead of one [`Root::metadata`] (three system calls) per file.
    /// The directory's own [`Meta`] only when `dir_meta` asks for it.
    pub(crate) fn entries_with_files(
        &self,
        rel: &Path,
        dir_meta: bool,
        budget: &mut usize,
    ) -> Result<(Option<Meta>, Vec<Entry>), Refusal> {
        let fd = self.resolve(rel, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC)?;
        let meta = if dir_meta { Some(meta_of(&fd)?) } else { None };
        Ok((meta, read_dir(fd, true, budget)?))
    }

    /// Does the directory at `rel` beneath the root hold an entry whose
    /// name does not start with a dot? Stops at the first, and after
    /// `limit` entries answers yes: a directory of hidden entries costs at
    /// most that many, whatever its size.
    pub(crate) fn has_visible_entry(&self, rel: &Path, limit: usize) -> Result<bool, Refusal> {
        let fd = self.resolve(rel, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC)?;
        let dir = rustix::fs::Dir::new(fd)?;
        for (seen, entry) in dir.enumerate() {
            let entry = entry?;
            if entry.file_name().to_bytes().first() != Some(&b'.') {
                return Ok(true);
            }
            if seen >= limit {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// What each of `names` is in the directory `rel` beneath the root,
    /// not following a symlink: `None` where there is no such entry, else
    /// its [`Meta`] (a symlink's kind is [`EntryKind::Symlink`]; walk it with
    /// [`Root::metadata`] to learn where it leads). One open of the
    /// directory and one `fstatat` per name: each name is a single
    /// component of a directory beneath the root, so nothing needs a walk.
    pub(crate) fn stat_names(
        &self,
        rel: &Path,
        names: &[&str],
    ) -> Result<Vec<Option<Meta>>, Refusal> {
        let dir = self.resolve(rel, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC)?;
        Ok(names
            .iter()
            .map(|name| {
                rustix::fs::statat(&dir, *name, AtFlags::SYMLINK_NOFOLLOW)
                    .ok()
                    .map(|st| meta_of_stat(&st))
            })
            .collect())
    }

    /// Opens `rel` beneath the root with `flags` (never following a
    /// symlink at the last step: symlinks are followed by the walk, which
    /// checks where each leads).
    fn resolve(&self, rel: &Path, flags: OFlags) -> Result<OwnedFd, Refusal> {
        let plain = rel.components().all(|c| matches!(c, Component::Normal(_)));
        if plain {
            if rel.iter().any(is_hidden) {
                return Err(Refusal::Hidden {
                    resolved: rel.to_path_buf(),
                });
            }
            #[cfg(target_os = "linux")]
            if !NO_OPENAT2.load(Ordering::Relaxed) {
                use rustix::fs::ResolveFlags;
                let how =
                    ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
                let target: &Path = if rel.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    rel
                };
                match rustix::fs::openat2(&self.fd, target, flags, Mode::empty(), how) {
                    Ok(fd) => return Ok(fd),
                    // A symlink on the way: the walk below follows it if it
                    // stays beneath the root.
                    Err(Errno::LOOP) | Err(Errno::XDEV) | Err(Errno::AGAIN) => {}
                    Err(Errno::NOSYS) | Err(Errno::INVAL) | Err(Errno::PERM) => {
                        NO_OPENAT2.store(true, Ordering::Relaxed);
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        }
        self.walk(rel, flags)
    }

    /// [`Root::resolve`] one component at a time with `openat(O_NOFOLLOW)`,
    /// reading each symlink and following it only while it stays beneath
    /// the root.
    fn walk(&self, rel: &Path, flags: OFlags) -> Result<OwnedFd, Refusal> {
        let mut stack: Entered = Vec::new();
        let mut queue: VecDeque<OsString> = components(rel);
        let mut followed = 0;
        while let Some(name) = queue.pop_front() {
            if name == "." {
                continue;
            }
            if name == ".." {
                if stack.pop().is_none() {
                    return Err(Refusal::Escapes {
                        target: leads_to(self.real.join(".."), &queue),
                    });
                }
                continue;
            }
            if is_hidden(&name) {
                // With the rest of the path it would lead to.
                return Err(Refusal::Hidden {
                    resolved: leads_to(resolved(&stack, Some(&name)), &queue),
                });
            }
            let dir = self.innermost(&stack);
            let stat = rustix::fs::statat(dir, &name, AtFlags::SYMLINK_NOFOLLOW)?;
            let ty = FileType::from_raw_mode(stat.st_mode);
            if ty == FileType::Symlink {
                followed += 1;
                if followed > MAX_SYMLINKS {
                    return Err(Refusal::Loop);
                }
                let link = rustix::fs::readlinkat(dir, &name, Vec::new())?;
                let link = PathBuf::from(OsString::from_vec(link.into_bytes()));
                let mut rest = self.follow(&mut stack, link, &queue)?;
                rest.extend(queue.drain(..));
                queue = rest;
                continue;
            }
            if queue.is_empty() {
                return self.open_last(dir, &stack, &name, flags);
            }
            if ty != FileType::Directory {
                return Err(Errno::NOTDIR.into());
            }
            let next = rustix::fs::openat(
                dir,
                &name,
                OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            stack.push((next, name));
        }
        // The path named the root, or led back to it.
        Ok(rustix::fs::openat(
            self.innermost(&stack),
            ".",
            flags,
            Mode::empty(),
        )?)
    }

    /// The directory the walk is in: the last one entered, or the root.
    fn innermost<'a>(&'a self, stack: &'a Entered) -> BorrowedFd<'a> {
        stack.last().map_or(self.fd.as_fd(), |(fd, _)| fd.as_fd())
    }

    /// Where the walk goes on from a symlink whose target is `link` (met in
    /// the directories `stack` entered): the target's components, while it
    /// stays beneath the root. An absolute target below the root's real
    /// path starts again from the root (emptying `stack`). A relative link
    /// that climbs out is caught by `..` in the walk, with the whole target
    /// in the message. `rest`, the path still to walk after the link, goes
    /// into the message of a target outside.
    fn follow(
        &self,
        stack: &mut Entered,
        link: PathBuf,
        rest: &VecDeque<OsString>,
    ) -> Result<VecDeque<OsString>, Refusal> {
        if link.is_absolute() {
            return match link.strip_prefix(&self.real) {
                Ok(inside) => {
                    stack.clear();
                    Ok(components(inside))
                }
                Err(_) => Err(Refusal::Escapes {
                    target: leads_to(link.clone(), rest),
                }),
            };
        }
        let here = self.real.join(resolved(stack, None));
        let target = leads_to(here.join(&link), rest);
        if !target.starts_with(&self.real) {
            return Err(Refusal::Escapes { target });
        }
        Ok(components(&link))
    }

    /// Opens the walk's last component `name` in `dir` (the directories
    /// `stack` entered) with `flags`, never through a symlink: one that
    /// appeared since it was looked at is a swap in progress, refused as
    /// an escape.
    fn open_last(
        &self,
        dir: BorrowedFd<'_>,
        stack: &Entered,
        name: &OsStr,
        flags: OFlags,
    ) -> Result<OwnedFd, Refusal> {
        rustix::fs::openat(dir, name, flags | OFlags::NOFOLLOW, Mode::empty()).map_err(
            |e| match e {
                Errno::LOOP => Refusal::Escapes {
                    target: self.real.join(resolved(stack, Some(name))),
                },
                e => e.into(),
            },
        )
    }
}

/// The directories a walk entered below the root, with their names: the
/// resolved path so far.
type Entered = Vec<(OwnedFd, OsString)>;

/// The path the walk has resolved (the names of the directories `stack`
/// entered), and `last` after them.
fn resolved(stack: &[(OwnedFd, OsString)], last: Option<&OsStr>) -> PathBuf {
    let mut p: PathBuf = stack.iter().map(|(_, n)| n.as_os_str()).collect();
    if let Some(l) = last {
        p.push(l);
    }
    p
}

/// Where `target` leads with the rest of the walk's path (`rest`) after
/// it, normalised: what a refusal names.
fn leads_to(mut target: PathBuf, rest: &VecDeque<OsString>) -> PathBuf {
    target.extend(rest.iter());
    normalize(&target)
}

fn components(p: &Path) -> VecDeque<OsString> {
    p.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect()
}

/// Does this name start with a dot (`.git`, `.env`)?
fn is_hidden(name: &OsStr) -> bool {
    name.as_bytes().first() == Some(&b'.')
}

/// The entries of the open directory `fd`, sorted by name, with the
/// [`Meta`] of each regular file if `stat_files`; at most `budget` visited.
fn read_dir(fd: OwnedFd, stat_files: bool, budget: &mut usize) -> Result<Vec<Entry>, Refusal> {
    let mut out: Vec<Entry> = beneath::list(fd.as_fd(), budget, stat_files)
        .map_err(Refusal::Io)?
        .into_iter()
        .map(|e| Entry {
            is_symlink: e.kind == EntryKind::Symlink,
            is_dir: e.kind == EntryKind::Dir,
            meta: e.stat.as_ref().map(meta_of_stat),
            name: e.name,
            ino: e.ino,
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn meta_of(fd: &OwnedFd) -> Result<Meta, Refusal> {
    Ok(meta_of_stat(&rustix::fs::fstat(fd)?))
}

// The field types of `stat` differ between platforms.
#[allow(clippy::unnecessary_cast)]
fn meta_of_stat(stat: &rustix::fs::Stat) -> Meta {
    Meta {
        kind: EntryKind::of(FileType::from_raw_mode(stat.st_mode)),
        size: stat.st_size.max(0) as u64,
        executable: stat.st_mode & 0o111 != 0,
        id: (stat.st_dev as u64, stat.st_ino as u64),
        links: stat.st_nlink as u64,
    }
}

/// A file that is not a regular file, in words, for a refusal to read it.
fn not_regular(t: FileType) -> &'static str {
    match t {
        FileType::Directory => "a directory",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice | FileType::BlockDevice => "a device",
        FileType::Symlink => "a symlink",
        _ => "a file that is not a regular file",
    }
}

/// The bytes of `file`, opened by [`open_bounded`] with `size`: at most
/// `max`, whatever the size said.
pub(crate) fn read_capped(
    mut file: std::fs::File,
    size: u64,
    max: u64,
) -> Result<Vec<u8>, Refusal> {
    let bytes = beneath::read_sized(&mut file, size, max).map_err(Refusal::Io)?;
    if bytes.len() as u64 > max {
        return Err(Refusal::TooLarge {
            size: bytes.len() as u64,
            limit: max,
        });
    }
    Ok(bytes)
}

/// Reads `path`, a path below `root`'s [`Root::path`]: [`Root::read`] of
/// its part below the root.
pub fn read_in_root(root: &Root, path: &Path, max: u64) -> Result<Vec<u8>, Refusal> {
    match root.rel(path) {
        Some(rel) => root.read(rel, max),
        None => Err(Refusal::Escapes {
            target: path.to_path_buf(),
        }),
    }
}

/// Reads a file the user named (no root), refusing special and non-regular
/// files, at most `max` bytes: for the merge spec.
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, Refusal> {
    let (file, size) = open_bounded(path, max)?;
    read_capped(file, size, max)
}

/// Opens a file the user named as [`read_bounded`] does, for a reader
/// that takes it a piece at a time (`sources.lock`): the file and the
/// size it reports, refused when that is over `max`. The caller reads at
/// most `max` bytes of it, whatever the size said.
pub fn open_bounded(path: &Path, max: u64) -> Result<(std::fs::File, u64), Refusal> {
    let real = std::fs::canonicalize(path).map_err(Refusal::Io)?;
    if is_special(&real) {
        return Err(Refusal::Special { target: real });
    }
    // What is not a regular file is refused before it is opened: opening a
    // device can act (a tape rewinds when it is closed).
    let t = FileType::from_raw_mode(rustix::fs::stat(&real)?.st_mode);
    if t != FileType::RegularFile {
        return Err(Refusal::NotRegular {
            what: not_regular(t),
        });
    }
    let fd = rustix::fs::open(
        &real,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        Errno::LOOP => Refusal::Escapes {
            target: real.clone(),
        },
        e => e.into(),
    })?;
    if on_kernel_fs(fd.as_fd()) {
        return Err(Refusal::Special { target: real });
    }
    regular(fd, max, false)
}

/// The bytes of the open file `fd`, if it is a regular file of at most
/// `max` bytes (read without trusting the size it reports) and, where
/// `one_link` asks, with a single hard link (the count is the open file's,
/// so no swap can come between the check and the read).
fn read_regular(fd: OwnedFd, max: u64, one_link: bool) -> Result<Vec<u8>, Refusal> {
    let (file, size) = regular(fd, max, one_link)?;
    read_capped(file, size, max)
}

/// The open file `fd` and its size, if it is a regular file that says it
/// holds at most `max` bytes (and, where `one_link` asks, has one link).
fn regular(fd: OwnedFd, max: u64, one_link: bool) -> Result<(std::fs::File, u64), Refusal> {
    let stat = rustix::fs::fstat(&fd)?;
    let t = FileType::from_raw_mode(stat.st_mode);
    if t != FileType::RegularFile {
        return Err(Refusal::NotRegular {
            what: not_regular(t),
        });
    }
    let links = stat.st_nlink as u64;
    if one_link && links > 1 {
        return Err(Refusal::HardLinked { links });
    }
    let size = stat.st_size.max(0) as u64;
    if size > max {
        return Err(Refusal::TooLarge { size, limit: max });
    }
    Ok((std::fs::File::from(fd), size))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn root(p: &Path) -> Root {
        Root::open(p, &Boundary::none()).unwrap().unwrap()
    }

    /// Both ways of resolving, the kernel's and the walk, give the same answers.
    fn both<T>(f: impl Fn() -> T) -> [T; 2] {
        NO_OPENAT2.store(false, Ordering::Relaxed);
        let kernel = f();
        NO_OPENAT2.store(true, Ordering::Relaxed);
        let walked = f();
        NO_OPENAT2.store(false, Ordering::Relaxed);
        [kernel, walked]
    }

    #[test]
    fn inside_is_read_outside_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let r = tmp.path().join("root");
        std::fs::create_dir_all(r.join("d")).unwrap();
        std::fs::write(r.join("d/a.yaml"), "a: 1\n").unwrap();
        std::fs::write(tmp.path().join("secret"), "TOKEN=x\n").unwrap();
        symlink("d/a.yaml", r.join("inside.yaml")).unwrap();
        symlink(r.join("d/a.yaml"), r.join("absolute-inside.yaml")).unwrap();
        symlink(tmp.path().join("secret"), r.join("out.yaml")).unwrap();
        symlink(tmp.path(), r.join("outdir")).unwrap();
        symlink("../../secret", r.join("d/up.yaml")).unwrap();
        let root = root(&r);
        for _ in both(|| {
            for p in ["inside.yaml", "absolute-inside.yaml", "d/a.yaml"] {
                assert_eq!(root.read(Path::new(p), 100).unwrap(), b"a: 1\n", "{p}");
            }
            for p in [
                "out.yaml",
                "outdir/secret",
                "../secret",
                "d/../../secret",
                "d/up.yaml",
            ] {
                let e = root.read(Path::new(p), 100).unwrap_err();
                assert!(matches!(e, Refusal::Escapes { .. }), "{p}: {e:?}");
                let msg = e.describe(&r.join(p), "team layer");
                assert!(!msg.contains("TOKEN"), "{msg}");
                assert!(
                    msg.contains(&tmp.path().join("secret").display().to_string()),
                    "{msg}"
                );
            }
        }) {}
    }

    #[test]
    fn hidden_components_are_refused_named_or_reached_through_a_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let r = tmp.path();
        std::fs::create_dir_all(r.join(".git")).unwrap();
        std::fs::create_dir_all(r.join("leak")).unwrap();
        std::fs::write(r.join(".git/config"), "[http] extraheader = TOKEN\n").unwrap();
        symlink("../.git/config", r.join("leak/SKILL.md")).unwrap();
        symlink(".git", r.join("g")).unwrap();
        let root = root(r);
        for _ in both(|| {
            for p in [".git/config", "leak/SKILL.md", "g/config"] {
                let e = root.read(Path::new(p), 100).unwrap_err();
                assert!(
                    matches!(&e, Refusal::Hidden { resolved } if resolved.starts_with(".git")),
                    "{p}: {e:?}"
                );
                assert!(
                    matches!(root.metadata(Path::new(p)), Err(Refusal::Hidden { .. })),
                    "{p}"
                );
            }
        }) {}
    }

    #[test]
    fn symlink_loops_end() {
        let tmp = tempfile::tempdir().unwrap();
        symlink("b", tmp.path().join("a")).unwrap();
        symlink("a", tmp.path().join("b")).unwrap();
        let root = root(tmp.path());
        for e in both(|| root.read(Path::new("a"), 100).unwrap_err()) {
            assert!(matches!(e, Refusal::Loop), "{e:?}");
        }
    }

    #[test]
    fn a_root_that_is_a_symlink_or_below_a_symlink_in_the_boundary_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let b = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(b.join("real/team")).unwrap();
        symlink("real/team", b.join("team")).unwrap();
        symlink("real", b.join("cfg")).unwrap();
        let boundary = Boundary::at(&b, None);
        assert!(matches!(
            Root::open(&b.join("team"), &boundary),
            Err(RootRefusal::Symlink { .. })
        ));
        // Without a boundary the root itself still may not be a link.
        assert!(matches!(
            Root::open(&b.join("team"), &Boundary::none()),
            Err(RootRefusal::Symlink { .. })
        ));
        // A link above the root: refused below the boundary, taken as
        // given above it.
        match Root::open(&b.join("cfg/team"), &boundary) {
            Err(RootRefusal::Symlink { at, .. }) => assert_eq!(at, b.join("cfg")),
            other => panic!("{other:?}"),
        }
        assert!(
            Root::open(&b.join("cfg/team"), &Boundary::none())
                .unwrap()
                .is_some()
        );
        assert!(Root::open(&b.join("absent"), &boundary).unwrap().is_none());
        std::fs::write(b.join("file"), "").unwrap();
        assert!(matches!(
            Root::open(&b.join("file"), &boundary),
            Err(RootRefusal::NotADirectory)
        ));
    }

    /// procfs is refused by what it is, not only where it usually lies:
    /// the directory of a process's files, reached through a path that
    /// does not start with `/proc`, is no root, and none of its files is
    /// read.
    #[test]
    fn procfs_is_refused_wherever_it_is_reached() {
        let Ok(fd) = rustix::fs::open(
            "/proc/self",
            OFlags::RDONLY | OFlags::DIRECTORY,
            Mode::empty(),
        ) else {
            return;
        };
        assert!(on_kernel_fs(fd.as_fd()));
        let tmp = tempfile::tempdir().unwrap();
        assert!(!on_kernel_fs(
            rustix::fs::open(tmp.path(), OFlags::RDONLY, Mode::empty())
                .unwrap()
                .as_fd()
        ));
    }

    #[test]
    fn fifos_and_directories_are_refused_and_special_files_never_read() {
        let tmp = tempfile::tempdir().unwrap();
        symlink("/proc/self/environ", tmp.path().join("env")).unwrap();
        symlink("/dev/zero", tmp.path().join("zero")).unwrap();
        let root = root(tmp.path());
        for p in ["env", "zero"] {
            assert!(matches!(
                root.read(Path::new(p), 100),
                Err(Refusal::Escapes { .. })
            ));
        }
        assert!(matches!(
            read_bounded(&tmp.path().join("env"), 100),
            Err(Refusal::Special { .. })
        ));
        let fifo = tmp.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        for e in both(|| root.read(Path::new("fifo"), 100)) {
            assert!(matches!(e, Err(Refusal::NotRegular { what: "a FIFO" })));
        }
        assert!(matches!(
            root.read(Path::new(""), 100),
            Err(Refusal::NotRegular {
                what: "a directory"
            })
        ));
    }

    #[test]
    fn a_hard_linked_file_is_read_only_where_the_root_allows_it() {
        let tmp = tempfile::tempdir().unwrap();
        let r = tmp.path().join("root");
        std::fs::create_dir_all(&r).unwrap();
        std::fs::write(tmp.path().join("secret"), "TOKEN").unwrap();
        std::fs::hard_link(tmp.path().join("secret"), r.join("linked")).unwrap();
        symlink("linked", r.join("via-symlink")).unwrap();
        std::fs::write(r.join("plain"), "ok").unwrap();
        let mut root = root(&r);
        for _ in both(|| {
            for p in ["linked", "via-symlink"] {
                let e = root.read(Path::new(p), 100).unwrap_err();
                assert!(matches!(e, Refusal::HardLinked { links: 2 }), "{p}: {e:?}");
                let msg = e.describe(&r.join(p), "team layer");
                assert!(msg.contains("2 hard links in the team layer"), "{msg}");
                assert!(msg.contains("--allow-hard-links") && !msg.contains("TOKEN"));
            }
            assert_eq!(root.read(Path::new("plain"), 100).unwrap(), b"ok");
        }) {}
        // The spec, named by the person, is no layer's.
        assert!(read_bounded(&r.join("linked"), 100).is_ok());
        root.allow_hard_links();
        assert_eq!(root.read(Path::new("linked"), 100).unwrap(), b"TOKEN");
    }

    #[test]
    fn the_cap_holds_whatever_the_size() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("big"), vec![b'x'; 101]).unwrap();
        let root = root(tmp.path());
        assert!(matches!(
            root.read(Path::new("big"), 100),
            Err(Refusal::TooLarge {
                size: 101,
                limit: 100
            })
        ));
    }
}
