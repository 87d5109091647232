//! Targets: the consumers of effective skills, as data.
//!
//! The merge spec says how layers merge and what types fields hold, for
//! every skill; it says nothing about who reads the result. A *target* is
//! one such reader — the Agent Skills standard's reference validator,
//! Claude Code, Codex, Gemini CLI, Bernstein's own manifests — written down
//! as a file ([`Target::load`], checked like the spec, with its own
//! generated schema, [`target_schema`]):
//!
//! - which fields it takes, and what happens to the others (`other_fields`:
//!   dropped with a note, refused, or kept);
//! - its required fields and constraints, checked on the **effective**
//!   skill ([`Target::problems`]), so a team override that shortens a
//!   description fixes a base skill whose own was too long;
//! - how a value is rendered for it ([`Render`]: `metadata` flattened to
//!   strings for the standard);
//! - how a field is translated (Codex reads "not invoked implicitly" from
//!   `agents/openai.yaml`, not from the frontmatter);
//! - where it loads skills from, at user and project scope.
//!
//! So `show` never refuses a skill for one consumer's rule, and `validate
//! --target T` and `export --target T` apply T's rules where T's output is
//! made. Only the kinds of rendering are compiled in, as the four
//! strategies are; every target is a file a person can edit without
//! recompiling.

mod flatten;
pub(crate) mod orphan;
mod raw;
mod search;
mod switch;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{Diagnostic, DiagnosticKind, Error, Result, Severity};
use crate::fragment::{self, Fragment, Syntax};
use crate::merge::{Effective, Merged};
use crate::spec::{MergeSpec, RawItemRule, ValueRule};
use crate::text::{self, EXCERPT_CHARS};
pub(crate) use flatten::{may_collide, problems as flatten_problems};
use raw::{Normalizations, RawTarget, RawTargetField};
pub use search::TargetSearch;
pub use switch::{Switch, switch};
pub(crate) use switch::{shared_switch_problem, switch_problems, unknown_switch_targets};

/// The versions of the target file format this build reads.
pub(crate) const SUPPORTED_VERSIONS: [u64; 1] = [1];

/// The largest target file read.
pub(crate) const MAX_TARGET_BYTES: u64 = 256 * 1024;

// One type for the `--format` of `export` and the `format` of a target, so
// a target's format is the very value the command line gives. Its doc
// comments are the editor schema's descriptions (target.schema.json), in
// the order that schema has always listed them.
/// What export writes for each skill.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(rename = "TargetFormat")]
pub enum Format {
    /// `DIR/<name>/SKILL.md` and the skill's files.
    // An Agent Skills directory any agent loads (`output::skillmd`,
    // `source::files`); what a target writes unless it says otherwise.
    Skill,
    /// `DIR/<name>.json`: the effective skill as `show` prints it.
    // What `export` writes unless told otherwise.
    #[default]
    Json,
}

impl Format {
    /// Every format, in the order `--format` lists them.
    pub const ALL: [Format; 2] = [Format::Json, Format::Skill];

    /// The `--format` value (and the target file's `format`).
    pub fn label(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Skill => "skill",
        }
    }

    /// The format whose [`Format::label`] is `label`.
    pub fn from_label(label: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.label() == label)
    }

    /// A target file's format when it gives none: consumers load skill
    /// directories.
    pub fn target_default() -> Format {
        Format::Skill
    }

    /// Skill `name`'s output, relative to the output directory.
    pub(crate) fn entry(self, name: &str) -> String {
        match self {
            Format::Json => format!("{name}.json"),
            Format::Skill => name.to_owned(),
        }
    }
}

/// What happens to an effective field a target does not list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OtherFields {
    /// Left out of the export, with a note.
    #[default]
    Drop,
    /// An error: the consumer refuses a file that has it.
    Refuse,
    /// Written as it is, after the listed fields.
    Keep,
}

/// How a consumer normalises a string before it checks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Normalize {
    /// Unicode NFKC.
    Nfkc,
    /// Surrounding whitespace removed.
    Trim,
}

/// How a value is written for a consumer. The kinds are compiled in; which
/// field gets which is data.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Render {
    /// As the effective skill has it.
    #[default]
    AsIs,
    /// A mapping of strings to strings: nested keys joined with `.`, other values written as JSON text.
    StringMap,
    /// A list of strings written as one string, separated by spaces.
    SpaceSeparated,
    /// A list of strings written as one string, separated by `, `.
    CommaSeparated,
}

/// A checked target.
#[derive(Debug, Clone)]
pub struct Target {
    /// Its name.
    pub name: String,
    /// The consumer's name as people know it (`GitHub Copilot`).
    pub display_name: Option<String>,
    /// What it is.
    pub description: Option<String>,
    /// The file it was read from.
    pub path: PathBuf,
    /// The target its file builds on (`extends`), if any.
    pub extends: Option<String>,
    /// The target whose output this one writes, byte for byte: its own
    /// name, or, for a target that extends another and changes nothing of
    /// how a skill is written (format, fields, other fields, translations),
    /// what its base renders as. Targets that render as the same one may
    /// share a directory ([`Target::renders_like`]).
    pub renders_as: String,
    /// Paths whose existence shows the consumer is installed, as written
    /// (`~/.cursor`); `None`: the directory holding the user place.
    pub detect: Option<Vec<String>>,
    /// Its documentation.
    pub source: Vec<String>,
    /// What export writes.
    pub format: Format,
    /// The user-scope directory, as written (`~/.claude/skills`).
    pub user_place: Option<String>,
    /// The project-scope directory, relative to the project root.
    pub project_place: Option<String>,
    /// What happens to other fields.
    pub other_fields: OtherFields,
    /// The mapping field other fields are written into, as strings, if
    /// any (then `other_fields` applies only to those it cannot take).
    pub other_fields_into: Option<String>,
    /// The fields it takes, in the order they are written.
    pub fields: Vec<TargetField>,
    /// Fields written to other files.
    pub translate: Vec<Translate>,
    /// Other targets that read the same directory and render as this one,
    /// for an export writing it once for all of them: a skill goes there
    /// only if it goes to every one ([`Target::sharing`]).
    pub(crate) shared_with: Vec<String>,
    /// The schema of its frontmatter, compiled on first use (shared with
    /// the target it extends when the fields are the same).
    compiled: Arc<OnceLock<std::result::Result<Arc<jsonschema::Validator>, String>>>,
}

/// One field of a target.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetField {
    /// The field's name.
    pub name: String,
    /// Some layer must give it a non-empty value.
    pub required: bool,
    /// Its type and constraints, as the consumer reads it.
    pub rule: ValueRule,
    /// How the consumer normalises it before checking, in order.
    pub normalize: Vec<Normalize>,
    /// It must equal the skill's directory name.
    pub matches_directory: bool,
    /// How it is written.
    pub render: Render,
}

/// A field written to another file.
#[derive(Debug, Clone, PartialEq)]
pub struct Translate {
    /// The effective skill's field.
    pub field: String,
    /// The file, relative to the skill directory.
    pub file: String,
    /// The key's path in that file.
    pub key: Vec<String>,
    /// Value mappings.
    pub values: Vec<(Value, Value)>,
}

/// A target's output for one skill: the frontmatter, and what it left out.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rendered {
    /// The fields written, in order, rendered.
    pub front: Vec<(String, Value)>,
    /// Set fields the target does not take (left out, or refused).
    pub others: Vec<String>,
    /// Fields not written into the target's `other_fields_into` mapping,
    /// which has a key of their name already.
    pub collided: Vec<String>,
    /// Other files: path relative to the skill directory, YAML value.
    pub files: Vec<(String, Value)>,
}

impl Target {
    /// Reads and checks a target file; a target it `extends` is looked
    /// for beside it.
    pub fn load(path: &Path) -> Result<Target> {
        TargetSearch::beside(path).load_file(path)
    }

    /// Checks a target given as text; `path` names it in messages, and a
    /// target it `extends` is looked for in the directory `path` names.
    pub fn from_str(text: &str, path: &Path) -> Result<Target> {
        let search = TargetSearch::beside(path);
        search.loader().build(text, path)
    }

    /// Checks the target written as `text` in `path`, with `base` finding
    /// the target it extends by name (given the file that names it).
    pub(crate) fn from_text(
        text: &str,
        path: &Path,
        base: &mut dyn FnMut(&str) -> std::result::Result<Target, search::BaseProblem>,
    ) -> Result<Target> {
        let fail = |pointer: &str, message: String| {
            let pos = fragment::locate(text, Syntax::Yaml, pointer, false, 0);
            Error::Invalid(vec![
                Diagnostic::error(Some(path), DiagnosticKind::Spec { message }).at(pos),
            ])
        };
        let (value, order, raw) = parse_target(text, path)?;
        check_identity(&raw, path, &fail)?;
        // What the file inherits, when it extends a target.
        let base = match &raw.extends {
            None => None,
            Some(name) => Some(base(name).map_err(|p| match p {
                search::BaseProblem::Failed(e) => e,
                search::BaseProblem::Located(message) => fail("/extends", message),
            })?),
        };
        let base_fields = base.as_ref().map(|b| b.fields.clone()).unwrap_or_default();
        let fields = merge_fields(
            base_fields.clone(),
            raw.fields,
            &order,
            base.is_some(),
            &fail,
        )?;
        // The keys the file writes: in a file that extends another, the
        // others are the base's.
        let given = |key: &str| value.as_object().is_some_and(|m| m.contains_key(key));
        let inherit = |key: &str| base.as_ref().filter(|_| !given(key));
        let translate = match inherit("translate") {
            Some(b) => b.translate.clone(),
            None => check_translate(raw.translate).map_err(|(p, m)| fail(&p, m))?,
        };
        let (user_place, project_place) = inherit("places")
            .map_or((raw.places.user, raw.places.project), |b| {
                (b.user_place.clone(), b.project_place.clone())
            });
        check_places(user_place.as_deref(), project_place.as_deref(), &fail)?;
        let other_fields_into = inherit("other_fields_into")
            .map_or(raw.other_fields_into, |b| b.other_fields_into.clone());
        if let Some(into) = &other_fields_into {
            check_other_fields_into(into, &fields, given("other_fields_into"), &fail)?;
        }
        // The base's compiled constraints serve a target with its fields.
        let compiled = match &base {
            Some(b) if fields == base_fields => Arc::clone(&b.compiled),
            _ => Arc::new(OnceLock::new()),
        };
        let mut target = Target {
            description: inherit("description").map_or(raw.description, |b| b.description.clone()),
            source: inherit("source").map_or(raw.source, |b| b.source.clone()),
            format: inherit("format").map_or(raw.format, |b| b.format),
            other_fields: inherit("other_fields").map_or(raw.other_fields, |b| b.other_fields),
            renders_as: raw.name.clone(),
            name: raw.name,
            display_name: raw.display_name,
            path: path.to_path_buf(),
            extends: raw.extends,
            detect: raw.detect,
            user_place,
            project_place,
            other_fields_into,
            fields,
            translate,
            shared_with: Vec::new(),
            compiled,
        };
        if let Some(b) = &base
            && target.renders_like(b)
        {
            target.renders_as = b.renders_as.clone();
        }
        Ok(target)
    }

    /// Does this target write every skill exactly as `other` does: the
    /// same format, fields (with their rules and renderings), other fields
    /// and translations? Names, places and documentation aside.
    pub fn renders_like(&self, other: &Target) -> bool {
        self.format == other.format
            && self.other_fields == other.other_fields
            && self.other_fields_into == other.other_fields_into
            && self.fields == other.fields
            && self.translate == other.translate
    }

    /// The paths whose existence shows the consumer is installed, as
    /// written: `detect`, else the directory holding the user place.
    pub fn detect_paths(&self) -> Vec<String> {
        match &self.detect {
            Some(d) => d.clone(),
            None => self
                .user_place
                .as_deref()
                .and_then(|p| {
                    let p = p.trim_end_matches('/');
                    let parent = p.rsplit_once('/').map(|(a, _)| a)?;
                    (!parent.is_empty() && parent != "~").then(|| parent.to_owned())
                })
                .into_iter()
                .collect(),
        }
    }

    /// This target, writing its directory once for itself and `others`
    /// (targets that read the same directory and render as it): a skill
    /// switched off for some of them and not for the others cannot be
    /// both there and not, and is an error.
    pub fn sharing(&self, others: &[String]) -> Target {
        Target {
            shared_with: others.to_vec(),
            ..self.clone()
        }
    }

    /// The other targets this one writes its directory for
    /// ([`Target::sharing`]).
    pub fn shared_with(&self) -> &[String] {
        &self.shared_with
    }
    /// The field `name`, if the target takes it.
    pub fn field(&self, name: &str) -> Option<&TargetField> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The JSON Schema of this target's frontmatter (draft 2020-12), for
    /// editors and for checking an exported skill.
    pub fn schema(&self) -> Value {
        let mut props = Map::new();
        for f in &self.fields {
            let mut s = crate::spec::value_schema(&f.rule);
            if let Some(help) = &f.rule.constraints.pattern_help {
                s.insert("description".into(), Value::String(help.clone()));
            }
            props.insert(f.name.clone(), Value::Object(s));
        }
        let required: Vec<Value> = self
            .fields
            .iter()
            .filter(|f| f.required)
            .map(|f| Value::String(f.name.clone()))
            .collect();
        let mut schema = Map::new();
        schema.insert(
            "$schema".into(),
            "https://json-schema.org/draft/2020-12/schema".into(),
        );
        schema.insert(
            "$id".into(),
            Value::String(format!("urn:bernstein-skills:schema:target:{}", self.name)),
        );
        schema.insert(
            "title".into(),
            Value::String(format!("SKILL.md frontmatter for {}", self.name)),
        );
        if let Some(d) = &self.description {
            schema.insert("description".into(), Value::String(d.clone()));
        }
        schema.insert("type".into(), "object".into());
        schema.insert("properties".into(), Value::Object(props));
        if !required.is_empty() {
            schema.insert("required".into(), Value::Array(required));
        }
        if self.other_fields == OtherFields::Refuse {
            schema.insert("additionalProperties".into(), Value::Bool(false));
        }
        Value::Object(schema)
    }

    /// The constraints of the fields, compiled once: every property's
    /// schema, without `required` (checked with its own message).
    fn compiled(&self) -> std::result::Result<&jsonschema::Validator, String> {
        self.compiled
            .get_or_init(|| {
                let mut schema = self.schema();
                if let Some(o) = schema.as_object_mut() {
                    o.remove("required");
                    o.remove("additionalProperties");
                    o.insert(
                        "$schema".into(),
                        "http://json-schema.org/draft-07/schema#".into(),
                    );
                }
                crate::spec::compile_draft7(&schema).map_err(|e| e.to_string())
            })
            .as_deref()
            .map_err(Clone::clone)
    }

    /// The files export writes for every skill in this target's format:
    /// its `SKILL.md` (in the skill format) and each translated file, once.
    /// A skill's own file may not differ from one of them only in case.
    pub fn generated(&self) -> Vec<crate::source::files::Generated> {
        use crate::source::files::Generated;
        let mut out = Vec::new();
        if self.format == Format::Skill {
            out.push(Generated::skill_md());
        }
        Generated::merge_into(
            &mut out,
            self.translate.iter().map(|t| Generated {
                rel: t.file.clone(),
                targets: vec![text::excerpt(&self.name, EXCERPT_CHARS)],
            }),
        );
        out
    }

    /// The skill's frontmatter for this target: the fields it takes, in
    /// its order, rendered; the body field and fields at their default left
    /// out (the name field always written); the fields it does not take,
    /// and the files of its translations. `values` is the effective skill's
    /// values ([`Effective::to_value`]).
    pub(crate) fn render(&self, spec: &MergeSpec, values: &Map<String, Value>) -> Rendered {
        let mut out = Rendered::default();
        let set = |name: &str| set_value(spec, values, name);
        let body = spec.body_field.as_deref();
        for f in &self.fields {
            if Some(f.name.as_str()) == body {
                continue;
            }
            if let Some(v) = set(&f.name) {
                out.front.push((f.name.clone(), render(f.render, v)));
            }
        }
        let translated: Vec<&str> = self.translate.iter().map(|t| t.field.as_str()).collect();
        let mut moved: Vec<(&str, &Value)> = Vec::new();
        for name in spec.field_order() {
            if Some(name) == body
                || self.field(name).is_some()
                || translated.contains(&name)
                || spec.enabled_field.as_deref() == Some(name)
                || spec.targets_field.as_deref() == Some(name)
            {
                continue;
            }
            let Some(v) = set(name) else { continue };
            if self.other_fields_into.is_some() {
                moved.push((name, v));
                continue;
            }
            match self.other_fields {
                OtherFields::Keep => out.front.push((name.to_owned(), v.clone())),
                OtherFields::Drop | OtherFields::Refuse => out.others.push(name.to_owned()),
            }
        }
        if let Some(into) = &self.other_fields_into
            && !moved.is_empty()
        {
            self.write_into(into, moved, &mut out);
        }
        for t in &self.translate {
            let Some(v) = set(&t.field) else { continue };
            let written = t
                .values
                .iter()
                .find(|(from, _)| from == v)
                .map_or_else(|| v.clone(), |(_, to)| to.clone());
            let doc = match out.files.iter_mut().find(|(f, _)| f == &t.file) {
                Some((_, doc)) => doc,
                None => {
                    out.files.push((t.file.clone(), Value::Object(Map::new())));
                    &mut out.files.last_mut().expect("just pushed").1
                }
            };
            insert_at(doc, &t.key, written);
        }
        out
    }

    /// Writes the fields `moved` into the mapping field `into` of `out`'s
    /// frontmatter, each as strings under its name (a nested value as
    /// dotted keys); one whose key the mapping already has is left out
    /// (`out.collided`). The mapping is created in its place among the
    /// target's fields when the skill does not set it.
    fn write_into(&self, into: &str, moved: Vec<(&str, &Value)>, out: &mut Rendered) {
        let pos = match out.front.iter().position(|(n, _)| n == into) {
            Some(i) => i,
            None => {
                let rank = |n: &str| self.fields.iter().position(|f| f.name == n);
                let mine = rank(into);
                let i = out
                    .front
                    .iter()
                    .position(|(n, _)| rank(n) > mine)
                    .unwrap_or(out.front.len());
                out.front
                    .insert(i, (into.to_owned(), Value::Object(Map::new())));
                i
            }
        };
        let Value::Object(map) = &mut out.front[pos].1 else {
            return;
        };
        for (name, v) in moved {
            let mut one = Map::new();
            flatten(
                "",
                &Map::from_iter([(name.to_owned(), v.clone())]),
                &mut one,
            );
            if one.keys().any(|k| map.contains_key(k)) {
                out.collided.push(name.to_owned());
                continue;
            }
            map.extend(one);
        }
    }

    /// Does this target flatten field `name` into dotted keys?
    pub(crate) fn flattens(&self, name: &str) -> bool {
        self.field(name)
            .is_some_and(|f| f.render == Render::StringMap)
    }

    /// The files of the skill directory (relative to it) that this
    /// target's translations write for the effective skill's `values`:
    /// those of the translations whose field is set, each once.
    pub(crate) fn translated_files(
        &self,
        spec: &MergeSpec,
        values: &Map<String, Value>,
    ) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for t in &self.translate {
            if set_value(spec, values, &t.field).is_some() && !out.contains(&t.file.as_str()) {
                out.push(&t.file);
            }
        }
        out
    }

    /// The problems of `effective` (merged from `fragments`, base first)
    /// for this target, each located at the layer and line that set the
    /// offending value, or at the highest layer's file when no layer set
    /// it. Problems are `severity` (errors for `validate --target`,
    /// warnings for `show`); fields left out are notes.
    pub fn problems(
        &self,
        spec: &MergeSpec,
        effective: &Effective,
        fragments: &[Fragment],
        severity: Severity,
    ) -> Vec<Diagnostic> {
        let values = match effective.to_value() {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        self.check_values(spec, effective, &values, fragments, severity)
    }

    /// [`Target::problems`] with the effective skill's values already made
    /// (`effective.to_value()`): several targets judging one skill share
    /// them.
    pub(crate) fn check_values(
        &self,
        spec: &MergeSpec,
        effective: &Effective,
        values: &Map<String, Value>,
        fragments: &[Fragment],
        severity: Severity,
    ) -> Vec<Diagnostic> {
        let rendered = self.render(spec, values);
        let judge = Judge {
            target: self,
            effective,
            fragments,
            severity,
        };
        let mut out = judge.left_out(&rendered);
        for f in self.fields.iter().filter(|f| f.render == Render::StringMap) {
            if let Some(field) = effective.field(&f.name) {
                out.extend(flatten::problems(field, fragments, &self.name, severity));
            }
        }
        let mut checked = Map::new();
        for f in &self.fields {
            let value = rendered
                .front
                .iter()
                .find(|(n, _)| n == &f.name)
                .map(|(_, v)| v);
            if let Some(value) = judge.field_value(f, value, &mut out) {
                checked.insert(f.name.clone(), value);
            }
        }
        out.extend(judge.constraints(&Value::Object(checked)));
        out
    }
}

/// A target judging one effective skill ([`Target::check_values`]).
struct Judge<'j> {
    target: &'j Target,
    effective: &'j Effective<'j>,
    fragments: &'j [Fragment],
    /// How grave a finding the target refuses the skill for is.
    severity: Severity,
}

impl Judge<'_> {
    /// A finding of `severity` about `field`, at the layer's file that set
    /// it.
    fn finding(&self, field: &str, problem: String, severity: Severity) -> Diagnostic {
        let mut d = Diagnostic::error(
            None,
            DiagnosticKind::TargetRule {
                target: self.target.name.clone(),
                field: text::excerpt(field, EXCERPT_CHARS),
                problem,
            },
        )
        .on_field(field);
        d.severity = severity;
        locate(d, self.effective, self.fragments, field)
    }

    /// The fields `rendered` leaves out: those the target does not take
    /// (refused, or a note), and those its `other_fields_into` mapping
    /// already has a key for (a note).
    fn left_out(&self, rendered: &Rendered) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for name in &rendered.others {
            out.push(match self.target.other_fields {
                OtherFields::Refuse => self.finding(
                    name,
                    "is not accepted (the consumer refuses a skill that sets it)".into(),
                    self.severity,
                ),
                _ => self.finding(
                    name,
                    "is not read and is left out of the export".into(),
                    Severity::Note,
                ),
            });
        }
        for name in &rendered.collided {
            out.push(self.finding(
                name,
                format!(
                    "is left out: '{}' already has a key of that name",
                    text::excerpt(
                        self.target.other_fields_into.as_deref().unwrap_or(""),
                        EXCERPT_CHARS
                    )
                ),
                Severity::Note,
            ));
        }
        out
    }

    /// The value of field `f` the target's constraints check: its rendered
    /// `value`, normalised as the target says; a required field that is
    /// empty, or one that must equal the skill's directory name and does
    /// not, is a finding in `out`. `None` when there is nothing to check.
    fn field_value(
        &self,
        f: &TargetField,
        value: Option<&Value>,
        out: &mut Vec<Diagnostic>,
    ) -> Option<Value> {
        let effective = self.effective;
        let empty = value.is_none_or(crate::postmerge::is_empty);
        if f.required && empty {
            // Set empty by a layer, or set by none.
            let set = effective.field(&f.name).is_some_and(|m| match &m.merged {
                Merged::Override(s) => s.origin.is_some(),
                _ => false,
            });
            out.push(self.finding(
                &f.name,
                if set {
                    "is required, but its value is empty".into()
                } else {
                    "is required, but no layer sets it".into()
                },
                self.severity,
            ));
            return None;
        }
        let value = match value? {
            Value::String(s) if !f.normalize.is_empty() => {
                Value::String(f.normalize.iter().fold(s.clone(), |s, n| normalize(*n, &s)))
            }
            v => v.clone(),
        };
        // The consumer compares the directory's name normalised the same
        // way, but never trimmed (a file name has no surrounding space).
        let directory = if f.normalize.contains(&Normalize::Nfkc) {
            normalize(Normalize::Nfkc, &effective.name)
        } else {
            effective.name.clone()
        };
        if f.matches_directory && value.as_str() != Some(directory.as_str()) {
            out.push(self.finding(
                &f.name,
                format!(
                    "must equal the skill's directory name '{}'; got {}",
                    text::excerpt(&effective.name, EXCERPT_CHARS),
                    // Quoted as every message quotes a string (escaped as
                    // a terminal sees it); any other value as JSON.
                    match &value {
                        Value::String(s) => format!("'{}'", text::excerpt(s, 60)),
                        v => text::json_excerpt(v, 60),
                    }
                ),
                self.severity,
            ));
        }
        Some(value)
    }

    /// What the target's compiled constraints find in the fields'
    /// values (`instance`), at most [`crate::validate::MAX_PER_FILE`]; a
    /// target whose constraints do not compile is an error about its file.
    fn constraints(&self, instance: &Value) -> Vec<Diagnostic> {
        let target = self.target;
        let validator = match target.compiled() {
            Ok(validator) => validator,
            Err(message) => {
                return vec![Diagnostic::error(
                    Some(&target.path),
                    DiagnosticKind::Spec {
                        message: format!("the target's constraints do not compile: {message}"),
                    },
                )];
            }
        };
        let mut out = Vec::new();
        for e in validator
            .iter_errors(instance)
            .take(crate::validate::MAX_PER_FILE)
        {
            let pointer = e.instance_path().as_str().to_owned();
            let field = fragment::unescape_pointer(
                pointer
                    .trim_start_matches('/')
                    .split('/')
                    .next()
                    .unwrap_or(""),
            );
            let Some(f) = target.field(&field) else {
                continue;
            };
            let problem =
                match crate::validate::constraint(field.clone(), &f.rule, e.kind(), e.instance()) {
                    Some(DiagnosticKind::Constraint { problem, .. }) => problem,
                    _ => format!(
                        "must be {}; got {}",
                        f.rule.type_description(),
                        crate::fragment::describe(e.instance())
                    ),
                };
            out.push(self.finding(&field, problem, self.severity));
        }
        out
    }
}

/// The target file `text` (at `path`) read into its form, with the
/// order its `fields` are written in. A file that does not fit the form
/// is refused at the deepest entry the target's schema finds wrong, as an
/// editor would show it.
fn parse_target(text: &str, path: &Path) -> Result<(Value, Vec<String>, RawTarget)> {
    let (value, order) =
        fragment::parse_yaml_keeping_order(text, "fields", MAX_TARGET_BYTES, "a target").map_err(
            |(pos, kind)| Error::Invalid(vec![Diagnostic::error(Some(path), kind).at(pos)]),
        )?;
    let value = value.unwrap_or(Value::Object(Map::new()));
    let raw: RawTarget = RawTarget::deserialize(&value).map_err(|e| {
        // The parse's error names no place: the target's schema finds
        // the entry it stopped at, as an editor would show it.
        let (pointer, key) =
            crate::spec::deepest_misfit(&misfit_schema(), &value).unwrap_or_default();
        let pos = fragment::locate(text, Syntax::Yaml, &pointer, key, 0);
        Error::Invalid(vec![
            Diagnostic::error(
                Some(path),
                DiagnosticKind::Spec {
                    message: format!("not a target file: {}", text::excerpt(&e.to_string(), 300)),
                },
            )
            .at(pos),
        ])
    })?;
    Ok((value, order, raw))
}

/// Refuses a target (read from `path`) that this build cannot read, or
/// whose name, display name or detected paths are not what a target's
/// are: a version it does not know, a name that is not one word or not
/// its file's, a display name empty or over 64 characters, a path to
/// detect that is relative or climbs with `..`.
fn check_identity(
    raw: &RawTarget,
    path: &Path,
    fail: &dyn Fn(&str, String) -> Error,
) -> Result<()> {
    if !SUPPORTED_VERSIONS.contains(&raw.version) {
        return Err(fail(
            "/version",
            format!(
                "unsupported target version {} (this build reads version 1)",
                raw.version
            ),
        ));
    }
    if let Some(stem) = path.file_stem().and_then(|s| s.to_str())
        && stem != raw.name
        && path.extension().is_some()
    {
        return Err(fail(
            "/name",
            format!(
                "the target is named '{}' but its file is {}; name the file after it",
                text::excerpt(&raw.name, EXCERPT_CHARS),
                text::path(path)
            ),
        ));
    }
    if crate::layer::check_name(&raw.name).is_err() || raw.name.contains(char::is_whitespace) {
        return Err(fail(
            "/name",
            "a target's name is one word, such as 'claude-code'".into(),
        ));
    }
    if raw
        .display_name
        .as_deref()
        .is_some_and(|d| d.trim().is_empty() || d.chars().count() > 64)
    {
        return Err(fail(
            "/display_name",
            "'display_name' is the consumer's name as people know it, 1 to 64 characters".into(),
        ));
    }
    for (i, d) in raw.detect.iter().flatten().enumerate() {
        let ok = (d.starts_with("~/") || d.starts_with('/')) && !d.split('/').any(|c| c == "..");
        if !ok {
            return Err(fail(
                &format!("/detect/{i}"),
                "'detect' lists paths below ~ or absolute ones, without '..'".into(),
            ));
        }
    }
    Ok(())
}

/// The target's fields: those of the target it extends (`fields`, if
/// `extends`), each replaced by the file's field of its name, then the
/// file's new fields, in the order the file writes them (`order`). A
/// field given as `null` removes the base's, which only a file that
/// extends a target may do.
fn merge_fields(
    mut fields: Vec<TargetField>,
    mut raw: std::collections::BTreeMap<String, Option<RawTargetField>>,
    order: &[String],
    extends: bool,
    fail: &dyn Fn(&str, String) -> Error,
) -> Result<Vec<TargetField>> {
    for name in order
        .iter()
        .chain(raw.keys().cloned().collect::<Vec<_>>().iter())
    {
        let Some(f) = raw.remove(name) else {
            continue;
        };
        let at = format!("/fields/{}", fragment::escape_pointer(name));
        let Some(f) = f else {
            // `null`: the base's field goes.
            if !extends {
                return Err(fail(
                    &at,
                    format!(
                        "field '{}' is null, which removes a field of the target a file \
                         extends, and this one extends none; give its rules, or '{{}}' for \
                         none",
                        text::excerpt(name, EXCERPT_CHARS)
                    ),
                ));
            }
            fields.retain(|kept: &TargetField| &kept.name != name);
            continue;
        };
        let field = check_field(name, f, &at).map_err(|(p, m)| fail(&p, m))?;
        match fields.iter_mut().find(|kept| &kept.name == name) {
            Some(kept) => *kept = field,
            None => fields.push(field),
        }
    }
    Ok(fields)
}

/// Refuses an empty place, and a project place that is not relative to
/// the project's root.
fn check_places(
    user: Option<&str>,
    project: Option<&str>,
    fail: &dyn Fn(&str, String) -> Error,
) -> Result<()> {
    for (scope, place) in [("user", user), ("project", project)] {
        if let Some(p) = place
            && (p.is_empty() || (scope == "project" && (p.starts_with('/') || p.starts_with('~'))))
        {
            return Err(fail(
                &format!("/places/{scope}"),
                format!(
                    "the {scope} place must be {}",
                    if scope == "project" {
                        "a directory relative to the project's root"
                    } else {
                        "a directory, absolute or below ~"
                    }
                ),
            ));
        }
    }
    Ok(())
}

/// Refuses an `other_fields_into` that names none of the target's
/// `fields` of type object; at the attribute when the file wrote it
/// (`given`), else at the fields that lost the one it inherits.
fn check_other_fields_into(
    into: &str,
    fields: &[TargetField],
    given: bool,
    fail: &dyn Fn(&str, String) -> Error,
) -> Result<()> {
    if fields
        .iter()
        .any(|f| f.name == into && f.rule.types.contains(&crate::spec::ValueType::Object))
    {
        return Ok(());
    }
    Err(fail(
        if given {
            "/other_fields_into"
        } else {
            "/fields"
        },
        format!(
            "'other_fields_into' names '{}', which is not one of the target's fields of type \
             object",
            text::excerpt(into, EXCERPT_CHARS)
        ),
    ))
}

/// Field `name` of a target file (at JSON pointer `at`), checked; the
/// error as the pointer to its place and the message.
fn check_field(
    name: &str,
    f: raw::RawTargetField,
    at: &str,
) -> std::result::Result<TargetField, (String, String)> {
    let item = RawItemRule {
        value_type: f.value_type,
        pattern: f.pattern,
        pattern_help: f.pattern_help,
        min_length: f.min_length,
        max_length: f.max_length,
        allowed: f.allowed,
        minimum: f.minimum,
        maximum: f.maximum,
    };
    let rule = crate::spec::value_rule(item, &format!("{at}/"), &format!("{at}/type")).map_err(
        |(pointer, message)| {
            (
                pointer,
                format!("field '{}': {message}", text::excerpt(name, EXCERPT_CHARS)),
            )
        },
    )?;
    Ok(TargetField {
        name: name.to_owned(),
        required: f.required.unwrap_or(false),
        rule,
        normalize: match f.normalize {
            None => Vec::new(),
            Some(Normalizations::One(n)) => vec![n],
            Some(Normalizations::Many(ns)) => ns,
        },
        matches_directory: f.matches_directory.unwrap_or(false),
        render: f.render.unwrap_or_default(),
    })
}

/// The `translate` entries of a target file, checked; the error as the
/// pointer to its place and the message.
fn check_translate(
    entries: Vec<raw::RawTranslate>,
) -> std::result::Result<Vec<Translate>, (String, String)> {
    let mut translate = Vec::new();
    for (i, t) in entries.into_iter().enumerate() {
        let at = format!("/translate/{i}");
        let file_ok = !t.file.is_empty()
            && t.file.ends_with(".yaml")
            && !t.file.contains('\\')
            && t.file
                .split('/')
                .all(|c| !c.is_empty() && !c.starts_with('.'));
        if !file_ok || t.file == "SKILL.md" {
            return Err((
                format!("{at}/file"),
                "'file' must be a .yaml file inside the skill directory (no '..', no hidden part)"
                    .into(),
            ));
        }
        let key: Vec<String> = t.key.split('.').map(str::to_owned).collect();
        if key.iter().any(String::is_empty) {
            return Err((
                format!("{at}/key"),
                "'key' is a dotted path of names, such as 'policy.allow_implicit_invocation'"
                    .into(),
            ));
        }
        translate.push(Translate {
            field: t.field,
            file: t.file,
            key,
            values: t.values.into_iter().map(|m| (m.from, m.to)).collect(),
        });
    }
    Ok(translate)
}

/// The value of field `name` in the effective skill's `values` if a target
/// writes it: set to something other than the spec's default (the name
/// field always).
fn set_value<'v>(
    spec: &MergeSpec,
    values: &'v Map<String, Value>,
    name: &str,
) -> Option<&'v Value> {
    let v = values.get(name)?;
    let is_name = spec.name_field.as_deref() == Some(name);
    let at_default = spec.field(name).is_some_and(|f| v == &f.default);
    (is_name || !at_default).then_some(v)
}

/// The mapping a layer's file of the skill holds where a translation
/// writes (`agents/openai.yaml`), which the translation's keys are merged
/// into. It comes from a layer like a fragment, so it is read like one:
/// refused past the fragment size cap `cap` before it is read, then parsed
/// by the fragment reader under the same cap (the alias and mapping
/// budgets, the bound on its values' paths), every error located in that
/// file. An empty file is an empty mapping.
pub(crate) fn read_translated(
    file: &crate::source::files::SkillFile,
    cap: u64,
) -> std::result::Result<Map<String, Value>, Diagnostic> {
    let fail = |pos, kind| {
        Diagnostic::error(Some(&file.source.path), kind)
            .in_layer(file.source.layer)
            .at(pos)
    };
    if file.source.size > cap {
        return Err(fail(
            None,
            DiagnosticKind::TooLarge {
                size: file.source.size,
                limit: cap,
            },
        ));
    }
    let text = String::from_utf8(file.read()?).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let before = String::from_utf8_lossy(&e.as_bytes()[..valid]).into_owned();
        fail(
            Some(fragment::offset_to_pos(&before, valid)),
            DiagnosticKind::InvalidUtf8,
        )
    })?;
    let options = fragment::LoadOptions {
        max_bytes: cap,
        ..fragment::LoadOptions::default()
    };
    let parsed = Fragment::from_str(
        text,
        crate::layer::Form::Yaml,
        file.source.layer,
        &file.source.path,
        &options,
    )?;
    Ok(parsed.into_fields())
}

/// `v` as `how` writes it.
fn render(how: Render, v: &Value) -> Value {
    match (how, v) {
        (Render::AsIs, v) => v.clone(),
        (Render::StringMap, Value::Object(m)) => {
            let mut out = Map::new();
            flatten("", m, &mut out);
            Value::Object(out)
        }
        (Render::SpaceSeparated | Render::CommaSeparated, Value::Array(items)) => {
            let parts: Vec<String> = items
                .iter()
                .map(|i| match i {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            Value::String(parts.join(if how == Render::SpaceSeparated {
                " "
            } else {
                ", "
            }))
        }
        (_, v) => v.clone(),
    }
}

/// A nested mapping as `a.b: "value"` pairs: strings as they are, other
/// values as their JSON text.
fn flatten(prefix: &str, m: &Map<String, Value>, out: &mut Map<String, Value>) {
    for (k, v) in m {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            Value::Object(inner) if !inner.is_empty() => flatten(&key, inner, out),
            Value::String(s) => {
                out.insert(key, Value::String(s.clone()));
            }
            other => {
                out.insert(key, Value::String(other.to_string()));
            }
        }
    }
}

fn normalize(how: Normalize, s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    match how {
        Normalize::Nfkc => s.nfkc().collect(),
        Normalize::Trim => s.trim().to_owned(),
    }
}

/// Sets `doc` at `key` (creating mappings on the way) to `value`.
fn insert_at(doc: &mut Value, key: &[String], value: Value) {
    let Some((last, path)) = key.split_last() else {
        return;
    };
    let mut at = doc;
    for k in path {
        if !at.is_object() {
            *at = Value::Object(Map::new());
        }
        at = at
            .as_object_mut()
            .expect("made a mapping")
            .entry(k.clone())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    if !at.is_object() {
        *at = Value::Object(Map::new());
    }
    at.as_object_mut()
        .expect("made a mapping")
        .insert(last.clone(), value);
}

/// `d` located at the value of `field` as the layer that set it wrote it,
/// or at the highest layer's file.
fn locate(d: Diagnostic, effective: &Effective, fragments: &[Fragment], field: &str) -> Diagnostic {
    let origin = effective.field(field).and_then(|f| match &f.merged {
        Merged::Override(s) => s.origin.clone(),
        _ => None,
    });
    let fragment = match &origin {
        Some(o) => fragments.iter().find(|f| f.layer == o.layer),
        None => fragments
            .iter()
            .rev()
            .find(|f| f.fields().contains_key(field))
            .or(fragments.last()),
    };
    let Some(fragment) = fragment else { return d };
    let pointer = origin
        .map(|o| o.pointer)
        .unwrap_or_else(|| crate::merge::field_pointer(field));
    let pos = if fragment.fields().contains_key(field) {
        fragment.position(&pointer, false)
    } else {
        None
    };
    let mut d = d.at(pos).in_layer(fragment.layer);
    d.file = Some(fragment.path.to_path_buf());
    d
}

/// The fragment schema an editor sees, with each field's description
/// saying what the `targets` in use require of it: a consumer's rules hold
/// for the effective skill, not for one layer's fragment, so they are hover
/// text, not checks (a team override need not repeat a required
/// description).
pub fn annotate_fragment_schema(schema: &mut Value, targets: &[Target]) {
    let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) else {
        return;
    };
    // Each target that writes skills its own way, named with how many
    // others write as it does (`agents` for cursor, codex...).
    let labels: Vec<(&Target, String)> = distinct(targets)
        .map(|t| {
            let n = targets
                .iter()
                .filter(|o| o.name != t.name && o.renders_as == t.name)
                .count();
            let label = match n {
                0 => t.name.clone(),
                1 => format!("{} (and 1 target that writes as it)", t.name),
                n => format!("{} (and {n} targets that write as it)", t.name),
            };
            (t, label)
        })
        .collect();
    for (name, prop) in props.iter_mut() {
        let mut said = Vec::new();
        let mut left_out = Vec::new();
        for (t, label) in &labels {
            match t.field(name) {
                Some(f) => {
                    let mut rules = Vec::new();
                    if f.required {
                        rules.push("required".to_owned());
                    }
                    let c = &f.rule.constraints;
                    match (c.min_length, c.max_length) {
                        (Some(a), Some(b)) => rules.push(format!("{a}-{b} characters")),
                        (None, Some(b)) => rules.push(format!("at most {b} characters")),
                        (Some(a), None) => rules.push(format!("at least {a} characters")),
                        (None, None) => {}
                    }
                    if let Some(help) = &c.pattern_help {
                        rules.push(help.clone());
                    } else if c.pattern.is_some() {
                        rules.push("a pattern".into());
                    }
                    if f.matches_directory {
                        rules.push("the skill's directory name".into());
                    }
                    if !rules.is_empty() {
                        said.push(format!("{label}: {}", rules.join(", ")));
                    }
                }
                None if t.other_fields != OtherFields::Keep
                    && t.other_fields_into.is_none()
                    && !t.translate.iter().any(|tr| &tr.field == name) =>
                {
                    left_out.push(label.as_str());
                }
                None => {}
            }
        }
        if said.is_empty() && left_out.is_empty() {
            continue;
        }
        let mut text = String::from("For the effective skill (after the merge):");
        for s in &said {
            text.push_str(&format!("\n- {s}"));
        }
        if !left_out.is_empty() {
            text.push_str(&format!("\n- not read by {}", left_out.join(", ")));
        }
        if let Some(d) = prop.get_mut("description")
            && let Some(existing) = d.as_str()
        {
            *d = Value::String(format!("{existing}\n\n{text}"));
        }
    }
}

/// The targets of `targets` that write skills their own way: one that
/// renders as another target of the list ([`Target::renders_as`]) requires
/// and writes what that one does, so messages and hover texts name that
/// one alone.
pub fn distinct(targets: &[Target]) -> impl Iterator<Item = &Target> {
    targets
        .iter()
        .filter(move |t| t.renders_as == t.name || !targets.iter().any(|o| o.name == t.renders_as))
}

/// [`target_schema`] for finding where a file stops fitting it: a field's
/// rules without the `null` an extending file may give instead, so that a
/// wrong rule is found at the rule, not at the field (an `anyOf` says only
/// that neither branch fits).
fn misfit_schema() -> Value {
    let mut schema = target_schema();
    if let Some(fields) = schema.pointer_mut("/properties/fields/additionalProperties")
        && let Some(rule) = fields
            .get("anyOf")
            .and_then(Value::as_array)
            .and_then(|branches| branches.iter().find(|b| b.get("$ref").is_some()))
            .cloned()
    {
        *fields = rule;
    }
    schema
}

/// The JSON Schema of a target file (`schemas/target.schema.json`).
pub fn target_schema() -> Value {
    crate::spec::file_schema::<RawTarget>("urn:bernstein-skills:schema:target:1")
}

#[cfg(test)]
mod tests;
