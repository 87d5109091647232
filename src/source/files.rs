//! A skill's files, layered: every file under a `NAME/` skill directory
//! other than `SKILL.md` (`references/style.md`, `scripts/lint.sh`,
//! `assets/logo.png`) is part of the skill, addressed by its path relative to
//! that directory. A higher layer's file at the same path replaces the lower
//! one's whole; other files coexist. Only the `NAME/SKILL.md` and files-only
//! forms have a directory: a `NAME.yaml` override changes fields and keeps
//! the lower layers' files, and a `NAME/` directory with no `SKILL.md` above
//! base adds files and changes no field.
//!
//! Listing reads no file: it walks the directories, and every entry must
//! resolve to a regular file inside its layer ([`crate::source::read_in_root`]), with a
//! printable UTF-8 name. The number of files, their total size and the depth
//! are capped ([`FileLimits`]). Contents are read only by whoever copies the
//! files (`export --format skill`), as bytes, never parsed.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Diagnostic, DiagnosticKind};
use crate::layer::{Form, Layer, SKILL_MD_NAMES, check_name};
use crate::source::Located;
use crate::source::confine::{Kind, Refusal, Root};

/// Caps on one skill's files (per layer and merged).
#[derive(Debug, Clone, Copy)]
pub struct FileLimits {
    /// The most files in one skill.
    pub(crate) max_files: usize,
    /// The most bytes of all of them together.
    pub(crate) max_total_bytes: u64,
    /// The deepest directory below the skill directory.
    pub(crate) max_depth: usize,
    /// The most directory entries one layer's walk of a skill visits
    /// (files, directories, symlinks, hidden entries alike).
    pub(crate) max_entries: usize,
}

impl Default for FileLimits {
    fn default() -> Self {
        FileLimits {
            max_files: 1000,
            max_total_bytes: 64 * 1024 * 1024,
            max_depth: 8,
            max_entries: 10_000,
        }
    }
}

/// A file the skill ships, from a layer that supplied it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The layer.
    pub layer: Layer,
    /// The file in that layer (as found, before symlinks are resolved).
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// It has an execute bit (a script).
    pub executable: bool,
}

/// One file of the effective skill.
#[derive(Debug, Clone)]
pub struct SkillFile {
    /// Its path relative to the skill directory, `/`-separated.
    pub rel: String,
    /// Where it comes from: the highest layer that has it.
    pub source: Source,
    /// The lower layers' files at the same path it replaced, nearest first.
    pub replaced: Vec<Source>,
    /// Its layer's directory, which reading it stays beneath.
    pub root: Arc<Root>,
}

impl PartialEq for SkillFile {
    fn eq(&self, other: &Self) -> bool {
        self.rel == other.rel && self.source == other.source && self.replaced == other.replaced
    }
}

impl SkillFile {
    /// Reads the file, as bytes, beneath its layer ([`crate::source::read_in_root`]).
    pub fn read(&self) -> Result<Vec<u8>, Diagnostic> {
        crate::source::confine::read_in_root(&self.root, &self.source.path, self.source.size)
            .map_err(|r| {
                Diagnostic::error(
                    Some(&self.source.path),
                    DiagnosticKind::Refused {
                        reason: r.describe(&self.source.path, &self.source.layer.to_string()),
                    },
                )
                .in_layer(self.source.layer)
            })
    }
}

/// The files of a skill located in `located` (base first), sorted by path.
/// Any entry that cannot be part of a skill (a symlink out of its layer or
/// to a hidden entry, not a regular file, an unprintable name) or a cap
/// exceeded is an error naming the file.
pub fn collect(located: &[Located], limits: &FileLimits) -> Result<Vec<SkillFile>, Diagnostic> {
    let mut merged: BTreeMap<String, SkillFile> = BTreeMap::new();
    for l in located {
        let Some(dir) = l.skill_dir() else {
            continue;
        };
        let mut walk = Walk {
            l,
            limits,
            visited: HashSet::new(),
            dev: 0,
            entries: 0,
            out: Vec::new(),
        };
        walk.dir(dir, "", 0, None)?;
        for (rel, source) in walk.out {
            match merged.get_mut(&rel) {
                Some(f) => {
                    let lower = std::mem::replace(&mut f.source, source);
                    f.replaced.insert(0, lower);
                    f.root = l.root.clone();
                }
                None => {
                    merged.insert(
                        rel.clone(),
                        SkillFile {
                            rel,
                            source,
                            replaced: Vec::new(),
                            root: l.root.clone(),
                        },
                    );
                }
            }
        }
        if merged.len() > limits.max_files {
            return Err(too_many(
                l,
                &format!("more than {} files", limits.max_files),
            ));
        }
    }
    let total: u64 = merged.values().map(|f| f.source.size).sum();
    if total > limits.max_total_bytes {
        let top = located.last().expect("a skill has a file");
        return Err(too_many(
            top,
            &format!(
                "its files take {total} bytes, over the {}-byte limit",
                limits.max_total_bytes
            ),
        ));
    }
    Ok(merged.into_values().collect())
}

fn too_many(l: &Located, what: &str) -> Diagnostic {
    let at = match l.form {
        Form::Files => &l.path,
        _ => l.path.parent().unwrap_or(&l.path),
    };
    Diagnostic::error(
        Some(at),
        DiagnosticKind::Refused {
            reason: format!("the skill has {what}"),
        },
    )
    .in_layer(l.layer)
}

fn refuse(l: &Located, path: &Path, reason: String) -> Diagnostic {
    Diagnostic::error(Some(path), DiagnosticKind::Refused { reason }).in_layer(l.layer)
}

/// One layer's walk of a skill directory: bounded by the entries it visits,
/// and entering each directory once, however many symlinks lead to it.
struct Walk<'l> {
    l: &'l Located,
    limits: &'l FileLimits,
    visited: HashSet<(u64, u64)>,
    /// The device of the walk's root directory.
    dev: u64,
    entries: usize,
    out: Vec<(String, Source)>,
}

impl Walk<'_> {
    /// Every file below `dir` (relative to the layer; relative path `prefix`
    /// in the skill), depth first. Each directory is walked once, by its
    /// identity (device and inode), which ends every symlink loop: `id` is
    /// the inode its parent's listing gave, on the root's device, or where
    /// a symlink to it led; `None` (the walk's root) asks the directory
    /// itself. A directory that is a mount point is known by two
    /// identities and may be walked twice; the walk's caps bound it all the
    /// same.
    fn dir(
        &mut self,
        dir: &Path,
        prefix: &str,
        depth: usize,
        id: Option<(u64, u64)>,
    ) -> Result<(), Diagnostic> {
        if let Some(id) = id
            && !self.visited.insert(id)
        {
            return Ok(());
        }
        let l = self.l;
        let shown = |rel: &Path| l.root.path().join(rel);
        if depth > self.limits.max_depth {
            return Err(refuse(
                l,
                &shown(dir),
                format!(
                    "the skill's directories nest deeper than {} levels",
                    self.limits.max_depth
                ),
            ));
        }
        let (meta, entries) = l.root.entries_with_files(dir, id.is_none()).map_err(|r| {
            refuse(
                l,
                &shown(dir),
                match r {
                    Refusal::Io(e) => format!("cannot list the skill's directory: {e}"),
                    r => r.describe(&shown(dir), &l.layer.to_string()),
                },
            )
        })?;
        if let Some(meta) = meta {
            if depth == 0 {
                self.dev = meta.id.0;
            }
            if !self.visited.insert(meta.id) {
                return Ok(());
            }
        }
        for entry in entries {
            self.entries += 1;
            if self.entries > self.limits.max_entries {
                return Err(too_many(
                    l,
                    &format!(
                        "more than {} entries in its directories",
                        self.limits.max_entries
                    ),
                ));
            }
            let lossy = entry.name.to_string_lossy();
            // Hidden entries (`.git`, `.DS_Store`) are not part of a skill.
            if lossy.starts_with('.') {
                continue;
            }
            // The skill's file, and a `skill.md` it shadows, are no files.
            if depth == 0 && SKILL_MD_NAMES.contains(&&*lossy) {
                continue;
            }
            let at = dir.join(&entry.name);
            let name = match entry.name.to_str() {
                None => Err("the file name is not valid UTF-8"),
                Some(n) => check_name(n),
            };
            if let Err(reason) = name {
                return Err(refuse(
                    l,
                    &shown(&at),
                    format!("not part of the skill: {reason}"),
                ));
            }
            let rel = if prefix.is_empty() {
                lossy.into_owned()
            } else {
                format!("{prefix}/{lossy}")
            };
            // Where it really is: beneath its layer and not hidden, or
            // refused (crate::confine). A regular file or a directory that
            // is no symlink is beneath the directory listed, so only the
            // rest (symlinks, types the listing did not give) are walked.
            let meta = if entry.is_dir {
                None
            } else if let Some(meta) = entry.meta {
                Some(meta)
            } else {
                Some(l.root.metadata(&at).map_err(|r| {
                    let reason = match r {
                        Refusal::Io(e) => format!("cannot read file: {e}"),
                        r => r.describe(&shown(&at), &l.layer.to_string()),
                    };
                    refuse(l, &shown(&at), reason)
                })?)
            };
            let Some(meta) = meta else {
                self.dir(&at, &rel, depth + 1, Some((self.dev, entry.ino)))?;
                continue;
            };
            match meta.kind {
                Kind::Dir => self.dir(&at, &rel, depth + 1, Some(meta.id))?,
                Kind::File => {
                    self.out.push((
                        rel,
                        Source {
                            layer: l.layer,
                            path: shown(&at),
                            size: meta.size,
                            executable: meta.executable,
                        },
                    ));
                    if self.out.len() > self.limits.max_files {
                        return Err(too_many(
                            l,
                            &format!("more than {} files", self.limits.max_files),
                        ));
                    }
                }
                Kind::Other(_) => {
                    return Err(refuse(
                        l,
                        &shown(&at),
                        "refusing to read a file that is not a regular file".into(),
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::source::Layers;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn higher_layers_replace_files_by_path_and_others_coexist() {
        let tmp = tempfile::tempdir().unwrap();
        let r = tmp.path();
        write(r, "base/w/SKILL.md", "---\n---\n");
        write(r, "base/w/references/style.md", "base style");
        write(r, "base/w/scripts/lint.sh", "echo base");
        write(r, "team/w/SKILL.md", "---\n---\n");
        write(r, "team/w/references/style.md", "team style");
        write(r, "team/w/references/extra.md", "extra");
        write(r, "user/w.yaml", "description: x\n");
        let layers = Layers::from_root(r);
        let files = collect(&layers.locate("w"), &FileLimits::default()).unwrap();
        let summary: Vec<(&str, Layer, usize)> = files
            .iter()
            .map(|f| (f.rel.as_str(), f.source.layer, f.replaced.len()))
            .collect();
        assert_eq!(
            summary,
            [
                ("references/extra.md", Layer::Team, 0),
                ("references/style.md", Layer::Team, 1),
                ("scripts/lint.sh", Layer::Base, 0),
            ]
        );
        assert_eq!(files[1].replaced[0].layer, Layer::Base);
    }

    #[test]
    fn symlinks_out_fifos_and_caps_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let r = tmp.path();
        write(r, "base/w/SKILL.md", "---\n---\n");
        write(r, "secret", "TOKEN");
        std::os::unix::fs::symlink(r.join("secret"), r.join("base/w/leak.md")).unwrap();
        let layers = Layers::from_root(r);
        let e = collect(&layers.locate("w"), &FileLimits::default()).unwrap_err();
        assert!(
            e.to_string()
                .contains("refusing to follow a symlink out of the base layer"),
            "{e}"
        );
        std::fs::remove_file(r.join("base/w/leak.md")).unwrap();

        for i in 0..5 {
            write(r, &format!("base/w/f{i}"), "x");
        }
        let limits = FileLimits {
            max_files: 3,
            ..FileLimits::default()
        };
        let e = collect(&layers.locate("w"), &limits).unwrap_err();
        assert!(e.to_string().contains("more than 3 files"), "{e}");
        let limits = FileLimits {
            max_total_bytes: 2,
            ..FileLimits::default()
        };
        let e = collect(&layers.locate("w"), &limits).unwrap_err();
        assert!(e.to_string().contains("over the 2-byte limit"), "{e}");
    }
}
