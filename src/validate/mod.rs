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

mod diagnose;
mod kept;
pub mod ownership;

use std::sync::{Arc, OnceLock};

use jsonschema::error::ValidationErrorKind as K;
use serde_json::Value;

use crate::digest::Digest;
use crate::error::{Diagnostic, DiagnosticKind, did_you_mean};
use crate::fragment::{Fragment, escape_pointer};
use crate::merge::identity;
use crate::spec::{MergeSpec, Strategy, Verdicts, directive, fragment_key, validation_schema};
use crate::text::{EXCERPT_CHARS, MESSAGE_CHARS, excerpt};
pub(crate) use diagnose::constraint;
use diagnose::{diagnose, directive_problem, located, own_branch, patch_branch, unknown_fields};
pub(crate) use kept::{Kept, MAX_PER_FILE};

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
    /// What the spec's cache knows valid ([`crate::spec::SpecCache`]).
    verdicts: Option<Arc<Verdicts>>,
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
            verdicts: spec.verdicts.clone(),
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

    /// Is `instance` valid under the schema? Until the schema is compiled,
    /// a verdict the spec's cache keeps under `key` (what the instance is
    /// read from) answers without compiling it; a new valid verdict is kept
    /// while the cache takes more.
    fn schema_valid(
        &self,
        instance: &Value,
        key: impl FnOnce() -> Digest,
    ) -> Result<bool, Diagnostic> {
        let compiled = self.compiled.get().is_some();
        let key = self
            .verdicts
            .as_deref()
            .filter(|v| !compiled || v.learning())
            .map(|v| (v, key()));
        if let Some((v, key)) = &key
            && !compiled
            && v.knows(key)
        {
            return Ok(true);
        }
        let valid = self.compiled()?.is_valid(instance);
        if valid && let Some((v, key)) = key {
            v.learn(key);
        }
        Ok(valid)
    }

    /// Every error in `fragment`, located, in source order: at most
    /// `MAX_PER_FILE` of them (the first ones in the file), then one
    /// [`DiagnosticKind::TooManyErrors`] counting the rest. Empty when it
    /// is valid.
    pub fn validate(&self, spec: &MergeSpec, fragment: &Fragment) -> Vec<Diagnostic> {
        let instance = fragment.as_value();
        let mut kept = Kept::new(fragment, MAX_PER_FILE);
        let key = || fragment_key(fragment.form, fragment.source());
        let schema = match self.schema_valid(instance, key) {
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
        let key = || {
            let mut h = crate::digest::Hasher::new();
            h.update(b"value\n");
            h.update(field.as_bytes());
            h.update(b"\n");
            h.update(&serde_json::to_vec(value).unwrap_or_default());
            h.finish()
        };
        let schema = match self.schema_valid(&instance, key) {
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
        let key = || fragment_key(fragment.form, fragment.source());
        if !self.schema_valid(fragment.as_value(), key).unwrap_or(false) {
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
        let problems = sections::problems(text);
        if problems.is_empty() {
            continue;
        }
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
            crate::spec::schema_message(&e),
            format!("\"{}… is not of type \"integer\"", "z".repeat(119))
        );
        let small = serde_json::json!("z");
        let e = v.iter_errors(&small).next().unwrap();
        assert_eq!(crate::spec::schema_message(&e), e.to_string());
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
            .validate(&spec, &f)
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
