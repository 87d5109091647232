//! Walks beneath a directory descriptor: listings bounded by the entries
//! they visit, and the one walk of a tree ([`Tree`]), which its caller
//! steers and which removals ([`remove_tree`]) go through too, bounded by
//! entries and depth, never following a symlink.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::{EntryKind, kind_at, list, open_dir_at};

/// A directory's entries, with what each is, never following a symlink.
pub(crate) type Listing = Vec<(OsString, EntryKind)>;

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
    /// The root was just opened and no one has listed it: its listing
    /// reads from it (see [`entries`]).
    root_unlisted: bool,
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
            root_unlisted: false,
        }
    }

    /// [`Tree::new`] of a root just opened, which no one has listed: its
    /// listing reads from it rather than from a descriptor of its own,
    /// one open fewer.
    pub(crate) fn of_unlisted(root: BorrowedFd<'a>, budget: usize, max_depth: usize) -> Tree<'a> {
        Tree {
            root_unlisted: true,
            ..Tree::new(root, budget, max_depth)
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
    pub(crate) fn next_dir(&mut self) -> Option<(PathBuf, Result<Listing, Unlisted>)> {
        let (rel, listed) = self.next_open_dir()?;
        Some((rel, listed.map(|(_, found)| found)))
    }

    /// [`Tree::next_dir`], with the descriptor the directory was opened
    /// with for its listing (`None` for the root, which the caller holds):
    /// for a caller that works in the directory (removes its entries,
    /// keeps it open for the files it looks at next).
    #[allow(clippy::type_complexity)]
    pub(crate) fn next_open_dir(
        &mut self,
    ) -> Option<(PathBuf, Result<(Option<OwnedFd>, Listing), Unlisted>)> {
        let rel = self.queue.pop_front()?;
        if rel.components().count() > self.max_depth {
            return Some((rel, Err(Unlisted::TooDeep)));
        }
        let listed = match self.open(&rel) {
            Ok(None) if std::mem::take(&mut self.root_unlisted) => {
                entries_of(self.root, &mut self.budget).map(|found| (None, found))
            }
            Ok(None) => entries(self.root, &mut self.budget).map(|found| (None, found)),
            Ok(Some(fd)) => entries_of(fd.as_fd(), &mut self.budget).map(|found| (Some(fd), found)),
            Err(e) => Err(e),
        };
        let listed = match listed {
            Ok((fd, mut found)) => {
                found.sort();
                Ok((fd, found))
            }
            Err(e) if super::is_over_budget(&e) => {
                self.queue.clear();
                Err(Unlisted::TooMany)
            }
            Err(e) => Err(Unlisted::Io(e)),
        };
        Some((rel, listed))
    }

    /// How many more entries the walk may visit.
    pub(crate) fn budget_left(&self) -> usize {
        self.budget
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
///
/// A [`Tree`] walks it, removing each directory's other entries as it is
/// listed; then the directories go, deepest first (in a breadth-first walk
/// each comes after its parent), each from its parent opened again from
/// the top, one component at a time.
pub(crate) fn remove_tree(
    dir: impl AsFd,
    name: &OsStr,
    budget: &mut usize,
    max_depth: usize,
) -> std::io::Result<()> {
    let dir = dir.as_fd();
    match kind_at(dir, name) {
        Ok(EntryKind::Dir) => {}
        Ok(_) => return Ok(rustix::fs::unlinkat(dir, name, AtFlags::empty())?),
        Err(Errno::NOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
    }
    let too_deep = || std::io::Error::other("nested too deep to remove");
    // `name` itself is one level: below it, one fewer.
    let below = max_depth.checked_sub(1).ok_or_else(too_deep)?;
    let top = open_dir_at(dir, name, false)?;
    let mut tree = Tree::of_unlisted(top.as_fd(), *budget, below);
    let mut dirs = Vec::new();
    let emptied = (|| {
        while let Some((rel, listed)) = tree.next_open_dir() {
            let (fd, found) = match listed {
                Ok(listed) => listed,
                Err(Unlisted::TooMany) => return Err(std::io::Error::other(super::OverBudget)),
                Err(Unlisted::TooDeep) => return Err(too_deep()),
                Err(Unlisted::Io(e)) => return Err(e),
            };
            let here = fd.as_ref().map_or(top.as_fd(), |fd| fd.as_fd());
            for (entry, kind) in found {
                if kind == EntryKind::Dir {
                    tree.descend(rel.join(&entry));
                } else {
                    rustix::fs::unlinkat(here, entry.as_os_str(), AtFlags::empty())?;
                }
            }
            dirs.push(rel);
        }
        Ok(())
    })();
    *budget = tree.budget_left();
    emptied?;
    for rel in dirs.iter().rev() {
        let (Some(parent), Some(leaf)) = (rel.parent(), rel.file_name()) else {
            continue;
        };
        match tree.open(parent)? {
            None => rustix::fs::unlinkat(&top, leaf, AtFlags::REMOVEDIR)?,
            Some(fd) => rustix::fs::unlinkat(&fd, leaf, AtFlags::REMOVEDIR)?,
        }
    }
    drop(top);
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
        // A root just opened is listed from its own descriptor, the same.
        let fresh = open_dir_at(rustix::fs::CWD, t, true).unwrap();
        let mut tree = Tree::of_unlisted(fresh.as_fd(), 100, 2);
        let (_, listed) = tree.next_dir().unwrap();
        let names: Vec<_> = listed.unwrap().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["a", "b"]);
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
        assert_eq!(budget, 0);
        // As deep as it goes, and no deeper: `gone` is the first level.
        std::fs::create_dir_all(gone.join("b/c/d")).unwrap();
        std::fs::write(gone.join("b/c/d/f"), "x").unwrap();
        let mut budget = 100;
        assert!(remove_tree(&fd, OsStr::new("gone"), &mut budget, 3).is_err());
        assert!(gone.join("b/c/d/f").is_file());
        remove_tree(&fd, OsStr::new("gone"), &mut budget, 4).unwrap();
        assert!(!gone.exists());
        assert!(keep.join("f").is_file());
    }
}
