//! JSON Schemas: the one a spec file must satisfy (derived from the Rust
//! types that read it) and the one a skill fragment must satisfy (generated
//! from a loaded spec).

use std::path::Path;

use schemars::transform::{RestrictFormats, Transform};
use serde_json::{Map, Value, json};

use super::directive::{self, Beside, ITEM, Verb};
use super::{Field, MergeSpec, RawSpec, Strategy, ValueRule, ValueType};
use crate::error::{Diagnostic, DiagnosticKind, Error};
use crate::fragment::{self, Syntax};
use crate::text::{EXCERPT_CHARS, MESSAGE_CHARS, excerpt, json_excerpt, list};

const DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";

/// The schema of `spec/mergespec.yaml`, from the types that read it.
pub fn mergespec_schema() -> Value {
    file_schema::<RawSpec>("urn:bernstein-skills:schema:mergespec:1")
}

/// The draft 2020-12 schema of a file read into `T`, with `$id` `id`.
pub(crate) fn file_schema<T: schemars::JsonSchema>(id: &str) -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let mut root = generator.into_root_schema_for::<T>();
    // schemars marks a `u64` with `"format": "uint64"`, which draft 2020-12
    // does not define and Ajv's strict mode rejects; `minimum: 0` already
    // says it. Keep only the standard formats.
    RestrictFormats::default().transform(&mut root);
    let mut schema = root.to_value();
    if let Some(obj) = schema.as_object_mut() {
        obj.insert("$id".into(), json!(id));
    }
    schema
}

/// The strategy in a sentence a user of an override file understands.
pub fn strategy_help(strategy: &Strategy) -> String {
    match strategy {
        Strategy::Override { .. } => {
            "OVERRIDE: your value replaces the lower layers' value; null resets it.".into()
        }
        Strategy::Append { .. } => {
            "APPEND: your items are added after the lower layers' items; null clears the list first."
                .into()
        }
        Strategy::KeyedReplace { keys, .. } => format!(
            "KEYED_REPLACE: an entry with the same {} as a lower layer's entry replaces it in place; \
             other entries are added at the end; null clears the list first.",
            keys.join(" / ")
        ),
        Strategy::DeepMerge { .. } => "DEEP_MERGE: merged key by key with the lower layers; where both \
             set the same path your value wins; null deletes a key."
            .into(),
    }
}

fn typed(json_type: Option<&str>) -> Map<String, Value> {
    let mut m = Map::new();
    if let Some(t) = json_type {
        m.insert("type".into(), json!(t));
    }
    m
}

/// The schema of a value under `rule`: its type(s), its items and its
/// constraints, with JSON Schema's names for them.
///
/// A value of several types is an `anyOf` with one branch per type, each
/// holding the constraints that apply to that type (Ajv's strict mode, as
/// editors run it, refuses a `type` list other than `[T, "null"]`).
pub(crate) fn value_schema(rule: &ValueRule) -> Map<String, Value> {
    let mut m = match rule.types.as_slice() {
        [] => typed_branch(rule, None),
        [one] => typed_branch(rule, Some(*one)),
        many => {
            let branches = many
                .iter()
                .map(|t| Value::Object(typed_branch(rule, Some(*t))))
                .collect();
            let mut m = Map::new();
            m.insert("anyOf".into(), Value::Array(branches));
            m
        }
    };
    if let Some(values) = &rule.constraints.allowed {
        m.insert("enum".into(), Value::Array(values.clone()));
    }
    m
}

/// The schema of `rule`'s values of type `t` (any type when `None`): the
/// type and the constraints that apply to it. JSON Schema ignores a
/// keyword of another type, so for any type all of them are kept.
fn typed_branch(rule: &ValueRule, t: Option<ValueType>) -> Map<String, Value> {
    let mut m = typed(t.and_then(ValueType::json_type));
    let is = |kinds: &[ValueType]| t.is_none_or(|t| kinds.contains(&t));
    if is(&[ValueType::Array])
        && let Some(items) = &rule.items
    {
        m.insert("items".into(), Value::Object(value_schema(items)));
    }
    let c = &rule.constraints;
    if is(&[ValueType::String]) {
        if let Some(p) = &c.pattern {
            m.insert("pattern".into(), json!(p));
        }
        if let Some(n) = c.min_length {
            m.insert("minLength".into(), json!(n));
        }
        if let Some(n) = c.max_length {
            m.insert("maxLength".into(), json!(n));
        }
    }
    if is(&[ValueType::Integer, ValueType::Number]) {
        if let Some(n) = &c.minimum {
            m.insert("minimum".into(), Value::Number(n.clone()));
        }
        if let Some(n) = &c.maximum {
            m.insert("maximum".into(), Value::Number(n.clone()));
        }
    }
    m
}

/// The schema of one field's value (without the `null` reset), for a spec
/// without directives: what a rule's `default` must fit.
fn field_value_schema(strategy: &Strategy) -> Map<String, Value> {
    rule_schema(strategy, false, false)
}

/// The schema of a value under `strategy`. With `directives` (spec version
/// 2), `$patch` is accepted where it means something and nowhere else:
/// list elements `{$patch: replace}` and deletes in APPEND and
/// KEYED_REPLACE lists, `$patch: replace|delete` in DEEP_MERGE mappings
/// (at any depth below a key without a rule of its own, through
/// `#/$defs/deep`).
fn rule_schema(strategy: &Strategy, directives: bool, annotate: bool) -> Map<String, Value> {
    match strategy {
        Strategy::Override { value } if directives => plain(value, value_schema(value)),
        Strategy::Override { value } => value_schema(value),
        Strategy::Append { items, .. } => {
            let mut m = typed(Some("array"));
            let item = value_schema(items);
            let item = if directives {
                let forms = form_schemas(strategy, &Value::Object(item.clone()), &[]);
                obj([
                    ("if", is_directive()),
                    ("then", obj([("anyOf", Value::Array(forms))])),
                    ("else", Value::Object(plain(items, item))),
                ])
            } else {
                Value::Object(item)
            };
            m.insert("items".into(), item);
            m
        }
        Strategy::KeyedReplace { keys, entries } => {
            let with_key: Vec<Value> = keys
                .iter()
                .map(|k| {
                    json!({
                        "required": [k],
                        "properties": { k: { "type": "string", "minLength": 1 } }
                    })
                })
                .collect();
            let mut object = obj([
                ("type", json!("object")),
                ("anyOf", Value::Array(with_key.clone())),
            ]);
            let item = if directives {
                // Inside an entry, a directive means something only when
                // entries merge (key by key, like DEEP_MERGE).
                let merge = *entries == super::EntriesMode::Merge;
                object["additionalProperties"] =
                    json!({ "$ref": if merge { DEEP_REF } else { PLAIN_REF } });
                let forms = form_schemas(strategy, &Value::Null, &with_key);
                obj([
                    ("if", is_directive()),
                    ("then", obj([("anyOf", Value::Array(forms))])),
                    ("else", key_or_entry(object)),
                ])
            } else {
                key_or_entry(object)
            };
            let mut m = typed(Some("array"));
            m.insert("items".into(), item);
            m
        }
        Strategy::DeepMerge { fields } => {
            let mut m = typed(Some("object"));
            if !directives {
                return m;
            }
            let mut properties = Map::new();
            properties.insert(PATCH.into(), verbs(strategy));
            for f in fields {
                let schema = nullable(rule_schema(&f.strategy, true, annotate));
                let schema = described(f, schema, true, annotate);
                properties.insert(f.name.clone(), Value::Object(schema));
            }
            m.insert("properties".into(), Value::Object(properties));
            m.insert("additionalProperties".into(), json!({ "$ref": DEEP_REF }));
            m.extend(standing_alone(strategy));
            m
        }
    }
}

/// The schema of `$patch`'s value in a mapping under `strategy`.
fn verbs(strategy: &Strategy) -> Value {
    let verbs: Vec<&str> = directive::forms(strategy)
        .iter()
        .map(|f| f.verb().name())
        .collect();
    json!({ "enum": verbs })
}

/// For a mapping under `strategy`: the form whose `$patch` stands alone
/// (`{$patch: delete}`) holds nothing else, as `if`/`then`.
fn standing_alone(strategy: &Strategy) -> Map<String, Value> {
    let mut m = Map::new();
    if let Some(form) = directive::forms(strategy)
        .iter()
        .find(|f| f.beside() == Beside::Nothing)
    {
        m.insert("if".into(), with_verb(form.verb()));
        m.insert(
            "then".into(),
            json!({ "type": "object", "maxProperties": 1 }),
        );
    }
    m
}

/// The schema of each list-element form of `strategy`
/// ([`directive::forms`]): `item` is what an APPEND delete names, and
/// `with_key` the ways a KEYED_REPLACE entry is named.
fn form_schemas(strategy: &Strategy, item: &Value, with_key: &[Value]) -> Vec<Value> {
    let keys: &[String] = match strategy {
        Strategy::KeyedReplace { keys, .. } => keys,
        _ => &[],
    };
    directive::forms(strategy)
        .iter()
        .map(|form| {
            let mut properties = Map::new();
            properties.insert(PATCH.into(), json!({ "enum": [form.verb().name()] }));
            let mut required = vec![json!(PATCH)];
            let mut m = Map::new();
            m.insert("type".into(), json!("object"));
            let beside = match form.beside() {
                Beside::Nothing => Value::Bool(false),
                Beside::Item => {
                    properties.insert(ITEM.into(), item.clone());
                    required.push(json!(ITEM));
                    Value::Bool(false)
                }
                Beside::Key => {
                    for k in keys {
                        properties.insert(k.clone(), json!({}));
                    }
                    Value::Bool(false)
                }
                Beside::Entry => json!({ "$ref": DEEP_REF }),
                Beside::Keys => json!({}),
            };
            if matches!(form.beside(), Beside::Key | Beside::Entry) {
                m.insert("anyOf".into(), Value::Array(with_key.to_vec()));
            }
            m.insert("required".into(), Value::Array(required));
            m.insert("properties".into(), Value::Object(properties));
            m.insert("additionalProperties".into(), beside);
            Value::Object(m)
        })
        .collect()
}

/// A JSON object of `pairs`, the values moved in (`json!` would copy an
/// interpolated `Value` node by node).
fn obj<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// A KEYED_REPLACE list element: a key alone, or an entry `object`.
fn key_or_entry(object: Value) -> Value {
    obj([(
        "anyOf",
        Value::Array(vec![json!({ "type": "string", "minLength": 1 }), object]),
    )])
}

/// The directive key.
const PATCH: &str = super::PATCH;

/// Where the schema of a value below a DEEP_MERGE key without a rule is.
const DEEP_REF: &str = "#/$defs/deep";

/// Where the schema of a value replaced whole (no `$patch` in it) is.
const PLAIN_REF: &str = "#/$defs/plain";

/// `schema` (of a value under `rule`), refusing `$patch` anywhere inside
/// when the value may be a mapping or a list: such a value is replaced
/// whole, so a directive in it would mean nothing.
fn plain(rule: &ValueRule, mut schema: Map<String, Value>) -> Map<String, Value> {
    if (rule.allows(ValueType::Object) || rule.allows(ValueType::Array))
        && let Value::Object(def) = plain_def()
    {
        schema.extend(def);
    }
    schema
}

/// A mapping holding `$patch`.
fn is_directive() -> Value {
    json!({ "type": "object", "required": [PATCH], "properties": { PATCH: {} } })
}

/// A mapping whose `$patch` is `verb`.
fn with_verb(verb: Verb) -> Value {
    json!({ "type": "object", "required": [PATCH], "properties": { PATCH: { "enum": [verb.name()] } } })
}

/// The definitions the directive schemas refer to: a value below a
/// DEEP_MERGE key without a rule. A mapping there merges key by key and
/// may hold `$patch`; a list there is replaced whole, so a directive in it
/// means nothing and is refused.
fn deep_defs() -> Value {
    let below = Strategy::DeepMerge { fields: Vec::new() };
    let mut then = obj([
        ("type", json!("object")),
        ("properties", obj([(PATCH, verbs(&below))])),
        ("additionalProperties", json!({ "$ref": DEEP_REF })),
    ]);
    if let Value::Object(m) = &mut then {
        m.extend(standing_alone(&below));
    }
    let deep = obj([
        ("if", json!({ "type": "object" })),
        ("then", then),
        (
            "else",
            json!({
                "if": { "type": "array" },
                "then": { "type": "array", "items": { "$ref": PLAIN_REF } }
            }),
        ),
    ]);
    obj([("deep", deep), ("plain", plain_def())])
}

/// A value that is replaced whole: no `$patch` anywhere in it.
fn plain_def() -> Value {
    json!({
        "if": { "type": "object" },
        "then": {
            "type": "object",
            "properties": { PATCH: false },
            "additionalProperties": { "$ref": PLAIN_REF }
        },
        "else": {
            "if": { "type": "array" },
            "then": { "type": "array", "items": { "$ref": PLAIN_REF } }
        }
    })
}

/// `schema` with the hover text of `field` (its description, its checks in
/// words, its strategy in a sentence) and its examples; unchanged unless
/// `annotate`.
fn described(
    field: &Field,
    mut schema: Map<String, Value>,
    directives: bool,
    annotate: bool,
) -> Map<String, Value> {
    if !annotate {
        return schema;
    }
    let mut description = strategy_help(&field.strategy);
    if directives && let Some(help) = super::directive::help(&field.strategy) {
        description = format!("{description} {help}");
    }
    match field.sections {
        Some(super::Sections::OnRequest) => description.push_str(
            " Start it with <!-- $patch: sections --> to change the lower value section by \
             section instead: a heading it has replaces that section, a new one is appended, \
             <!-- $patch: delete --> under a heading removes it, and <!-- $patch: before \
             \"Heading\" -->, after \"Heading\", start or end place the text that follows.",
        ),
        Some(super::Sections::Always) => description.push_str(
            " It changes the lower value section by section: a heading it has replaces that \
             section, a new one is appended, <!-- $patch: delete --> under a heading removes \
             it, and <!-- $patch: before \"Heading\" -->, after \"Heading\", start or end \
             place the text that follows.",
        ),
        None => {}
    }
    if let Some(rules) = constraint_help(field) {
        description = format!("{rules}\n\n{description}");
    }
    if let Some(d) = &field.description {
        description = format!("{d}\n\n{description}");
    }
    schema.insert("description".into(), json!(description));
    if !field.examples.is_empty() {
        schema.insert("examples".into(), Value::Array(field.examples.clone()));
    }
    schema
}

/// `schema`, also accepting `null` (the reset).
fn nullable(mut schema: Map<String, Value>) -> Map<String, Value> {
    if let Some(Value::String(t)) = schema.get_mut("type") {
        let t = std::mem::take(t);
        schema.insert("type".into(), json!([t, "null"]));
    } else if let Some(Value::Array(branches)) = schema.get_mut("anyOf") {
        branches.push(json!({"type": "null"}));
    }
    if let Some(Value::Array(values)) = schema.get_mut("enum") {
        values.push(Value::Null);
    }
    schema
}

/// Does `value` pass `schema`? Draft 7: the same keywords as the published
/// 2020-12 schema, a cheaper meta-schema (see `validate`).
fn accepts(schema: Map<String, Value>, value: &Value) -> bool {
    super::pattern::compile_draft7(&Value::Object(schema)).is_ok_and(|v| v.is_valid(value))
}

/// Does `value` fit the field's rule? Used to check a rule's `default`.
pub(super) fn field_accepts(strategy: &Strategy, value: &Value) -> bool {
    accepts(field_value_schema(strategy), value)
}

/// Does `value` fit `rule`? Used to check a rule's `enum`.
pub(super) fn value_accepts(rule: &ValueRule, value: &Value) -> bool {
    accepts(value_schema(rule), value)
}

/// The constraints of a field (and `required`) in words, for the schema's
/// hover text; `None` when it has none.
pub(crate) fn constraint_help(field: &Field) -> Option<String> {
    let mut parts = Vec::new();
    if field.required {
        parts.push(
            match &field.strategy {
                Strategy::Override { .. } => {
                    "Required: some layer must give it a non-empty value; an override need not repeat it."
                }
                Strategy::Append { .. } => "Required: the layers together must give it at least one item.",
                Strategy::KeyedReplace { .. } => {
                    "Required: the layers together must give it at least one entry."
                }
                Strategy::DeepMerge { .. } => "Required: the layers together must give it at least one key.",
            }
            .to_owned(),
        );
    }
    let rule = match &field.strategy {
        Strategy::Override { value } => Some((value, "")),
        Strategy::Append { items, .. } => Some((items, "Items: ")),
        _ => None,
    };
    if let Some((rule, prefix)) = rule {
        if let Some(words) = rule_words(rule) {
            parts.push(format!("{prefix}{words}"));
        }
        if let Some(words) = rule.items.as_deref().and_then(rule_words) {
            parts.push(format!("List items: {words}"));
        }
    }
    if let Some(layers) = field.owners() {
        parts.push(format!(
            "May be set only in {}.",
            crate::layer::layers_phrase(layers)
        ));
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// A value rule's constraints as sentences.
fn rule_words(rule: &ValueRule) -> Option<String> {
    let c = &rule.constraints;
    let mut out = Vec::new();
    match (&c.pattern_help, &c.pattern) {
        (Some(help), _) => out.push(format!("Must be {help}.")),
        (None, Some(p)) => out.push(format!("Must match the regular expression {p}.")),
        _ => {}
    }
    match (c.min_length, c.max_length) {
        (Some(min), Some(max)) => out.push(format!("{min} to {max} characters.")),
        (Some(min), None) => out.push(format!("At least {min} character(s).")),
        (None, Some(max)) => out.push(format!("At most {max} characters.")),
        (None, None) => {}
    }
    if let Some(values) = &c.allowed {
        let list: Vec<String> = values.iter().map(Value::to_string).collect();
        out.push(format!("One of {}.", list.join(", ")));
    }
    match (&c.minimum, &c.maximum) {
        (Some(min), Some(max)) => out.push(format!("From {min} to {max}.")),
        (Some(min), None) => out.push(format!("At least {min}.")),
        (None, Some(max)) => out.push(format!("At most {max}.")),
        (None, None) => {}
    }
    (!out.is_empty()).then(|| out.join(" "))
}

/// The draft 2020-12 schema of a skill fragment under `spec`: closed at the
/// top level, each field typed by its rule, `null` allowed everywhere as a
/// reset.
pub fn fragment_schema(spec: &MergeSpec) -> Value {
    let mut schema = fragment_schema_with(spec, true);
    schema["title"] = json!("bernstein skill fragment");
    schema["description"] = json!(
        "One layer's part of a skill (base, team or user). Every field is optional; \
         each merges with the other layers by the strategy named in its description."
    );
    schema
}

/// [`fragment_schema`] without its hover text and examples: the same
/// checks, for validating (building the text is most of building the
/// schema, and a `show` builds it once per process).
pub(crate) fn validation_schema(spec: &MergeSpec) -> Value {
    fragment_schema_with(spec, false)
}

fn fragment_schema_with(spec: &MergeSpec, annotate: bool) -> Value {
    let mut properties = Map::new();
    let directives = spec.directives();
    for field in &spec.fields {
        // `null` resets a field; allow it beside the declared type(s) and values.
        let schema = nullable(rule_schema(&field.strategy, directives, annotate));
        let schema = described(field, schema, directives, annotate);
        properties.insert(field.name.clone(), Value::Object(schema));
    }
    let mut schema = json!({
        "$schema": DRAFT,
        "$id": format!("urn:bernstein-skills:schema:skill-fragment:{}", spec.version),
        "type": "object",
        "additionalProperties": false,
    });
    // Moved in, not through `json!`, which would copy it value by value.
    schema["properties"] = Value::Object(properties);
    if directives {
        schema["$defs"] = deep_defs();
    }
    schema
}

/// Turns a spec the typed parse refused into one located error, using the
/// spec's own schema to find the offending entry.
pub(super) fn explain_spec_error(
    text: &str,
    path: &Path,
    value: &Value,
    serde_error: serde_json::Error,
) -> Error {
    let schema = mergespec_schema();
    let located = jsonschema::draft202012::new(&schema)
        .ok()
        .and_then(|validator| {
            // The deepest error names the most specific entry.
            let best = validator
                .iter_errors(value)
                .max_by_key(|e| e.instance_path().as_str().matches('/').count())?;
            let pointer = best.instance_path().as_str().to_owned();
            Some(spec_message(&pointer, &best, value))
        });
    let (message, at) = located.unwrap_or_else(|| {
        (
            excerpt(&serde_error.to_string(), MESSAGE_CHARS),
            Target::value(String::new()),
        )
    });
    let pos = fragment::locate(text, Syntax::Yaml, &at.pointer, at.key, 0);
    Error::Spec(Box::new(
        Diagnostic::error(Some(path), DiagnosticKind::Spec { message }).at(pos),
    ))
}

/// What an error message points at: a node's value, or its key.
struct Target {
    pointer: String,
    key: bool,
}

impl Target {
    fn value(pointer: String) -> Target {
        Target {
            pointer,
            key: false,
        }
    }

    /// The key of the first unexpected property under `error`'s instance.
    fn unexpected(error: &jsonschema::ValidationError<'_>, unexpected: &[String]) -> Target {
        let base = error.instance_path().as_str();
        match unexpected.first() {
            Some(u) => Target {
                pointer: format!("{base}/{}", fragment::escape_pointer(u)),
                key: true,
            },
            None => Target::value(base.to_owned()),
        }
    }
}

fn spec_message(
    pointer: &str,
    error: &jsonschema::ValidationError<'_>,
    value: &Value,
) -> (String, Target) {
    use jsonschema::error::ValidationErrorKind as K;
    let entry = pointer
        .strip_prefix("/fields/")
        .map(|rest| rest.split('/').next().unwrap_or(rest))
        .map(fragment::unescape_pointer);
    let instance = value.pointer(pointer);
    let mut at = Target::value(pointer.to_owned());
    let what = match error.kind() {
        K::AdditionalProperties { unexpected } => {
            at = Target::unexpected(error, unexpected);
            format!(
                "unknown attribute{} {}",
                if unexpected.len() == 1 { "" } else { "s" },
                list(unexpected.iter().map(String::as_str), true)
            )
        }
        K::OneOfNotValid { .. } | K::AnyOf { .. } => {
            let strategy = instance.and_then(|v| v.get("strategy"));
            match strategy {
                Some(Value::String(s))
                    if !["OVERRIDE", "APPEND", "KEYED_REPLACE", "DEEP_MERGE"]
                        .contains(&s.as_str()) =>
                {
                    at = Target::value(format!("{pointer}/strategy"));
                    format!(
                        "unknown strategy '{}' (expected one of OVERRIDE, APPEND, KEYED_REPLACE, DEEP_MERGE)",
                        excerpt(s, EXCERPT_CHARS)
                    )
                }
                None => {
                    "missing 'strategy' (one of OVERRIDE, APPEND, KEYED_REPLACE, DEEP_MERGE)".into()
                }
                Some(s) => match misplaced_attributes(s.as_str().unwrap_or(""), instance) {
                    Some((message, attribute)) => {
                        at = Target {
                            pointer: format!("{pointer}/{}", fragment::escape_pointer(attribute)),
                            key: true,
                        };
                        message
                    }
                    None => {
                        let (message, target) = deepest_message(error);
                        at = target;
                        format!("attributes do not fit the strategy: {message}")
                    }
                },
            }
        }
        _ => schema_message(error),
    };
    let message = match entry {
        Some(e) => format!("field '{}': {what}", excerpt(&e, EXCERPT_CHARS)),
        None => what,
    };
    (message, at)
}

/// Does `error` only say that the value at `at` is of another kind than
/// its branch wants (a type mismatch, a constant of another type, or a
/// choice of branches that all say so)?
fn wrong_kind(error: &jsonschema::ValidationError<'_>, at: &str) -> bool {
    use jsonschema::error::ValidationErrorKind as K;
    if error.instance_path().as_str() != at {
        return false;
    }
    let kind_of = |v: &Value| std::mem::discriminant(v);
    match error.kind() {
        K::Type { .. } => true,
        K::Constant { expected_value } => kind_of(expected_value) != kind_of(error.instance()),
        K::Enum { options } => options
            .as_array()
            .is_some_and(|o| o.iter().all(|v| kind_of(v) != kind_of(error.instance()))),
        K::OneOfNotValid { context } | K::AnyOf { context } => {
            context.iter().all(|b| b.iter().all(|e| wrong_kind(e, at)))
        }
        _ => false,
    }
}

/// An attribute that only one strategy takes, and what to write instead of
/// it under the other strategies. A rule whose `strategy` is edited keeps
/// the old strategy's attributes; the error then says whose they are and
/// what to do, so changing a strategy stays one edit. A test checks this
/// table against the spec's own schema: add a row with each attribute that
/// only one strategy takes.
struct StrategyAttribute {
    /// The attribute.
    attribute: &'static str,
    /// The one strategy that takes it.
    strategy: &'static str,
    /// What to write instead, by the strategy changed to (absent: remove it).
    instead: &'static [(&'static str, &'static str)],
}

const STRATEGY_ATTRIBUTES: &[StrategyAttribute] = &[
    StrategyAttribute {
        attribute: "type",
        strategy: "OVERRIDE",
        instead: &[("APPEND", "items: <item type>")],
    },
    StrategyAttribute {
        attribute: "keys",
        strategy: "KEYED_REPLACE",
        instead: &[("OVERRIDE", "type: array")],
    },
    StrategyAttribute {
        attribute: "files",
        strategy: "KEYED_REPLACE",
        instead: &[],
    },
    StrategyAttribute {
        attribute: "sections",
        strategy: "OVERRIDE",
        instead: &[],
    },
    StrategyAttribute {
        attribute: "entries",
        strategy: "KEYED_REPLACE",
        instead: &[],
    },
    StrategyAttribute {
        attribute: "unique",
        strategy: "APPEND",
        instead: &[],
    },
    StrategyAttribute {
        attribute: "fields",
        strategy: "DEEP_MERGE",
        instead: &[],
    },
    // The constraints of an OVERRIDE value; an APPEND rule puts them on its
    // items. (`items` itself is taken by OVERRIDE and APPEND alike.)
    StrategyAttribute {
        attribute: "pattern",
        strategy: "OVERRIDE",
        instead: &[("APPEND", "items: {pattern: ...}")],
    },
    StrategyAttribute {
        attribute: "pattern_help",
        strategy: "OVERRIDE",
        instead: &[("APPEND", "items: {pattern_help: ...}")],
    },
    StrategyAttribute {
        attribute: "min_length",
        strategy: "OVERRIDE",
        instead: &[("APPEND", "items: {min_length: ...}")],
    },
    StrategyAttribute {
        attribute: "max_length",
        strategy: "OVERRIDE",
        instead: &[("APPEND", "items: {max_length: ...}")],
    },
    StrategyAttribute {
        attribute: "enum",
        strategy: "OVERRIDE",
        instead: &[("APPEND", "items: {enum: [...]}")],
    },
    StrategyAttribute {
        attribute: "minimum",
        strategy: "OVERRIDE",
        instead: &[("APPEND", "items: {minimum: ...}")],
    },
    StrategyAttribute {
        attribute: "maximum",
        strategy: "OVERRIDE",
        instead: &[("APPEND", "items: {maximum: ...}")],
    },
];

/// For a rule with strategy `strategy` (a known one), the attributes of
/// `rule` that belong to another strategy, each explained (`'items' is an
/// APPEND attribute; for OVERRIDE write 'type: array' or remove it`), with
/// the first such attribute.
fn misplaced_attributes(strategy: &str, rule: Option<&Value>) -> Option<(String, &'static str)> {
    let rule = rule?.as_object()?;
    let found: Vec<&StrategyAttribute> = STRATEGY_ATTRIBUTES
        .iter()
        .filter(|a| a.strategy != strategy && rule.contains_key(a.attribute))
        .collect();
    let first = found.first()?.attribute;
    let message = found
        .iter()
        .map(|a| {
            let article = if a.strategy.starts_with(['A', 'E', 'I', 'O', 'U']) {
                "an"
            } else {
                "a"
            };
            let fix = match a.instead.iter().find(|(s, _)| *s == strategy) {
                Some((_, write)) => format!("write '{write}' or remove it"),
                None => "remove it".to_owned(),
            };
            format!(
                "'{}' is {article} {} attribute; for {strategy} {fix}",
                a.attribute, a.strategy
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    Some((message, first))
}

/// For a oneOf failure, the message of the branch whose `strategy` matched,
/// looking through nested anyOf (e.g. an optional enum) for the real cause.
fn deepest_message(error: &jsonschema::ValidationError<'_>) -> (String, Target) {
    let here = || Target::value(error.instance_path().as_str().to_owned());
    use jsonschema::error::ValidationErrorKind as K;
    match error.kind() {
        K::OneOfNotValid { context } | K::AnyOf { context } => {
            // An enum written as a oneOf of constants: list the choices.
            let consts: Option<Vec<String>> = context
                .iter()
                .map(|b| match b.as_slice() {
                    [e] => match e.kind() {
                        K::Constant { expected_value } => Some(expected_value.to_string()),
                        _ => None,
                    },
                    _ => None,
                })
                .collect();
            if let Some(c) = consts.filter(|c| !c.is_empty()) {
                return (
                    format!(
                        "{} is not one of {}",
                        json_excerpt(error.instance(), EXCERPT_CHARS),
                        list(c.iter().map(String::as_str), false)
                    ),
                    here(),
                );
            }
            // Else the branch that did not fail on its `strategy` tag and is
            // more than a mismatch of the value's kind (such as the `null` of
            // an option, or the list form of a type given a mapping).
            let at = error.instance_path().as_str();
            let branch = context.iter().find(|b| {
                let on_strategy = b
                    .iter()
                    .any(|e| e.instance_path().as_str().ends_with("/strategy"));
                !on_strategy && !b.iter().all(|e| wrong_kind(e, at))
            });
            match branch.and_then(|b| b.first()) {
                Some(e) => deepest_message(e),
                None => (schema_message(error), here()),
            }
        }
        K::AdditionalProperties { unexpected } => (
            format!(
                "unknown attribute {}",
                list(unexpected.iter().map(String::as_str), true)
            ),
            Target::unexpected(error, unexpected),
        ),
        K::Enum { options } => {
            let options: Vec<String> = options
                .as_array()
                .map(|o| o.iter().map(|v| v.to_string()).collect())
                .unwrap_or_default();
            (
                format!(
                    "{} is not one of {}",
                    json_excerpt(error.instance(), EXCERPT_CHARS),
                    list(options.iter().map(String::as_str), false)
                ),
                here(),
            )
        }
        _ => (schema_message(error), here()),
    }
}

/// The validator's message for `e`, quoting only an excerpt of the value
/// (which may be a whole list or a 4 MiB string): the value is written as
/// far as the excerpt goes, not whole.
pub(crate) fn schema_message(e: &jsonschema::ValidationError) -> String {
    let value = json_excerpt(e.instance(), EXCERPT_CHARS);
    crate::text::sanitized_excerpt(
        &e.masked_with(value).to_string(),
        crate::text::MESSAGE_CHARS,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The attributes each strategy's branch of the spec's schema allows.
    fn attributes_by_strategy() -> Vec<(String, Vec<String>)> {
        let schema = mergespec_schema();
        let rule = &schema["$defs"]["RawRule"];
        let branches = rule["oneOf"].as_array().expect("RawRule is a oneOf");
        branches
            .iter()
            .map(|b| {
                let props = b["properties"]
                    .as_object()
                    .expect("a branch has properties");
                let strategy = props["strategy"]["const"]
                    .as_str()
                    .expect("a const strategy");
                let attrs = props.keys().filter(|k| *k != "strategy").cloned().collect();
                (strategy.to_owned(), attrs)
            })
            .collect()
    }

    #[test]
    fn the_attribute_table_matches_the_spec_schema() {
        let branches = attributes_by_strategy();
        assert_eq!(branches.len(), 4);
        for (_, attrs) in &branches {
            for attr in attrs {
                let owners: Vec<&str> = branches
                    .iter()
                    .filter(|(_, a)| a.contains(attr))
                    .map(|(s, _)| s.as_str())
                    .collect();
                let row = STRATEGY_ATTRIBUTES.iter().find(|a| a.attribute == attr);
                match owners.as_slice() {
                    [only] => {
                        let row = row.unwrap_or_else(|| {
                            panic!(
                                "'{attr}' is only a {only} attribute: add it to STRATEGY_ATTRIBUTES"
                            )
                        });
                        assert_eq!(row.strategy, *only, "{attr}");
                    }
                    _ => assert!(
                        row.is_none(),
                        "'{attr}' is taken by {owners:?}, not one strategy"
                    ),
                }
            }
        }
        for row in STRATEGY_ATTRIBUTES {
            for (to, _) in row.instead {
                assert!(branches.iter().any(|(s, _)| s == to) && *to != row.strategy);
            }
        }
    }

    #[test]
    fn a_flipped_strategy_names_the_owner_of_a_leftover_attribute() {
        let check = |rule: Value, strategy: &str| misplaced_attributes(strategy, Some(&rule));
        // APPEND to OVERRIDE: `items` fits both, so the flip is one edit.
        assert_eq!(
            check(
                json!({"strategy": "OVERRIDE", "items": "string"}),
                "OVERRIDE"
            ),
            None
        );
        assert_eq!(
            check(json!({"keys": ["id"]}), "OVERRIDE").unwrap(),
            (
                "'keys' is a KEYED_REPLACE attribute; for OVERRIDE write 'type: array' or remove it"
                    .into(),
                "keys"
            )
        );
        assert_eq!(
            check(json!({"max_length": 3}), "APPEND").unwrap().0,
            "'max_length' is an OVERRIDE attribute; for APPEND write 'items: {max_length: ...}' or remove it"
        );
        assert_eq!(
            check(json!({"keys": ["id"]}), "DEEP_MERGE").unwrap().0,
            "'keys' is a KEYED_REPLACE attribute; for DEEP_MERGE remove it"
        );
        assert_eq!(
            check(json!({"type": "string"}), "APPEND").unwrap().0,
            "'type' is an OVERRIDE attribute; for APPEND write 'items: <item type>' or remove it"
        );
        assert_eq!(check(json!({"items": "string"}), "APPEND"), None);
        assert_eq!(check(json!({"colour": "red"}), "APPEND"), None);
    }
}
