//! Export: every effective skill written into a directory, as the `show`
//! JSON (`DIR/<name>.json`) or as an Agent Skills directory
//! (`DIR/<name>/SKILL.md` and its files), and a check that a directory
//! still holds what an export would write, for review in CI.
//!
//! **What export owns.** An output directory is usually shared: an agent's
//! skills directory also holds the person's own skills and what other
//! installers put there. Export records what it wrote in
//! `DIR/.bernstein-skills.json` ([`RECORD_NAME`]) and creates, updates and
//! removes only what that record lists:
//!
//! - a skill directory or manifest that exists and is not listed is
//!   *unmanaged*: refused by name, until `--adopt NAME` (or `--adopt-all`)
//!   takes it over; an unmanaged one that no layer provides is never
//!   touched, `--prune` included;
//! - a listed file changed by hand since the last export is refused with a
//!   short diff, until `--force` (or `--adopt NAME`);
//! - a file added by hand inside a managed skill directory is never
//!   deleted: it is kept and reported, and a pruned skill's directory stays
//!   while it holds one.
//!
//! **Whole or nothing.** Every skill is planned first (rendered, compared
//! with the record and the disk, conflicts found) and nothing is written if
//! any skill fails or is refused, unless `keep_going` asks for the others to
//! be written. The plan keeps digests, not bytes: what must be written is
//! rendered again when it is written. The record is written with both the
//! old and the new digest of every file about to change before any file is,
//! and with the new ones after, so an interrupted export leaves a record
//! that accounts for every file it touched. A directory that does not exist
//! yet is built beside its place and renamed into it whole.
//!
//! **Confinement and concurrency** are the output directory's own business:
//! see [`OutDir`].

mod diff;
mod outdir;
mod record;
mod write;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

pub(crate) use diff::short_diff;
pub use outdir::OutDir;
use outdir::{Holds, Kind, Probe};
pub use record::RECORD_NAME;
use record::{Digest, FileRecord, Record, SkillRecord, sha256};
pub use write::write_atomic;

use crate::engine::Skills;
use crate::error::{Diagnostic, DiagnosticKind, Error, Result};
use crate::output::render;
use crate::source::Located;
use crate::text::{EXCERPT_CHARS, excerpt};

/// Called before an export waits for another one to finish with the
/// directory (given as the person named it).
pub(crate) type OnWait = dyn Fn(&Path) + Sync;

/// How to export.
#[derive(Default)]
pub struct ExportOptions<'a> {
    /// What to write per skill.
    pub format: Format,
    /// Remove the output of managed skills that no layer provides any more.
    pub prune: bool,
    /// Take over these skills' existing output, managed or not: what is
    /// there is overwritten (files export does not write are kept).
    pub adopt: Vec<String>,
    /// Take over every unmanaged skill that a layer provides.
    pub adopt_all: bool,
    /// Overwrite (or, pruning, remove) managed files changed by hand.
    pub force: bool,
    /// Write the skills that can be written when others fail or are
    /// refused (the result still lists those).
    pub keep_going: bool,
    /// Worker threads.
    pub jobs: usize,
    /// Called before waiting for another export.
    pub on_wait: Option<&'a OnWait>,
    /// The directory below which no component of the output path may be a
    /// symlink ([`OutDir`]); by default the root of the git work tree
    /// holding the working directory, else the working directory.
    pub boundary: Option<&'a Path>,
    /// The consumer to export for ([`crate::target`]): its format (instead
    /// of `format`), its fields, renderings and translations, and its rules,
    /// which a skill must pass to be exported. A skill switched off for it
    /// (the spec's `enabled_field` or `targets_field`) is not exported, and
    /// what export wrote of it before is removed.
    pub target: Option<&'a crate::target::Target>,
}

impl ExportOptions<'_> {
    /// The format written: the target's, else `format`.
    pub fn effective_format(&self) -> Format {
        match self.target.map(|t| t.format) {
            Some(crate::target::TargetFormat::Json) => Format::Json,
            Some(crate::target::TargetFormat::Skill) => Format::Skill,
            None => self.format,
        }
    }
}

/// What [`Skills::export_with`] did.
#[derive(Debug, Default)]
pub struct Exported {
    /// Skills whose output was written (new or changed files, or files
    /// removed that the skill no longer has).
    pub written: usize,
    /// Skills whose output was already up to date.
    pub unchanged: usize,
    /// Managed skills no layer provides any more, removed (with `prune`).
    pub removed: Vec<String>,
    /// Skills that could not be resolved or written, with why.
    pub failed: Vec<Error>,
    /// Skills whose output export does not own, or that was changed by
    /// hand: nothing of theirs was written.
    pub refused: Vec<Conflict>,
    /// Skills that would have been written but were not, because something
    /// else failed or was refused (whole or nothing), or a write failed.
    pub not_written: usize,
    /// Files that export did not write, inside the directories of skills it
    /// wrote or removed, kept (as the person would name them), and how many
    /// more were not listed.
    pub kept: Vec<PathBuf>,
    /// How many kept files [`Exported::kept`] leaves out.
    pub kept_more: usize,
    /// The output directory did not exist: it appears only if nothing failed.
    pub new_dir: bool,
    /// Staging directories of earlier exports whose process is gone, removed.
    pub stale_removed: Vec<PathBuf>,
}

/// A skill export will not write without a flag that says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The skill.
    pub name: String,
    /// Why.
    pub kind: ConflictKind,
    /// Its output as the person would name it: `DIR/NAME/` or `DIR/NAME.json`.
    pub path: PathBuf,
    /// What differs: a short escaped diff per file.
    pub lines: Vec<String>,
}

/// Why a skill's output is not written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConflictKind {
    /// It exists and the record does not list it: export did not write it.
    /// What is there, in words (`a directory`, `a symbolic link`).
    Unmanaged(&'static str),
    /// Files the record lists were changed by hand since.
    HandEdited,
}

pub(crate) use crate::layer::FILE_NAME_MAX;
pub(crate) use crate::source::unexportable_at;

/// The most lines one skill's drift lists before counting the rest.
const MAX_LINES: usize = 20;

/// How an output directory differs from what an export would write there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drift {
    /// The skill exists but has no output.
    Added,
    /// Managed output whose skill no layer provides any more (`--prune`
    /// removes it).
    Removed,
    /// The skill's output is out of date: lines say how (`+ path` missing,
    /// `- path` no longer part of it, `~ path` other content, with a short
    /// diff for `SKILL.md` and manifests).
    Changed(Vec<String>),
    /// Files export wrote were changed by hand since; lines say which, with
    /// a short diff (`! path` for something export never writes in the way).
    HandEdited(Vec<String>),
    /// Files export did not write inside a managed skill's directory
    /// (`? path`); export keeps them.
    HandAdded(Vec<String>),
    /// Output export did not write (no record lists it) for a skill a
    /// layer provides; what is there, in words.
    Unmanaged(&'static str),
}

/// What `export` writes for each skill.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Format {
    /// `DIR/<name>.json`: the `show` JSON.
    #[default]
    Json,
    /// `DIR/<name>/SKILL.md` and the skill's files: an Agent Skills
    /// directory any agent loads ([`crate::output::skillmd`], [`crate::source::files`]).
    Skill,
}

impl Format {
    /// The `--format` value.
    pub fn label(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Skill => "skill",
        }
    }

    /// Skill `name`'s output, relative to the output directory.
    fn entry(self, name: &str) -> String {
        match self {
            Format::Json => format!("{name}.json"),
            Format::Skill => name.to_owned(),
        }
    }
}

/// One file of a skill's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutFile {
    /// Its path relative to the output directory, `/`-separated.
    pub rel: String,
    /// Its contents.
    pub bytes: Vec<u8>,
    /// Written with the execute bits (a script that was executable in its
    /// layer stays executable).
    pub executable: bool,
}

impl OutFile {
    /// A plain (not executable) file.
    pub fn new(rel: String, bytes: Vec<u8>) -> OutFile {
        OutFile {
            rel,
            bytes,
            executable: false,
        }
    }

    fn record(&self) -> FileRecord {
        FileRecord {
            sha256: sha256(&self.bytes),
            size: self.bytes.len() as u64,
            executable: self.executable,
            was: None,
        }
    }
}

/// One skill's output.
pub(crate) type Rendered = Vec<OutFile>;

/// What is to be done with one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    /// Nothing: it holds what export would write.
    Keep,
    /// Write it.
    Write,
    /// Remove it: the skill no longer has it.
    Remove,
    /// Nothing on disk; drop it from the record.
    Forget,
}

/// One file of a plan.
#[derive(Debug)]
struct FilePlan {
    rel: String,
    /// What export would write there (none: the skill no longer has it).
    new: Option<FileRecord>,
    action: Action,
    /// The content export wrote before that the file holds now.
    was: Option<(Digest, u64)>,
}

/// What exporting one skill takes, found before anything is written.
#[derive(Debug, Default)]
struct Plan {
    files: Vec<FilePlan>,
    /// Lines for `--check`: output out of date.
    changed: Vec<String>,
    /// Hand edits in the way (lines).
    hand_edited: Vec<String>,
    /// Files export did not write, below the skill's directory.
    hand_added: Vec<String>,
    /// How many more the walk found.
    hand_added_more: usize,
    /// The walk stopped at its bound: there may be more.
    walk_cut: bool,
    /// Unmanaged output: what is there.
    unmanaged: Option<&'static str>,
    /// Write over what is in the way (forced or adopted).
    replace: bool,
}

impl Plan {
    fn writes(&self) -> bool {
        self.files
            .iter()
            .any(|f| matches!(f.action, Action::Write | Action::Remove))
    }

    /// The record entry once the plan is carried out.
    fn entry(&self) -> SkillRecord {
        SkillRecord::new(
            self.files
                .iter()
                .filter_map(|f| Some((f.rel.clone(), f.new.clone()?)))
                .collect(),
        )
    }

    /// Is [`Plan::entry`] `old`?
    fn entry_is(&self, old: Option<&SkillRecord>) -> bool {
        let Some(old) = old else {
            return false;
        };
        let mut n = 0;
        for f in &self.files {
            if let Some(new) = &f.new {
                n += 1;
                if old.get(&f.rel) != Some(new) {
                    return false;
                }
            }
        }
        n == old.len()
    }

    /// Nothing to write, nothing to record, nothing to say.
    fn is_noop(&self, old: Option<&SkillRecord>) -> bool {
        !self.writes()
            && self.unmanaged.is_none()
            && self.hand_edited.is_empty()
            && self.entry_is(old)
    }

    /// The record entry while the plan is carried out: the new digest of
    /// every file to write with the one it replaces, and the files to
    /// remove as they were.
    fn pending(&self, old: Option<&SkillRecord>) -> SkillRecord {
        let mut files = Vec::with_capacity(self.files.len());
        for f in &self.files {
            match (&f.new, f.action) {
                (Some(new), Action::Write) => {
                    let mut new = new.clone();
                    new.was = f.was.map(Box::new);
                    files.push((f.rel.clone(), new));
                }
                (Some(new), _) => files.push((f.rel.clone(), new.clone())),
                (None, Action::Remove) => {
                    if let Some(old) = old.and_then(|o| o.get(&f.rel)) {
                        files.push((f.rel.clone(), old.clone()));
                    }
                }
                (None, _) => {}
            }
        }
        SkillRecord::new(files)
    }

    fn conflict(&self, name: &str, format: Format, out: &OutDir) -> Option<Conflict> {
        let path = shown_output(out, name, format);
        if let Some(what) = self.unmanaged {
            return Some(Conflict {
                name: name.to_owned(),
                kind: ConflictKind::Unmanaged(what),
                path,
                lines: Vec::new(),
            });
        }
        (!self.hand_edited.is_empty() && !self.replace).then(|| Conflict {
            name: name.to_owned(),
            kind: ConflictKind::HandEdited,
            path,
            lines: self.hand_edited.clone(),
        })
    }
}

/// `DIR/NAME/` or `DIR/NAME.json`, as the person would name it.
fn shown_output(out: &OutDir, name: &str, format: Format) -> PathBuf {
    match format {
        Format::Json => out.shown(&format!("{name}.json")),
        Format::Skill => {
            let mut p = out.shown(name).into_os_string();
            p.push("/");
            PathBuf::from(p)
        }
    }
}

/// Pushes `line` unless `lines` already holds it or [`MAX_LINES`] lines.
fn push_line(lines: &mut Vec<String>, line: String) {
    if lines.contains(&line) {
        return;
    }
    match lines.len() {
        n if n < MAX_LINES => lines.push(line),
        n if n == MAX_LINES => lines.push("... more".to_owned()),
        _ => {}
    }
}

/// What the planner needs besides the skill.
struct Ctx<'a> {
    out: &'a OutDir,
    format: Format,
    /// Lines for every change, not only for conflicts (`--check`).
    all_lines: bool,
    /// The largest old file read for a diff.
    cap: u64,
}

impl Ctx<'_> {
    /// `rel` as a line names it: inside the skill's directory for a skill.
    fn shown<'r>(&self, name: &str, rel: &'r str) -> &'r str {
        match self.format {
            Format::Json => rel,
            Format::Skill => rel
                .strip_prefix(name)
                .and_then(|r| r.strip_prefix('/'))
                .unwrap_or(rel),
        }
    }

    /// How the file at `rel` differs from `new`: a short diff for a
    /// manifest or `SKILL.md`, sizes for other files. For a manifest the
    /// diff is all there is; otherwise it follows a `~ path` line.
    fn diff(
        &self,
        name: &str,
        rel: &str,
        new: &[u8],
        note: &str,
        lines: &mut Vec<String>,
        cache: &outdir::Cache,
    ) {
        let shown = excerpt(self.shown(name, rel), EXCERPT_CHARS);
        let old = self.out.read(rel, self.cap, Some(cache));
        let text = self.format == Format::Json || rel == format!("{name}/SKILL.md");
        match old {
            Some(old) if text => {
                let diff = short_diff(
                    &String::from_utf8_lossy(&old),
                    &String::from_utf8_lossy(new),
                    12,
                );
                if self.format == Format::Json {
                    if !note.is_empty() {
                        push_line(lines, format!("~ {shown}{note}"));
                    }
                    lines.extend(diff);
                } else {
                    push_line(lines, format!("~ {shown}{note}"));
                    lines.extend(diff.into_iter().map(|l| format!("  {l}")));
                }
            }
            Some(old) => push_line(
                lines,
                format!("~ {shown}{note} ({} → {} bytes)", old.len(), new.len()),
            ),
            None => push_line(lines, format!("~ {shown}{note}")),
        }
    }

    /// Plans skill `name`: `files` is what export would write (none for a
    /// managed skill no layer provides), `old` its record entry, `on_disk`
    /// what is at its output's place.
    fn plan(
        &self,
        name: &str,
        files: Option<&[OutFile]>,
        old: Option<&SkillRecord>,
        on_disk: Option<Kind>,
        adopt: bool,
        force: bool,
    ) -> Plan {
        let mut plan = Plan {
            replace: adopt || force,
            ..Plan::default()
        };
        if files.is_some()
            && old.is_none()
            && !adopt
            && let Some(kind) = on_disk
        {
            plan.unmanaged = Some(kind.words());
            return plan;
        }
        // A skill directory that is not one: nothing below it is probed
        // (a link is never followed), every file is written once allowed.
        let blocked_dir = match (self.format, on_disk) {
            (Format::Skill, Some(k)) if k != Kind::Dir => Some(k),
            _ => None,
        };
        if let Some(kind) = blocked_dir
            && old.is_some()
        {
            plan.hand_edited.push(format!(
                "! {} is {}, not the directory export wrote",
                excerpt(name, EXCERPT_CHARS),
                kind.words()
            ));
        }
        let nothing_there = on_disk.is_none() || blocked_dir.is_some();
        // The skill's directories, opened once: by the walk for files
        // export did not write, then reused by every file's comparison.
        let cache = outdir::Cache::default();
        let walked = (self.format == Format::Skill && on_disk == Some(Kind::Dir))
            .then(|| self.out.leaves(name, outdir::MAX_SKILL_ENTRIES, &cache));
        let mut seen = BTreeSet::new();
        for f in files.unwrap_or_default() {
            seen.insert(f.rel.as_str());
            let rec = old.and_then(|o| o.get(&f.rel));
            let known = rec.map(FileRecord::known).unwrap_or_default();
            let probe = if nothing_there {
                Probe::Missing
            } else {
                self.out.probe(&f.rel, Some(&f.bytes), &known, &cache)
            };
            let shown = excerpt(self.shown(name, &f.rel), EXCERPT_CHARS);
            let (action, was) = match probe {
                Probe::Missing => {
                    if self.all_lines {
                        push_line(&mut plan.changed, format!("+ {shown}"));
                    }
                    (Action::Write, None)
                }
                Probe::File {
                    holds: Holds::New,
                    executable,
                } if executable == f.executable => (Action::Keep, None),
                Probe::File {
                    holds: Holds::New, ..
                } => {
                    if self.all_lines {
                        push_line(
                            &mut plan.changed,
                            format!(
                                "~ {shown} (execute bit {})",
                                if f.executable { "missing" } else { "set" }
                            ),
                        );
                    }
                    (Action::Write, None)
                }
                Probe::File {
                    holds: Holds::Known(i),
                    ..
                } => {
                    if self.all_lines {
                        self.diff(name, &f.rel, &f.bytes, "", &mut plan.changed, &cache);
                    }
                    (Action::Write, Some(known[i]))
                }
                Probe::File {
                    holds: Holds::Other,
                    ..
                } => {
                    let note = if rec.is_some() {
                        ""
                    } else {
                        " (not written by export)"
                    };
                    self.diff(name, &f.rel, &f.bytes, note, &mut plan.hand_edited, &cache);
                    (Action::Write, None)
                }
                Probe::Blocked(what) => {
                    push_line(
                        &mut plan.hand_edited,
                        format!("! {}", self.blocked(name, &what)),
                    );
                    (Action::Write, None)
                }
            };
            plan.files.push(FilePlan {
                rel: f.rel.clone(),
                new: Some(f.record()),
                action,
                was,
            });
        }
        for (rel, rec) in old.into_iter().flat_map(SkillRecord::files) {
            if seen.contains(rel) {
                continue;
            }
            let probe = if nothing_there {
                Probe::Missing
            } else {
                self.out.probe(rel, None, &rec.known(), &cache)
            };
            let shown = excerpt(self.shown(name, rel), EXCERPT_CHARS);
            let action = match probe {
                Probe::Missing => Action::Forget,
                Probe::File {
                    holds: Holds::Known(_) | Holds::New,
                    ..
                } => {
                    if self.all_lines {
                        push_line(&mut plan.changed, format!("- {shown}"));
                    }
                    Action::Remove
                }
                Probe::File {
                    holds: Holds::Other,
                    ..
                } => {
                    push_line(
                        &mut plan.hand_edited,
                        format!("~ {shown} (export would remove it)"),
                    );
                    Action::Remove
                }
                Probe::Blocked(what) => {
                    push_line(
                        &mut plan.hand_edited,
                        format!("! {}", self.blocked(name, &what)),
                    );
                    Action::Remove
                }
            };
            plan.files.push(FilePlan {
                rel: rel.to_owned(),
                new: None,
                action,
                was: None,
            });
        }
        if let Some((leaves, cut)) = walked {
            // The files export lists and the directories above them: a
            // leaf among those is in the way of a file (a hand edit), not
            // an addition.
            let mut listed: BTreeSet<&str> = BTreeSet::new();
            for f in &plan.files {
                let mut rel = f.rel.as_str();
                listed.insert(rel);
                while let Some((parent, _)) = rel.rsplit_once('/') {
                    if !listed.insert(parent) {
                        break;
                    }
                    rel = parent;
                }
            }
            for (rel, _) in leaves {
                if listed.contains(rel.as_str()) {
                    continue;
                }
                if plan.hand_added.len() < MAX_LINES {
                    plan.hand_added.push(rel);
                } else {
                    plan.hand_added_more += 1;
                }
            }
            plan.walk_cut = cut;
        }
        plan
    }

    /// A blocked path's description, inside the skill's directory.
    fn blocked(&self, name: &str, what: &str) -> String {
        match self.format {
            Format::Json => what.to_owned(),
            Format::Skill => what
                .strip_prefix(name)
                .and_then(|r| r.strip_prefix('/'))
                .unwrap_or(what)
                .to_owned(),
        }
    }
}

/// Reads `out`'s record, if it has one, refusing one for another format.
fn read_record(out: &OutDir, format: Format) -> Result<Option<(Record, Digest)>> {
    let path = out.shown(RECORD_NAME);
    let bad = |message: String| Error::BadRecord {
        path: path.clone(),
        at: None,
        message,
    };
    let file = match out.kind(RECORD_NAME) {
        None => return Ok(None),
        Some(Kind::File) => {
            out.open_file(RECORD_NAME, None)
                .ok_or_else(|| bad("cannot be read".to_owned()))?
                .0
        }
        Some(kind) => return Err(bad(format!("is {}, not a file export wrote", kind.words()))),
    };
    let (record, digest) = Record::read(file, &path, || {
        out.read(RECORD_NAME, record::MAX_RECORD_BYTES, None)
    })?;
    if record.format != format {
        return Err(Error::Refused {
            path: None,
            message: format!(
                "{}: holds skills exported with --format {} (its {RECORD_NAME} says so); \
                 export with --format {} or into another directory",
                crate::text::path(out.given()),
                record.format.label(),
                record.format.label(),
            ),
        });
    }
    Ok(Some((record, digest)))
}

/// What is at each skill's output place in `out`, by skill name: the
/// directory's entries named `<name>.json` for manifests, or any entry for
/// skill directories; hidden entries and names that are not UTF-8 left out.
fn on_disk(out: &OutDir, format: Format) -> Result<BTreeMap<String, Kind>> {
    Ok(out
        .list()?
        .into_iter()
        .filter_map(|(name, kind)| {
            let name = name.into_string().ok()?;
            let name = match format {
                Format::Json => name.strip_suffix(".json")?.to_owned(),
                Format::Skill => name,
            };
            Some((name, kind))
        })
        .collect())
}

/// One live skill's planning result.
///
/// Small (boxed parts): one is held per skill, three times over while the
/// workers' results are put back in order.
enum Planned {
    Failed(Box<Error>),
    /// Nothing to do.
    Unchanged,
    Ready(Box<Plan>),
    /// Switched off (for the target): not exported, and what export wrote
    /// of it before goes.
    Off,
}

impl Skills {
    /// The effective skill's manifest: the `show` JSON.
    pub fn manifest(&self, name: &str) -> Result<String> {
        Ok(render::effective_to_json(&self.resolve(name)?.effective()))
    }

    /// What skill `name` exports as in `format` (paths relative to the
    /// output directory); an error if it cannot be exported.
    pub fn rendered(&self, name: &str, located: &[Located], format: Format) -> Result<Rendered> {
        Ok(self
            .rendered_for(name, located, format, None, true)?
            .unwrap_or_default())
    }

    /// What skill `name` exports as for `target` (or, without one, in
    /// `format`); `None` when it is switched off (`honour_switches`).
    pub(crate) fn rendered_for(
        &self,
        name: &str,
        located: &[Located],
        format: Format,
        target: Option<&crate::target::Target>,
        honour_switches: bool,
    ) -> Result<Option<Rendered>> {
        if let Some(d) = unexportable_at(name, located) {
            return Err(d.into());
        }
        let resolved = self.resolve_located(name, located)?;
        let effective = resolved.effective();
        if honour_switches {
            let switch = crate::target::switch(self.spec(), &effective);
            if !switch.enabled || target.is_some_and(|t| !switch.goes_to(&t.name)) {
                return Ok(None);
            }
        }
        if let Some(t) = target {
            let errors: Vec<Diagnostic> = t
                .check(
                    self.spec(),
                    &effective,
                    &resolved.fragments,
                    crate::error::Severity::Error,
                )
                .into_iter()
                .filter(Diagnostic::is_error)
                .collect();
            if !errors.is_empty() {
                return Err(Error::Invalid(errors));
            }
        }
        match format {
            Format::Json => Ok(Some(vec![OutFile::new(
                format!("{name}.json"),
                render::effective_to_json(&effective).into_bytes(),
            )])),
            Format::Skill => {
                let (skill_md, translated) = match target {
                    None => (
                        crate::output::skillmd::try_render(self.spec(), &effective)?,
                        Vec::new(),
                    ),
                    Some(t) => {
                        let values = match effective.to_value() {
                            serde_json::Value::Object(m) => m,
                            _ => serde_json::Map::new(),
                        };
                        let r = t.render(self.spec(), &values);
                        let doc = crate::output::skillmd::document(
                            r.front.iter().map(|(k, v)| (k.as_str(), v)),
                            crate::output::skillmd::body_of(self.spec(), &values),
                        );
                        (doc, r.files)
                    }
                };
                let mut out = vec![OutFile::new(
                    format!("{name}/SKILL.md"),
                    skill_md.into_bytes(),
                )];
                for f in self.files_of(located)? {
                    let refused = |reason: String| {
                        Error::from(
                            Diagnostic::error(
                                Some(&f.source.path),
                                DiagnosticKind::Refused { reason },
                            )
                            .in_layer(f.source.layer),
                        )
                    };
                    let rel = format!("{name}/{}", f.rel);
                    // The record must be able to name it.
                    if let Err(why) = record::check_rel(name, &rel, format) {
                        return Err(refused(format!(
                            "cannot be exported: its path inside the skill has {why}"
                        )));
                    }
                    // Copied as bytes, never parsed; confined like every read.
                    let bytes = crate::source::confine::read_in_root(
                        &f.root,
                        &f.source.path,
                        f.source.size,
                    )
                    .map_err(|r| {
                        refused(r.describe(&f.source.path, &f.source.layer.to_string()))
                    })?;
                    out.push(OutFile {
                        rel,
                        bytes,
                        executable: f.source.executable,
                    });
                }
                // A target's translations: written as YAML files of the
                // skill, merged into a file of that name a layer provides.
                for (rel, doc) in translated {
                    let rel = format!("{name}/{rel}");
                    let mut doc = doc;
                    if let Some(i) = out.iter().position(|o| o.rel == rel) {
                        let given = String::from_utf8(out[i].bytes.clone()).ok();
                        let parsed = given
                            .as_deref()
                            .map(crate::fragment::parse_yaml)
                            .and_then(Result::ok)
                            .flatten();
                        let Some(mut base) = parsed.filter(serde_json::Value::is_object) else {
                            return Err(Error::Refused {
                                path: None,
                                message: format!(
                                    "skill '{}': {} is not a YAML mapping, so the target's \
                                     settings cannot be added to it",
                                    excerpt(name, EXCERPT_CHARS),
                                    excerpt(&rel, EXCERPT_CHARS)
                                ),
                            });
                        };
                        deep_merge(&mut base, std::mem::take(&mut doc));
                        doc = base;
                        out.remove(i);
                    }
                    let serde_json::Value::Object(m) = &doc else {
                        continue;
                    };
                    let text =
                        crate::output::yaml_out::mapping(m.iter().map(|(k, v)| (k.as_str(), v)));
                    out.push(OutFile::new(rel, text.into_bytes()));
                }
                Ok(Some(out))
            }
        }
    }

    /// Writes every effective skill to `dir/<name>.json`; see
    /// [`Skills::export_with`].
    pub fn export(&self, dir: &Path, prune: bool, jobs: usize) -> Result<Exported> {
        self.export_as(dir, Format::Json, prune, jobs)
    }

    /// Writes every effective skill to `dir` in `format`; see
    /// [`Skills::export_with`].
    pub fn export_as(
        &self,
        dir: &Path,
        format: Format,
        prune: bool,
        jobs: usize,
    ) -> Result<Exported> {
        self.export_with(
            dir,
            &ExportOptions {
                format,
                prune,
                jobs,
                ..ExportOptions::default()
            },
        )
    }

    /// Writes every effective skill into `dir` as the module documentation
    /// says. Skills that fail or are refused are in the result, not the
    /// error; the error is for what stops the whole export (no layer, a
    /// refused output path, a bad record, another format).
    pub fn export_with(&self, dir: &Path, options: &ExportOptions) -> Result<Exported> {
        self.require_layers()?;
        let catalog = self.layers().catalog();
        for name in &options.adopt {
            if catalog
                .binary_search_by(|(n, _)| n.as_str().cmp(name))
                .is_err()
            {
                return Err(Error::Refused {
                    path: None,
                    message: format!(
                        "--adopt {}: no layer provides a skill of that name",
                        excerpt(name, EXCERPT_CHARS)
                    ),
                });
            }
        }
        let out = OutDir::open_with(dir, options.boundary, options.on_wait)?;
        if out.is_new() {
            return self.export_new(out, &catalog, options);
        }
        let format = options.effective_format();
        // One copy of the record, changed in place once the files are
        // written; the bytes read are kept only as a digest.
        let (mut record, old_digest) = match read_record(&out, format)? {
            Some((record, digest)) => (record, Some(digest)),
            None => (Record::new(format), None),
        };
        let disk = on_disk(&out, format)?;
        let ctx = Ctx {
            out: &out,
            format,
            all_lines: false,
            cap: self.max_manifest_bytes(),
        };
        let adopted: BTreeSet<&str> = options.adopt.iter().map(String::as_str).collect();
        let planned = crate::par::map(&catalog, options.jobs, |(name, located)| {
            let files = match self.rendered_for(name, located, format, options.target, true) {
                Ok(Some(files)) => files,
                Ok(None) => return Planned::Off,
                Err(e) => return Planned::Failed(Box::new(e)),
            };
            let old = record.skills.get(name);
            let adopt = adopted.contains(name.as_str()) || (options.adopt_all && old.is_none());
            let plan = ctx.plan(
                name,
                Some(&files),
                old,
                disk.get(name).copied(),
                adopt,
                options.force,
            );
            // Only plans that do something are kept: a re-export with
            // nothing to do holds no more than a flag per skill.
            if plan.is_noop(old) {
                Planned::Unchanged
            } else {
                Planned::Ready(Box::new(plan))
            }
        });
        // Switched off: gone, as far as the output goes.
        let off: BTreeSet<&str> = catalog
            .iter()
            .zip(&planned)
            .filter(|(_, p)| matches!(p, Planned::Off))
            .map(|((n, _), _)| n.as_str())
            .collect();
        let live: BTreeSet<&str> = catalog
            .iter()
            .map(|(n, _)| n.as_str())
            .filter(|n| !off.contains(n))
            .collect();
        // A skill no layer provides goes with --prune; one switched off
        // goes in any case (what export wrote of it, and nothing else).
        let stale: Vec<String> = record
            .skills
            .keys()
            .filter(|n| !live.contains(n.as_str()))
            .filter(|n| options.prune || off.contains(n.as_str()))
            .cloned()
            .collect();
        let pruned = {
            crate::par::map(&stale, options.jobs, |name| {
                ctx.plan(
                    name,
                    None,
                    record.skills.get(name),
                    disk.get(name).copied(),
                    false,
                    options.force,
                )
            })
        };
        drop(disk);

        let mut report = Exported {
            stale_removed: out.stale_removed().to_vec(),
            ..Exported::default()
        };
        // The skills that go ahead, with their plans.
        let mut go = Vec::new();
        for ((name, _), p) in catalog.iter().zip(planned) {
            match p {
                Planned::Off => {}
                Planned::Failed(e) => report.failed.push(*e),
                Planned::Unchanged => report.unchanged += 1,
                Planned::Ready(plan) => match plan.conflict(name, format, &out) {
                    Some(c) => report.refused.push(c),
                    None => go.push((name.as_str(), *plan)),
                },
            }
        }
        let mut prune_go = Vec::new();
        for (name, plan) in stale.iter().zip(pruned) {
            match plan.conflict(name, format, &out) {
                Some(c) => report.refused.push(c),
                None => prune_go.push((name.as_str(), plan)),
            }
        }
        let stopped = !report.failed.is_empty() || !report.refused.is_empty();
        if stopped && !options.keep_going {
            for (_, plan) in &go {
                if plan.writes() {
                    report.not_written += 1;
                } else {
                    report.unchanged += 1;
                }
            }
            return Ok(report);
        }

        // The record while writing: every file about to change listed with
        // both its old and its new digest.
        let pending: BTreeMap<String, SkillRecord> = go
            .iter()
            .filter(|(_, plan)| plan.writes())
            .map(|(name, plan)| ((*name).to_owned(), plan.pending(record.skills.get(*name))))
            .collect();
        let spec_sha = self.spec().sha256();
        let write_record = |record: &Record, patch: &BTreeMap<String, SkillRecord>| -> Result<()> {
            out.write_with(RECORD_NAME, false, false, |w| {
                record.write_to(w, &spec_sha, patch)
            })
            .map_err(|source| Error::Write {
                path: out.shown(RECORD_NAME),
                source,
            })
        };
        if !pending.is_empty() {
            write_record(&record, &pending)?;
        }

        // Write: each skill rendered again, its bytes checked against the
        // plan. After a failed write, no more are started.
        let stop = AtomicBool::new(false);
        let index: BTreeMap<&str, &[Located]> = catalog
            .iter()
            .map(|(n, l)| (n.as_str(), l.as_slice()))
            .collect();
        let results = crate::par::map(&go, options.jobs, |(name, plan)| -> Option<Result<()>> {
            if !plan.writes() {
                return Some(Ok(()));
            }
            if stop.load(Ordering::Relaxed) {
                return None;
            }
            let r = self.carry_out(&out, name, index[name], plan, format, options.target);
            if r.is_err() {
                stop.store(true, Ordering::Relaxed);
            }
            Some(r)
        });
        let mut pending = pending;
        for ((name, plan), r) in go.iter().zip(results) {
            let entry = match r {
                Some(Ok(())) => {
                    if plan.writes() {
                        report.written += 1;
                        self.report_kept(&out, plan, &mut report);
                    } else {
                        report.unchanged += 1;
                    }
                    Some(plan.entry())
                }
                // Not (all) written: the entry that accounts for old and new.
                None => {
                    report.not_written += 1;
                    pending.remove(*name)
                }
                Some(Err(e)) => {
                    report.failed.push(e);
                    pending.remove(*name)
                }
            };
            if let Some(entry) = entry {
                record.skills.insert((*name).to_owned(), entry);
            }
        }
        for (name, plan) in &prune_go {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            match self.carry_out(&out, name, &[], plan, format, None) {
                Ok(()) => {
                    record.skills.remove(*name);
                    report.removed.push((*name).to_owned());
                    self.report_kept(&out, plan, &mut report);
                }
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    report.failed.push(e);
                }
            }
        }
        if old_digest != Some(record.digest(&spec_sha)) {
            write_record(&record, &BTreeMap::new())?;
        }
        Ok(report)
    }

    /// Lists `plan`'s hand-added files in `report`.
    fn report_kept(&self, out: &OutDir, plan: &Plan, report: &mut Exported) {
        report
            .kept
            .extend(plan.hand_added.iter().map(|rel| out.shown(rel)));
        report.kept_more += plan.hand_added_more;
    }

    /// Writes and removes what `plan` says for skill `name` (`located`: its
    /// files, to render it again; empty for a pruned skill).
    fn carry_out(
        &self,
        out: &OutDir,
        name: &str,
        located: &[Located],
        plan: &Plan,
        format: Format,
        target: Option<&crate::target::Target>,
    ) -> Result<()> {
        let fail = |rel: &str| {
            let path = out.shown(rel);
            move |source| Error::Write { path, source }
        };
        if plan.files.iter().any(|f| f.action == Action::Write) {
            let files = self
                .rendered_for(name, located, format, target, false)?
                .unwrap_or_default();
            for f in &plan.files {
                if f.action != Action::Write {
                    continue;
                }
                let Some(now) = files.iter().find(|o| o.rel == f.rel) else {
                    return Err(changed_meanwhile(out, name, format));
                };
                if Some(&now.record()) != f.new.as_ref() {
                    return Err(changed_meanwhile(out, name, format));
                }
                out.write(&f.rel, &now.bytes, now.executable, plan.replace)
                    .map_err(fail(&f.rel))?;
            }
        }
        let mut parents = BTreeSet::new();
        for f in &plan.files {
            if f.action == Action::Remove {
                out.remove(&f.rel, plan.replace).map_err(fail(&f.rel))?;
            }
            if matches!(f.action, Action::Remove | Action::Forget) {
                let mut rel = f.rel.as_str();
                while let Some((parent, _)) = rel.rsplit_once('/') {
                    parents.insert(parent.to_owned());
                    rel = parent;
                }
            }
        }
        // Directories left empty go, deepest first; one holding anything
        // (a file added by hand) stays.
        let mut parents: Vec<String> = parents.into_iter().collect();
        parents.sort_by_key(|p| std::cmp::Reverse(p.matches('/').count()));
        for p in parents {
            out.remove_dir_if_empty(&p);
        }
        Ok(())
    }

    /// Exports into a directory that does not exist yet: everything is
    /// written into its staging directory in one pass, which is put in
    /// place only if nothing failed (or, with `keep_going`, only a skill
    /// failed to resolve).
    fn export_new(
        &self,
        out: OutDir,
        catalog: &[(String, Vec<Located>)],
        options: &ExportOptions,
    ) -> Result<Exported> {
        let format = options.effective_format();
        // Once a write fails (a full disk), or a skill fails and all must
        // succeed, writing more is pointless: the others are still
        // resolved, to report every broken one.
        let stop = AtomicBool::new(false);
        let io_failed = AtomicBool::new(false);
        // One small result per skill (errors boxed): with 100,000 skills
        // the results are held three times over while the workers' parts
        // are put back in order. `Ok(None)`: not written.
        let results = crate::par::map(catalog, options.jobs, |(name, located)| {
            let files = self
                .rendered_for(name, located, format, options.target, true)
                .map_err(|e| {
                    if !options.keep_going {
                        stop.store(true, Ordering::Relaxed);
                    }
                    Box::new(e)
                })?;
            // Switched off: nothing to write.
            let Some(files) = files else {
                return Ok(Some(None));
            };
            if stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let mut entry = Vec::with_capacity(files.len());
            for f in &files {
                if let Err(source) = out.write(&f.rel, &f.bytes, f.executable, false) {
                    stop.store(true, Ordering::Relaxed);
                    io_failed.store(true, Ordering::Relaxed);
                    return Err(Box::new(Error::Write {
                        path: out.shown(&f.rel),
                        source,
                    }));
                }
                entry.push((f.rel.clone(), f.record()));
            }
            Ok(Some(Some(SkillRecord::new(entry))))
        });
        let mut report = Exported {
            stale_removed: out.stale_removed().to_vec(),
            new_dir: true,
            ..Exported::default()
        };
        let mut record = Record::new(format);
        for ((name, _), r) in catalog.iter().zip(results) {
            match r {
                Ok(Some(Some(entry))) => {
                    report.written += 1;
                    record.skills.insert(name.clone(), entry);
                }
                Ok(Some(None)) => {}
                Ok(None) => report.not_written += 1,
                Err(e) => report.failed.push(*e),
            }
        }
        let whole =
            !io_failed.load(Ordering::Relaxed) && (report.failed.is_empty() || options.keep_going);
        if !whole {
            // Whole or not at all: dropped, the staging directory goes.
            drop(out);
            report.not_written += std::mem::take(&mut report.written);
            return Ok(report);
        }
        let spec_sha = self.spec().sha256();
        out.write_with(RECORD_NAME, false, false, |w| {
            record.write_to(w, &spec_sha, &BTreeMap::new())
        })
        .map_err(|source| Error::Write {
            path: out.shown(RECORD_NAME),
            source,
        })?;
        out.finish()?;
        Ok(report)
    }

    /// Compares `dir`'s manifests with the effective skills; see
    /// [`Skills::check_export_with`].
    pub fn check_export(&self, dir: &Path, jobs: usize) -> Result<Vec<(String, Drift)>> {
        self.check_export_as(dir, Format::Json, jobs)
    }

    /// Compares what `dir` holds with what exporting in `format` would
    /// write; see [`Skills::check_export_with`].
    pub(crate) fn check_export_as(
        &self,
        dir: &Path,
        format: Format,
        jobs: usize,
    ) -> Result<Vec<(String, Drift)>> {
        self.check_export_with(
            dir,
            &ExportOptions {
                format,
                jobs,
                ..ExportOptions::default()
            },
        )
    }

    /// Compares what `dir` holds with what an export in `options.format`
    /// would write there, writing nothing. Returns every drift, by name (a
    /// skill may have several kinds); a skill that fails to resolve is an
    /// error, and so is a `dir` that does not exist (nothing was exported
    /// there yet).
    pub fn check_export_with(
        &self,
        dir: &Path,
        options: &ExportOptions,
    ) -> Result<Vec<(String, Drift)>> {
        self.require_layers()?;
        let format = options.effective_format();
        let Some(out) = OutDir::open_read(dir, options.boundary, options.on_wait)? else {
            return Err(Error::NotExported {
                dir: dir.components().collect(),
            });
        };
        let old = read_record(&out, format)?
            .map(|(r, _)| r)
            .unwrap_or_else(|| Record::new(format));
        let disk = on_disk(&out, format)?;
        let catalog = self.layers().catalog();
        let ctx = Ctx {
            out: &out,
            format,
            all_lines: true,
            cap: self.max_manifest_bytes(),
        };
        let results = crate::par::map(
            &catalog,
            options.jobs,
            |(name, located)| -> Result<Vec<Drift>> {
                let rec = old.skills.get(name);
                let on = disk.get(name).copied();
                let Some(files) = self.rendered_for(name, located, format, options.target, true)?
                else {
                    // Switched off: export would remove what it wrote.
                    return Ok(if rec.is_some() {
                        vec![Drift::Removed]
                    } else {
                        Vec::new()
                    });
                };
                if rec.is_none() && on.is_none() {
                    return Ok(vec![Drift::Added]);
                }
                let plan = ctx.plan(name, Some(&files), rec, on, false, false);
                if let Some(what) = plan.unmanaged {
                    return Ok(vec![Drift::Unmanaged(what)]);
                }
                let mut out = Vec::new();
                let mut changed = plan.changed.clone();
                if changed.is_empty() && plan.hand_edited.is_empty() && !plan.entry_is(rec) {
                    changed.push(format!("(its entry in {RECORD_NAME} is out of date)"));
                }
                if !changed.is_empty() {
                    out.push(Drift::Changed(changed));
                }
                if !plan.hand_edited.is_empty() {
                    out.push(Drift::HandEdited(plan.hand_edited));
                }
                if !plan.hand_added.is_empty() || plan.walk_cut {
                    let mut lines: Vec<String> = plan
                        .hand_added
                        .iter()
                        .map(|rel| format!("? {}", excerpt(ctx.shown(name, rel), EXCERPT_CHARS)))
                        .collect();
                    if plan.hand_added_more > 0 {
                        lines.push(format!("... {} more", plan.hand_added_more));
                    }
                    if plan.walk_cut {
                        lines.push(format!(
                            "... not all examined: the walk stops after {} entries or {} levels",
                            outdir::MAX_SKILL_ENTRIES,
                            outdir::MAX_DEPTH
                        ));
                    }
                    out.push(Drift::HandAdded(lines));
                }
                Ok(out)
            },
        );
        let mut out = Vec::new();
        let mut errors = Vec::new();
        for ((name, _), r) in catalog.iter().zip(results) {
            match r {
                Ok(drifts) => out.extend(drifts.into_iter().map(|d| (name.clone(), d))),
                Err(e) => errors.push(e),
            }
        }
        if !errors.is_empty() {
            let diags = errors
                .iter()
                .flat_map(|e| e.diagnostics().to_vec())
                .collect::<Vec<_>>();
            return Err(if diags.is_empty() {
                errors.remove(0)
            } else {
                Error::Invalid(diags)
            });
        }
        let live: BTreeSet<&str> = catalog.iter().map(|(n, _)| n.as_str()).collect();
        for name in old.skills.keys() {
            if !live.contains(name.as_str()) {
                out.push((name.clone(), Drift::Removed));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }
}

/// `from` merged into `into` key by key (`from` wins where both have a
/// value that is not a mapping).
fn deep_merge(into: &mut serde_json::Value, from: serde_json::Value) {
    match (into, from) {
        (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
            for (k, v) in b {
                match a.get_mut(&k) {
                    Some(existing) => deep_merge(existing, v),
                    None => {
                        a.insert(k, v);
                    }
                }
            }
        }
        (into, from) => *into = from,
    }
}

/// The error for a skill whose layers changed between planning and writing.
fn changed_meanwhile(out: &OutDir, name: &str, format: Format) -> Error {
    Error::Refused {
        path: None,
        message: format!(
            "{}: its layers changed while the export was running; nothing more of it was written (export again)",
            crate::text::path(&out.shown(&format.entry(name)))
        ),
    }
}
