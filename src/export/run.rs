//! An export into a directory that holds an earlier one's output, step by
//! step: every skill a layer provides is planned ([`Export::plan`]); the
//! skills the record lists that go are planned for removal
//! ([`Export::plan_removals`]); the plans are sorted into those that go
//! ahead and those refused ([`Export::sort`]); the record claims every file
//! about to change ([`Export::claim`]); the files are written
//! ([`Export::write`]) and the stale skills removed
//! ([`Export::remove_stale`]); and the record and the ledger say what was
//! done ([`Export::record`]). The rules each step follows are the
//! module's ([`super`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::ledger::Ledger;
use super::plan::{self, Ctx, Plan, Planned, Pruned, Trust, on_disk};
use super::record::{Digest, Record, SkillRecord};
use super::rendered::{self, Made};
use super::{
    Conflict, ConflictKind, EntryKind, ExportOptions, Exported, Format, KEEP_BYTES, OutDir,
    OutFile, RECORD_NAME, Rendered, strict_refusal, target,
};
use crate::engine::Skills;
use crate::error::{Diagnostic, Error, Result};
use crate::source::Located;

/// What the output directory holds, by skill name.
type Disk = BTreeMap<String, EntryKind>;

/// One export into a directory that exists, and what it has found so far.
pub(super) struct Export<'a> {
    skills: &'a Skills,
    options: &'a ExportOptions<'a>,
    out: &'a OutDir,
    format: Format,
    ctx: Ctx<'a>,
    /// Every skill a layer provides, by name, in order.
    catalog: &'a [(String, Vec<Located>)],
    /// The skills `--adopt` names.
    adopted: BTreeSet<&'a str>,
    /// One copy of the record, changed in place once the files are written.
    record: Record,
    /// The digest of the record as read (the bytes are not kept), if there
    /// was one.
    old_digest: Option<Digest>,
    ledger: Ledger,
    spec_sha: Digest,
    report: Exported,
    /// What is said of each skill not written, or written, whatever the
    /// other writes do; by name, as validate orders it.
    said: BTreeMap<&'a str, Vec<Diagnostic>>,
}

/// A skill a layer provides whose plan goes ahead.
struct Go<'a> {
    name: &'a str,
    plan: Plan,
    /// Its files as rendered when it was planned; `None` past the budget
    /// of kept bytes (rendered again to be written).
    files: Option<Rendered>,
    /// What validate warns about it, said once it is written.
    warnings: Vec<Diagnostic>,
}

impl<'a> Export<'a> {
    /// An export of `catalog` into `out`, whose `record` (with the digest
    /// of its bytes) and `ledger` were read.
    pub(super) fn new(
        skills: &'a Skills,
        out: &'a OutDir,
        catalog: &'a [(String, Vec<Located>)],
        record: Option<(Record, Digest)>,
        ledger: Ledger,
        options: &'a ExportOptions<'a>,
    ) -> Export<'a> {
        let format = options.effective_format();
        let (mut record, old_digest) = match record {
            Some((record, digest)) => (record, Some(digest)),
            None => (Record::new(format), None),
        };
        // The directory is now the target's (an older record names none).
        record.target = target(options).map(str::to_owned);
        Export {
            skills,
            options,
            out,
            format,
            ctx: Ctx {
                out,
                format,
                all_lines: false,
                cap: skills.max_manifest_bytes(),
                record_committed: options.in_repository,
            },
            catalog,
            adopted: options.adopt.iter().map(String::as_str).collect(),
            record,
            old_digest,
            ledger,
            spec_sha: skills.spec().sha256(),
            report: Exported {
                stale_removed: out.stale_removed().to_vec(),
                ..Exported::default()
            },
            said: BTreeMap::new(),
        }
    }

    /// Runs the export; `prelude`: what validate says before any one
    /// skill, under `strict`.
    pub(super) fn run(mut self, prelude: Vec<Diagnostic>) -> Result<Exported> {
        let disk = on_disk(self.out, self.format)?;
        let planned = self.plan(&disk, prelude)?;
        let stale = self.stale(&planned);
        let pruned = self.plan_removals(&stale, &disk);
        drop(disk);
        let (go, learned) = self.sort(planned);
        let removals = self.sort_removals(stale, pruned);
        let stopped = !self.report.failed.is_empty() || !self.report.refused.is_empty();
        if stopped && !self.options.keep_going {
            return Ok(self.halt(&go));
        }
        self.learn(&learned);
        let pending = self.claim(&go)?;
        let (results, stopped) = self.write(&go);
        self.record_written(go, results, pending);
        self.remove_stale(&removals, stopped);
        self.record()
    }

    /// Whether `--adopt` or `--adopt-all` takes over skill `name`'s output,
    /// which the record lists (`listed`) or not.
    fn adopts(&self, name: &str, listed: bool) -> bool {
        self.adopted.contains(name) || (self.options.adopt_all && !listed)
    }

    /// Plans every skill a layer provides, on the worker threads; under
    /// `strict`, refuses the whole export if validate finds anything.
    fn plan(&self, disk: &Disk, prelude: Vec<Diagnostic>) -> Result<Vec<Planned>> {
        let kept = AtomicUsize::new(0);
        let planned = crate::par::map(self.catalog, self.options.jobs, |(name, located)| {
            self.plan_skill(name, located, disk, &kept)
        });
        let (planned, problems): (Vec<Planned>, Vec<_>) = planned.into_iter().unzip();
        strict_refusal(prelude, problems)?;
        Ok(planned)
    }

    /// Decides what exporting skill `name` takes: nothing (up to date), a
    /// plan (what to write and remove, and what stands in the way), or
    /// nothing for a skill switched off or that fails. Keeps the files to
    /// write while the budget of kept bytes (`kept`, over all skills)
    /// lasts. With what validate says of the skill, under `strict`.
    fn plan_skill(
        &self,
        name: &str,
        located: &[Located],
        disk: &Disk,
        kept: &AtomicUsize,
    ) -> (Planned, Vec<Diagnostic>) {
        let options = self.options;
        let made = rendered::made_for(self.skills, name, located, self.format, options.target);
        let problems = self.skills.strict_report(name, located, &made, options);
        let Made {
            files,
            resolved,
            walked,
        } = match made {
            Ok(made) => made,
            Err(e) => return (Planned::Failed(Box::new(e)), problems),
        };
        let files = match files {
            Ok(Some(files)) => files,
            Ok(None) => {
                let warnings = self
                    .skills
                    .left_out_warnings(name, located, &resolved, options);
                return (Planned::Off(warnings), problems);
            }
            Err(e) => return (Planned::Failed(Box::new(e)), problems),
        };
        let rec = self.record.skills.get(name);
        let on = disk.get(name).copied();
        let adopt = self.adopts(name, rec.is_some());
        // First with the entry as it stands: a skill whose output is up
        // to date holds what export writes in every file it claims,
        // which honours every claim.
        let plan = self
            .ctx
            .plan(name, Some(&files), rec, on, adopt, options.force);
        let warnings = |writes| {
            let walked = walked.as_deref();
            self.skills
                .export_warnings(options, writes, name, located, &resolved, walked)
        };
        // Only plans that do something are kept: a re-export with
        // nothing to do holds no more than a flag per skill.
        if plan.is_noop(rec) {
            let learn = self.ledger.record.skills.get(name) != rec;
            let warnings = warnings(false);
            return (Planned::Unchanged { learn, warnings }, problems);
        }
        let plan = self.trusted(plan, name, &files, on);
        let warnings = warnings(plan.writes());
        drop(resolved);
        let files = if !plan.writes() {
            Some(Vec::new())
        } else {
            let size: usize = files.iter().map(|f| f.bytes.len()).sum();
            (kept.fetch_add(size, Ordering::Relaxed) + size <= KEEP_BYTES).then_some(files)
        };
        (Planned::Ready(Box::new(plan), files, warnings), problems)
    }

    /// `plan`, made again for skill `name` with only the record's claims
    /// that this machine's ledger or the files there confirm: with none,
    /// the skill is unmanaged until adopted, and then nothing it claims is
    /// removed.
    fn trusted(&self, plan: Plan, name: &str, files: &[OutFile], on: Option<EntryKind>) -> Plan {
        let rec = self.record.skills.get(name);
        let led = self.ledger.record.skills.get(name);
        let force = self.options.force;
        match self.ctx.trust(name, Some(files), rec, led, on) {
            Trust::None | Trust::Whole(_) => plan,
            Trust::Part(honoured) => {
                let adopt = self.adopts(name, true);
                self.ctx
                    .plan(name, Some(files), Some(&honoured), on, adopt, force)
            }
            Trust::Untrusted(lines) => {
                // As if the record did not list it.
                let adopt = self.adopts(name, false);
                let mut plan = self.ctx.plan(name, Some(files), None, on, adopt, force);
                if plan.unmanaged.is_some() {
                    plan.unconfirmed = Some(lines);
                }
                plan
            }
        }
    }

    /// The skills the record lists whose output goes: one no layer
    /// provides with `--prune`, one switched off (`planned` says which) in
    /// any case (what export wrote of it, and nothing else).
    fn stale(&self, planned: &[Planned]) -> Vec<String> {
        // Switched off: gone, as far as the output goes.
        let off: BTreeSet<&str> = self
            .catalog
            .iter()
            .zip(planned)
            .filter(|(_, p)| matches!(p, Planned::Off(_)))
            .map(|((n, _), _)| n.as_str())
            .collect();
        let live: BTreeSet<&str> = self
            .catalog
            .iter()
            .map(|(n, _)| n.as_str())
            .filter(|n| !off.contains(n))
            .collect();
        self.record
            .skills
            .keys()
            .filter(|n| !live.contains(n.as_str()))
            .filter(|n| self.options.prune || off.contains(n.as_str()))
            .cloned()
            .collect()
    }

    /// Plans the removal of every `stale` skill, on the worker threads.
    fn plan_removals(&self, stale: &[String], disk: &Disk) -> Vec<Pruned> {
        crate::par::map(stale, self.options.jobs, |name| {
            self.plan_removal(name, disk)
        })
    }

    /// Decides what removing stale skill `name` takes: only its entry
    /// when nothing is at its place, nothing when the record's claim to it
    /// is not confirmed (and not adopted), else a plan.
    fn plan_removal(&self, name: &str, disk: &Disk) -> Pruned {
        let Some(on) = disk.get(name).copied() else {
            // Nothing at its place: only its entry goes.
            return Pruned::Forget;
        };
        let rec = self.record.skills.get(name);
        let trust = match rec {
            // Adopted: the person confirms its claims.
            Some(rec) if self.adopted.contains(name) => Trust::Whole(rec),
            _ => {
                let led = self.ledger.record.skills.get(name);
                self.ctx.trust(name, None, rec, led, Some(on))
            }
        };
        if let Trust::Untrusted(lines) = trust {
            return Pruned::Unconfirmed(Box::new(Conflict {
                name: name.to_owned(),
                kind: ConflictKind::Unconfirmed(on),
                path: plan::shown_output(self.out, name, self.format),
                lines,
            }));
        }
        let force = self.options.force;
        Pruned::Plan(Box::new(self.ctx.plan(
            name,
            None,
            trust.entry(),
            Some(on),
            false,
            force,
        )))
    }

    /// Sorts the skills planned into those that go ahead and those that
    /// fail or are refused (in the report); also the skills up to date
    /// whose entry the ledger learns.
    fn sort(&mut self, planned: Vec<Planned>) -> (Vec<Go<'a>>, Vec<&'a str>) {
        let mut go = Vec::new();
        let mut learned = Vec::new();
        let catalog = self.catalog;
        for ((name, _), p) in catalog.iter().zip(planned) {
            match p {
                Planned::Off(warnings) => {
                    self.said.insert(name, warnings);
                }
                Planned::Failed(e) => self.report.failed.push(*e),
                Planned::Unchanged { learn, warnings } => {
                    self.report.unchanged += 1;
                    self.said.insert(name, warnings);
                    if learn {
                        learned.push(name.as_str());
                    }
                }
                Planned::Ready(plan, files, warnings) => {
                    match plan.conflict(name, self.format, self.out) {
                        Some(c) => self.report.refused.push(c),
                        None => go.push(Go {
                            name,
                            plan: *plan,
                            files,
                            warnings,
                        }),
                    }
                }
            }
        }
        (go, learned)
    }

    /// Sorts the `stale` skills planned for removal into those that go
    /// (with a plan, or none when only the entry goes) and those left
    /// alone (in the report).
    fn sort_removals(
        &mut self,
        stale: Vec<String>,
        pruned: Vec<Pruned>,
    ) -> Vec<(String, Option<Box<Plan>>)> {
        let mut go = Vec::new();
        for (name, p) in stale.into_iter().zip(pruned) {
            match p {
                Pruned::Forget => go.push((name, None)),
                Pruned::Unconfirmed(c) => self.report.unconfirmed.push(*c),
                Pruned::Plan(plan) => match plan.conflict(&name, self.format, self.out) {
                    Some(c) => self.report.refused.push(c),
                    None => go.push((name, Some(plan))),
                },
            }
        }
        go
    }

    /// Whole or nothing: the report when something failed or was refused
    /// and nothing is written; the skills that would have gone ahead are
    /// counted as not written (or up to date).
    fn halt(mut self, go: &[Go]) -> Exported {
        for Go { plan, .. } in go {
            if plan.writes() {
                self.report.not_written += 1;
            } else {
                self.report.unchanged += 1;
            }
        }
        self.report
    }

    /// The ledger learns the entries of the skills `learned`, whose files
    /// were found holding what export writes.
    fn learn(&mut self, learned: &[&str]) {
        for &name in learned {
            if let Some(entry) = self.record.skills.get(name) {
                let entry = entry.clone();
                self.ledger.record.skills.insert(name.to_owned(), entry);
            }
        }
    }

    /// Claims the files about to change before any is: the ledger, then
    /// the record, list each with both its old and its new digest, so an
    /// interrupted export leaves a record that accounts for every file it
    /// touched. Returns those entries, by skill.
    fn claim(&mut self, go: &[Go]) -> Result<BTreeMap<String, SkillRecord>> {
        let pending: BTreeMap<String, SkillRecord> = go
            .iter()
            .filter(|go| go.plan.writes())
            .map(|go| {
                let old = self.record.skills.get(go.name);
                (go.name.to_owned(), go.plan.pending(old))
            })
            .collect();
        if !pending.is_empty() {
            self.ledger.write(&self.spec_sha, &pending)?;
            self.write_record(&pending)?;
        }
        Ok(pending)
    }

    /// Writes the record, with `patch`'s skills in place of its own.
    fn write_record(&self, patch: &BTreeMap<String, SkillRecord>) -> Result<()> {
        self.out
            .write_with(RECORD_NAME, false, false, |w| {
                self.record.write_capped(w, &self.spec_sha, patch)
            })
            .map_err(|source| Error::Write {
                path: self.out.shown(RECORD_NAME),
                source,
            })
    }

    /// Writes what each plan that goes ahead says, on the worker threads.
    /// After a failed write no more are started: `None` for those. Also
    /// whether one failed.
    fn write(&self, go: &[Go]) -> (Vec<Option<Result<()>>>, bool) {
        let stop = AtomicBool::new(false);
        let index: BTreeMap<&str, &[Located]> = self
            .catalog
            .iter()
            .map(|(n, l)| (n.as_str(), l.as_slice()))
            .collect();
        let results = crate::par::map(go, self.options.jobs, |go| {
            if !go.plan.writes() {
                return Some(Ok(()));
            }
            if stop.load(Ordering::Relaxed) {
                return None;
            }
            let r = self.write_skill(go, index[go.name]);
            if r.is_err() {
                stop.store(true, Ordering::Relaxed);
            }
            Some(r)
        });
        (results, stop.into_inner())
    }

    /// Writes one skill's plan, with the files kept from planning or,
    /// past the budget of kept bytes, rendered again from `located`.
    fn write_skill(&self, go: &Go, located: &[Located]) -> Result<()> {
        let again;
        let files = match &go.files {
            Some(files) => files,
            None => {
                let target = self.options.target;
                let r = rendered::rendered_for(self.skills, go.name, located, self.format, target);
                again = r?.unwrap_or_default();
                &again
            }
        };
        self.skills
            .carry_out(self.out, go.name, &go.plan, files, self.format)
    }

    /// Says in the report what the writes did (`results`, one per skill in
    /// `go`), and sets each skill's entry in the record and the ledger:
    /// for a skill written or up to date, what export here wrote or
    /// verified; for one not (all) written, its entry in `pending`, which
    /// accounts for old and new.
    fn record_written(
        &mut self,
        go: Vec<Go<'a>>,
        results: Vec<Option<Result<()>>>,
        mut pending: BTreeMap<String, SkillRecord>,
    ) {
        for (go, r) in go.into_iter().zip(results) {
            let entry = match r {
                Some(Ok(())) => {
                    if go.plan.writes() {
                        self.report.written.push(go.name.to_owned());
                        self.skills
                            .report_kept(self.out, &go.plan, &mut self.report);
                    } else {
                        self.report.unchanged += 1;
                    }
                    self.said.insert(go.name, go.warnings);
                    Some(go.plan.entry())
                }
                None => {
                    self.report.not_written += 1;
                    pending.remove(go.name)
                }
                Some(Err(e)) => {
                    self.report.failed.push(e);
                    pending.remove(go.name)
                }
            };
            if let Some(entry) = entry {
                let name = go.name.to_owned();
                self.ledger
                    .record
                    .skills
                    .insert(name.clone(), entry.clone());
                self.record.skills.insert(name, entry);
            }
        }
    }

    /// Removes what export wrote of each stale skill in `removals` and
    /// forgets it, unless a write failed (`stopped`): after a failure, no
    /// more is removed.
    fn remove_stale(&mut self, removals: &[(String, Option<Box<Plan>>)], mut stopped: bool) {
        for (name, plan) in removals {
            if stopped {
                break;
            }
            let done = match plan {
                None => Ok(()),
                Some(plan) => self
                    .skills
                    .carry_out(self.out, name, plan, &[], self.format),
            };
            match done {
                Ok(()) => {
                    self.record.skills.remove(name);
                    self.ledger.record.skills.remove(name);
                    self.report.removed.push(name.clone());
                    if let Some(plan) = plan {
                        self.skills.report_kept(self.out, plan, &mut self.report);
                    }
                }
                Err(e) => {
                    stopped = true;
                    self.report.failed.push(e);
                }
            }
        }
    }

    /// Records what the export did: the record, if it changed, and the
    /// ledger, which honours a claim only where the record makes it too.
    fn record(mut self) -> Result<Exported> {
        let said = std::mem::take(&mut self.said);
        self.report.warnings = said.into_values().flatten().collect();
        if self.old_digest != Some(self.record.digest(&self.spec_sha)) {
            self.write_record(&BTreeMap::new())?;
        }
        let record = &self.record;
        self.ledger
            .record
            .skills
            .retain(|name, _| record.skills.contains_key(name));
        self.ledger.write(&self.spec_sha, &BTreeMap::new())?;
        Ok(self.report)
    }
}
