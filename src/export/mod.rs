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
//! - a file added by hand inside a managed skill directory (a hidden one
//!   too) is never deleted: it is kept and reported, and a pruned skill's
//!   directory stays while it holds one.
//!
//! **Whose word the record is.** The record is often committed, so anyone
//! who can change it could claim a person's own file. A claim (a file and
//! its digest) lets export overwrite or remove that file only when this
//! machine's ledger of what export wrote there holds the same claim, or the
//! file holds what export writes now, or it is not there
//! (`ledger.rs`, `plan::Trust`). A skill whose entry claims a file that
//! none of these confirms is unmanaged (refused; `--adopt NAME` confirms
//! it), and `--prune` leaves it alone and says so. `--check` reads the
//! ledger, never writes it, and keeps its verdicts; it adds an
//! `unconfirmed` drift where an export here would refuse.
//!
//! **Whole or nothing.** Every skill is planned first (rendered, compared
//! with the record and the disk, conflicts found) and nothing is written if
//! any skill fails or is refused, unless `keep_going` asks for the others to
//! be written. Each skill is resolved and rendered once: a plan with
//! nothing to do keeps no bytes, one that writes keeps what it writes, up
//! to `KEEP_BYTES` over all skills; past that, a plan keeps digests only
//! and its skill is rendered again when it is written (and its bytes
//! checked against the plan), so memory stays bounded. The record is written with both the
//! old and the new digest of every file about to change before any file is,
//! and with the new ones after, so an interrupted export leaves a record
//! that accounts for every file it touched. A directory that does not exist
//! yet is built beside its place and renamed into it whole.
//!
//! **Confinement and concurrency** are the output directory's own business:
//! see [`OutDir`].

mod check;
mod checked;
mod diff;
mod ledger;
mod outdir;
mod plan;
mod record;
mod rendered;
mod run;
mod write;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

pub use checked::{DirCheck, SkillDrift, skill_place};
pub(crate) use diff::short_diff;
use ledger::Ledger;
pub use outdir::{EntryKind, OutDir};
use plan::{Action, Ctx, Plan, on_disk, read_record};
pub use record::RECORD_NAME;
use record::{Digest, FileRecord, Record, SkillRecord};
use rendered::Made;
pub use write::{
    Wrote, create_new, make_dirs, make_parent, may_write_schema, prepare_new_in_layer,
    remove_made_dir, write_atomic, write_atomic_making_dirs, write_if_absent, write_schema,
};

use crate::engine::Skills;
use crate::error::{Diagnostic, Error, Result};
use crate::source::Located;
use crate::text::{EXCERPT_CHARS, excerpt};

/// The most bytes of planned output kept from planning to writing, over
/// all skills; the skills planned past it are rendered again to be written.
/// (One byte in the crate's own tests, which so take the path past it.)
const KEEP_BYTES: usize = if cfg!(test) { 1 } else { 64 << 20 };

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
    /// The machine-local state directory ([`crate::Env::state_dir`]),
    /// where export keeps a ledger of what it wrote into each output
    /// directory (see [`Skills::export_with`]). `None`: no ledger, and a
    /// claim of the directory's record is honoured only for a file that
    /// holds what export writes now or is not there.
    pub state_dir: Option<&'a Path>,
    /// The consumer to export for ([`crate::target`]): its format (instead
    /// of `format`), its fields, renderings and translations, and its rules,
    /// which a skill must pass to be exported. A skill switched off for it
    /// (the spec's `enabled_field` or `targets_field`) is not exported, and
    /// what export wrote of it before is removed.
    pub target: Option<&'a crate::target::Target>,
    /// The person's trust in projects ([`crate::source::trust`]): an
    /// export outside the project whose own layer is the team layer takes
    /// it only if it is trusted as it is now. `None`: nothing is trusted.
    pub trust: Option<&'a crate::source::trust::TrustStore>,
    /// Also give what [`Skills::validate`] warns about each skill written,
    /// and about each skill left out for want of a lower layer that
    /// defines it (an orphan, [`Skills::is_orphan`]) ([`Exported::warnings`]),
    /// found from the skill as it was resolved to be written.
    pub warnings: bool,
    /// With `warnings`: also what [`Skills::validate`] warns about each
    /// skill whose output is already up to date, so that a command that
    /// stands for validate and export at once (`sync`) says everything
    /// validate would of the skills it exports.
    pub warnings_unchanged: bool,
    /// Write nothing if [`Skills::validate`] finds any problem, error or
    /// warning, in the layers or any skill: the export then fails with
    /// [`Error::Strict`]. The problems are found from the skills as
    /// resolved for the export, each read and merged once.
    pub strict: bool,
    /// The output directory lies inside the git work tree the command runs
    /// in ([`crate::context::Context::is_committed`]): its record is the
    /// repository's own, committed with the files it claims, so its claims
    /// are honoured without this machine's ledger. Whoever could forge
    /// such a record could edit the files it claims in the same commit;
    /// the ledger guards the directories where a forged record is the
    /// attack, those outside the repository (`~/.claude/skills`), and a
    /// machine that never exported there (a CI job after an update) can
    /// still export into the project's own directories.
    pub in_repository: bool,
    /// For a check ([`Skills::export_drift_with`]): report what the
    /// directory holds that no layer provides and no record lists
    /// ([`Drift::Extra`]), as an audit of what is deployed does; export
    /// itself never touches it.
    pub extra: bool,
}

impl ExportOptions<'_> {
    /// The format written: the target's, else `format`.
    pub fn effective_format(&self) -> Format {
        self.target.map_or(self.format, |t| t.format)
    }
}

/// What [`Skills::export_with`] did.
#[derive(Debug, Default)]
pub struct Exported {
    /// Skills whose output was written (new or changed files, or files
    /// removed that the skill no longer has), by name.
    pub written: Vec<String>,
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
    /// Skills the record lists that no layer provides (with `prune`) or
    /// that are switched off, whose output no export on this machine wrote
    /// ([`ConflictKind::Unconfirmed`]): left alone; `--adopt NAME`
    /// confirms the claim.
    pub unconfirmed: Vec<Conflict>,
    /// With [`ExportOptions::warnings`]: what validate warns about the
    /// skills written (and, with [`ExportOptions::warnings_unchanged`],
    /// those up to date) and the skills left out as orphans, by skill name.
    pub warnings: Vec<crate::error::Diagnostic>,
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
    /// What is there.
    Unmanaged(EntryKind),
    /// Files the record lists were changed by hand since.
    HandEdited,
    /// The record lists it, but no export on this machine wrote (or found)
    /// the files it claims that are there: the claim is not honoured, and
    /// the output is treated as export's own only once `--adopt NAME` (or
    /// `--adopt-all`, for a skill a layer provides) says so. What is
    /// there. The lines name the files.
    Unconfirmed(EntryKind),
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
    /// layer provides; what is there.
    Unmanaged(EntryKind),
    /// Besides another drift: the record claims files there (`! path`)
    /// that no export on this machine wrote, and that do not hold what
    /// export writes now, so an export here refuses to overwrite or remove
    /// them until `--adopt NAME` ([`ConflictKind::Unconfirmed`]).
    Unconfirmed(Vec<String>),
    /// Only with [`ExportOptions::extra`]: output of a skill no layer
    /// provides and no record lists (a hand-written skill, another tool's):
    /// what is deployed that the lock and the layers do not give. Export
    /// never touches it; an audit counts it.
    Extra(EntryKind),
}

pub use crate::target::Format;

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
            sha256: Digest::of(&self.bytes),
            size: self.bytes.len() as u64,
            executable: self.executable,
            was: None,
        }
    }
}

/// One skill's output.
pub(crate) type Rendered = Vec<OutFile>;

impl Skills {
    /// Writes every effective skill to `dir/<name>.json`; see
    /// [`Skills::export_with`]. Keeps no ledger
    /// ([`ExportOptions::state_dir`]): the record's claims count only for
    /// files that hold what export writes now.
    pub fn export(&self, dir: &Path, prune: bool, jobs: usize) -> Result<Exported> {
        self.export_as(dir, Format::Json, prune, jobs)
    }

    /// Writes every effective skill to `dir` in `format`; see
    /// [`Skills::export_with`]. Keeps no ledger, as [`Skills::export`].
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
        self.check_reach(dir, options)?;
        // Under `strict`, with what validate says before any one skill.
        let (catalog, prelude) = if options.strict {
            self.catalog_report()?
        } else {
            (self.layers().catalog()?, Vec::new())
        };
        let out = OutDir::open_with(dir, options.boundary, self.layers().cwd(), options.on_wait)?;
        if out.is_new() {
            check_adopt(&catalog, None, &out, options)?;
            return self.export_new(out, &catalog, prelude, options);
        }
        let (record, ledger) = record_and_ledger(&out, options.effective_format(), options);
        let record = record?;
        check_adopt(&catalog, record.as_ref().map(|(r, _)| r), &out, options)?;
        run::Export::new(self, &out, &catalog, record, ledger?, options).run(prelude)
    }

    /// Refuses, before anything is written or removed, an export into
    /// `dir` outside the project whose own layer is the team layer, unless
    /// the person trusts that layer as it is now ([`crate::source::trust`]).
    fn check_reach(&self, dir: &Path, options: &ExportOptions) -> Result<()> {
        use crate::source::trust::{Snapshot, TrustState};
        let Some((project, cwd)) = self.layers().project() else {
            return Ok(());
        };
        if project.holds(dir, cwd) {
            return Ok(());
        }
        // Whatever of the project is there: its layer when it is a
        // directory, and the files beside it whether or not it is (a
        // project whose `skills` is missing, or a file, still feeds the
        // export through its sources).
        let team = &self.layers().dirs()[1];
        let now = Snapshot::of_project(project, team.root.as_deref(), Some(cwd))?;
        let state = match options.trust {
            Some(store) => store.state(project, &now)?,
            None => TrustState::Untrusted,
        };
        let changes = match state {
            TrustState::Trusted => return Ok(()),
            TrustState::Untrusted => None,
            TrustState::Changed(c) => Some(c),
        };
        Err(Error::Untrusted {
            layer: team.path.clone(),
            project: project.root.clone(),
            out: dir.to_path_buf(),
            changes,
        })
    }

    /// Under `options.strict`: what [`Skills::validate`] says of skill
    /// `name`, from the skill as `made` for the export when it resolved.
    fn strict_report(
        &self,
        name: &str,
        located: &[Located],
        made: &Result<Made>,
        options: &ExportOptions,
    ) -> Vec<Diagnostic> {
        if !options.strict {
            return Vec::new();
        }
        match made {
            Ok(made) => self.resolved_report(name, located, &made.resolved, made.walked.as_deref()),
            Err(_) => self.validate_located(name, located),
        }
        .diagnostics
    }

    /// With `options.warnings`: what [`Skills::validate`] warns about skill
    /// `name`, resolved as `resolved`, when it is left out of the export
    /// as an orphan (a switched-off skill is left out as asked, silently).
    fn left_out_warnings(
        &self,
        name: &str,
        located: &[Located],
        resolved: &crate::merge::Resolved,
        options: &ExportOptions,
    ) -> Vec<Diagnostic> {
        if !options.warnings
            || options.strict
            || self
                .orphan(resolved.effective(), resolved.fragments(), options.target)
                .is_none()
        {
            return Vec::new();
        }
        self.warnings_at(name, located, resolved, None)
    }

    /// With `options.warnings`: what [`Skills::validate`] warns about skill
    /// `name`, resolved as `resolved` (with its own files, `walked`, when
    /// they were listed), when it is written (`writes`) or, with
    /// `warnings_unchanged`, up to date. None under `strict`, where a skill
    /// is written only if it has none.
    fn export_warnings(
        &self,
        options: &ExportOptions,
        writes: bool,
        name: &str,
        located: &[Located],
        resolved: &crate::merge::Resolved,
        walked: Option<&[crate::source::files::SkillFile]>,
    ) -> Vec<Diagnostic> {
        if options.warnings && !options.strict && (writes || options.warnings_unchanged) {
            self.warnings_at(name, located, resolved, walked)
        } else {
            Vec::new()
        }
    }

    /// Lists `plan`'s hand-added files in `report`.
    fn report_kept(&self, out: &OutDir, plan: &Plan, report: &mut Exported) {
        report
            .kept
            .extend(plan.hand_added.iter().map(|rel| out.shown(rel)));
        report.kept_more += plan.hand_added_more;
    }

    /// Writes and removes what `plan` says for skill `name` (`files`: what
    /// it renders now, checked against the plan's digests; none for a
    /// pruned skill).
    fn carry_out(
        &self,
        out: &OutDir,
        name: &str,
        plan: &Plan,
        files: &[OutFile],
        format: Format,
    ) -> Result<()> {
        let fail = |rel: &str| {
            let path = out.shown(rel);
            move |source| Error::Write { path, source }
        };
        if plan.files.iter().any(|f| f.action == Action::Write) {
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
        prelude: Vec<Diagnostic>,
        options: &ExportOptions,
    ) -> Result<Exported> {
        let format = options.effective_format();
        let halt = Halt::default();
        let results = crate::par::map(catalog, options.jobs, |(name, located)| {
            let made = rendered::made_for(self, name, located, format, options.target);
            let problems = self.strict_report(name, located, &made, options);
            if !problems.is_empty() {
                // Refused under `strict`: nothing more is written.
                halt.stop.store(true, Ordering::Relaxed);
            }
            let written = self.write_new(&out, name, located, made, options, &halt);
            (written, problems)
        });
        // Dropped on refusal, the staging directory goes.
        let (results, problems): (Vec<_>, Vec<_>) = results.into_iter().unzip();
        strict_refusal(prelude, problems)?;
        let mut report = Exported {
            stale_removed: out.stale_removed().to_vec(),
            new_dir: true,
            ..Exported::default()
        };
        let mut record = Record::new(format);
        record.target = target(options).map(str::to_owned);
        for ((name, _), r) in catalog.iter().zip(results) {
            match r {
                Ok(Some((Some(entry), warnings))) => {
                    report.written.push(name.clone());
                    report.warnings.extend(warnings);
                    record.skills.insert(name.clone(), entry);
                }
                Ok(Some((None, warnings))) => report.warnings.extend(warnings),
                Ok(None) => report.not_written += 1,
                Err(e) => report.failed.push(*e),
            }
        }
        let whole = !halt.io_failed.load(Ordering::Relaxed)
            && (report.failed.is_empty() || options.keep_going);
        if !whole {
            // Whole or not at all: dropped, the staging directory goes.
            drop(out);
            report.not_written += std::mem::take(&mut report.written).len();
            // Warnings go with the skills written, and none was.
            report.warnings.clear();
            return Ok(report);
        }
        self.put_new_in_place(out, record, options)?;
        Ok(report)
    }

    /// Writes skill `name`'s files (`made`) into the new directory's
    /// staging directory `out`, and returns its record entry and warnings;
    /// for a skill switched off or an orphan, only its warnings; `None`
    /// once `halt` says writing more is pointless. A failure to make the
    /// skill halts the rest unless `keep_going`; a failed write halts it
    /// always.
    fn write_new(
        &self,
        out: &OutDir,
        name: &str,
        located: &[Located],
        made: Result<Made>,
        options: &ExportOptions,
        halt: &Halt,
    ) -> NewSkill {
        let failed = |e| {
            if !options.keep_going {
                halt.stop.store(true, Ordering::Relaxed);
            }
            Box::new(e)
        };
        let Made {
            files,
            resolved,
            walked,
        } = made.map_err(failed)?;
        // Switched off, or an orphan: nothing to write.
        let Some(files) = files.map_err(failed)? else {
            let warnings = self.left_out_warnings(name, located, &resolved, options);
            return Ok(Some((None, warnings)));
        };
        if halt.stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let mut entry = Vec::with_capacity(files.len());
        for f in &files {
            if let Err(source) = out.write(&f.rel, &f.bytes, f.executable, false) {
                halt.stop.store(true, Ordering::Relaxed);
                halt.io_failed.store(true, Ordering::Relaxed);
                return Err(Box::new(Error::Write {
                    path: out.shown(&f.rel),
                    source,
                }));
            }
            entry.push((f.rel.clone(), f.record()));
        }
        let walked = walked.as_deref();
        let warnings = self.export_warnings(options, true, name, located, &resolved, walked);
        Ok(Some((Some(SkillRecord::new(entry)), warnings)))
    }

    /// Writes `record` into the staging directory `out`, puts the new
    /// directory in place, and records in the ledger that export here
    /// wrote every file the record lists.
    fn put_new_in_place(
        &self,
        mut out: OutDir,
        record: Record,
        options: &ExportOptions,
    ) -> Result<()> {
        let spec_sha = self.spec().sha256();
        out.write_with(RECORD_NAME, false, false, |w| {
            record.write_capped(w, &spec_sha, &BTreeMap::new())
        })
        .map_err(|source| Error::Write {
            path: out.shown(RECORD_NAME),
            source,
        })?;
        out.put_in_place()?;
        let mut ledger = Ledger::replacing(options.state_dir, &out, record);
        ledger.write(&spec_sha, &BTreeMap::new())?;
        Ok(())
    }

    /// Compares `dir`'s manifests with the effective skills; see
    /// [`Skills::export_drift_with`].
    pub fn export_drift(&self, dir: &Path, jobs: usize) -> Result<Vec<(String, Drift)>> {
        self.export_drift_as(dir, Format::Json, jobs)
    }

    /// Compares what `dir` holds with what exporting in `format` would
    /// write; see [`Skills::export_drift_with`].
    pub(crate) fn export_drift_as(
        &self,
        dir: &Path,
        format: Format,
        jobs: usize,
    ) -> Result<Vec<(String, Drift)>> {
        self.export_drift_with(
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
    pub fn export_drift_with(
        &self,
        dir: &Path,
        options: &ExportOptions,
    ) -> Result<Vec<(String, Drift)>> {
        self.require_layers()?;
        let format = options.effective_format();
        let Some(out) =
            OutDir::open_read(dir, options.boundary, self.layers().cwd(), options.on_wait)?
        else {
            return Err(Error::NotExported {
                dir: dir.components().collect(),
            });
        };
        // The ledger is read, never written: the check only says which
        // claims an export here would not honour.
        let (old, ledger) = record_and_ledger(&out, format, options);
        let old = old?.map(|(r, _)| r).unwrap_or_else(|| Record::new(format));
        let ledger = ledger?;
        let disk = on_disk(&out, format)?;
        let check = check::Check {
            skills: self,
            ctx: Ctx {
                out: &out,
                format,
                all_lines: true,
                cap: self.max_manifest_bytes(),
                record_committed: options.in_repository,
            },
            old,
            ledger,
            disk,
            options,
        };
        check.run(&self.layers().catalog()?)
    }
}

/// Why a new directory's export writes no more: once a write fails (a full
/// disk), or a skill fails and all must succeed, writing more is
/// pointless; the others are still resolved, to report every broken one.
#[derive(Default)]
struct Halt {
    /// Write nothing more.
    stop: AtomicBool,
    /// A write failed.
    io_failed: AtomicBool,
}

/// One skill of a new directory's export: its record entry (`None`: left
/// out) and warnings; `Ok(None)`: not written. One small result per skill
/// (errors boxed): with 100,000 skills the results are held three times
/// over while the workers' parts are put back in order.
type NewSkill = std::result::Result<Option<(Option<SkillRecord>, Vec<Diagnostic>)>, Box<Error>>;

/// Refuses an `--adopt NAME` that names neither a skill a layer provides
/// (in `catalog`, sorted by name) nor one the directory's `record` lists:
/// adopting takes over the one, or confirms the record's claim to the
/// other.
fn check_adopt(
    catalog: &[(String, Vec<Located>)],
    record: Option<&Record>,
    out: &OutDir,
    options: &ExportOptions,
) -> Result<()> {
    for name in &options.adopt {
        let provided = catalog
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
            .is_ok();
        let listed = record.is_some_and(|r| r.skills.contains_key(name));
        if provided || listed {
            continue;
        }
        return Err(Error::Refused {
            kind: crate::error::ErrorKind::NotFound,
            path: None,
            message: format!(
                "--adopt {}: no layer provides a skill of that name{}",
                excerpt(name, EXCERPT_CHARS),
                if out.is_new() {
                    String::new()
                } else {
                    format!(
                        ", and {} lists none",
                        crate::text::path(&out.shown(RECORD_NAME))
                    )
                }
            ),
        });
    }
    Ok(())
}

/// The record of `out` and its ledger. Each is a JSON parse of up to
/// [`record::MAX_RECORD_BYTES`] that every later step waits on, and
/// neither needs the other: with more than one job they are read side by
/// side. Both are always read, so an error in either is the same
/// whatever the jobs; the record's comes first.
fn record_and_ledger(
    out: &OutDir,
    format: Format,
    options: &ExportOptions,
) -> (Result<Option<(Record, record::Digest)>>, Result<Ledger>) {
    let ledger = || Ledger::open(options.state_dir, out, format);
    if options.jobs < 2 {
        return (
            read_record(out, format, target(options), &also_accepted(options)),
            ledger(),
        );
    }
    std::thread::scope(|s| {
        let ledger = s.spawn(ledger);
        let record = read_record(out, format, target(options), &also_accepted(options));
        let ledger = ledger
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (record, ledger)
    })
}

/// The other names a directory's record may give the target an export
/// is for: its own name, and those of the targets it is written for too.
fn also_accepted<'a>(options: &'a ExportOptions) -> Vec<&'a str> {
    options
        .target
        .map(|t| {
            std::iter::once(t.name.as_str())
                .chain(t.shared_with().iter().map(String::as_str))
                .collect()
        })
        .unwrap_or_default()
}

/// The name of the target an export is for, if any, as its record keeps
/// it: the target it renders as, so that the targets sharing a directory
/// ([`crate::target::Target::renders_as`]) find it theirs.
fn target<'a>(options: &'a ExportOptions) -> Option<&'a str> {
    options.target.map(|t| t.renders_as.as_str())
}

/// The error for a skill whose layers changed between planning and writing.
fn changed_meanwhile(out: &OutDir, name: &str, format: Format) -> Error {
    Error::Refused {
        kind: crate::error::ErrorKind::Busy,
        path: None,
        message: format!(
            "{}: its layers changed while the export was running; nothing more of it was written (export again)",
            crate::text::path(&out.shown(&format.entry(name)))
        ),
    }
}

/// [`Error::Strict`] if `prelude` or any skill's `problems` holds one: what
/// [`Skills::validate`] would report, in its order.
fn strict_refusal(prelude: Vec<Diagnostic>, problems: Vec<Vec<Diagnostic>>) -> Result<()> {
    let mut all = prelude;
    all.extend(problems.into_iter().flatten());
    if all.is_empty() {
        Ok(())
    } else {
        Err(Error::Strict { problems: all })
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::source::Layers;
    use crate::spec::MergeSpec;

    /// Past the budget of kept bytes (none here), a skill whose output
    /// changed is rendered again to be written, and written whole.
    #[test]
    fn past_the_budget_a_skill_is_rendered_again_to_be_written() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("base")).unwrap();
        let write = |text: &str| std::fs::write(root.join("base/w.yaml"), text).unwrap();
        let spec =
            MergeSpec::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("spec/mergespec.yaml"))
                .unwrap();
        let skills = super::Skills::new(spec, Layers::from_root(&root), 1 << 20);
        let out = root.join("out");
        let state = root.join("state");
        let options = super::ExportOptions {
            jobs: 1,
            state_dir: Some(&state),
            ..Default::default()
        };
        write("description: One.\n");
        let first = skills.export_with(&out, &options).unwrap();
        assert_eq!(first.written, ["w"]);
        write("description: Two.\n");
        let second = skills.export_with(&out, &options).unwrap();
        assert_eq!(second.written, ["w"], "{second:?}");
        let json = std::fs::read_to_string(out.join("w.json")).unwrap();
        assert!(json.contains("Two."), "{json}");
    }
}
