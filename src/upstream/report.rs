//! What an update brings, before it is accepted: per skill, what changed
//! upstream (fields, sections, files; skills added and removed), and per
//! team or user override, what it now sits on (a shadowed value that
//! changed, a section directive whose heading is gone, a replaced file
//! that changed, an override of a skill upstream removed).
//!
//! Fields are compared as the merge spec's fields are: the SKILL.md of the
//! old and the new commit read as base fragments, every top-level key
//! compared, the body (the spec's `body_field`) split into sections as a
//! merge by section splits it. No field is named here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::git::Fetched;
use super::lock::LockedSource;
use super::review::Finding;
use crate::fragment::{Fragment, LoadOptions};
use crate::layer::{Form, Layer};
use crate::merge::sections::{self, Anchor, Intent, Key, Op};
use crate::source::Layers;
use crate::spec::MergeSpec;
use crate::target::Target;

/// What one `update` brings, for every source it looked at: the document
/// `update --json` prints, and what the text ([`super::render::text`]) and
/// Markdown ([`super::render::markdown`]) reports are rendered from.
#[derive(Debug, Clone, Serialize)]
pub struct UpdateReport {
    /// Would the lock change: some source's commit, files or execute bits
    /// differ from the lock, sources.toml no longer says what the lock
    /// was written for, or the lock names a source no longer listed.
    pub moved: bool,
    /// Was the new lock written (`--yes`)?
    pub written: bool,
    /// The lock.
    #[serde(serialize_with = "display")]
    pub lock: PathBuf,
    /// Per source.
    pub sources: Vec<SourceReport>,
    /// Sources the lock named that the sources file no longer lists.
    pub dropped: Vec<String>,
    /// Was the update refused under `--strict` (the review found
    /// something)?
    #[serde(skip)]
    pub refused: bool,
}

fn display<S: serde::Serializer>(p: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&p.display())
}

impl UpdateReport {
    /// The document `update --json` prints.
    pub fn to_value(&self) -> serde_json::Value {
        // Strings, booleans and lists of them: serialising cannot fail.
        serde_json::to_value(self).unwrap_or_default()
    }

    /// Every finding of the review, of every source.
    pub fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.sources.iter().flat_map(|r| r.review.iter())
    }
}

/// What an update of one source brings.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SourceReport {
    /// The source's name.
    pub source: String,
    /// The commit locked now (`None`: the source is new to the lock).
    pub from: Option<String>,
    /// The commit the update locks.
    pub to: String,
    /// Did anything change (the commit, or any file taken)?
    pub moved: bool,
    /// The skills that changed, by name.
    pub skills: Vec<SkillChange>,
    /// The team and user overrides the changes touch.
    pub overrides: Vec<OverrideImpact>,
    /// What a reviewer must see of the new content
    /// ([`super::review`]).
    pub review: Vec<Finding>,
    /// Which way the lock moves from `from` to `to`, when they differ
    /// ([`super::history`]): a lock that moves backwards is never silent.
    pub history: Option<super::history::Movement>,
    /// For a source pinned to a commit: where the default branch is now.
    pub pin: Option<super::history::Pin>,
    /// The tag the source names, when upstream moved it to another commit
    /// since the lock was written: a rewrite, accepted only with
    /// `--accept-moved-tag`.
    pub tag_moved: Option<String>,
    /// The keys of the source in sources.toml that differ from the lock
    /// (`url`, `ref`, `path`, `skills`): the lock is written again to match.
    pub out_of_step: Vec<&'static str>,
    /// The ref `--to` records for this source in sources.toml (a commit
    /// by its full id), so that the next update keeps to it.
    pub sets_ref: Option<String>,
}

/// What changed upstream in one skill.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SkillChange {
    /// The skill.
    pub skill: String,
    /// Added, removed or changed.
    pub change: Change,
    /// Top-level fields whose value changed (added or removed included).
    pub fields: Vec<String>,
    /// Sections of the body added, by label.
    pub sections_added: Vec<String>,
    /// Sections removed.
    pub sections_removed: Vec<String>,
    /// Sections renamed: `[old, new]` (the same text under a new heading).
    pub sections_renamed: Vec<[String; 2]>,
    /// Sections whose text changed.
    pub sections_changed: Vec<String>,
    /// Files added, by path in the skill.
    pub files_added: Vec<String>,
    /// Files removed.
    pub files_removed: Vec<String>,
    /// Files changed.
    pub files_changed: Vec<String>,
    /// Files whose execute bit upstream set (`100644` → `100755`).
    pub made_executable: Vec<String>,
    /// Files whose execute bit upstream cleared.
    pub no_longer_executable: Vec<String>,
    /// What the project's targets refuse of the skill as it will be
    /// merged (upstream's new version under the team and user
    /// overrides): the next export for that target fails.
    pub targets: Vec<TargetRefusal>,
}

/// A rule of a target that a skill, as it will be merged, breaks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TargetRefusal {
    /// The target.
    pub target: String,
    /// The field, as `explain` writes paths.
    pub field: Option<String>,
    /// What is wrong, as `validate --target` says it.
    pub message: String,
}

/// What happened to a skill upstream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// New upstream.
    Added,
    /// Gone upstream.
    Removed,
    /// Its files changed.
    #[default]
    Changed,
}

impl Change {
    /// Its name, as JSON gives it.
    pub fn name(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Removed => "removed",
            Change::Changed => "changed",
        }
    }
}

/// How an update touches an override.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Impact {
    /// It sets a field whose upstream value changed: it may now be stale.
    StaleValue,
    /// A section directive names a heading the new body does not have.
    HeadingGone,
    /// It replaces a file that changed upstream.
    ReplacedFileChanged,
    /// It overrides a skill upstream removed.
    SkillRemoved,
    /// It replaces a section whose text changed upstream: the new
    /// upstream text is hidden by the layer's.
    ReplacedSectionChanged,
    /// It deletes a section whose text changed upstream.
    DeletedSectionChanged,
    /// Its section with a plain heading replaced upstream's, which is
    /// gone: it is now added at the end of the skill, which
    /// `validate` warns about until the layer marks it `$patch: add` or
    /// removes it.
    ReplacementNowAdded,
    /// Its section marked `$patch: add` has a heading upstream now has
    /// too: it replaces upstream's new section.
    AdditionNowReplaces,
}

/// One override the update touches.
#[derive(Debug, Clone, Serialize)]
pub struct OverrideImpact {
    /// The skill.
    pub skill: String,
    /// `team` or `user`.
    pub layer: Layer,
    /// The layer's file.
    pub file: String,
    /// How.
    pub kind: Impact,
    /// The field, section or file concerned.
    pub what: String,
}

/// The old SKILL.md of a skill, if the old entry can be read.
pub type OldReader<'a> = &'a dyn Fn(&str) -> Option<Vec<u8>>;

/// One source's two states: as locked, and as fetched now.
pub struct Sides<'a> {
    /// The lock's entry now (`None`: not locked yet).
    pub old: Option<&'a LockedSource>,
    /// A file's bytes from the old cache entry, if there is one.
    pub old_file: OldReader<'a>,
    /// The entry the update would lock.
    pub new: &'a LockedSource,
    /// Its files.
    pub fetched: &'a Fetched,
}

/// What a report judges the changes against: the merge spec, the layers
/// (whose team and user overrides it looks up) and the targets the
/// project exports to (`targets.toml`, [`super::project_targets`]).
#[derive(Clone, Copy)]
pub struct Project<'a> {
    /// The merge spec.
    pub spec: &'a MergeSpec,
    /// The layers, without the sources' base layers.
    pub layers: &'a Layers,
    /// The targets the project exports to (empty: none named).
    pub targets: &'a [Target],
}

/// A skill's `SKILL/PATH` files → digest, by skill.
type BySkill = BTreeMap<String, BTreeMap<String, String>>;

fn by_skill(files: &BTreeMap<String, String>) -> BySkill {
    let mut m = BySkill::new();
    for (f, d) in files {
        let (skill, rest) = f.split_once('/').unwrap_or((f, ""));
        m.entry(skill.to_owned())
            .or_default()
            .insert(rest.to_owned(), d.clone());
    }
    m
}

/// Compares the two [`Sides`] of source `source`, for the skills `only`
/// (all if empty): what changed upstream, every override of them in the
/// team and user layers it touches, what a reviewer must see, and what the
/// project's targets would refuse of the skills as they will be merged.
pub fn compare(
    project: &Project<'_>,
    source: &str,
    sides: &Sides<'_>,
    only: &BTreeSet<String>,
) -> SourceReport {
    let Sides {
        old,
        old_file,
        new,
        fetched,
    } = *sides;
    let empty = BTreeMap::new();
    let old_files = old.map(|o| &o.files).unwrap_or(&empty);
    let before = by_skill(old_files);
    let after = by_skill(&new.files);
    let names: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    let mut report = SourceReport {
        source: source.to_owned(),
        from: old.map(|o| o.commit.clone()),
        to: new.commit.clone(),
        moved: old.is_none_or(|o| {
            o.commit != new.commit || o.files != new.files || o.executable != new.executable
        }),
        ..SourceReport::default()
    };
    let mut taken = fetched.files.clone();
    taken.retain(|f, _| only.is_empty() || only.contains(super::skill_of(f)));
    let old_executable: &[String] = old.map(|o| o.executable.as_slice()).unwrap_or(&[]);
    let was = super::review::Before {
        digests: old_files,
        executable: old_executable,
        file: old_file,
    };
    report.review = super::review::review(&taken, &fetched.executable, Some(&was));
    // The execute bits, per skill: `PATH` and whether it is set now.
    let mut bits: BTreeMap<&str, Vec<(&str, bool)>> = BTreeMap::new();
    let now: BTreeSet<&str> = new.executable.iter().map(String::as_str).collect();
    let then: BTreeSet<&str> = old_executable.iter().map(String::as_str).collect();
    for f in now.symmetric_difference(&then) {
        // Only files on both sides: a file added or removed is said so.
        if old_files.contains_key(*f) && new.files.contains_key(*f) {
            let (skill, rest) = f.split_once('/').unwrap_or((f, ""));
            bits.entry(skill).or_default().push((rest, now.contains(f)));
        }
    }
    for name in names {
        if !only.is_empty() && !only.contains(name) {
            continue;
        }
        let Some(mut change) = files_changed(
            name,
            before.get(name),
            after.get(name),
            bits.get(name.as_str()).map(Vec::as_slice).unwrap_or(&[]),
        ) else {
            continue;
        };
        // Fields and sections, from the two SKILL.md files.
        let md = format!("{name}/SKILL.md");
        let old_md = before
            .get(name)
            .and_then(|_| old_file(&md))
            .map(|v| String::from_utf8_lossy(&v).into_owned());
        let new_md = fetched
            .files
            .get(&md)
            .map(|v| String::from_utf8_lossy(v).into_owned());
        let (of, nf) = (
            parse(project.spec, &md, old_md),
            parse(project.spec, &md, new_md),
        );
        let mut body = Bodies::default();
        if let (Some(of), Some(nf)) = (&of, &nf) {
            let keys: BTreeSet<&String> = of.fields().keys().chain(nf.fields().keys()).collect();
            change.fields = keys
                .into_iter()
                .filter(|k| of.fields().get(*k) != nf.fields().get(*k))
                .cloned()
                .collect();
            if let Some(field) = &project.spec.body_field {
                body = Bodies::of(field, of, nf);
                section_changes(&mut change, &body.old, &body.new);
            }
        }
        let layers = overrides(project, name, &change, &body, &mut report.overrides);
        if let Some(nf) = nf
            && change.change != Change::Removed
            && !project.targets.is_empty()
        {
            change.targets = refusals(project, name, nf, layers);
        }
        report.skills.push(change);
    }
    report
}

/// The files of skill `name` added, removed, changed and whose execute
/// bit changed (`bits`) between `before` and `after`; `None` when nothing
/// did.
fn files_changed(
    name: &str,
    before: Option<&BTreeMap<String, String>>,
    after: Option<&BTreeMap<String, String>>,
    bits: &[(&str, bool)],
) -> Option<SkillChange> {
    let mut change = SkillChange {
        skill: name.to_owned(),
        ..SkillChange::default()
    };
    match (before, after) {
        (Some(_), None) => change.change = Change::Removed,
        (None, Some(files)) => {
            change.change = Change::Added;
            change.files_added = files.keys().cloned().collect();
        }
        (Some(b), Some(a)) => {
            change.change = Change::Changed;
            for (f, d) in a {
                match b.get(f) {
                    None => change.files_added.push(f.clone()),
                    Some(old) if old != d => change.files_changed.push(f.clone()),
                    Some(_) => {}
                }
            }
            change.files_removed = b.keys().filter(|f| !a.contains_key(*f)).cloned().collect();
            for (f, set) in bits {
                if *set {
                    change.made_executable.push((*f).to_owned());
                } else {
                    change.no_longer_executable.push((*f).to_owned());
                }
            }
            if change.files_added.is_empty()
                && change.files_removed.is_empty()
                && change.files_changed.is_empty()
                && change.made_executable.is_empty()
                && change.no_longer_executable.is_empty()
            {
                return None;
            }
        }
        (None, None) => return None,
    }
    Some(change)
}

/// A `SKILL.md` of upstream's, read as a base fragment (decoded lossily,
/// as a client reads it); `None` when it cannot be read as one.
fn parse(spec: &MergeSpec, md: &str, text: Option<String>) -> Option<Fragment> {
    let options = load_options(spec);
    Fragment::from_str(text?, Form::SkillMd, Layer::Base, Path::new(md), &options).ok()
}

/// The old and the new body, split into sections.
#[derive(Default)]
struct Bodies {
    old: Vec<(Key, String)>,
    new: Vec<(Key, String)>,
}

impl Bodies {
    fn of(field: &str, old: &Fragment, new: &Fragment) -> Bodies {
        let split = |f: &Fragment| -> Vec<(Key, String)> {
            let text = f.fields().get(field).and_then(|v| v.as_str()).unwrap_or("");
            // A section's trailing blank lines are where it sits (before
            // another, or last), not what it says.
            sections::split(text)
                .into_iter()
                .map(|s| (s.key, s.text.trim_end().to_owned()))
                .collect()
        };
        Bodies {
            old: split(old),
            new: split(new),
        }
    }

    fn old_text(&self, k: &Key) -> Option<&str> {
        self.old
            .iter()
            .find(|(o, _)| o == k)
            .map(|(_, t)| t.as_str())
    }

    fn new_text(&self, k: &Key) -> Option<&str> {
        self.new
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, t)| t.as_str())
    }
}

/// The team and user overrides of skill `name` that `change` touches,
/// pushed onto `out`; returns their fragments, lowest first, for the
/// merge the targets judge.
fn overrides(
    project: &Project<'_>,
    name: &str,
    change: &SkillChange,
    body: &Bodies,
    out: &mut Vec<OverrideImpact>,
) -> Vec<Fragment> {
    let spec = project.spec;
    let options = load_options(spec);
    let mut fragments = Vec::new();
    for l in project
        .layers
        .locate(name)
        .into_iter()
        .filter(|l| l.layer != Layer::Base)
    {
        let file = crate::text::path(&l.path);
        let mut push = |kind, what: String| {
            out.push(OverrideImpact {
                skill: name.to_owned(),
                layer: l.layer,
                file: file.clone(),
                kind,
                what,
            })
        };
        if change.change == Change::Removed {
            push(Impact::SkillRemoved, name.to_owned());
            continue;
        }
        if let Some(dir) = l.skill_dir().map(Path::to_path_buf) {
            for f in &change.files_changed {
                if f != "SKILL.md" && l.root.metadata(&dir.join(f)).is_ok() {
                    push(Impact::ReplacedFileChanged, f.clone());
                }
            }
        }
        let Ok(frag) = Fragment::load(&l, &options) else {
            continue;
        };
        let by_sections = body_by_sections(spec, &frag);
        for field in &change.fields {
            let by_section = by_sections.is_some_and(|(f, _)| f == field);
            if frag.fields().contains_key(field) && !by_section {
                push(Impact::StaleValue, field.clone());
            }
        }
        // What its changes by section now sit on.
        if let Some((_, text)) = by_sections
            && !body.new.is_empty()
            && let Ok(ops) = sections::ops(text)
        {
            for (kind, what) in ops.into_iter().filter_map(|op| section_impact(op, body)) {
                push(kind, what);
            }
        }
        fragments.push(frag);
    }
    fragments
}

/// How a skill's fragments are loaded here: with the spec's body field.
fn load_options(spec: &MergeSpec) -> LoadOptions {
    LoadOptions {
        body_field: spec.body_field.clone(),
        ..LoadOptions::default()
    }
}

/// An override's body field and its text, when the override changes the
/// body by section (the spec always merges it so, or the text asks to).
fn body_by_sections<'s, 'f>(spec: &'s MergeSpec, frag: &'f Fragment) -> Option<(&'s str, &'f str)> {
    let field = spec.body_field.as_deref()?;
    let text = frag.fields().get(field)?.as_str()?;
    let always = spec
        .field(field)
        .is_some_and(|f| f.sections == Some(crate::spec::Sections::Always));
    (always || sections::asks(text)).then_some((field, text))
}

/// What upstream's change of the body does to one change by section of
/// an override (`op`): the impact and the section's heading, if any.
fn section_impact(op: Op<'_>, body: &Bodies) -> Option<(Impact, String)> {
    let (key, kind_gone, kind_changed) = match op {
        // An addition whose heading upstream now has: it replaces
        // upstream's new section.
        Op::Put {
            section,
            intent: Intent::Add,
        } => {
            let now_there =
                body.old_text(&section.key).is_none() && body.new_text(&section.key).is_some();
            return now_there.then(|| (Impact::AdditionNowReplaces, section.key.label()));
        }
        // A plain heading that replaced upstream's section is added at
        // the end once upstream's is gone.
        Op::Put {
            section,
            intent: Intent::Either,
        } => (
            section.key,
            Impact::ReplacementNowAdded,
            Some(Impact::ReplacedSectionChanged),
        ),
        Op::Put { section, .. } => (
            section.key,
            Impact::HeadingGone,
            Some(Impact::ReplacedSectionChanged),
        ),
        Op::Delete { key, .. } => (
            key,
            Impact::HeadingGone,
            Some(Impact::DeletedSectionChanged),
        ),
        Op::Insert {
            at: Anchor::Before(k) | Anchor::After(k),
            ..
        } => (k, Impact::HeadingGone, None),
        Op::Insert { .. } => return None,
    };
    match (body.old_text(&key), body.new_text(&key)) {
        (Some(_), None) => Some((kind_gone, key.label())),
        (Some(was), Some(is)) if was != is => kind_changed.map(|kind| (kind, key.label())),
        _ => None,
    }
}

/// What the project's targets refuse of skill `name` as it will be
/// merged: upstream's new `SKILL.md` under the team and user overrides.
fn refusals(
    project: &Project<'_>,
    name: &str,
    base: Fragment,
    overrides: Vec<Fragment>,
) -> Vec<TargetRefusal> {
    let mut fragments = vec![base];
    fragments.extend(overrides);
    let effective = crate::merge::merge(project.spec, name, &fragments);
    project
        .targets
        .iter()
        .flat_map(|t| {
            t.problems(
                project.spec,
                &effective,
                &fragments,
                crate::error::Severity::Error,
            )
            .into_iter()
            .filter(|d| d.severity == crate::error::Severity::Error)
            .map(|d| TargetRefusal {
                target: t.name.clone(),
                field: d.field.clone(),
                message: d.message(),
            })
        })
        .collect()
}

/// Sections added, removed, renamed (the same text under a new heading)
/// and changed, by key.
fn section_changes(change: &mut SkillChange, old: &[(Key, String)], new: &[(Key, String)]) {
    let body = |t: &str| {
        t.split_once('\n')
            .map(|(_, rest)| rest.to_owned())
            .unwrap_or_default()
    };
    let old_map: BTreeMap<String, (&Key, &String)> =
        old.iter().map(|(k, t)| (k.label(), (k, t))).collect();
    let new_map: BTreeMap<String, (&Key, &String)> =
        new.iter().map(|(k, t)| (k.label(), (k, t))).collect();
    let added: Vec<&String> = new_map
        .keys()
        .filter(|k| !old_map.contains_key(*k))
        .collect();
    // The added sections by body, each body's in label order: a removed
    // section is renamed to the first added one with its body, found by
    // a lookup rather than a walk of every added section.
    let mut by_body: std::collections::HashMap<String, std::collections::VecDeque<&String>> =
        std::collections::HashMap::new();
    for a in &added {
        let (_, t) = new_map[*a];
        by_body.entry(body(t)).or_default().push_back(*a);
    }
    let mut renamed_to = std::collections::BTreeSet::new();
    for (label, (_, text)) in &old_map {
        match new_map.get(label) {
            Some((_, t)) if t != text => change.sections_changed.push(label.clone()),
            Some(_) => {}
            None => {
                let old_body = body(text);
                let renamed = if old_body.trim().is_empty() {
                    None
                } else {
                    by_body.get_mut(&old_body).and_then(|q| q.pop_front())
                };
                match renamed {
                    Some(to) => {
                        renamed_to.insert(to);
                        change.sections_renamed.push([label.clone(), to.clone()]);
                    }
                    None => change.sections_removed.push(label.clone()),
                }
            }
        }
    }
    change.sections_added = added
        .into_iter()
        .filter(|a| !renamed_to.contains(a))
        .cloned()
        .collect();
}
