//! Advisory locks (`flock`) on an open file or directory: the one kind of
//! lock the tool takes. A lock belongs to the open file, not the process:
//! it is released when the last descriptor of it closes, however the
//! process ends (`kill -9` included), and it works across PID namespaces
//! (containers sharing a volume), where a process id means nothing.

use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{FlockOperation, Mode, OFlags, flock};
use rustix::io::Errno;

use super::EntryKind;

/// Exclusive (one holder: a writer) or shared (any number: readers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Share {
    /// One holder.
    Exclusive,
    /// Any number of holders, while no one holds it exclusively.
    Shared,
}

/// What to do when another holds the lock.
pub(crate) enum Wait<'a> {
    /// Wait for it, after calling the function given (to say so).
    Block(Option<&'a dyn Fn()>),
    /// Give up at once: [`Busy`].
    Refuse,
}

/// Why a lock was not taken.
#[derive(Debug)]
pub(crate) enum Busy {
    /// Another holds it, and the caller would not wait.
    Held,
    /// The operating system refused.
    Io(std::io::Error),
}

/// A lock held on an open file until dropped.
#[derive(Debug)]
pub(crate) struct Held {
    _fd: OwnedFd,
}

/// Takes the lock of `fd` (a descriptor of its own: dropping the [`Held`]
/// closes it, which releases the lock once every other descriptor of the
/// same open file is closed too).
pub(crate) fn lock(fd: OwnedFd, share: Share, wait: Wait<'_>) -> Result<Held, Busy> {
    take(fd.as_fd(), share, wait)?;
    Ok(Held { _fd: fd })
}

/// Takes the lock of `fd`, which the caller keeps open for as long as it
/// holds it.
pub(crate) fn take(fd: BorrowedFd<'_>, share: Share, wait: Wait<'_>) -> Result<(), Busy> {
    let (try_op, op) = match share {
        Share::Exclusive => (
            FlockOperation::NonBlockingLockExclusive,
            FlockOperation::LockExclusive,
        ),
        Share::Shared => (
            FlockOperation::NonBlockingLockShared,
            FlockOperation::LockShared,
        ),
    };
    match flock(fd, try_op) {
        Ok(()) => Ok(()),
        Err(Errno::WOULDBLOCK) => match wait {
            Wait::Refuse => Err(Busy::Held),
            Wait::Block(on_wait) => {
                if let Some(f) = on_wait {
                    f();
                }
                loop {
                    match flock(fd, op) {
                        Err(Errno::INTR) => continue,
                        r => return r.map_err(|e| Busy::Io(e.into())),
                    }
                }
            }
        },
        Err(e) => Err(Busy::Io(e.into())),
    }
}

/// Why a lock file was not opened.
#[derive(Debug)]
pub(crate) enum LockFileRefusal {
    /// Something other than a regular file is there (a symbolic link, to
    /// where it points, is never followed).
    NotAFile {
        /// What it is.
        kind: EntryKind,
        /// Where a symbolic link points, as written.
        target: std::path::PathBuf,
    },
    /// The operating system refused.
    Io(std::io::Error),
}

/// Opens the lock file `name` in `dir`, creating it (mode 0600) when it is
/// missing: never through a symbolic link, never anything but a regular
/// file, never created where something appeared meanwhile (`O_CREAT |
/// O_EXCL`). Another user's symlink there never makes the tool create or
/// open the file it points to.
pub(crate) fn open_lock_file(
    dir: BorrowedFd<'_>,
    name: &OsStr,
) -> Result<OwnedFd, LockFileRefusal> {
    let flags = OFlags::RDWR | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    for _ in 0..100 {
        let fd = match rustix::fs::openat(dir, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => match rustix::fs::openat(
                dir,
                name,
                flags | OFlags::CREATE | OFlags::EXCL,
                Mode::from_raw_mode(0o600),
            ) {
                Ok(fd) => fd,
                // Made meanwhile (by another run): open it as found.
                Err(Errno::EXIST) => continue,
                Err(e) => return Err(LockFileRefusal::Io(e.into())),
            },
            Err(e @ (Errno::LOOP | Errno::MLINK | Errno::NXIO | Errno::ISDIR)) => {
                return Err(match super::kind_at(dir, name) {
                    Ok(kind) => LockFileRefusal::NotAFile {
                        kind,
                        target: if kind == EntryKind::Symlink {
                            super::link_target(dir, name)
                        } else {
                            Default::default()
                        },
                    },
                    Err(_) => LockFileRefusal::Io(e.into()),
                });
            }
            Err(e) => return Err(LockFileRefusal::Io(e.into())),
        };
        let st = rustix::fs::fstat(&fd).map_err(|e| LockFileRefusal::Io(e.into()))?;
        let kind = EntryKind::of(rustix::fs::FileType::from_raw_mode(st.st_mode));
        if kind != EntryKind::File {
            return Err(LockFileRefusal::NotAFile {
                kind,
                target: Default::default(),
            });
        }
        return Ok(fd);
    }
    Err(LockFileRefusal::Io(std::io::Error::other(
        "it keeps appearing and going",
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_file_is_never_opened_through_a_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = super::super::open_dir_at(rustix::fs::CWD, tmp.path(), true).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("victim"), tmp.path().join("l")).unwrap();
        assert!(matches!(
            open_lock_file(dir.as_fd(), OsStr::new("l")),
            Err(LockFileRefusal::NotAFile {
                kind: EntryKind::Symlink,
                ..
            })
        ));
        assert!(!tmp.path().join("victim").exists());
        let fd = open_lock_file(dir.as_fd(), OsStr::new("ok")).unwrap();
        let held = lock(fd, Share::Exclusive, Wait::Refuse).unwrap();
        let again = open_lock_file(dir.as_fd(), OsStr::new("ok")).unwrap();
        assert!(matches!(
            lock(again, Share::Shared, Wait::Refuse),
            Err(Busy::Held)
        ));
        drop(held);
        let again = open_lock_file(dir.as_fd(), OsStr::new("ok")).unwrap();
        lock(again, Share::Shared, Wait::Refuse).unwrap();
    }
}
