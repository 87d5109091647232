//! Where the layers live and which file of a layer holds a skill.
//!
//! Each layer's directory is chosen on its own, by the first of these that
//! names it ([`places`]): its flag (`--base`, `--team`, `--user`, or
//! `--layers-root` for all three), its variable (`BERNSTEIN_SKILLS_BASE`,
//! `_TEAM`, `_USER`), for the team layer the project's own `.bernstein/skills/`
//! when the working directory is in a project ([`super::project`]), and the
//! XDG directories. The choice is data
//! ([`Place`], [`PlaceSource`]) so that every command can say where each
//! layer came from and why. Every place is opened the same way, whichever
//! chose it ([`crate::source::read_in_root`]).
//!
//! Discovery takes its environment as an argument ([`Env`]) so that tests and
//! embedders never have to mutate the process environment.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::confine::{Boundary, EntryKind, Refusal, Root, RootRefusal};
use super::env::{Env, variable};
use super::project::{Project, relative_to};
use crate::error::{Diagnostic, DiagnosticKind, Error, Result};
use crate::layer::{Form, Layer, SKILL_MD_NAMES, check_name};

/// The layer directories the command line names: each beats the
/// environment ([`places`]).
#[derive(Debug, Clone, Default)]
pub struct LayerFlags {
    /// `--layers-root DIR`: `DIR/base`, `DIR/team` and `DIR/user`.
    pub root: Option<PathBuf>,
    /// `--base DIR`.
    pub base: Option<PathBuf>,
    /// `--team DIR`.
    pub team: Option<PathBuf>,
    /// `--user DIR`.
    pub user: Option<PathBuf>,
    /// `--allow-hard-links`: read files with more than one hard link from
    /// the team and user layers too ([`Layers::allowing_hard_links`]).
    pub allow_hard_links: bool,
}

impl LayerFlags {
    fn get(&self, layer: Layer) -> Option<&PathBuf> {
        match layer {
            Layer::Base => self.base.as_ref(),
            Layer::Team => self.team.as_ref(),
            Layer::User => self.user.as_ref(),
        }
    }
}

/// How a layer's directory was chosen, highest precedence first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaceSource {
    /// The layer's own flag (`--base`, `--team`, `--user`), or a path given
    /// to [`Layers::from_paths`].
    Flag,
    /// `--layers-root DIR` (or [`Layers::from_root`]).
    Root,
    /// The layer's own variable (named).
    Variable(&'static str),
    /// The project's own layer, `.bernstein/skills` of the project found
    /// from the working directory ([`super::project`]), whether it exists
    /// or not.
    Project,
    /// The XDG directory below the variable named; `set` is false when the
    /// variable is unset, empty or relative and its default below `$HOME`
    /// was used.
    Xdg {
        /// `XDG_DATA_HOME` or `XDG_CONFIG_HOME`.
        variable: &'static str,
        /// Was it set (to an absolute path)?
        set: bool,
    },
    /// Nowhere: the layer's XDG variable is unset and so is `HOME` (or
    /// either is relative). The layer is absent; it is never looked for
    /// below the working directory.
    NoHome {
        /// `XDG_DATA_HOME` or `XDG_CONFIG_HOME`.
        variable: &'static str,
    },
    /// A source of `sources.toml`, fetched and verified against
    /// `sources.lock` into the cache (`crate::upstream`): a base layer
    /// beside the local one.
    Upstream,
}

impl PlaceSource {
    /// A short token for JSON: `flag`, `layers-root`, `variable`, `project`,
    /// `xdg`.
    pub fn label(self) -> &'static str {
        match self {
            PlaceSource::Flag => "flag",
            PlaceSource::Root => "layers-root",
            PlaceSource::Variable(_) => "variable",
            PlaceSource::Project => "project",
            PlaceSource::Xdg { .. } | PlaceSource::NoHome { .. } => "xdg",
            PlaceSource::Upstream => "source",
        }
    }

    /// Why the layer is there, in words: `from --team`, `from
    /// $BERNSTEIN_SKILLS_TEAM`, `project-local, found from the working
    /// directory`, `the default: $XDG_CONFIG_HOME is not set`.
    pub fn why(self, layer: Layer) -> String {
        match self {
            PlaceSource::Flag => format!("from --{}", layer.label()),
            PlaceSource::Root => "from --layers-root".into(),
            PlaceSource::Variable(v) => format!("from ${v}"),
            PlaceSource::Project => "project-local, found from the working directory".into(),
            PlaceSource::Xdg {
                variable,
                set: true,
            } => format!("from ${variable}"),
            PlaceSource::Xdg {
                variable,
                set: false,
            } => format!("the default: ${variable} is not set"),
            PlaceSource::NoHome { variable } => {
                format!("nowhere: neither ${variable} nor $HOME is set to an absolute path")
            }
            PlaceSource::Upstream => "from sources.lock".into(),
        }
    }
}

/// Where one layer's directory is and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The layer.
    pub layer: Layer,
    /// Its directory.
    pub path: PathBuf,
    /// How it was chosen.
    pub source: PlaceSource,
}

/// Each layer's place, base first: the first of its flag, `--layers-root`,
/// its variable, the project-local layer (team only) and the XDG directory.
/// Nothing is opened; the project-local layer is looked for on disk.
pub fn places(env: &Env, flags: &LayerFlags) -> [Place; 3] {
    Layer::ALL.map(|layer| {
        let place = |path: PathBuf, source| Place {
            layer,
            path,
            source,
        };
        if let Some(p) = flags.get(layer) {
            return place(p.clone(), PlaceSource::Flag);
        }
        if let Some(root) = &flags.root {
            return place(root_join(root, layer), PlaceSource::Root);
        }
        if let Some(p) = env.layer_variable(layer) {
            return place(p.clone(), PlaceSource::Variable(variable(layer)));
        }
        if layer == Layer::Team
            && let Some(project) = env.project()
        {
            // Relative to the working directory, as a person would type
            // it: `.bernstein/skills`, `../../.bernstein/skills`.
            let shown = relative_to(&project.layer, env.cwd.as_deref());
            return place(shown, PlaceSource::Project);
        }
        let (variable, value, dir) = match layer {
            Layer::Base => ("XDG_DATA_HOME", &env.xdg_data_home, env.data_dir()),
            Layer::Team | Layer::User => {
                ("XDG_CONFIG_HOME", &env.xdg_config_home, env.config_dir())
            }
        };
        let sub = match layer {
            Layer::Base => "base",
            l => l.label(),
        };
        match dir {
            Some(dir) => place(
                dir.join(sub),
                PlaceSource::Xdg {
                    variable,
                    set: value.as_ref().is_some_and(|p| p.is_absolute()),
                },
            ),
            // Shown as the variable's name, never opened.
            None => place(
                Path::new(&format!("${variable}"))
                    .join("bernstein/skills")
                    .join(sub),
                PlaceSource::NoHome { variable },
            ),
        }
    })
}

/// `root/<layer>`, where `--layers-root .` reads `base/...`, not
/// `./base/...`, in messages.
fn root_join(root: &Path, layer: Layer) -> PathBuf {
    if root == Path::new(".") {
        PathBuf::from(layer.label())
    } else {
        root.join(layer.label())
    }
}

/// One layer directory and whether it can be used.
#[derive(Debug, Clone)]
pub struct LayerDir {
    /// Which layer this is.
    pub layer: Layer,
    /// Its directory.
    pub path: PathBuf,
    /// How the directory was chosen.
    pub source: PlaceSource,
    /// The directory exists and was opened.
    pub is_dir: bool,
    /// The path exists but is not a directory: the layer counts as absent.
    pub not_a_directory: bool,
    /// Why the directory was refused, as the error every command that
    /// reads layers reports: at the directory (a symlink, or reached
    /// through one inside the working tree; see
    /// [`crate::source::read_in_root`]), or, for a base layer fed by
    /// sources, at the file at fault (a sources file or lock that cannot be
    /// used, located). The layer counts as absent.
    pub refused: Option<Diagnostic>,
    /// The opened directory, which every file read from the layer stays
    /// beneath. Set when `is_dir`.
    pub root: Option<Arc<Root>>,
    /// For a base layer fed by a source ([`PlaceSource::Upstream`]): the
    /// source's name and the commit it is locked at (`anthropic at
    /// 0123abcd…`).
    pub upstream: Option<String>,
    /// Why the layer takes no part although it may exist: the user layer,
    /// for an export into a directory the project commits
    /// ([`Layers::leaving_out_user`]).
    pub left_out: Option<&'static str>,
}

impl LayerDir {
    /// Refuses the layer for `reason`, at `file` (and line and column
    /// `pos`), else at the directory.
    fn refuse(&mut self, file: Option<&Path>, pos: Option<(usize, usize)>, reason: String) {
        let reason = format!("refusing the {}: {reason}", self.layer);
        let file = file.unwrap_or(&self.path);
        let d = Diagnostic::error(Some(file), DiagnosticKind::Refused { reason }).at(pos);
        self.refused = Some(d.in_layer(self.layer));
    }

    /// Takes `root`, the layer's opened directory. Nothing is listed
    /// here: a command about one skill looks its files up by name, and the
    /// commands that list a layer ([`Layers::catalog`]) list it at most
    /// one entry past [`MAX_LAYER_ENTRIES`] and refuse it past that.
    fn take_root(&mut self, root: Root) {
        self.is_dir = true;
        self.root = Some(Arc::new(root));
    }

    /// The error a layer whose directory holds more than
    /// [`MAX_LAYER_ENTRIES`] entries is refused with, at its directory.
    fn too_many_entries(&self) -> Diagnostic {
        let kind = DiagnosticKind::LayerTooManyEntries {
            layer: self.layer,
            limit: MAX_LAYER_ENTRIES,
        };
        Diagnostic::error(Some(&self.path), kind).in_layer(self.layer)
    }

    /// Refuses the layer for error `e`, at the file and position `e`
    /// names.
    fn refuse_for(&mut self, e: crate::Error) {
        match (&e, e.diagnostics().first()) {
            (crate::Error::Refused { path, message, .. }, _) => {
                self.refuse(path.as_deref(), None, message.clone())
            }
            (_, Some(d)) => {
                let pos = d.line.map(|l| (l, d.column.unwrap_or(1)));
                self.refuse(d.file.as_deref(), pos, d.message())
            }
            (_, None) => self.refuse(None, None, e.to_string()),
        }
    }

    /// Where the layer is and why, for people: `team: .bernstein/skills
    /// (project-local, found from the working directory)`, with `; does not
    /// exist` (or why it is not used) when it is not read. The path is
    /// escaped.
    pub fn describe(&self) -> String {
        let state = if let Some(why) = self.left_out {
            format!("; left out: {why}")
        } else if self.is_dir || matches!(self.source, PlaceSource::NoHome { .. }) {
            String::new()
        } else if self.refused.is_some() {
            "; refused".into()
        } else if self.not_a_directory {
            "; not a directory".into()
        } else {
            "; does not exist".into()
        };
        let why = match &self.upstream {
            Some(from) => format!("source {}", crate::text::escape(from)),
            None => self.source.why(self.layer),
        };
        format!(
            "{}: {} ({why}{state})",
            self.layer.label(),
            crate::text::path(&self.path),
        )
    }

    /// [`LayerDir::describe`] as data: `{"layer", "dir", "found_by", "why",
    /// "exists"}`, and `"left_out"` (why) for a layer that takes no part
    /// (the names of docs/json.md).
    pub fn to_json(&self) -> serde_json::Value {
        let mut doc = serde_json::json!({
            "layer": self.layer,
            "dir": self.path.display().to_string(),
            "found_by": self.source.label(),
            "why": self.source.why(self.layer),
            "exists": self.is_dir,
        });
        if let Some(why) = self.left_out {
            doc["left_out"] = why.into();
        }
        doc
    }
}

/// A skill's file in one layer, with the forms it shadows there.
#[derive(Debug, Clone)]
pub struct Located {
    /// The layer.
    pub layer: Layer,
    /// The form that won.
    pub form: Form,
    /// Its path (for [`Form::Files`], the directory's).
    pub path: PathBuf,
    /// Other forms of the same skill in the same layer, ignored.
    pub shadowed: Vec<PathBuf>,
    /// The layer directory, which the file is read beneath (see
    /// [`crate::source::read_in_root`]).
    pub root: Arc<Root>,
}

impl Located {
    /// The file's path relative to its layer directory (`writer.yaml`,
    /// `writer/SKILL.md`).
    pub fn rel(&self) -> &Path {
        self.root.rel(&self.path).unwrap_or(&self.path)
    }

    /// The skill's directory relative to its layer directory (`writer`),
    /// for the forms that have one: `NAME/SKILL.md` and files-only.
    pub(crate) fn skill_dir(&self) -> Option<&Path> {
        match self.form {
            Form::SkillMd => self.rel().parent(),
            Form::Files => Some(self.rel()),
            Form::Yaml | Form::Yml | Form::Toml => None,
        }
    }
}

/// The three layer directories.
#[derive(Debug, Clone)]
pub struct Layers {
    dirs: Vec<LayerDir>,
    /// The working directory the layers were chosen in ([`Env::cwd`]).
    cwd: Option<PathBuf>,
    /// The project whose own layer is the team layer (found from the
    /// working directory), and that working directory.
    project: Option<(Project, PathBuf)>,
    /// Skills a source of the project provided at an earlier lock that
    /// upstream has since removed, with the source
    /// ([`Layers::note_removed_upstream`]).
    removed_upstream: std::collections::BTreeMap<String, String>,
}

impl Layers {
    /// The layers an environment points at: [`Layers::choose`] with no
    /// flags.
    pub fn discover(env: &Env) -> Layers {
        Layers::choose(env, &LayerFlags::default())
    }

    /// The layers the flags and the environment choose ([`places`]), each
    /// checked against the `Boundary` of the environment's working
    /// directory.
    pub fn choose(env: &Env, flags: &LayerFlags) -> Layers {
        let boundary = Boundary::of_cwd(env.cwd.as_deref());
        let places = places(env, flags);
        let mut layers = Layers::open(places, &boundary);
        if flags.allow_hard_links {
            layers = layers.allowing_hard_links();
        }
        // The project's layer is the team layer: the project is the one
        // whose files these layers take, whatever of them exists (trust
        // covers every one that is read).
        if layers.dirs[1].source == PlaceSource::Project {
            layers.project = env.project().zip(env.cwd.clone());
        }
        layers
    }

    /// The project whose own layer (found from the working directory) is
    /// the team layer, if it is; and the working directory it was found
    /// from. An export outside that project needs the person's trust
    /// ([`crate::source::trust`]).
    pub fn project(&self) -> Option<(&Project, &Path)> {
        self.project.as_ref().map(|(p, cwd)| (p, cwd.as_path()))
    }

    /// `root/base`, `root/team`, `root/user`: for sandboxes, tests and demos.
    pub fn from_root(root: &Path) -> Layers {
        let places = Layer::ALL.map(|layer| Place {
            layer,
            path: root_join(root, layer),
            source: PlaceSource::Root,
        });
        Layers::open(
            places,
            &Boundary::of_cwd(Env::from_process().cwd.as_deref()),
        )
    }

    /// Three explicit directories, base, team, user, checked against the
    /// `Boundary` of this process's working directory.
    pub fn from_paths(paths: [PathBuf; 3]) -> Layers {
        Layers::from_paths_in(paths, &Boundary::of_cwd(Env::from_process().cwd.as_deref()))
    }

    /// Three explicit directories, base, team, user, checked against
    /// `boundary` (see [`crate::source::confine`]).
    pub(crate) fn from_paths_in(paths: [PathBuf; 3], boundary: &Boundary) -> Layers {
        let mut paths = paths.into_iter();
        let places = Layer::ALL.map(|layer| Place {
            layer,
            path: paths.next().unwrap_or_default(),
            source: PlaceSource::Flag,
        });
        Layers::open(places, boundary)
    }

    /// Opens each place, checked against `boundary` (see
    /// [`crate::source::confine`]): the same rules whichever way a place
    /// was chosen.
    pub(crate) fn open(places: [Place; 3], boundary: &Boundary) -> Layers {
        let mut places = places.to_vec();
        places.sort_by_key(|p| p.layer);
        let dirs = places
            .into_iter()
            .map(|place| {
                let mut dir = LayerDir {
                    layer: place.layer,
                    is_dir: false,
                    not_a_directory: false,
                    refused: None,
                    root: None,
                    path: place.path,
                    source: place.source,
                    upstream: None,
                    left_out: None,
                };
                let opened = match dir.source {
                    PlaceSource::NoHome { .. } => Ok(None),
                    _ => Root::open(&dir.path, boundary),
                };
                match opened {
                    Ok(Some(mut root)) => {
                        // The base layer is installed by the person or a
                        // package manager, which may deduplicate its files
                        // with hard links; the others take pull requests
                        // and archives (docs/security.md).
                        if dir.layer == Layer::Base {
                            root.allow_hard_links();
                        }
                        dir.take_root(root);
                    }
                    Ok(None) => {}
                    Err(RootRefusal::NotADirectory) => dir.not_a_directory = true,
                    Err(r) => dir.refuse(None, None, r.describe(&dir.path)),
                }
                dir
            })
            .collect();
        Layers {
            dirs,
            cwd: boundary.cwd().map(Path::to_path_buf),
            project: None,
            removed_upstream: std::collections::BTreeMap::new(),
        }
    }

    /// The working directory the layers were chosen in, which relative
    /// paths (an output directory) are taken from.
    pub(crate) fn cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    /// The same layers, reading files with more than one hard link from
    /// the team and user layers too (the base layer always may): for
    /// layouts the person trusts, where such a link cannot lead to a file
    /// the layer's authors could not read. By default they are refused:
    /// a hard link committed to an archive or a shared folder can be any
    /// file of the same file system.
    pub fn allowing_hard_links(mut self) -> Layers {
        for d in &mut self.dirs {
            let Some(root) = &mut d.root else { continue };
            if root.allows_hard_links() {
                continue;
            }
            match Arc::get_mut(root) {
                Some(r) => r.allow_hard_links(),
                // Shared with a clone of these layers, which keeps its own
                // choice: another handle on the same directory. Should
                // that fail (out of descriptors), the layer goes on
                // refusing them, which is the safe side.
                None => {
                    if let Ok(r) = root.try_clone_allowing_hard_links() {
                        *root = Arc::new(r);
                    }
                }
            }
        }
        self
    }

    /// One more base layer directory, fed by a source (`crate::upstream`),
    /// beside the local one: opened beneath itself with no boundary (it is
    /// the tool's own cache), every file read from it passed through
    /// `check` (its digest in the lock), or refused with `refused` (a
    /// broken lock), which every command reports as an error, located where
    /// the error is (else at `path`). It is
    /// kept after the team and user directories, so that `dirs()[1]` stays
    /// the team layer; every skill's files are still ordered base first.
    pub fn add_upstream_base(
        &mut self,
        path: PathBuf,
        from: String,
        refused: Option<crate::Error>,
        check: Option<super::confine::ContentCheck>,
    ) {
        let mut dir = LayerDir {
            layer: Layer::Base,
            path,
            source: PlaceSource::Upstream,
            is_dir: false,
            not_a_directory: false,
            refused: None,
            root: None,
            upstream: Some(from),
            left_out: None,
        };
        if let Some(e) = refused {
            dir.refuse_for(e);
        } else {
            match Root::open(&dir.path, &Boundary::default()) {
                Ok(Some(mut root)) => {
                    if let Some(check) = check {
                        root.set_check(check);
                    }
                    dir.take_root(root);
                }
                Ok(None) => dir.refuse(
                    None,
                    None,
                    "not in the cache; run `bernstein skills verify` to fetch it".into(),
                ),
                Err(r) => dir.refuse(None, None, r.describe(&dir.path)),
            }
        }
        self.dirs.push(dir);
    }

    /// Records that source `source` provided skill `skill` at an earlier
    /// lock and that upstream has since removed it (the lock's `removed`):
    /// an override of it in a layer above is then not a skill of its own
    /// while no layer gives it a body (an orphan: `validate` warns, export
    /// leaves it out).
    pub fn note_removed_upstream(&mut self, skill: &str, source: &str) {
        self.removed_upstream
            .insert(skill.to_owned(), source.to_owned());
    }

    /// The source from which upstream removed skill `name`, if the lock
    /// says one did ([`Layers::note_removed_upstream`]).
    pub fn removed_upstream(&self, name: &str) -> Option<&str> {
        self.removed_upstream.get(name).map(String::as_str)
    }

    /// The same layers without the user layer, which stays listed (with
    /// `why`) but is read by nothing: the user layer is one person's, and a
    /// directory the project commits is built from the base and team
    /// layers only.
    pub fn leaving_out_user(&self, why: &'static str) -> Layers {
        let mut layers = self.clone();
        for d in layers.dirs.iter_mut().filter(|d| d.layer == Layer::User) {
            d.root = None;
            d.is_dir = false;
            d.refused = None;
            d.not_a_directory = false;
            d.left_out = Some(why);
        }
        layers
    }

    /// All the directories, base first, then team and user; base layers
    /// fed by sources ([`Layers::add_upstream_base`]) after them.
    pub fn dirs(&self) -> &[LayerDir] {
        &self.dirs
    }

    /// Layer directories that were refused (a symlink, or reached through
    /// one inside the working tree), as errors at their paths.
    pub fn refusals(&self) -> Vec<Diagnostic> {
        self.dirs.iter().filter_map(|d| d.refused.clone()).collect()
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

    /// The file of skill `name` in each layer that has it, base first. A FIFO,
    /// socket or device of a skill's name counts: reading it is refused with
    /// an error ([`crate::source::read_in_root`]) rather than skipped in silence.
    pub fn locate(&self, name: &str) -> Vec<Located> {
        let mut found: Vec<Located> = self
            .dirs
            .iter()
            .filter_map(|d| locate_in(d, name))
            .collect();
        // Base layers fed by sources come after team and user in `dirs`.
        found.sort_by_key(|l| l.layer);
        found
    }

    /// Every skill name in any layer, sorted, each with the layers holding it.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] when a layer's directory holds more than
    /// [`MAX_LAYER_ENTRIES`] entries, as [`Layers::catalog`].
    pub fn names(&self) -> Result<Vec<(String, Vec<Layer>)>> {
        Ok(self
            .catalog()?
            .into_iter()
            .map(|(name, located)| (name, located.iter().map(|l| l.layer).collect()))
            .collect())
    }

    /// The names of the skills the directories of `layer` hold, from one
    /// read of each: what [`Layers::names`] gives for that layer, without
    /// listing the others.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] when such a directory holds more than
    /// [`MAX_LAYER_ENTRIES`] entries, as [`Layers::catalog`].
    pub fn names_in(&self, layer: Layer) -> Result<std::collections::BTreeSet<String>> {
        let mut names = std::collections::BTreeSet::new();
        for dir in self.dirs.iter().filter(|d| d.layer == layer) {
            let Some(root) = &dir.root else { continue };
            let Some((found, _)) = scan(root, layer != Layer::Base) else {
                return Err(Error::Invalid(vec![dir.too_many_entries()]));
            };
            names.extend(found.into_iter().map(|(name, _, _)| name));
        }
        Ok(names)
    }

    /// Every skill in any layer, sorted by name, with its file in each layer
    /// that has it (base first) — the same answer as [`Layers::locate`] for
    /// each name, from one read of each layer directory.
    ///
    /// A `<name>/` directory counts if it holds a `SKILL.md` (or
    /// `skill.md`) or, in a layer above base, any entry that is not hidden
    /// ([`Form::Files`]). Nothing deeper is visited, so symlink loops
    /// cannot make this hang.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] when a layer's directory holds more than
    /// [`MAX_LAYER_ENTRIES`] entries (hidden ones count): listed one entry
    /// past the cap and refused, at the directory.
    pub fn catalog(&self) -> Result<Catalog> {
        Ok(self.catalog_with_skipped()?.0)
    }

    /// [`Layers::catalog`], plus the entries skipped for their names.
    pub(crate) fn catalog_with_skipped(&self) -> Result<(Catalog, Vec<Skipped>)> {
        let mut all: BTreeMap<String, Vec<Located>> = BTreeMap::new();
        let mut skipped = Vec::new();
        let mut too_many = Vec::new();
        for dir in &self.dirs {
            let Some(root) = &dir.root else { continue };
            let Some((mut found, bad)) = scan(root, dir.layer != Layer::Base) else {
                too_many.push(dir.too_many_entries());
                continue;
            };
            skipped.extend(bad.into_iter().map(|(path, reason)| Skipped {
                layer: dir.layer,
                path,
                reason,
            }));
            // `SKILL.md` sorts before `skill.md`, and wins.
            found.sort_unstable_by(|a, b| (&a.0, a.1, &a.2).cmp(&(&b.0, b.1, &b.2)));
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
        // Base layers fed by sources come after team and user in `dirs`.
        for located in all.values_mut() {
            located.sort_by_key(|l| l.layer);
        }
        if !too_many.is_empty() {
            return Err(Error::Invalid(too_many));
        }
        Ok((all.into_iter().collect(), skipped))
    }
}

/// Is there a file (not a directory) at `rel` beneath `root`? A file that
/// is there but may not be read (a symlink out of the layer, a hidden
/// target) counts: reading it reports why, instead of skipping it in
/// silence.
fn has_file(root: &Root, rel: &Path) -> bool {
    match root.metadata(rel) {
        Ok(meta) => meta.kind != EntryKind::Dir,
        Err(Refusal::Io(_)) => false,
        // Only its type is looked at, where it leads, never its contents.
        Err(_) => peek(root, rel).is_some_and(|m| !m.is_dir()),
    }
}

/// Is there a directory at `rel` beneath `root`? One that may not be
/// followed counts, as in [`has_file`].
fn has_dir(root: &Root, rel: &Path) -> bool {
    match root.metadata(rel) {
        Ok(meta) => meta.kind == EntryKind::Dir,
        Err(Refusal::Io(_)) => false,
        Err(_) => peek(root, rel).is_some_and(|m| m.is_dir()),
    }
}

/// The type of what `rel` (a path that may not be followed beneath
/// `root`) leads to, to decide whether it names a skill at all: a
/// `NAME/SKILL.md` that a symlink leads out of the layer is reported when
/// read, but a symlink to a directory that holds no `SKILL.md` is no skill.
fn peek(root: &Root, rel: &Path) -> Option<std::fs::Metadata> {
    std::fs::metadata(root.path().join(rel)).ok()
}

/// The most entries of a directory read to decide whether it holds only
/// hidden ones: past it, it counts as holding files (and the walk of the
/// skill's files reports its own cap).
const FILES_ONLY_PROBE: usize = 10_000;

/// What the directory `dir` (relative to the root) makes of a skill: its
/// `SKILL.md`, then a `skill.md` that is another file (on a file system
/// that ignores case the two names are one file), or, when `files_only`
/// allows it and there is neither, the directory itself as [`Form::Files`]
/// if it holds anything that is not hidden. A directory that cannot be
/// listed beneath the root counts, so that walking it reports why.
fn skill_dir_forms(root: &Root, dir: &Path, files_only: bool) -> Vec<(Form, PathBuf)> {
    let mut out = Vec::new();
    // One open of the directory and one stat per name; a symlink is walked
    // as any path is, and a directory that cannot be opened beneath the
    // root is looked at name by name, so that reading it reports why.
    let stats = root.stat_names(dir, &SKILL_MD_NAMES).ok();
    let mut first = None;
    for (i, name) in SKILL_MD_NAMES.into_iter().enumerate() {
        let rel = dir.join(name);
        let id = match stats.as_ref().map(|s| s[i]) {
            Some(Some(meta)) if meta.kind == EntryKind::File => Some(meta.id),
            Some(Some(meta)) if meta.kind == EntryKind::Dir => continue,
            Some(None) => continue,
            _ => {
                if !has_file(root, &rel) {
                    continue;
                }
                root.metadata(&rel).ok().map(|m| m.id)
            }
        };
        // On a file system that ignores case the two names are one file.
        if id.is_some() && id == first {
            continue;
        }
        first = first.or(id);
        out.push((Form::SkillMd, rel));
    }
    if out.is_empty()
        && files_only
        && root
            .has_visible_entry(dir, FILES_ONLY_PROBE)
            .unwrap_or_else(
                |r| !matches!(&r, Refusal::Io(e) if e.kind() == std::io::ErrorKind::NotFound),
            )
    {
        out.push((Form::Files, dir.to_path_buf()));
    }
    out
}

fn locate_in(dir: &LayerDir, name: &str) -> Option<Located> {
    let root = dir.root.as_ref()?;
    let mut found: Vec<(Form, PathBuf)> = Vec::new();
    for form in Form::ALL {
        if form == Form::SkillMd {
            continue;
        }
        let rel = form.path_in(Path::new(""), name);
        if has_file(root, &rel) {
            found.push((form, rel));
        }
    }
    if has_dir(root, Path::new(name)) {
        found.extend(skill_dir_forms(
            root,
            Path::new(name),
            dir.layer != Layer::Base,
        ));
    }
    // Stable: `SKILL.md` stays before `skill.md`.
    found.sort_by_key(|(form, _)| *form);
    let mut found = found.into_iter();
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
pub(crate) struct Skipped {
    /// The layer.
    pub layer: Layer,
    /// The entry's path (its name may not be UTF-8).
    pub path: PathBuf,
    /// Why it is not a skill.
    pub reason: &'static str,
}

/// The most entries a layer's directory may hold: its entries are its
/// skills (one file or directory each), and the largest collections hold a
/// few thousand. Hidden entries count: the listing visits them to skip
/// them, and the cap bounds what the listing costs, so a directory of
/// millions of hidden files is refused as quickly as one of skills. Past
/// it the layer is refused ([`DiagnosticKind::LayerTooManyEntries`]).
pub const MAX_LAYER_ENTRIES: usize = 100_000;

/// Every skill of the layers, sorted by name, with its file in each layer
/// that has it ([`Layers::catalog`]).
pub type Catalog = Vec<(String, Vec<Located>)>;

/// A skill file found in a layer directory: name, form, path.
type Found = (String, Form, PathBuf);

/// What one read of a layer directory found: skill files (name, form, path;
/// unsorted) and entries skipped for their names.
type Scanned = (Vec<Found>, Vec<(PathBuf, &'static str)>);

/// One read of a layer directory; `None` when it holds more than
/// [`MAX_LAYER_ENTRIES`] entries (listed one past the cap). `files_only`:
/// a directory with no `SKILL.md` may be a skill's files ([`Form::Files`]).
fn scan(root: &Root, files_only: bool) -> Option<Scanned> {
    let mut budget = MAX_LAYER_ENTRIES;
    let entries = match root.entries(Path::new(""), &mut budget) {
        Ok((_, entries)) => entries,
        Err(r) if r.is_over_budget() => return None,
        // A directory that cannot be listed holds no skill.
        Err(_) => return Some(Default::default()),
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
                Ok(meta) => is_dir = meta.kind == EntryKind::Dir,
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
        let forms = if form == Form::SkillMd {
            skill_dir_forms(root, Path::new(&os_name), files_only)
        } else if !is_dir {
            vec![(form, PathBuf::from(&os_name))]
        } else {
            continue;
        };
        if forms.is_empty() {
            continue;
        }
        match reason {
            Ok(()) => found.extend(
                forms
                    .into_iter()
                    .map(|(form, rel)| (name.to_owned(), form, root.path().join(rel))),
            ),
            Err(reason) => skipped.push((root.path().join(&os_name), reason)),
        }
    }
    Some((found, skipped))
}

/// [`unexportable`] as an error located at the skill's first
/// file.
pub(crate) fn unexportable_at(name: &str, located: &[Located]) -> Option<Diagnostic> {
    let kind = unexportable(name)?;
    let first = located.first();
    let mut d = Diagnostic::error(first.map(|l| l.path.as_path()), kind);
    d.layer = first.map(|l| l.layer);
    Some(d)
}

/// Why skill `name` cannot be exported, if it cannot: its manifest's file
/// name, `<name>.json`, would be longer than [`FILE_NAME_MAX`](crate::layer::FILE_NAME_MAX) bytes (a
/// layer can hold such a name as `<name>.yml` or `<name>/SKILL.md`).
pub(crate) fn unexportable(name: &str) -> Option<DiagnosticKind> {
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
    fn without_a_home_the_team_layer_is_nowhere() {
        for home in [None, Some("relative".into())] {
            let env = Env {
                home,
                ..Env::default()
            };
            let team = &places(&env, &LayerFlags::default())[1];
            assert!(
                matches!(team.source, PlaceSource::NoHome { .. }),
                "{team:?}"
            );
        }
    }
}
