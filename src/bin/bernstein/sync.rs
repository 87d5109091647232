//! `bernstein skills sync [SOURCE] [--target T]...`: from a source to every
//! agent of the project in one command, and a teammate's first command
//! after cloning: `add` (when SOURCE is new), `verify` (every locked source
//! in the cache), then `export` to each of the project's targets.

use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use bernstein_skills::context::Scope;
use bernstein_skills::upstream::Paths;
use bernstein_skills::{Context, Error, ErrorKind, Result, output::render, text};

use crate::export::{ExportArgs, Scope as ScopeArg};
use crate::output;
use crate::sources::{AddArgs, VerifyArgs};

#[derive(Debug, Args)]
#[command(after_help = AFTER_HELP)]
pub struct SyncArgs {
    /// A source to add first (as `add` takes it: a URL, a local path, or
    /// OWNER/REPO); one the project has already is not added again.
    #[arg(value_name = "SOURCE")]
    pub source: Option<String>,
    /// Export for this target (repeatable) [default: the project's
    /// targets.toml]. In a project that names none yet, the targets given
    /// are recorded in .bernstein/targets.toml for every teammate.
    #[arg(long = "target", value_name = "TARGET")]
    pub targets: Vec<String>,
    /// Where each target's skills go: the project's place (`project`,
    /// e.g. .claude/skills in the work tree: base and team layers) or
    /// yours (`user`, e.g. ~/.claude/skills: every layer) [default:
    /// project inside a git work tree, else user].
    #[arg(long, value_enum)]
    pub scope: Option<ScopeArg>,
    /// With SOURCE: the branch, tag or commit to take.
    #[arg(long = "ref", value_name = "REF", requires = "source")]
    pub git_ref: Option<String>,
    /// With SOURCE: the directory inside the repository that holds the
    /// skills.
    #[arg(
        long,
        value_name = "DIR",
        requires = "source",
        conflicts_with = "plugin"
    )]
    pub path: Option<String>,
    /// With SOURCE: take the skills this plugin of the repository's Claude
    /// Code marketplace file (.claude-plugin/marketplace.json) declares.
    #[arg(long, value_name = "NAME", requires = "source")]
    pub plugin: Option<String>,
    /// With SOURCE: take only this skill (repeatable).
    #[arg(long = "skill", value_name = "NAME", requires = "source")]
    pub skills: Vec<String>,
    /// With SOURCE: the source's name in sources.toml.
    #[arg(long, value_name = "NAME", requires = "source")]
    pub name: Option<String>,
    /// With SOURCE: record it in your own configuration instead of the
    /// project's (as `add --global`).
    #[arg(long, requires = "source")]
    pub global: bool,
    /// Refuse a source whose content has anything a reviewer must see, and
    /// export nothing if validate finds any problem.
    #[arg(long)]
    pub strict: bool,
    /// Remove what export wrote of skills no layer provides any more.
    #[arg(long)]
    pub prune: bool,
    /// Print one JSON document (docs/json.md): `{"added", "sources",
    /// "targets_file", "exports"}`.
    #[arg(long)]
    pub json: bool,
}

const AFTER_HELP: &str = "\
In one command: adds SOURCE to the project when it is new (writing
.bernstein/sources.toml and sources.lock), fetches every locked source the
cache lacks and checks the cache against the lock (as verify does), and
exports the effective skills to each of the project's targets (as export
--target does), each into its place for the scope. The targets are those
given, else the project's .bernstein/targets.toml; the first sync of a
project records the targets it is given there. A teammate's first command
after cloning is `bernstein skills sync`.

Examples:
  bernstein skills sync anthropics/skills --path skills --target claude-code --target codex
  bernstein skills sync                         # after a clone or a pull
  bernstein skills sync --scope user            # into your own agents' places, your layer too";

pub fn run(args: SyncArgs, ctx: &Context) -> Result<ExitCode> {
    let mut doc = json!({"added": null, "targets_file": null});
    // 1. The source, when it is new.
    if let Some(source) = &args.source {
        let layers = ctx.layers_without_sources()?;
        let known = crate::sources::has_source(ctx, &layers, source, args.global)?;
        if known {
            if !args.json {
                output::print(&format!(
                    "{}: already a source of this project; not added again\n",
                    text::escape(&bernstein_skills::upstream::location::redacted(source))
                ));
            }
        } else {
            let add = AddArgs {
                source: Some(source.clone()),
                import: None,
                git_ref: args.git_ref.clone(),
                path: args.path.clone(),
                plugin: args.plugin.clone(),
                skills: args.skills.clone(),
                name: args.name.clone(),
                strict: args.strict,
                global: args.global,
                json: args.json,
            };
            let (code, added) = output::nested(args.json, || crate::sources::add(add, ctx))?;
            if code != ExitCode::SUCCESS {
                return Ok(code);
            }
            doc["added"] = added.get("added").cloned().unwrap_or(Value::Null);
        }
    }
    // 2. Every locked source in the cache, checked against the lock.
    let (code, verified) = output::nested(args.json, || {
        crate::sources::verify(VerifyArgs { json: args.json }, ctx)
    })?;
    if code != ExitCode::SUCCESS {
        return Ok(code);
    }
    doc["sources"] = verified.get("sources").cloned().unwrap_or(json!([]));
    // 3. The targets: given, or the project's.
    let layers = ctx.layers_without_sources()?;
    let paths = ctx.paths(&layers);
    let scope = args
        .scope
        .map(Scope::from)
        .unwrap_or(match ctx.work_tree() {
            Some(_) => Scope::Project,
            None => Scope::User,
        });
    let targets = if args.targets.is_empty() {
        match ctx.project_targets(&layers)? {
            Some((_, names)) if !names.is_empty() => names,
            _ => return Err(no_targets(ctx, &paths)?),
        }
    } else {
        // A project's first sync records the team's choice (in the
        // project's files; outside a project nothing is recorded).
        if let Some(files) = ctx.paths_to_write(&layers)
            && let Some(written) = record_targets(&files, &args.targets)?
        {
            if !args.json {
                output::print(&format!(
                    "wrote {} (targets: {})\n",
                    text::path(&written),
                    text::list(args.targets.iter().map(String::as_str), false)
                ));
            }
            doc["targets_file"] = json!(written.display().to_string());
        }
        args.targets.clone()
    };
    // 4. The export to each.
    let export = ExportArgs {
        targets,
        scope: match scope {
            Scope::User => ScopeArg::User,
            Scope::Project => ScopeArg::Project,
        },
        prune: args.prune,
        strict: args.strict,
        json: args.json,
        // What validate warns about every skill exported, each once.
        warnings_unchanged: true,
        ..ExportArgs::default()
    };
    let (code, exported) = output::nested(args.json, || crate::export::run(export, ctx))?;
    if args.json {
        doc["places"] = exported.get("places").cloned().unwrap_or(json!([]));
        doc["exports"] = exported.get("exports").cloned().unwrap_or(json!([]));
        doc["warnings"] = exported.get("warnings").cloned().unwrap_or(json!([]));
        output::print(&render::to_json(&doc));
    }
    Ok(code)
}

/// Writes `.bernstein/targets.toml` naming `targets`, if the project has no
/// such file yet; the path written.
fn record_targets(paths: &Paths, targets: &[String]) -> Result<Option<std::path::PathBuf>> {
    let path = &paths.targets;
    let io = paths.io(path);
    let list: Vec<String> = targets
        .iter()
        .map(|t| toml::Value::String(t.clone()).to_string())
        .collect();
    let text = format!(
        "# The targets this project exports to (`bernstein skills sync` and\n\
         # `bernstein skills audit` use them).\ntargets = [{}]\n",
        list.join(", ")
    );
    if !bernstein_skills::export::write_if_absent(&io, text.as_bytes())? {
        return Ok(None);
    }
    Ok(Some(path.clone()))
}

/// The error of a sync with no target to export to: which agents this
/// machine has, and the command that exports to them, rather than a guess.
fn no_targets(ctx: &Context, paths: &Paths) -> Result<Error> {
    let spec = crate::global::load_spec(ctx)?;
    Ok(Error::Refused {
        kind: ErrorKind::NotFound,
        path: None,
        message: format!(
            "no targets to export to: name them with --target, and the first sync of a project \
             records them in {} for every teammate. {}",
            text::path(&paths.targets),
            crate::targets::installed_advice(ctx, &spec, "bernstein skills sync")
        ),
    })
}
