//! The impact of a spec edit: every skill in the layers merged under two
//! merge specs, the old one and the new one, and what differs — the skills
//! whose effective JSON changes, the fragments that become invalid or valid,
//! and the skills that fail under both.
//!
//! It is what a maintainer runs before committing a change to the spec, and
//! what CI runs on a pull request that touches it
//! (`bernstein skills spec impact --against OLD_SPEC`).
//!
//! Each fragment is read and parsed once and then checked and merged under
//! both specs. Only when the two specs name different `body_field`s is a
//! `SKILL.md` read once per spec, since its body lands in that field.
//! Skills are compared one at a time on each worker ([`crate::par::map`]),
//! so memory stays flat however many skills there are; only what differs is
//! kept.

use serde_json::{Value, json};

use crate::error::Diagnostic;
use crate::export::short_diff;
use crate::fragment::{Fragment, LoadOptions};
use crate::layer::Form;
use crate::merge::merge;
use crate::source::{Layers, Located};
use crate::spec::MergeSpec;
use crate::validate::Validator;

/// How [`compare`] runs.
#[derive(Debug, Clone)]
pub struct ImpactOptions {
    /// Worker threads.
    pub jobs: usize,
    /// Fragment files larger than this are refused (under both specs).
    pub max_fragment_bytes: u64,
    /// The most changed lines shown in one skill's diff.
    pub diff_lines: usize,
}

impl Default for ImpactOptions {
    fn default() -> Self {
        ImpactOptions {
            jobs: crate::par::default_jobs(),
            max_fragment_bytes: crate::fragment::DEFAULT_MAX_BYTES,
            diff_lines: 12,
        }
    }
}

/// A skill whose effective JSON (the `show` JSON) differs between the specs.
#[derive(Debug, Clone, PartialEq)]
pub struct Changed {
    /// The skill.
    pub name: String,
    /// The top-level fields whose values differ (or that only one spec
    /// has), sorted.
    pub fields: Vec<String>,
    /// A short line diff, old → new: each line an escaped excerpt
    /// (`short_diff`).
    pub diff: Vec<String>,
}

/// A fragment valid under one spec and not under the other.
#[derive(Debug, Clone, PartialEq)]
pub struct FragmentChange {
    /// The skill it belongs to.
    pub skill: String,
    /// Its first problem (by line) under the spec it fails: the new spec
    /// for a fragment that becomes invalid, the old one for one that
    /// becomes valid. It names the file, layer, line and column.
    pub problem: Diagnostic,
    /// How many problems it has under that spec.
    pub problems: usize,
}

/// What changes when the old spec is replaced by the new one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Impact {
    /// How many skills the layers hold (every one was compared).
    pub skills: usize,
    /// Skills valid under both specs whose effective JSON differs, by name.
    pub changed: Vec<Changed>,
    /// Fragments valid under the old spec and invalid under the new one,
    /// by skill name, then layer.
    pub became_invalid: Vec<FragmentChange>,
    /// Fragments invalid under the old spec and valid under the new one.
    pub became_valid: Vec<FragmentChange>,
    /// Skills with an invalid fragment under both specs, by name (their
    /// effective skills cannot be compared).
    pub failing_both: Vec<String>,
}

impl Impact {
    /// Does the edit change nothing: no effective skill and no fragment's
    /// validity? (Skills that fail under both specs do not count.)
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.became_invalid.is_empty() && self.became_valid.is_empty()
    }

    /// The impact as one JSON document, `{"skills", "changed": [{"name",
    /// "fields", "diff"}], "became_invalid", "became_valid", "failing_both",
    /// "summary"}`; each fragment change is a diagnostic object (as
    /// `validate --json` prints them, without `severity`) with its `skill`
    /// and its number of `problems`. Render it with
    /// [`crate::output::render::to_json`] for deterministic text.
    pub fn to_value(&self) -> Value {
        let fragments = |changes: &[FragmentChange]| -> Vec<Value> {
            changes
                .iter()
                .map(|c| {
                    let mut v = c.problem.to_json();
                    if let Value::Object(m) = &mut v {
                        m.remove("severity");
                        m.insert("skill".into(), json!(c.skill));
                        m.insert("problems".into(), json!(c.problems));
                    }
                    v
                })
                .collect()
        };
        let changed: Vec<Value> = self
            .changed
            .iter()
            .map(|c| json!({"skill": c.name, "fields": c.fields, "diff": c.diff}))
            .collect();
        json!({
            "skills": self.skills,
            "changed": changed,
            "became_invalid": fragments(&self.became_invalid),
            "became_valid": fragments(&self.became_valid),
            "failing_both": self.failing_both,
            "summary": {
                "skills": self.skills,
                "changed": self.changed.len(),
                "became_invalid": self.became_invalid.len(),
                "became_valid": self.became_valid.len(),
                "failing_both": self.failing_both.len(),
            },
        })
    }
}

/// One spec, its compiled schema and how fragments are read under it.
struct Side<'a> {
    spec: &'a MergeSpec,
    validator: Validator,
    options: LoadOptions,
}

impl Side<'_> {
    /// Every problem of a loaded (or unloadable) fragment under this spec.
    fn problems(&self, loaded: &Result<Fragment, Diagnostic>) -> Vec<Diagnostic> {
        match loaded {
            Ok(f) => self.validator.validate(self.spec, f),
            Err(d) => vec![d.clone()],
        }
    }

    fn effective_json(&self, name: &str, fragments: &[Fragment]) -> String {
        crate::output::render::effective_to_json(&merge(self.spec, name, fragments))
    }
}

/// What one skill contributes to the [`Impact`].
#[derive(Default)]
struct One {
    changed: Option<(Vec<String>, Vec<String>)>,
    became_invalid: Vec<FragmentChange>,
    became_valid: Vec<FragmentChange>,
    fails_both: bool,
}

/// Merges every skill in `layers` under `old` and under `new` and reports
/// what differs. Both fragment schemas are compiled here, once each.
///
/// # Errors
///
/// When a layer's directory holds more entries than a layer may
/// ([`Layers::catalog`]).
pub fn compare(
    old: &MergeSpec,
    new: &MergeSpec,
    layers: &Layers,
    options: &ImpactOptions,
) -> crate::Result<Impact> {
    let side = |spec| Side {
        spec,
        validator: Validator::new(spec),
        options: LoadOptions {
            max_bytes: options.max_fragment_bytes,
            body_field: spec.body_field.clone(),
            ..LoadOptions::default()
        },
    };
    let (old, new) = (side(old), side(new));
    let catalog = layers.catalog()?;
    let results = crate::par::map(&catalog, options.jobs, |(name, located)| {
        one(&old, &new, name, located, options.diff_lines)
    });
    let mut impact = Impact {
        skills: catalog.len(),
        ..Impact::default()
    };
    for ((name, _), r) in catalog.iter().zip(results) {
        if let Some((fields, diff)) = r.changed {
            impact.changed.push(Changed {
                name: name.clone(),
                fields,
                diff,
            });
        }
        impact.became_invalid.extend(r.became_invalid);
        impact.became_valid.extend(r.became_valid);
        if r.fails_both {
            impact.failing_both.push(name.clone());
        }
    }
    Ok(impact)
}

/// Compares one skill.
fn one(old: &Side, new: &Side, name: &str, located: &[Located], diff_lines: usize) -> One {
    let mut out = One::default();
    // Each file read once; a SKILL.md again only if its body goes elsewhere.
    let same_body = old.options.body_field == new.options.body_field;
    let mut loaded = Vec::with_capacity(located.len());
    let (mut old_ok, mut new_ok) = (true, true);
    for l in located {
        let under_old = Fragment::load(l, &old.options);
        let under_new =
            (!same_body && l.form == Form::SkillMd).then(|| Fragment::load(l, &new.options));
        let old_problems = old.problems(&under_old);
        let new_problems = new.problems(under_new.as_ref().unwrap_or(&under_old));
        let (valid_old, valid_new) = (old_problems.is_empty(), new_problems.is_empty());
        let change = |mut problems: Vec<Diagnostic>| FragmentChange {
            skill: name.to_owned(),
            problems: problems.len(),
            problem: problems.swap_remove(0),
        };
        match (valid_old, valid_new) {
            (true, false) => out.became_invalid.push(change(new_problems)),
            (false, true) => out.became_valid.push(change(old_problems)),
            _ => {}
        }
        old_ok &= valid_old;
        new_ok &= valid_new;
        loaded.push((under_old, under_new));
    }
    out.fails_both = !old_ok && !new_ok;
    if !(old_ok && new_ok) {
        return out;
    }
    let (old_json, new_json) = if loaded.iter().all(|(_, n)| n.is_none()) {
        // The usual case: the very same fragments under both specs.
        let fragments: Vec<Fragment> = loaded.into_iter().filter_map(|(o, _)| o.ok()).collect();
        (
            old.effective_json(name, &fragments),
            new.effective_json(name, &fragments),
        )
    } else {
        let (olds, news): (Vec<Fragment>, Vec<Fragment>) = loaded
            .into_iter()
            .filter_map(|(o, n)| {
                let o = o.ok()?;
                let n = match n {
                    Some(n) => n.ok()?,
                    None => o.clone(),
                };
                Some((o, n))
            })
            .unzip();
        (
            old.effective_json(name, &olds),
            new.effective_json(name, &news),
        )
    };
    if old_json != new_json {
        out.changed = Some((
            changed_fields(&old_json, &new_json),
            short_diff(&old_json, &new_json, diff_lines),
        ));
    }
    out
}

/// The top-level entries of a skill's rendered JSON, by key: each entry's
/// lines. The rendering is ours ([`crate::output::render`]): two spaces of indent
/// per level and every string on one line, so a line that starts with two
/// spaces and a quote starts a top-level entry.
fn top_level(json: &str) -> std::collections::BTreeMap<String, Vec<&str>> {
    let mut out: std::collections::BTreeMap<String, Vec<&str>> = Default::default();
    let mut current: Option<String> = None;
    // The lines between the outer braces, each indented at least one level.
    for line in json.lines().filter(|l| l.starts_with("  ")) {
        if let Some(rest) = line.strip_prefix("  ").filter(|r| r.starts_with('"')) {
            let key = serde_json::Deserializer::from_str(rest)
                .into_iter::<String>()
                .next()
                .and_then(Result::ok)
                .unwrap_or_else(|| rest.to_owned());
            current = Some(key);
        }
        if let Some(key) = &current {
            out.entry(key.clone())
                .or_default()
                .push(line.trim_end_matches(','));
        }
    }
    out
}

/// The top-level fields whose entries differ between two renderings.
fn changed_fields(old: &str, new: &str) -> Vec<String> {
    let (old, new) = (top_level(old), top_level(new));
    let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| old.get(*k) != new.get(*k))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{ImpactOptions, compare};
    use crate::{Layers, MergeSpec};

    fn spec(text: &str) -> MergeSpec {
        MergeSpec::from_str(text, Path::new("spec.yaml")).unwrap()
    }

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            let p = tmp.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        tmp
    }

    const OLD: &str = "version: 1\nbody_field: body\nfields:\n  tags: {strategy: APPEND}\n  \
                       body: {strategy: OVERRIDE, type: string}\n";

    #[test]
    fn a_strategy_flip_changes_the_skills_that_set_the_field_in_two_layers() {
        let tmp = tree(&[
            ("base/a.yaml", "tags: [x]\n"),
            ("user/a.yaml", "tags: [y]\n"),
            ("base/b.yaml", "tags: [x]\n"),
            ("base/c/SKILL.md", "---\ntags: [z]\n---\nBody\n"),
            ("team/d.yaml", "colour: red\n"),
        ]);
        let old = spec(OLD);
        let flip = spec(&OLD.replace("APPEND", "OVERRIDE"));
        let layers = Layers::from_root(tmp.path());
        let opts = ImpactOptions {
            jobs: 2,
            ..ImpactOptions::default()
        };
        let impact = compare(&old, &flip, &layers, &opts).unwrap();
        assert_eq!(impact.skills, 4);
        let changed: Vec<&str> = impact.changed.iter().map(|c| c.name.as_str()).collect();
        // Only `a` sets `tags` in two layers: the user list now replaces the base one.
        assert_eq!(changed, ["a"]);
        assert_eq!(impact.changed[0].fields, ["tags"]);
        assert_eq!(impact.changed[0].diff, ["-    \"x\","]);
        assert!(impact.became_invalid.is_empty() && impact.became_valid.is_empty());
        assert_eq!(impact.failing_both, ["d"]);
        assert!(!impact.is_empty());

        let same = compare(&old, &old, &layers, &opts).unwrap();
        assert!(same.is_empty(), "{same:?}");
        assert_eq!(same.failing_both, ["d"]);
    }

    #[test]
    fn a_renamed_body_field_reads_a_skill_md_under_each_spec() {
        let tmp = tree(&[("base/c/SKILL.md", "---\ntags: [z]\n---\nBody\n")]);
        let new = spec(
            &OLD.replace("body", "text")
                .replace("text_field", "body_field"),
        );
        let impact = compare(
            &spec(OLD),
            &new,
            &Layers::from_root(tmp.path()),
            &ImpactOptions::default(),
        )
        .unwrap();
        assert_eq!(impact.changed.len(), 1, "{impact:?}");
        assert_eq!(impact.changed[0].fields, ["body", "text"]);
        let diff = impact.changed[0].diff.join("\n");
        assert!(diff.contains("-  \"body\": \"Body\","), "{diff}");
        assert!(diff.contains("+  \"text\": \"Body\""), "{diff}");
    }

    #[test]
    fn fragments_becoming_invalid_and_valid_are_located() {
        let tmp = tree(&[
            ("base/a.yaml", "tags: [x]\n"),
            ("team/a.yaml", "# a comment\nowner: me\n"),
        ]);
        let old = spec(OLD);
        let new = spec(&format!("{OLD}  owner: {{strategy: OVERRIDE}}\n"));
        let layers = Layers::from_root(tmp.path());
        let opts = ImpactOptions::default();
        let added = compare(&old, &new, &layers, &opts).unwrap();
        assert!(added.became_invalid.is_empty() && added.changed.is_empty());
        let [valid] = &added.became_valid[..] else {
            panic!("{added:?}")
        };
        assert_eq!(valid.skill, "a");
        assert_eq!(valid.problems, 1);
        assert_eq!(
            valid.problem.to_string(),
            format!(
                "{}:2:1: error: unknown field 'owner'",
                tmp.path().join("team/a.yaml").display()
            )
        );
        let removed = compare(&new, &old, &layers, &opts).unwrap();
        assert_eq!(removed.became_invalid, added.became_valid);
        assert!(removed.became_valid.is_empty());
        assert_eq!(removed.to_value()["summary"]["became_invalid"], 1);
    }
}
