//! The options every `skills` subcommand takes ([`Global`]), and what
//! they choose: the spec, the layers, the targets. Every subcommand's file
//! uses this module; it uses none of them.

use std::path::PathBuf;

use clap::Args;

use bernstein_skills::fragment::DEFAULT_MAX_BYTES;
use bernstein_skills::source::LayerFlags;
use bernstein_skills::{Env, Layers, MergeSpec, Result, Skills, spec as specmod};

/// Options every `skills` subcommand takes, before or after its name;
/// listed once, under their own heading, after a subcommand's own options.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Global options")]
pub struct Global {
    /// The merge spec to use [default: $BERNSTEIN_SKILLS_SPEC, then
    /// $XDG_DATA_HOME/bernstein/skills/mergespec.yaml (written by `skills
    /// spec --install`), then PREFIX/share/bernstein/skills/mergespec.yaml
    /// installed beside PREFIX/bin/bernstein, then the spec of the source
    /// tree a development build was built from; `skills spec` says which].
    #[arg(long, global = true, value_name = "PATH")]
    pub spec: Option<PathBuf>,
    /// Read the layers from DIR/base, DIR/team and DIR/user (--base,
    /// --team or --user beside it moves that one layer).
    #[arg(long, global = true, value_name = "DIR")]
    pub layers_root: Option<PathBuf>,
    /// The base layer's directory [default: $BERNSTEIN_SKILLS_BASE, then
    /// $XDG_DATA_HOME/bernstein/skills/base].
    #[arg(long, global = true, value_name = "DIR")]
    pub base: Option<PathBuf>,
    /// The team layer's directory [default: $BERNSTEIN_SKILLS_TEAM, then
    /// .bernstein/skills in the working directory or the nearest directory
    /// above it in its git work tree, then
    /// $XDG_CONFIG_HOME/bernstein/skills/team].
    #[arg(long, global = true, value_name = "DIR")]
    pub team: Option<PathBuf>,
    /// The user layer's directory [default: $BERNSTEIN_SKILLS_USER, then
    /// $XDG_CONFIG_HOME/bernstein/skills/user].
    #[arg(long, global = true, value_name = "DIR")]
    pub user: Option<PathBuf>,
    /// Read files with more than one hard link from the team and user
    /// layers too (the base layer's always are). By default they are
    /// refused: a hard link in an archive or a shared folder can be any
    /// file of the same file system. For layouts you trust.
    #[arg(long, global = true)]
    pub allow_hard_links: bool,
    /// Refuse fragment files larger than this many bytes.
    #[arg(long, global = true, value_name = "BYTES", default_value_t = DEFAULT_MAX_BYTES)]
    pub max_fragment_bytes: u64,
    /// When to colour output: `auto` colours a terminal (not TERM=dumb),
    /// and follows NO_COLOR, CLICOLOR=0 and CLICOLOR_FORCE.
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto")]
    pub color: crate::output::ColorChoice,
}

impl Global {
    /// The environment as the process sees it.
    pub fn env(&self) -> Env {
        Env::from_process()
    }

    /// Where the merge spec is looked for.
    pub fn spec_search(&self) -> specmod::SpecSearch {
        specmod::SpecSearch {
            explicit: self.spec.clone(),
            env_var: std::env::var_os("BERNSTEIN_SKILLS_SPEC").map(PathBuf::from),
            data_dir: self.env().data_dir(),
            beside_binary: real_exe().and_then(specmod::SpecSearch::beside_executable),
            source_tree: dev_source_tree(),
        }
    }

    /// Where targets are looked for by name: the person's own
    /// `$XDG_CONFIG_HOME/bernstein/skills/targets`, the `targets/`
    /// directory beside the spec in use (the source tree's `spec/targets`
    /// for a development build), the installed one beside the base layer
    /// (`spec --install`), and the one installed beside the binary
    /// (`PREFIX/share/bernstein/skills/targets`).
    pub fn target_search(&self, spec: &MergeSpec) -> bernstein_skills::target::TargetSearch {
        let env = self.env();
        let mut dirs: Vec<_> = env
            .config_dir()
            .map(|d| d.join("targets"))
            .into_iter()
            .collect();
        if let Some(dir) = spec.path.parent() {
            dirs.push(dir.join("targets"));
        }
        dirs.extend(env.data_dir().map(|d| d.join("targets")));
        if let Some(dir) = self.spec_search().beside_binary {
            dirs.push(dir.join("targets"));
        }
        let mut seen = std::collections::BTreeSet::new();
        dirs.retain(|d| seen.insert(d.clone()));
        bernstein_skills::target::TargetSearch { dirs }
    }

    /// The targets named (or given as files) on the command line.
    pub fn targets(
        &self,
        spec: &MergeSpec,
        names: &[String],
    ) -> Result<Vec<bernstein_skills::target::Target>> {
        let search = self.target_search(spec);
        names.iter().map(|n| search.find(n)).collect()
    }

    /// The merge spec chosen by --spec, the environment or the defaults.
    pub fn load_spec(&self) -> Result<MergeSpec> {
        Ok(self.load_found_spec()?.0)
    }

    /// The merge spec in use and where it was found. A user-installed copy
    /// that is not the one this binary ships is a warning (once).
    pub fn load_found_spec(&self) -> Result<(MergeSpec, specmod::FoundSpec)> {
        let found = self.spec_search().resolve()?;
        let bytes = MergeSpec::read(&found.path)?;
        if found.source == specmod::SpecSource::Installed {
            warn_if_stale(&found.path, &bytes);
        }
        Ok((MergeSpec::from_bytes(bytes, &found.path)?, found))
    }

    /// The layer directories; a layer path that is not a directory is a
    /// warning on stderr, a refused layer directory (a symlink) an error.
    pub fn layers(&self) -> Result<Layers> {
        let layers = self.layers_quiet();
        let refused = layers.refusals();
        if !refused.is_empty() {
            return Err(bernstein_skills::Error::Invalid(refused));
        }
        // No refusal is left: what remains is a warning for each layer
        // path that is not a directory, in validate's words.
        crate::output::warn_diagnostics(&layers.diagnostics());
        Ok(layers)
    }

    /// Warns on stderr when none of the layer directories exists (for the
    /// commands that can still answer; the others fail).
    pub fn warn_no_layers(layers: &Layers) {
        if let Some(e) = bernstein_skills::engine::no_layers(layers) {
            crate::output::warn([format!(
                "{}: {}",
                crate::output::paint(
                    "warning",
                    crate::output::Style::Yellow,
                    crate::output::Stream::Err
                ),
                e
            )]);
        }
    }

    /// The layer directories, without warnings (for `validate`, which
    /// reports them), with a base layer for every locked source
    /// (`bernstein_skills::upstream::attach`).
    pub fn layers_quiet(&self) -> Layers {
        let cache = bernstein_skills::upstream::Cache::from_process();
        let policy = bernstein_skills::upstream::Policy::from_process();
        bernstein_skills::upstream::attach(self.layers_local(), cache.as_ref(), &policy)
    }

    /// [`Global::layers`] without the sources' base layers: for the
    /// commands that fetch and lock them.
    pub fn layers_without_sources(&self) -> Result<Layers> {
        let layers = self.layers_local();
        let refused = layers.refusals();
        if !refused.is_empty() {
            return Err(bernstein_skills::Error::Invalid(refused));
        }
        Ok(layers)
    }

    /// The layer directories the flags and the environment choose.
    fn layers_local(&self) -> Layers {
        let flags = LayerFlags {
            root: self.layers_root.clone(),
            base: self.base.clone(),
            team: self.team.clone(),
            user: self.user.clone(),
            allow_hard_links: self.allow_hard_links,
        };
        Layers::choose(&self.env(), &flags)
    }

    /// One line per layer: where its directory is and why (`team:
    /// .bernstein/skills (project-local, found from the working
    /// directory)`).
    pub fn places(layers: &Layers) -> String {
        layers.dirs().iter().map(|d| d.describe() + "\n").collect()
    }

    /// [`Global::places`] as JSON: `[{"layer", "dir", "found_by", "why",
    /// "exists"}]`.
    pub fn places_json(layers: &Layers) -> serde_json::Value {
        layers.dirs().iter().map(|d| d.to_json()).collect()
    }

    /// The spec and layers put together, for the command.
    pub fn skills(&self) -> Result<Skills> {
        let spec = self.load_spec()?;
        let search = self.target_search(&spec);
        Ok(Skills::new(spec, self.layers()?, self.max_fragment_bytes).with_target_search(search))
    }
}

/// The fragment schema an editor sees: the spec's, with the rules of every
/// target found ([`Global::target_search`]) in each field's hover text.
pub fn editor_schema(global: &Global, spec: &MergeSpec) -> Result<serde_json::Value> {
    let search = global.target_search(spec);
    let targets = search
        .names()
        .iter()
        .map(|n| search.find(n))
        .collect::<Result<Vec<_>>>()?;
    let mut schema = specmod::fragment_schema(spec);
    bernstein_skills::target::annotate_fragment_schema(&mut schema, &targets);
    Ok(schema)
}

/// The real path of this executable (symbolic links resolved: `~/.local/bin/
/// bernstein` linking into a tool's own environment is installed there).
fn real_exe() -> Option<&'static std::path::Path> {
    static EXE: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    EXE.get_or_init(|| std::env::current_exe().and_then(|e| e.canonicalize()).ok())
        .as_deref()
}

/// The spec of the source tree this binary was built from, for a
/// development build: one that runs from inside that tree
/// (`target/release/bernstein`), or one cargo started there (`cargo run`,
/// `cargo test` set `CARGO_MANIFEST_DIR` for what they run, wherever
/// `CARGO_TARGET_DIR` put the binary). An installed or copied binary never
/// reads the build machine's files; it uses the spec installed beside it
/// or by `skills spec --install`.
fn dev_source_tree() -> Option<PathBuf> {
    let tree = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .canonicalize()
        .ok()?;
    let run_by_cargo = std::env::var_os("CARGO_MANIFEST_DIR")
        .and_then(|dir| std::path::Path::new(&dir).canonicalize().ok())
        .is_some_and(|dir| dir == tree);
    let inside = || real_exe().is_some_and(|exe| exe.starts_with(&tree));
    (run_by_cargo || inside()).then(|| tree.join("spec").join(specmod::INSTALLED_NAME))
}

/// The spec shipped with this build, as bytes: only ever written out by
/// `--install`, never used for merging (the spec is data, read from a file).
pub const SHIPPED_SPEC: &[u8] = include_bytes!("../../../spec/mergespec.yaml");

/// Warns, once per run, that the user-installed spec in use is not the one
/// this binary ships.
///
/// "Not the one it ships" rather than "older": the spec has no revision of
/// its own (its `version` is the file format's), so a copy left by an
/// earlier release and one edited by hand look the same. Either way the
/// merge follows rules that this binary's help, targets and schemas do not
/// describe, and nothing would say so: after an upgrade the user's copy
/// still wins over the one installed with the binary. The fix for each is
/// in the line: reinstall it, or keep an edited spec where a person's own
/// choice belongs (the variable), which is never warned about.
pub fn warn_if_stale(path: &std::path::Path, bytes: &[u8]) {
    use std::sync::atomic::{AtomicBool, Ordering};
    static WARNED: AtomicBool = AtomicBool::new(false);
    if bytes == SHIPPED_SPEC || WARNED.swap(true, Ordering::Relaxed) {
        return;
    }
    use crate::output::{Stream, Style, paint};
    crate::output::warn([format!(
        "{}: {}: the installed merge spec is not the one bernstein {} ships (an earlier \
         release's, or edited); update it with 'bernstein skills spec --install --force', \
         or keep it as your own spec with BERNSTEIN_SKILLS_SPEC={}",
        paint(
            &bernstein_skills::text::path(path),
            Style::Bold,
            Stream::Err
        ),
        paint("warning", Style::Yellow, Stream::Err),
        env!("CARGO_PKG_VERSION"),
        bernstein_skills::text::path(path),
    )]);
}
