//! Checking a fragment against the schema generated from the spec.
//!
//! The schema is compiled once ([`Validator::new`]) and used for every
//! fragment. A valid fragment costs one `is_valid` walk; only an invalid one
//! pays for collecting errors, turning them into located [`Diagnostic`]s and
//! finding their line and column in the source.

use jsonschema::error::ValidationErrorKind as K;
use serde_json::Value;

use crate::error::{Diagnostic, DiagnosticKind, did_you_mean};
use crate::fragment::{Fragment, describe, escape_pointer, unescape_pointer};
use crate::merge::identity;
use crate::spec::{MergeSpec, Strategy, fragment_schema};

/// A compiled fragment schema for one spec.
pub struct Validator {
    schema: jsonschema::Validator,
}

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Validator")
    }
}

impl Validator {
    /// Generates and compiles the fragment schema of `spec`.
    pub fn new(spec: &MergeSpec) -> Validator {
        let schema = jsonschema::draft202012::new(&fragment_schema(spec))
            .expect("the generated fragment schema is valid draft 2020-12");
        Validator { schema }
    }

    /// Every error in `fragment`, located. Empty when it is valid.
    pub fn check(&self, spec: &MergeSpec, fragment: &Fragment) -> Vec<Diagnostic> {
        let instance = fragment.as_value();
        let mut found: Vec<Problem> = Vec::new();
        let mut more = 0;
        if !self.schema.is_valid(instance) {
            for e in self.schema.iter_errors(instance) {
                if found.len() >= MAX_PER_FILE {
                    more += 1;
                    continue;
                }
                let pointer = e.instance_path().as_str().to_owned();
                found.extend(diagnose(
                    spec,
                    &pointer,
                    e.kind(),
                    e.instance(),
                    &e.to_string(),
                ));
            }
        }
        for p in duplicate_identities(spec, fragment) {
            if found.len() >= MAX_PER_FILE {
                more += 1;
            } else {
                found.push(p);
            }
        }
        // Locating is the expensive part (a walk of the source per problem),
        // so it is done for at most MAX_PER_FILE problems.
        let mut out: Vec<Diagnostic> = found
            .into_iter()
            .map(|(pointer, key, kind)| located(fragment, &pointer, key, kind))
            .collect();
        out.sort_by_key(|d| (d.line, d.column));
        if more > 0 {
            out.push(
                Diagnostic::error(Some(&fragment.path), DiagnosticKind::TooManyErrors { more })
                    .in_layer(fragment.layer),
            );
        }
        out
    }

    /// Is `fragment` valid? (No diagnostics are built.)
    pub fn is_valid(&self, spec: &MergeSpec, fragment: &Fragment) -> bool {
        self.schema.is_valid(fragment.as_value()) && duplicate_identities(spec, fragment).is_empty()
    }
}

/// The most problems reported (and located) per file.
pub const MAX_PER_FILE: usize = 50;

/// A problem before it is located: pointer, whether to point at the key, kind.
type Problem = (String, bool, DiagnosticKind);

fn located(fragment: &Fragment, pointer: &str, key: bool, kind: DiagnosticKind) -> Diagnostic {
    let field = pointer_to_path(pointer);
    let mut d = Diagnostic::error(Some(&fragment.path), kind)
        .in_layer(fragment.layer)
        .at(fragment.position(pointer, key));
    if !field.is_empty() {
        d = d.on_field(field);
    }
    d
}

/// `/metadata/limits/0` → `metadata.limits[0]`.
pub fn pointer_to_path(pointer: &str) -> String {
    let mut out = String::new();
    for seg in pointer.split('/').skip(1) {
        let seg = unescape_pointer(seg);
        if !out.is_empty() && seg.parse::<usize>().is_ok() {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&seg);
        }
    }
    out
}

fn diagnose(
    spec: &MergeSpec,
    pointer: &str,
    kind: &K,
    instance: &Value,
    message: &str,
) -> Vec<Problem> {
    let mut segs = pointer.split('/').skip(1);
    let field_name = segs.next().map(unescape_pointer);
    let index: Option<usize> = segs.next().and_then(|s| s.parse().ok());
    let deeper = segs.next().is_some();
    let rule = field_name.as_deref().and_then(|f| spec.field(f));

    if let (K::AdditionalProperties { unexpected }, None) = (kind, &field_name) {
        return unexpected
            .iter()
            .map(|field| {
                let suggestion = did_you_mean(field, spec.field_names());
                let ptr = format!("/{}", escape_pointer(field));
                (
                    ptr,
                    true,
                    DiagnosticKind::UnknownField {
                        field: field.clone(),
                        suggestion,
                    },
                )
            })
            .collect();
    }
    let (Some(name), Some(rule)) = (field_name, rule) else {
        return vec![(
            pointer.to_owned(),
            false,
            DiagnosticKind::Schema {
                message: message.into(),
            },
        )];
    };
    let wrong = |field: String, expected: String| DiagnosticKind::WrongType {
        field,
        strategy: rule.strategy.name().into(),
        expected,
        found: describe(instance).into(),
    };
    let kind = match (&rule.strategy, index, deeper, kind) {
        (Strategy::Override { value_type }, None, _, K::Type { .. }) => {
            wrong(name, value_type.phrase().into())
        }
        (Strategy::Append { item_type }, None, _, K::Type { .. }) => {
            wrong(name, format!("a list of {}", item_type.plural()))
        }
        (Strategy::Append { item_type }, Some(i), false, K::Type { .. }) => {
            wrong(format!("{name}[{i}]"), item_type.phrase().into())
        }
        (Strategy::KeyedReplace { keys }, None, _, K::Type { .. }) => wrong(
            name,
            format!("a list of names or mappings with a {}", keys.join(", ")),
        ),
        (Strategy::KeyedReplace { keys }, Some(i), false, K::AnyOf { .. }) => match instance {
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
                format!("a non-empty name or a mapping with a {}", keys.join(", ")),
            ),
        },
        (Strategy::DeepMerge, None, _, K::Type { .. }) => wrong(name, "a mapping".into()),
        _ => DiagnosticKind::Schema {
            message: message.into(),
        },
    };
    vec![(pointer.to_owned(), false, kind)]
}

/// Two entries with one identity in one KEYED_REPLACE list of one layer.
fn duplicate_identities(spec: &MergeSpec, fragment: &Fragment) -> Vec<Problem> {
    let mut out = Vec::new();
    for field in &spec.fields {
        let Strategy::KeyedReplace { keys } = &field.strategy else {
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
            if let Some(first) = seen.get(&id) {
                let pointer = format!("/{}/{i}", escape_pointer(&field.name));
                out.push((
                    pointer,
                    false,
                    DiagnosticKind::DuplicateIdentity {
                        field: field.name.clone(),
                        identity: id.to_string(),
                        first: *first,
                        index: i,
                    },
                ));
            } else {
                seen.insert(id, i);
            }
        }
    }
    out
}
