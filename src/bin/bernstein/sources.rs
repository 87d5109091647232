//! `bernstein skills add`, `verify` and `update`: upstream sources that
//! feed the base layer, pinned by `sources.lock` (docs/upstream.md).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use bernstein_skills::upstream::location::{Shown, redacted};
use bernstein_skills::upstream::{self, Paths, git};
use bernstein_skills::{Layers, Result, output::render, text};

use crate::output;
use bernstein_skills::Context;

#[derive(Debug, Default, Args)]
#[command(after_help = ADD_HELP)]
pub struct AddArgs {
    /// The repository: an https://, ssh:// or file:// URL, user@host:path,
    /// a local path (absolute, or starting with ./ or ../), or OWNER/REPO
    /// for a GitHub repository.
    #[arg(value_name = "SOURCE", required_unless_present = "import")]
    pub source: Option<String>,
    /// Take the sources of another installer's lock instead
    /// (`skills-lock.json`): one source per repository, ref and
    /// directory, with the skills it lists.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["source", "git_ref", "path", "plugin", "skills", "name"])]
    pub import: Option<PathBuf>,
    /// The branch, tag or commit to take [default: the repository's HEAD];
    /// a commit by its id, whole or abbreviated (recorded whole), must be
    /// on a branch or tag.
    #[arg(long = "ref", value_name = "REF")]
    pub git_ref: Option<String>,
    /// The directory inside the repository that holds the skill
    /// directories, `.` for the top [default: where the collection keeps
    /// them: skills/ when it holds any, else the top].
    #[arg(long, value_name = "DIR", conflicts_with = "plugin")]
    pub path: Option<String>,
    /// Take the skills this plugin of the repository's Claude Code
    /// marketplace file (.claude-plugin/marketplace.json) declares;
    /// update follows what the file declares.
    #[arg(long, value_name = "NAME")]
    pub plugin: Option<String>,
    /// Take only this skill (repeatable) [default: every skill there].
    #[arg(long = "skill", value_name = "NAME")]
    pub skills: Vec<String>,
    /// The source's name in sources.toml and sources.lock [default: the
    /// repository's name].
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Refuse the source (write nothing, exit 1) when its content has
    /// anything a reviewer must see (hidden comments, invisible
    /// characters, encoded blobs, scripts); by default they are warnings.
    #[arg(long)]
    pub strict: bool,
    /// Record the source in your own configuration
    /// ($XDG_CONFIG_HOME/bernstein/skills/sources.toml), for every
    /// project, instead of the project's .bernstein/sources.toml.
    #[arg(long)]
    pub global: bool,
    /// Print one JSON document (docs/json.md).
    #[arg(long)]
    pub json: bool,
}

const ADD_HELP: &str = "\
Records the source in the project's .bernstein/sources.toml (the project
found from here, else the root of the git work tree you are in, where
.bernstein/ is made), fetches the commit its ref names with the system git,
and writes .bernstein/sources.lock: that commit and the SHA-256 of every file
of every skill taken. The files are kept in
$XDG_CACHE_HOME/bernstein/skills/sources/ and feed the base layer, below
the team and user layers. Commit sources.toml and sources.lock: a clone
needs nothing else. Outside a git work tree, --global records it in your
own configuration instead; a team layer named by --team, --layers-root or
$BERNSTEIN_SKILLS_TEAM keeps its sources.toml beside it.

Without --path or --plugin, the skills are taken where the collection
keeps them: skills/ when it holds any, else the top; what else holds
skills, and the plugins the repository declares, are said, and the
directory taken is recorded as the source's path.

Examples:
  bernstein skills add anthropics/skills --plugin document-skills
  bernstein skills add acme/skills --path skills
  bernstein skills add https://github.com/acme/skills --ref v1.2.0 --skill pdf-tables
  bernstein skills add ../collection --name local-collection
  bernstein skills add --import skills-lock.json";

#[derive(Debug, Args)]
#[command(after_help = VERIFY_HELP)]
pub struct VerifyArgs {
    /// Print one JSON document (docs/json.md).
    #[arg(long)]
    pub json: bool,
}

const VERIFY_HELP: &str = "\
Checks that every source of sources.toml is locked, and that the cached
files are the locked ones; fetches (with the system git) what the cache
lacks, at the locked commit, and refuses any file whose SHA-256 differs
from the lock. What CI runs on a fresh clone; with the cache filled it
works offline and never runs git. Exits 1 on any mismatch.

Examples:
  bernstein skills verify
  bernstein skills verify --json";

#[derive(Debug, Args)]
#[command(after_help = UPDATE_HELP)]
pub struct UpdateArgs {
    /// Update only the sources these skills come from, and report only on
    /// them [default: every source].
    #[arg(value_name = "SKILL")]
    pub skills: Vec<String>,
    /// Take this branch, tag or commit instead of the ref in sources.toml
    /// (one source only); with --yes, sources.toml's ref becomes it (a
    /// commit by its full id), so the next update respects it.
    #[arg(long, value_name = "REF")]
    pub to: Option<String>,
    /// Write nothing; exit 1 when upstream has moved (for a scheduled CI
    /// job).
    #[arg(long, conflicts_with = "yes")]
    pub check: bool,
    /// Accept the update: write the new lock (without it, the report is
    /// all that happens).
    #[arg(long)]
    pub yes: bool,
    /// With --yes: accept a tag that upstream moved to another commit
    /// since the lock was written (a rewrite; without this flag the lock
    /// is not written).
    #[arg(long)]
    pub accept_moved_tag: bool,
    /// Exit 1 and write nothing when the new content has anything a
    /// reviewer must see (hidden comments, invisible characters, encoded
    /// blobs, scripts); by default they are listed in the report.
    #[arg(long)]
    pub strict: bool,
    /// Print one JSON document (docs/json.md); the same as --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// How the report is printed: `markdown` is for the body of a pull
    /// request (docs/upstream.md) [default: text].
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<ReportFormat>,
}

impl UpdateArgs {
    /// Is the report JSON (`--json`, `--format json`)? Its errors are then.
    pub fn json(&self) -> bool {
        self.json || self.format == Some(ReportFormat::Json)
    }
}

/// How `update` prints its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// For the terminal.
    Text,
    /// One JSON document (docs/json.md).
    Json,
    /// GitHub Flavored Markdown, for a pull request's body: every name
    /// and text from upstream or a layer in a code span.
    Markdown,
}

const UPDATE_HELP: &str = "\
Fetches each source's ref again and, before anything is written, reports
which team and user overrides it touches: a value whose upstream value
changed underneath it (stale-value), a section directive whose heading
upstream no longer has (heading-gone), a section a layer replaces or
deletes whose text changed upstream (replaced-section-changed,
deleted-section-changed), a file a layer replaces that changed upstream
(replaced-file-changed), an override of a skill upstream removed
(skill-removed); then what changed upstream per skill (fields, sections,
files, execute bits; skills added or removed, and what the targets of
targets.toml would refuse of them), and what a reviewer must see of the
new content. It says which way each lock moves when not simply forward
(backwards, a rewritten history), how far the default branch has moved
past a source pinned to a commit, and a tag upstream moved to another
commit (written only with --accept-moved-tag). The lock is written only
with --yes, and then always matches sources.toml.

Examples:
  bernstein skills update                  # what would change
  bernstein skills update --yes            # accept it: write sources.lock
  bernstein skills update pdf-tables --to v2.0.0 --yes
  bernstein skills update --check          # CI: exit 1 when upstream moved
  bernstein skills update --yes --format markdown > body.md   # a pull request's body";

impl AddArgs {
    /// What the library's `add` is asked.
    fn options(&self) -> upstream::add::Options<'_> {
        upstream::add::Options {
            source: self.source.as_deref(),
            import: self.import.as_deref(),
            git_ref: self.git_ref.as_deref(),
            path: self.path.as_deref(),
            plugin: self.plugin.as_deref(),
            skills: &self.skills,
            name: self.name.as_deref(),
        }
    }
}

pub fn add(args: AddArgs, ctx: &Context) -> Result<ExitCode> {
    let layers = ctx.layers_without_sources()?;
    let paths = ctx.paths_to_add(&layers, args.global)?;
    let cache = ctx.require_cache()?;
    let wanted = upstream::add::wanted(&args.options(), ctx.env().cwd.as_deref())?;
    let adding = upstream::add::Transaction::begin(&paths, &cache)?;
    let spec = crate::global::load_spec(ctx)?;
    let plan = adding.plan(wanted, &ctx.policy(), &spec)?;
    // Listed one per line on stderr, as a warning or, under --strict, as
    // what the refusal that follows is about. JSON has no stderr report:
    // the refusal's message lists them.
    if !plan.findings.is_empty() && !args.json {
        warn_findings(&plan, args.strict);
    }
    plan.judge(args.strict, !args.json)?;
    let mut resolved = plan.resolve(&upstream::local_base(&layers)?)?;
    adding.write(&mut resolved)?;
    output::print(&if args.json {
        render::to_json(&added_json(&resolved, &paths))
    } else {
        added_text(&resolved, &paths)
    });
    Ok(ExitCode::SUCCESS)
}

/// Does the sources file `add` would write (`--global`: the person's own)
/// list a source of the repository `source` names already?
pub fn has_source(ctx: &Context, layers: &Layers, source: &str, global: bool) -> Result<bool> {
    let paths = ctx.paths_to_add(layers, global)?;
    upstream::add::has_source(&paths, source, &ctx.policy(), ctx.env().cwd.as_deref())
}

/// What a reviewer must see of `plan`'s sources, on stderr: a warning,
/// or (`strict`) what the refusal that follows is about.
fn warn_findings(plan: &upstream::add::Plan, strict: bool) {
    let heading = format!(
        "{} thing(s) a reviewer must see in {}:",
        plan.findings.len(),
        text::escape(&plan.urls())
    );
    let heading = if strict {
        heading
    } else {
        format!(
            "{}: {heading}",
            output::paint("warning", output::Style::Yellow, output::Stream::Err)
        )
    };
    output::warn(
        std::iter::once(heading).chain(
            upstream::render::findings_text(&plan.findings, "  ")
                .lines()
                .map(str::to_owned),
        ),
    );
}

/// What `add` wrote, as data (docs/json.md).
fn added_json(resolved: &upstream::add::Resolved, paths: &Paths) -> serde_json::Value {
    let found = &resolved.plan.found;
    json!({
        "added": resolved.added().map(|(spec, entry)| json!({
            "source": spec.name,
            "url": redacted(&spec.url),
            "ref": spec.git_ref,
            "path": spec.path,
            "plugin": spec.plugin,
            "commit": entry.commit,
            "skills": entry.skills_taken(),
            "files": entry.files.len(),
            "found": found.get(&spec.name).map(found_json),
        })).collect::<Vec<_>>(),
        "sources_file": paths.sources.display().to_string(),
        "lock": paths.lock.display().to_string(),
        "review": resolved.plan.findings,
    })
}

/// What `add` wrote, for people.
fn added_text(resolved: &upstream::add::Resolved, paths: &Paths) -> String {
    let mut out = String::new();
    for (spec, entry) in resolved.added() {
        let skills = entry.skills_taken();
        out.push_str(&format!(
            "added {} ({}{}) at {}: {} skill(s), {} file(s): {}\n",
            text::escape(&spec.name),
            Shown(&spec.url),
            spec.git_ref
                .as_deref()
                .map(|r| format!(" {}", text::escape(r)))
                .unwrap_or_default(),
            entry.commit,
            skills.len(),
            entry.files.len(),
            text::list(skills.iter().copied(), false),
        ));
        if let Some(p) = &spec.plugin {
            out.push_str(&format!(
                "  the skills plugin {} declares in {}, recorded as plugin = \"{}\": update follows what it declares\n",
                text::escape(p),
                upstream::marketplace::FILE,
                text::escape(p),
            ));
        }
        if let Some(f) = resolved.plan.found.get(&spec.name) {
            out.push_str(&found_text(f));
        }
    }
    out.push_str(&format!(
        "wrote {} and {}\n",
        text::path(&paths.sources),
        text::path(&paths.lock),
    ));
    out
}

/// What `add` found of a collection it was not told where to look in,
/// for people: where the skills were taken from, what else holds skills,
/// the plugins the repository declares.
fn found_text(f: &git::Found) -> String {
    let mut out = String::new();
    match &f.path {
        Some(p) => out.push_str(&format!(
            "  taken from {}/, where the collection keeps its skills (recorded as path = \"{}\")\n",
            text::escape(p),
            text::escape(p)
        )),
        None if !f.not_taken.is_empty() => out.push_str("  taken from the top of the repository\n"),
        None => {}
    }
    for (dir, skills) in &f.not_taken {
        let at = if dir == "." {
            "at the top".to_owned()
        } else {
            format!("in {dir}/")
        };
        out.push_str(&format!(
            "  not taken: {} {at} (a source of its own: --path {dir})\n",
            text::list(skills.iter().map(String::as_str), false),
        ));
    }
    if !f.plugins.is_empty() {
        let plugins: Vec<String> = f
            .plugins
            .iter()
            .map(|(name, skills)| match skills {
                Ok(s) => format!(
                    "{} ({})",
                    text::escape(name),
                    text::list(s.iter().map(String::as_str), false)
                ),
                Err(_) => format!("{} (cannot be taken)", text::escape(name)),
            })
            .collect();
        out.push_str(&format!(
            "  plugins declared in {}: {}; take one's skills with --plugin NAME\n",
            upstream::marketplace::FILE,
            text::list(plugins.iter().map(String::as_str), false)
        ));
    }
    if let Some(why) = &f.marketplace {
        out.push_str(&format!("  {why}; its plugins are not offered\n"));
    }
    out
}

/// [`found_text`] as data (docs/json.md).
fn found_json(f: &git::Found) -> serde_json::Value {
    json!({
        "not_taken": f.not_taken.iter().map(|(dir, skills)| json!({
            "path": dir,
            "skills": skills,
        })).collect::<Vec<_>>(),
        "plugins": f.plugins.iter().map(|(name, skills)| json!({
            "plugin": name,
            "skills": skills.as_ref().ok(),
            "error": skills.as_ref().err(),
        })).collect::<Vec<_>>(),
        "marketplace_error": f.marketplace,
    })
}

pub fn verify(args: VerifyArgs, ctx: &Context) -> Result<ExitCode> {
    let verified = ctx.verify_sources()?;
    if args.json {
        output::print(&render::to_json(&output::value(&verified)));
    } else {
        print_verified(&verified);
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints what `verify` found: a line per source, then the lock they
/// match (or that there are no sources).
pub fn print_verified(verified: &upstream::verify::Verification) {
    let paths = &verified.paths;
    if !verified.has_sources {
        output::print(&format!(
            "no sources: {} does not exist\n",
            text::path(&paths.sources)
        ));
        return;
    }
    let mut out = String::new();
    for r in &verified.sources {
        out.push_str(&format!(
            "{}: {} skill(s), {} file(s) at {}: {}\n",
            text::escape(&r.source),
            r.locked.skills_taken().len(),
            r.locked.files.len(),
            r.locked.commit,
            if r.fetched {
                "fetched and verified"
            } else {
                "verified"
            }
        ));
    }
    out.push_str(&format!(
        "{} source(s) match {}\n",
        verified.sources.len(),
        text::path(&paths.lock)
    ));
    output::print(&out);
}

pub fn update(args: UpdateArgs, ctx: &Context) -> Result<ExitCode> {
    let layers = ctx.layers_without_sources()?;
    let spec = crate::global::load_spec(ctx)?;
    let paths = Paths::of(&layers);
    let cache = ctx.require_cache()?;
    let options = upstream::update::Options {
        skills: &args.skills,
        to: args.to.as_deref(),
    };
    // What comes in is judged against the targets the project exports to.
    let targets = ctx.project_target_rules(&spec, &layers)?;
    let project = upstream::report::Project {
        spec: &spec,
        layers: &layers,
        targets: &targets,
    };
    let mut plan = upstream::update::plan(
        &project,
        &paths,
        &cache,
        &ctx.policy(),
        &upstream::local_base(&layers)?,
        &options,
    )?;
    let consent = upstream::update::Consent {
        yes: args.yes,
        accept_moved_tag: args.accept_moved_tag,
        strict: args.strict,
        check: args.check,
    };
    let decision = upstream::update::conclude(&mut plan, consent, &paths, &cache)?;
    let report = &plan.report;
    let accept = (!args.check).then(|| accept_command(&args, decision.tag_moved));
    let format = match args.format {
        Some(f) => f,
        None if args.json => ReportFormat::Json,
        None => ReportFormat::Text,
    };
    output::print(&match format {
        ReportFormat::Json => render::to_json(&report.to_value()),
        ReportFormat::Text => upstream::render::text(report, accept.as_deref()),
        ReportFormat::Markdown => upstream::render::markdown(report, accept.as_deref()),
    });
    Ok(if decision.fails {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The command that accepts the update this one reported.
fn accept_command(args: &UpdateArgs, retagged: bool) -> String {
    let mut cmd = String::from("bernstein skills update");
    for s in &args.skills {
        cmd.push(' ');
        cmd.push_str(&text::escape(s));
    }
    if let Some(t) = &args.to {
        cmd.push_str(&format!(" --to {}", text::escape(t)));
    }
    cmd.push_str(" --yes");
    if retagged || args.accept_moved_tag {
        cmd.push_str(" --accept-moved-tag");
    }
    cmd
}
