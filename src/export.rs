//! Effective manifests: every effective skill written as `<name>.json`, and
//! a check that committed manifests still match, for review in CI.
//!
//! Skills are resolved and written one at a time on each worker, so memory
//! stays flat however many skills there are.
//!
//! Every manifest is written atomically ([`OutDir`]). Into a directory that
//! already exists, each file is replaced by a rename, and a manifest whose
//! bytes have not changed is not touched. A directory that does not exist
//! yet is built beside its final place and renamed into it once complete, so
//! nobody ever sees half an export, and its files need no rename each.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::engine::{Skills, write_atomic};
use crate::error::{Error, Result};
use crate::layer::Located;
use crate::render;
use crate::text::{EXCERPT_CHARS, excerpt};

/// What [`Skills::export`] did.
#[derive(Debug, Default)]
pub struct Exported {
    /// Manifests written (new or changed).
    pub written: usize,
    /// Manifests already up to date.
    pub unchanged: usize,
    /// Stale manifests removed (with `prune`).
    pub removed: Vec<String>,
    /// Skills that could not be resolved, with why.
    pub failed: Vec<Error>,
}

/// How a committed manifest differs from the effective skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drift {
    /// The skill exists but has no manifest.
    Added,
    /// A manifest whose skill no longer exists.
    Removed,
    /// The manifest differs; a short line diff (each line an escaped excerpt).
    Changed(Vec<String>),
    /// The manifest cannot be compared: it is a symlink out of the
    /// manifests directory, not a regular file, or too large. Never read.
    Refused(String),
}

/// The manifest names (`<name>.json` stems) in `dir`.
fn manifests_in(dir: &Path) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return BTreeSet::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".json").map(str::to_owned))
        .filter(|n| !n.starts_with('.'))
        .collect()
}

/// Where [`Skills::export`] writes: an output directory that existed (files
/// replaced one by one, atomically) or a new one being built under a
/// temporary name beside it (files created directly; [`OutDir::finish`]
/// renames the whole directory into place). Dropped without `finish`, a
/// half-built new directory is removed.
#[derive(Debug)]
pub struct OutDir {
    dir: PathBuf,
    staging: Option<PathBuf>,
    existing: BTreeSet<String>,
    /// The real path of an existing `dir`, which reads stay inside.
    root: Option<PathBuf>,
}

impl OutDir {
    /// Opens `dir` for writing manifests: lists the manifests it holds, or,
    /// when it does not exist, creates its temporary stand-in.
    pub fn open(dir: &Path) -> Result<OutDir> {
        if dir.exists() && !dir.is_dir() {
            return Err(Error::Write {
                path: dir.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotADirectory,
                    "exists and is not a directory",
                ),
            });
        }
        if dir.is_dir() {
            return Ok(OutDir {
                dir: dir.to_path_buf(),
                staging: None,
                existing: manifests_in(dir),
                root: crate::confine::real_root(dir),
            });
        }
        let parent = dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent).map_err(write_error(parent))?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let staging = parent.join(format!(".{name}.tmp-{}", std::process::id()));
        // A leftover of an interrupted run with the same process id.
        let _ = std::fs::remove_dir_all(&staging);
        std::fs::create_dir(&staging).map_err(write_error(&staging))?;
        Ok(OutDir {
            dir: dir.to_path_buf(),
            staging: Some(staging),
            existing: BTreeSet::new(),
            root: None,
        })
    }

    /// Writes `name.json` unless it already holds exactly `text`. Returns
    /// whether it wrote.
    pub fn put(&self, name: &str, text: &[u8]) -> Result<bool> {
        let file = format!("{name}.json");
        if let Some(staging) = &self.staging {
            let path = staging.join(&file);
            let fail = |source| Error::Write {
                path: self.dir.join(&file),
                source,
            };
            let mut f = std::fs::File::create_new(&path).map_err(fail)?;
            std::io::Write::write_all(&mut f, text).map_err(fail)?;
            return Ok(true);
        }
        let path = self.dir.join(&file);
        // Compared only when it is a regular file inside the directory; a
        // symlink or anything else is replaced by a rename, never followed.
        if self.existing.contains(name)
            && self.root.as_deref().is_some_and(|root| {
                crate::confine::read_in_root(root, &path, text.len() as u64)
                    .is_ok_and(|old| old == text)
            })
        {
            return Ok(false);
        }
        write_atomic(&path, text)?;
        Ok(true)
    }

    /// The manifests the directory held when it was opened.
    pub fn existing(&self) -> &BTreeSet<String> {
        &self.existing
    }

    /// Puts a new directory in its place. Should another process have
    /// created it meanwhile, the files are moved into it one by one (each
    /// move atomic) instead.
    pub fn finish(mut self) -> Result<()> {
        let Some(staging) = self.staging.take() else {
            return Ok(());
        };
        if std::fs::rename(&staging, &self.dir).is_ok() {
            return Ok(());
        }
        let moved = (|| {
            std::fs::create_dir_all(&self.dir).map_err(write_error(&self.dir))?;
            for entry in std::fs::read_dir(&staging).map_err(write_error(&staging))? {
                let entry = entry.map_err(write_error(&staging))?;
                let to = self.dir.join(entry.file_name());
                std::fs::rename(entry.path(), &to).map_err(write_error(&to))?;
            }
            Ok(())
        })();
        let _ = std::fs::remove_dir_all(&staging);
        moved
    }
}

/// Turns an I/O error on `path` into [`Error::Write`].
fn write_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.to_path_buf();
    move |source| Error::Write { path, source }
}

impl Drop for OutDir {
    fn drop(&mut self) {
        if let Some(staging) = &self.staging {
            let _ = std::fs::remove_dir_all(staging);
        }
    }
}

impl Skills {
    /// The effective skill's manifest: the `show` JSON.
    pub fn manifest(&self, name: &str) -> Result<String> {
        Ok(render::effective_to_json(&self.resolve(name)?.effective()))
    }

    fn manifest_of(&self, name: &str, located: &[Located]) -> Result<String> {
        Ok(render::effective_to_json(
            &self.resolve_located(name, located)?.effective(),
        ))
    }

    /// Writes every effective skill to `dir/<name>.json` atomically. With
    /// `prune`, removes manifests of skills that no longer exist (not when
    /// any skill failed: its manifest is kept).
    pub fn export(&self, dir: &Path, prune: bool, jobs: usize) -> Result<Exported> {
        let out_dir = OutDir::open(dir)?;
        let catalog = self.layers().catalog();
        // One small result per skill (errors boxed): with 100,000 skills the
        // results are held three times over while the workers' parts are
        // put back in order.
        let results = crate::par::map(&catalog, jobs, |(name, located)| {
            let text = self.manifest_of(name, located).map_err(Box::new)?;
            out_dir.put(name, text.as_bytes()).map_err(Box::new)
        });
        let mut out = Exported::default();
        for r in results {
            match r {
                Ok(true) => out.written += 1,
                Ok(false) => out.unchanged += 1,
                Err(e) => out.failed.push(*e),
            }
        }
        let existed = out_dir.existing().clone();
        out_dir.finish()?;
        if prune && out.failed.is_empty() {
            let live: BTreeSet<&str> = catalog.iter().map(|(n, _)| n.as_str()).collect();
            for stale in existed {
                if !live.contains(stale.as_str()) {
                    let path = dir.join(format!("{stale}.json"));
                    std::fs::remove_file(&path).map_err(|source| Error::Write { path, source })?;
                    out.removed.push(stale);
                }
            }
        }
        Ok(out)
    }

    /// Compares `dir`'s manifests with the effective skills, writing nothing.
    /// Returns every drift, by name; a skill that fails to resolve is an error.
    pub fn check_export(&self, dir: &Path, jobs: usize) -> Result<Vec<(String, Drift)>> {
        let catalog = self.layers().catalog();
        let root = crate::confine::real_root(dir);
        let cap = self.max_manifest_bytes();
        let results = crate::par::map(&catalog, jobs, |(name, located)| -> Result<Option<Drift>> {
            let text = self.manifest_of(name, located)?;
            let path = dir.join(format!("{name}.json"));
            let Some(root) = &root else {
                return Ok(Some(Drift::Added));
            };
            Ok(match crate::confine::read_in_root(root, &path, cap) {
                Err(r) if r.is_not_found() => Some(Drift::Added),
                Err(r) => Some(Drift::Refused(r.describe(&path, "manifests directory"))),
                Ok(old) if old == text.as_bytes() => None,
                Ok(old) => Some(Drift::Changed(short_diff(
                    &String::from_utf8_lossy(&old),
                    &text,
                    12,
                ))),
            })
        });
        let mut out = Vec::new();
        let mut errors = Vec::new();
        for ((name, _), r) in catalog.iter().zip(results) {
            match r {
                Ok(Some(d)) => out.push((name.clone(), d)),
                Ok(None) => {}
                Err(e) => errors.push(e),
            }
        }
        if !errors.is_empty() {
            let diags = errors
                .iter()
                .flat_map(|e| e.diagnostics().to_vec())
                .collect::<Vec<_>>();
            return Err(if diags.is_empty() {
                errors.remove(0)
            } else {
                Error::Invalid(diags)
            });
        }
        let live: BTreeSet<&str> = catalog.iter().map(|(n, _)| n.as_str()).collect();
        for stale in manifests_in(dir) {
            if !live.contains(stale.as_str()) {
                out.push((stale, Drift::Removed));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }
}

/// A unified-style line diff of `old` → `new`, at most `max` changed lines,
/// each an escaped excerpt ([`crate::text::excerpt`]): a diff can neither
/// dump a file nor write control characters into a CI log.
pub fn short_diff(old: &str, new: &str, max: usize) -> Vec<String> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    // The walk below matches the lines the two share at the start one by
    // one, so they need no table: it is built for the rest only. (Lines
    // shared at the end do need it: where a line repeats, which of its
    // copies the walk matches depends on them.)
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[prefix..], &b[prefix..]);
    // Longest common subsequence table, one row after another.
    let (n, m) = (a.len(), b.len());
    if n.saturating_mul(m) > 4_000_000 {
        return vec![format!("- ({n} lines)"), format!("+ ({m} lines)")];
    }
    let w = m + 1;
    let mut lcs = vec![0u32; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i * w + j] = if a[i] == b[j] {
                lcs[(i + 1) * w + j + 1] + 1
            } else {
                lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    let mut more = 0;
    let mut emit = |line: String, out: &mut Vec<String>| {
        if out.len() < max {
            out.push(line);
        } else {
            more += 1;
        }
    };
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
            emit(format!("-{}", excerpt(a[i], EXCERPT_CHARS)), &mut out);
            i += 1;
        } else {
            emit(format!("+{}", excerpt(b[j], EXCERPT_CHARS)), &mut out);
            j += 1;
        }
    }
    if more > 0 {
        out.push(format!("... {more} more changed line(s)"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::OutDir;

    #[test]
    fn a_new_directory_created_meanwhile_gets_the_files_moved_in() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("m");
        let out = OutDir::open(&dir).unwrap();
        out.put("a", b"1").unwrap();
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("other.txt"), "kept").unwrap();
        out.finish().unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("a.json")).unwrap(), "1");
        assert_eq!(
            std::fs::read_to_string(dir.join("other.txt")).unwrap(),
            "kept"
        );
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    }

    #[test]
    fn an_unfinished_new_directory_leaves_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let out = OutDir::open(&tmp.path().join("m")).unwrap();
        out.put("a", b"1").unwrap();
        drop(out);
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    #[test]
    fn an_existing_directory_is_written_in_place_and_unchanged_files_kept() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a.json"), "1").unwrap();
        let out = OutDir::open(tmp.path()).unwrap();
        assert!(!out.put("a", b"1").unwrap());
        assert!(out.put("b", b"2").unwrap());
        out.finish().unwrap();
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("b.json")).unwrap(),
            "2"
        );
    }
    /// `short_diff` as it was before the common start was left out of the table.
    fn full_table_diff(old: &str, new: &str, max: usize) -> Vec<String> {
        use crate::text::{EXCERPT_CHARS, excerpt};
        let a: Vec<&str> = old.lines().collect();
        let b: Vec<&str> = new.lines().collect();
        let (n, m) = (a.len(), b.len());
        let mut lcs = vec![vec![0u32; m + 1]; n + 1];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i][j] = if a[i] == b[j] {
                    lcs[i + 1][j + 1] + 1
                } else {
                    lcs[i + 1][j].max(lcs[i][j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::new();
        while i < n || j < m {
            if i < n && j < m && a[i] == b[j] {
                i += 1;
                j += 1;
            } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
                out.push(format!("-{}", excerpt(a[i], EXCERPT_CHARS)));
                i += 1;
            } else {
                out.push(format!("+{}", excerpt(b[j], EXCERPT_CHARS)));
                j += 1;
            }
        }
        if out.len() > max {
            let more = out.len() - max;
            out.truncate(max);
            out.push(format!("... {more} more changed line(s)"));
        }
        out
    }

    #[test]
    fn leaving_out_the_common_start_changes_no_diff() {
        // Every pair of texts of up to 6 lines over a 3-line alphabet, in a
        // fixed pseudo-random sample.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |k: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % k
        };
        for _ in 0..20_000 {
            let mut text = || {
                (0..next(7))
                    .map(|_| ["x", "y", "z"][next(3) as usize])
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            let (a, b) = (text(), text());
            let max = 1 + next(5) as usize;
            assert_eq!(
                super::short_diff(&a, &b, max),
                full_table_diff(&a, &b, max),
                "{a:?} -> {b:?}"
            );
        }
    }

    #[test]
    fn diff_shows_changed_lines() {
        let d = super::short_diff("a\nb\nc\n", "a\nB\nc\nd\n", 10);
        assert_eq!(d, ["-b", "+B", "+d"]);
    }
}
