//! The options every `skills` subcommand takes ([`GlobalArgs`]), the
//! library [`Context`] they build, and how what it answers is printed (the
//! layer places, warnings). Every subcommand's file uses this module; it
//! uses none of them.

use std::path::PathBuf;

use clap::Args;

use bernstein_skills::context::{Context, Options};
use bernstein_skills::fragment::DEFAULT_MAX_BYTES;
use bernstein_skills::source::LayerFlags;
use bernstein_skills::{Env, Layers, MergeSpec, Result, Skills, spec as specmod};

/// Options every `skills` subcommand takes, before or after its name;
/// listed once, under their own heading, after a subcommand's own options.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
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

impl GlobalArgs {
    /// The context of this run: the process's environment (with the
    /// source tree of a development build) and these flags, decided once.
    pub fn context(&self) -> Context {
        let mut env = Env::from_process();
        env.source_tree = dev_source_tree(env.exe.as_deref());
        Context::new(
            env,
            Options {
                spec: self.spec.clone(),
                layers: LayerFlags {
                    root: self.layers_root.clone(),
                    base: self.base.clone(),
                    team: self.team.clone(),
                    user: self.user.clone(),
                    allow_hard_links: self.allow_hard_links,
                },
                max_fragment_bytes: self.max_fragment_bytes,
            },
        )
    }
}

/// The merge spec in use, a stale installed copy warned about.
pub fn load_spec(ctx: &Context) -> Result<MergeSpec> {
    Ok(load_found_spec(ctx)?.0)
}

/// The merge spec in use and where it was found. A user-installed copy
/// that is not the one this binary ships is a warning (once).
pub fn load_found_spec(ctx: &Context) -> Result<(MergeSpec, specmod::FoundSpec)> {
    let (spec, found) = ctx.load_found_spec()?;
    if found.stale {
        warn_stale(&found.path);
    }
    Ok((spec, found))
}

/// The layer directories; a layer path that is not a directory is a
/// warning on stderr, a refused layer directory (a symlink) an error.
pub fn layers(ctx: &Context) -> Result<Layers> {
    let layers = ctx.layers()?;
    // No refusal is left: what remains is a warning for each layer path
    // that is not a directory, in validate's words.
    crate::output::warn_diagnostics(&layers.diagnostics());
    Ok(layers)
}

/// The spec and layers put together, for the command.
pub fn skills(ctx: &Context) -> Result<Skills> {
    let spec = load_spec(ctx)?;
    ctx.skills_with(spec, layers(ctx)?)
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

/// One line per layer: where its directory is and why (`team:
/// .bernstein/skills (project-local, found from the working
/// directory)`).
pub fn places(layers: &Layers) -> String {
    layers.dirs().iter().map(|d| d.describe() + "\n").collect()
}

/// [`places`] as JSON: `[{"layer", "dir", "found_by", "why", "exists"}]`.
pub fn places_json(layers: &Layers) -> serde_json::Value {
    bernstein_skills::report::places(layers)
}

/// The source tree this binary was built from, for a development build:
/// one that runs from inside that tree (`target/release/bernstein`), or
/// one cargo started there (`cargo run`, `cargo test` set
/// `CARGO_MANIFEST_DIR` for what they run, wherever `CARGO_TARGET_DIR` put
/// the binary). An installed or copied binary never reads the build
/// machine's files; it uses the spec installed beside it or by `skills
/// spec --install`.
fn dev_source_tree(exe: Option<&std::path::Path>) -> Option<PathBuf> {
    let tree = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .canonicalize()
        .ok()?;
    let run_by_cargo = std::env::var_os("CARGO_MANIFEST_DIR")
        .and_then(|dir| std::path::Path::new(&dir).canonicalize().ok())
        .is_some_and(|dir| dir == tree);
    let inside = || exe.is_some_and(|exe| exe.starts_with(&tree));
    (run_by_cargo || inside()).then_some(tree)
}

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
pub fn warn_stale(path: &std::path::Path) {
    use std::sync::atomic::{AtomicBool, Ordering};
    static WARNED: AtomicBool = AtomicBool::new(false);
    if WARNED.swap(true, Ordering::Relaxed) {
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
