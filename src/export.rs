//! Effective manifests: every effective skill written as `<name>.json`, and
//! a check that committed manifests still match, for review in CI.
//!
//! Skills are resolved and written one at a time on each worker, so memory
//! stays flat however many skills there are.

use std::collections::BTreeSet;
use std::path::Path;

use crate::engine::{Skills, write_atomic};
use crate::error::{Error, Result};
use crate::layer::Located;
use crate::render;

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
    /// The manifest differs; a short line diff.
    Changed(Vec<String>),
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

impl Skills {
    /// The effective skill's manifest: the `show` JSON.
    pub fn manifest(&self, name: &str) -> Result<String> {
        Ok(render::to_json(&self.resolve(name)?.effective.to_value()))
    }

    fn manifest_of(&self, name: &str, located: &[Located]) -> Result<String> {
        Ok(render::to_json(
            &self.resolve_located(name, located)?.effective.to_value(),
        ))
    }

    /// Writes every effective skill to `dir/<name>.json` atomically. With
    /// `prune`, removes manifests of skills that no longer exist (not when
    /// any skill failed: its manifest is kept).
    pub fn export(&self, dir: &Path, prune: bool, jobs: usize) -> Result<Exported> {
        std::fs::create_dir_all(dir).map_err(|source| Error::Write {
            path: dir.to_path_buf(),
            source,
        })?;
        let catalog = self.layers().catalog();
        let results = crate::par::map(&catalog, jobs, |(name, located)| -> Result<bool> {
            let text = self.manifest_of(name, located)?;
            let path = dir.join(format!("{name}.json"));
            if std::fs::read(&path).is_ok_and(|old| old == text.as_bytes()) {
                return Ok(false);
            }
            write_atomic(&path, text.as_bytes())?;
            Ok(true)
        });
        let mut out = Exported::default();
        for r in results {
            match r {
                Ok(true) => out.written += 1,
                Ok(false) => out.unchanged += 1,
                Err(e) => out.failed.push(e),
            }
        }
        if prune && out.failed.is_empty() {
            let live: BTreeSet<&str> = catalog.iter().map(|(n, _)| n.as_str()).collect();
            for stale in manifests_in(dir) {
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
        let results = crate::par::map(&catalog, jobs, |(name, located)| -> Result<Option<Drift>> {
            let text = self.manifest_of(name, located)?;
            let path = dir.join(format!("{name}.json"));
            Ok(match std::fs::read(&path) {
                Err(_) => Some(Drift::Added),
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

/// A unified-style line diff of `old` → `new`, at most `max` changed lines.
pub fn short_diff(old: &str, new: &str, max: usize) -> Vec<String> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    // Longest common subsequence table; manifests are small.
    let (n, m) = (a.len(), b.len());
    if n.saturating_mul(m) > 4_000_000 {
        return vec![format!("- ({n} lines)"), format!("+ ({m} lines)")];
    }
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
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            emit(format!("-{}", a[i]), &mut out);
            i += 1;
        } else {
            emit(format!("+{}", b[j]), &mut out);
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
    #[test]
    fn diff_shows_changed_lines() {
        let d = super::short_diff("a\nb\nc\n", "a\nB\nc\nd\n", 10);
        assert_eq!(d, ["-b", "+B", "+d"]);
    }
}
