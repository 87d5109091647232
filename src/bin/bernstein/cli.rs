//! Top-level arguments and dispatch.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use bernstein_skills::Result;

/// Layered AI-agent skills: base, team and user layers merged field by field
/// under a merge spec that is data.
#[derive(Debug, Parser)]
#[command(name = "bernstein", version, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: crate::global::GlobalArgs,
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
    /// Add an upstream source (a git repository of skills) that feeds the base layer, and lock it.
    Add(crate::sources::AddArgs),
    /// Check the cached sources against sources.lock, fetching what is missing (what CI runs).
    Verify(crate::sources::VerifyArgs),
    /// Fetch the sources again and report what changed and which overrides it touches; --yes writes the lock.
    Update(crate::sources::UpdateArgs),
    /// Add a source if new, fetch what the lock names, and export to every target of the project: one command from a source to every agent.
    Sync(crate::sync::SyncArgs),
    /// Check that what is deployed in the project's target directories is what the lock and the layers give (CI, pre-commit).
    Audit(crate::audit::AuditArgs),
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
            SkillsCommand::Add(a) => a.json,
            SkillsCommand::Verify(a) => a.json,
            SkillsCommand::Update(a) => a.json(),
            SkillsCommand::Sync(a) => a.json,
            SkillsCommand::Audit(a) => a.json,
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
                kind: bernstein_skills::ErrorKind::NotFound,
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
    bernstein_skills::export::make_dirs(dir)?;
    // A man directory is shared: a file of one of these names that is not
    // a page of ours is kept, and nothing is written.
    for (name, _) in &pages {
        let path = dir.join(name);
        match bernstein_skills::source::read_bounded(&path, 1 << 20) {
            Err(r) if r.is_not_found() => {}
            Ok(old) if old.windows(4).any(|w| w == b".TH ") && contains(&old, b"bernstein") => {}
            _ => {
                return Err(bernstein_skills::Error::Refused {
                    kind: bernstein_skills::ErrorKind::Exists,
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
    let ctx = &cli.global.context();
    match cli.command {
        Command::Completions { shell } => {
            let script = crate::complete::registration(shell);
            crate::output::print(&String::from_utf8_lossy(&script));
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { command, out } => man(&command, out.as_deref()),
        Command::Skills(cmd) => match cmd {
            SkillsCommand::List(a) => crate::list::run(a, ctx),
            SkillsCommand::Show(a) => crate::show::run(a, ctx),
            SkillsCommand::Validate(a) => crate::validate::run(a, ctx),
            SkillsCommand::Explain(a) => crate::explain::run(a, ctx),
            SkillsCommand::Export(a) => crate::export::run(a, ctx),
            SkillsCommand::New(a) => crate::new::run(a, ctx),
            SkillsCommand::Spec(a) => crate::spec::run(a, ctx),
            SkillsCommand::Schema(a) => crate::schema::run(a, ctx),
            SkillsCommand::Targets(a) => crate::targets::run(a, ctx),
            SkillsCommand::Trust(a) => crate::trust::run(a, ctx),
            SkillsCommand::Add(a) => crate::sources::add(a, ctx),
            SkillsCommand::Verify(a) => crate::sources::verify(a, ctx),
            SkillsCommand::Update(a) => crate::sources::update(a, ctx),
            SkillsCommand::Sync(a) => crate::sync::run(a, ctx),
            SkillsCommand::Audit(a) => crate::audit::run(a, ctx),
        },
    }
}
