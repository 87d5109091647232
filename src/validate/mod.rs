//! Checking a fragment against the schema generated from the spec.
//!
//! The schema is generated once per spec ([`Validator::new`]) and compiled
//! by `jsonschema`, once per process, on the first fragment checked: that
//! compiled schema is the one judge of a fragment's validity. The errors of
//! an invalid fragment are then turned into located [`Diagnostic`]s, their
//! line and column found in the source.
//!
//! The published schema declares draft 2020-12. Compiling it under that
//! dialect makes the `jsonschema` crate first build its validator for the
//! 2020-12 meta-schema and its vocabularies, three times the cost of draft
//! 7's. The generator only uses keywords whose meaning is the same in draft
//! 7 and 2020-12 (a test pins the list), so the validator
//! reads the very same document under draft 7's rules.

pub mod ownership;

use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind as K;
use serde_json::Value;

use crate::error::{Diagnostic, DiagnosticKind, did_you_mean};
use crate::fragment::{Fragment, Pos, describe, escape_pointer, unescape_pointer};
use crate::merge::identity;
use std::sync::{Arc, OnceLock};

use crate::spec::{
    Field, MergeSpec, Strategy, ValueRule, directive, schema_message, validation_schema,
};
use crate::text::{EXCERPT_CHARS, MESSAGE_CHARS, excerpt, json_excerpt, list, sanitized_excerpt};

/// Compiles a fragment schema under draft 7 (see the module documentation).
fn compile_draft7(
    mut schema: Value,
) -> Result<Arc<jsonschema::Validator>, jsonschema::ValidationError<'static>> {
    if let Some(obj) = schema.as_object_mut() {
        obj.insert("$schema".into(), Value::String(DRAFT7.into()));
    }
    crate::spec::compile_draft7(&schema)
}

/// The fragment schema of one spec, compiled (once, when first needed) by
/// `jsonschema`, which judges every fragment.
pub struct Validator {
    schema: Value,
    compiled: OnceLock<Result<Arc<jsonschema::Validator>, String>>,
    /// Where the spec is, to name it if its schema does not compile.
    spec_path: std::path::PathBuf,
    /// Does some rule say which layers may set it? (See [`crate::validate::ownership`].)
    owned: bool,
}

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Validator")
    }
}

impl Validator {
    /// Generates the fragment schema of `spec` (compiling nothing yet).
    pub fn new(spec: &MergeSpec) -> Validator {
        Validator {
            schema: validation_schema(spec),
            compiled: OnceLock::new(),
            spec_path: spec.path.clone(),
            owned: crate::validate::ownership::any_owned(spec),
        }
    }

    /// The compiled schema, compiled now if it was not yet. It compiles
    /// for every spec that loads (each pattern was checked alone); the
    /// error is for a schema over the pattern engine's limits as a whole.
    fn compiled(&self) -> Result<&jsonschema::Validator, Diagnostic> {
        self.compiled
            .get_or_init(|| compile_draft7(self.schema.clone()).map_err(|e| e.to_string()))
            .as_deref()
            .map_err(|e| {
                Diagnostic::error(
                    Some(&self.spec_path),
                    DiagnosticKind::Spec {
                        message: format!(
                            "the fragment schema of this spec does not compile: {}",
                            excerpt(e, MESSAGE_CHARS)
                        ),
                    },
                )
            })
    }

    /// Is `instance` valid under the schema?
    fn schema_valid(&self, instance: &Value) -> Result<bool, Diagnostic> {
        Ok(self.compiled()?.is_valid(instance))
    }

    /// Every error in `fragment`, located, in source order: at most
    /// `MAX_PER_FILE` of them (the first ones in the file), then one
    /// [`DiagnosticKind::TooManyErrors`] counting the rest. Empty when it
    /// is valid.
    pub fn check(&self, spec: &MergeSpec, fragment: &Fragment) -> Vec<Diagnostic> {
        let instance = fragment.as_value();
        let mut kept = Kept::new(fragment, MAX_PER_FILE);
        let schema = match self.schema_valid(instance) {
            Ok(true) => None,
            Ok(false) => self.compiled().ok(),
            Err(d) => return vec![d],
        };
        if let Some(schema) = schema {
            for e in schema.iter_errors(instance) {
                let pointer = e.instance_path().as_str();
                match e.kind() {
                    // One error for every unknown field: one problem each.
                    K::AdditionalProperties { unexpected } if pointer.is_empty() => {
                        unknown_fields(fragment, unexpected, &mut kept);
                    }
                    _ => {
                        // A value of several types: the error inside the
                        // branch of its own type, where it is.
                        let e = own_branch(spec, &e)
                            .or_else(|| patch_branch(&e))
                            .unwrap_or(&e);
                        let pointer = e.instance_path().as_str();
                        kept.offer(pointer.to_owned(), false, || {
                            diagnose(spec, instance, pointer, e)
                        });
                    }
                }
            }
        }
        duplicate_identities(spec, fragment, |pointer, kind| {
            kept.offer(pointer, false, kind);
        });
        section_directives(spec, fragment, &mut kept);
        if self.owned {
            crate::validate::ownership::offer(spec, fragment, &mut kept);
        }
        let more = kept.more;
        let mut out: Vec<Diagnostic> = kept
            .into_sorted()
            .into_iter()
            .map(|(pointer, pos, kind)| {
                let kind = match kind {
                    // Suggestions are looked for, and long names cut, only
                    // for the unknown fields that are shown.
                    DiagnosticKind::UnknownField { field, .. }
                        if spec.directives() && field == directive::PATCH =>
                    {
                        directive_problem(
                            spec,
                            instance,
                            &format!("/{}", escape_pointer(&field)),
                            &Value::Null,
                        )
                        .unwrap_or(DiagnosticKind::UnknownField {
                            field,
                            suggestion: None,
                        })
                    }
                    DiagnosticKind::UnknownField { field, .. } => DiagnosticKind::UnknownField {
                        suggestion: did_you_mean(&field, spec.field_names()),
                        field: excerpt(&field, EXCERPT_CHARS),
                    },
                    kind => kind,
                };
                located(fragment, &pointer, pos, kind)
            })
            .collect();
        if more > 0 {
            out.push(
                Diagnostic::error(Some(&fragment.path), DiagnosticKind::TooManyErrors { more })
                    .in_layer(fragment.layer),
            );
        }
        out
    }

    /// The problems of one value of field `field` (its type and constraints),
    /// unlocated: for a value the merge made rather than read from a layer
    /// (the name field's default, the skill's file name).
    pub(crate) fn check_value(
        &self,
        spec: &MergeSpec,
        field: &str,
        value: &Value,
    ) -> Vec<DiagnosticKind> {
        let instance = Value::Object([(field.to_owned(), value.clone())].into_iter().collect());
        let schema = match self.schema_valid(&instance) {
            Ok(true) => return Vec::new(),
            Ok(false) => self.compiled(),
            Err(d) => Err(d),
        };
        let schema = match schema {
            Ok(schema) => schema,
            Err(d) => return vec![d.kind],
        };
        schema
            .iter_errors(&instance)
            .take(MAX_PER_FILE)
            .map(|e| {
                let e = own_branch(spec, &e).unwrap_or(&e);
                diagnose(spec, &instance, e.instance_path().as_str(), e)
            })
            .collect()
    }

    #[cfg(test)]
    /// Is `fragment` valid? (No diagnostics are built.)
    pub(crate) fn is_valid(&self, spec: &MergeSpec, fragment: &Fragment) -> bool {
        if !self.schema_valid(fragment.as_value()).unwrap_or(false) {
            return false;
        }
        let mut any = false;
        duplicate_identities(spec, fragment, |_, _| any = true);
        !any && (!self.owned || crate::validate::ownership::allowed(spec, fragment))
    }
}

const DRAFT7: &str = "http://json-schema.org/draft-07/schema#";

#[cfg(test)]
/// The keywords the fragment schema generator may use: each means the same
/// in draft 7 and draft 2020-12 (for `items`, the single-schema form).
pub(crate) const SHARED_KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "title",
    "description",
    "examples",
    "type",
    "properties",
    "additionalProperties",
    "items",
    "anyOf",
    "required",
    "minLength",
    // The constraints a rule may carry (`pattern`, `min_length`,
    // `max_length`, `enum`, `minimum`, `maximum`): validation keywords of
    // the core vocabulary since draft 4, unchanged in 2020-12. `pattern` is
    // an ECMA-262 regular expression in both; `minimum` and `maximum` are
    // inclusive in both (draft 4's boolean `exclusiveMinimum` is not used).
    "pattern",
    "maxLength",
    "enum",
    "minimum",
    "maximum",
    // Directives (spec version 2): conditionals since draft 7, unchanged in
    // 2020-12; `$ref` to a JSON pointer inside the document, alone in its
    // object (draft 7 ignores a `$ref`'s siblings; 2020-12 does not, so a
    // lone `$ref` means the same in both); `$defs` holds what it points to,
    // a keyword in 2020-12 and a plain location in draft 7.
    "if",
    "then",
    "else",
    "not",
    "maxProperties",
    "$ref",
    "$defs",
];

/// The most problems reported (and located) per file, of each severity.
pub(crate) const MAX_PER_FILE: usize = 50;

/// The first `max` problems of one file by position, chosen as they come
/// (a heap of the `max` earliest), and how many more there were. Each
/// problem's kind is only built if it is kept when offered, so a file with
/// a million problems costs a million position lookups and `max` messages.
pub(crate) struct Kept<'f> {
    fragment: &'f Fragment,
    max: usize,
    heap: std::collections::BinaryHeap<Ranked>,
    seen: usize,
    /// How many problems were offered and not kept.
    pub(crate) more: usize,
}

/// A kept problem: its pointer, position and kind, ranked by position
/// (unknown last), then by order of arrival.
struct Ranked {
    rank: (Pos, usize),
    pointer: String,
    pos: Option<Pos>,
    kind: DiagnosticKind,
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.rank == other.rank
    }
}
impl Eq for Ranked {}
impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.rank.cmp(&other.rank)
    }
}

impl<'f> Kept<'f> {
    pub(crate) fn new(fragment: &'f Fragment, max: usize) -> Kept<'f> {
        Kept {
            fragment,
            max,
            heap: std::collections::BinaryHeap::with_capacity(max + 1),
            seen: 0,
            more: 0,
        }
    }

    /// The fragment the problems are in.
    pub(crate) fn fragment(&self) -> &'f Fragment {
        self.fragment
    }

    /// Offers the problem at `pointer` (at its key if `key` is set);
    /// `kind` is called only if it is kept, for now. False if it comes
    /// after all the problems kept and there is no room for it.
    pub(crate) fn offer(
        &mut self,
        pointer: String,
        key: bool,
        kind: impl FnOnce() -> DiagnosticKind,
    ) -> bool {
        let pos = self.fragment.position(&pointer, key);
        self.offer_at(pointer, pos, kind)
    }

    /// [`Kept::offer`] for a problem whose position is known.
    pub(crate) fn offer_at(
        &mut self,
        pointer: String,
        pos: Option<Pos>,
        kind: impl FnOnce() -> DiagnosticKind,
    ) -> bool {
        let rank = (pos.unwrap_or((usize::MAX, usize::MAX)), self.seen);
        self.seen += 1;
        if self.heap.len() == self.max && self.heap.peek().is_none_or(|top| top.rank < rank) {
            self.more += 1;
            return false;
        }
        self.heap.push(Ranked {
            rank,
            pointer,
            pos,
            kind: kind(),
        });
        if self.heap.len() > self.max {
            self.heap.pop();
            self.more += 1;
        }
        true
    }

    /// The kept problems in source order: pointer, position, kind.
    pub(crate) fn into_sorted(self) -> Vec<(String, Option<Pos>, DiagnosticKind)> {
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|r| (r.pointer, r.pos, r.kind))
            .collect()
    }
}

fn located(
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
fn unknown_fields(fragment: &Fragment, unexpected: &[String], kept: &mut Kept) {
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
fn diagnose(spec: &MergeSpec, root: &Value, pointer: &str, e: &ValidationError) -> DiagnosticKind {
    let (kind, instance) = (e.kind(), &**e.instance());
    if spec.directives()
        && let Some(message) = directive_problem(spec, root, pointer, instance)
    {
        return message;
    }
    let Some(at) = rule_at(spec, root, pointer) else {
        return DiagnosticKind::Schema {
            message: schema_message(e),
        };
    };
    let (rule, name, index, deeper) = (at.rule, at.path, at.index, at.rest.len() > 1);
    let wrong = |field: String, expected: String| DiagnosticKind::WrongType {
        field,
        strategy: rule.strategy.name().into(),
        expected,
        found: describe(instance).into(),
    };
    let keys_list = |keys: &[String]| list(keys.iter().map(String::as_str), false);
    // The rule of a list item inside an OVERRIDE value, if it has one.
    let override_items = match &rule.strategy {
        Strategy::Override { value } => value.items.as_deref(),
        _ => None,
    };
    let or_schema = |k: Option<DiagnosticKind>| {
        k.unwrap_or_else(|| DiagnosticKind::Schema {
            message: schema_message(e),
        })
    };
    match (&rule.strategy, index, deeper, kind) {
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
        (Strategy::KeyedReplace { keys, .. }, Some(i), false, K::AnyOf { .. }) => match instance {
            Value::Object(entry) => DiagnosticKind::MissingKey {
                field: name,
                index: i,
                keys: keys.clone(),
                suggestion: entry
                    .keys()
                    .find_map(|k| did_you_mean(k, keys.iter().map(String::as_str))),
            },
            _ => wrong(
                format!("{name}[{i}]"),
                format!("a non-empty name or a mapping with a {}", keys_list(keys)),
            ),
        },
        (Strategy::DeepMerge { .. }, None, _, K::Type { .. }) => wrong(name, "a mapping".into()),
        (Strategy::Override { value }, None, _, kind) => {
            or_schema(constraint(name, value, kind, instance))
        }
        (Strategy::Override { .. }, Some(i), false, kind) if override_items.is_some() => or_schema(
            override_items
                .and_then(|items| constraint(format!("{name}[{i}]"), items, kind, instance)),
        ),
        (Strategy::Append { items, .. }, Some(i), false, kind) => {
            or_schema(constraint(format!("{name}[{i}]"), items, kind, instance))
        }
        _ => DiagnosticKind::Schema {
            message: schema_message(e),
        },
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
fn directive_problem(
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
fn patch_branch<'e>(e: &'e ValidationError<'e>) -> Option<&'e ValidationError<'e>> {
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
fn own_branch<'e>(spec: &MergeSpec, e: &'e ValidationError<'e>) -> Option<&'e ValidationError<'e>> {
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

/// The misused directives of a value that changes the lower one section by
/// section ([`crate::merge::sections`]), each at its line.
fn section_directives(spec: &MergeSpec, fragment: &Fragment, kept: &mut Kept) {
    use crate::merge::sections;
    for field in spec.fields.iter().filter(|f| f.sections.is_some()) {
        let Some(text) = fragment.fields().get(&field.name).and_then(Value::as_str) else {
            continue;
        };
        let always = field.sections == Some(crate::spec::Sections::Always);
        if !(always || sections::asks(text)) {
            continue;
        }
        let Err(problems) = sections::ops(text) else {
            continue;
        };
        let pointer = format!("/{}", escape_pointer(&field.name));
        for p in problems {
            let pos = fragment.position_in_value(&pointer, p.line);
            kept.offer_at(pointer.clone(), pos, || DiagnosticKind::Directive {
                path: excerpt(&field.name, EXCERPT_CHARS),
                message: p.message.clone(),
            });
        }
    }
}

/// Two entries with one identity in one KEYED_REPLACE list of one layer:
/// `found` gets each one's pointer and (lazily) its problem.
fn duplicate_identities(
    spec: &MergeSpec,
    fragment: &Fragment,
    mut found: impl FnMut(String, &dyn Fn() -> DiagnosticKind),
) {
    for field in &spec.fields {
        let Strategy::KeyedReplace { keys, .. } = &field.strategy else {
            continue;
        };
        let Some(Value::Array(items)) = fragment.fields().get(&field.name) else {
            continue;
        };
        let mut seen: std::collections::BTreeMap<crate::merge::Identity, usize> =
            Default::default();
        for (i, item) in items.iter().enumerate() {
            let Some(id) = identity(item, keys) else {
                continue;
            };
            if let Some(&first) = seen.get(&id) {
                let pointer = format!("/{}/{i}", escape_pointer(&field.name));
                found(pointer, &|| DiagnosticKind::DuplicateIdentity {
                    field: field.name.clone(),
                    identity: format!("{}={}", id.key, excerpt(id.value, EXCERPT_CHARS)),
                    first,
                    index: i,
                });
            } else {
                seen.insert(id, i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::SHARED_KEYWORDS;
    use crate::spec::fragment_schema;

    /// Every schema keyword in the generated schema (not inside `examples`,
    /// whose contents are data, nor the names under `properties`).
    fn keywords(v: &Value, out: &mut Vec<String>) {
        if let Value::Object(m) = v {
            for (k, sub) in m {
                out.push(k.clone());
                match k.as_str() {
                    "examples" | "description" | "title" | "$id" | "$schema" | "required"
                    | "type" => {}
                    "properties" | "$defs" => {
                        if let Value::Object(props) = sub {
                            props.values().for_each(|p| keywords(p, out));
                        }
                    }
                    "$ref" => {
                        assert_eq!(m.len(), 1, "a $ref stands alone: {m:?}");
                    }
                    "anyOf" => {
                        if let Value::Array(items) = sub {
                            items.iter().for_each(|p| keywords(p, out));
                        }
                    }
                    _ => keywords(sub, out),
                }
            }
        }
    }

    #[test]
    fn fragment_schema_only_uses_keywords_shared_by_draft7_and_2020_12() {
        let spec = crate::merge::tests::spec();
        let mut found = Vec::new();
        keywords(&fragment_schema(&spec), &mut found);
        for k in found {
            assert!(
                SHARED_KEYWORDS.contains(&k.as_str()),
                "keyword {k} is not in SHARED_KEYWORDS"
            );
        }
    }

    #[test]
    fn schema_messages_quote_an_excerpt_of_the_value() {
        let v = jsonschema::draft7::new(&serde_json::json!({"type": "integer"})).unwrap();
        let big = Value::String("z".repeat(1 << 20));
        let e = v.iter_errors(&big).next().unwrap();
        assert_eq!(
            super::schema_message(&e),
            format!("\"{}… is not of type \"integer\"", "z".repeat(119))
        );
        let small = serde_json::json!("z");
        let e = v.iter_errors(&small).next().unwrap();
        assert_eq!(super::schema_message(&e), e.to_string());
    }

    #[test]
    fn draft7_and_2020_12_agree() {
        let spec = crate::merge::tests::spec();
        let schema = fragment_schema(&spec);
        let v2020 = jsonschema::draft202012::new(&schema).unwrap();
        let ours = super::Validator::new(&spec);
        let cases = [
            serde_json::json!({}),
            serde_json::json!({"name": "x", "trigger_keywords": ["a"], "metadata": {"a": null}}),
            serde_json::json!({"descripton": "x"}),
            serde_json::json!({"trigger_keywords": "x"}),
            serde_json::json!({"trigger_keywords": [1]}),
            serde_json::json!({"references": [{"url": "x"}]}),
            serde_json::json!({"references": ["", {"name": ""}]}),
            serde_json::json!({"references": ["a", {"id": "b"}, {"code": "c", "name": 3}]}),
            serde_json::json!({"metadata": 5, "name": null}),
            serde_json::json!({"version": 1}),
            // What a target's constraints judge, and type lists.
            serde_json::json!({"name": "My_Skill", "description": ""}),
            serde_json::json!({"name": "日本語-データ", "description": "x".repeat(1025)}),
            serde_json::json!({"name": "a--b", "compatibility": "é".repeat(501)}),
            serde_json::json!({"allowed-tools": ["Read", 1], "license": 2}),
            serde_json::json!({"allowed-tools": "Read, Grep", "user-invocable": "no"}),
        ];
        let compiled = ours.compiled().unwrap();
        for c in cases {
            assert_eq!(v2020.is_valid(&c), compiled.is_valid(&c), "{c}");
            assert_eq!(
                v2020.iter_errors(&c).count(),
                compiled.iter_errors(&c).count(),
                "{c}"
            );
        }
    }

    fn spec() -> crate::MergeSpec {
        crate::MergeSpec::from_str(
            "version: 1\nfields:\n  \
             name: {strategy: OVERRIDE, type: string, pattern: '^[a-z]+$', pattern_help: lowercase letters}\n  \
             raw: {strategy: OVERRIDE, type: string, pattern: '^[a-z]+$', min_length: 2}\n  \
             text: {strategy: OVERRIDE, type: string, min_length: 1, max_length: 3}\n  \
             mode: {strategy: OVERRIDE, enum: [fast, slow]}\n  \
             level: {strategy: OVERRIDE, type: integer, minimum: 1, maximum: 9}\n  \
             tools: {strategy: OVERRIDE, type: [string, array], items: {type: string, max_length: 4}}\n  \
             tags: {strategy: APPEND, items: {type: string, pattern: '^#'}}\n",
            std::path::Path::new("spec.yaml"),
        )
        .unwrap()
    }

    fn problems(text: &str) -> Vec<String> {
        let spec = spec();
        let f = crate::Fragment::from_str(
            text.into(),
            crate::layer::Form::Yaml,
            crate::Layer::Team,
            std::path::Path::new("team/s.yaml"),
            &Default::default(),
        )
        .unwrap();
        super::Validator::new(&spec)
            .check(&spec, &f)
            .iter()
            .map(|d| d.to_string())
            .collect()
    }

    #[test]
    fn broken_constraints_are_located_and_said_in_words() {
        assert_eq!(
            problems(
                "name: Bad\nraw: B\ntext: ''\nmode: medium\nlevel: 10\n\
                 tools: [Read, Grep, Globber]\ntags: ['#a', b]\n"
            ),
            [
                "team/s.yaml:1:7: error: 'name' must be lowercase letters; got 'Bad'",
                "team/s.yaml:2:6: error: 'raw' must be at least 2 characters long; got 1 ('B')",
                "team/s.yaml:2:6: error: 'raw' must match the regular expression ^[a-z]+$; got 'B'",
                "team/s.yaml:3:7: error: 'text' must not be empty",
                "team/s.yaml:4:7: error: 'mode' must be one of \"fast\", \"slow\"; got \"medium\"",
                "team/s.yaml:5:8: error: 'level' must be at most 9; got 10",
                "team/s.yaml:6:21: error: 'tools[2]' must be at most 4 characters long; got 7",
                "team/s.yaml:7:14: error: 'tags[1]' must match the regular expression ^#; got 'b'",
            ]
        );
        assert_eq!(
            problems("text: 'abcd'\nlevel: 0\ntools: 3\n"),
            [
                "team/s.yaml:1:7: error: 'text' must be at most 3 characters long; got 4",
                "team/s.yaml:2:8: error: 'level' must be at least 1; got 0",
                "team/s.yaml:3:8: error: 'tools' (OVERRIDE) expects a string or a list, got an integer",
            ]
        );
        // Lengths count characters, not bytes; null still resets.
        assert!(problems("text: 日本語\nmode: null\nname: null\n").is_empty());
    }

    #[test]
    fn a_quoted_value_is_a_short_escaped_excerpt() {
        let long = format!("X\u{1b}[2J{}", "y".repeat(500));
        let p = problems(&format!("name: \"{}\"\n", long.replace('\u{1b}', "\\e")));
        assert_eq!(p.len(), 1);
        assert!(p[0].contains("got 'X\\x1b[2Jyyy"), "{p:?}");
        assert!(p[0].chars().count() < 200, "{p:?}");
    }

    #[test]
    fn a_value_the_merge_made_is_checked_on_its_own() {
        let spec = spec();
        let v = super::Validator::new(&spec);
        assert!(
            v.check_value(&spec, "name", &serde_json::json!("fine"))
                .is_empty()
        );
        let kinds = v.check_value(&spec, "name", &serde_json::json!("My_Skill"));
        assert_eq!(
            kinds.iter().map(|k| k.to_string()).collect::<Vec<_>>(),
            ["'name' must be lowercase letters; got 'My_Skill'"]
        );
    }
}
