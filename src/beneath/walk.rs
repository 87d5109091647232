//! Walks beneath a directory descriptor: listings bounded by the entries
//! they visit, a walk of a tree its caller steers ([`Tree`]), and removals
//! bounded by entries and depth, never following a symlink.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

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

/// [`entries`] of the directory at `path`, opened as given (a directory
/// the person chose, the end of whose path may be their symlink): at most
/// `budget` entries visited, never following a symlink among them.
pub(crate) fn entries_at(
    path: &std::path::Path,
    budget: &mut usize,
) -> std::io::Result<Vec<(OsString, EntryKind)>> {
    let fd = open_dir_at(rustix::fs::CWD, path, true)?;
    entries_of(fd.as_fd(), budget)
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

/// Why a directory of a [`Tree`] was not listed.
#[derive(Debug)]
pub(crate) enum Unlisted {
    /// The walk has visited as many entries as it may: it ends here.
    TooMany,
    /// The directory lies deeper than the walk goes.
    TooDeep,
    /// The operating system refused: the directory cannot be opened (it
    /// went, or became something else) or read.
    Io(std::io::Error),
}

/// A walk beneath a directory descriptor that its caller steers: breadth
/// first, one directory at a time, each one's entries sorted by name (the
/// same order on every machine), going down only into the directories the
/// caller names ([`Tree::descend`]), never following a symlink. It visits
/// at most `budget` entries in all and goes at most `max_depth` levels
/// down.
///
/// Each directory is opened from the root one component at a time with
/// `O_NOFOLLOW`, when its turn comes: a directory swapped for a symlink
/// meanwhile is refused, and the walk holds one descriptor at a time
/// however wide the tree (the depth cap bounds what reopening costs).
pub(crate) struct Tree<'a> {
    root: BorrowedFd<'a>,
    queue: VecDeque<PathBuf>,
    budget: usize,
    max_depth: usize,
}

impl<'a> Tree<'a> {
    /// A walk of `root`, whose first directory is `root` itself (the
    /// empty path).
    pub(crate) fn new(root: BorrowedFd<'a>, budget: usize, max_depth: usize) -> Tree<'a> {
        Tree {
            root,
            queue: VecDeque::from([PathBuf::new()]),
            budget,
            max_depth,
        }
    }

    /// Lists the directory `rel` (relative to the root, a path of names
    /// the walk gave) after those already queued.
    pub(crate) fn descend(&mut self, rel: PathBuf) {
        self.queue.push_back(rel);
    }

    /// The next directory queued, relative to the root, and its entries
    /// sorted by name, or why it was not listed; `None` when none is left.
    /// After [`Unlisted::TooMany`] the walk ends.
    #[allow(clippy::type_complexity)]
    pub(crate) fn next_dir(
        &mut self,
    ) -> Option<(PathBuf, Result<Vec<(OsString, EntryKind)>, Unlisted>)> {
        let rel = self.queue.pop_front()?;
        if rel.components().count() > self.max_depth {
            return Some((rel, Err(Unlisted::TooDeep)));
        }
        let listed = match self.open(&rel) {
            Ok(None) => entries(self.root, &mut self.budget),
            Ok(Some(fd)) => entries_of(fd.as_fd(), &mut self.budget),
            Err(e) => Err(e),
        };
        let listed = match listed {
            Ok(mut found) => {
                found.sort();
                Ok(found)
            }
            Err(e) if super::is_over_budget(&e) => {
                self.queue.clear();
                Err(Unlisted::TooMany)
            }
            Err(e) => Err(Unlisted::Io(e)),
        };
        Some((rel, listed))
    }

    /// Opens `rel` beneath the root, each component without following a
    /// symlink; `None` for the root itself.
    fn open(&self, rel: &Path) -> std::io::Result<Option<OwnedFd>> {
        let mut cur: Option<OwnedFd> = None;
        for c in rel.components() {
            let Component::Normal(name) = c else {
                return Err(std::io::Error::from(std::io::ErrorKind::InvalidInput));
            };
            let next = match &cur {
                None => open_dir_at(self.root, name, false)?,
                Some(fd) => open_dir_at(fd, name, false)?,
            };
            cur = Some(next);
        }
        Ok(cur)
    }
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
    fn a_tree_walk_goes_where_it_is_sent_sorted_and_bounded() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        std::fs::create_dir_all(t.join("b/deep/er")).unwrap();
        std::fs::create_dir(t.join("a")).unwrap();
        std::fs::write(t.join("b/f"), "x").unwrap();
        std::os::unix::fs::symlink("/etc", t.join("b/l")).unwrap();
        let root = open_dir_at(rustix::fs::CWD, t, true).unwrap();
        let mut tree = Tree::new(root.as_fd(), 100, 2);
        let mut seen = Vec::new();
        while let Some((rel, listed)) = tree.next_dir() {
            match listed {
                Ok(found) => {
                    for (name, kind) in found {
                        let r = rel.join(&name);
                        seen.push(format!("{} {kind}", r.display()));
                        if kind == EntryKind::Dir {
                            tree.descend(r);
                        }
                    }
                }
                Err(Unlisted::TooDeep) => seen.push(format!("{} too deep", rel.display())),
                Err(e) => panic!("{e:?}"),
            }
        }
        assert_eq!(
            seen,
            [
                "a a directory",
                "b a directory",
                "b/deep a directory",
                "b/f a file",
                "b/l a symbolic link",
                "b/deep/er a directory",
                "b/deep/er too deep",
            ]
        );
        // A directory swapped for a symlink is not listed through it.
        let mut tree = Tree::new(root.as_fd(), 100, 8);
        tree.next_dir();
        tree.descend(PathBuf::from("b/l"));
        assert!(matches!(tree.next_dir(), Some((_, Err(Unlisted::Io(_))))));
        // The budget ends the walk.
        let mut tree = Tree::new(root.as_fd(), 1, 8);
        assert!(matches!(tree.next_dir(), Some((_, Err(Unlisted::TooMany)))));
        assert!(tree.next_dir().is_none());
    }

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
