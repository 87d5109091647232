//! A skill's files, layered: every file under a `NAME/` skill directory
//! other than `SKILL.md` (`references/style.md`, `scripts/lint.sh`,
//! `assets/logo.png`) is part of the skill, addressed by its path relative to
//! that directory. A higher layer's file at the same path replaces the lower
//! one's whole; other files coexist. Only the `NAME/SKILL.md` form has a
//! directory: a `NAME.yaml` override changes fields and keeps the lower
//! layers' files.
//!
//! Listing reads no file: it walks the directories, and every entry must
//! resolve to a regular file inside its layer ([`crate::confine`]), with a
//! printable UTF-8 name. The number of files, their total size and the depth
//! are capped ([`FileLimits`]). Contents are read only by whoever copies the
//! files (`export --format skill`), as bytes, never parsed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Diagnostic, DiagnosticKind};
use crate::layer::{Form, Layer, Located, check_name};

/// Caps on one skill's files (per layer and merged).
#[derive(Debug, Clone, Copy)]
pub struct FileLimits {
    /// The most files in one skill.
    pub max_files: usize,
    /// The most bytes of all of them together.
    pub max_total_bytes: u64,
    /// The deepest directory below the skill directory.
    pub max_depth: usize,
}

impl Default for FileLimits {
    fn default() -> Self {
        FileLimits {
            max_files: 1000,
            max_total_bytes: 64 * 1024 * 1024,
            max_depth: 8,
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFile {
    /// Its path relative to the skill directory, `/`-separated.
    pub rel: String,
    /// Where it comes from: the highest layer that has it.
    pub source: Source,
    /// The lower layers' files at the same path it replaced, nearest first.
    pub replaced: Vec<Source>,
    /// The real path of its layer, which reading it must stay inside.
    pub root: std::sync::Arc<Path>,
}

/// The files of a skill located in `located` (base first), sorted by path.
/// Any entry that cannot be part of a skill (a symlink out of its layer, not
/// a regular file, an unprintable name) or a cap exceeded is an error naming
/// the file.
pub fn collect(located: &[Located], limits: &FileLimits) -> Result<Vec<SkillFile>, Diagnostic> {
    let mut merged: BTreeMap<String, SkillFile> = BTreeMap::new();
    for l in located.iter().filter(|l| l.form == Form::SkillMd) {
        let Some(dir) = l.path.parent() else { continue };
        // The skill directory itself may be a symlink: it must stay inside
        // (a real directory in the layer directory is, by construction).
        let is_link = std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink());
        match if is_link {
            std::fs::canonicalize(dir)
        } else {
            Ok(l.root.join(dir.file_name().unwrap_or_default()))
        } {
            Ok(real) if real.starts_with(&l.root) => {}
            Ok(real) => {
                let r = crate::confine::Refusal::Escapes { target: real };
                return Err(refuse(l, dir, r.describe(dir, &l.layer.to_string())));
            }
            Err(e) => return Err(refuse(l, dir, format!("cannot resolve: {e}"))),
        }
        let mut found = Vec::new();
        walk(l, dir, "", 0, limits, &mut found)?;
        for (rel, source) in found {
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
    Diagnostic::error(
        Some(l.path.parent().unwrap_or(&l.path)),
        DiagnosticKind::Refused {
            reason: format!("the skill has {what}"),
        },
    )
    .in_layer(l.layer)
}

fn refuse(l: &Located, path: &Path, reason: String) -> Diagnostic {
    Diagnostic::error(Some(path), DiagnosticKind::Refused { reason }).in_layer(l.layer)
}

/// Every file below `dir` (relative path `prefix`), depth first.
fn walk(
    l: &Located,
    dir: &Path,
    prefix: &str,
    depth: usize,
    limits: &FileLimits,
    out: &mut Vec<(String, Source)>,
) -> Result<(), Diagnostic> {
    if depth > limits.max_depth {
        return Err(refuse(
            l,
            dir,
            format!(
                "the skill's directories nest deeper than {} levels",
                limits.max_depth
            ),
        ));
    }
    let entries = std::fs::read_dir(dir)
        .map_err(|e| refuse(l, dir, format!("cannot list the skill's directory: {e}")))?;
    let mut names: Vec<_> = entries.filter_map(Result::ok).collect();
    names.sort_by_key(|e| e.file_name());
    for entry in names {
        let os_name = entry.file_name();
        let path = entry.path();
        let lossy = os_name.to_string_lossy();
        // Hidden entries (`.git`, `.DS_Store`) are not part of a skill.
        if lossy.starts_with('.') {
            continue;
        }
        if depth == 0 && lossy == "SKILL.md" {
            continue;
        }
        let name = match os_name.to_str() {
            None => Err("the file name is not valid UTF-8"),
            Some(n) => check_name(n),
        };
        if let Err(reason) = name {
            return Err(refuse(l, &path, format!("not part of the skill: {reason}")));
        }
        let rel = if prefix.is_empty() {
            lossy.into_owned()
        } else {
            format!("{prefix}/{lossy}")
        };
        // Where it really is: inside its layer, or refused. An entry that is
        // not a symlink, in a directory reached without symlinks from a
        // directory inside the layer, is inside by construction; only
        // symlinks need resolving.
        let ty = entry
            .file_type()
            .map_err(|e| refuse(l, &path, format!("cannot read file: {e}")))?;
        let meta = if ty.is_symlink() {
            let real = std::fs::canonicalize(&path)
                .map_err(|e| refuse(l, &path, format!("cannot resolve: {e}")))?;
            if !real.starts_with(&l.root) {
                let r = crate::confine::Refusal::Escapes { target: real };
                return Err(refuse(l, &path, r.describe(&path, &l.layer.to_string())));
            }
            std::fs::metadata(&real)
        } else {
            entry.metadata()
        }
        .map_err(|e| refuse(l, &path, format!("cannot read file: {e}")))?;
        if meta.is_dir() {
            walk(l, &path, &rel, depth + 1, limits, out)?;
        } else if meta.is_file() {
            out.push((
                rel,
                Source {
                    layer: l.layer,
                    path,
                    size: meta.len(),
                    executable: is_executable(&meta),
                },
            ));
            if out.len() > limits.max_files {
                return Err(too_many(
                    l,
                    &format!("more than {} files", limits.max_files),
                ));
            }
        } else {
            return Err(refuse(
                l,
                &path,
                "refusing to read a file that is not a regular file".into(),
            ));
        }
    }
    Ok(())
}

fn is_executable(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::layer::Layers;

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
