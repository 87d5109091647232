//! What is wrong with a fragment, in words: each error of the compiled
//! schema (`jsonschema`) translated back into the spec's terms (the field,
//! its rule, the directive forms) and located in the fragment's text.

use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind as K;
use serde_json::Value;

use super::Kept;
use crate::error::{Diagnostic, DiagnosticKind, did_you_mean};
use crate::fragment::{Fragment, Pos, describe, escape_pointer, unescape_pointer};
use crate::spec::{Field, MergeSpec, Strategy, ValueRule, directive, schema_message};
use crate::text::{EXCERPT_CHARS, excerpt, json_excerpt, list, sanitized_excerpt};

pub(super) fn located(
    fragment: &Fragment,
    pointer: &str,
    pos: Option<Pos>,
    kind: DiagnosticKind,
) -> Diagnostic {
    let field = pointer_to_path(fragment.as_value(), pointer);
    let mut d = Diagnostic::error(Some(&fragment.path), kind)
        .in_layer(fragment.layer)
        .at(pos);
    if !field.is_empty() {
        d = d.on_field(field);
    }
    d
}

/// `/metadata/limits/0` → `metadata.limits[0]`.
pub(crate) fn pointer_to_path(root: &Value, pointer: &str) -> String {
    let mut out = String::new();
    for seg in segments(root, pointer) {
        match seg {
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&k);
            }
        }
    }
    out
}

/// One step of a JSON pointer into a value: a key of a mapping, or an
/// index of a list. A key that reads as a number (`"2024"`) stays a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    /// A mapping's key.
    Key(String),
    /// A list's index.
    Index(usize),
}

/// The segments of `pointer`, typed by what they step into in `root`: an
/// index only where the value there is a list. Past the end of `root` (a
/// pointer the value does not hold), keys.
pub(crate) fn segments(root: &Value, pointer: &str) -> Vec<Seg> {
    let mut at = Some(root);
    let mut out = Vec::new();
    for raw in pointer.split('/').skip(1) {
        let seg = unescape_pointer(raw);
        match at {
            Some(Value::Array(items)) if seg.parse::<usize>().is_ok() => {
                let i: usize = seg.parse().unwrap_or_default();
                at = items.get(i);
                out.push(Seg::Index(i));
            }
            Some(Value::Object(m)) => {
                at = m.get(&seg);
                out.push(Seg::Key(seg));
            }
            _ => {
                at = None;
                out.push(Seg::Key(seg));
            }
        }
    }
    out
}

/// Offers each unknown top-level field (`unexpected`, in key order) to
/// `kept`. They are offered in the order they are written, so that once one
/// comes after every problem kept, the rest are only counted.
pub(super) fn unknown_fields(fragment: &Fragment, unexpected: &[String], kept: &mut Kept) {
    let unknown = |field: &str| DiagnosticKind::UnknownField {
        field: field.to_owned(),
        suggestion: None,
    };
    // `unexpected` is in key order (that of the instance's map).
    let written = match unexpected.is_sorted() {
        true => fragment.top_level_keys().unwrap_or_default(),
        false => Vec::new(),
    };
    let in_order: Vec<(&str, Pos)> = written
        .into_iter()
        .filter(|(k, _)| unexpected.binary_search_by(|u| u.as_str().cmp(k)).is_ok())
        .collect();
    if in_order.len() != unexpected.len() {
        // The source does not say where each one is (an in-memory fragment).
        for field in unexpected {
            kept.offer(format!("/{}", escape_pointer(field)), true, || {
                unknown(field)
            });
        }
        return;
    }
    for (i, (field, pos)) in in_order.iter().enumerate() {
        if !kept.offer_at(format!("/{}", escape_pointer(field)), Some(*pos), || {
            unknown(field)
        }) {
            kept.more += in_order.len() - i - 1;
            return;
        }
    }
}

/// The problem a schema error at `pointer` (into the fragment `root`) is,
/// in the spec's words.
pub(super) fn diagnose(
    spec: &MergeSpec,
    root: &Value,
    pointer: &str,
    e: &ValidationError,
) -> DiagnosticKind {
    let (kind, instance) = (e.kind(), &**e.instance());
    if spec.directives()
        && let Some(message) = directive_problem(spec, root, pointer, instance)
    {
        return message;
    }
    rule_at(spec, root, pointer)
        .and_then(|at| {
            wrong_type(&at, kind, instance).or_else(|| broken_constraint(&at, kind, instance))
        })
        .unwrap_or_else(|| DiagnosticKind::Schema {
            message: schema_message(e),
        })
}

/// The rule of a list item inside an OVERRIDE value, if it has one.
fn override_items(rule: &Field) -> Option<&ValueRule> {
    match &rule.strategy {
        Strategy::Override { value } => value.items.as_deref(),
        _ => None,
    }
}

/// `field` under `rule` is `instance`, where `expected` was.
fn wrong(rule: &Field, instance: &Value, field: String, expected: String) -> DiagnosticKind {
    DiagnosticKind::WrongType {
        found: yaml11_boolean(&expected, instance).unwrap_or_else(|| describe(instance).into()),
        field,
        strategy: rule.strategy.name().into(),
        expected,
    }
}

/// A KEYED_REPLACE rule's key fields, as a sentence lists them.
fn keys_list(keys: &[String]) -> String {
    list(keys.iter().map(String::as_str), false)
}

/// A value whose type the rule at `at` does not take (a field, an item of
/// a list, an entry of a keyed list), with the type it takes; `None` for
/// any other error.
fn wrong_type(at: &RuleAt<'_>, kind: &K, instance: &Value) -> Option<DiagnosticKind> {
    let (rule, name, index, deeper) = (at.rule, at.path.clone(), at.index, at.rest.len() > 1);
    let wrong = |field: String, expected: String| wrong(rule, instance, field, expected);
    let override_items = override_items(rule);
    Some(match (&rule.strategy, index, deeper, kind) {
        (Strategy::Override { value }, None, _, K::Type { .. }) => wrong(name, value.phrase()),
        // A value of several types with no branch of its own type (see
        // `own_branch`): the type is what is wrong.
        (Strategy::Override { value }, None, _, K::AnyOf { .. }) if value.types.len() > 1 => {
            wrong(name, value.phrase())
        }
        (Strategy::Override { .. }, Some(i), false, K::Type { .. }) if override_items.is_some() => {
            wrong(
                format!("{name}[{i}]"),
                override_items.map(ValueRule::phrase).unwrap_or_default(),
            )
        }
        (Strategy::Append { items, .. }, None, _, K::Type { .. }) => {
            wrong(name, format!("a list of {}", items.plural()))
        }
        (Strategy::Append { items, .. }, Some(i), false, K::Type { .. }) => {
            wrong(format!("{name}[{i}]"), items.phrase())
        }
        (Strategy::KeyedReplace { keys, .. }, None, _, K::Type { .. }) => wrong(
            name,
            format!("a list of names or mappings with a {}", keys_list(keys)),
        ),
        // An entry that is not a mapping, where the rule refuses plain ones.
        (Strategy::KeyedReplace { keys, unkeyed, .. }, Some(i), false, K::Type { .. }) => wrong(
            format!("{name}[{i}]"),
            match unkeyed {
                crate::spec::Unkeyed::Append => "a mapping".into(),
                crate::spec::Unkeyed::Refuse => format!("a mapping with a {}", keys_list(keys)),
            },
        ),
        (Strategy::KeyedReplace { keys, .. }, Some(i), false, K::AnyOf { .. }) => {
            keyed_entry(at, i, keys, instance)
        }
        (Strategy::DeepMerge { .. }, None, _, K::Type { .. }) => wrong(name, "a mapping".into()),
        _ => return None,
    })
}

/// Entry `i` of a keyed list (the rule at `at`, key fields `keys`) that
/// fits none of its forms: a key whose value cannot be one (said, not that
/// the key is missing), a mapping with no key (and the key it may have
/// meant), or neither a name nor a mapping.
fn keyed_entry(at: &RuleAt<'_>, i: usize, keys: &[String], instance: &Value) -> DiagnosticKind {
    let (rule, name) = (at.rule, &at.path);
    let Value::Object(entry) = instance else {
        return wrong(
            rule,
            instance,
            format!("{name}[{i}]"),
            format!("a non-empty name or a mapping with a {}", keys_list(keys)),
        );
    };
    match keys.iter().find_map(|k| entry.get_key_value(k.as_str())) {
        Some((k, v)) if !matches!(v, Value::String(s) if !s.is_empty()) => {
            DiagnosticKind::WrongType {
                field: format!("{name}[{i}].{k}"),
                strategy: rule.strategy.name().into(),
                expected: "a non-empty string, the entry's key".into(),
                found: match v {
                    Value::String(_) => "an empty string".into(),
                    v => describe(v).into(),
                },
            }
        }
        _ => DiagnosticKind::MissingKey {
            field: name.clone(),
            index: i,
            keys: keys.to_vec(),
            suggestion: entry
                .keys()
                .find_map(|k| did_you_mean(k, keys.iter().map(String::as_str))),
        },
    }
}

/// A value that breaks a constraint of the rule at `at` (an OVERRIDE
/// value, an item of one, an item of an APPEND list), in the spec's words;
/// `None` for any other error.
fn broken_constraint(at: &RuleAt<'_>, kind: &K, instance: &Value) -> Option<DiagnosticKind> {
    let (rule, name, index, deeper) = (at.rule, at.path.clone(), at.index, at.rest.len() > 1);
    match (&rule.strategy, index, deeper) {
        (Strategy::Override { value }, None, _) => constraint(name, value, kind, instance),
        (Strategy::Override { .. }, Some(i), false) => override_items(rule)
            .and_then(|items| constraint(format!("{name}[{i}]"), items, kind, instance)),
        (Strategy::Append { items, .. }, Some(i), false) => {
            constraint(format!("{name}[{i}]"), items, kind, instance)
        }
        _ => None,
    }
}

/// Where a pointer into a fragment is, in the spec's rules.
struct RuleAt<'s> {
    /// The deepest rule on the way: a top-level field's, or a nested key's.
    rule: &'s Field,
    /// That rule's path, as explain writes it: `metadata.tools`.
    path: String,
    /// The pointer's segments below that rule's value.
    rest: Vec<Seg>,
    /// The first of them as a list index.
    index: Option<usize>,
}

/// The rule that governs the value at `pointer` (following `fields:` of
/// DEEP_MERGE rules as deep as they go); `None` outside any field.
fn rule_at<'s>(spec: &'s MergeSpec, root: &Value, pointer: &str) -> Option<RuleAt<'s>> {
    let mut segs = segments(root, pointer).into_iter();
    let Some(Seg::Key(first)) = segs.next() else {
        return None;
    };
    let mut rule = spec.field(&first)?;
    let mut path = first;
    let mut rest: Vec<Seg> = Vec::new();
    for seg in segs {
        match &seg {
            Seg::Key(k) if rest.is_empty() && rule.key_rule(k).is_some() => {
                path.push('.');
                path.push_str(k);
                rule = rule.key_rule(k).expect("just found");
            }
            _ => rest.push(seg),
        }
    }
    let index = match rest.first() {
        Some(Seg::Index(i)) => Some(*i),
        _ => None,
    };
    Some(RuleAt {
        rule,
        path,
        rest,
        index,
    })
}

/// A misused directive, in words: the error at `pointer` is about a
/// mapping holding `$patch` (`instance`), or about `$patch`'s own value.
/// `None` when the error has nothing to do with a directive.
pub(super) fn directive_problem(
    spec: &MergeSpec,
    root: &Value,
    pointer: &str,
    instance: &Value,
) -> Option<DiagnosticKind> {
    use directive::PATCH;
    let (map_pointer, map) = match pointer.rsplit_once('/') {
        Some((parent, last)) if last == PATCH => (parent, None),
        _ => match instance {
            Value::Object(m) if m.contains_key(PATCH) => (pointer, Some(m)),
            _ => return None,
        },
    };
    let verb = match map {
        Some(m) => m.get(PATCH).unwrap_or(&Value::Null),
        None => instance,
    };
    let shown = || json_excerpt(verb, EXCERPT_CHARS);
    let problem = |path: String, message: String| {
        Some(DiagnosticKind::Directive {
            path: excerpt(&path, EXCERPT_CHARS),
            message,
        })
    };
    if map_pointer.is_empty() {
        return problem(
            PATCH.into(),
            "a directive at the top level means nothing: it goes inside a field's value (a list element or a mapping)".into(),
        );
    }
    let at = rule_at(spec, root, map_pointer)?;
    let path = pointer_to_path(root, map_pointer);
    let in_list = at.rest.iter().any(|s| matches!(s, Seg::Index(_)));
    let strategy = &at.rule.strategy;
    let placed = match strategy {
        // The field's own value, or a mapping below a DEEP_MERGE key.
        Strategy::DeepMerge { .. } => !in_list,
        Strategy::Append { .. } | Strategy::KeyedReplace { .. } => {
            at.rest.len() == 1 && at.index.is_some()
        }
        Strategy::Override { .. } => false,
    };
    if placed {
        // A `$patch` whose own value is wrong, or a mapping holding one.
        let misuse = match map {
            Some(m) => directive::classify(strategy, m).err()?,
            // A list element's `$patch` is judged with the element.
            None if !matches!(strategy, Strategy::DeepMerge { .. }) => return None,
            None => directive::Misuse::Unknown,
        };
        return problem(path, misuse.message(strategy, &shown()));
    }
    problem(
        path,
        match strategy {
            Strategy::DeepMerge { .. } => "a directive means nothing in a list below a DEEP_MERGE key: such a list is replaced whole already (give the key a rule under 'fields:' in the spec to merge it)".into(),
            Strategy::Override { .. } if at.rest.is_empty() => "an OVERRIDE value is replaced whole, so it takes no directive: write null to reset it".into(),
            _ => format!(
                "a directive means nothing inside {} ({}): it belongs to a list element or a mapping that merges",
                at.path,
                strategy.name()
            ),
        },
    )
}

/// An `anyOf` that failed because of a `$patch` deep inside the value (a
/// keyed entry holding a directive where it means nothing): the error at
/// that `$patch`, so that the message names it and points at it.
pub(super) fn patch_branch<'e>(e: &'e ValidationError<'e>) -> Option<&'e ValidationError<'e>> {
    let K::AnyOf { context } = e.kind() else {
        return None;
    };
    // The value's own `$patch` is the directive forms' business.
    let own = format!("{}/$patch", e.instance_path().as_str());
    context.iter().flatten().find_map(|b| {
        let at = b.instance_path().as_str();
        if at.ends_with("/$patch") && at != own {
            Some(b)
        } else {
            patch_branch(b)
        }
    })
}

/// A value of several types is checked by one `anyOf` branch per type (see
/// `spec::value_schema`): the branch of the value's own type says what is
/// wrong with it. Its first error, searched again in the same way; `None`
/// when `e` is no such error or no branch is of the value's type.
pub(super) fn own_branch<'e>(
    spec: &MergeSpec,
    e: &'e ValidationError<'e>,
) -> Option<&'e ValidationError<'e>> {
    let K::AnyOf { context } = e.kind() else {
        return None;
    };
    let pointer = e.instance_path().as_str();
    let mut segs = pointer.split('/').skip(1);
    let field = segs.next().map(unescape_pointer)?;
    if segs.next().is_some() {
        return None;
    }
    let Strategy::Override { value } = &spec.field(&field)?.strategy else {
        return None;
    };
    if value.types.len() < 2 {
        return None;
    }
    let own = context.iter().find(|branch| {
        !branch
            .iter()
            .any(|b| b.instance_path().as_str() == pointer && matches!(b.kind(), K::Type { .. }))
    })?;
    let first = own.first()?;
    Some(own_branch(spec, first).unwrap_or(first))
}

/// The most characters of a value a constraint message quotes.
const QUOTED_CHARS: usize = 60;

/// A broken constraint of `rule` in words; `None` for any other error.
pub(crate) fn constraint(
    field: String,
    rule: &ValueRule,
    kind: &K,
    instance: &Value,
) -> Option<DiagnosticKind> {
    let c = &rule.constraints;
    let quoted = || match instance {
        Value::String(s) => format!("'{}'", excerpt(s, QUOTED_CHARS)),
        other => sanitized_excerpt(&other.to_string(), QUOTED_CHARS),
    };
    let chars = || instance.as_str().map_or(0, |s| s.chars().count());
    let (attr, problem) = match kind {
        K::Pattern { pattern } => (
            "pattern",
            match &c.pattern_help {
                Some(help) => format!("must be {help}; got {}", quoted()),
                None => format!(
                    "must match the regular expression {}; got {}",
                    excerpt(pattern, QUOTED_CHARS),
                    quoted()
                ),
            },
        ),
        K::MinLength { .. } if chars() == 0 => ("min_length", "must not be empty".to_owned()),
        K::MinLength { limit } => (
            "min_length",
            format!(
                "must be at least {limit} characters long; got {} ({})",
                chars(),
                quoted()
            ),
        ),
        K::MaxLength { limit } => (
            "max_length",
            format!("must be at most {limit} characters long; got {}", chars()),
        ),
        K::Enum { options } => {
            let choices: Vec<String> = options
                .as_array()
                .map(|o| {
                    o.iter()
                        .filter(|v| !v.is_null())
                        .map(|v| sanitized_excerpt(&v.to_string(), QUOTED_CHARS))
                        .collect()
                })
                .unwrap_or_default();
            (
                "enum",
                format!(
                    "must be one of {}; got {}",
                    list(choices.iter().map(String::as_str), false),
                    sanitized_excerpt(&instance.to_string(), QUOTED_CHARS)
                ),
            )
        }
        K::Minimum { limit } => (
            "minimum",
            format!(
                "must be at least {limit}; got {}",
                sanitized_excerpt(&instance.to_string(), QUOTED_CHARS)
            ),
        ),
        K::Maximum { limit } => (
            "maximum",
            format!(
                "must be at most {limit}; got {}",
                sanitized_excerpt(&instance.to_string(), QUOTED_CHARS)
            ),
        ),
        _ => return None,
    };
    Some(DiagnosticKind::Constraint {
        field,
        constraint: attr.into(),
        problem,
    })
}

/// A string a YAML 1.1 reader took for a boolean (`no`, `on`, …), where a
/// boolean is expected: the value as found, and what to write instead.
fn yaml11_boolean(expected: &str, instance: &Value) -> Option<String> {
    let Value::String(s) = instance else {
        return None;
    };
    if !expected.contains("boolean") {
        return None;
    }
    let fix = match s.to_ascii_lowercase().as_str() {
        "yes" | "y" | "on" => "true",
        "no" | "n" | "off" => "false",
        _ => return None,
    };
    Some(format!(
        "the string '{s}' (YAML 1.2 reads yes, no, on and off as text): write {fix}"
    ))
}
