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

use std::ffi::OsStr;
use std::fs::File;
use std::io::{Seek, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, Mode, OFlags};
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
    let dir = super::open_dir_at(rustix::fs::CWD, dir, true)?;
    let mode = match (private, executable) {
        (true, _) => 0o600,
        (false, true) => 0o777,
        (false, false) => 0o666,
    };
    replace_beside(dir.as_fd(), leaf, mode, |f| f.write_all(bytes))
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
