//! A check of an output directory against what an export would write
//! there ([`Skills::export_drift_with`]), step by step: each skill a layer
//! provides is compared with its output ([`Check::skill`]), then the
//! output of those no layer provides any more, or that no record lists
//! ([`Check::gone`]). Nothing is written, the ledger included.

use std::collections::{BTreeMap, BTreeSet};

use super::ledger::Ledger;
use super::outdir;
use super::plan::{Ctx, Plan, Trust};
use super::record::{Record, SkillRecord};
use super::rendered;
use super::{Drift, EntryKind, ExportOptions, RECORD_NAME};
use crate::engine::Skills;
use crate::error::{Error, Result};
use crate::source::Located;
use crate::text::{EXCERPT_CHARS, excerpt};

/// One check of an output directory, with what it read there.
pub(super) struct Check<'a> {
    pub(super) skills: &'a Skills,
    pub(super) ctx: Ctx<'a>,
    /// The directory's record (empty when there is none).
    pub(super) old: Record,
    /// This machine's ledger of what export wrote there.
    pub(super) ledger: Ledger,
    /// What the directory holds, by skill name.
    pub(super) disk: BTreeMap<String, EntryKind>,
    pub(super) options: &'a ExportOptions<'a>,
}

impl Check<'_> {
    /// Every drift of the directory from the skills of `catalog`, by
    /// name, sorted; a skill that fails to resolve is an error.
    pub(super) fn run(&self, catalog: &[(String, Vec<Located>)]) -> Result<Vec<(String, Drift)>> {
        let results = crate::par::map(catalog, self.options.jobs, |(name, located)| {
            self.skill(name, located)
        });
        // Room for a drift per skill listed or provided, once.
        let mut out = Vec::with_capacity(catalog.len() + self.old.skills.len());
        let mut errors = Vec::new();
        for ((name, _), r) in catalog.iter().zip(results) {
            match r {
                Ok(drifts) => out.extend(drifts.into_iter().map(|d| (name.clone(), d))),
                Err(e) => errors.push(e),
            }
        }
        if !errors.is_empty() {
            return Err(one_error(errors));
        }
        let live: BTreeSet<&str> = catalog.iter().map(|(n, _)| n.as_str()).collect();
        out.extend(self.gone(&live));
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// How the output of skill `name` (at `located`) differs from what an
    /// export would write: none yet, output export does not own, or the
    /// drifts its plan finds.
    fn skill(&self, name: &str, located: &[Located]) -> Result<Vec<Drift>> {
        let ctx = &self.ctx;
        let rec = self.old.skills.get(name);
        let on = self.disk.get(name).copied();
        let target = self.options.target;
        let Some(files) = rendered::rendered_for(self.skills, name, located, ctx.format, target)?
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
        // Only a skill that drifts can hold a claim export here would not
        // honour: every other file holds what it writes.
        let unconfirmed = if plan.changed.is_empty() && plan.hand_edited.is_empty() {
            None
        } else {
            let led = self.ledger.record.skills.get(name);
            match ctx.trust(name, Some(&files), rec, led, on) {
                Trust::Untrusted(lines) => Some(lines),
                _ => None,
            }
        };
        let mut out = self.drifts(name, plan, rec);
        out.extend(unconfirmed.map(Drift::Unconfirmed));
        Ok(out)
    }

    /// The drifts `plan` finds in skill `name`'s output (`rec`: its
    /// record entry): files changed, edited by hand, or added by hand.
    fn drifts(&self, name: &str, plan: Plan, rec: Option<&SkillRecord>) -> Vec<Drift> {
        let mut out = Vec::new();
        let mut changed = plan.changed.clone();
        if changed.is_empty() && plan.hand_edited.is_empty() && !plan.entry_is(rec) {
            changed.push(format!("(its entry in {RECORD_NAME} is out of date)"));
        }
        if !changed.is_empty() {
            out.push(Drift::Changed(changed));
        }
        let added = (!plan.hand_added.is_empty() || plan.walk_cut)
            .then(|| self.hand_added_lines(name, &plan));
        if !plan.hand_edited.is_empty() {
            out.push(Drift::HandEdited(plan.hand_edited));
        }
        out.extend(added.map(Drift::HandAdded));
        out
    }

    /// The lines of a [`Drift::HandAdded`]: the files `plan` found added
    /// by hand in skill `name`'s directory, and whether the walk stopped
    /// before it saw them all.
    fn hand_added_lines(&self, name: &str, plan: &Plan) -> Vec<String> {
        let mut lines: Vec<String> = plan
            .hand_added
            .iter()
            .map(|rel| format!("? {}", excerpt(self.ctx.shown(name, rel), EXCERPT_CHARS)))
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
        lines
    }

    /// The drifts of output whose skill no layer provides (not in
    /// `live`): removed, when the record lists it (and unconfirmed, when
    /// `--prune` would leave it alone); with [`ExportOptions::extra`],
    /// output no record lists.
    fn gone(&self, live: &BTreeSet<&str>) -> Vec<(String, Drift)> {
        let mut out = Vec::new();
        for (name, rec) in &self.old.skills {
            if live.contains(name.as_str()) {
                continue;
            }
            out.push((name.clone(), Drift::Removed));
            // Its output is there, and --prune would leave it alone.
            let led = self.ledger.record.skills.get(name);
            if let Some(on) = self.disk.get(name).copied()
                && let Trust::Untrusted(lines) =
                    self.ctx.trust(name, None, Some(rec), led, Some(on))
            {
                out.push((name.clone(), Drift::Unconfirmed(lines)));
            }
        }
        if self.options.extra {
            for (name, kind) in &self.disk {
                if !live.contains(name.as_str()) && !self.old.skills.contains_key(name) {
                    out.push((name.clone(), Drift::Extra(*kind)));
                }
            }
        }
        out
    }
}

/// The error for the skills that failed to resolve (`errors`, not empty):
/// every diagnostic they carry, else the first.
fn one_error(mut errors: Vec<Error>) -> Error {
    let diags = errors
        .iter()
        .flat_map(|e| e.diagnostics().to_vec())
        .collect::<Vec<_>>();
    if diags.is_empty() {
        errors.remove(0)
    } else {
        Error::Invalid(diags)
    }
}
