//! From the file as written ([`super::raw`]) to checked rules
//! ([`super::model`]): every rule, constraint and ownership checked, each
//! problem located in the spec file.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::raw::{LayerName, RawFilesRule, RawItemRule, RawItems, RawRule, RawTypes};
use super::{
    Constraints, Field, FileOwner, LAYERS_PRESENT, MAX_ENUM_VALUES, MAX_RULE_DEPTH, MAX_RULES,
    RULES_V2, Strategy, ValueRule, ValueType, pattern, schema,
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

    fn rule(
        &self,
        name: String,
        rule: RawRule,
        pointer: &str,
        prefix: &str,
        depth: usize,
    ) -> Result<Field> {
        let fail = self.fail;
        let quoted = text::excerpt(&name, text::EXCERPT_CHARS);
        let path = format!("{prefix}{quoted}");
        if name.is_empty() || (depth == 0 && name == LAYERS_PRESENT) {
            return Err(fail(
                pointer,
                format!("field name '{path}' is reserved or empty"),
            ));
        }
        if depth > 0 && name.starts_with('$') {
            return Err(fail(
                pointer,
                format!("key '{path}': names starting with '$' are kept for directives"),
            ));
        }
        let problem = |at: &str, message: String| {
            let at = if at.is_empty() {
                pointer.to_owned()
            } else {
                format!("{pointer}/{at}")
            };
            fail(&at, format!("field '{path}': {message}"))
        };
        // An attribute of version 2 in a version 1 spec.
        let needs_v2 = |attr: &str, set: bool| -> Result<()> {
            if set && self.version < RULES_V2 {
                return Err(problem(
                    attr,
                    format!(
                        "'{attr}' needs 'version: {RULES_V2}' (version 1 has no such attribute)"
                    ),
                ));
            }
            Ok(())
        };
        let mut files_dir = None;
        let mut sections_rule = None;
        let (strategy, common) = match rule {
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
                required,
                default,
                description,
                examples,
                layers,
                sections,
            } => {
                needs_v2("sections", sections.is_some())?;
                sections_rule = sections;
                let item = RawItemRule {
                    value_type,
                    pattern,
                    pattern_help,
                    min_length,
                    max_length,
                    allowed,
                    minimum,
                    maximum,
                };
                let mut value = value_rule_checked(item, "", "type", self.schemas)
                    .map_err(|(at, m)| problem(&at, m))?;
                if sections.is_some() && (depth > 0 || !value.is_only(ValueType::String)) {
                    return Err(problem(
                        "sections",
                        "'sections' applies to a top-level field whose value is a string of Markdown (the body)".into(),
                    ));
                }
                if let Some(items) = items {
                    // `items` alone says the value is a list: a rule
                    // flipped from APPEND to OVERRIDE keeps its type.
                    if value.types.is_empty() {
                        value.types = vec![ValueType::Array];
                    }
                    if !value.allows(ValueType::Array) {
                        return Err(problem(
                            "items",
                            format!(
                                "'items' applies to lists, but the value is {}",
                                value.phrase()
                            ),
                        ));
                    }
                    let items =
                        items_rule(items, self.schemas).map_err(|(at, m)| problem(&at, m))?;
                    value.items = Some(Box::new(items));
                }
                (
                    Strategy::Override { value },
                    (required, default, description, examples, layers),
                )
            }
            RawRule::Append {
                items,
                unique,
                required,
                default,
                description,
                examples,
                layers,
            } => {
                needs_v2("unique", unique.is_some())?;
                let items = match items {
                    Some(items) => {
                        items_rule(items, self.schemas).map_err(|(at, m)| problem(&at, m))?
                    }
                    None => ValueRule::any(),
                };
                (
                    Strategy::Append {
                        items,
                        unique: unique.unwrap_or(false),
                    },
                    (required, default, description, examples, layers),
                )
            }
            RawRule::KeyedReplace {
                keys,
                files,
                entries,
                unkeyed,
                plain,
                required,
                default,
                description,
                examples,
                layers,
            } => {
                needs_v2("entries", entries.is_some())?;
                needs_v2("unkeyed", unkeyed.is_some())?;
                needs_v2("plain", plain.is_some())?;
                if plain == Some(super::Plain::Refuse) && files.is_some() {
                    return Err(problem(
                        "plain",
                        "'files' names files by the plain string entries that 'plain: refuse' refuses; keep one of them".into(),
                    ));
                }
                if let Some(dir) = &files {
                    if depth > 0 {
                        return Err(problem(
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
                        return Err(problem(
                            "files",
                            "files must be a directory inside the skill, such as 'references' (no '..', no leading '/')".into(),
                        ));
                    }
                }
                files_dir = files;
                let keys =
                    keys.unwrap_or_else(|| DEFAULT_KEYS.iter().map(|k| k.to_string()).collect());
                let mut seen = std::collections::BTreeSet::new();
                if keys.is_empty()
                    || keys
                        .iter()
                        .any(|k| k.is_empty() || k.starts_with('$') || !seen.insert(k))
                {
                    return Err(problem(
                        "keys",
                        "keys must be a non-empty list of distinct names, none starting with '$'"
                            .into(),
                    ));
                }
                (
                    Strategy::KeyedReplace {
                        keys,
                        entries: entries.unwrap_or_default(),
                        unkeyed: unkeyed.unwrap_or_default(),
                        plain: plain.unwrap_or_default(),
                    },
                    (required, default, description, examples, layers),
                )
            }
            RawRule::DeepMerge {
                fields,
                required,
                default,
                description,
                examples,
                layers,
            } => {
                needs_v2("fields", fields.is_some())?;
                let fields = match fields {
                    Some(_) if depth + 1 >= MAX_RULE_DEPTH => {
                        return Err(problem(
                            "fields",
                            format!("rules nest deeper than {MAX_RULE_DEPTH} levels"),
                        ));
                    }
                    Some(raw) => self.fields(
                        raw,
                        &format!("{pointer}/fields"),
                        &format!("{path}."),
                        depth + 1,
                    )?,
                    None => Vec::new(),
                };
                (
                    Strategy::DeepMerge { fields },
                    (required, default, description, examples, layers),
                )
            }
        };
        let (required, default, description, examples, layers) = common;
        needs_v2("layers", layers.is_some())?;
        if required.is_some() && depth > 0 {
            return Err(problem(
                "required",
                "'required' applies to top-level fields only; require the field that holds this key".into(),
            ));
        }
        let layers = match layers {
            Some(ls) if ls.is_empty() => {
                return Err(problem(
                    "layers",
                    "'layers' lists no layer; list the layers that may set it (base, team, user)"
                        .into(),
                ));
            }
            Some(ls) => {
                let mut out: Vec<Layer> = ls.into_iter().map(LayerName::layer).collect();
                out.sort();
                out.dedup();
                Some(out)
            }
            None => None,
        };
        let has_default = default.is_some();
        let default = match default {
            Some(d) => {
                if self.schemas && !schema::field_accepts(&strategy, &d) {
                    return Err(problem(
                        "default",
                        format!(
                            "default {} does not fit its {} rule ({})",
                            text::json_excerpt(&d, text::EXCERPT_CHARS),
                            strategy.name(),
                            match &strategy {
                                Strategy::KeyedReplace { keys, .. } => format!(
                                    "list keyed by {}",
                                    text::list(keys.iter().map(String::as_str), false)
                                ),
                                s => s.type_description(),
                            }
                        ),
                    ));
                }
                d
            }
            None => strategy.empty_value(),
        };
        Ok(Field {
            name,
            strategy,
            default,
            required: required.unwrap_or(false),
            description,
            examples: examples.unwrap_or_default(),
            files: files_dir,
            layers,
            has_default,
            sections: sections_rule,
        })
    }
}

/// Every `pattern` of `fields` (and of their nested rules), with the
/// pointer where the spec writes it.
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

/// Checks an `items` attribute (either form).
fn items_rule(items: RawItems, schemas: bool) -> std::result::Result<ValueRule, (String, String)> {
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
) -> std::result::Result<ValueRule, (String, String)> {
    value_rule_checked(raw, at, type_at, true)
}

/// [`value_rule`]; `schemas` as [`RuleChecker::schemas`].
fn value_rule_checked(
    raw: RawItemRule,
    at: &str,
    type_at: &str,
    schemas: bool,
) -> std::result::Result<ValueRule, (String, String)> {
    let here = |attr: &str| format!("{at}{attr}");
    let types = match raw.value_type {
        None => Vec::new(),
        Some(RawTypes::One(t)) => ValueRule::of(t).types,
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
            out
        }
    };
    let rule = ValueRule {
        types,
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
                here(attr),
                format!(
                    "'{attr}' applies to {kind}, but the value is {}",
                    rule.phrase()
                ),
            ));
        }
    }
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
    if let Some(allowed) = &c.allowed {
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
                ..c.clone()
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
    }
    Ok(rule)
}
