//! `add`, as data: the sources asked for ([`wanted`]), then, in one
//! [`Transaction`] (the place of the project's files made, its lock
//! held), each fetched, checked as a layer and reviewed
//! ([`Transaction::plan`]), resolved against the sources already there
//! ([`Plan::resolve`]); writing it is a separate step
//! ([`Transaction::write`]).
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

use super::cache::{CacheLock, Staged};
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

/// One `add` under way: the directory of the project's files made if it
/// was missing, and the project's lock held ([`Paths::hold`]) until it
/// is dropped. Dropped without [`Transaction::write`] (a refusal, a
/// failed fetch), it removes the directory it made, if nothing was
/// written into it: the work tree is left as it was.
#[derive(Debug)]
pub struct Transaction<'a> {
    paths: &'a Paths,
    cache: &'a Cache,
    /// The directory made for the files, as opened.
    made: Option<PathBuf>,
    _held: CacheLock,
}

impl<'a> Transaction<'a> {
    /// Begins an `add` into the files of `paths`, with `cache`: where the
    /// files go exists before anything is fetched (a place that cannot be
    /// written fails now, not after the fetch and its review), and no
    /// other `add` or `update` of the project runs until this one ends.
    pub fn begin(paths: &'a Paths, cache: &'a Cache) -> Result<Transaction<'a>> {
        let io = paths.io(&paths.sources);
        let made = crate::export::make_parent(&io).map_err(|e| {
            match (io.parent(), paths.sources.parent()) {
                (Some(at), Some(shown)) => e.shown_as(at, shown),
                _ => e,
            }
        })?;
        let held = paths.hold(cache).inspect_err(|_| {
            if let Some(dir) = &made {
                crate::export::remove_made_dir(dir);
            }
        })?;
        Ok(Transaction {
            paths,
            cache,
            made,
            _held: held,
        })
    }

    /// Fetches each of `wanted`'s sources, checks it as a layer of
    /// `merge_spec` and reviews it, with every other source of the
    /// sources file as locked, `policy` judging where each comes from:
    /// nothing is written.
    pub fn plan(&self, wanted: Wanted, policy: &Policy, merge_spec: &MergeSpec) -> Result<Plan> {
        plan(wanted, self.paths, self.cache, policy, merge_spec)
    }

    /// Writes what was decided, `resolved`: each source's cache entry, then
    /// the sources file, then the lock; and ends the add.
    pub fn write(mut self, resolved: &mut Resolved) -> Result<()> {
        resolved.write(self.paths, self.cache)?;
        // Written into: it stays.
        self.made = None;
        Ok(())
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if let Some(dir) = self.made.take() {
            // Only when empty: nothing was written into it.
            crate::export::remove_made_dir(&dir);
        }
    }
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
/// nothing is written. The place `paths` names must exist
/// ([`Transaction::plan`]).
fn plan(
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
    let old_text = paths
        .read(&paths.sources, |p| {
            sources::read_text(p, sources::MAX_BYTES)
        })?
        .unwrap_or_default();
    let new_text = appended(&old_text, &specs, paths)?;
    let file = SourcesFile::parse(&new_text, &paths.sources, policy)?;
    let lock = paths.read(&paths.lock, Lock::read)?.unwrap_or_default();
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

    /// Refuses these sources under `--strict` (`strict`) when a reviewer
    /// must see something of them ([`Plan::strict_refusal`]; the findings
    /// `listed_above` or in the message); else nothing.
    pub fn judge(&self, strict: bool, listed_above: bool) -> Result<()> {
        if strict && !self.findings.is_empty() {
            return Err(self.strict_refusal(listed_above));
        }
        Ok(())
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
    fn write(&mut self, paths: &Paths, cache: &Cache) -> Result<()> {
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
        let text = self.plan.sources_text.as_bytes();
        paths.write(&paths.sources, |p| crate::export::write_atomic(p, text))?;
        paths.write(&paths.lock, |p| self.lock.write(p))
    }
}

#[cfg(test)]
mod tests {
    use super::super::review::Rule;
    use super::*;

    fn options(source: &str) -> Options<'_> {
        Options {
            source: Some(source),
            ..Options::default()
        }
    }

    #[test]
    fn what_is_asked_for_is_what_sources_toml_records() {
        let w = wanted(&options("acme/skills"), None).unwrap();
        assert!(w.discover, "not told where: the skills are looked for");
        let s = &w.sources[0];
        assert_eq!(
            (s.name.as_str(), s.url.as_str()),
            ("skills", "https://github.com/acme/skills")
        );
        assert_eq!(
            (&s.git_ref, &s.path, &s.plugin, &s.skills),
            (&None, &None, &None, &None)
        );
        let skills = ["pdf".to_owned(), "docx".to_owned()];
        let w = wanted(
            &Options {
                git_ref: Some("v1"),
                path: Some("skills/"),
                skills: &skills,
                name: Some("tools"),
                ..options("acme/skills")
            },
            None,
        )
        .unwrap();
        assert!(!w.discover);
        let s = &w.sources[0];
        assert_eq!(s.name, "tools");
        assert_eq!(s.git_ref.as_deref(), Some("v1"));
        assert_eq!(s.path.as_deref(), Some("skills"), "no trailing slash");
        assert_eq!(s.skills.as_deref(), Some(&skills[..]));
        // `--path .` is the top, which sources.toml says by having no path;
        // still told where, so nothing is looked for.
        let w = wanted(
            &Options {
                path: Some("."),
                ..options("acme/skills")
            },
            None,
        )
        .unwrap();
        assert!(!w.discover);
        assert_eq!(w.sources[0].path, None);
    }

    #[test]
    fn nothing_asked_for_is_an_error_before_anything_is_read() {
        let err = wanted(&Options::default(), None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert_eq!(
            err.to_string(),
            "name a SOURCE, or --import a skills-lock.json"
        );
        let err = wanted(&options("not a repository"), None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
    }

    #[test]
    fn an_import_is_read_from_the_contexts_working_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("skills-lock.json"),
            r#"{"skills": {"pdf": {"source": "acme/skills", "skillPath": "skills/pdf/SKILL.md"}}}"#,
        )
        .unwrap();
        let w = wanted(
            &Options {
                import: Some(Path::new("skills-lock.json")),
                ..Options::default()
            },
            Some(dir.path()),
        )
        .unwrap();
        assert!(!w.discover, "the lock says where each skill is");
        assert_eq!(w.sources[0].path.as_deref(), Some("skills"));
        assert_eq!(
            w.sources[0].skills.as_deref(),
            Some(&["pdf".to_owned()][..])
        );
    }

    fn spec(name: &str) -> SourceSpec {
        SourceSpec {
            name: name.into(),
            url: format!("https://github.com/acme/{name}"),
            git_ref: None,
            path: None,
            plugin: None,
            skills: None,
        }
    }

    fn paths() -> Paths {
        Paths::in_dir(Path::new(".bernstein"))
    }

    #[test]
    fn a_source_is_appended_keeping_the_files_comments_and_order() {
        let old = "# Our sources.\n[[source]]\nname = \"b\"\nurl = \"https://github.com/acme/b\" # pinned below";
        let text = appended(old, &[spec("a"), spec("c")], &paths()).unwrap();
        assert!(
            text.starts_with(&format!("{old}\n\n[[source]]\n")),
            "{text}"
        );
        let file =
            SourcesFile::parse(&text, Path::new("sources.toml"), &Policy::default()).unwrap();
        let names: Vec<_> = file.sources.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["b", "a", "c"]);
        // An empty file takes the table as its first line.
        assert!(
            appended("", &[spec("a")], &paths())
                .unwrap()
                .starts_with("[[source]]\n")
        );
    }

    #[test]
    fn a_name_already_there_or_a_file_past_its_cap_is_refused() {
        let old = appended("", &[spec("a")], &paths()).unwrap();
        let err = appended(&old, &[spec("a")], &paths()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Conflict);
        assert_eq!(
            err.to_string(),
            ".bernstein/sources.toml: a source named 'a' is there already; give this one another name with --name"
        );
        let big = "#".repeat(sources::MAX_BYTES as usize - 10);
        let err = appended(&big, &[spec("a")], &paths()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(err.to_string().contains("over the 1 MiB"), "{err}");
    }

    fn plan_with(findings: Vec<Finding>) -> Plan {
        Plan {
            added: vec![spec("skills")],
            findings,
            found: BTreeMap::new(),
            sources_text: String::new(),
            file: SourcesFile::default(),
            file_path: PathBuf::from(".bernstein/sources.toml"),
            lock: Lock::default(),
            fetched: BTreeMap::new(),
            staged: BTreeMap::new(),
        }
    }

    #[test]
    fn strict_refuses_only_what_a_reviewer_must_see() {
        assert!(plan_with(Vec::new()).judge(true, true).is_ok());
        let found = plan_with(vec![Finding {
            file: "pdf/scripts/run.sh".into(),
            line: None,
            kind: Rule::Script,
            detail: "added".into(),
        }]);
        assert!(found.judge(false, true).is_ok(), "a warning only");
        let err = found.judge(true, true).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Strict);
        assert_eq!(
            err.to_string(),
            "source https://github.com/acme/skills: 1 thing(s) a reviewer must see (listed above); refused under --strict, nothing was written"
        );
        // Nothing listed above (JSON): the message lists them.
        let err = found.judge(true, false).unwrap_err().to_string();
        assert!(err.contains(": pdf/scripts/run.sh"), "{err}");
    }

    #[test]
    fn a_transaction_makes_the_place_in_the_contexts_directory_and_leaves_nothing_when_it_fails() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let work = root.join("work");
        std::fs::create_dir(&work).unwrap();
        let cache = Cache::new(Some(root.join("cache")), None).unwrap();
        let paths = Paths::of_project(&crate::source::Project::at(&work), Some(&work));
        assert_eq!(paths.sources, Path::new(".bernstein/sources.toml"));
        let adding = Transaction::begin(&paths, &cache).unwrap();
        assert!(work.join(".bernstein").is_dir());
        assert!(
            !Path::new(".bernstein").exists(),
            "not the process's directory"
        );
        // A second add of the project waits for none: it is refused.
        let err = Transaction::begin(&paths, &cache).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Busy);
        assert!(
            err.to_string()
                .starts_with(".bernstein/sources.lock: another"),
            "{err}"
        );
        // Ended without a write: the directory it made is gone.
        drop(adding);
        assert!(!work.join(".bernstein").exists());
        // Written: the files are where the context's directory says, and stay.
        let adding = Transaction::begin(&paths, &cache).unwrap();
        let mut resolved = Resolved {
            plan: Plan {
                sources_text: "# no sources yet\n".into(),
                ..plan_with(Vec::new())
            },
            lock: Lock::default(),
        };
        adding.write(&mut resolved).unwrap();
        assert_eq!(
            std::fs::read_to_string(work.join(".bernstein/sources.toml")).unwrap(),
            "# no sources yet\n"
        );
        assert!(work.join(".bernstein/sources.lock").is_file());
    }
}
