//! The ledger: what export on this machine wrote into an output directory,
//! kept where no repository reaches.
//!
//! The record (`DIR/.bernstein-skills.json`) says which files export owns
//! there, and it is often committed: anyone who can change it could make
//! it claim a person's own file (`my-notes/SKILL.md`, with the file's real
//! digest), and export would then overwrite or prune that file. So export
//! also keeps, per output directory, a ledger outside every repository:
//! `<state dir>/exports/<SHA-256 of the directory's absolute path with no
//! symlink in it>.json` ([`crate::Env::state_dir`]). It lists, per skill,
//! the files (path and digest) export on this machine wrote there, or
//! found there holding exactly what it writes now (verified by their
//! content). A claim of the record is honoured for overwriting or removing
//! a file only when the ledger holds the same claim, or the file holds what
//! export writes now, or it is not there ([`super::plan::Trust`]).
//!
//! The ledger has the record's shape and is read with the record's reader
//! (capped, every name and path checked). It is written atomically, under
//! the output directory's lock, whenever what it holds changes: before any
//! file is written (with every claim the export is about to make, so an
//! interrupted export leaves nothing it wrote unconfirmed) and after.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::Format;
use super::outdir::OutDir;
use super::record::{Digest, Record, SkillRecord};
use crate::beneath::private::{NotPrivate, PrivateDir};
use crate::error::{Error, Result};

/// The ledgers' directory below the state directory.
const EXPORTS: &str = "exports";

/// One output directory's ledger.
#[derive(Debug)]
pub(super) struct Ledger {
    /// Its file: the state directory, and the file's name in its
    /// `exports/`; `None` when there is no ledger (no state directory, or
    /// the output directory's path cannot be known): claims are then
    /// honoured only for files that hold what export writes.
    path: Option<(PathBuf, String)>,
    /// What it holds.
    pub(super) record: Record,
    /// The digest of what it held when read, if it existed.
    digest: Option<Digest>,
}

impl Ledger {
    /// No ledger.
    pub(super) fn none(format: Format) -> Ledger {
        Ledger {
            path: None,
            record: Record::new(format),
            digest: None,
        }
    }

    /// The ledger of `out` below `state_dir`, read if it exists. One for
    /// another format (the directory was replaced since) counts as empty.
    pub(super) fn open(state_dir: Option<&Path>, out: &OutDir, format: Format) -> Result<Ledger> {
        let (Some(state), Some(real)) = (state_dir, out.real_path()) else {
            return Ok(Ledger::none(format));
        };
        let path = (state.to_path_buf(), file_of(real));
        let (record, digest) = match read(&path.0, &path.1)? {
            Some((r, d)) if r.format == format => (r, Some(d)),
            Some((_, d)) => (Record::new(format), Some(d)),
            None => (Record::new(format), None),
        };
        Ok(Ledger {
            path: Some(path),
            record,
            digest,
        })
    }

    /// The ledger of `out` below `state_dir` (not read), to hold
    /// `record`: a new directory, every file of which export wrote.
    pub(super) fn replacing(state_dir: Option<&Path>, out: &OutDir, record: Record) -> Ledger {
        Ledger {
            path: state_dir
                .zip(out.real_path())
                .map(|(s, r)| (s.to_path_buf(), file_of(r))),
            record,
            digest: None,
        }
    }

    /// Writes what the ledger holds, with `patch`'s skills in place of its
    /// own, if that differs from what it held when read; `spec_sha256` as
    /// the record has it.
    pub(super) fn write(
        &mut self,
        spec_sha256: &Digest,
        patch: &BTreeMap<String, SkillRecord>,
    ) -> Result<()> {
        let Some((state, name)) = &self.path else {
            return Ok(());
        };
        if patch.is_empty() {
            let unchanged = match self.digest {
                Some(d) => self.record.digest(spec_sha256) == d,
                // No file, and nothing to put in one.
                None => self.record.skills.is_empty(),
            };
            if unchanged {
                return Ok(());
            }
        }
        // Machine-local state for this person alone.
        let dir = exports(state, true)?.expect("made when missing");
        let path = dir.path().join(name);
        dir.write(name, |w| self.record.write_capped(w, spec_sha256, patch))
            .map_err(|source| Error::Write { path, source })?;
        // What it holds now, so that writing the same again is skipped.
        self.digest = patch.is_empty().then(|| self.record.digest(spec_sha256));
        Ok(())
    }
}

/// The ledgers' directory below the state directory `state`, opened and
/// checked as the person's own (`beneath::private`), made when `create`;
/// `None` when it does not exist.
fn exports(state: &Path, create: bool) -> Result<Option<PrivateDir>> {
    let not_private = |r| Error::not_private(r, "XDG_STATE_HOME");
    let Some(state) = PrivateDir::open(state, create).map_err(not_private)? else {
        return Ok(None);
    };
    state
        .subdir(OsStr::new(EXPORTS), create)
        .map_err(not_private)
}

/// The name of the ledger's file in [`exports`] for the output directory
/// at `real` (absolute, no symlink in it).
fn file_of(real: &Path) -> String {
    format!("{:x}.json", Digest::of(real.as_os_str().as_encoded_bytes()))
}

/// Reads the ledger `name` below the state directory `state`: `None` if
/// there is none. A ledger export cannot read is an error that says how to
/// go on without it.
fn read(state: &Path, name: &str) -> Result<Option<(Record, Digest)>> {
    let Some(dir) = exports(state, false)? else {
        return Ok(None);
    };
    let path = dir.path().join(name);
    let bad = |message: String| Error::BadRecord {
        path: path.clone(),
        at: None,
        message,
    };
    const REMOVE: &str = "it is export's ledger of what it wrote: remove it, and export \
                          confirms the files it finds by their content";
    let file = match dir.open_file(OsStr::new(name)) {
        Ok(Some((file, _))) => file,
        Ok(None) => return Ok(None),
        Err(r @ (NotPrivate::Owner { .. } | NotPrivate::Writable { .. })) => {
            return Err(Error::not_private(r, "XDG_STATE_HOME"));
        }
        Err(NotPrivate::Io { error, .. }) => {
            return Err(bad(format!("cannot be read ({error}); {REMOVE}")));
        }
        Err(_) => return Err(bad(format!("is not a regular file; {REMOVE}"))),
    };
    let reread = || {
        use std::io::{Read, Seek};
        let mut f = &file;
        f.rewind().ok()?;
        let mut bytes = Vec::new();
        f.take(super::record::MAX_RECORD_BYTES + 1)
            .read_to_end(&mut bytes)
            .ok()?;
        Some(bytes)
    };
    match Record::read(&file, &path, reread) {
        Ok(r) => Ok(Some(r)),
        Err(Error::BadRecord { path, at, message }) => Err(Error::BadRecord {
            path,
            at,
            message: format!("{message}; {REMOVE}"),
        }),
        Err(e) => Err(e),
    }
}
