//! `update`, as data: fetching the sources again, what that brings
//! ([`super::report`]), and what the lock (and, for `--to`, the sources
//! file) becomes; writing it is a separate step ([`write()`]), taken only
//! when the person accepts.
//!
//! Which commit each source is locked at:
//!
//! - a source the update is asked about (every source, or those of the
//!   skills named) is fetched at its ref as sources.toml names it (or
//!   `--to`'s), so it takes whatever the ref names now;
//! - any other source whose lock no longer matches sources.toml is locked
//!   again: at the same commit when only its `url`, `path` or `skills`
//!   changed (editing which skills are taken never moves the commit, and
//!   the commit must still be in the ref's history), at its ref's commit
//!   when the ref changed or it is new;
//! - every other source stays as locked.
//!
//! What a person pins is where they see it: `update --to REF` records the
//! ref in sources.toml (a commit by its full id), so the next `update`
//! respects it and every command agrees with the lock; the way the lock
//! moves is reported ([`super::history::Movement`]), so a lock that moves
//! backwards is never silent. A tag that now names another commit than
//! the lock's is a rewrite (git refuses to clobber a tag; Go's checksum
//! database calls it a security error): reported, and written only with
//! `--accept-moved-tag`.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::cache::{CacheLock, Staged};
use super::git::{self, Fetched, RefKind};
use super::history;
use super::lock::{Lock, LockedSource};
use super::report::{self, SourceReport, UpdateReport};
use super::sources::{Policy, SourceSpec, SourcesFile};
use super::{Cache, Paths};
use crate::error::{Error, ErrorKind, Result};

/// What `update` is asked.
#[derive(Debug, Clone, Default)]
pub struct Options<'a> {
    /// Only the sources these skills come from (all when empty).
    pub skills: &'a [String],
    /// `--to`: this ref instead of sources.toml's, for the one source.
    pub to: Option<&'a str>,
}

/// What an update would do, before anything is written.
#[derive(Debug)]
pub struct Plan {
    /// What it brings, per source (`written` false).
    pub report: UpdateReport,
    /// The lock it would write.
    pub lock: Lock,
    /// The lock as it is (`None`: none, or one with conflict markers).
    pub old: Option<Lock>,
    /// The files of every source, as the new lock takes them.
    pub fetched: BTreeMap<String, Fetched>,
    /// `--to`: the source whose ref sources.toml records, and the ref.
    pub pin: Option<(String, String)>,
    /// The files of each source fetched now, laid out in the cache as the
    /// check read them: what [`write()`] renames into place.
    pub staged: BTreeMap<String, Staged>,
    /// The project's lock, held from the plan to the write.
    _held: CacheLock,
}

impl Plan {
    /// Would [`write()`] change anything: the lock, or the sources file?
    pub fn changes(&self) -> bool {
        self.old.as_ref() != Some(&self.lock) || self.report.moved || self.pin.is_some()
    }

    /// The tags upstream moved since the lock was written: `(source,
    /// tag)`.
    pub fn tags_moved(&self) -> Vec<(&str, &str)> {
        self.report
            .sources
            .iter()
            .filter_map(|r| Some((r.source.as_str(), r.tag_moved.as_deref()?)))
            .collect()
    }
}

/// What the person asked an update to do with what it brings: the flags
/// that decide whether the lock is written and whether the run fails,
/// the same for every front end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Consent {
    /// `--yes`: write the new lock (else the report is all that happens).
    pub yes: bool,
    /// `--accept-moved-tag`: a tag upstream moved to another commit since
    /// the lock was written is accepted.
    pub accept_moved_tag: bool,
    /// `--strict`: refuse new content a reviewer must see.
    pub strict: bool,
    /// `--check`: a scheduled job asking whether upstream moved.
    pub check: bool,
}

/// What an update does with its [`Plan`], decided from the person's
/// [`Consent`] ([`Plan::decide`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// The lock (and a ref `--to` pins) is written.
    pub write: bool,
    /// Refused under `--strict`: the new content has what a reviewer must
    /// see, and nothing is written.
    pub refused: bool,
    /// A tag upstream moved and the person did not accept it
    /// (`--accept-moved-tag`): nothing is written, and the command that
    /// accepts the update must say so.
    pub tag_moved: bool,
    /// The run fails (exit 1): `--check` and upstream moved, refused
    /// under `--strict`, or `--yes` held back by a moved tag.
    pub fails: bool,
}

impl Decision {
    /// What to do, under `consent`, with an update that brings `report`
    /// and would change the lock or the sources file (`changes`): the
    /// lock is written only with `--yes`, when it would change, nothing
    /// was found under `--strict` and no tag moved unaccepted.
    pub fn of(report: &UpdateReport, changes: bool, consent: Consent) -> Decision {
        let refused = consent.strict && report.findings().next().is_some();
        let tag_moved =
            report.sources.iter().any(|r| r.tag_moved.is_some()) && !consent.accept_moved_tag;
        Decision {
            write: consent.yes && changes && !refused && !tag_moved,
            refused,
            tag_moved,
            fails: consent.check && report.moved || refused || consent.yes && tag_moved,
        }
    }
}

impl Plan {
    /// What to do with this plan under `consent` ([`Decision::of`]).
    pub fn decide(&self, consent: Consent) -> Decision {
        Decision::of(&self.report, self.changes(), consent)
    }
}

/// Decides what to do with `plan` under `consent` ([`Plan::decide`]),
/// writes it when that is decided ([`write()`], at `paths`, under the
/// project's lock), and records both in its report.
pub fn conclude(
    plan: &mut Plan,
    consent: Consent,
    paths: &Paths,
    cache: &Cache,
) -> Result<Decision> {
    let decision = plan.decide(consent);
    if decision.write {
        write(plan, paths, cache)?;
    }
    plan.report.written = decision.write;
    plan.report.refused = decision.refused;
    Ok(decision)
}

/// The keys of `spec` in which the lock's entry `locked` differs.
pub fn out_of_step(spec: &SourceSpec, locked: &LockedSource) -> Vec<&'static str> {
    let mut out = Vec::new();
    if locked.url != spec.url {
        out.push("url");
    }
    if locked.git_ref != spec.git_ref {
        out.push("ref");
    }
    if locked.path != spec.path {
        out.push("path");
    }
    if locked.plugin != spec.plugin {
        out.push("plugin");
    }
    if locked.skills != spec.skills {
        out.push("skills");
    }
    out
}

/// Fetches what `options` asks for and compares it with the lock (module
/// docs), judging what comes in for `project` (its spec, layers and
/// targets): nothing is written. `local` is the local base layer's
/// skills, which no source may also have. The project's lock
/// ([`Paths::hold`]) is taken first and held by the plan, so that no
/// other `add` or `update` writes between this plan and its write.
pub fn plan(
    project: &report::Project<'_>,
    paths: &Paths,
    cache: &Cache,
    policy: &Policy,
    local: &BTreeMap<String, PathBuf>,
    options: &Options<'_>,
) -> Result<Plan> {
    let held = paths.hold(cache)?;
    let (file, old) = read_sources(paths, policy)?;
    let planning = Planning {
        project,
        cache,
        options,
        lock: old.clone().unwrap_or_default(),
        only: options.skills.iter().cloned().collect(),
        staged: RefCell::default(),
    };
    let selected = planning.select(&file, &paths.lock)?;
    if let Some(to) = options.to {
        check_to(to, selected.len())?;
    }
    let mut fetched = BTreeMap::new();
    let mut refs: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut pin = None;
    for s in &file.sources {
        let (f, git_ref, pinned) = planning.fetch(s, selected.contains(s.name.as_str()))?;
        if let Some(to) = pinned {
            pin = Some((s.name.clone(), to));
        }
        refs.insert(s.name.clone(), git_ref);
        fetched.insert(s.name.clone(), f);
    }
    super::resolve(&file, &mut fetched, local, &paths.sources)?;
    let mut new_lock = Lock::default();
    let mut reports = Vec::new();
    for s in &file.sources {
        let git_ref = refs[&s.name].clone();
        let (mut r, entry) = planning.compare(s, &fetched[&s.name], git_ref);
        r.sets_ref = pin
            .as_ref()
            .filter(|(name, _)| *name == s.name)
            .map(|(_, r)| r.clone());
        r.moved |= r.sets_ref.is_some();
        reports.push(r);
        new_lock.sources.insert(s.name.clone(), entry);
    }
    let lock = planning.lock;
    record_removed(&mut new_lock, &lock);
    let dropped: Vec<String> = lock
        .sources
        .keys()
        .filter(|n| !new_lock.sources.contains_key(*n))
        .cloned()
        .collect();
    let moved = reports.iter().any(|r| r.moved) || !dropped.is_empty() || pin.is_some();
    Ok(Plan {
        report: UpdateReport {
            moved,
            written: false,
            lock: paths.lock.clone(),
            sources: reports,
            dropped,
            refused: false,
        },
        lock: new_lock,
        old,
        fetched,
        pin,
        staged: planning.staged.into_inner(),
        _held: held,
    })
}

/// The refusal of a project file at `path` that is not there or does not
/// say what the update needs.
fn refused(path: &Path, message: String) -> Error {
    Error::Refused {
        kind: ErrorKind::NotFound,
        path: Some(PathBuf::from(crate::text::path(path))),
        message,
    }
}

/// What an update starts from: the sources file, which must exist, and
/// the lock, which may be missing or out of step with it (an update is
/// how it is written again). A lock with merge-conflict markers counts as
/// none: it is written again from the sources file, every source fetched
/// at its ref.
fn read_sources(paths: &Paths, policy: &Policy) -> Result<(SourcesFile, Option<Lock>)> {
    let file = paths
        .read(&paths.sources, |p| SourcesFile::read(p, policy))?
        .ok_or_else(|| {
            refused(
                &paths.sources,
                "does not exist; add a source with `bernstein skills add SOURCE`".into(),
            )
        })?;
    let old = if super::lock::is_conflicted(&paths.io(&paths.lock)) {
        None
    } else {
        paths.read(&paths.lock, Lock::read)?
    };
    Ok((file, old))
}

/// Refuses `--to` (ref `to`) unless the update fetches one source
/// (`selected` many), and a ref no source may name.
fn check_to(to: &str, selected: usize) -> Result<()> {
    if selected != 1 {
        return Err(Error::Refused {
            kind: ErrorKind::InvalidInput,
            path: None,
            message: format!(
                "--to names one ref, and this update fetches {selected} sources; name a skill of one source"
            ),
        });
    }
    super::sources::check_ref(to).map_err(|m| Error::Refused {
        kind: ErrorKind::InvalidInput,
        path: None,
        message: format!("--to {}: {m}", crate::text::escape(to)),
    })
}

/// What source `s` asks to fetch, at `rev`.
fn want<'s>(s: &'s SourceSpec, rev: Option<&'s str>) -> git::Want<'s> {
    git::Want {
        url: &s.url,
        rev,
        path: s.path.as_deref(),
        plugin: s.plugin.as_deref(),
        skills: s.skills.as_deref(),
        discover: false,
    }
}

/// Records in `new_lock` what upstream removed from each source since
/// `lock`, until a source has it again.
fn record_removed(new_lock: &mut Lock, lock: &Lock) {
    let taken: BTreeSet<String> = new_lock
        .sources
        .values()
        .flat_map(|l| l.skills_taken())
        .map(str::to_owned)
        .collect();
    for (name, entry) in &mut new_lock.sources {
        if let Some(old) = lock.sources.get(name) {
            entry.removed = removed_upstream(old, entry, &taken);
        }
    }
}

/// One update being planned: what it judges with, and the lock it
/// started from.
struct Planning<'a, 'p> {
    project: &'a report::Project<'p>,
    cache: &'a Cache,
    options: &'a Options<'a>,
    /// The lock as it was (empty when there is none).
    lock: Lock,
    /// The skills the update is for (`--skill`; none: every skill).
    only: BTreeSet<String>,
    /// The files of each source fetched now, laid out in the cache as the
    /// check read them.
    staged: RefCell<BTreeMap<String, Staged>>,
}

impl Planning<'_, '_> {
    /// Refuses what source `name` brings (`f`) when the layer reader
    /// refuses any of it ([`super::check::as_layer`]), reading it where
    /// [`Cache::stage`] laid it out, which is kept for [`write()`].
    fn check(&self, name: &str, f: &Fetched) -> Result<()> {
        let laid = self.cache.stage(f)?;
        super::check::as_layer(self.project.spec, name, &f.commit, laid.path())?;
        self.staged.borrow_mut().insert(name.to_owned(), laid);
        Ok(())
    }

    /// The sources to fetch again: those the skills the update is for
    /// come from, every one when it is for all. A skill no source
    /// provides (as `lock`, the lock's file, says) is refused.
    fn select<'f>(&self, file: &'f SourcesFile, lock: &Path) -> Result<BTreeSet<&'f str>> {
        let takes = |l: &LockedSource, skill: &str| l.skills_taken().contains(skill);
        for skill in &self.only {
            if !self.lock.sources.values().any(|l| takes(l, skill)) {
                return Err(refused(
                    lock,
                    format!("no source provides skill '{}'", crate::text::escape(skill)),
                ));
            }
        }
        Ok(file
            .sources
            .iter()
            .filter(|s| {
                self.only.is_empty()
                    || self
                        .lock
                        .sources
                        .get(&s.name)
                        .is_some_and(|l| l.skills_taken().iter().any(|k| self.only.contains(*k)))
            })
            .map(|s| s.name.as_str())
            .collect())
    }

    /// Source `s`'s files as the new lock takes them, the ref the lock
    /// records for it, and the ref sources.toml is to record (`--to`):
    /// fetched at its ref when it is `selected`, new, or its ref changed
    /// (at `--to`'s, for the source it names); the locked commit fetched
    /// again when only its url, path or skills changed; else the locked
    /// files from the cache.
    fn fetch(
        &self,
        s: &SourceSpec,
        selected: bool,
    ) -> Result<(Fetched, Option<String>, Option<String>)> {
        let locked = self.lock.sources.get(&s.name);
        let step = locked.map(|l| out_of_step(s, l)).unwrap_or_default();
        if selected || locked.is_none() || step.contains(&"ref") {
            return self.fetch_anew(s, selected);
        }
        let l = locked.expect("a source not locked is fetched anew");
        if step.is_empty() {
            let f = super::load_locked(self.cache, &s.name, l)?.0;
            return Ok((f, l.git_ref.clone(), None));
        }
        // Only the url, path or skills changed: the same commit, taken
        // again as sources.toml now says, still in the ref's history.
        history::check_in_ref(&s.url, s.git_ref.as_deref(), &l.commit, "the lock")?;
        let f = git::fetch(&want(s, Some(&l.commit)))?;
        self.check(&s.name, &f)?;
        Ok((f, s.git_ref.clone(), None))
    }

    /// Source `s` fetched at its ref, or at `--to`'s when it is the
    /// `selected` one, and checked as a layer; see [`Planning::fetch`].
    fn fetch_anew(
        &self,
        s: &SourceSpec,
        selected: bool,
    ) -> Result<(Fetched, Option<String>, Option<String>)> {
        let to = self.options.to.filter(|_| selected);
        let rev = to.or(s.git_ref.as_deref());
        let f = git::fetch(&want(s, rev))?;
        if f.kind == Some(RefKind::Commit) {
            history::check_in_ref(&s.url, rev, &f.commit, "the ref")?;
        }
        self.check(&s.name, &f)?;
        // The lock records the ref as sources.toml names it; `--to`'s
        // is recorded in both, a commit by its full id.
        let Some(to) = to else {
            return Ok((f, s.git_ref.clone(), None));
        };
        let to = if f.kind == Some(RefKind::Commit) {
            f.commit.clone()
        } else {
            to.to_owned()
        };
        let pin = (s.git_ref.as_deref() != Some(to.as_str())).then(|| to.clone());
        Ok((f, Some(to), pin))
    }

    /// What source `s` brings, fetched as `f` and recorded at `git_ref`,
    /// compared with its locked entry, and the new entry.
    fn compare(
        &self,
        s: &SourceSpec,
        f: &Fetched,
        git_ref: Option<String>,
    ) -> (SourceReport, LockedSource) {
        let cache = self.cache;
        let spec_now = SourceSpec {
            git_ref: git_ref.clone(),
            ..s.clone()
        };
        let entry = super::entry(&spec_now, git_ref.as_deref(), f);
        let old = self.lock.sources.get(&s.name);
        let old_dir = old
            .filter(|o| cache.has(&s.name, o) && cache.verify(&s.name, o).is_ok())
            .and_then(|o| cache.open_entry(&s.name, o).ok());
        // The old side's files, for the fields and sections compared and
        // the overrides they touch: from the cache, else (a fresh clone, a
        // CI job) fetched at the locked commit and checked against the
        // lock. Only an old commit that cannot be fetched any more (a
        // history rewritten upstream, said as such) is compared by its
        // digests alone.
        let old_fetched = match old {
            Some(o) if old_dir.is_none() && o.files != entry.files => {
                super::load_locked(cache, &s.name, o).ok().map(|(f, _)| f)
            }
            _ => None,
        };
        let reader = |file: &str| match (&old_dir, &old_fetched) {
            (Some(d), _) => d.read(file).ok(),
            (None, Some(f)) => f.files.get(file).cloned(),
            (None, None) => None,
        };
        let sides = report::Sides {
            old,
            old_file: &reader,
            new: &entry,
            fetched: f,
        };
        let mut r: SourceReport = report::compare(self.project, &s.name, &sides, &self.only);
        annotate(&mut r, s, old, &entry, f);
        (r, entry)
    }
}

/// The lock's `removed` for a source locked as `old` and now as `new`:
/// the skills `old` took or recorded as removed that no source (`taken`)
/// provides now. Only while the source takes every skill of the same
/// directory: a skill a person stopped taking (`skills = [...]`, another
/// `path`) is not one upstream removed.
fn removed_upstream(
    old: &LockedSource,
    new: &LockedSource,
    taken: &BTreeSet<String>,
) -> Vec<String> {
    if new.skills.is_some() || old.path != new.path {
        return Vec::new();
    }
    let gone: BTreeSet<&str> = old
        .skills_taken()
        .into_iter()
        .chain(old.removed.iter().map(String::as_str))
        .filter(|s| !taken.contains(*s))
        .collect();
    gone.into_iter().map(str::to_owned).collect()
}

/// What the report says of one source beyond its files: the way the lock
/// moves, a pin and the default branch, a moved tag, and the keys of
/// sources.toml the lock no longer matches.
fn annotate(
    r: &mut SourceReport,
    s: &SourceSpec,
    old: Option<&LockedSource>,
    entry: &LockedSource,
    f: &Fetched,
) {
    if let Some(o) = old {
        r.out_of_step = out_of_step(s, o);
        if o.commit != entry.commit {
            r.history = Some(history::movement(
                &entry.url,
                entry.git_ref.as_deref(),
                &o.commit,
                &entry.commit,
            ));
            if f.kind == Some(RefKind::Tag) && o.git_ref == entry.git_ref {
                r.tag_moved = entry.git_ref.clone();
            }
        }
        if !r.out_of_step.is_empty() || o.git_ref != entry.git_ref {
            r.moved = true;
        }
    }
    if f.kind == Some(RefKind::Commit) {
        r.pin = history::pin(&entry.url, &entry.commit).ok();
    }
}

/// Writes what `plan` would: the cache entries, then the ref `--to` pins
/// in sources.toml, then the lock, each read back before it replaces the
/// file it writes.
pub fn write(plan: &mut Plan, paths: &Paths, cache: &Cache) -> Result<()> {
    for (name, entry) in &plan.lock.sources {
        let staged = plan.staged.remove(name);
        cache.store(name, entry, &plan.fetched[name], staged)?;
    }
    if let Some((name, git_ref)) = &plan.pin {
        paths.write(&paths.sources, |p| set_ref(p, name, git_ref))?;
    }
    paths.write(&paths.lock, |p| plan.lock.write(p))
}

/// Sets `ref` of source `name` in the sources file at `path`, keeping the
/// rest of the file (comments, order, spacing) as it is.
pub fn set_ref(path: &Path, name: &str, git_ref: &str) -> Result<()> {
    let text = super::sources::read_text(path, super::sources::MAX_BYTES)?.unwrap_or_default();
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        super::refused(ErrorKind::Invalid, path, e.to_string())
    })?;
    let table = doc
        .get_mut("source")
        .and_then(|s| s.as_array_of_tables_mut())
        .and_then(|a| {
            a.iter_mut()
                .find(|t| t.get("name").and_then(|n| n.as_str()) == Some(name))
        })
        .ok_or_else(|| {
            super::refused(
                ErrorKind::Invalid,
                path,
                format!(
                    "source '{}' is not a [[source]] table here; set its ref by hand",
                    crate::text::escape(name)
                ),
            )
        })?;
    table["ref"] = toml_edit::value(git_ref);
    let out = doc.to_string();
    // Read back as the tool reads it before it replaces the file.
    SourcesFile::parse(&out, path, &Policy::default())?;
    crate::export::write_atomic(path, out.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::super::review::{Finding, Rule};
    use super::*;

    fn report(moved: bool, finding: bool, tag_moved: bool) -> UpdateReport {
        UpdateReport {
            moved,
            written: false,
            lock: ".bernstein/sources.lock".into(),
            sources: vec![SourceReport {
                source: "skills".into(),
                to: "c".repeat(40),
                moved,
                review: finding
                    .then(|| Finding {
                        file: "pdf/scripts/run.sh".into(),
                        line: None,
                        kind: Rule::Script,
                        detail: "added".into(),
                    })
                    .into_iter()
                    .collect(),
                tag_moved: tag_moved.then(|| "v1".into()),
                ..SourceReport::default()
            }],
            dropped: Vec::new(),
            refused: false,
        }
    }

    const YES: Consent = Consent {
        yes: true,
        accept_moved_tag: false,
        strict: false,
        check: false,
    };

    #[test]
    fn only_yes_writes_and_only_what_would_change() {
        let moved = report(true, false, false);
        let d = Decision::of(&moved, true, YES);
        assert!(d.write && !d.fails && !d.refused && !d.tag_moved);
        // Without --yes the report is all that happens, and it is no failure.
        let d = Decision::of(&moved, true, Consent::default());
        assert!(!d.write && !d.fails);
        // Nothing to change: nothing written, even with --yes.
        let d = Decision::of(&report(false, false, false), false, YES);
        assert!(!d.write && !d.fails);
    }

    #[test]
    fn check_fails_when_upstream_moved_and_never_writes() {
        let check = Consent {
            check: true,
            ..Consent::default()
        };
        let d = Decision::of(&report(true, false, false), true, check);
        assert!(d.fails && !d.write);
        let d = Decision::of(&report(false, false, false), false, check);
        assert!(!d.fails && !d.write);
    }

    #[test]
    fn strict_refuses_what_a_reviewer_must_see_with_or_without_yes() {
        let strict = Consent {
            strict: true,
            ..YES
        };
        let d = Decision::of(&report(true, true, false), true, strict);
        assert_eq!(
            d,
            Decision {
                write: false,
                refused: true,
                tag_moved: false,
                fails: true
            }
        );
        let d = Decision::of(
            &report(true, true, false),
            true,
            Consent {
                yes: false,
                ..strict
            },
        );
        assert!(d.refused && d.fails && !d.write);
        // Without --strict the findings are listed, and the lock written.
        let d = Decision::of(&report(true, true, false), true, YES);
        assert!(d.write && !d.refused && !d.fails);
    }

    #[test]
    fn a_moved_tag_is_written_only_when_accepted() {
        let retagged = report(true, false, true);
        let d = Decision::of(&retagged, true, YES);
        assert!(!d.write && d.tag_moved && d.fails);
        // Reported without --yes: the accepting command must name the flag,
        // and asking is no failure.
        let d = Decision::of(&retagged, true, Consent::default());
        assert!(!d.write && d.tag_moved && !d.fails);
        let d = Decision::of(
            &retagged,
            true,
            Consent {
                accept_moved_tag: true,
                ..YES
            },
        );
        assert!(d.write && !d.tag_moved && !d.fails);
    }
}
