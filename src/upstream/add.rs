//! `add`, as data: the sources asked for ([`wanted`]), each fetched,
//! checked as a layer and reviewed ([`plan`]), resolved against the
//! sources already there ([`Plan::resolve`]); writing it is a separate
//! step ([`Resolved::write`]).
//!
//! Nothing is written until every source was fetched and checked, and a
//! person was shown what a reviewer must see of it, which comes before
//! the check against the other sources so that a refusal under `--strict`
//! is about the content, whatever else is wrong. Then the cache entries,
//! the sources file (each source a `[[source]]` table appended to the
//! text there, so that its comments and order stay), and last the lock:
//! a lock written without the sources file would name a source the file
//! does not list.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::cache::Staged;
use super::git::{self, Fetched, Found};
use super::location::redacted;
use super::lock::{Lock, LockedSource};
use super::review::Finding;
use super::sources::{self, Policy, SourceSpec, SourcesFile};
use super::{Cache, Paths};
use crate::error::{Error, ErrorKind, Result};
use crate::spec::MergeSpec;

/// What `add` is asked for: one repository, or another installer's lock.
#[derive(Debug, Clone, Default)]
pub struct Options<'a> {
    /// `SOURCE` as typed: a URL, `user@host:path`, a local path or
    /// `OWNER/REPO` ([`sources::parse_source`]).
    pub source: Option<&'a str>,
    /// `--import`: a `skills-lock.json` ([`super::import`]).
    pub import: Option<&'a Path>,
    /// `--ref`.
    pub git_ref: Option<&'a str>,
    /// `--path`; `.` is the top.
    pub path: Option<&'a str>,
    /// `--plugin`.
    pub plugin: Option<&'a str>,
    /// `--skill`: only these (every skill when empty).
    pub skills: &'a [String],
    /// `--name` [default: the repository's].
    pub name: Option<&'a str>,
}

/// The sources `add` is asked for, as sources.toml will list them.
#[derive(Debug, Clone)]
pub struct Wanted {
    /// One per source.
    pub sources: Vec<SourceSpec>,
    /// Not told where the skills are (no `--path`, `--plugin` or
    /// `--import`): taken where the collection keeps them, and where
    /// that was recorded.
    pub discover: bool,
}

/// The sources `options` ask for: the one `SOURCE` names, or those of an
/// imported `skills-lock.json`; a local path is taken against `cwd`.
pub fn wanted(options: &Options<'_>, cwd: Option<&Path>) -> Result<Wanted> {
    let discover = options.import.is_none() && options.path.is_none() && options.plugin.is_none();
    if let Some(file) = options.import {
        return Ok(Wanted {
            sources: super::import::read(file, cwd)?,
            discover,
        });
    }
    let Some(source) = options.source else {
        return Err(Error::Refused {
            kind: ErrorKind::InvalidInput,
            path: None,
            message: "name a SOURCE, or --import a skills-lock.json".into(),
        });
    };
    let (url, default_name) = sources::parse_source(source, cwd)?;
    // `--path .` is the top, which sources.toml says by having no path.
    let path = options
        .path
        .map(|p| p.trim_end_matches('/'))
        .filter(|p| !matches!(*p, "" | "."))
        .map(str::to_owned);
    Ok(Wanted {
        sources: vec![SourceSpec {
            name: options.name.map_or(default_name, str::to_owned),
            url,
            git_ref: options.git_ref.map(str::to_owned),
            path,
            plugin: options.plugin.map(str::to_owned),
            skills: (!options.skills.is_empty()).then(|| options.skills.to_vec()),
        }],
        discover,
    })
}

/// Does the sources file of `paths` list a source of the repository
/// `source` (as typed, a local path taken against `cwd`) names already?
pub fn has_source(
    paths: &Paths,
    source: &str,
    policy: &Policy,
    cwd: Option<&Path>,
) -> Result<bool> {
    let (url, _) = sources::parse_source(source, cwd)?;
    let Some(file) = paths.read(&paths.sources, |p| SourcesFile::read(p, policy))? else {
        return Ok(false);
    };
    Ok(file.sources.iter().any(|s| s.url == url))
}

/// What `add` fetched, checked and found, before it is resolved against
/// the other sources: nothing is written.
#[derive(Debug)]
pub struct Plan {
    /// The sources added, as sources.toml will record them (where the
    /// skills were found, a commit by its full id).
    pub added: Vec<SourceSpec>,
    /// What a reviewer must see of what they bring.
    pub findings: Vec<Finding>,
    /// Per source added without being told where to look: what the
    /// collection holds.
    pub found: BTreeMap<String, Found>,
    /// The sources file's text as it will be written.
    pub sources_text: String,
    /// The sources file as it will be, and where it is.
    file: SourcesFile,
    file_path: PathBuf,
    /// The lock as it is (empty when there is none).
    lock: Lock,
    /// Every source's files: the others as locked, the new ones fetched.
    fetched: BTreeMap<String, Fetched>,
    /// The files of each new source, laid out in the cache as the check
    /// read them.
    staged: BTreeMap<String, Staged>,
}

/// Fetches each of `wanted`'s sources, checks it as a layer of
/// `merge_spec` and reviews it, with every other source of the sources
/// file at `paths` as locked (from `cache`, or fetched at its commit):
/// nothing is written. The place `paths` names must exist.
pub fn plan(
    wanted: Wanted,
    paths: &Paths,
    cache: &Cache,
    policy: &Policy,
    merge_spec: &MergeSpec,
) -> Result<Plan> {
    let Wanted {
        sources: mut specs,
        discover,
    } = wanted;
    // The file as it will be: the text there now, with a table more per
    // source (appended, so that its comments and order stay).
    let old_text = sources::read_text(&paths.sources, sources::MAX_BYTES)?.unwrap_or_default();
    let new_text = appended(&old_text, &specs, paths)?;
    let file = SourcesFile::parse(&new_text, &paths.sources, policy)?;
    let lock = Lock::read(&paths.lock)?.unwrap_or_default();
    let new_names: BTreeSet<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    // Every other source as locked (from the cache, or fetched at its
    // commit), the new ones fetched at their refs.
    let mut fetched = BTreeMap::new();
    for s in file
        .sources
        .iter()
        .filter(|s| !new_names.contains(s.name.as_str()))
    {
        let locked = lock.sources.get(&s.name).ok_or_else(|| {
            super::refused(
                ErrorKind::Stale,
                &paths.lock,
                format!(
                    "source '{}' is not locked; run `bernstein skills update --yes` first",
                    crate::text::escape(&s.name)
                ),
            )
        })?;
        fetched.insert(
            s.name.clone(),
            super::load_locked(cache, &s.name, locked)?.0,
        );
    }
    let mut staged = BTreeMap::new();
    let mut findings = Vec::new();
    let mut found = BTreeMap::new();
    for spec in &mut specs {
        let new = fetch(spec, discover, &mut found)?;
        // What validate and export would refuse of it is refused now.
        let laid = cache.stage(&new)?;
        super::check::as_layer(merge_spec, &spec.name, &new.commit, laid.path())?;
        staged.insert(spec.name.clone(), laid);
        findings.extend(super::review::review(&new.files, &new.executable, None));
        fetched.insert(spec.name.clone(), new);
    }
    // Again, with what the fetches recorded.
    let sources_text = appended(&old_text, &specs, paths)?;
    let file = SourcesFile::parse(&sources_text, &paths.sources, policy)?;
    Ok(Plan {
        added: specs,
        findings,
        found,
        sources_text,
        file,
        file_path: paths.sources.clone(),
        lock,
        fetched,
        staged,
    })
}

/// Source `spec` fetched at its ref, recording in it where its skills
/// were found (into `found`, when it was to `discover` them) and a commit
/// asked for by its id as the full id, which must be on a branch or tag.
fn fetch(
    spec: &mut SourceSpec,
    discover: bool,
    found: &mut BTreeMap<String, Found>,
) -> Result<Fetched> {
    let mut new = git::fetch(&git::Want {
        url: &spec.url,
        rev: spec.git_ref.as_deref(),
        path: spec.path.as_deref(),
        plugin: spec.plugin.as_deref(),
        skills: spec.skills.as_deref(),
        discover,
    })?;
    // Where they were found is recorded, so update takes them there.
    if let Some(f) = new.found.take() {
        spec.path = f.path.clone();
        found.insert(spec.name.clone(), f);
    }
    if new.kind == Some(git::RefKind::Commit) {
        super::history::check_in_ref(&spec.url, spec.git_ref.as_deref(), &new.commit, "--ref")?;
        spec.git_ref = Some(new.commit.clone());
    }
    Ok(new)
}

/// The sources file's text `old_text` with a `[[source]]` table appended
/// for each of `specs`, whose names it must not have yet.
fn appended(old_text: &str, specs: &[SourceSpec], paths: &Paths) -> Result<String> {
    let existing = if old_text.trim().is_empty() {
        SourcesFile::default()
    } else {
        toml::from_str::<SourcesFile>(old_text).unwrap_or_default()
    };
    let names: BTreeSet<&str> = existing.sources.iter().map(|s| s.name.as_str()).collect();
    let mut new_text = old_text.to_owned();
    for spec in specs {
        if names.contains(spec.name.as_str()) {
            return Err(super::refused(
                ErrorKind::Conflict,
                &paths.sources,
                format!(
                    "a source named '{}' is there already; give this one another name with --name",
                    crate::text::escape(&spec.name)
                ),
            ));
        }
        if !new_text.is_empty() && !new_text.ends_with('\n') {
            new_text.push('\n');
        }
        if !new_text.is_empty() {
            new_text.push('\n');
        }
        new_text.push_str(&SourcesFile::entry_text(spec));
        if new_text.len() as u64 > sources::MAX_BYTES {
            // Never a file no command reads.
            return Err(super::refused(
                ErrorKind::InvalidInput,
                &paths.sources,
                format!(
                    "with these sources the file would be over the {} MiB a sources file may hold; nothing was fetched or written",
                    sources::MAX_BYTES >> 20
                ),
            ));
        }
    }
    Ok(new_text)
}

impl Plan {
    /// The repositories added, as messages name them (credentials
    /// redacted).
    pub fn urls(&self) -> String {
        let urls: Vec<_> = self.added.iter().map(|s| redacted(&s.url)).collect();
        crate::text::list(urls.iter().map(|u| u.as_ref()), false)
    }

    /// The refusal of these sources under `--strict` (when there are
    /// [`Plan::findings`]): the findings are `listed_above` (printed
    /// before it), or listed in the message.
    pub fn strict_refusal(&self, listed_above: bool) -> Error {
        let listed = if listed_above {
            " (listed above)".to_owned()
        } else {
            format!(
                ": {}",
                super::render::findings_text(&self.findings, "")
                    .lines()
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        };
        Error::Refused {
            kind: ErrorKind::Strict,
            path: None,
            message: format!(
                "source {}: {} thing(s) a reviewer must see{listed}; refused under --strict, nothing was written",
                crate::text::escape(&self.urls()),
                self.findings.len(),
            ),
        }
    }

    /// Takes each skill from one source ([`super::resolve`]; `local` is
    /// the local base layer's skills, which no source may also have), and
    /// the lock that results: nothing is written.
    pub fn resolve(mut self, local: &BTreeMap<String, PathBuf>) -> Result<Resolved> {
        super::resolve(&self.file, &mut self.fetched, local, &self.file_path)?;
        let new_names: BTreeSet<&str> = self.added.iter().map(|s| s.name.as_str()).collect();
        let mut lock = Lock::default();
        for s in &self.file.sources {
            let old = self
                .lock
                .sources
                .get(&s.name)
                .filter(|_| !new_names.contains(s.name.as_str()));
            let git_ref = match old {
                Some(o) => o.git_ref.clone(),
                None => s.git_ref.clone(),
            };
            let mut entry = super::entry(s, git_ref.as_deref(), &self.fetched[&s.name]);
            if let Some(o) = old {
                // What upstream removed from it stays recorded.
                entry.removed = o.removed.clone();
            }
            lock.sources.insert(s.name.clone(), entry);
        }
        Ok(Resolved { plan: self, lock })
    }
}

/// What `add` would write, decided: the sources file's text and the lock.
#[derive(Debug)]
pub struct Resolved {
    /// What was fetched and found.
    pub plan: Plan,
    /// The lock it would write.
    pub lock: Lock,
}

impl Resolved {
    /// Each source added, with its entry in the new lock.
    pub fn added(&self) -> impl Iterator<Item = (&SourceSpec, &LockedSource)> {
        self.plan
            .added
            .iter()
            .map(|s| (s, &self.lock.sources[&s.name]))
    }

    /// Writes what was decided: each source's cache entry, then the
    /// sources file, then the lock (at `paths`, under the lock's guard).
    pub fn write(&mut self, paths: &Paths, cache: &Cache) -> Result<()> {
        // In the sources file's order.
        for s in &self.plan.file.sources {
            let name = &s.name;
            let staged = self.plan.staged.remove(name);
            cache.store(
                name,
                &self.lock.sources[name],
                &self.plan.fetched[name],
                staged,
            )?;
        }
        crate::export::write_atomic(&paths.sources, self.plan.sources_text.as_bytes())?;
        self.lock.write(&paths.lock)
    }
}
