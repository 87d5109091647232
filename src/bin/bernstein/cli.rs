//! Top-level arguments and dispatch.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use bernstein_skills::fragment::DEFAULT_MAX_BYTES;
use bernstein_skills::source::LayerFlags;
use bernstein_skills::{Env, Layers, MergeSpec, Result, Skills, spec as specmod};

/// Layered AI-agent skills: base, team and user layers merged field by field
/// under a merge spec that is data.
#[derive(Debug, Parser)]
#[command(name = "bernstein", version, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Resolve, inspect and check layered skills.
    #[command(subcommand)]
    Skills(SkillsCommand),
    /// Print a shell completion script (it asks bernstein for skill names
    /// and field paths from the layers as you type).
    #[command(
        after_help = "Examples:\n  mkdir -p ~/.local/share/bash-completion/completions && bernstein completions bash > ~/.local/share/bash-completion/completions/bernstein\n  mkdir -p ~/.zfunc && bernstein completions zsh > ~/.zfunc/_bernstein\n  mkdir -p ~/.config/fish/completions && bernstein completions fish > ~/.config/fish/completions/bernstein.fish"
    )]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), or write one page per command.
    #[command(
        after_help = "Examples:\n  mkdir -p ~/.local/share/man/man1 && bernstein man --out ~/.local/share/man/man1\n  bernstein man skills export | man -l -"
    )]
    Man {
        /// The command whose page to print: `skills export`, `skills spec
        /// impact` [default: bernstein itself].
        #[arg(value_name = "COMMAND")]
        command: Vec<String>,
        /// Write every command's page into DIR instead: bernstein.1,
        /// bernstein-skills.1, bernstein-skills-list.1, ... (the pages the
        /// others name), and print their names.
        #[arg(long, value_name = "DIR", conflicts_with = "command")]
        out: Option<PathBuf>,
    },
}

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

#[derive(Debug, Subcommand)]
pub enum SkillsCommand {
    /// List skills: names and descriptions, or (with --layered) the layers each comes from.
    List(crate::list::ListArgs),
    /// Print the effective skill as deterministic JSON.
    Show(crate::show::ShowArgs),
    /// Check every fragment (or those of the named skills) and report every problem.
    Validate(crate::validate::ValidateArgs),
    /// Show where each value of a skill came from, and what it overrode.
    Explain(crate::explain::ExplainArgs),
    /// Write every effective skill into DIR (DIR/<name>.json, or DIR/<name>/SKILL.md with --format skill), or check a directory written before.
    Export(crate::export::ExportArgs),
    /// Scaffold an override file in the team or user layer.
    New(crate::new::NewArgs),
    /// Print which merge spec is in use and its fields.
    Spec(crate::spec::SpecArgs),
    /// Print the JSON Schema of a skill fragment (or write all schemas to a directory).
    Schema(crate::schema::SchemaArgs),
    /// List the targets (consumers of effective skills), or describe one.
    Targets(crate::targets::TargetsArgs),
    /// Trust this project's own layer (.bernstein/skills) to reach places outside the project.
    Trust(crate::trust::TrustArgs),
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
        let mut dirs = vec![env.config_dir().join("targets")];
        if let Some(dir) = spec.path.parent() {
            dirs.push(dir.join("targets"));
        }
        dirs.push(env.data_dir().join("targets"));
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
            crate::spec::warn_if_stale(&found.path, &bytes);
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
        crate::output::warn(layers.dirs().iter().filter(|d| d.not_a_directory).map(|d| {
            use crate::output::{Stream, Style, paint};
            format!(
                "{}: {}: the {} path is not a directory; the layer is treated as absent",
                paint(
                    &bernstein_skills::text::path(&d.path),
                    Style::Bold,
                    Stream::Err
                ),
                paint("warning", Style::Yellow, Stream::Err),
                d.layer.label()
            )
        }));
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

    /// The layer directories, without warnings (for `validate`, which reports them).
    pub fn layers_quiet(&self) -> Layers {
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

impl Cli {
    /// Did the command ask for JSON (`--json`)? Its errors are JSON then.
    pub fn json(&self) -> bool {
        let Command::Skills(cmd) = &self.command else {
            return false;
        };
        match cmd {
            SkillsCommand::List(a) => a.json,
            SkillsCommand::Show(a) => a.json,
            SkillsCommand::Validate(a) => a.json,
            SkillsCommand::Explain(a) => a.json,
            SkillsCommand::Export(a) => a.json,
            SkillsCommand::New(a) => a.json,
            SkillsCommand::Spec(a) => a.json(),
            SkillsCommand::Schema(_) => false,
            SkillsCommand::Targets(a) => a.json,
            SkillsCommand::Trust(a) => a.json,
        }
    }
}

/// A command line clap refused (exit 2), or `--help`/`--version` (exit
/// 0). A `skills` subcommand typed without `skills` (`bernstein list`) is
/// told the command it meant; under `--json` the error is JSON on stdout,
/// as every other error is.
pub fn usage_error(mut e: clap::Error) -> ExitCode {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let code = ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return code;
    }
    if e.kind() == ErrorKind::InvalidSubcommand
        && let Some(ContextValue::String(typed)) = e.get(ContextKind::InvalidSubcommand)
    {
        let typed = typed.clone();
        let cmd = <Cli as clap::CommandFactory>::command();
        let is_skills_command = cmd
            .find_subcommand("skills")
            .is_some_and(|s| s.get_subcommands().any(|c| c.get_name() == typed));
        if is_skills_command {
            e.insert(
                ContextKind::Suggested,
                ContextValue::StyledStrs(vec![
                    format!("did you mean `bernstein skills {typed}`?").into(),
                ]),
            );
        }
    }
    let json = std::env::args_os()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json");
    if json {
        let rendered = e.render().to_string();
        let first = rendered.lines().next().unwrap_or_default();
        let message = first.strip_prefix("error: ").unwrap_or(first);
        crate::output::print(&crate::output::usage_error_json(
            &bernstein_skills::text::sanitized_excerpt(
                message,
                bernstein_skills::text::MESSAGE_CHARS,
            ),
        ));
    } else {
        let _ = e.print();
    }
    code
}

/// One man page (roff) per command, named as the pages name each other
/// (`bernstein-skills-list.1`): every command of the tree, parents first.
fn man_pages() -> Vec<(String, Vec<u8>)> {
    fn walk(cmd: &clap::Command, out: &mut Vec<(String, Vec<u8>)>) {
        let man = clap_mangen::Man::new(cmd.clone());
        let mut buf = Vec::new();
        // Rendering into memory cannot fail.
        let _ = man.render(&mut buf);
        out.push((man.get_filename(), buf));
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, out);
        }
    }
    let mut cmd = <Cli as clap::CommandFactory>::command().disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, &mut out);
    out
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// `man [COMMAND...]`, `man --out DIR`.
fn man(command: &[String], out: Option<&std::path::Path>) -> Result<ExitCode> {
    let pages = man_pages();
    let Some(dir) = out else {
        let file = std::iter::once("bernstein")
            .chain(command.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("-")
            + ".1";
        let Some((_, page)) = pages.iter().find(|(name, _)| *name == file) else {
            return Err(bernstein_skills::Error::Refused {
                path: None,
                message: format!(
                    "no command '{}'; pages: {}",
                    bernstein_skills::text::escape(&command.join(" ")),
                    pages
                        .iter()
                        .map(|(n, _)| n.trim_end_matches(".1"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        };
        crate::output::print(&String::from_utf8_lossy(page));
        return Ok(ExitCode::SUCCESS);
    };
    std::fs::create_dir_all(dir).map_err(|source| bernstein_skills::Error::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    // A man directory is shared: a file of one of these names that is not
    // a page of ours is kept, and nothing is written.
    for (name, _) in &pages {
        let path = dir.join(name);
        match bernstein_skills::source::read_bounded(&path, 1 << 20) {
            Err(r) if r.is_not_found() => {}
            Ok(old) if old.windows(4).any(|w| w == b".TH ") && contains(&old, b"bernstein") => {}
            _ => {
                return Err(bernstein_skills::Error::Refused {
                    path: Some(path),
                    message: "exists and is not a bernstein man page; nothing was written".into(),
                });
            }
        }
    }
    let mut written = String::new();
    for (name, page) in &pages {
        let path = dir.join(name);
        bernstein_skills::export::write_atomic(&path, page)?;
        written.push_str(&bernstein_skills::text::path(&path));
        written.push('\n');
    }
    crate::output::print(&written);
    Ok(ExitCode::SUCCESS)
}

pub fn run(cli: Cli) -> Result<ExitCode> {
    crate::output::set_color(cli.global.color);
    match cli.command {
        Command::Completions { shell } => {
            let script = crate::complete::registration(shell);
            crate::output::print(&String::from_utf8_lossy(&script));
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { command, out } => man(&command, out.as_deref()),
        Command::Skills(cmd) => match cmd {
            SkillsCommand::List(a) => crate::list::run(a, &cli.global),
            SkillsCommand::Show(a) => crate::show::run(a, &cli.global),
            SkillsCommand::Validate(a) => crate::validate::run(a, &cli.global),
            SkillsCommand::Explain(a) => crate::explain::run(a, &cli.global),
            SkillsCommand::Export(a) => crate::export::run(a, &cli.global),
            SkillsCommand::New(a) => crate::new::run(a, &cli.global),
            SkillsCommand::Spec(a) => crate::spec::run(a, &cli.global),
            SkillsCommand::Schema(a) => crate::schema::run(a, &cli.global),
            SkillsCommand::Targets(a) => crate::targets::run(a, &cli.global),
            SkillsCommand::Trust(a) => crate::trust::run(a, &cli.global),
        },
    }
}
