//! JSON Schemas: the one a spec file must satisfy (derived from the Rust
//! types that read it) and the one a skill fragment must satisfy (generated
//! from a loaded spec).

use schemars::transform::{RestrictFormats, Transform};
use serde_json::{Map, Value, json};

use super::directive::{self, Beside, ITEM, Verb};
use super::{Field, MergeSpec, RawSpec, Strategy, ValueRule, ValueType};

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
        Strategy::KeyedReplace {
            keys,
            unkeyed: super::Unkeyed::Refuse,
            ..
        } => format!(
            "KEYED_REPLACE: an entry with the same {} as a lower layer's entry replaces it in place; \
             other entries are added at the end; null clears the list first.",
            keys.join(" / ")
        ),
        Strategy::KeyedReplace {
            keys,
            unkeyed: super::Unkeyed::Append,
            ..
        } => format!(
            "KEYED_REPLACE: an entry with the same {} as a lower layer's entry replaces it in place; \
             other entries are added at the end, and entries without one after all of them; \
             null clears the list first.",
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
        Strategy::KeyedReplace {
            keys,
            entries,
            unkeyed,
            plain,
        } => {
            let with_key: Vec<Value> = keys
                .iter()
                .map(|k| {
                    json!({
                        "required": [k],
                        "properties": { k: { "type": "string", "minLength": 1 } }
                    })
                })
                .collect();
            // An entry needs a key unless the rule keeps those without
            // one; a directive names its entry by key either way.
            let mut object = match unkeyed {
                super::Unkeyed::Refuse => obj([
                    ("type", json!("object")),
                    ("anyOf", Value::Array(with_key.clone())),
                ]),
                super::Unkeyed::Append => obj([("type", json!("object"))]),
            };
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
                    ("else", key_or_entry(object, *plain)),
                ])
            } else {
                key_or_entry(object, *plain)
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
fn key_or_entry(object: Value, plain: super::Plain) -> Value {
    match plain {
        super::Plain::Keep => obj([(
            "anyOf",
            Value::Array(vec![json!({ "type": "string", "minLength": 1 }), object]),
        )]),
        super::Plain::Refuse => object,
    }
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
             section instead: a heading it has replaces that section, a new one is appended \
             (mark it <!-- $patch: add --> under its heading, or it is a warning), \
             <!-- $patch: delete --> under a heading removes it, and <!-- $patch: before \
             \"Heading\" -->, after \"Heading\", start or end place the text that follows.",
        ),
        Some(super::Sections::Always) => description.push_str(
            " It changes the lower value section by section: a heading it has replaces that \
             section, a new one is appended (mark it <!-- $patch: add --> under its heading, \
             or it is a warning), <!-- $patch: delete --> under a heading removes it, and <!-- $patch: before \"Heading\" -->, after \"Heading\", start or end \
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
