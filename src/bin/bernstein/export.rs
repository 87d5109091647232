//! `bernstein skills export (--out DIR [--prune] [--adopt NAME]... [--adopt-all]
//! [--force] [--keep-going] | --check DIR) [--format json|skill]`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use bernstein_skills::export::{
    Conflict, ConflictKind, DirCheck, Drift, EntryKind, ExportOptions, Exported, Format,
    SkillDrift, skill_place,
};
use bernstein_skills::source::trust::TrustStore;
use bernstein_skills::{Error, ErrorKind, Result, output::render, par, text};

use crate::output;
use bernstein_skills::Context;

#[derive(Debug, Default, Args)]
#[command(after_help = AFTER_HELP)]
pub struct ExportArgs {
    /// Write every skill into DIR, per --format: `json` writes
    /// DIR/<name>.json; `skill` writes the directory DIR/<name>/ (its
    /// SKILL.md and files); with --target, the target's format decides.
    /// Atomically; unchanged files are left alone. Export records what it
    /// wrote in DIR/.bernstein-skills.json and touches nothing else.
    #[arg(long, value_name = "DIR", conflicts_with = "check")]
    pub out: Option<PathBuf>,
    /// When writing (--out or --target): remove the output of skills export wrote that no layer
    /// provides any more (never anything export did not write).
    #[arg(long, conflicts_with = "check")]
    pub prune: bool,
    /// When writing (--out or --target): take over NAME's existing output, which export did not
    /// write or which was changed by hand; it is overwritten (files export
    /// does not write are kept). For a skill no layer provides that the
    /// record lists, confirm the record's claim, so that --prune removes
    /// it. Repeatable.
    #[arg(long, value_name = "NAME", conflicts_with = "check")]
    pub adopt: Vec<String>,
    /// When writing (--out or --target): take over the existing output of every skill a layer
    /// provides that export did not write (a directory from an older
    /// version, which has no record yet).
    #[arg(long, conflicts_with = "check")]
    pub adopt_all: bool,
    /// When writing (--out or --target): overwrite (or, with --prune, remove) files export wrote
    /// that were changed by hand since.
    #[arg(long, conflicts_with = "check")]
    pub force: bool,
    /// When writing (--out or --target): write the skills that can be written when others fail or
    /// are refused, and name those (exit 1). Without it, nothing is written
    /// if any skill fails.
    #[arg(long, conflicts_with = "check")]
    pub keep_going: bool,
    /// Write nothing; exit 1 listing every skill whose output in DIR differs
    /// from what --out would write, and everything in DIR export would not
    /// touch without a flag.
    #[arg(long, value_name = "DIR")]
    pub check: Option<PathBuf>,
    /// Worker threads [default: one per core].
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,
    /// What to write per skill: `json` (DIR/<name>.json, the `show` JSON)
    /// or `skill` (DIR/<name>/SKILL.md and the skill's files, an Agent
    /// Skills directory any agent loads).
    #[arg(
        long,
        default_value = "json",
        conflicts_with = "targets",
        value_parser = format_parser()
    )]
    pub format: Format,
    /// Export for a consumer (see `bernstein skills targets`): in its
    /// format, with its fields, renderings and translations, only the
    /// skills that pass its rules and are not switched off for it, into its
    /// directory for --scope unless --out gives one. Repeatable (each
    /// target to its own place, a directory several read written once for
    /// all of them; --out then takes one target). Without --target, --out
    /// or --check: the project's targets (.bernstein/targets.toml).
    #[arg(long = "target", value_name = "TARGET")]
    pub targets: Vec<String>,
    /// With --target (or the project's targets) and no --out: the target's
    /// place for the person (`user`, e.g. ~/.claude/skills: the base, team
    /// and user layers) or for the project (`project`, e.g. .claude/skills
    /// in the git work tree's root: the base and team layers only, as for
    /// any directory inside the work tree, which the team commits; the
    /// user layer is yours alone).
    #[arg(long, value_enum, default_value = "user")]
    pub scope: Scope,
    /// Print one JSON document (docs/json.md): with --out, `{"exports":
    /// [...]}`, what each export wrote, left alone, removed, refused and
    /// kept; with --check, `{"checks": [...]}`, each drift. Problems go
    /// into it rather than to stderr; the exit code is the same.
    #[arg(long)]
    pub json: bool,
    /// When writing: write nothing if validate's checks give any error or
    /// warning (a stale directive, an override with no effect, a skill no
    /// lower layer defines, ...), made on each skill as it is resolved to
    /// be written.
    #[arg(long, conflicts_with = "check")]
    pub strict: bool,
    /// With --check: also report what the directory holds that no layer
    /// provides and no record lists (what `audit` counts).
    #[arg(skip)]
    pub extra: bool,
    /// Also say validate's warnings about the skills already up to date
    /// (`sync`, which stands for validate and export at once).
    #[arg(skip)]
    pub warnings_unchanged: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    #[default]
    User,
    Project,
}

impl From<Scope> for bernstein_skills::context::Scope {
    fn from(s: Scope) -> Self {
        match s {
            Scope::User => bernstein_skills::context::Scope::User,
            Scope::Project => bernstein_skills::context::Scope::Project,
        }
    }
}

const AFTER_HELP: &str = "\
What export owns:
  Export lists every file it writes in DIR/.bernstein-skills.json and creates,
  updates and removes only those. A skill's output that exists but is not
  listed (your own skill of the same name, an older version's export) is
  refused until --adopt NAME or --adopt-all; a listed file changed by hand is
  refused with a short diff until --force; a file you add inside a skill
  directory export wrote is kept and reported, never deleted. Skills that no
  layer provides and export did not write are never touched, --prune included.
  The record's claims count only where a ledger export keeps on this machine
  ($XDG_STATE_HOME/bernstein/skills/exports/) or the files' content confirm
  them: a committed record cannot claim your own files.

Examples:
  bernstein skills export --out manifests/
  bernstein skills export --out manifests/ --prune
  bernstein skills export --check manifests/   # in CI: exit 1 if any differ
  bernstein skills export --format skill --out ~/.claude/skills
  bernstein skills export --format skill --out ~/.claude/skills --adopt-all   # an older export";

/// `--format`: the library's own labels, listed in help and completions.
fn format_parser() -> impl clap::builder::TypedValueParser<Value = Format> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Format::ALL.map(Format::label))
        .map(|label| Format::from_label(&label).expect("a value clap accepted"))
}

/// What the flags say of an export, for `target` if one is given (whose
/// format then decides).
fn options<'a>(
    args: &ExportArgs,
    target: Option<&'a bernstein_skills::target::Target>,
    trust: &'a TrustStore,
    state_dir: Option<&'a Path>,
    in_repository: bool,
) -> ExportOptions<'a> {
    ExportOptions {
        in_repository,
        extra: args.extra,
        state_dir,
        prune: args.prune,
        adopt: args.adopt.clone(),
        adopt_all: args.adopt_all,
        force: args.force,
        keep_going: args.keep_going,
        jobs: args.jobs.unwrap_or_else(par::default_jobs),
        on_wait: Some(&waiting),
        boundary: None,
        target,
        trust: Some(trust),
        // Printed with the text report, or in the JSON document.
        warnings: true,
        warnings_unchanged: args.warnings_unchanged,
        strict: args.strict,
        ..ExportOptions::default()
    }
}

/// Says on stderr that another export holds the directory.
pub fn waiting(dir: &Path) {
    output::warn([format!(
        "waiting for another export into {} to finish",
        text::path(dir)
    )]);
}

pub fn run(mut args: ExportArgs, ctx: &Context) -> Result<ExitCode> {
    if args.targets.is_empty() && args.out.is_none() && args.check.is_none() {
        if args.format != Format::Json {
            return Err(Error::Refused {
                kind: ErrorKind::InvalidInput,
                path: None,
                message: "--format says what --out DIR (or --check DIR) holds: give the directory"
                    .into(),
            });
        }
        // No directory and no target: the project's targets, the team's
        // decision; without them, which agents this machine has, and the
        // command that exports to them, rather than a guess.
        args.targets = project_targets(ctx)?;
    }
    let skills = &crate::global::skills(ctx)?;
    let trust = ctx.trust_store();
    if !args.targets.is_empty() {
        return run_targets(args, ctx, skills, &trust);
    }
    let state_dir = ctx.state_dir();
    let dir = args
        .check
        .as_ref()
        .or(args.out.as_ref())
        .expect("targets, --out or --check");
    let (skills, in_repository) = &for_dir(ctx, skills, dir);
    let options = ExportOptions {
        format: args.format,
        ..options(&args, None, &trust, state_dir.as_deref(), *in_repository)
    };
    let (code, doc) = one(&args, &options, skills)?;
    if args.json {
        print_json(&args, skills, vec![doc]);
    }
    Ok(code)
}

/// The targets of the project (`.bernstein/targets.toml`), for an export
/// given no target and no directory; without them, the error that names
/// the agents installed on this machine and how to export to them.
fn project_targets(ctx: &Context) -> Result<Vec<String>> {
    let layers = ctx.layers_without_sources()?;
    if let Some((_, names)) = ctx.project_targets(&layers)?
        && !names.is_empty()
    {
        return Ok(names);
    }
    let spec = crate::global::load_spec(ctx)?;
    Err(Error::Refused {
        kind: ErrorKind::NoPlace,
        path: None,
        message: format!(
            "export needs a place: --out DIR (or --check DIR), --target NAME, or a project \
             whose {} names its targets. {}",
            text::path(&ctx.paths(&layers).targets),
            crate::targets::installed_advice(ctx, &spec, "bernstein skills export")
        ),
    })
}

/// The skills an export into `dir` takes, and whether `dir` is one the
/// project commits: there, the base and team layers only (the user layer
/// is one person's), and the directory's record is the repository's own.
fn for_dir(
    ctx: &Context,
    skills: &bernstein_skills::Skills,
    dir: &Path,
) -> (bernstein_skills::Skills, bool) {
    ctx.for_export(skills, dir)
}

/// One export (or check) with `options`: its exit code and, for --json,
/// its document (printed by the caller; the text is printed here).
fn one(
    args: &ExportArgs,
    options: &ExportOptions,
    skills: &bernstein_skills::Skills,
) -> Result<(ExitCode, Value)> {
    let places = places_once(skills.layers().dirs());
    match (&args.check, &args.out) {
        (Some(dir), _) => report_drift(skills, dir, options, args.json, &places),
        (None, Some(dir)) => {
            let (code, mut doc) = export(skills, dir, options, args.json, &places)?;
            if let Some(doc) = doc.as_object_mut() {
                doc.insert("layers".into(), layers_taken(skills.layers()));
            }
            Ok((code, doc))
        }
        (None, None) => unreachable!("clap requires --out, --check or --target"),
    }
}

/// The lines naming every layer place that takes part (`dirs`), to print
/// with a result: once, and again when another export takes other layers.
pub fn places_once(dirs: &[bernstein_skills::source::LayerDir]) -> String {
    let now: String = dirs.iter().map(|d| d.describe() + "\n").collect();
    let mut shown = PLACES_SHOWN.lock().unwrap_or_else(|e| e.into_inner());
    if shown.as_deref() == Some(now.as_str()) {
        String::new()
    } else {
        *shown = Some(now.clone());
        now
    }
}

/// The layers an export takes, base first (`["base", "team"]` into a
/// directory the project commits).
fn layers_taken(layers: &bernstein_skills::Layers) -> Value {
    let taken: std::collections::BTreeSet<bernstein_skills::Layer> = layers
        .dirs()
        .iter()
        .filter(|d| d.left_out.is_none())
        .map(|d| d.layer)
        .collect();
    json!(taken)
}

/// The layer places printed last (by the first of several exports, or
/// the last that took other layers).
static PLACES_SHOWN: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Prints the JSON documents of the exports (or checks) run, with the
/// layer places that took part.
fn print_json(args: &ExportArgs, skills: &bernstein_skills::Skills, docs: Vec<Value>) {
    let key = if args.check.is_some() {
        "checks"
    } else {
        "exports"
    };
    let mut doc = json!({
        "places": crate::global::places_json(skills.layers()),
        key: docs,
    });
    if args.check.is_none() {
        let warned = &mut WARNED.lock().unwrap_or_else(|e| e.into_inner()).1;
        doc["warnings"] = Value::Array(std::mem::take(warned));
    }
    output::print(&render::to_json(&doc));
}

/// The warnings said so far in this run, and under --json those kept for
/// the document: each once, however many exports give it (every target's
/// export judges the same skills).
static WARNED: std::sync::Mutex<(std::collections::BTreeSet<String>, Vec<Value>)> =
    std::sync::Mutex::new((std::collections::BTreeSet::new(), Vec::new()));

/// Says the warnings of an export not said before in this run: on stderr,
/// or kept for the JSON document.
fn say_once(diagnostics: &[bernstein_skills::error::Diagnostic], json: bool) {
    let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
    let (seen, kept) = &mut *warned;
    let fresh: Vec<_> = diagnostics
        .iter()
        .filter(|d| seen.insert(d.to_string()))
        .cloned()
        .collect();
    if json {
        kept.extend(fresh.iter().map(|d| d.to_json()));
    } else {
        output::warn_diagnostics(&fresh);
    }
}

/// The other targets a directory is written for ([`Target::sharing`]).
///
/// [`Target::sharing`]: bernstein_skills::target::Target::sharing
fn shared_with<'a>(options: &'a ExportOptions) -> &'a [String] {
    options.target.map(|t| t.shared_with()).unwrap_or_default()
}

/// ` (NAME)`, or ` (A, B and C; one directory for all)` for a directory
/// several targets read, or nothing without a target.
fn targets_shown(options: &ExportOptions) -> String {
    let target = options.target.map(|t| t.name.as_str());
    targets_named(target, shared_with(options))
}

/// [`targets_shown`] of a `target` and the others it is `shared_with`.
fn targets_named(target: Option<&str>, shared_with: &[String]) -> String {
    match target {
        None => String::new(),
        Some(t) if shared_with.is_empty() => format!(" ({})", text::escape(t)),
        Some(t) => format!(
            " ({}; one directory for all)",
            text::list(
                std::iter::once(t).chain(shared_with.iter().map(String::as_str)),
                false
            )
        ),
    }
}

/// What is written per skill, in words: `json`, `skill`, or the target's.
fn format_name(options: &ExportOptions) -> &'static str {
    match options.effective_format() {
        Format::Json => "json",
        Format::Skill => "skill",
    }
}

/// `export --target T...`: each target in turn, into `--out`, `--check` or
/// its place for `--scope`. Exit 1 if any failed.
fn run_targets(
    args: ExportArgs,
    ctx: &Context,
    skills: &bernstein_skills::Skills,
    trust: &TrustStore,
) -> Result<ExitCode> {
    let mut targets = ctx.targets(skills.spec(), &args.targets)?;
    if args.out.is_none() && args.check.is_none() {
        // A target with no place for the scope (an agent that reads only
        // a project's skills) is left out, said, when others have one.
        let scope: bernstein_skills::context::Scope = args.scope.into();
        let has_place = |t: &bernstein_skills::target::Target| match scope {
            bernstein_skills::context::Scope::User => t.user_place.is_some(),
            bernstein_skills::context::Scope::Project => t.project_place.is_some(),
        };
        if targets.iter().any(has_place) {
            let (with, without): (Vec<_>, Vec<_>) = targets.into_iter().partition(has_place);
            output::warn(without.iter().map(|t| {
                format!(
                    "note: target '{}' names no {} place; nothing is exported for it",
                    text::escape(&t.name),
                    scope.label()
                )
            }));
            targets = with;
        }
    }
    // Each directory once: given, or each target's place, written once
    // for every target reading it (refused, before anything is written,
    // when two of them would write it differently).
    let places: Vec<(PathBuf, bernstein_skills::target::Target)> = match (&args.check, &args.out) {
        (Some(d), _) | (None, Some(d)) => vec![(d.clone(), one_directory(&targets)?)],
        (None, None) => ctx
            .target_places(&targets, args.scope.into())?
            .into_iter()
            .map(|p| {
                let t = p.target();
                // A project's directory as the person reaches it from
                // where they stand; their own (`~/.claude/skills`) whole.
                let dir = match args.scope {
                    Scope::Project => ctx.shown(&p.dir),
                    Scope::User => p.dir,
                };
                (dir, t)
            })
            .collect(),
    };
    let mut code = ExitCode::SUCCESS;
    let mut docs = Vec::new();
    let state_dir = ctx.state_dir();
    for (dir, target) in &places {
        let (skills, in_repository) = &for_dir(ctx, skills, dir);
        let options = options(
            &args,
            Some(target),
            trust,
            state_dir.as_deref(),
            *in_repository,
        );
        let per = ExportArgs {
            out: args.check.is_none().then(|| dir.clone()),
            check: args.check.as_ref().map(|_| dir.clone()),
            targets: Vec::new(),
            adopt: args.adopt.clone(),
            ..args.clone_flags()
        };
        let (one_code, doc) = one(&per, &options, skills)?;
        if one_code != ExitCode::SUCCESS {
            code = ExitCode::from(1);
        }
        docs.push(doc);
    }
    if args.json {
        print_json(&args, skills, docs);
    }
    Ok(code)
}

/// The target an export into one named directory (`--out`, `--check`) is
/// for: the first of `targets`, sharing it with the others, which must
/// write a skill as it does.
fn one_directory(
    targets: &[bernstein_skills::target::Target],
) -> Result<bernstein_skills::target::Target> {
    let first = &targets[0];
    let mut others: Vec<String> = Vec::new();
    for t in &targets[1..] {
        if t.renders_as != first.renders_as {
            return Err(Error::Refused {
                kind: ErrorKind::Conflict,
                path: None,
                message: format!(
                    "--out and --check name one directory, and {} and {} write a skill \
                     differently: give one --target with them, or leave them out to export each \
                     target to its own place",
                    text::escape(&first.name),
                    text::escape(&t.name)
                ),
            });
        }
        if t.name != first.name && !others.contains(&t.name) {
            others.push(t.name.clone());
        }
    }
    Ok(first.sharing(&others))
}

impl ExportArgs {
    /// The flags without the directories and targets.
    fn clone_flags(&self) -> ExportArgs {
        ExportArgs {
            out: None,
            prune: self.prune,
            adopt: Vec::new(),
            adopt_all: self.adopt_all,
            force: self.force,
            keep_going: self.keep_going,
            check: None,
            jobs: self.jobs,
            format: self.format,
            targets: Vec::new(),
            scope: self.scope,
            json: self.json,
            strict: self.strict,
            extra: self.extra,
            warnings_unchanged: self.warnings_unchanged,
        }
    }
}

/// ` --target NAME`, ` --format skill`, or nothing for the default: what
/// a check of a directory written for `target` in `format` advises.
fn format_flag(target: Option<&str>, format: Format) -> String {
    match (target, format) {
        (Some(t), _) => format!(" --target {}", text::escape(t)),
        (None, Format::Json) => String::new(),
        (None, Format::Skill) => " --format skill".into(),
    }
}

/// A skill's place as a drift names it, escaped: a skill directory ends
/// in `/`.
fn place_shown(dir: &Path, format: Format, name: &str) -> String {
    let path = text::path(&skill_place(dir, format, name));
    match format {
        Format::Json => path,
        Format::Skill => format!("{path}/"),
    }
}

/// A path as JSON shows it: unescaped.
fn path_json(path: &Path) -> String {
    path.display().to_string()
}

/// Whether an entry of kind `what` is what export writes in `format` (a
/// directory for `skill`, a file for `json`), so that only its record is
/// missing, not its kind.
fn is_own_kind(format: Format, what: EntryKind) -> bool {
    matches!(
        (format, what),
        (Format::Skill, EntryKind::Dir) | (Format::Json, EntryKind::File)
    )
}

/// A diff's lines as printed, indented below the line they belong to.
fn diff_lines(lines: &[String]) -> impl Iterator<Item = String> + '_ {
    lines.iter().map(|l| format!("    {l}"))
}

/// What a drift list holds, counted once for the lines below it.
#[derive(Default)]
struct DriftTally {
    /// Skills an export fixes (with the flags their lines name).
    out_of_date: usize,
    /// Skills whose directory holds files only a person can remove.
    hand_added: usize,
    /// Skills deployed that no layer provides.
    extras: usize,
    /// Whether any output is unmanaged, hand-edited, unconfirmed or extra:
    /// each kind present gets its note.
    unmanaged: bool,
    hand_edited: bool,
    unconfirmed: bool,
    extra: bool,
}

impl DriftTally {
    /// Counts `drift`, which comes sorted by name with a skill's kinds
    /// together: per skill, one an export fixes, one holding files only a
    /// person can remove, or one no layer provides.
    fn of(drift: &[SkillDrift]) -> Self {
        let mut tally = Self::default();
        let hand = |d: &SkillDrift| matches!(d.drift, Drift::HandAdded(_));
        for kinds in drift.chunk_by(|a, b| a.skill == b.skill) {
            if kinds.iter().any(|d| matches!(d.drift, Drift::Extra(_))) {
                tally.extras += 1;
                continue;
            }
            if !kinds.iter().all(hand) {
                tally.out_of_date += 1;
            }
            if kinds.iter().any(hand) {
                tally.hand_added += 1;
            }
        }
        for d in drift {
            match d.drift {
                Drift::Unmanaged(_) => tally.unmanaged = true,
                Drift::HandEdited(_) => tally.hand_edited = true,
                Drift::Unconfirmed(_) => tally.unconfirmed = true,
                Drift::Extra(_) => tally.extra = true,
                Drift::Added | Drift::Removed | Drift::Changed(_) | Drift::HandAdded(_) => {}
            }
        }
        tally
    }
}

/// Appends one drift's line to `out`, and the lines of its diff indented
/// below it.
fn drift_entry(out: &mut String, dir: &Path, format: Format, d: &SkillDrift) {
    let place = text::escape(&d.file);
    let name = text::escape(&d.skill);
    let (line, lines): (String, &[String]) = match &d.drift {
        Drift::Added => (format!("added: {name} (no {place})"), &[]),
        Drift::Removed => (format!("removed: {name} ({place} has no skill)"), &[]),
        Drift::Unmanaged(what) => (
            format!(
                "unmanaged: {name} ({})",
                // The raw name: the path it makes is escaped once, there.
                unmanaged_words(dir, &d.skill, format, *what)
            ),
            &[],
        ),
        Drift::Changed(lines) => (format!("changed: {name} ({place})"), lines),
        Drift::HandEdited(lines) => (format!("hand-edited: {name} ({place})"), lines),
        Drift::HandAdded(lines) => (format!("hand-added: {name} ({place})"), lines),
        Drift::Unconfirmed(lines) => (format!("unconfirmed: {name} ({place})"), lines),
        Drift::Extra(what) => (
            format!(
                "extra: {name} ({place} is {}; no layer provides it and export did not write it)",
                what.words()
            ),
            &[],
        ),
    };
    for l in std::iter::once(line).chain(diff_lines(lines)) {
        out.push_str(&l);
        out.push('\n');
    }
}

/// Appends to `out` how many skills drifted and what fixes them: the
/// command alone fixes what needs no flag; the rest needs the flag its
/// line names, which is the person's decision.
fn drift_totals(out: &mut String, tally: &DriftTally, check: &DirCheck) {
    if tally.out_of_date > 0 {
        let with = if tally.unmanaged || tally.hand_edited || tally.unconfirmed {
            " with the flag each line below names"
        } else {
            ""
        };
        out.push_str(&format!(
            "{} manifest(s) out of date; run `bernstein skills export{} --out {} --prune`{with}\n",
            tally.out_of_date,
            format_flag(check.target.as_deref(), check.format),
            text::path(&check.dir)
        ));
    } else if tally.hand_added > 0 {
        out.push_str(&match tally.hand_added {
            1 => "1 skill directory holds files export did not write\n".to_owned(),
            n => format!("{n} skill directories hold files export did not write\n"),
        });
    }
    if tally.extras > 0 {
        out.push_str(&format!(
            "{} skill(s) deployed that no layer provides\n",
            tally.extras
        ));
    }
}

/// Appends to `out` one note per kind of drift present, saying what the
/// kind means and which flag (or person) deals with it.
fn drift_notes(out: &mut String, tally: &DriftTally) {
    if tally.unmanaged {
        out.push_str(
            "  unmanaged: export did not write these; take one over with --adopt NAME, \
             or all with --adopt-all\n",
        );
    }
    if tally.hand_edited {
        out.push_str("  hand-edited: export refuses to overwrite these without --force\n");
    }
    if tally.unconfirmed {
        out.push_str(
            "  unconfirmed: the record claims these files, but no export on this machine \
             wrote them, so an export here leaves them alone; take one over with \
             --adopt NAME (an export where they were written needs no flag)\n",
        );
    }
    if tally.extra {
        out.push_str(
            "  extra: deployed, but not from the lock or the layers; export never removes \
             what it did not write: remove it, or make it a skill of the team layer\n",
        );
    }
    if tally.hand_added > 0 {
        // Export never deletes a file it did not write, so no command
        // makes this pass: the person removes them (a file planted in a
        // skill's directory keeps CI red until someone does).
        out.push_str(
            "  hand-added: export did not write these files and never deletes them; \
             remove them by hand for this check to pass\n",
        );
    }
}

/// `export --check DIR`: what differs between DIR and what export would
/// write, as JSON or as one line per drift followed by the totals and a
/// note per kind; exit 1 when anything differs.
fn report_drift(
    skills: &bernstein_skills::Skills,
    dir: &Path,
    options: &ExportOptions,
    json: bool,
    places: &str,
) -> Result<(ExitCode, Value)> {
    let check = skills.check_export(dir, options)?;
    let code = if check.up_to_date {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    if json {
        return Ok((code, output::value(&check)));
    }
    print_check(&check, places);
    Ok((code, Value::Null))
}

/// Prints what a check found, after the layer places (`places`, when
/// they are to be named): one line per drift followed by the totals and a
/// note per kind, or that all is up to date.
pub fn print_check(check: &DirCheck, places: &str) {
    let dir = &check.dir;
    if check.up_to_date {
        output::print(&format!(
            "{places}{}{}: all manifests up to date\n",
            text::path(dir),
            if check.shared_with.is_empty() {
                String::new()
            } else {
                targets_named(check.target.as_deref(), &check.shared_with)
            }
        ));
        return;
    }
    let mut out = places.to_owned();
    for d in &check.drift {
        // Printed as it goes: a directory with 500,000 stale entries is
        // never held as one text.
        if out.len() >= 64 * 1024 {
            output::print(&out);
            out.clear();
        }
        drift_entry(&mut out, dir, check.format, d);
    }
    let tally = DriftTally::of(&check.drift);
    drift_totals(&mut out, &tally, check);
    drift_notes(&mut out, &tally);
    output::print(&out);
}

/// What is at an unmanaged skill's place, in words.
fn unmanaged_words(dir: &Path, name: &str, format: Format, what: EntryKind) -> String {
    if is_own_kind(format, what) {
        let place = place_shown(dir, format, name);
        format!("{place} exists, but export did not write it")
    } else {
        let path = text::path(&skill_place(dir, format, name));
        format!("{path} is {what}, which export did not write")
    }
}

/// A skill export refused or left alone, as JSON: `{"skill", "reason",
/// "file", "what", "diff"}`.
fn conflict_json(c: &Conflict) -> Value {
    let (reason, what) = match c.kind {
        ConflictKind::Unmanaged(what) => ("unmanaged", Some(what.words())),
        ConflictKind::HandEdited => ("hand-edited", None),
        ConflictKind::Unconfirmed(what) => ("unconfirmed", Some(what.words())),
    };
    json!({
        "skill": c.name,
        "reason": reason,
        "file": path_json(&c.path),
        "what": what,
        "diff": c.lines,
    })
}

/// Whether an export wrote everything it was asked to: no skill failed and
/// none was refused.
fn exported_ok(report: &Exported) -> bool {
    report.failed.is_empty() && report.refused.is_empty()
}

/// What an export did, as JSON (docs/json.md).
fn export_json(dir: &Path, options: &ExportOptions, report: &Exported) -> Value {
    let ok = exported_ok(report);
    json!({
        "dir": path_json(dir),
        "format": format_name(options),
        "target": options.target.map(|t| &t.name),
        "shared_with": shared_with(options),
        "ok": ok,
        "written": report.written,
        "unchanged": report.unchanged,
        "removed": report.removed,
        "not_written": report.not_written,
        "failed": report
            .failed
            .iter()
            .map(|e| output::error_json(e)["error"].take())
            .collect::<Vec<_>>(),
        "refused": report.refused.iter().map(conflict_json).collect::<Vec<_>>(),
        "unconfirmed": report.unconfirmed.iter().map(conflict_json).collect::<Vec<_>>(),
        "kept": report.kept.iter().map(|p| path_json(p)).collect::<Vec<_>>(),
        "kept_more": report.kept_more,
        "created_dir": report.new_dir && ok,
        "stale_removed": report.stale_removed.iter().map(|p| path_json(p)).collect::<Vec<_>>(),
    })
}

/// The `error:` lines for the skills export refused to write, each saying
/// which flag takes the output over, with its diff below.
fn refusals(refused: &[Conflict], format: Format, record: &str) -> Vec<String> {
    let mut errors = Vec::new();
    for c in refused {
        let name = text::escape(&c.name);
        let path = text::path(&c.path);
        match &c.kind {
            ConflictKind::Unmanaged(what) => {
                let place = if is_own_kind(format, *what) {
                    format!("{path}: exists")
                } else {
                    format!("{}: is {what}", path.trim_end_matches('/'))
                };
                errors.push(format!(
                    "error: {place}, but export did not write it (no entry in {record}); \
                     take it over with --adopt {name} (or --adopt-all)"
                ));
            }
            ConflictKind::HandEdited => {
                errors.push(format!(
                    "error: {path}: changed by hand since the last export; \
                     overwrite with --force (or --adopt {name})"
                ));
                errors.extend(diff_lines(&c.lines));
            }
            ConflictKind::Unconfirmed(_) => {
                errors.push(format!(
                    "error: {path}: {record} claims it, but no export on this machine wrote it; \
                     take it over with --adopt {name} (or --adopt-all)"
                ));
                errors.extend(diff_lines(&c.lines));
            }
        }
    }
    errors
}

/// Warns of what export left alone in the directory: outputs the record
/// claims that no export on this machine wrote, and files export did not
/// write.
fn warn_left_alone(report: &Exported, record: &str) {
    output::warn(report.unconfirmed.iter().flat_map(|c| {
        let name = text::escape(&c.name);
        std::iter::once(format!(
            "warning: {}: {record} claims {name}, but no export on this machine wrote it; \
             left alone (remove it by hand, or add --adopt {name} to remove it)",
            text::path(&c.path)
        ))
        .chain(diff_lines(&c.lines))
    }));
    output::warn(
        report
            .kept
            .iter()
            .map(|p| format!("warning: {}: not written by export; kept", text::path(p))),
    );
    if report.kept_more > 0 {
        output::warn([format!(
            "warning: and {} more file(s) not written by export, kept",
            report.kept_more
        )]);
    }
}

/// Prints the skills that failed: the located diagnostics together as one
/// error, each other error on its own.
fn print_failures(failed: &[Error]) {
    let diags: Vec<_> = failed
        .iter()
        .flat_map(|e| e.diagnostics().to_vec())
        .collect();
    for e in failed.iter().filter(|e| e.diagnostics().is_empty()) {
        output::print_error(e);
    }
    if !diags.is_empty() {
        output::print_error(&Error::Invalid(diags));
    }
}

/// The line that sums an export up: `DIR: N written, N unchanged, ...`,
/// and, when a whole-or-nothing export stopped, that nothing was written
/// and how to go on.
fn export_summary(dir: &Path, options: &ExportOptions, report: &Exported) -> String {
    let mut summary = format!(
        "{}{}: {} written, {} unchanged, {} removed, {} failed",
        text::path(dir),
        targets_shown(options),
        report.written.len(),
        report.unchanged,
        report.removed.len(),
        report.failed.len()
    );
    if !report.refused.is_empty() {
        summary.push_str(&format!(", {} refused", report.refused.len()));
    }
    if report.not_written > 0 {
        summary.push_str(&format!(", {} not written", report.not_written));
    }
    // Whole or nothing stopped it, not a failed write: say how to go on.
    let hint = !options.keep_going
        && report.not_written > 0
        && (!report.refused.is_empty()
            || report
                .failed
                .iter()
                .any(|e| !matches!(e, Error::Write { .. })));
    if report.new_dir && !exported_ok(report) && report.written.is_empty() {
        summary.push_str(&format!("; {} was not created", text::path(dir)));
    } else if hint {
        summary.push_str("; nothing was written");
    }
    if hint {
        summary.push_str(" (--keep-going writes the others)");
    }
    summary
}

/// `export --out DIR`: writes the skills, then reports what it did, as
/// JSON or as warnings, errors and a summary; exit 1 when a skill failed
/// or was refused.
fn export(
    skills: &bernstein_skills::Skills,
    dir: &Path,
    options: &ExportOptions,
    json: bool,
    places: &str,
) -> Result<(ExitCode, Value)> {
    let report = skills.export_with(dir, options)?;
    // The warnings of each skill written travel with it, as with show,
    // and so do those of a skill left out for want of a lower layer.
    say_once(&report.warnings, json);
    let ok = exported_ok(&report);
    let code = if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    if json {
        return Ok((code, export_json(dir, options, &report)));
    }
    if !ok {
        // On failure stdout stays empty: the places go with the errors.
        output::warn(places.lines().map(str::to_owned));
    }
    output::warn(
        report
            .stale_removed
            .iter()
            .map(|p| format!("removed stale export staging directory {}", text::path(p))),
    );
    let record = text::path(&dir.join(bernstein_skills::export::RECORD_NAME));
    let errors = refusals(&report.refused, options.effective_format(), &record);
    warn_left_alone(&report, &record);
    print_failures(&report.failed);
    output::warn(errors);
    let summary = export_summary(dir, options, &report);
    if ok {
        output::print(&format!("{places}{summary}\n"));
    } else {
        // On failure stdout stays empty; the summary goes with the errors.
        output::warn([format!("error: {summary}")]);
    }
    Ok((code, Value::Null))
}
