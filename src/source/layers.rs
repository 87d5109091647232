//! Where the layers live and which file of a layer holds a skill.
//!
//! Discovery takes its environment as an argument ([`Env`]) so that tests and
//! embedders never have to mutate the process environment.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::confine::{Boundary, Kind, Refusal, Root, RootRefusal};
use crate::error::{Diagnostic, DiagnosticKind};
use crate::layer::{Form, Layer, check_name};

/// The environment variables layer discovery reads, captured explicitly.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// `$HOME`.
    pub home: Option<PathBuf>,
    /// `$XDG_DATA_HOME`.
    pub xdg_data_home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`.
    pub xdg_config_home: Option<PathBuf>,
}

impl Env {
    /// Reads `HOME`, `XDG_DATA_HOME` and `XDG_CONFIG_HOME` from the process.
    /// Empty values count as unset, as the XDG base directory spec says.
    pub fn from_process() -> Env {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Env {
            home: var("HOME"),
            xdg_data_home: var("XDG_DATA_HOME"),
            xdg_config_home: var("XDG_CONFIG_HOME"),
        }
    }

    fn base_dir(explicit: &Option<PathBuf>, home: &Option<PathBuf>, fallback: &str) -> PathBuf {
        // The XDG spec says relative values are invalid and must be ignored.
        match explicit {
            Some(p) if p.is_absolute() => p.clone(),
            _ => home.clone().unwrap_or_default().join(fallback),
        }
    }

    /// `$XDG_DATA_HOME/bernstein/skills`, defaulting to `~/.local/share/...`.
    pub fn data_dir(&self) -> PathBuf {
        Self::base_dir(&self.xdg_data_home, &self.home, ".local/share").join("bernstein/skills")
    }

    /// `$XDG_CONFIG_HOME/bernstein/skills`, defaulting to `~/.config/...`.
    pub fn config_dir(&self) -> PathBuf {
        Self::base_dir(&self.xdg_config_home, &self.home, ".config").join("bernstein/skills")
    }
}

/// One layer directory and whether it can be used.
#[derive(Debug, Clone)]
pub struct LayerDir {
    /// Which layer this is.
    pub layer: Layer,
    /// Its directory.
    pub path: PathBuf,
    /// The directory exists and was opened.
    pub is_dir: bool,
    /// The path exists but is not a directory: the layer counts as absent.
    pub not_a_directory: bool,
    /// Why the directory was refused (a symlink, or reached through one
    /// inside the working tree; see [`crate::source::confine`]): the layer counts as
    /// absent, and every command that reads layers reports it as an error.
    pub refused: Option<String>,
    /// The opened directory, which every file read from the layer stays
    /// beneath. Set when `is_dir`.
    pub root: Option<Arc<Root>>,
}

/// A skill's file in one layer, with the forms it shadows there.
#[derive(Debug, Clone)]
pub struct Located {
    /// The layer.
    pub layer: Layer,
    /// The form that won.
    pub form: Form,
    /// Its path.
    pub path: PathBuf,
    /// Other forms of the same skill in the same layer, ignored.
    pub shadowed: Vec<PathBuf>,
    /// The layer directory, which the file is read beneath (see
    /// [`crate::source::confine`]).
    pub root: Arc<Root>,
}

impl Located {
    /// The file's path relative to its layer directory (`writer.yaml`,
    /// `writer/SKILL.md`).
    pub fn rel(&self) -> &Path {
        self.root.rel(&self.path).unwrap_or(&self.path)
    }
}

/// The three layer directories.
#[derive(Debug, Clone)]
pub struct Layers {
    dirs: Vec<LayerDir>,
}

impl Layers {
    /// The layers an environment points at.
    pub fn discover(env: &Env) -> Layers {
        let data = env.data_dir();
        let config = env.config_dir();
        Layers::from_paths([data.join("base"), config.join("team"), config.join("user")])
    }

    /// `root/base`, `root/team`, `root/user`: for sandboxes, tests and demos.
    pub fn from_root(root: &Path) -> Layers {
        // `--layers-root .` reads `base/...`, not `./base/...`, in messages.
        let root = if root == Path::new(".") {
            Path::new("")
        } else {
            root
        };
        Layers::from_paths(Layer::ALL.map(|l| root.join(l.label())))
    }

    /// Three explicit directories, base, team, user, checked against the
    /// [`Boundary`] of this process's working directory.
    pub fn from_paths(paths: [PathBuf; 3]) -> Layers {
        Layers::from_paths_in(paths, &Boundary::of_process())
    }

    /// Three explicit directories, base, team, user, checked against
    /// `boundary` (see [`crate::source::confine`]).
    pub fn from_paths_in(paths: [PathBuf; 3], boundary: &Boundary) -> Layers {
        let dirs = Layer::ALL
            .into_iter()
            .zip(paths)
            .map(|(layer, path)| {
                let mut dir = LayerDir {
                    layer,
                    is_dir: false,
                    not_a_directory: false,
                    refused: None,
                    root: None,
                    path,
                };
                match Root::open(&dir.path, boundary) {
                    Ok(Some(root)) => {
                        dir.is_dir = true;
                        dir.root = Some(Arc::new(root));
                    }
                    Ok(None) => {}
                    Err(RootRefusal::NotADirectory) => dir.not_a_directory = true,
                    Err(r) => dir.refused = Some(r.describe(&dir.path)),
                }
                dir
            })
            .collect();
        Layers { dirs }
    }

    /// All three directories, base first.
    pub fn dirs(&self) -> &[LayerDir] {
        &self.dirs
    }

    /// Layer directories that were refused (a symlink, or reached through
    /// one inside the working tree), as errors at their paths.
    pub fn refusals(&self) -> Vec<Diagnostic> {
        self.dirs
            .iter()
            .filter_map(|d| {
                let reason = d.refused.as_ref()?;
                Some(
                    Diagnostic::error(
                        Some(&d.path),
                        DiagnosticKind::Refused {
                            reason: format!("refusing the {}: {reason}", d.layer),
                        },
                    )
                    .in_layer(d.layer),
                )
            })
            .collect()
    }

    /// What is wrong with the layer directories themselves: a path that is
    /// not a directory (a warning: the layer is treated as absent) and a
    /// refused directory (an error).
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut out: Vec<Diagnostic> = self
            .dirs
            .iter()
            .filter(|d| d.not_a_directory)
            .map(|d| {
                Diagnostic::warning(
                    Some(&d.path),
                    DiagnosticKind::LayerNotDirectory { layer: d.layer },
                )
                .in_layer(d.layer)
            })
            .collect();
        out.extend(self.refusals());
        out
    }

    /// Does none of the three directories exist?
    pub fn none_exist(&self) -> bool {
        self.dirs.iter().all(|d| !d.is_dir && d.refused.is_none())
    }

    /// The file of skill `name` in each layer that has it, base first. A FIFO,
    /// socket or device of a skill's name counts: reading it is refused with
    /// an error ([`crate::source::confine`]) rather than skipped in silence.
    pub fn locate(&self, name: &str) -> Vec<Located> {
        self.dirs
            .iter()
            .filter_map(|d| locate_in(d, name))
            .collect()
    }

    /// Every skill name in any layer, sorted, each with the layers holding it.
    pub fn names(&self) -> Vec<(String, Vec<Layer>)> {
        self.catalog()
            .into_iter()
            .map(|(name, located)| (name, located.iter().map(|l| l.layer).collect()))
            .collect()
    }

    /// Every skill in any layer, sorted by name, with its file in each layer
    /// that has it (base first) — the same answer as [`Layers::locate`] for
    /// each name, from one read of each layer directory.
    ///
    /// A `<name>/` directory counts only if it holds a `SKILL.md`. Nothing
    /// deeper is visited, so symlink loops cannot make this hang.
    pub fn catalog(&self) -> Vec<(String, Vec<Located>)> {
        self.catalog_with_skipped().0
    }

    /// [`Layers::catalog`], plus the entries skipped for their names.
    pub fn catalog_with_skipped(&self) -> (Vec<(String, Vec<Located>)>, Vec<Skipped>) {
        let mut all: BTreeMap<String, Vec<Located>> = BTreeMap::new();
        let mut skipped = Vec::new();
        for dir in &self.dirs {
            let Some(root) = &dir.root else { continue };
            let (mut found, bad) = scan(root);
            skipped.extend(bad.into_iter().map(|(path, reason)| Skipped {
                layer: dir.layer,
                path,
                reason,
            }));
            found.sort_unstable_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
            let mut it = found.into_iter().peekable();
            while let Some((name, form, path)) = it.next() {
                let mut shadowed = Vec::new();
                while let Some((_, _, p)) = it.next_if(|(n, _, _)| *n == name) {
                    shadowed.push(p);
                }
                all.entry(name).or_default().push(Located {
                    layer: dir.layer,
                    form,
                    path,
                    shadowed,
                    root: root.clone(),
                });
            }
        }
        skipped.sort_by(|a, b| (a.layer, &a.path).cmp(&(b.layer, &b.path)));
        (all.into_iter().collect(), skipped)
    }
}

/// Is there a file (not a directory) at `rel` beneath `root`? A file that
/// is there but may not be read (a symlink out of the layer, a hidden
/// target) counts: reading it reports why, instead of skipping it in
/// silence.
fn has_file(root: &Root, rel: &Path) -> bool {
    match root.metadata(rel) {
        Ok(meta) => meta.kind != Kind::Dir,
        Err(Refusal::Io(_)) => false,
        // Only its type is looked at, where it leads, never its contents.
        Err(_) => peek(root, rel).is_some_and(|m| !m.is_dir()),
    }
}

/// The type of what `rel` (a path that may not be followed beneath
/// `root`) leads to, to decide whether it names a skill at all: a
/// `NAME/SKILL.md` that a symlink leads out of the layer is reported when
/// read, but a symlink to a directory that holds no `SKILL.md` is no skill.
fn peek(root: &Root, rel: &Path) -> Option<std::fs::Metadata> {
    std::fs::metadata(root.path().join(rel)).ok()
}

fn locate_in(dir: &LayerDir, name: &str) -> Option<Located> {
    let root = dir.root.as_ref()?;
    let mut found = Form::ALL
        .into_iter()
        .map(|form| (form, form.path_in(Path::new(""), name)))
        .filter(|(_, rel)| has_file(root, rel));
    let (form, rel) = found.next()?;
    Some(Located {
        layer: dir.layer,
        form,
        path: dir.path.join(rel),
        shadowed: found.map(|(_, rel)| dir.path.join(rel)).collect(),
        root: root.clone(),
    })
}

/// A directory entry that looks like a skill file but whose name cannot be
/// a skill name (not UTF-8, a control, bidi or invisible character): it is
/// never read, and `validate` warns about it.
#[derive(Debug, Clone)]
pub struct Skipped {
    /// The layer.
    pub layer: Layer,
    /// The entry's path (its name may not be UTF-8).
    pub path: PathBuf,
    /// Why it is not a skill.
    pub reason: &'static str,
}

/// A skill file found in a layer directory: name, form, path.
type Found = (String, Form, PathBuf);

/// What one read of a layer directory found: skill files (name, form, path;
/// unsorted) and entries skipped for their names.
fn scan(root: &Root) -> (Vec<Found>, Vec<(PathBuf, &'static str)>) {
    let Ok((_, entries)) = root.entries(Path::new("")) else {
        return Default::default();
    };
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    for entry in entries {
        let os_name = entry.name;
        let lossy = os_name.to_string_lossy();
        // Hidden entries (`.git`, `.github`) are not skills, silently.
        if lossy.starts_with('.') {
            continue;
        }
        let mut is_dir = entry.is_dir;
        if entry.is_symlink {
            // Where it leads decides its form; one that may not be followed
            // (out of the layer, to a hidden entry) is classified by its
            // name, so that reading it reports the refusal.
            match root.metadata(Path::new(&os_name)) {
                Ok(meta) => is_dir = meta.kind == Kind::Dir,
                Err(r) if r.is_not_found() => continue,
                Err(_) => match peek(root, Path::new(&os_name)) {
                    Some(m) => is_dir = m.is_dir(),
                    None => continue,
                },
            }
        }
        let Some((name, form)) = Form::classify(&lossy, is_dir) else {
            continue;
        };
        let reason = match os_name.to_str() {
            None => Err("the file name is not valid UTF-8"),
            Some(_) => check_name(name),
        };
        let rel = if form == Form::SkillMd {
            let rel = Path::new(&os_name).join("SKILL.md");
            if !has_file(root, &rel) {
                continue;
            }
            rel
        } else if !is_dir {
            PathBuf::from(&os_name)
        } else {
            continue;
        };
        let path = root.path().join(&rel);
        match reason {
            Ok(()) => found.push((name.to_owned(), form, path)),
            Err(reason) => skipped.push((root.path().join(&os_name), reason)),
        }
    }
    (found, skipped)
}

/// The skill names in one layer directory, sorted and unique.
pub fn names_in(dir: &Path) -> Vec<String> {
    let Ok(Some(root)) = Root::open(dir, &Boundary::of_process()) else {
        return Vec::new();
    };
    let mut names: Vec<String> = scan(&root).0.into_iter().map(|(n, _, _)| n).collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// [`unexportable`] as an error located at the skill's first
/// file.
pub fn unexportable_at(name: &str, located: &[Located]) -> Option<Diagnostic> {
    let kind = unexportable(name)?;
    let first = located.first();
    let mut d = Diagnostic::error(first.map(|l| l.path.as_path()), kind);
    d.layer = first.map(|l| l.layer);
    Some(d)
}

/// Why skill `name` cannot be exported, if it cannot: its manifest's file
/// name, `<name>.json`, would be longer than [`FILE_NAME_MAX`](crate::layer::FILE_NAME_MAX) bytes (a
/// layer can hold such a name as `<name>.yml` or `<name>/SKILL.md`).
pub fn unexportable(name: &str) -> Option<DiagnosticKind> {
    let bytes = name.len() + ".json".len();
    (bytes > crate::layer::FILE_NAME_MAX).then_some(DiagnosticKind::NameTooLong {
        bytes,
        limit: crate::layer::FILE_NAME_MAX,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_whose_manifest_file_name_is_over_255_bytes_cannot_be_exported() {
        assert_eq!(unexportable(&"a".repeat(250)), None);
        assert_eq!(
            unexportable(&"é".repeat(126)),
            Some(DiagnosticKind::NameTooLong {
                bytes: 257,
                limit: 255
            })
        );
    }

    #[test]
    fn xdg_defaults_and_overrides() {
        let env = Env {
            home: Some("/h".into()),
            ..Env::default()
        };
        assert_eq!(
            env.data_dir(),
            Path::new("/h/.local/share/bernstein/skills")
        );
        assert_eq!(env.config_dir(), Path::new("/h/.config/bernstein/skills"));
        let env = Env {
            home: Some("/h".into()),
            xdg_data_home: Some("/d".into()),
            xdg_config_home: Some("relative".into()),
        };
        assert_eq!(env.data_dir(), Path::new("/d/bernstein/skills"));
        assert_eq!(env.config_dir(), Path::new("/h/.config/bernstein/skills"));
    }
}
