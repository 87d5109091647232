//! From the file as written ([`super::raw`]) to checked rules
//! ([`super::model`]): every rule, constraint and ownership checked, each
//! problem located in the spec file.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::raw::{LayerName, RawFilesRule, RawItemRule, RawItems, RawRule, RawTypes};
use super::{
    Constraints, Field, FileOwner, LAYERS_PRESENT, MAX_ENUM_VALUES, MAX_RULE_DEPTH, MAX_RULES,
    RULES_V2, Sections, Strategy, ValueRule, ValueType, pattern, schema,
};
use crate::error::{Diagnostic, DiagnosticKind, Error, Result};
use crate::fragment;
use crate::layer::Layer;
use crate::text;

/// The default KEYED_REPLACE key fields.
const DEFAULT_KEYS: [&str; 3] = ["name", "id", "code"];
/// Checks the rules of one level of `fields` (the top level or a DEEP_MERGE
/// field's keys).
pub(super) struct RuleChecker<'c> {
    /// The spec's version.
    pub(super) version: u64,
    /// Makes the error for a problem at a pointer into the spec.
    pub(super) fail: &'c dyn Fn(&str, String) -> Error,
    /// Rules checked so far, at every depth ([`MAX_RULES`]).
    pub(super) rules: std::cell::Cell<usize>,
    /// Check what only a compiled schema judges (a default, an enum
    /// value, a pattern): off for spec bytes that passed in this build
    /// ([`super::cache`]).
    pub(super) schemas: bool,
}

impl RuleChecker<'_> {
    /// The rules of `raw`, sorted by name. `at` is their pointer in the
    /// spec, `prefix` the dotted path of their parent (`metadata.`).
    pub(super) fn fields(
        &self,
        raw: BTreeMap<String, RawRule>,
        at: &str,
        prefix: &str,
        depth: usize,
    ) -> Result<Vec<Field>> {
        let mut fields = Vec::with_capacity(raw.len());
        for (name, rule) in raw {
            let pointer = format!("{at}/{}", fragment::escape_pointer(&name));
            self.rules.set(self.rules.get() + 1);
            if self.rules.get() > MAX_RULES {
                return Err((self.fail)(
                    &pointer,
                    format!(
                        "the spec declares more than {MAX_RULES} rules (fields at every depth)"
                    ),
                ));
            }
            fields.push(self.rule(name, rule, &pointer, prefix, depth)?);
        }
        Ok(fields)
    }

    /// Checks the rule of field `name`, written at `pointer` (`prefix`:
    /// the dotted path of its parent; `depth`: how deep it nests): its
    /// name, then its strategy's own attributes, then those every rule has.
    fn rule(
        &self,
        name: String,
        mut rule: RawRule,
        pointer: &str,
        prefix: &str,
        depth: usize,
    ) -> Result<Field> {
        let at = self.rule_at(&name, pointer, prefix, depth)?;
        let common = Common::take(&mut rule);
        let own = match rule {
            RawRule::Override {
                value_type,
                items,
                pattern,
                pattern_help,
                min_length,
                max_length,
                allowed,
                minimum,
                maximum,
                sections,
                ..
            } => {
                let value = RawItemRule {
                    value_type,
                    pattern,
                    pattern_help,
                    min_length,
                    max_length,
                    allowed,
                    minimum,
                    maximum,
                };
                self.override_rule(&at, value, items, sections)?
            }
            RawRule::Append { items, unique, .. } => self.append_rule(&at, items, unique)?,
            RawRule::KeyedReplace {
                keys,
                files,
                entries,
                unkeyed,
                plain,
                ..
            } => self.keyed_rule(&at, keys, files, entries, unkeyed, plain)?,
            RawRule::DeepMerge { fields, .. } => self.deep_rule(&at, fields)?,
        };
        self.field(name, own, common, &at)
    }

    /// Where field `name`'s rule is (see [`RuleChecker::rule`]), once its
    /// name is one a spec may give: not empty, not the reserved
    /// [`LAYERS_PRESENT`] at the top level, and for a DEEP_MERGE field's
    /// key, not starting with `$` (directives start so).
    fn rule_at<'r>(
        &'r self,
        name: &str,
        pointer: &'r str,
        prefix: &str,
        depth: usize,
    ) -> Result<RuleAt<'r>> {
        let quoted = text::excerpt(name, text::EXCERPT_CHARS);
        let path = format!("{prefix}{quoted}");
        if name.is_empty() || (depth == 0 && name == LAYERS_PRESENT) {
            return Err((self.fail)(
                pointer,
                format!("field name '{path}' is reserved or empty"),
            ));
        }
        if depth > 0 && name.starts_with('$') {
            return Err((self.fail)(
                pointer,
                format!("key '{path}': names starting with '$' are kept for directives"),
            ));
        }
        Ok(RuleAt {
            fail: self.fail,
            version: self.version,
            pointer,
            path,
            depth,
        })
    }

    /// An OVERRIDE rule: its value's type and constraints (`value`), the
    /// rule of its items when it is a list, and whether it merges by
    /// sections, which only a top-level string (the body) may.
    fn override_rule(
        &self,
        at: &RuleAt,
        value: RawItemRule,
        items: Option<RawItems>,
        sections: Option<Sections>,
    ) -> Result<Own> {
        at.needs_v2("sections", sections.is_some())?;
        let mut value = at.located(value_rule_checked(value, "", "type", self.schemas))?;
        if sections.is_some() && (at.depth > 0 || !value.is_only(ValueType::String)) {
            return Err(at.problem(
                "sections",
                "'sections' applies to a top-level field whose value is a string of Markdown (the body)".into(),
            ));
        }
        if let Some(items) = items {
            // `items` alone says the value is a list: a rule flipped from
            // APPEND to OVERRIDE keeps its type.
            if value.types.is_empty() {
                value.types = vec![ValueType::Array];
            }
            if !value.allows(ValueType::Array) {
                return Err(at.problem(
                    "items",
                    format!(
                        "'items' applies to lists, but the value is {}",
                        value.phrase()
                    ),
                ));
            }
            let items = at.located(items_rule(items, self.schemas))?;
            value.items = Some(Box::new(items));
        }
        Ok(Own {
            sections,
            ..Own::new(Strategy::Override { value })
        })
    }

    /// An APPEND rule: the rule of its items (any value by default), and
    /// whether an item equal to an earlier one is dropped.
    fn append_rule(
        &self,
        at: &RuleAt,
        items: Option<RawItems>,
        unique: Option<bool>,
    ) -> Result<Own> {
        at.needs_v2("unique", unique.is_some())?;
        let items = match items {
            Some(items) => at.located(items_rule(items, self.schemas))?,
            None => ValueRule::any(),
        };
        Ok(Own::new(Strategy::Append {
            items,
            unique: unique.unwrap_or(false),
        }))
    }

    /// A KEYED_REPLACE rule: the fields that identify an entry, what a
    /// higher layer's entry does to a lower one, what becomes of an entry
    /// with no key and of a plain string entry, and the skill directory
    /// whose files plain entries name.
    fn keyed_rule(
        &self,
        at: &RuleAt,
        keys: Option<Vec<String>>,
        files: Option<String>,
        entries: Option<super::EntriesMode>,
        unkeyed: Option<super::Unkeyed>,
        plain: Option<super::Plain>,
    ) -> Result<Own> {
        at.needs_v2("entries", entries.is_some())?;
        at.needs_v2("unkeyed", unkeyed.is_some())?;
        at.needs_v2("plain", plain.is_some())?;
        if plain == Some(super::Plain::Refuse) && files.is_some() {
            return Err(at.problem(
                "plain",
                "'files' names files by the plain string entries that 'plain: refuse' refuses; keep one of them".into(),
            ));
        }
        if let Some(dir) = &files {
            at.files_dir(dir)?;
        }
        let keys = keys.unwrap_or_else(|| DEFAULT_KEYS.iter().map(|k| k.to_string()).collect());
        let mut seen = std::collections::BTreeSet::new();
        if keys.is_empty()
            || keys
                .iter()
                .any(|k| k.is_empty() || k.starts_with('$') || !seen.insert(k))
        {
            return Err(at.problem(
                "keys",
                "keys must be a non-empty list of distinct names, none starting with '$'".into(),
            ));
        }
        Ok(Own {
            files,
            ..Own::new(Strategy::KeyedReplace {
                keys,
                entries: entries.unwrap_or_default(),
                unkeyed: unkeyed.unwrap_or_default(),
                plain: plain.unwrap_or_default(),
            })
        })
    }

    /// A DEEP_MERGE rule: the rules of the keys it declares, checked as
    /// fields one level deeper, up to [`MAX_RULE_DEPTH`] levels.
    fn deep_rule(&self, at: &RuleAt, fields: Option<BTreeMap<String, RawRule>>) -> Result<Own> {
        at.needs_v2("fields", fields.is_some())?;
        let fields = match fields {
            Some(_) if at.depth + 1 >= MAX_RULE_DEPTH => {
                return Err(at.problem(
                    "fields",
                    format!("rules nest deeper than {MAX_RULE_DEPTH} levels"),
                ));
            }
            Some(raw) => self.fields(
                raw,
                &format!("{}/fields", at.pointer),
                &format!("{}.", at.path),
                at.depth + 1,
            )?,
            None => Vec::new(),
        };
        Ok(Own::new(Strategy::DeepMerge { fields }))
    }

    /// Field `name`, from what its strategy decided (`own`) and the
    /// attributes every rule has (`common`): `required` only at the top
    /// level, `layers` naming at least one layer, a `default` that fits
    /// the rule (the strategy's empty value when there is none).
    fn field(&self, name: String, own: Own, common: Common, at: &RuleAt) -> Result<Field> {
        let Common {
            required,
            default,
            description,
            examples,
            layers,
        } = common;
        at.needs_v2("layers", layers.is_some())?;
        if required.is_some() && at.depth > 0 {
            return Err(at.problem(
                "required",
                "'required' applies to top-level fields only; require the field that holds this key".into(),
            ));
        }
        let layers = at.layers(layers)?;
        let has_default = default.is_some();
        let default = match default {
            Some(d) => self.fitting_default(at, &own.strategy, d)?,
            None => own.strategy.empty_value(),
        };
        Ok(Field {
            name,
            strategy: own.strategy,
            default,
            required: required.unwrap_or(false),
            description,
            examples: examples.unwrap_or_default(),
            files: own.files,
            layers,
            has_default,
            sections: own.sections,
        })
    }

    /// `default`, if it fits `strategy`'s rule (checked only where
    /// [`RuleChecker::schemas`] asks for it).
    fn fitting_default(&self, at: &RuleAt, strategy: &Strategy, default: Value) -> Result<Value> {
        if !self.schemas || schema::field_accepts(strategy, &default) {
            return Ok(default);
        }
        let rule = match strategy {
            Strategy::KeyedReplace { keys, .. } => format!(
                "list keyed by {}",
                text::list(keys.iter().map(String::as_str), false)
            ),
            s => s.type_description(),
        };
        Err(at.problem(
            "default",
            format!(
                "default {} does not fit its {} rule ({rule})",
                text::json_excerpt(&default, text::EXCERPT_CHARS),
                strategy.name(),
            ),
        ))
    }
}

/// A rule being checked: where the spec writes it, and how a problem with
/// it is said (`field 'metadata.tags': …`, at the attribute at fault).
struct RuleAt<'r> {
    /// [`RuleChecker::fail`].
    fail: &'r dyn Fn(&str, String) -> Error,
    /// The spec's version.
    version: u64,
    /// The rule's pointer in the spec.
    pointer: &'r str,
    /// The field's dotted path, as problems name it.
    path: String,
    /// How deep the rule nests (0: a top-level field).
    depth: usize,
}

impl RuleAt<'_> {
    /// The error for a problem with attribute `attr` (a pointer relative
    /// to the rule; empty: the rule itself).
    fn problem(&self, attr: &str, message: String) -> Error {
        let at = if attr.is_empty() {
            self.pointer.to_owned()
        } else {
            format!("{}/{attr}", self.pointer)
        };
        (self.fail)(&at, format!("field '{}': {message}", self.path))
    }

    /// A value rule's check ([`value_rule_checked`]), its problem located
    /// at the attribute at fault.
    fn located<T>(&self, checked: std::result::Result<T, Fault>) -> Result<T> {
        checked.map_err(|(attr, message)| self.problem(&attr, message))
    }

    /// Refuses attribute `attr`, when it is `set`, in a spec of version 1,
    /// which has no such attribute.
    fn needs_v2(&self, attr: &str, set: bool) -> Result<()> {
        if set && self.version < RULES_V2 {
            return Err(self.problem(
                attr,
                format!("'{attr}' needs 'version: {RULES_V2}' (version 1 has no such attribute)"),
            ));
        }
        Ok(())
    }

    /// Refuses a `files` directory that is not a directory inside the
    /// skill, or a `files` below the top level.
    fn files_dir(&self, dir: &str) -> Result<()> {
        if self.depth > 0 {
            return Err(self.problem(
                "files",
                "'files' applies to top-level fields only (the skill's directory has no nested lists)".into(),
            ));
        }
        if dir.is_empty()
            || dir.starts_with('/')
            || dir.contains('\\')
            || dir
                .split('/')
                .any(|c| c == ".." || c == "." || c.is_empty())
        {
            return Err(self.problem(
                "files",
                "files must be a directory inside the skill, such as 'references' (no '..', no leading '/')".into(),
            ));
        }
        Ok(())
    }

    /// The layers a rule lets set its value, sorted, once each; `None`
    /// for all three. A list that names none is refused.
    fn layers(&self, layers: Option<Vec<LayerName>>) -> Result<Option<Vec<Layer>>> {
        let Some(layers) = layers else {
            return Ok(None);
        };
        if layers.is_empty() {
            return Err(self.problem(
                "layers",
                "'layers' lists no layer; list the layers that may set it (base, team, user)"
                    .into(),
            ));
        }
        let mut out: Vec<Layer> = layers.into_iter().map(LayerName::layer).collect();
        out.sort();
        out.dedup();
        Ok(Some(out))
    }
}

/// What a rule's strategy and its own attributes decide.
struct Own {
    strategy: Strategy,
    /// A KEYED_REPLACE field's `files` directory.
    files: Option<String>,
    /// A top-level OVERRIDE string's `sections`.
    sections: Option<Sections>,
}

impl Own {
    /// `strategy`, with no `files` and no `sections`.
    fn new(strategy: Strategy) -> Own {
        Own {
            strategy,
            files: None,
            sections: None,
        }
    }
}

/// The attributes every rule has, whatever its strategy.
struct Common {
    required: Option<bool>,
    default: Option<Value>,
    description: Option<String>,
    examples: Option<Vec<Value>>,
    layers: Option<Vec<LayerName>>,
}

impl Common {
    /// Takes the attributes every rule has out of `rule`.
    fn take(rule: &mut RawRule) -> Common {
        let (RawRule::Override {
            required,
            default,
            description,
            examples,
            layers,
            ..
        }
        | RawRule::Append {
            required,
            default,
            description,
            examples,
            layers,
            ..
        }
        | RawRule::KeyedReplace {
            required,
            default,
            description,
            examples,
            layers,
            ..
        }
        | RawRule::DeepMerge {
            required,
            default,
            description,
            examples,
            layers,
            ..
        }) = rule;
        Common {
            required: required.take(),
            default: default.take(),
            description: description.take(),
            examples: examples.take(),
            layers: layers.take(),
        }
    }
}

/// Is `dir` a plain directory inside a skill (`references`,
/// `assets/brand`): relative, `/`-separated, no `.`, `..` or hidden part?
fn is_skill_dir(dir: &str) -> bool {
    !dir.is_empty()
        && !dir.contains('\\')
        && dir.split('/').all(|c| !c.is_empty() && !c.starts_with('.'))
}

/// The spec's file owners: its `files:` table, then each top-level field
/// that names files (`files: DIR`) and is owned (`layers`), longest
/// directory first. Two owners of one directory must agree.
pub(super) fn file_owners(
    raw: &BTreeMap<String, RawFilesRule>,
    fields: &[Field],
    version: u64,
    fail: &dyn Fn(&str, String) -> Error,
) -> Result<Vec<FileOwner>> {
    let mut out: Vec<FileOwner> = Vec::new();
    for (dir, rule) in raw {
        let at = format!("/files/{}", fragment::escape_pointer(dir));
        if version < RULES_V2 {
            return Err(fail(&at, "'files' needs 'version: 2'".into()));
        }
        let trimmed = dir.strip_suffix('/').unwrap_or(dir);
        if !is_skill_dir(trimmed) {
            return Err(fail(
                &at,
                format!(
                    "'{}' must be a directory inside the skill, such as 'scripts' (no '..', no \
                     leading '/', no hidden part)",
                    text::excerpt(dir, text::EXCERPT_CHARS)
                ),
            ));
        }
        if rule.layers.is_empty() {
            return Err(fail(
                &format!("{at}/layers"),
                "'layers' lists no layer".into(),
            ));
        }
        let mut layers: Vec<Layer> = rule.layers.iter().map(|l| l.layer()).collect();
        layers.sort();
        layers.dedup();
        if out.iter().any(|o| o.dir == trimmed) {
            return Err(fail(
                &at,
                format!(
                    "'{}' is listed twice",
                    text::excerpt(trimmed, text::EXCERPT_CHARS)
                ),
            ));
        }
        out.push(FileOwner {
            dir: trimmed.to_owned(),
            layers,
            by: "files".into(),
        });
    }
    for f in fields {
        let (Some(dir), Some(layers)) = (&f.files, f.owners()) else {
            continue;
        };
        let mut layers = layers.to_vec();
        layers.sort();
        match out.iter().find(|o| &o.dir == dir) {
            Some(o) if o.layers != layers => {
                return Err(fail(
                    &format!("/files/{}", fragment::escape_pointer(dir)),
                    format!(
                        "'files' gives '{}' to {}, but field '{}' that names files there may be \
                         set only in {}",
                        text::excerpt(dir, text::EXCERPT_CHARS),
                        crate::layer::layers_phrase(&o.layers),
                        text::excerpt(&f.name, text::EXCERPT_CHARS),
                        crate::layer::layers_phrase(&layers)
                    ),
                ));
            }
            Some(_) => {}
            None => out.push(FileOwner {
                dir: dir.clone(),
                layers,
                by: f.name.clone(),
            }),
        }
    }
    out.sort_by(|a, b| b.dir.len().cmp(&a.dir.len()).then(a.dir.cmp(&b.dir)));
    Ok(out)
}

pub(super) fn spec_error(path: &Path, pos: Option<(usize, usize)>, kind: DiagnosticKind) -> Error {
    Error::Spec(Box::new(Diagnostic::error(Some(path), kind).at(pos)))
}

/// The attribute at fault in a value's rule (a pointer relative to the
/// rule) and what is wrong with it.
type Fault = (String, String);

/// Checks an `items` attribute (either form).
fn items_rule(items: RawItems, schemas: bool) -> std::result::Result<ValueRule, Fault> {
    match items {
        RawItems::Type(t) => value_rule_checked(
            RawItemRule {
                value_type: Some(t),
                ..RawItemRule::default()
            },
            "items/",
            "items",
            schemas,
        ),
        RawItems::Rule(r) => value_rule_checked(r, "items/", "items/type", schemas),
    }
}

/// Checks a value's type and constraints as written. On failure: the
/// attribute at fault (a pointer relative to the rule: `at` is the prefix of
/// the constraints, e.g. `items/`, `type_at` where the type is written) and
/// what is wrong.
pub(crate) fn value_rule(
    raw: RawItemRule,
    at: &str,
    type_at: &str,
) -> std::result::Result<ValueRule, Fault> {
    value_rule_checked(raw, at, type_at, true)
}

/// [`value_rule`]; `schemas` as [`RuleChecker::schemas`].
fn value_rule_checked(
    raw: RawItemRule,
    at: &str,
    type_at: &str,
    schemas: bool,
) -> std::result::Result<ValueRule, Fault> {
    let rule = ValueRule {
        types: types_checked(raw.value_type, type_at)?,
        items: None,
        constraints: Constraints {
            pattern: raw.pattern,
            pattern_help: raw.pattern_help,
            min_length: raw.min_length,
            max_length: raw.max_length,
            allowed: raw.allowed,
            minimum: raw.minimum,
            maximum: raw.maximum,
        },
    };
    constraints_fit_types(&rule, at)?;
    constraints_agree(&rule.constraints, at, schemas)?;
    enum_checked(&rule, at, schemas)?;
    Ok(rule)
}

/// The types a rule's `type` (written at `type_at`) allows: none when it
/// is not written, else each type once; refused when a list names no type,
/// or names `any` beside others.
fn types_checked(
    value_type: Option<RawTypes>,
    type_at: &str,
) -> std::result::Result<Vec<ValueType>, Fault> {
    match value_type {
        None => Ok(Vec::new()),
        Some(RawTypes::One(t)) => Ok(ValueRule::of(t).types),
        Some(RawTypes::Many(ts)) => {
            if ts.is_empty() {
                return Err((type_at.into(), "'type' lists no type".into()));
            }
            if ts.len() > 1 && ts.contains(&ValueType::Any) {
                return Err((
                    type_at.into(),
                    "'any' already takes every type; list the types without it".into(),
                ));
            }
            let mut out: Vec<ValueType> = Vec::new();
            for t in ts {
                if t != ValueType::Any && !out.contains(&t) {
                    out.push(t);
                }
            }
            Ok(out)
        }
    }
}

/// Refuses a constraint that cannot apply to the rule's types: a string's
/// on a value that is never a string, a number's on one never a number.
fn constraints_fit_types(rule: &ValueRule, at: &str) -> std::result::Result<(), Fault> {
    let c = &rule.constraints;
    let strings = rule.allows(ValueType::String);
    let numbers = rule.allows(ValueType::Number) || rule.allows(ValueType::Integer);
    for (attr, set, applies, kind) in [
        ("pattern", c.pattern.is_some(), strings, "strings"),
        ("pattern_help", c.pattern_help.is_some(), strings, "strings"),
        ("min_length", c.min_length.is_some(), strings, "strings"),
        ("max_length", c.max_length.is_some(), strings, "strings"),
        ("minimum", c.minimum.is_some(), numbers, "numbers"),
        ("maximum", c.maximum.is_some(), numbers, "numbers"),
    ] {
        if set && !applies {
            return Err((
                format!("{at}{attr}"),
                format!(
                    "'{attr}' applies to {kind}, but the value is {}",
                    rule.phrase()
                ),
            ));
        }
    }
    Ok(())
}

/// Refuses constraints that contradict each other or cannot work: a
/// `pattern_help` without a `pattern`, a pattern the schemas cannot carry
/// (checked when `schemas`), a minimum above its maximum.
fn constraints_agree(c: &Constraints, at: &str, schemas: bool) -> std::result::Result<(), Fault> {
    let here = |attr: &str| format!("{at}{attr}");
    if c.pattern_help.is_some() && c.pattern.is_none() {
        return Err((
            here("pattern_help"),
            "'pattern_help' explains a 'pattern', and there is none".into(),
        ));
    }
    if let Some(p) = &c.pattern
        && schemas
        && let Err(problem) = pattern::supported(p)
    {
        return Err((
            here("pattern"),
            format!(
                "'pattern' {} {problem}",
                text::json_excerpt(&Value::String(p.clone()), text::EXCERPT_CHARS)
            ),
        ));
    }
    if let (Some(min), Some(max)) = (c.min_length, c.max_length)
        && min > max
    {
        return Err((
            here("min_length"),
            format!("'min_length' {min} is greater than 'max_length' {max}"),
        ));
    }
    if let (Some(min), Some(max)) = (&c.minimum, &c.maximum)
        && min.as_f64() > max.as_f64()
    {
        return Err((
            here("minimum"),
            format!("'minimum' {min} is greater than 'maximum' {max}"),
        ));
    }
    Ok(())
}

/// Refuses an `enum` that lists no value or more than the limit, or (when
/// `schemas`) a value that does not pass the rest of the rule.
fn enum_checked(rule: &ValueRule, at: &str, schemas: bool) -> std::result::Result<(), Fault> {
    let Some(allowed) = &rule.constraints.allowed else {
        return Ok(());
    };
    let here = |attr: &str| format!("{at}{attr}");
    if allowed.is_empty() {
        return Err((here("enum"), "'enum' lists no value".into()));
    }
    if allowed.len() > MAX_ENUM_VALUES {
        return Err((
            here("enum"),
            format!(
                "'enum' lists {} values, over the limit of {MAX_ENUM_VALUES}",
                allowed.len()
            ),
        ));
    }
    // Each value must pass the rule's type and other constraints.
    let without_enum = ValueRule {
        constraints: Constraints {
            allowed: None,
            ..rule.constraints.clone()
        },
        ..rule.clone()
    };
    for (i, v) in allowed.iter().enumerate().filter(|_| schemas) {
        if !schema::value_accepts(&without_enum, v) {
            return Err((
                here(&format!("enum/{i}")),
                format!(
                    "'enum' value {v} does not fit the rest of the rule ({})",
                    without_enum.type_description()
                ),
            ));
        }
    }
    Ok(())
}
