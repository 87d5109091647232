//! What an export will do to the output directory, decided before anything
//! is written: each skill's files compared with what is there and with the
//! record, drift found, and the actions that follow.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::diff::short_diff;
use super::outdir::{self, EntryKind, Holds, OutDir, Probe};
use super::record::{self, Digest, FileRecord, RECORD_NAME, Record, SkillRecord};
use super::{Conflict, ConflictKind, Format, MAX_LINES, OutFile};
use crate::error::{Error, Result};
use crate::text::{EXCERPT_CHARS, excerpt};

/// What is to be done with one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Action {
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
pub(super) struct FilePlan {
    pub(super) rel: String,
    /// What export would write there (none: the skill no longer has it).
    pub(super) new: Option<FileRecord>,
    pub(super) action: Action,
    /// The content export wrote before that the file holds now.
    pub(super) was: Option<(Digest, u64)>,
}

/// What exporting one skill takes, found before anything is written.
#[derive(Debug, Default)]
pub(super) struct Plan {
    pub(super) files: Vec<FilePlan>,
    /// Lines for `--check`: output out of date.
    pub(super) changed: Vec<String>,
    /// Hand edits in the way (lines).
    pub(super) hand_edited: Vec<String>,
    /// Files export did not write, below the skill's directory.
    pub(super) hand_added: Vec<String>,
    /// How many more the walk found.
    pub(super) hand_added_more: usize,
    /// The walk stopped at its bound: there may be more.
    pub(super) walk_cut: bool,
    /// Unmanaged output: what is there.
    pub(super) unmanaged: Option<EntryKind>,
    /// Unmanaged because the record's entry is not honoured: the files it
    /// claims that no export on this machine wrote ([`Trust::Untrusted`]).
    pub(super) unconfirmed: Option<Vec<String>>,
    /// Write over what is in the way (forced or adopted).
    pub(super) replace: bool,
}

impl Plan {
    pub(super) fn writes(&self) -> bool {
        self.files
            .iter()
            .any(|f| matches!(f.action, Action::Write | Action::Remove))
    }

    /// The record entry once the plan is carried out.
    pub(super) fn entry(&self) -> SkillRecord {
        SkillRecord::new(
            self.files
                .iter()
                .filter_map(|f| Some((f.rel.clone(), f.new.clone()?)))
                .collect(),
        )
    }

    /// Is [`Plan::entry`] `old`?
    pub(super) fn entry_is(&self, old: Option<&SkillRecord>) -> bool {
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
    pub(super) fn is_noop(&self, old: Option<&SkillRecord>) -> bool {
        !self.writes()
            && self.unmanaged.is_none()
            && self.hand_edited.is_empty()
            && self.entry_is(old)
    }

    /// The record entry while the plan is carried out: the new digest of
    /// every file to write with the one it replaces, and the files to
    /// remove as they were.
    pub(super) fn pending(&self, old: Option<&SkillRecord>) -> SkillRecord {
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

    pub(super) fn conflict(&self, name: &str, format: Format, out: &OutDir) -> Option<Conflict> {
        let path = shown_output(out, name, format);
        if let Some(what) = self.unmanaged {
            let (kind, lines) = match &self.unconfirmed {
                Some(lines) => (ConflictKind::Unconfirmed(what), lines.clone()),
                None => (ConflictKind::Unmanaged(what), Vec::new()),
            };
            return Some(Conflict {
                name: name.to_owned(),
                kind,
                path,
                lines,
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
pub(super) fn shown_output(out: &OutDir, name: &str, format: Format) -> PathBuf {
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
pub(super) fn push_line(lines: &mut Vec<String>, line: String) {
    if lines.contains(&line) {
        return;
    }
    match lines.len() {
        n if n < MAX_LINES => lines.push(line),
        n if n == MAX_LINES => lines.push("... more".to_owned()),
        _ => {}
    }
}

/// How much of a skill's entry in the directory's record export honours.
///
/// The record may be committed, so it is attacker input: a claim (a file
/// and its digest) lets export overwrite or delete that file only when the
/// ledger of this machine holds the same claim (export here wrote it), or
/// the file holds exactly what export writes there now (it is export's
/// output, whoever wrote it), or the file is not there (nothing to lose).
#[derive(Debug)]
pub(super) enum Trust<'r> {
    /// No entry.
    None,
    /// Every claim honoured as it stands.
    Whole(&'r SkillRecord),
    /// The claims honoured (some confirmed by their content, those of
    /// files not there dropped).
    Part(SkillRecord),
    /// A file the entry claims is there, and neither the ledger nor its
    /// content confirms the claim: the entry is not honoured at all. The
    /// files, as lines (`! path`); empty when the skill's place holds
    /// something and no claim of the entry is honoured.
    Untrusted(Vec<String>),
}

impl Trust<'_> {
    /// The entry as honoured, if any.
    pub(super) fn entry(&self) -> Option<&SkillRecord> {
        match self {
            Trust::Whole(r) => Some(r),
            Trust::Part(r) => Some(r),
            Trust::None | Trust::Untrusted(_) => None,
        }
    }
}

/// Claim `f` as far as the ledger's claim `l` for the same file confirms
/// it: its digest, the one it replaces (`was`), or both; `None` if neither.
fn honour(f: &FileRecord, l: &FileRecord) -> Option<FileRecord> {
    let known = l.known();
    let main = known.contains(&(f.sha256, f.size));
    let was = f.was.as_deref().copied().filter(|w| known.contains(w));
    match (main, was) {
        (true, was) => Some(FileRecord {
            was: was.map(Box::new),
            ..f.clone()
        }),
        (false, Some((sha256, size))) => Some(FileRecord {
            sha256,
            size,
            executable: f.executable,
            was: None,
        }),
        (false, None) => None,
    }
}

/// Whether something may be at `rel`, or in the way of it: false only when
/// a walk of the skill's directory that went everywhere found neither it
/// nor anything at a path above it (a file where a directory should be).
fn may_be_there(walked: Option<&(Vec<(String, EntryKind)>, bool)>, rel: &str) -> bool {
    let Some((found, false)) = walked else {
        return true;
    };
    let at = |p: &str| {
        found
            .binary_search_by(|(f, _)| f.as_str().cmp(p))
            .ok()
            .map(|i| found[i].1)
    };
    if at(rel).is_some() {
        return true;
    }
    let mut p = rel;
    while let Some((parent, _)) = p.rsplit_once('/') {
        if at(parent).is_some_and(|k| k != EntryKind::Dir) {
            return true;
        }
        p = parent;
    }
    false
}

/// What the planner needs besides the skill.
pub(super) struct Ctx<'a> {
    pub(super) out: &'a OutDir,
    pub(super) format: Format,
    /// Lines for every change, not only for conflicts (`--check`).
    pub(super) all_lines: bool,
    /// The largest old file read for a diff.
    pub(super) cap: u64,
    /// The record is the repository's own
    /// ([`super::ExportOptions::in_repository`]): its claims are honoured
    /// as a ledger's would be.
    pub(super) record_committed: bool,
}

impl Ctx<'_> {
    /// `rel` as a line names it: inside the skill's directory for a skill.
    pub(super) fn shown<'r>(&self, name: &str, rel: &'r str) -> &'r str {
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
    pub(super) fn diff(
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
    pub(super) fn plan(
        &self,
        name: &str,
        files: Option<&[OutFile]>,
        old: Option<&SkillRecord>,
        on_disk: Option<EntryKind>,
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
            plan.unmanaged = Some(kind);
            return plan;
        }
        // A skill directory that is not one: nothing below it is probed
        // (a link is never followed), every file is written once allowed.
        let blocked_dir = match (self.format, on_disk) {
            (Format::Skill, Some(k)) if k != EntryKind::Dir => Some(k),
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
        // The skill's directories, opened once: by the walk for files
        // export did not write, then reused by every file's comparison.
        let cache = outdir::Cache::default();
        let walked = (self.format == Format::Skill && on_disk == Some(EntryKind::Dir))
            .then(|| self.out.leaves(name, outdir::MAX_SKILL_ENTRIES, &cache));
        let place = Place {
            name,
            nothing_there: on_disk.is_none() || blocked_dir.is_some(),
            walked: walked.as_ref(),
            cache: &cache,
        };
        let mut seen = BTreeSet::new();
        for f in files.unwrap_or_default() {
            seen.insert(f.rel.as_str());
            let file = self.plan_write(&place, f, old.and_then(|o| o.get(&f.rel)), &mut plan);
            plan.files.push(file);
        }
        for (rel, rec) in old.into_iter().flat_map(SkillRecord::files) {
            if !seen.contains(rel) {
                let file = self.plan_removal(&place, rel, rec, &mut plan);
                plan.files.push(file);
            }
        }
        if let Some((leaves, cut)) = walked {
            hand_added(&mut plan, leaves);
            plan.walk_cut = cut;
        }
        plan
    }

    /// What is at `rel` in a skill's `place`, compared with what export
    /// writes there (`expected`, if it writes it) and the digests the
    /// record knows for it (`known`). A file that cannot be there is not
    /// looked for.
    fn probe(
        &self,
        place: &Place,
        rel: &str,
        expected: Option<&[u8]>,
        known: &[(Digest, u64)],
    ) -> Probe {
        if place.nothing_there || !may_be_there(place.walked, rel) {
            Probe::Missing
        } else {
            self.out.probe(rel, expected, known, place.cache)
        }
    }

    /// Plans writing file `f` of the skill at `place` (`rec`: its record
    /// entry): kept when it holds what export writes, else written; the
    /// lines of `plan` say how it differs, and what stands in the way.
    fn plan_write(
        &self,
        place: &Place,
        f: &OutFile,
        rec: Option<&FileRecord>,
        plan: &mut Plan,
    ) -> FilePlan {
        let name = place.name;
        let known = rec.map(FileRecord::known).unwrap_or_default();
        let probe = self.probe(place, &f.rel, Some(&f.bytes), &known);
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
                    self.diff(name, &f.rel, &f.bytes, "", &mut plan.changed, place.cache);
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
                self.diff(
                    name,
                    &f.rel,
                    &f.bytes,
                    note,
                    &mut plan.hand_edited,
                    place.cache,
                );
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
        FilePlan {
            rel: f.rel.clone(),
            new: Some(f.record()),
            action,
            was,
        }
    }

    /// Plans removing file `rel` of the skill at `place`, which its record
    /// entry lists (as `rec`) and export no longer writes: forgotten when
    /// it is not there, else removed; the lines of `plan` say so, and what
    /// was changed by hand.
    fn plan_removal(
        &self,
        place: &Place,
        rel: &str,
        rec: &FileRecord,
        plan: &mut Plan,
    ) -> FilePlan {
        let probe = self.probe(place, rel, None, &rec.known());
        let shown = excerpt(self.shown(place.name, rel), EXCERPT_CHARS);
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
                    format!("! {}", self.blocked(place.name, &what)),
                );
                Action::Remove
            }
        };
        FilePlan {
            rel: rel.to_owned(),
            new: None,
            action,
            was: None,
        }
    }

    /// How much of skill `name`'s record entry `rec` is honoured (see
    /// [`Trust`]), given the ledger's entry `led`, what export would write
    /// (`files`; none for a skill no layer provides) and what is at the
    /// skill's place (`on_disk`). Reads only the files whose claims the
    /// ledger does not confirm.
    pub(super) fn trust<'r>(
        &self,
        name: &str,
        files: Option<&[OutFile]>,
        rec: Option<&'r SkillRecord>,
        led: Option<&SkillRecord>,
        on_disk: Option<EntryKind>,
    ) -> Trust<'r> {
        let Some(rec) = rec else {
            return Trust::None;
        };
        if led == Some(rec) || self.record_committed {
            return Trust::Whole(rec);
        }
        // Nothing at the skill's place: no claim has a file to lose. (A
        // symlink or a file there is in the way of every claim below it.)
        let nothing_there = on_disk.is_none();
        let cache = outdir::Cache::default();
        // One walk of the skill's directory spares a probe per claim of a
        // file that is not there.
        let walked = (self.format == Format::Skill && on_disk == Some(EntryKind::Dir))
            .then(|| self.out.leaves(name, outdir::MAX_SKILL_ENTRIES, &cache));
        let mut honoured = Vec::with_capacity(rec.len());
        let mut untrusted = Vec::new();
        let mut whole = true;
        for (rel, f) in rec.files() {
            if let Some(h) = led.and_then(|l| l.get(rel)).and_then(|l| honour(f, l)) {
                whole &= h == *f;
                honoured.push((rel.to_owned(), h));
                continue;
            }
            whole = false;
            if nothing_there || !may_be_there(walked.as_ref(), rel) {
                continue;
            }
            let now = files.and_then(|fs| fs.iter().find(|o| o.rel == rel));
            match self
                .out
                .probe(rel, now.map(|o| o.bytes.as_slice()), &[], &cache)
            {
                Probe::Missing => {}
                Probe::File {
                    holds: Holds::New, ..
                } => {
                    if let Some(now) = now {
                        honoured.push((rel.to_owned(), now.record()));
                    }
                }
                Probe::File { .. } | Probe::Blocked(_) => {
                    if untrusted.len() < MAX_LINES {
                        untrusted.push(format!(
                            "! {}",
                            excerpt(self.shown(name, rel), EXCERPT_CHARS)
                        ));
                    }
                }
            }
        }
        if !untrusted.is_empty() || (honoured.is_empty() && !nothing_there) {
            return Trust::Untrusted(untrusted);
        }
        if whole {
            return Trust::Whole(rec);
        }
        Trust::Part(SkillRecord::new(honoured))
    }

    /// A blocked path's description, inside the skill's directory.
    pub(super) fn blocked(&self, name: &str, what: &str) -> String {
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

/// A skill's place, as planning it finds it.
struct Place<'p> {
    /// The skill.
    name: &'p str,
    /// Nothing is there, or something that is not the directory export
    /// writes: no file below it is looked for (a link is never followed).
    nothing_there: bool,
    /// What the walk of its directory found: its leaves, and whether the
    /// walk stopped at its caps.
    walked: Option<&'p (Vec<(String, EntryKind)>, bool)>,
    /// Its directories, opened once.
    cache: &'p outdir::Cache,
}

/// Lists in `plan` the `leaves` of a skill's directory that export did
/// not write: the files it plans and the directories above them are its
/// own, and a leaf among those is in the way of a file (a hand edit), not
/// an addition.
fn hand_added(plan: &mut Plan, leaves: Vec<(String, EntryKind)>) {
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
    for (rel, kind) in leaves {
        if kind == EntryKind::Dir || listed.contains(rel.as_str()) {
            continue;
        }
        if plan.hand_added.len() < MAX_LINES {
            plan.hand_added.push(rel);
        } else {
            plan.hand_added_more += 1;
        }
    }
}

/// Reads `out`'s record, if it has one, refusing one for another format or
/// another target (one written without a target, by an older version or
/// with `--format`, takes an export for any target of its format).
pub(super) fn read_record(
    out: &OutDir,
    format: Format,
    target: Option<&str>,
    also: &[&str],
) -> Result<Option<(Record, Digest)>> {
    let path = out.shown(RECORD_NAME);
    let bad = |message: String| Error::BadRecord {
        path: path.clone(),
        at: None,
        message,
    };
    let file = match out.kind(RECORD_NAME) {
        None => return Ok(None),
        Some(EntryKind::File) => {
            out.open_file(RECORD_NAME, None)
                .ok_or_else(|| bad("cannot be read".to_owned()))?
                .0
        }
        Some(kind) => return Err(bad(format!("is {}, not a file export wrote", kind.words()))),
    };
    let (record, digest) = Record::read(file, &path, || {
        out.read(RECORD_NAME, record::MAX_RECORD_BYTES, None)
    })?;
    // A record may name the target by its own name (written before it
    // rendered as another) or name one of the targets sharing the
    // directory.
    let other_target = record
        .target
        .as_deref()
        .filter(|t| Some(*t) != target && !also.contains(t));
    if record.format != format || other_target.is_some() {
        let flag = match (&record.target, record.format) {
            (Some(t), _) => format!("--target {}", crate::text::escape(t)),
            (None, f) => format!("--format {}", f.label()),
        };
        return Err(Error::Refused {
            kind: crate::error::ErrorKind::Conflict,
            path: None,
            message: format!(
                "{}: holds skills exported with {flag} (its {RECORD_NAME} says so); \
                 export with {flag} or into another directory",
                crate::text::path(out.given()),
            ),
        });
    }
    Ok(Some((record, digest)))
}

/// What is at each skill's output place in `out`, by skill name: the
/// directory's entries named `<name>.json` for manifests, or any entry for
/// skill directories; hidden entries and names that are not UTF-8 left out.
pub(super) fn on_disk(out: &OutDir, format: Format) -> Result<BTreeMap<String, EntryKind>> {
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
pub(super) enum Planned {
    Failed(Box<Error>),
    /// Nothing to do; `learn`: the ledger does not hold the skill's entry,
    /// which its files, holding what export writes, confirm; and what
    /// validate warns about it, when asked for.
    Unchanged {
        learn: bool,
        warnings: Vec<crate::error::Diagnostic>,
    },
    /// A plan that does something, with the skill's files as rendered
    /// when it was planned (none if it only removes), which are written;
    /// `None` past the budget of kept bytes (rendered again to be written);
    /// and what validate warns about it, when asked for.
    Ready(
        Box<Plan>,
        Option<super::Rendered>,
        Vec<crate::error::Diagnostic>,
    ),
    /// Switched off (for the target), or an orphan: not exported, and what
    /// export wrote of it before goes; what validate warns about an
    /// orphan, when asked for.
    Off(Vec<crate::error::Diagnostic>),
}

/// One skill to prune's planning result (small, as [`Planned`]).
pub(super) enum Pruned {
    /// Nothing at its place: only its entry goes.
    Forget,
    /// Its entry is not honoured ([`Trust::Untrusted`]): left alone.
    Unconfirmed(Box<Conflict>),
    Plan(Box<Plan>),
}
