//! What a command means, decided once: the one context every front end
//! builds and every command works from.
//!
//! A command of the tool is a question about a project (which skills, what
//! they merge into, what an export writes) asked from somewhere: a
//! terminal in a work tree, a CI job in a fresh clone, a Python program.
//! Which layers take part and why, which spec, which targets, which
//! upstream sources and lock, where the cache and the person's state live:
//! every one of those answers follows from the environment ([`Env`]) and
//! the few explicit choices a front end passes ([`Options`]), and is made
//! here, so that the command line and Python cannot disagree about what a
//! project is. Front ends build a [`Context`] once (cargo's
//! `GlobalContext`, ripgrep's `HiArgs`) and only print or convert what
//! it answers; nothing below it reads the process environment.

use std::path::{Path, PathBuf};

mod audit;

pub use audit::{Audit, AuditCheck, AuditOptions, NeverExported};

use crate::Skills;
use crate::error::{Diagnostic, Error, ErrorKind, Result};
use crate::fragment::DEFAULT_MAX_BYTES;
use crate::layer::{Form, Layer};
use crate::output::render;
use crate::source::trust::TrustStore;
use crate::source::{Env, LayerFlags, Layers, PlaceSource, Project};
use crate::spec::strategy_help;
use crate::spec::{self as specmod, FoundSpec, MergeSpec, SpecCache, SpecSearch, SpecSource};
use crate::target::{Target, TargetSearch};
use crate::upstream::{self, Cache, Paths};

/// The choices a front end makes explicitly, each beating the
/// environment: the command line's global flags, Python's arguments.
#[derive(Debug, Clone)]
pub struct Options {
    /// The merge spec to use (`--spec`).
    pub spec: Option<PathBuf>,
    /// The layer directories named (`--layers-root`, `--base`, `--team`,
    /// `--user`, `--allow-hard-links`).
    pub layers: LayerFlags,
    /// Fragments larger than this are refused (`--max-fragment-bytes`).
    pub max_fragment_bytes: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            spec: None,
            layers: LayerFlags::default(),
            max_fragment_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// Where an export for a target goes when no directory is named: the
/// target's place for the person, or for the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The person's own place (`~/.claude/skills`): every layer.
    User,
    /// The project's place (`.claude/skills` at the project's root), which
    /// the team commits: the base and team layers only.
    Project,
}

impl Scope {
    /// `user` or `project`.
    pub fn label(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

/// Why the user layer is left out of a directory the project commits, as
/// every listing of the layers says it.
pub const USER_LAYER_LEFT_OUT: &str = "personal, never in a directory the project commits";

/// Everything a command needs to know about where it runs, decided once
/// from an [`Env`] and [`Options`].
#[derive(Debug, Clone)]
pub struct Context {
    env: Env,
    options: Options,
}

impl Context {
    /// The context of `env` with the choices in `options`.
    pub fn new(env: Env, options: Options) -> Context {
        Context { env, options }
    }

    /// The environment it was built from.
    pub fn env(&self) -> &Env {
        &self.env
    }

    /// The explicit choices it was built with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Where the merge spec is looked for.
    pub fn spec_search(&self) -> SpecSearch {
        SpecSearch {
            explicit: self.options.spec.clone(),
            env_var: self.env.spec.clone(),
            data_dir: self.env.data_dir(),
            beside_binary: self.share_dir(),
            source_tree: self
                .env
                .source_tree
                .as_ref()
                .map(|t| t.join("spec").join(specmod::INSTALLED_NAME)),
        }
    }

    /// The directory of the spec and targets installed with the program
    /// (`PREFIX/share/bernstein/skills`).
    fn share_dir(&self) -> Option<PathBuf> {
        self.env.share_dir.clone().or_else(|| {
            self.env
                .exe
                .as_deref()
                .and_then(SpecSearch::beside_executable)
        })
    }

    /// The merge spec in use and where it was found.
    pub fn load_found_spec(&self) -> Result<(MergeSpec, FoundSpec)> {
        let found = self.spec_search().resolve()?;
        let bytes = MergeSpec::read(&found.path)?;
        let stale = found.source == SpecSource::Installed && bytes != specmod::SHIPPED;
        let cache = self
            .env
            .cache_dir()
            .map(|home| SpecCache::new(home, self.env.exe.as_deref()));
        let spec = MergeSpec::from_bytes_cached(bytes, &found.path, cache.as_ref())?;
        Ok((spec, FoundSpec { stale, ..found }))
    }

    /// The merge spec in use.
    pub fn load_spec(&self) -> Result<MergeSpec> {
        Ok(self.load_found_spec()?.0)
    }

    /// Where targets are looked for by name: the person's own
    /// `$XDG_CONFIG_HOME/bernstein/skills/targets`, the `targets/`
    /// directory beside the spec in use (the source tree's `spec/targets`
    /// for a development build), the installed one beside the base layer
    /// (`spec --install`), and the one installed with the program
    /// (`PREFIX/share/bernstein/skills/targets`).
    pub fn target_search(&self, spec: &MergeSpec) -> TargetSearch {
        let mut dirs: Vec<_> = self
            .env
            .config_dir()
            .map(|d| d.join("targets"))
            .into_iter()
            .collect();
        if let Some(dir) = spec.path.parent() {
            dirs.push(dir.join("targets"));
        }
        dirs.extend(self.env.data_dir().map(|d| d.join("targets")));
        dirs.extend(self.share_dir().map(|d| d.join("targets")));
        let mut seen = std::collections::BTreeSet::new();
        dirs.retain(|d| seen.insert(d.clone()));
        TargetSearch { dirs }
    }

    /// The targets named (or given as files).
    pub fn targets(&self, spec: &MergeSpec, names: &[String]) -> Result<Vec<Target>> {
        self.target_search(spec).find_all(names)
    }

    /// The fragment schema an editor sees: the spec's, with the rules of
    /// every target found in each field's hover text.
    pub fn editor_schema(&self, spec: &MergeSpec) -> Result<serde_json::Value> {
        let targets = self
            .target_search(spec)
            .all()
            .into_iter()
            .map(|(_, t)| t)
            .collect::<Result<Vec<_>>>()?;
        let mut schema = specmod::fragment_schema(spec);
        crate::target::annotate_fragment_schema(&mut schema, &targets);
        Ok(schema)
    }

    /// The layer directories the options and the environment choose,
    /// without the sources' base layers.
    pub fn layers_local(&self) -> Layers {
        Layers::choose(&self.env, &self.options.layers)
    }

    /// The layer directories with a base layer for every locked source of
    /// the project ([`upstream::attach`]), nothing refused: for
    /// `validate`, which reports what is wrong with them.
    pub fn layers_quiet(&self) -> Layers {
        upstream::attach(self.layers_local(), self.cache().as_ref(), &self.policy())
    }

    /// [`Context::layers_quiet`], a refused layer directory an error. A
    /// layer path that is not a directory stays a warning: its
    /// diagnostic is in [`Layers::diagnostics`], for the front end to
    /// show.
    pub fn layers(&self) -> Result<Layers> {
        refusing(self.layers_quiet())
    }

    /// [`Context::layers`] without the sources' base layers: for the
    /// commands that fetch and lock them.
    pub fn layers_without_sources(&self) -> Result<Layers> {
        refusing(self.layers_local())
    }

    /// The project's files (sources, lock, targets) for these layers.
    pub fn paths(&self, layers: &Layers) -> Paths {
        Paths::of(layers)
    }

    /// The project found from the working directory, whose own layer is
    /// the team layer: `None` when there is none, or when a flag or a
    /// variable names the team layer instead.
    pub fn project(&self) -> Option<Project> {
        let team = &crate::source::places(&self.env, &self.options.layers)[1];
        (team.source == PlaceSource::Project)
            .then(|| self.env.project())
            .flatten()
    }

    /// Where `add` records a source when the person does not ask for their
    /// own configuration: the project's files, found or to be made at the
    /// root of the git work tree (`.bernstein/`); a team layer named by a
    /// flag or a variable keeps its files beside it. `None` outside a git
    /// work tree with the team layer at its XDG default: the person's
    /// configuration is theirs to ask for.
    pub fn paths_to_write(&self, layers: &Layers) -> Option<Paths> {
        let team = &layers.dirs()[1];
        match team.source {
            PlaceSource::Project => Some(Paths::of(layers)),
            PlaceSource::Xdg { .. } | PlaceSource::NoHome { .. } => {
                let root = self.env.work_tree()?;
                let project = Project::at(&root);
                Some(Paths::of_project(&project, self.env.cwd.as_deref()))
            }
            _ => Some(Paths::of(layers)),
        }
    }

    /// Where `add` records a source: the project's files
    /// ([`Context::paths_to_write`]), or, when the person asks for their
    /// own configuration (`global`, `add --global`), theirs, which is
    /// written only when asked for.
    pub fn paths_to_add(&self, layers: &Layers, global: bool) -> Result<Paths> {
        if global {
            let Some(dir) = self.env.config_dir() else {
                return Err(Error::Refused {
                    kind: ErrorKind::NoPlace,
                    path: None,
                    message: "--global: nowhere to keep your configuration: neither \
                              $XDG_CONFIG_HOME nor $HOME is set to an absolute path"
                        .into(),
                });
            };
            return Ok(Paths::in_dir(&dir));
        }
        self.paths_to_write(layers).ok_or_else(|| Error::Refused {
            kind: ErrorKind::NoPlace,
            path: None,
            message: "not in a project: run `bernstein skills add` inside the git work tree of \
                      the project that takes the source (it writes .bernstein/sources.toml \
                      there), or add --global to record it in your own configuration \
                      ($XDG_CONFIG_HOME/bernstein/skills/sources.toml)"
                .into(),
        })
    }

    /// The layers and the spec put together.
    pub fn skills(&self) -> Result<Skills> {
        let spec = self.load_spec()?;
        self.skills_with(spec, self.layers()?)
    }

    /// `spec` and `layers` put together, with this context's caps and
    /// target search.
    pub fn skills_with(&self, spec: MergeSpec, layers: Layers) -> Result<Skills> {
        let search = self.target_search(&spec);
        Ok(Skills::new(spec, layers, self.options.max_fragment_bytes).with_target_search(search))
    }

    /// What `validate` judges, for `skills`' spec: its layers with the
    /// project's sources attached and nothing refused (validate reports
    /// what is wrong with them), every target found for the files it
    /// writes beside a skill's own, and the rules of the targets `named`,
    /// or, when none is, of those the project names for itself
    /// (`targets.toml`), whose findings are then warnings.
    pub fn validation(&self, skills: &Skills, named: &[String]) -> Result<Skills> {
        let spec = skills.spec();
        let targets = self.targets(spec, named)?;
        let project_targets = if named.is_empty() {
            // Where the file is depends on the project, not its sources:
            // the lock is read once, below.
            self.project_target_rules(spec, &self.layers_local())?
        } else {
            Vec::new()
        };
        // Every target found, for the files it writes beside a skill's own
        // (not its rules): one that cannot be read is no reason to fail here.
        let search = self.target_search(spec);
        let all: Vec<_> = search
            .all()
            .into_iter()
            .filter_map(|(_, t)| t.ok())
            .collect();
        let skills = skills
            .with_layers(self.layers_quiet())
            .with_file_targets(&all)
            .with_target_search(search);
        Ok(if project_targets.is_empty() {
            skills.with_targets(targets)
        } else {
            skills.with_targets_warning(project_targets)
        })
    }

    /// The targets the project names for itself (`targets.toml`), with the
    /// file: `None` when it has none.
    pub fn project_targets(&self, layers: &Layers) -> Result<Option<(PathBuf, Vec<String>)>> {
        upstream::project_targets(layers)
    }

    /// The targets the project names for itself (`targets.toml`), read
    /// for `spec` as [`Context::targets`] reads them, an error naming the
    /// file: none when it has none.
    pub fn project_target_rules(&self, spec: &MergeSpec, layers: &Layers) -> Result<Vec<Target>> {
        match self.project_targets(layers)? {
            Some((file, names)) => self.targets_in_file(spec, &file, &names),
            None => Ok(Vec::new()),
        }
    }

    /// The targets `names` the project's targets file `file` lists, read
    /// for `spec` as [`Context::targets`] reads them, an error naming the
    /// file.
    pub fn targets_in_file(
        &self,
        spec: &MergeSpec,
        file: &Path,
        names: &[String],
    ) -> Result<Vec<Target>> {
        self.targets(spec, names).map_err(|e| in_file(file, e))
    }

    /// The directories the targets of the project's targets file `file`
    /// load skills from for `scope`, each once ([`Context::target_places`]),
    /// an error naming the file.
    pub fn target_places_in_file(
        &self,
        targets: &[Target],
        file: &Path,
        scope: Scope,
    ) -> Result<Vec<SharedPlace>> {
        self.target_places(targets, scope)
            .map_err(|e| in_file(file, e))
    }

    /// Where sources may come from, as pinned outside the repository
    /// (`BERNSTEIN_SKILLS_ALLOW_*`).
    pub fn policy(&self) -> upstream::Policy {
        upstream::Policy::of(&self.env)
    }

    /// The cache of fetched sources, if there is a place for it.
    pub fn cache(&self) -> Option<Cache> {
        Cache::of(&self.env)
    }

    /// The cache, or an error saying how to have one.
    pub fn require_cache(&self) -> Result<Cache> {
        self.cache().ok_or_else(|| Error::Refused {
            kind: crate::error::ErrorKind::NoPlace,
            path: None,
            message: "no cache directory: set $XDG_CACHE_HOME or $HOME to an absolute path".into(),
        })
    }

    /// The person's trust in projects.
    pub fn trust_store(&self) -> TrustStore {
        TrustStore::of(&self.env)
    }

    /// The machine-local state directory (export's ledgers).
    pub fn state_dir(&self) -> Option<PathBuf> {
        self.env.state_dir()
    }

    /// `path` (absolute) as a person standing in the working directory
    /// would type it (`.claude/skills`).
    pub fn shown(&self, path: &Path) -> PathBuf {
        crate::source::project::relative_to(path, self.env.cwd.as_deref())
    }

    /// The root of the git work tree holding the working directory.
    pub fn work_tree(&self) -> Option<PathBuf> {
        self.env.work_tree()
    }

    /// Is `dir` (absolute, or relative to the working directory) one the
    /// project commits: inside the git work tree holding the working
    /// directory? Such a directory is built from the base and team layers
    /// only ([`Context::layers_for`]), and a record of what export wrote
    /// there is the repository's own ([`crate::export::ExportOptions`]).
    pub fn is_committed(&self, dir: &Path) -> bool {
        match (self.work_tree(), self.env.cwd.as_deref()) {
            (Some(root), Some(cwd)) => crate::source::project::inside(&root, dir, cwd),
            _ => false,
        }
    }

    /// The layers an export into `dir` takes: all of `layers`, or, for a
    /// directory the project commits ([`Context::is_committed`]), all but
    /// the user layer, which is one person's.
    pub fn layers_for(&self, layers: &Layers, dir: &Path) -> Layers {
        if self.is_committed(dir) {
            layers.leaving_out_user(USER_LAYER_LEFT_OUT)
        } else {
            layers.clone()
        }
    }

    /// The skills an export into `dir` takes ([`Context::layers_for`]),
    /// and whether `dir` is one the project commits, whose record is then
    /// the repository's own ([`crate::export::ExportOptions::in_repository`]).
    pub fn for_export(&self, skills: &Skills, dir: &Path) -> (Skills, bool) {
        let layers = self.layers_for(skills.layers(), dir);
        (skills.with_layers(layers), self.is_committed(dir))
    }

    /// Where `target` loads skills from for `scope`: `~` is the home
    /// directory; a project place is below the root of the git work tree
    /// holding the working directory.
    pub fn target_place(&self, target: &Target, scope: Scope) -> Result<PathBuf> {
        let written = match scope {
            Scope::User => &target.user_place,
            Scope::Project => &target.project_place,
        };
        let Some(written) = written else {
            return Err(Error::Refused {
                kind: crate::error::ErrorKind::NoPlace,
                path: None,
                message: format!(
                    "target '{}' names no {} place; give the directory with --out",
                    crate::text::escape(&target.name),
                    scope.label()
                ),
            });
        };
        match scope {
            Scope::User => match written.strip_prefix("~/") {
                Some(rest) => match &self.env.home {
                    Some(home) if home.is_absolute() => Ok(home.join(rest)),
                    _ => Err(Error::Refused {
                        kind: crate::error::ErrorKind::NoPlace,
                        path: None,
                        message: "HOME is not set to an absolute path, so ~ cannot be found; \
                                  give the directory with --out"
                            .into(),
                    }),
                },
                None => Ok(PathBuf::from(written)),
            },
            Scope::Project => {
                let Some(root) = self.work_tree() else {
                    return Err(Error::Refused {
                        kind: crate::error::ErrorKind::NoPlace,
                        path: None,
                        message: "not inside a git work tree, so the project's root is unknown; \
                                  give the directory with --out"
                            .into(),
                    });
                };
                Ok(root.join(written))
            }
        }
    }
}

/// One directory an export writes, for the targets that load skills
/// from it: several agents read `.agents/skills`, and it is written once
/// for all of them ([`Context::target_places`]).
#[derive(Debug, Clone)]
pub struct SharedPlace {
    /// The directory.
    pub dir: PathBuf,
    /// The targets reading it, in the order given; all render as the
    /// first does ([`Target::renders_as`]).
    pub targets: Vec<Target>,
}

impl SharedPlace {
    /// The target the directory is written for: the first, sharing it
    /// with the others ([`Target::sharing`]).
    pub fn target(&self) -> Target {
        let others: Vec<String> = self.targets[1..].iter().map(|t| t.name.clone()).collect();
        self.targets[0].sharing(&others)
    }

    /// The names of its targets, in order.
    pub fn names(&self) -> Vec<&str> {
        self.targets.iter().map(|t| t.name.as_str()).collect()
    }
}

impl Context {
    /// The directories `targets` load skills from for `scope`, each once
    /// with every target that reads it. Targets reading one directory must
    /// write a skill there the same way (render as the same target,
    /// [`Target::renders_as`]): otherwise each export would overwrite the
    /// other's files, and the answer is an error naming both and the
    /// directory, given before anything is written. A target named twice
    /// counts once.
    pub fn target_places(&self, targets: &[Target], scope: Scope) -> Result<Vec<SharedPlace>> {
        let mut out: Vec<SharedPlace> = Vec::new();
        for t in targets {
            let dir = self.target_place(t, scope)?;
            let Some(place) = out.iter_mut().find(|p| same_dir(&p.dir, &dir)) else {
                out.push(SharedPlace {
                    dir,
                    targets: vec![t.clone()],
                });
                continue;
            };
            if place.targets.iter().any(|k| k.name == t.name) {
                continue;
            }
            let first = &place.targets[0];
            if first.renders_as != t.renders_as {
                let e = crate::text::escape;
                return Err(Error::Refused {
                    kind: crate::error::ErrorKind::Conflict,
                    path: None,
                    message: format!(
                        "{} and {} both load skills from {} (their {} place), but each writes a \
                         skill there its own way ({} as {}, {} as {}), and a directory holds \
                         one copy of a skill: keep one of them, or export the other into a \
                         directory of its own with --target NAME --out DIR; nothing was written",
                        e(&first.name),
                        e(&t.name),
                        crate::text::path(&self.shown(&place.dir)),
                        scope.label(),
                        e(&first.name),
                        e(&first.renders_as),
                        e(&t.name),
                        e(&t.renders_as),
                    ),
                });
            }
            place.targets.push(t.clone());
        }
        Ok(out)
    }

    /// Is the consumer of `target` installed on this machine? The first of
    /// its detect paths ([`Target::detect_paths`], `~` the home directory)
    /// that exists, as written and as found, if any.
    pub fn installed(&self, target: &Target) -> Option<(String, PathBuf)> {
        target.detect_paths().into_iter().find_map(|p| {
            let path = match p.strip_prefix("~/") {
                Some(rest) => self
                    .env
                    .home
                    .as_ref()
                    .filter(|h| h.is_absolute())?
                    .join(rest),
                None => PathBuf::from(&p),
            };
            path.exists().then_some((p, path))
        })
    }

    /// Every target found whose consumer is installed on this machine
    /// ([`Context::installed`]), with the path that shows it as written; a
    /// target file that does not load is left out (naming it says why).
    pub fn installed_targets(&self, spec: &MergeSpec) -> Vec<(Target, String)> {
        self.target_search(spec)
            .all()
            .into_iter()
            .filter_map(|(_, t)| {
                let t = t.ok()?;
                let (found, _) = self.installed(&t)?;
                Some((t, found))
            })
            .collect()
    }
}

/// Are `a` and `b` the same directory: the same path, or (both existing)
/// the same directory reached another way?
fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
}

/// Error `e`, about what the project's targets file `file` says, as an
/// error at that file.
fn in_file(file: &Path, e: Error) -> Error {
    Error::Refused {
        kind: e.kind(),
        path: Some(file.to_path_buf()),
        message: e.to_string(),
    }
}

/// `layers`, or the error of its refused directories.
fn refusing(layers: Layers) -> Result<Layers> {
    let refused: Vec<Diagnostic> = layers.refusals();
    if refused.is_empty() {
        Ok(layers)
    } else {
        Err(Error::Invalid(refused))
    }
}

/// The override [`Context::new_override`] makes: of skill `name`, in
/// `layer` (team or user), in `form`; `force` replaces a
/// `skill-fragment.schema.json` beside the layers that this tool did not
/// write.
#[derive(Debug, Clone, Copy)]
pub struct NewOverride<'a> {
    name: &'a str,
    layer: Layer,
    form: Form,
    force: bool,
}

impl<'a> NewOverride<'a> {
    /// The override asked for, once its name is checked (before anything
    /// is read).
    pub fn new(name: &'a str, layer: Layer, form: Form, force: bool) -> Result<NewOverride<'a>> {
        crate::layer::check_name(name).map_err(|reason| Error::InvalidName {
            name: name.to_owned(),
            reason,
        })?;
        Ok(NewOverride {
            name,
            layer,
            form,
            force,
        })
    }
}

/// What [`Context::new_override`] made.
#[derive(Debug, Clone)]
pub struct NewOverrideMade {
    /// The override's file.
    pub path: PathBuf,
    /// The editor schema beside the layers, which the file names.
    pub schema: PathBuf,
    /// Why the layer is where it is, for a person.
    pub why: String,
}

impl Context {
    /// Makes the file of a new override `req` with `spec` among `layers`: a
    /// file that names the editor schema (written beside the layers, as
    /// [`crate::export::write_schema`] allows) and lists the spec's
    /// fields. Inside a git work tree whose team layer is the person's
    /// configuration, the team's override goes into the project's own
    /// layer. Refused, with nothing written, when the layer has no place,
    /// already has the skill, or would be written through a symbolic link
    /// that leads out of it ([`crate::export::prepare_new_in_layer`]).
    pub fn new_override(
        &self,
        spec: &MergeSpec,
        layers: &Layers,
        req: &NewOverride<'_>,
    ) -> Result<NewOverrideMade> {
        let (dir, why) = self.override_dir(layers, req.layer)?;
        refuse_existing(layers, req)?;
        let path = req.form.path_in(&dir, req.name);
        let parent = path.parent().unwrap_or(&dir).to_path_buf();
        // The layer may come from strangers: a symlink there (`team/NAME ->
        // /elsewhere`) must not make us write outside it, and something at the
        // file's name that is no skill is refused by name, before the schema
        // is written.
        crate::export::prepare_new_in_layer(&dir, &path, req.layer)?;
        let schema = self.write_override_schema(spec, &dir, req.force)?;
        let text = override_text(
            req.form,
            &relative(&parent, &schema),
            &override_comment(spec, req.layer, req.name),
        );
        // Never over anything, even if the file appeared meanwhile, and never
        // through a symlink planted at its name.
        crate::export::create_new(&path, text.as_bytes())?;
        Ok(NewOverrideMade { path, schema, why })
    }

    /// The directory a new override in `layer` goes into, and why it is
    /// there for a person; refused when the layer has no place.
    fn override_dir(&self, layers: &Layers, layer: Layer) -> Result<(PathBuf, String)> {
        let place = &layers.dirs()[layer as usize];
        match place.source {
            PlaceSource::NoHome { .. } => Err(Error::Refused {
                kind: ErrorKind::NoPlace,
                path: None,
                message: format!(
                    "the {layer} is {}; give it with --{} or set the variable \
                     (nothing was written)",
                    place.source.why(layer),
                    layer.label()
                ),
            }),
            // Inside a git work tree that has no layer of its own yet, the
            // team's override belongs to the project, not to the person's
            // configuration.
            PlaceSource::Xdg { .. } if layer == Layer::Team => {
                let env = self.env();
                Ok(match env.work_tree() {
                    Some(top) => (
                        crate::source::project::relative_to(
                            &crate::source::Project::at(&top).layer,
                            env.cwd.as_deref(),
                        ),
                        "project-local: the first in this git work tree".to_owned(),
                    ),
                    None => (place.path.clone(), place.source.why(layer)),
                })
            }
            source => Ok((place.path.clone(), source.why(layer))),
        }
    }

    /// Writes the editor schema of `spec` beside the layers (the parent of
    /// the layer directory `dir`), so that an override's modeline is a
    /// relative path that works for everyone who checks the layer out;
    /// returns its path.
    fn write_override_schema(&self, spec: &MergeSpec, dir: &Path, force: bool) -> Result<PathBuf> {
        let schema = dir
            .parent()
            .unwrap_or(dir)
            .join("skill-fragment.schema.json");
        crate::export::write_schema(
            &schema,
            render::to_json(&self.editor_schema(spec)?).as_bytes(),
            force,
        )?;
        Ok(schema)
    }
}

/// Refuses a new override of a skill its layer already has: a directory of
/// files only takes a SKILL.md, and any other form would shadow it.
fn refuse_existing(layers: &Layers, req: &NewOverride<'_>) -> Result<()> {
    let layer = req.layer;
    let Some(existing) = layers
        .locate(req.name)
        .into_iter()
        .find(|l| l.layer == layer)
    else {
        return Ok(());
    };
    let message = match existing.form {
        Form::Files if req.form == Form::SkillMd => return Ok(()),
        Form::Files => format!(
            "the {layer} holds files for skill '{}' in this directory; add the override as \
             its SKILL.md (--form md) (nothing was written)",
            req.name
        ),
        _ => format!(
            "the {layer} already has skill '{}'; edit this file instead (nothing was written)",
            req.name
        ),
    };
    Err(Error::Refused {
        kind: ErrorKind::Exists,
        path: Some(existing.path),
        message,
    })
}

/// The comment a new override of skill `name` in `layer` opens with: what
/// to set, then every field of `spec` with its strategy (marking the
/// required ones), then what each strategy used does.
fn override_comment(spec: &MergeSpec, layer: Layer, name: &str) -> String {
    let c = "#";
    let mut s = format!("{c} {layer} override of skill '{name}'.\n");
    s.push_str(&format!(
        "{c} Set only what should differ from the layers below; every field is optional.\n\
         {c} A required field must be set by some layer, not necessarily this one.\n{c}\n"
    ));
    let width = spec.fields.iter().map(|f| f.name.len()).max().unwrap_or(0);
    let mut seen = Vec::new();
    for f in &spec.fields {
        let required = if f.required && spec.name_field.as_ref() != Some(&f.name) {
            "  (required)"
        } else {
            ""
        };
        s.push_str(&format!(
            "{c}   {:<width$}  {}{required}\n",
            f.name,
            f.strategy.name()
        ));
        if !seen.contains(&f.strategy.name()) {
            seen.push(f.strategy.name());
        }
    }
    s.push_str(&format!("{c}\n"));
    for name in seen {
        if let Some(f) = spec.fields.iter().find(|f| f.strategy.name() == name) {
            s.push_str(&format!("{c} {}\n", strategy_help(&f.strategy)));
        }
    }
    s
}

/// A new override's text in `form`: the line that names the editor schema
/// at `schema` (relative to the file) as the form's editors read it, then
/// `comment`; a SKILL.md holds both in its front matter.
fn override_text(form: Form, schema: &Path, comment: &str) -> String {
    let schema = schema.display();
    match form {
        Form::Toml => format!("#:schema {schema}\n{comment}"),
        Form::SkillMd => format!("---\n# yaml-language-server: $schema={schema}\n{comment}---\n"),
        _ => format!("# yaml-language-server: $schema={schema}\n{comment}"),
    }
}

/// A relative path from directory `from` to file `to` (both under one root).
fn relative(from: &Path, to: &Path) -> PathBuf {
    let from: Vec<_> = from.components().collect();
    let to_c: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to_c).take_while(|(a, b)| a == b).count();
    let mut p = PathBuf::new();
    for _ in common..from.len() {
        p.push("..");
    }
    for c in &to_c[common..] {
        p.push(c);
    }
    p
}
