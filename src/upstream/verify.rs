//! `verify`, as data: every locked source's files are the locked ones,
//! from the cache or fetched again at the locked commit (and then kept in
//! the cache), and no source has a skill the local base layer has too.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::lock::{Lock, LockedSource};
use super::sources::SourcesFile;
use super::{Cache, Paths};
use crate::error::{ErrorKind, Result};

/// One source verified.
#[derive(Debug, Clone)]
pub struct Verified {
    /// Its name.
    pub source: String,
    /// Its entry in the lock.
    pub locked: LockedSource,
    /// Fetched now (the cache lacked it), else read from the cache.
    pub fetched: bool,
}

/// Verifies each source of `file` as `lock` (which matches it,
/// [`super::read_project`]) locks it, in the file's order: its files from
/// `cache`, or fetched at the locked commit and stored there; a file that
/// differs from the lock, or a skill the local base layer (`local`) has
/// too, is refused, naming the lock at `paths`.
pub fn verify(
    file: &SourcesFile,
    lock: &Lock,
    cache: &Cache,
    local: &BTreeMap<String, PathBuf>,
    paths: &Paths,
) -> Result<Vec<Verified>> {
    let mut out = Vec::new();
    for s in &file.sources {
        let locked = &lock.sources[&s.name];
        let (fetched, fetched_now) = super::load_locked(cache, &s.name, locked)?;
        if fetched_now {
            cache.store(&s.name, locked, &fetched, None)?;
        }
        check_local(&s.name, locked, local, &paths.lock)?;
        out.push(Verified {
            source: s.name.clone(),
            locked: locked.clone(),
            fetched: fetched_now,
        });
    }
    Ok(out)
}

/// Refuses source `name` (locked as `locked`, in the lock at `lock`) when
/// it has a skill the local base layer (`local`) has too.
fn check_local(
    name: &str,
    locked: &LockedSource,
    local: &BTreeMap<String, PathBuf>,
    lock: &Path,
) -> Result<()> {
    let Some(skill) = locked
        .skills_taken()
        .into_iter()
        .find(|k| local.contains_key(*k))
    else {
        return Ok(());
    };
    Err(super::refused(
        ErrorKind::Conflict,
        lock,
        format!(
            "skill '{}' is in source '{}' and in the local base layer ({}); remove it from one of them",
            crate::text::escape(skill),
            crate::text::escape(name),
            crate::text::path(&local[skill])
        ),
    ))
}
