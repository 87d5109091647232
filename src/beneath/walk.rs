//! Walks beneath a directory descriptor: listings bounded by the entries
//! they visit, and removals bounded by entries and depth, never following
//! a symlink.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd};

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::{EntryKind, kind_at, list, open_dir_at};

/// The deepest a walk or a removal goes below the directory it starts at,
/// unless its caller asks for less.
pub(crate) const MAX_DEPTH: usize = 32;

/// Every entry of directory `fd` but `.` and `..`, with what it is; an
/// error once more than `budget` were visited. `fd` may have been listed
/// before: the listing reads a descriptor of its own.
pub(crate) fn entries(
    fd: impl AsFd,
    budget: &mut usize,
) -> std::io::Result<Vec<(OsString, EntryKind)>> {
    let own = rustix::fs::openat(
        fd,
        c".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    entries_of(own.as_fd(), budget)
}

/// [`entries`] of a directory just opened, which no one has listed.
pub(crate) fn entries_of(
    fd: BorrowedFd<'_>,
    budget: &mut usize,
) -> std::io::Result<Vec<(OsString, EntryKind)>> {
    Ok(list(fd, budget, false)?
        .into_iter()
        .map(|e| (e.name, e.kind))
        .collect())
}

/// Removes `name` in `dir` and everything below it, never following a
/// symlink (a link is removed itself); at most `budget` entries and
/// `max_depth` levels.
pub(crate) fn remove_tree(
    dir: impl AsFd,
    name: &OsStr,
    budget: &mut usize,
    max_depth: usize,
) -> std::io::Result<()> {
    remove_below(dir.as_fd(), name, budget, 0, max_depth)
}

fn remove_below(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    budget: &mut usize,
    depth: usize,
    max_depth: usize,
) -> std::io::Result<()> {
    match kind_at(dir, name) {
        Ok(EntryKind::Dir) => {}
        Ok(_) => return Ok(rustix::fs::unlinkat(dir, name, AtFlags::empty())?),
        Err(Errno::NOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
    }
    if depth >= max_depth {
        return Err(std::io::Error::other("nested too deep to remove"));
    }
    let fd = open_dir_at(dir, name, false)?;
    for (entry, kind) in entries(&fd, budget)? {
        if kind == EntryKind::Dir {
            remove_below(fd.as_fd(), &entry, budget, depth + 1, max_depth)?;
        } else {
            rustix::fs::unlinkat(&fd, entry.as_os_str(), AtFlags::empty())?;
        }
    }
    Ok(rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remove_tree_never_follows_a_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let keep = tmp.path().join("keep");
        std::fs::create_dir(&keep).unwrap();
        std::fs::write(keep.join("f"), "x").unwrap();
        let gone = tmp.path().join("gone");
        std::fs::create_dir_all(gone.join("sub")).unwrap();
        std::fs::write(gone.join("sub/f"), "x").unwrap();
        std::os::unix::fs::symlink(&keep, gone.join("link")).unwrap();
        let fd = open_dir_at(rustix::fs::CWD, tmp.path(), true).unwrap();
        let mut budget = 100;
        remove_tree(&fd, OsStr::new("gone"), &mut budget, MAX_DEPTH).unwrap();
        assert!(!gone.exists());
        assert!(keep.join("f").is_file());
        // The budget bounds the work.
        std::fs::create_dir_all(gone.join("a")).unwrap();
        for i in 0..10 {
            std::fs::write(gone.join(format!("a/{i}")), "x").unwrap();
        }
        let mut budget = 5;
        assert!(remove_tree(&fd, OsStr::new("gone"), &mut budget, MAX_DEPTH).is_err());
    }
}
