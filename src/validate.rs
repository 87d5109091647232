//! Checking a fragment against the schema generated from the spec.
//!
//! The schema is compiled once ([`Validator::new`]) and used for every
//! fragment. A valid fragment costs one `is_valid` walk; only an invalid one
//! pays for collecting errors, turning them into located [`Diagnostic`]s and
//! finding their line and column in the source.
//!
//! The published schema declares draft 2020-12. Compiling it under that
//! dialect makes the `jsonschema` crate first build its validator for the
//! 2020-12 meta-schema and its vocabularies, about 1.5 ms — a third of the
//! whole run of `bernstein skills show`. The generator only uses keywords
//! whose meaning is the same in draft 7 and 2020-12 ([`SHARED_KEYWORDS`],
//! pinned by a test), so the validator compiles the very same document under
//! draft 7, whose meta-schema is a third of the cost. Every fragment is
//! still checked against every rule of the generated schema.

use jsonschema::error::ValidationErrorKind as K;
use serde_json::Value;

use crate::error::{Diagnostic, DiagnosticKind, did_you_mean};
use crate::fragment::{Fragment, describe, escape_pointer, unescape_pointer};
use crate::merge::identity;
use crate::spec::{MergeSpec, Strategy, fragment_schema};

/// Builds, once per process, what every schema compilation needs whatever
/// the spec (the meta-schema validator). Call it on a spare thread at start
/// so that it overlaps with reading the spec and the fragments; the later
/// [`Validator::new`] then only compiles the fragment schema itself.
pub fn warm_up() {
    let _ = jsonschema::draft7::new(&serde_json::json!({ "$schema": DRAFT7, "type": "object" }));
}

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
        let mut schema = fragment_schema(spec);
        if let Some(obj) = schema.as_object_mut() {
            obj.insert("$schema".into(), Value::String(DRAFT7.into()));
        }
        let schema = jsonschema::draft7::new(&schema)
            .expect("the generated fragment schema only uses keywords valid in draft 7");
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

const DRAFT7: &str = "http://json-schema.org/draft-07/schema#";

/// The keywords the fragment schema generator may use: each means the same
/// in draft 7 and draft 2020-12 (for `items`, the single-schema form).
pub const SHARED_KEYWORDS: &[&str] = &[
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
];

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
                    "properties" => {
                        if let Value::Object(props) = sub {
                            props.values().for_each(|p| keywords(p, out));
                        }
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
        ];
        for c in cases {
            assert_eq!(v2020.is_valid(&c), ours.schema.is_valid(&c), "{c}");
            assert_eq!(
                v2020.iter_errors(&c).count(),
                ours.schema.iter_errors(&c).count(),
                "{c}"
            );
        }
    }
}
