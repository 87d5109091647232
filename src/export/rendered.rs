//! What one skill exports as: its files in the output directory, for a
//! format or a target.

use super::record;
use super::{Format, OutFile, Rendered, unexportable_at};
use crate::engine::Skills;
use crate::error::{Diagnostic, DiagnosticKind, Error, Result};
use crate::merge::Resolved;
use crate::output::render;
use crate::source::Located;
use crate::source::files::SkillFile;

/// What skill `name` exports as for `target` (or, without one, in
/// `format`); `None` when it is switched off for it.
pub(super) fn rendered_for(
    skills: &Skills,
    name: &str,
    located: &[Located],
    format: Format,
    target: Option<&crate::target::Target>,
) -> Result<Option<Rendered>> {
    made_for(skills, name, located, format, target)?.files
}

/// A skill as export makes it: resolved once, and what it exports as.
pub(super) struct Made {
    /// Its files (`None` when it is switched off for the target), or why
    /// it cannot be exported.
    pub files: Result<Option<Rendered>>,
    /// The skill the files were made from, for a caller that goes on with
    /// it ([`Skills::resolved_report`]).
    pub resolved: Resolved,
    /// The skill's own files, when they were listed to be exported: the
    /// same caller checks them without listing them again.
    pub walked: Option<Vec<SkillFile>>,
}

/// [`rendered_for`], with the skill resolved to make the files; an error
/// only when it does not resolve.
pub(super) fn made_for(
    skills: &Skills,
    name: &str,
    located: &[Located],
    format: Format,
    target: Option<&crate::target::Target>,
) -> Result<Made> {
    if let Some(d) = unexportable_at(name, located) {
        return Err(d.into());
    }
    let resolved = skills.resolve_located(name, located)?;
    let mut walked = None;
    let files = render(
        skills,
        (name, located),
        format,
        target,
        &resolved,
        &mut walked,
    );
    Ok(Made {
        files,
        resolved,
        walked,
    })
}

/// What `resolved` exports as ([`rendered_for`]); the skill's files, once
/// listed, are left in `walked`.
fn render(
    skills: &Skills,
    (name, located): (&str, &[Located]),
    format: Format,
    target: Option<&crate::target::Target>,
    resolved: &Resolved,
    walked: &mut Option<Vec<SkillFile>>,
) -> Result<Option<Rendered>> {
    if !exported(skills, target, resolved)? {
        return Ok(None);
    }
    let effective = resolved.effective();
    // The values a target judges and a SKILL.md holds, made once.
    let made = target.is_some() || format == Format::Skill;
    let values = match made.then(|| effective.to_value()) {
        Some(serde_json::Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    if let Some(t) = target {
        let errors: Vec<Diagnostic> = t
            .check_values(
                skills.spec(),
                effective,
                &values,
                resolved.fragments(),
                crate::error::Severity::Error,
            )
            .into_iter()
            .filter(Diagnostic::is_error)
            .collect();
        if !errors.is_empty() {
            return Err(Error::Invalid(errors));
        }
    }
    // A SKILL.md among the skill's files is refused in every format:
    // whoever loads the skill's directory would find it. In the skill
    // format, so are paths that cannot all be written.
    let files: &[SkillFile] = walked.insert(skills.files_of(located)?);
    let mut problems = crate::source::files::skill_md_files(files);
    if format == Format::Skill {
        let generated = match target {
            Some(t) => t.generated(),
            None => vec![crate::source::files::Generated::skill_md()],
        };
        problems.extend(crate::source::files::collisions(files, &generated));
    }
    if !problems.is_empty() {
        return Err(Error::Invalid(problems));
    }
    match format {
        Format::Json => {
            let files = vec![OutFile::new(
                format!("{name}.json"),
                render::effective_to_json(effective).into_bytes(),
            )];
            Ok(Some(files))
        }
        Format::Skill => {
            let (skill_md, translated) = skill_md(skills, name, target, resolved, &values)?;
            let mut out = vec![OutFile::new(
                format!("{name}/SKILL.md"),
                skill_md.into_bytes(),
            )];
            let given = copy_files(skills, name, files, &translated, &mut out)?;
            out.extend(translations(name, translated, given));
            Ok(Some(out))
        }
    }
}

/// Whether `resolved` is exported (for `target`): not when it is switched
/// off (for the target), nor when it is an orphan lacking what the targets
/// require. A skill switched on for only some of the targets that share a
/// directory with `target` is refused.
fn exported(
    skills: &Skills,
    target: Option<&crate::target::Target>,
    resolved: &Resolved,
) -> Result<bool> {
    let effective = resolved.effective();
    let switch = crate::target::switch(skills.spec(), effective);
    if !switch.enabled {
        return Ok(false);
    }
    if let Some(t) = target {
        // A directory written once for several targets holds the skill
        // for all of them, or for none.
        let all: Vec<&str> = std::iter::once(t.name.as_str())
            .chain(t.shared_with().iter().map(String::as_str))
            .collect();
        if let Some(d) = crate::target::shared_switch_problem(
            skills.spec(),
            effective,
            resolved.fragments(),
            &all,
        ) {
            return Err(Error::Invalid(vec![d]));
        }
        if !switch.goes_to(&t.name) {
            return Ok(false);
        }
    }
    // A skill no layer below the one introducing it defines, lacking what
    // the targets require, is not exported (`validate` warns).
    Ok(skills
        .orphan(effective, resolved.fragments(), target)
        .is_none())
}

/// Skill `name`'s SKILL.md, from its `values`, with the frontmatter the
/// format (or `target`) writes, and the target's translations (files of
/// the skill, by path, with their YAML value).
fn skill_md(
    skills: &Skills,
    name: &str,
    target: Option<&crate::target::Target>,
    resolved: &Resolved,
    values: &serde_json::Map<String, serde_json::Value>,
) -> Result<(String, Vec<(String, serde_json::Value)>)> {
    let Some(t) = target else {
        let (front, body) = crate::output::skillmd::parts(skills.spec(), name, values)?;
        return Ok((document(skills, resolved, front, || body), Vec::new()));
    };
    let r = t.render(skills.spec(), values);
    let front: Vec<(&str, &serde_json::Value)> =
        r.front.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let body = || crate::output::skillmd::body_of(skills.spec(), values);
    Ok((document(skills, resolved, front, body), r.files))
}

/// The SKILL.md with frontmatter `front` and the body `body` gives: the
/// one upstream wrote when that is what it holds already
/// (`skillmd::verbatim`), else one made here.
fn document<'v>(
    skills: &Skills,
    resolved: &Resolved,
    front: crate::output::skillmd::Front<'v>,
    body: impl FnOnce() -> &'v str,
) -> String {
    match crate::output::skillmd::verbatim(skills.spec(), resolved.fragments(), &front) {
        Some(upstream) => upstream.to_owned(),
        None => crate::output::skillmd::document(front, body()),
    }
}

/// Adds to `out` skill `name`'s own `files`, copied as bytes; returns,
/// parsed, those a translation (in `translated`) merges into. A layer's
/// file where a translation writes is parsed, as a fragment is, never
/// copied as it is. A file the record could not name, or that cannot be
/// read within its root, is refused.
fn copy_files(
    skills: &Skills,
    name: &str,
    files: &[SkillFile],
    translated: &[(String, serde_json::Value)],
    out: &mut Vec<OutFile>,
) -> Result<Vec<(String, serde_json::Map<String, serde_json::Value>)>> {
    let mut given = Vec::new();
    for f in files {
        let refused = |reason: String| {
            Error::from(
                Diagnostic::error(Some(&f.source.path), DiagnosticKind::Refused { reason })
                    .in_layer(f.source.layer),
            )
        };
        let rel = format!("{name}/{}", f.rel);
        // The record must be able to name it.
        if let Err(why) = record::check_rel(name, &rel, Format::Skill) {
            return Err(refused(format!(
                "cannot be exported: its path inside the skill has {why}"
            )));
        }
        if translated.iter().any(|(t, _)| *t == f.rel) {
            let fields = crate::target::read_translated(f, skills.max_fragment_bytes())?;
            given.push((f.rel.clone(), fields));
            continue;
        }
        // Copied as bytes, never parsed; confined like every read.
        let bytes = crate::source::confine::read_in_root(&f.root, &f.source.path, f.source.size)
            .map_err(|r| refused(r.describe(&f.source.path, &f.source.layer.to_string())))?;
        out.push(OutFile {
            rel,
            bytes,
            executable: f.source.executable,
        });
    }
    Ok(given)
}

/// A target's `translated` files of skill `name`, written as YAML, each
/// merged into the file of that name a layer provides (`given`, parsed).
fn translations(
    name: &str,
    translated: Vec<(String, serde_json::Value)>,
    mut given: Vec<(String, serde_json::Map<String, serde_json::Value>)>,
) -> Vec<OutFile> {
    let mut out = Vec::new();
    for (rel, doc) in translated {
        let mut doc = doc;
        if let Some(i) = given.iter().position(|(g, _)| *g == rel) {
            let mut base = serde_json::Value::Object(given.swap_remove(i).1);
            deep_merge(&mut base, doc);
            doc = base;
        }
        let serde_json::Value::Object(m) = &doc else {
            continue;
        };
        let text = crate::output::yaml_out::mapping(m.iter().map(|(k, v)| (k.as_str(), v)));
        out.push(OutFile::new(format!("{name}/{rel}"), text.into_bytes()));
    }
    out
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
