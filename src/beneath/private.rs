//! The directories the tool keeps for the person, outside every
//! repository: their state (`$XDG_STATE_HOME/bernstein/skills`: trust in
//! projects, export's ledgers) and their cache (`$XDG_CACHE_HOME/
//! bernstein/skills`: fetched sources, the locks of their updates).
//!
//! Both may lie in a directory other users share (a `/tmp/…` given as
//! `XDG_CACHE_HOME` on a shared machine, a CI runner's home), where another
//! user can make the tool's own directory first, or plant a symlink, or
//! leave a file that says which projects the person trusts. So, as ssh's
//! `StrictModes` and git's `safe.directory` do:
//!
//! - **The base is the person's** (the XDG directory, or the home's default
//!   below it): taken as given, symlinks and all, and made with mode 0700
//!   where missing.
//! - **The tool's own directories below it** (`bernstein/`, `skills/`, and
//!   what it makes inside) are made with mode 0700, and each one is opened
//!   from the one above without following a symlink. A symlink there is
//!   followed only when it is the person's own (as Linux's
//!   `protected_symlinks` follows a link in a shared directory only for its
//!   owner). Each directory reached, and each file read, must belong to the
//!   person (or to root) and be writable by no one else; anything else is
//!   refused with its path, its owner or mode, and the fix ([`NotPrivate`]).
//! - **Files** are opened relative to their directory's descriptor, never
//!   through a symlink, only when regular, and written whole with mode 0600
//!   ([`super::write`]); lock files are never followed and are created
//!   exclusively ([`super::lock::open_lock_file`]).

use std::ffi::OsStr;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::lock::{self, Busy, Held, LockFileRefusal, Share, Wait};
use super::{EntryKind, kind_at, link_target, open_dir_at, read_sized};

/// Why a directory or file of the person's own was not used.
#[derive(Debug)]
pub(crate) enum NotPrivate {
    /// Another user owns it.
    Owner {
        /// It.
        path: PathBuf,
        /// Its owner.
        uid: u32,
    },
    /// Someone other than its owner may write it.
    Writable {
        /// It.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// A symbolic link: another user's, where a directory must be, or any
    /// where a file must be.
    Symlink {
        /// It.
        path: PathBuf,
        /// Where it points, as written.
        target: PathBuf,
    },
    /// Something other than what must be there (a directory, a file).
    Kind {
        /// It.
        path: PathBuf,
        /// What it is.
        kind: EntryKind,
    },
    /// The operating system refused.
    Io {
        /// Where.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
}

impl NotPrivate {
    /// The directory or file refused.
    pub(crate) fn path(&self) -> &Path {
        match self {
            NotPrivate::Owner { path, .. }
            | NotPrivate::Writable { path, .. }
            | NotPrivate::Symlink { path, .. }
            | NotPrivate::Kind { path, .. }
            | NotPrivate::Io { path, .. } => path,
        }
    }

    /// What is wrong, and the fix; `variable` is the one that places the
    /// directory (`XDG_STATE_HOME`). Paths are escaped.
    pub(crate) fn reason(&self, variable: &str) -> String {
        let elsewhere =
            format!("set {variable} to a directory of your own, or remove it if you may");
        match self {
            NotPrivate::Owner { uid, .. } => format!(
                "owned by another user (uid {uid}); what the tool keeps for you lives only in \
                 directories and files of your own: {elsewhere}"
            ),
            NotPrivate::Writable { path, mode } => format!(
                "others can write it (mode {mode:04o}); what the tool keeps for you lives only \
                 where you alone can write: check what it holds, then run `chmod go-w {}`",
                crate::text::path(path)
            ),
            NotPrivate::Symlink { target, .. } => format!(
                "is a symbolic link (to {}), which the tool never follows where it keeps your \
                 files: {elsewhere}",
                crate::text::path(target)
            ),
            NotPrivate::Kind { kind, .. } => format!(
                "is {kind}, where the tool keeps a {} of its own: {elsewhere}",
                if *kind == EntryKind::Dir {
                    "file"
                } else {
                    "directory"
                }
            ),
            NotPrivate::Io { error, .. } => format!("cannot be used: {error}"),
        }
    }
}

/// Is a file with status `st` the person's, and writable by nobody else?
fn check(st: &rustix::fs::Stat, path: &Path) -> Result<(), NotPrivate> {
    let me = rustix::process::geteuid().as_raw();
    if st.st_uid != me && st.st_uid != 0 {
        return Err(NotPrivate::Owner {
            path: path.to_path_buf(),
            uid: st.st_uid,
        });
    }
    let mode = st.st_mode & 0o7777;
    if mode & 0o022 != 0 {
        return Err(NotPrivate::Writable {
            path: path.to_path_buf(),
            mode,
        });
    }
    Ok(())
}

/// A directory of the tool's own for the person, open and checked (see
/// the module documentation).
#[derive(Debug)]
pub(crate) struct PrivateDir {
    fd: OwnedFd,
    path: PathBuf,
}

/// How many components at the end of `path` are the tool's own: the
/// `bernstein/skills` (and what follows, of `extra`) below an XDG base; for
/// a directory an embedder names, the directory itself.
fn own_components(path: &Path) -> usize {
    if path.ends_with("bernstein/skills") {
        2
    } else {
        1
    }
}

impl PrivateDir {
    /// Opens `path`, a directory of the tool's own below a base the person
    /// chose (`$XDG_STATE_HOME/bernstein/skills`: the base, then
    /// `bernstein` and `skills`, which are checked; a directory an embedder
    /// names is checked itself). Missing directories are made (mode 0700)
    /// when `create`; otherwise `Ok(None)`.
    pub(crate) fn open(path: &Path, create: bool) -> Result<Option<PrivateDir>, NotPrivate> {
        let io = |path: &Path, error: std::io::Error| NotPrivate::Io {
            path: path.to_path_buf(),
            error,
        };
        let parts: Vec<Component<'_>> = path.components().collect();
        let own = own_components(path).min(parts.len().saturating_sub(1));
        let base: PathBuf = parts[..parts.len() - own].iter().collect();
        if create {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&base)
                .map_err(|e| io(&base, e))?;
        }
        let mut dir = match open_dir_at(rustix::fs::CWD, &base, true) {
            Ok(fd) => PrivateDir {
                fd,
                path: base.clone(),
            },
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(io(&base, e.into())),
        };
        for part in &parts[parts.len() - own..] {
            match dir.subdir(part.as_os_str(), create)? {
                Some(next) => dir = next,
                None => return Ok(None),
            }
        }
        Ok(Some(dir))
    }

    /// Its path, as given.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The directory `name` in it, checked as it is; made (mode 0700) when
    /// missing and `create`, else `Ok(None)`.
    pub(crate) fn subdir(
        &self,
        name: &OsStr,
        create: bool,
    ) -> Result<Option<PrivateDir>, NotPrivate> {
        let path = self.path.join(name);
        let io = |error: Errno| NotPrivate::Io {
            path: path.clone(),
            error: error.into(),
        };
        let mut made = false;
        let fd = loop {
            match open_dir_at(&self.fd, name, false) {
                Ok(fd) => break fd,
                Err(Errno::NOENT) if create && !made => {
                    match rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o700)) {
                        Ok(()) | Err(Errno::EXIST) => made = true,
                        Err(e) => return Err(io(e)),
                    }
                }
                Err(Errno::NOENT) => return Ok(None),
                Err(e @ (Errno::LOOP | Errno::NOTDIR)) => {
                    let st = rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW)
                        .map_err(|_| io(e))?;
                    let kind = EntryKind::of(FileType::from_raw_mode(st.st_mode));
                    if kind != EntryKind::Symlink {
                        return Err(NotPrivate::Kind { path, kind });
                    }
                    // The person's own link (a cache moved to another
                    // disk): followed, and where it leads checked below.
                    let me = rustix::process::geteuid().as_raw();
                    if st.st_uid != me && st.st_uid != 0 {
                        return Err(NotPrivate::Symlink {
                            target: link_target(&self.fd, name),
                            path,
                        });
                    }
                    break open_dir_at(&self.fd, name, true).map_err(io)?;
                }
                Err(e) => return Err(io(e)),
            }
        };
        let st = rustix::fs::fstat(&fd).map_err(io)?;
        check(&st, &path)?;
        Ok(Some(PrivateDir { fd, path }))
    }

    /// The regular file `name` in it, open, and its size; `Ok(None)` when
    /// there is none. A symbolic link there is refused, whoever made it.
    pub(crate) fn open_file(&self, name: &OsStr) -> Result<Option<(File, u64)>, NotPrivate> {
        let path = self.path.join(name);
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let fd = match rustix::fs::openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => {
                return Err(match kind_at(&self.fd, name) {
                    Ok(EntryKind::Symlink) => NotPrivate::Symlink {
                        target: link_target(&self.fd, name),
                        path,
                    },
                    Ok(kind @ (EntryKind::Dir | EntryKind::Other)) => {
                        NotPrivate::Kind { path, kind }
                    }
                    _ => NotPrivate::Io {
                        path,
                        error: e.into(),
                    },
                });
            }
        };
        let st = rustix::fs::fstat(&fd).map_err(|e| NotPrivate::Io {
            path: path.clone(),
            error: e.into(),
        })?;
        let kind = EntryKind::of(FileType::from_raw_mode(st.st_mode));
        if kind != EntryKind::File {
            return Err(NotPrivate::Kind { path, kind });
        }
        check(&st, &path)?;
        Ok(Some((File::from(fd), st.st_size.max(0) as u64)))
    }

    /// The bytes of the file `name` ([`PrivateDir::open_file`]): at most
    /// `max + 1` of them, so that the caller tells one over `max` by the
    /// length.
    pub(crate) fn read(&self, name: &OsStr, max: u64) -> Result<Option<Vec<u8>>, NotPrivate> {
        let Some((mut file, size)) = self.open_file(name)? else {
            return Ok(None);
        };
        read_sized(&mut file, size, max)
            .map(Some)
            .map_err(|error| NotPrivate::Io {
                path: self.path.join(name),
                error,
            })
    }

    /// Replaces the file `name` with what `fill` writes (buffered), whole
    /// (a temporary file, then a rename), with mode 0600.
    pub(crate) fn write(
        &self,
        name: &str,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        super::write::replace_beside(self.fd.as_fd(), name, 0o600, |file| {
            let mut w = std::io::BufWriter::with_capacity(64 * 1024, file);
            fill(&mut w)?;
            w.flush()
        })
    }

    /// A directory built in it under a claimed name, to be put in place
    /// whole ([`super::write::NewTree`]).
    pub(crate) fn new_tree(&self, prefix: &str) -> std::io::Result<super::write::NewTree> {
        super::write::NewTree::create(self.fd.try_clone()?, &self.path, prefix)
    }

    /// Takes the lock of the lock file `name` in it (made, mode 0600, when
    /// missing; never through a symlink), waiting or not as `wait` says;
    /// held until dropped.
    pub(crate) fn lock(
        &self,
        name: &OsStr,
        share: Share,
        wait: Wait<'_>,
    ) -> Result<Held, LockRefusal> {
        let path = self.path.join(name);
        let fd = match lock::open_lock_file(self.fd.as_fd(), name) {
            Ok(fd) => fd,
            Err(LockFileRefusal::NotAFile {
                kind: EntryKind::Symlink,
                target,
            }) => {
                return Err(LockRefusal::NotPrivate(NotPrivate::Symlink {
                    path,
                    target,
                }));
            }
            Err(LockFileRefusal::NotAFile { kind, .. }) => {
                return Err(LockRefusal::NotPrivate(NotPrivate::Kind { path, kind }));
            }
            Err(LockFileRefusal::Io(error)) => {
                return Err(LockRefusal::NotPrivate(NotPrivate::Io { path, error }));
            }
        };
        let st = rustix::fs::fstat(&fd).map_err(|e| {
            LockRefusal::NotPrivate(NotPrivate::Io {
                path: path.clone(),
                error: e.into(),
            })
        })?;
        check(&st, &path).map_err(LockRefusal::NotPrivate)?;
        lock::lock(fd, share, wait).map_err(|b| match b {
            Busy::Held => LockRefusal::Held,
            Busy::Io(error) => LockRefusal::NotPrivate(NotPrivate::Io { path, error }),
        })
    }
}

/// Why [`PrivateDir::lock`] holds no lock.
#[derive(Debug)]
pub(crate) enum LockRefusal {
    /// Another holds it, and the caller would not wait.
    Held,
    /// The lock file is not the person's to use.
    NotPrivate(NotPrivate),
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn the_tools_own_directories_are_made_private_and_checked() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().join("state");
        let path = base.join("bernstein/skills");
        assert!(PrivateDir::open(&path, false).unwrap().is_none());
        let dir = PrivateDir::open(&path, true).unwrap().unwrap();
        for p in [&base, &base.join("bernstein"), &path] {
            assert_eq!(mode(p), 0o700, "{}", p.display());
        }
        dir.write("f", |w| w.write_all(b"x")).unwrap();
        assert_eq!(mode(&path.join("f")), 0o600);
        assert_eq!(dir.read(OsStr::new("f"), 10).unwrap().unwrap(), b"x");
        // Writable by others: refused, the directory and the file alike.
        std::fs::set_permissions(path.join("f"), std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(matches!(
            dir.read(OsStr::new("f"), 10),
            Err(NotPrivate::Writable { mode: 0o666, .. })
        ));
        std::fs::set_permissions(
            base.join("bernstein"),
            std::fs::Permissions::from_mode(0o777),
        )
        .unwrap();
        match PrivateDir::open(&path, false) {
            Err(NotPrivate::Writable {
                path: p,
                mode: 0o777,
            }) => {
                assert_eq!(p, base.join("bernstein"))
            }
            other => panic!("{other:?}"),
        }
        // The base is the person's, whatever its mode.
        std::fs::set_permissions(
            base.join("bernstein"),
            std::fs::Permissions::from_mode(0o700),
        )
        .unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(PrivateDir::open(&path, false).unwrap().is_some());
        // A symlink where a file is kept is never followed.
        std::os::unix::fs::symlink("/etc/hostname", path.join("l")).unwrap();
        assert!(matches!(
            dir.read(OsStr::new("l"), 10),
            Err(NotPrivate::Symlink { .. })
        ));
    }
}
