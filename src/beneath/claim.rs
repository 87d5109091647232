//! Directories a run of the tool makes for itself and holds while it
//! lives: a new output directory built under a staging name, the scratch
//! directory an export writes its temporary files in. Each is named by a
//! prefix of the tool's own, the process id and a random part, and is
//! claimed by an exclusive `flock` its maker holds until it ends; a
//! directory of such a name whose lock can be taken belongs to a run that
//! is gone (killed, or crashed), and the next run removes it ([`sweep`]).
//!
//! The claim is the lock, never the process id: in another PID namespace
//! (containers sharing a volume) a live run's pid looks dead, and a dead
//! run's pid may be reused by a live process here. The name only says that
//! the tool made the directory, so that nothing else is ever removed.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{AtFlags, FlockOperation, Mode, flock};
use rustix::io::Errno;

use super::{EntryKind, open_dir_at, random_name};

/// A directory this run made in its parent and holds locked.
#[derive(Debug)]
pub(crate) struct Claim {
    name: OsString,
    fd: OwnedFd,
}

impl Claim {
    /// Makes a directory in `parent` named `prefix`, this process's id,
    /// `-` and a random part, with `mode` (the umask applies), and takes its
    /// lock. Nobody else can hold the lock of a directory just made, and a
    /// [`sweep`] that meets it between the two calls cannot take it away:
    /// the caller holds `parent`'s lock, which every sweep takes first.
    pub(crate) fn create(
        parent: BorrowedFd<'_>,
        prefix: &str,
        mode: u32,
    ) -> std::io::Result<Claim> {
        let mut tries = 0;
        let name = loop {
            let candidate =
                OsString::from(random_name(&format!("{prefix}{}-", std::process::id())));
            match rustix::fs::mkdirat(parent, candidate.as_os_str(), Mode::from_raw_mode(mode)) {
                Ok(()) => break candidate,
                Err(Errno::EXIST) if tries < 100 => tries += 1,
                Err(e) => return Err(e.into()),
            }
        };
        let fd = open_dir_at(parent, name.as_os_str(), false)?;
        flock(&fd, FlockOperation::NonBlockingLockExclusive)?;
        Ok(Claim { name, fd })
    }

    /// Its name in its parent.
    pub(crate) fn name(&self) -> &OsStr {
        &self.name
    }

    /// The directory, open (and locked for as long as this lives).
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Its name and its descriptor, which holds the lock.
    pub(crate) fn into_parts(self) -> (OsString, OwnedFd) {
        (self.name, self.fd)
    }
}

/// Is `name` one [`Claim::create`] gives with `prefix`: the prefix, a
/// process id (never 0), `-`, and a random part?
pub(crate) fn is_claim_name(name: &OsStr, prefix: &str) -> bool {
    name.to_str()
        .and_then(|n| n.strip_prefix(prefix))
        .and_then(|rest| rest.split_once('-'))
        .is_some_and(|(pid, random)| {
            !pid.is_empty()
                && pid.bytes().all(|b| b.is_ascii_digit())
                && pid.bytes().any(|b| b != b'0')
                && !random.is_empty()
        })
}

/// Removes the claimed directories named with `prefix` in `parent` whose
/// lock is free (their runs are gone), each while holding its lock, and a
/// symlink of such a name (itself, never its target); returns their names,
/// sorted. At most `max_entries` entries of `parent`, and as many below
/// each directory removed, are visited.
///
/// It runs only while holding `parent`'s lock (taken here without waiting
/// unless `parent_locked`: the caller holds it already), so it never meets
/// a directory between its creation and its lock.
pub(crate) fn sweep(
    parent: BorrowedFd<'_>,
    prefix: &str,
    parent_locked: bool,
    max_entries: usize,
) -> Vec<OsString> {
    if !parent_locked && flock(parent, FlockOperation::NonBlockingLockExclusive).is_err() {
        // Another run is making a directory here: clean up next time.
        return Vec::new();
    }
    let mut budget = max_entries;
    let found = super::walk::entries(parent, &mut budget).unwrap_or_default();
    let mut removed = Vec::new();
    for (name, kind) in found {
        if !is_claim_name(&name, prefix) {
            continue;
        }
        let gone = match kind {
            EntryKind::Symlink => {
                rustix::fs::unlinkat(parent, name.as_os_str(), AtFlags::empty()).is_ok()
            }
            EntryKind::Dir => {
                let Ok(fd) = open_dir_at(parent, name.as_os_str(), false) else {
                    continue;
                };
                if flock(&fd, FlockOperation::NonBlockingLockExclusive).is_err() {
                    // Its run is alive, in whatever namespace.
                    continue;
                }
                let mut budget = max_entries;
                super::walk::remove_tree(parent, &name, &mut budget, super::walk::MAX_DEPTH).is_ok()
            }
            _ => false,
        };
        if gone {
            removed.push(name);
        }
    }
    if !parent_locked {
        let _ = flock(parent, FlockOperation::Unlock);
    }
    removed.sort();
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claimed_directory_is_swept_only_once_its_lock_is_free() {
        let tmp = tempfile::tempdir().unwrap();
        let parent = open_dir_at(rustix::fs::CWD, tmp.path(), true).unwrap();
        let held = Claim::create(parent.as_fd(), ".x-", 0o700).unwrap();
        std::fs::write(tmp.path().join(held.name()).join("f"), "x").unwrap();
        std::fs::create_dir(tmp.path().join(".x-notapid-1")).unwrap();
        assert!(is_claim_name(held.name(), ".x-"));
        assert!(sweep(parent.as_fd(), ".x-", false, 100).is_empty());
        let name = held.name().to_owned();
        drop(held);
        assert_eq!(sweep(parent.as_fd(), ".x-", false, 100), [name.as_os_str()]);
        assert!(!tmp.path().join(&name).exists());
        assert!(tmp.path().join(".x-notapid-1").exists());
    }
}
