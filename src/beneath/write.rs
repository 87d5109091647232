//! Writing a file whole: a temporary file, created exclusively and never
//! through a symlink, filled, then renamed over its place, so a reader
//! sees the old file or the new one and never half of either, and a
//! failed write leaves the old file. There is no fsync: what the tool
//! writes is derived data that can always be written again, and an fsync
//! per file would make exporting 10,000 of them take seconds.
//!
//! Where the temporary file lies decides what a run killed halfway
//! (`kill -9`, a crash, a power cut) leaves behind. Beside its place
//! ([`replace_beside`]), a killed run leaves a `.bs-…` file there that no
//! later run can tell from a file someone else put there, so it stays. A
//! tree that a run writes many files into (an export into an existing
//! directory) gets a [`Scratch`] directory instead: a claimed directory
//! ([`super::claim`]) at the tree's top, where every temporary file is
//! made and from where it is renamed into place. A killed run leaves its
//! temporary files only there, and the next run that holds the tree's
//! lock finds the directory unclaimed and removes it, and nothing else.
//!
//! A tree written whole ([`NewTree`]: a fetched source's cache entry, the
//! layer a fetched source is checked as) is built in a claimed directory
//! of its own beside its place, then renamed into place in one step, never
//! over anything there ([`rename_new`]); a run that fails or is killed
//! leaves no half of it under the tree's name.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{Seek, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags};
use rustix::io::Errno;

use super::claim::Claim;
use super::random_name;

/// How a temporary file beside its place is named: this, then random.
pub(crate) const TEMP_PREFIX: &str = ".bs-";

/// Creates `name` in `dir` exclusively (never through anything there, a
/// symlink included) with `mode` (the umask applies), for reading and
/// writing.
fn create_excl(dir: BorrowedFd<'_>, name: &str, mode: u32) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode),
    )
}

/// Creates `leaf` in `dir`, which must not exist, with what `fill` writes:
/// in a directory nobody else sees yet (a staging directory), where no
/// temporary file is needed.
pub(crate) fn create_new(
    dir: BorrowedFd<'_>,
    leaf: &str,
    mode: u32,
    fill: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut file = File::from(create_excl(dir, leaf, mode)?);
    fill(&mut file)
}

/// A new temporary file `.bs-RANDOM` in `dir`, and its name.
fn temp_beside(dir: BorrowedFd<'_>, mode: u32) -> std::io::Result<(String, File)> {
    let mut tries = 0;
    loop {
        let name = random_name(TEMP_PREFIX);
        match create_excl(dir, &name, mode) {
            Ok(fd) => return Ok((name, File::from(fd))),
            Err(Errno::EXIST) if tries < 100 => tries += 1,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Replaces `leaf` in `dir` with what `fill` writes, through a temporary
/// file beside it (see the module documentation), with `mode`.
pub(crate) fn replace_beside(
    dir: BorrowedFd<'_>,
    leaf: &str,
    mode: u32,
    fill: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let (tmp, mut file) = temp_beside(dir, mode)?;
    let written =
        fill(&mut file).and_then(|()| Ok(rustix::fs::renameat(dir, tmp.as_str(), dir, leaf)?));
    if written.is_err() {
        let _ = rustix::fs::unlinkat(dir, tmp.as_str(), AtFlags::empty());
    }
    written
}

/// Writes `bytes` to `path` whole ([`replace_beside`] in its directory,
/// opened as given): for a single file a person named (`new` into a
/// layer, `spec --install`, the sources file). Its mode is 0666, or 0777
/// when `executable`, less the umask, as any new file's; `private` makes it
/// 0600, for what the tool keeps for the person.
pub(crate) fn write_atomic(
    path: &Path,
    bytes: &[u8],
    executable: bool,
    private: bool,
) -> std::io::Result<()> {
    let (dir, leaf) = split(path)?;
    let dir = super::open_dir_at(rustix::fs::CWD, dir, true)?;
    let mode = match (private, executable) {
        (true, _) => 0o600,
        (false, true) => 0o777,
        (false, false) => 0o666,
    };
    replace_beside(dir.as_fd(), leaf, mode, |f| f.write_all(bytes))
}

/// Makes the directory `path` and those missing above it, as given
/// (`mkdir -p`: each with mode 0777 less the umask): for a directory a
/// person named (`schema --out`, the man pages', a layer's).
pub(crate) fn make_dirs(path: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(path)
}

/// Removes the directory `path` if it is empty (`rmdir`).
pub(crate) fn remove_empty_dir(path: &Path) -> std::io::Result<()> {
    std::fs::remove_dir(path)
}

/// Creates the file `path` with `bytes`, mode 0666 less the umask, only
/// where nothing is (`O_CREAT | O_EXCL`: never over a file, never through
/// a symlink, even one planted meanwhile); its directory opened as given.
pub(crate) fn create_new_at(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let (dir, leaf) = split(path)?;
    let dir = super::open_dir_at(rustix::fs::CWD, dir, true)?;
    create_new(dir.as_fd(), leaf, 0o666, |f| f.write_all(bytes))
}

/// `path`'s directory (`.` for a bare name) and its file name.
fn split(path: &Path) -> std::io::Result<(&Path, &str)> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let Some(leaf) = path.file_name().and_then(OsStr::to_str) else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a file name",
        ));
    };
    Ok((dir, leaf))
}

/// Renames `from` in `from_dir` to `to` in `to_dir`, never replacing what
/// is there (`EEXIST`, or `ENOTEMPTY` for a directory): `RENAME_NOREPLACE`,
/// or, on a file system without it, a look and then a rename, which only
/// a caller that locks out the others may rely on (a directory is still
/// never renamed over one that holds anything).
pub(crate) fn rename_new(
    from_dir: BorrowedFd<'_>,
    from: &OsStr,
    to_dir: BorrowedFd<'_>,
    to: &OsStr,
) -> rustix::io::Result<()> {
    match rustix::fs::renameat_with(from_dir, from, to_dir, to, RenameFlags::NOREPLACE) {
        Err(Errno::INVAL | Errno::NOSYS) => match super::kind_at(to_dir, to) {
            Err(Errno::NOENT) => rustix::fs::renameat(from_dir, from, to_dir, to),
            _ => Err(Errno::EXIST),
        },
        r => r,
    }
}

/// A directory built whole under a claimed name ([`Claim`], mode 0700) in
/// its parent, then renamed into place ([`NewTree::install`]) or, for one
/// only read while it lives, removed; dropped before either, it is
/// removed, and a killed run leaves it only under its claimed name.
#[derive(Debug)]
pub(crate) struct NewTree {
    parent: OwnedFd,
    /// Where it is while it is built.
    path: PathBuf,
    claim: Option<Claim>,
}

impl NewTree {
    /// Makes one in the directory `parent` (at `parent_path`), named
    /// `prefix`, the process id and a random part.
    pub(crate) fn create(
        parent: OwnedFd,
        parent_path: &Path,
        prefix: &str,
    ) -> std::io::Result<NewTree> {
        let claim = Claim::create(parent.as_fd(), prefix, 0o700)?;
        Ok(NewTree {
            parent,
            path: parent_path.join(claim.name()),
            claim: Some(claim),
        })
    }

    /// [`NewTree::create`] in the directory `parent_path`, opened as given:
    /// a directory of the person's (the temporary directory).
    pub(crate) fn create_in(parent_path: &Path, prefix: &str) -> std::io::Result<NewTree> {
        let parent = super::open_dir_at(rustix::fs::CWD, parent_path, true)?;
        NewTree::create(parent, parent_path, prefix)
    }

    fn claim(&self) -> &Claim {
        self.claim.as_ref().expect("a tree not yet installed")
    }

    /// Where it is while it is built: for the readers of a tree that is
    /// never installed, and for messages.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Creates the file `rel` (a relative path of names) in the tree with
    /// `bytes` and `mode` (the umask applies), making the directories on
    /// its way (mode 0777, less the umask); never through anything there.
    /// `sync` flushes it to the disk (for a tree that is kept).
    pub(crate) fn add(
        &self,
        rel: &Path,
        bytes: &[u8],
        mode: u32,
        sync: bool,
    ) -> std::io::Result<()> {
        let invalid = || std::io::Error::from(std::io::ErrorKind::InvalidInput);
        let mut names = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(name) => names.push(name),
                _ => return Err(invalid()),
            }
        }
        let (leaf, dirs) = names.split_last().ok_or_else(invalid)?;
        let leaf = leaf.to_str().ok_or_else(invalid)?;
        let mut cur: Option<OwnedFd> = None;
        for name in dirs {
            let here = cur.as_ref().map_or(self.claim().fd(), |fd| fd.as_fd());
            match rustix::fs::mkdirat(here, *name, Mode::from_raw_mode(0o777)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
            cur = Some(super::open_dir_at(here, *name, false)?);
        }
        let here = cur.as_ref().map_or(self.claim().fd(), |fd| fd.as_fd());
        create_new(here, leaf, mode, |f| {
            f.write_all(bytes)?;
            if sync { f.sync_all() } else { Ok(()) }
        })
    }

    /// Renames the tree to `name` in its parent ([`rename_new`]: never
    /// over anything there); removed when that fails.
    pub(crate) fn install(mut self, name: &OsStr) -> std::io::Result<()> {
        let claim = self.claim.take().expect("a tree not yet installed");
        let (staging, _lock) = claim.into_parts();
        let renamed = rename_new(self.parent.as_fd(), &staging, self.parent.as_fd(), name);
        if renamed.is_err() {
            remove_staged(self.parent.as_fd(), &staging);
        }
        Ok(renamed?)
    }
}

impl Drop for NewTree {
    fn drop(&mut self) {
        if let Some(claim) = self.claim.take() {
            let (staging, _lock) = claim.into_parts();
            remove_staged(self.parent.as_fd(), &staging);
        }
    }
}

/// Removes a tree this run built, `name` in `parent`.
fn remove_staged(parent: BorrowedFd<'_>, name: &OsStr) {
    let mut budget = usize::MAX;
    let _ = super::walk::remove_tree(parent, name, &mut budget, super::walk::MAX_DEPTH);
}

/// The claimed directory at the top of a tree where a run makes its
/// temporary files (see the module documentation).
#[derive(Debug)]
pub(crate) struct Scratch {
    claim: Claim,
    next: AtomicU64,
}

impl Scratch {
    /// Makes one in `root` (private to the person), named with `prefix`.
    pub(crate) fn create(root: BorrowedFd<'_>, prefix: &str) -> std::io::Result<Scratch> {
        Ok(Scratch {
            claim: Claim::create(root, prefix, 0o700)?,
            next: AtomicU64::new(0),
        })
    }

    /// Its name in the tree's top directory.
    #[cfg(test)]
    pub(crate) fn name(&self) -> &OsStr {
        self.claim.name()
    }

    /// Replaces `leaf` in `dir` (a directory of the tree) with what `fill`
    /// writes, with `mode`: written here, then renamed there. Where the
    /// two lie on different mounts (a directory of the tree that is a
    /// mount point), the bytes written are copied to a temporary file
    /// beside `leaf` instead ([`replace_beside`]).
    pub(crate) fn replace(
        &self,
        dir: BorrowedFd<'_>,
        leaf: &str,
        mode: u32,
        fill: impl FnOnce(&mut File) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let here = self.claim.fd();
        let (tmp, mut file) = loop {
            let name = self.next.fetch_add(1, Ordering::Relaxed).to_string();
            match create_excl(here, &name, mode) {
                Ok(fd) => break (name, File::from(fd)),
                // Nobody else writes here; a name taken is skipped all
                // the same.
                Err(Errno::EXIST) => continue,
                Err(e) => return Err(e.into()),
            }
        };
        let written = fill(&mut file).and_then(|()| {
            match rustix::fs::renameat(here, tmp.as_str(), dir, leaf) {
                Err(Errno::XDEV) => replace_beside(dir, leaf, mode, |to| {
                    file.rewind()?;
                    std::io::copy(&mut file, to)?;
                    Ok(())
                }),
                r => Ok(r?),
            }
        });
        // Gone once renamed; removed when anything failed.
        let _ = rustix::fs::unlinkat(here, tmp.as_str(), AtFlags::empty());
        written
    }

    /// Removes the directory from `root` (with anything a failed write
    /// left in it) and gives up the claim.
    pub(crate) fn remove(self, root: BorrowedFd<'_>) {
        let (name, _lock) = self.claim.into_parts();
        let mut budget = usize::MAX;
        let _ = super::walk::remove_tree(root, &name, &mut budget, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_tree_is_put_in_place_whole_and_never_over_anything() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        let tree = NewTree::create_in(t, ".t-").unwrap();
        tree.add(Path::new("a/b/f"), b"x", 0o755, true).unwrap();
        tree.add(Path::new("a/g"), b"y", 0o644, false).unwrap();
        for bad in ["../f", "/etc/f", "a/./../f", ""] {
            assert!(
                tree.add(Path::new(bad), b"x", 0o644, false).is_err(),
                "{bad}"
            );
        }
        assert!(tree.add(Path::new("a/g"), b"z", 0o644, false).is_err());
        tree.install(OsStr::new("entry")).unwrap();
        assert_eq!(std::fs::read(t.join("entry/a/b/f")).unwrap(), b"x");
        assert_eq!(std::fs::read(t.join("entry/a/g")).unwrap(), b"y");
        // Never over anything, and nothing left behind either way.
        let tree = NewTree::create_in(t, ".t-").unwrap();
        tree.add(Path::new("f"), b"new", 0o644, false).unwrap();
        assert!(tree.install(OsStr::new("entry")).is_err());
        std::fs::create_dir(t.join("empty")).unwrap();
        let tree = NewTree::create_in(t, ".t-").unwrap();
        let seen = tree.path();
        assert!(seen.is_dir());
        assert!(tree.install(OsStr::new("empty")).is_err());
        let tree = NewTree::create_in(t, ".t-").unwrap();
        tree.add(Path::new("d/f"), b"x", 0o644, false).unwrap();
        drop(tree);
        let mut names: Vec<_> = std::fs::read_dir(t)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["empty", "entry"]);
    }

    #[test]
    fn a_scratch_write_replaces_the_file_and_leaves_nothing_beside() {
        let tmp = tempfile::tempdir().unwrap();
        let root = super::super::open_dir_at(rustix::fs::CWD, tmp.path(), true).unwrap();
        std::fs::create_dir(tmp.path().join("d")).unwrap();
        std::fs::write(tmp.path().join("d/f"), "old").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", tmp.path().join("d/l")).unwrap();
        let d = super::super::open_dir_at(&root, "d", false).unwrap();
        let scratch = Scratch::create(root.as_fd(), ".x-").unwrap();
        for leaf in ["f", "l", "new"] {
            scratch
                .replace(d.as_fd(), leaf, 0o666, |f| f.write_all(b"new"))
                .unwrap();
            assert_eq!(
                std::fs::read(tmp.path().join("d").join(leaf)).unwrap(),
                b"new"
            );
        }
        assert!(!tmp.path().join("d/l").is_symlink());
        // A failed fill leaves the old file, and nothing in the scratch.
        let failed = scratch.replace(d.as_fd(), "f", 0o666, |f| {
            f.write_all(b"half")?;
            Err(std::io::Error::other("no"))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read(tmp.path().join("d/f")).unwrap(), b"new");
        let name = scratch.name().to_owned();
        assert_eq!(
            std::fs::read_dir(tmp.path().join(&name)).unwrap().count(),
            0
        );
        let mut names: Vec<_> = std::fs::read_dir(tmp.path().join("d"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["f", "l", "new"]);
        scratch.remove(root.as_fd());
        assert!(!tmp.path().join(&name).exists());
    }
}
