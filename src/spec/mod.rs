//! The merge specification: which strategy merges each top-level field.
//!
//! The spec is data, read at run time from `spec/mergespec.yaml` (or a file
//! the user names). [`MergeSpec::from_str`] turns it into a checked plan: the
//! only thing compiled into this crate about fields is the set of four
//! strategies ([`Strategy`]) and the attributes each one takes (`RawRule`).
//! A bad spec is one [`Error::Spec`] naming the spec file and the entry,
//! before any skill is read.

pub mod directive;
mod pattern;
mod schema;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Number, Value};

use crate::error::{Diagnostic, DiagnosticKind, Error, Result};
use crate::fragment::{self, Syntax};
use crate::layer::Layer;
use crate::text;

pub(crate) use pattern::compile_draft7;
pub(crate) use schema::file_schema;
pub use schema::{fragment_schema, mergespec_schema, strategy_help};
pub(crate) use schema::{schema_message, validation_schema, value_schema};

/// The largest spec file read: 1 MiB. The shipped spec is a few KiB; the
/// cap keeps a spec pointed at `/dev/zero` or a generated monster from
/// costing more than a bounded read.
pub const MAX_SPEC_BYTES: u64 = 1024 * 1024;

/// The spec versions this build reads. Version 2 adds the rules of the
/// second engine: directives (`$patch`) in fragments, rules for the keys of
/// a DEEP_MERGE field (`fields`), `unique`, `entries` and `layers`. A
/// version 1 spec reads and merges exactly as before: `$patch` is an
/// ordinary key under it.
pub(crate) const SUPPORTED_VERSIONS: [u64; 2] = [1, 2];

/// The first version with directives and the rule attributes that go with them.
pub(crate) const RULES_V2: u64 = 2;

/// The deepest nesting of `fields` a spec may declare. Real specs nest two
/// or three levels; the cap bounds the recursion over a hostile spec.
pub(crate) const MAX_RULE_DEPTH: usize = 16;

/// The most rules a spec may declare, at every depth together: each one is
/// a check on every fragment and a branch of the generated schema.
pub(crate) const MAX_RULES: usize = 1000;

/// The most values one `enum` may list: every value a fragment sets under
/// the rule is compared with each of them.
pub(crate) const MAX_ENUM_VALUES: usize = 1000;

/// The file as written: the shape `schemas/mergespec.schema.json` describes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "bernstein merge specification")]
pub(crate) struct RawSpec {
    /// The format version of this file: 1, or 2 for directives in fragments and the rule attributes `fields`, `unique`, `entries` and `layers`.
    pub version: u64,
    /// The OVERRIDE string field that receives the Markdown after a SKILL.md frontmatter.
    #[serde(default)]
    pub body_field: Option<String>,
    /// The OVERRIDE field that defaults to the skill's name when no layer sets it.
    #[serde(default)]
    pub name_field: Option<String>,
    /// The OVERRIDE boolean field that switches a skill off (`false`) and on across layers: a skill switched off is exported to no target. Needs version 2.
    #[serde(default)]
    pub enabled_field: Option<String>,
    /// The DEEP_MERGE field that switches a skill off for one target (`{codex: false}`). Needs version 2.
    #[serde(default)]
    pub targets_field: Option<String>,
    /// Every top-level field a skill fragment may set, with the rule that merges it.
    pub fields: BTreeMap<String, RawRule>,
    /// Which layers may provide the files under a directory of a skill (`scripts`, `assets/brand`); by default every layer may. Needs version 2.
    #[serde(default)]
    pub files: BTreeMap<String, RawFilesRule>,
}

/// Who may provide the files under one directory of a skill.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFilesRule {
    /// The layers allowed to provide files there. A file there in any other layer is an error.
    pub layers: Vec<LayerName>,
}

/// The layers that may provide the files under one directory of a skill:
/// from the spec's `files:` table, or from a field that names files there
/// (`files: scripts`) and may be set only in some layers, since a layer
/// that may not change the entry must not replace the file it names either.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileOwner {
    /// The directory, relative to the skill's, without a trailing `/`.
    pub dir: String,
    /// The layers that may provide files below it, lowest first.
    pub layers: Vec<Layer>,
    /// Where the spec says so: `files` or the field's name.
    pub by: String,
}

/// A field's rule as written: a strategy and its attributes.
///
/// Every strategy takes `required`, `default`, `description` and
/// `examples`. OVERRIDE also takes a type and constraints on its value;
/// APPEND takes a type and constraints for each item.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(tag = "strategy", deny_unknown_fields)]
pub(crate) enum RawRule {
    /// Scalars: the highest layer that sets the field replaces it wholesale.
    #[serde(rename = "OVERRIDE")]
    Override {
        /// The value's type, or a list of the types it may have (default: any JSON value).
        #[serde(rename = "type", default)]
        value_type: Option<RawTypes>,
        /// When the value is a list: the type of its items, or a mapping with a type and constraints.
        #[serde(default)]
        items: Option<RawItems>,
        /// A string value must match this regular expression (ECMA-262, unanchored: use ^ and $).
        #[serde(default)]
        pattern: Option<String>,
        /// What `pattern` asks for, in words, for messages and editors: "lowercase letters, digits and hyphens".
        #[serde(default)]
        pattern_help: Option<String>,
        /// A string value has at least this many characters (Unicode code points).
        #[serde(default)]
        min_length: Option<u64>,
        /// A string value has at most this many characters (Unicode code points).
        #[serde(default)]
        max_length: Option<u64>,
        /// The only values allowed.
        #[serde(rename = "enum", default)]
        allowed: Option<Vec<Value>>,
        /// A number value is at least this.
        #[serde(default)]
        minimum: Option<Number>,
        /// A number value is at most this.
        #[serde(default)]
        maximum: Option<Number>,
        /// The effective skill must have a non-empty value (some layer sets it).
        #[serde(default)]
        required: Option<bool>,
        /// The value when no layer sets the field.
        #[serde(default)]
        default: Option<Value>,
        /// What the field is for; shown as hover text by editors.
        #[serde(default)]
        description: Option<String>,
        /// Example values, copied into the generated schema.
        #[serde(default)]
        examples: Option<Vec<Value>>,
        /// The layers allowed to set this value (default: all three). A value in any other layer is an error.
        #[serde(default)]
        layers: Option<Vec<LayerName>>,
        /// For a Markdown string (the body): `on-request` lets a layer whose value starts with `<!-- $patch: sections -->` change the lower value section by section instead of replacing it; `always` merges every layer's value that way. Needs version 2.
        #[serde(default)]
        sections: Option<Sections>,
    },
    /// Unkeyed lists: items concatenated base, team, user.
    #[serde(rename = "APPEND")]
    Append {
        /// The items' type (default: any JSON value), or a mapping with a type and constraints.
        #[serde(default)]
        items: Option<RawItems>,
        /// Drop an item equal to an earlier one (the first occurrence and its origin are kept).
        #[serde(default)]
        unique: Option<bool>,
        /// The effective skill must have at least one item.
        #[serde(default)]
        required: Option<bool>,
        /// The value when no layer sets the field.
        #[serde(default)]
        default: Option<Value>,
        /// What the field is for; shown as hover text by editors.
        #[serde(default)]
        description: Option<String>,
        /// Example values, copied into the generated schema.
        #[serde(default)]
        examples: Option<Vec<Value>>,
        /// The layers allowed to set this value (default: all three). A value in any other layer is an error.
        #[serde(default)]
        layers: Option<Vec<LayerName>>,
    },
    /// Lists keyed by a field: same key replaced in place, new keys appended.
    #[serde(rename = "KEYED_REPLACE")]
    KeyedReplace {
        /// The fields that identify an entry, tried in order (default: name, id, code).
        #[serde(default)]
        keys: Option<Vec<String>>,
        /// The skill directory this field's plain string entries name files
        /// in: with `files: references`, an entry `style.md` names
        /// `references/style.md`, and `validate` warns when no layer
        /// provides that file.
        #[serde(default)]
        files: Option<String>,
        /// What a higher layer's entry does to the lower entry with the same identity: `replace` it whole (the default) or `merge` into it key by key.
        #[serde(default)]
        entries: Option<EntriesMode>,
        /// The effective skill must have at least one entry.
        #[serde(default)]
        required: Option<bool>,
        /// The value when no layer sets the field.
        #[serde(default)]
        default: Option<Value>,
        /// What the field is for; shown as hover text by editors.
        #[serde(default)]
        description: Option<String>,
        /// Example values, copied into the generated schema.
        #[serde(default)]
        examples: Option<Vec<Value>>,
        /// The layers allowed to set this value (default: all three). A value in any other layer is an error.
        #[serde(default)]
        layers: Option<Vec<LayerName>>,
    },
    /// Mappings: merged recursively, same path overrides, distinct paths coexist.
    #[serde(rename = "DEEP_MERGE")]
    DeepMerge {
        /// Rules for some of its keys, with the same attributes as top-level fields; other keys merge deeply.
        #[serde(default)]
        fields: Option<BTreeMap<String, RawRule>>,
        /// The effective skill must have at least one key.
        #[serde(default)]
        required: Option<bool>,
        /// The value when no layer sets the field.
        #[serde(default)]
        default: Option<Value>,
        /// What the field is for; shown as hover text by editors.
        #[serde(default)]
        description: Option<String>,
        /// Example values, copied into the generated schema.
        #[serde(default)]
        examples: Option<Vec<Value>>,
        /// The layers allowed to set this value (default: all three). A value in any other layer is an error.
        #[serde(default)]
        layers: Option<Vec<LayerName>>,
    },
}

/// A layer's name as a spec writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum LayerName {
    /// The base layer.
    Base,
    /// The team layer.
    Team,
    /// The user layer.
    User,
}

impl LayerName {
    fn layer(self) -> Layer {
        match self {
            LayerName::Base => Layer::Base,
            LayerName::Team => Layer::Team,
            LayerName::User => Layer::User,
        }
    }
}

/// How a Markdown string field merges by section ([`crate::merge::sections`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Sections {
    /// A layer's value replaces the lower one whole, unless it starts with `<!-- $patch: sections -->`.
    OnRequest,
    /// Every layer's value changes the lower one section by section.
    Always,
}

/// What a KEYED_REPLACE entry does to a lower entry with the same identity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EntriesMode {
    /// The higher entry replaces the lower one whole.
    #[default]
    Replace,
    /// The higher entry is merged into the lower one key by key (DEEP_MERGE).
    Merge,
}

/// A type as written: one name, or a list of names (`[string, array]`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum RawTypes {
    /// One type.
    One(ValueType),
    /// Any of these types.
    Many(Vec<ValueType>),
}

/// The items of a list as written: a type (`items: string`) or a mapping
/// with a type and constraints (`items: {type: string, max_length: 64}`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum RawItems {
    /// Just the items' type.
    Type(RawTypes),
    /// A type with constraints.
    Rule(RawItemRule),
}

/// A list item's type and constraints, as written.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawItemRule {
    /// The item's type, or a list of the types it may have (default: any JSON value).
    #[serde(rename = "type", default)]
    pub(crate) value_type: Option<RawTypes>,
    /// A string item must match this regular expression (ECMA-262, unanchored: use ^ and $).
    #[serde(default)]
    pub pattern: Option<String>,
    /// What `pattern` asks for, in words.
    #[serde(default)]
    pub pattern_help: Option<String>,
    /// A string item has at least this many characters (Unicode code points).
    #[serde(default)]
    pub min_length: Option<u64>,
    /// A string item has at most this many characters (Unicode code points).
    #[serde(default)]
    pub max_length: Option<u64>,
    /// The only items allowed.
    #[serde(rename = "enum", default)]
    pub allowed: Option<Vec<Value>>,
    /// A number item is at least this.
    #[serde(default)]
    pub minimum: Option<Number>,
    /// A number item is at most this.
    #[serde(default)]
    pub maximum: Option<Number>,
}

/// The type of an OVERRIDE value or an APPEND item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ValueType {
    /// A string.
    String,
    /// A whole number.
    Integer,
    /// Any number.
    Number,
    /// `true` or `false`.
    Boolean,
    /// A mapping.
    Object,
    /// A list.
    Array,
    /// Any JSON value.
    Any,
}

impl ValueType {
    /// The name used in the spec and in JSON Schema (`None` for any).
    pub(crate) fn json_type(self) -> Option<&'static str> {
        match self {
            ValueType::String => Some("string"),
            ValueType::Integer => Some("integer"),
            ValueType::Number => Some("number"),
            ValueType::Boolean => Some("boolean"),
            ValueType::Object => Some("object"),
            ValueType::Array => Some("array"),
            ValueType::Any => None,
        }
    }

    /// "a string", "an integer", ...
    pub(crate) fn phrase(self) -> &'static str {
        match self {
            ValueType::String => "a string",
            ValueType::Integer => "an integer",
            ValueType::Number => "a number",
            ValueType::Boolean => "a boolean",
            ValueType::Object => "a mapping",
            ValueType::Array => "a list",
            ValueType::Any => "any value",
        }
    }

    /// The plural, for list items: "strings", "integers", ...
    pub(crate) fn plural(self) -> &'static str {
        match self {
            ValueType::String => "strings",
            ValueType::Integer => "integers",
            ValueType::Number => "numbers",
            ValueType::Boolean => "booleans",
            ValueType::Object => "mappings",
            ValueType::Array => "lists",
            ValueType::Any => "values",
        }
    }
}

/// Constraints on a value beyond its type. Each applies only to values of
/// the kind it is about (`pattern` and the lengths to strings, `minimum`
/// and `maximum` to numbers), as in JSON Schema.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Constraints {
    /// A string must match this regular expression (ECMA-262, unanchored).
    pub pattern: Option<String>,
    /// What `pattern` asks for, in words.
    pub pattern_help: Option<String>,
    /// A string has at least this many characters (Unicode code points).
    pub min_length: Option<u64>,
    /// A string has at most this many characters (Unicode code points).
    pub max_length: Option<u64>,
    /// The only values allowed (the spec's `enum`).
    pub allowed: Option<Vec<Value>>,
    /// A number is at least this.
    pub minimum: Option<Number>,
    /// A number is at most this.
    pub maximum: Option<Number>,
}

impl Constraints {
    /// Are there none?
    pub fn is_empty(&self) -> bool {
        *self == Constraints::default()
    }
}

/// What a value (an OVERRIDE field's value, an APPEND item) must be: the
/// types it may have and its constraints.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ValueRule {
    /// The types it may have, in the spec's order; empty means any JSON
    /// value. Never holds [`ValueType::Any`].
    pub types: Vec<ValueType>,
    /// When the value is a list: what each item must be (OVERRIDE only).
    pub items: Option<Box<ValueRule>>,
    /// Its constraints.
    pub constraints: Constraints,
}

impl ValueRule {
    /// Any value, no constraints.
    pub fn any() -> ValueRule {
        ValueRule::default()
    }

    /// A value of one type, no constraints.
    pub fn of(value_type: ValueType) -> ValueRule {
        ValueRule {
            types: value_type
                .json_type()
                .map(|_| value_type)
                .into_iter()
                .collect(),
            ..ValueRule::default()
        }
    }

    /// May the value have type `t`? (A rule of any type takes every type;
    /// an `integer` is also a `number`'s business.)
    pub fn allows(&self, t: ValueType) -> bool {
        self.types.is_empty() || self.types.contains(&t)
    }

    /// Is this exactly one type, `t`, or any?
    pub(crate) fn is_only(&self, t: ValueType) -> bool {
        self.types.is_empty() || self.types == [t]
    }

    /// Does it check anything beyond the type, here or in its items?
    pub(crate) fn has_constraints(&self) -> bool {
        !self.constraints.is_empty() || self.items.as_ref().is_some_and(|i| i.has_constraints())
    }

    /// "a string", "a string or a list", "any value".
    pub(crate) fn phrase(&self) -> String {
        self.join(ValueType::phrase, "any value")
    }

    /// The plural, for list items: "strings", "strings or integers", "values".
    pub(crate) fn plural(&self) -> String {
        self.join(ValueType::plural, "values")
    }

    /// The type column of `bernstein skills spec`: `string`,
    /// `string or list of string`, `any`.
    pub fn type_description(&self) -> String {
        if self.types.is_empty() {
            return "any".into();
        }
        self.types
            .iter()
            .map(|t| match (t, &self.items) {
                (ValueType::Array, Some(items)) => format!("list of {}", items.type_description()),
                _ => t.json_type().unwrap_or("any").to_owned(),
            })
            .collect::<Vec<_>>()
            .join(" or ")
    }

    fn join(&self, word: fn(ValueType) -> &'static str, any: &str) -> String {
        if self.types.is_empty() {
            return any.into();
        }
        self.types
            .iter()
            .map(|t| word(*t))
            .collect::<Vec<_>>()
            .join(" or ")
    }
}

/// The four merge strategies, with the attributes each needs.
#[derive(Debug, Clone, PartialEq)]
pub enum Strategy {
    /// The highest layer that sets the field wins.
    Override {
        /// What the value must be.
        value: ValueRule,
    },
    /// Lists concatenated in layer order.
    Append {
        /// What each item must be.
        items: ValueRule,
        /// Are later duplicates dropped?
        unique: bool,
    },
    /// Lists of entries keyed by the first present key field.
    KeyedReplace {
        /// Key fields, tried in order.
        keys: Vec<String>,
        /// Whether a same-identity entry replaces or merges into the lower one.
        entries: EntriesMode,
    },
    /// Mappings merged recursively.
    DeepMerge {
        /// Rules for some keys, sorted by name; other keys merge deeply.
        fields: Vec<Field>,
    },
}

impl Strategy {
    /// The name used in the spec: `OVERRIDE`, `APPEND`, ...
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// Which of the four strategies this is, without its attributes.
    pub fn kind(&self) -> StrategyKind {
        match self {
            Strategy::Override { .. } => StrategyKind::Override,
            Strategy::Append { .. } => StrategyKind::Append,
            Strategy::KeyedReplace { .. } => StrategyKind::KeyedReplace,
            Strategy::DeepMerge { .. } => StrategyKind::DeepMerge,
        }
    }

    /// The value a field has when no layer sets it (before the rule's `default`).
    fn empty_value(&self) -> Value {
        match self {
            Strategy::Override { value } => {
                if value.allows(ValueType::String) {
                    Value::String(String::new())
                } else if value.types == [ValueType::Array] {
                    Value::Array(Vec::new())
                } else if value.types == [ValueType::Object] {
                    Value::Object(Default::default())
                } else {
                    Value::Null
                }
            }
            Strategy::Append { .. } | Strategy::KeyedReplace { .. } => Value::Array(Vec::new()),
            Strategy::DeepMerge { .. } => Value::Object(Default::default()),
        }
    }

    /// The type column of `bernstein skills spec`.
    pub fn type_description(&self) -> String {
        match self {
            Strategy::Override { value } => value.type_description(),
            Strategy::Append { items, .. } => format!("list of {}", items.type_description()),
            Strategy::KeyedReplace { keys, .. } => format!("list keyed by {}", keys.join("/")),
            Strategy::DeepMerge { .. } => "mapping".into(),
        }
    }
}

/// One of the four strategies, without its attributes: what a merged
/// value, a change and an `explain` row report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StrategyKind {
    /// OVERRIDE.
    Override,
    /// APPEND.
    Append,
    /// KEYED_REPLACE.
    KeyedReplace,
    /// DEEP_MERGE.
    DeepMerge,
}

impl StrategyKind {
    /// Its name as a spec writes it.
    pub fn name(self) -> &'static str {
        match self {
            StrategyKind::Override => "OVERRIDE",
            StrategyKind::Append => "APPEND",
            StrategyKind::KeyedReplace => "KEYED_REPLACE",
            StrategyKind::DeepMerge => "DEEP_MERGE",
        }
    }
}

impl fmt::Display for StrategyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One checked field rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The field name.
    pub name: String,
    /// How it merges.
    pub strategy: Strategy,
    /// Its value when no layer sets it.
    pub default: Value,
    /// Must the effective skill have a non-empty value? (See
    /// [`crate::check`] for what empty means for each strategy.)
    pub required: bool,
    /// Its documentation.
    pub description: Option<String>,
    /// Example values.
    pub examples: Vec<Value>,
    /// For a KEYED_REPLACE field: the directory of the skill (relative,
    /// `/`-separated) its plain string entries name files in.
    pub files: Option<String>,
    /// The layers allowed to set it; `None` for all three.
    pub layers: Option<Vec<Layer>>,
    /// For a top-level OVERRIDE string (the body): whether a layer's value
    /// may change the lower one section by section.
    pub sections: Option<Sections>,
    /// Did the spec write a `default`? (A nested key appears in the
    /// effective skill unset only when it did.)
    pub has_default: bool,
}

impl Field {
    /// The rule of key `key` of this DEEP_MERGE field, if it declares one.
    pub fn key_rule(&self, key: &str) -> Option<&Field> {
        match &self.strategy {
            Strategy::DeepMerge { fields } => find_field(fields, key),
            _ => None,
        }
    }

    /// The layers that may set this value, when that is not all three.
    pub fn owners(&self) -> Option<&[Layer]> {
        self.layers
            .as_deref()
            .filter(|ls| Layer::ALL.iter().any(|l| !ls.contains(l)))
    }

    /// May `layer` set this value?
    pub(crate) fn allows_layer(&self, layer: Layer) -> bool {
        self.layers.as_ref().is_none_or(|ls| ls.contains(&layer))
    }
}

/// The rule named `name` in `fields` (sorted by name).
fn find_field<'f>(fields: &'f [Field], name: &str) -> Option<&'f Field> {
    fields
        .binary_search_by(|f| f.name.as_str().cmp(name))
        .ok()
        .map(|i| &fields[i])
}

/// A checked merge spec, ready to drive validation and merging.
#[derive(Debug, Clone)]
pub struct MergeSpec {
    /// The file it was read from.
    pub path: PathBuf,
    /// Its format version.
    pub version: u64,
    /// The fields, sorted by name.
    pub fields: Vec<Field>,
    /// The field that receives a SKILL.md's Markdown body.
    pub body_field: Option<String>,
    /// The field that defaults to the skill's name.
    pub name_field: Option<String>,
    /// The field that switches a skill off and on (`enabled`).
    pub enabled_field: Option<String>,
    /// The field that switches a skill off per target (`targets`).
    pub targets_field: Option<String>,
    /// The field names in the order the spec file lists them (for output
    /// meant for people and agents, such as a SKILL.md frontmatter).
    order: Vec<String>,
    /// Which layers may provide the files under which directories of a
    /// skill, longest directory first.
    pub file_owners: Vec<FileOwner>,
    /// The SHA-256 of the spec's text, which export records beside what it
    /// wrote.
    sha256: [u8; 32],
}

/// The default KEYED_REPLACE key fields.
const DEFAULT_KEYS: [&str; 3] = ["name", "id", "code"];

pub use directive::PATCH;

/// The name the effective skill uses for its list of contributing layers.
pub const LAYERS_PRESENT: &str = "layers_present";

impl MergeSpec {
    /// The SHA-256 of the text the spec was read from.
    pub fn sha256(&self) -> [u8; 32] {
        self.sha256
    }

    /// Reads and checks a spec file.
    pub fn load(path: &Path) -> Result<MergeSpec> {
        MergeSpec::from_bytes(MergeSpec::read(path)?, path)
    }

    /// Reads a spec file's bytes, at most [`MAX_SPEC_BYTES`], with the
    /// errors [`MergeSpec::load`] gives; for a caller that also looks at
    /// the bytes (the binary compares an installed copy with the one it
    /// shipped) without reading the file twice.
    pub fn read(path: &Path) -> Result<Vec<u8>> {
        use crate::source::confine::{Refusal, read_bounded};
        read_bounded(path, MAX_SPEC_BYTES).map_err(|r| {
            let kind = match r {
                Refusal::Io(e) => DiagnosticKind::Io {
                    message: e.to_string(),
                },
                Refusal::TooLarge { size, limit } => DiagnosticKind::Spec {
                    message: format!(
                        "the spec file is {size} bytes, over the {limit}-byte limit for a merge spec"
                    ),
                },
                r => DiagnosticKind::Refused {
                    reason: r.describe(path, "spec"),
                },
            };
            spec_error(path, None, kind)
        })
    }

    /// Checks a spec given as the bytes of its file; `path` is only used
    /// in messages.
    pub fn from_bytes(bytes: Vec<u8>, path: &Path) -> Result<MergeSpec> {
        let text = String::from_utf8(bytes).map_err(|e| {
            let valid = e.utf8_error().valid_up_to();
            let before = String::from_utf8_lossy(&e.as_bytes()[..valid]).into_owned();
            spec_error(
                path,
                Some(fragment::offset_to_pos(&before, valid)),
                DiagnosticKind::InvalidUtf8,
            )
        })?;
        MergeSpec::from_str(&text, path)
    }

    /// Checks a spec given as text; `path` is only used in messages.
    pub fn from_str(text: &str, path: &Path) -> Result<MergeSpec> {
        let (value, order) = fragment::parse_yaml_keeping_order(text, "fields")
            .map_err(|(pos, kind)| spec_error(path, pos, kind))?;
        let value = value.unwrap_or(Value::Object(Default::default()));
        let raw: RawSpec = match RawSpec::deserialize(&value) {
            Ok(raw) => raw,
            // The typed parse and the schema describe the same shape; the
            // schema's instance path makes the better message, so ask it.
            Err(e) => return Err(schema::explain_spec_error(text, path, &value, e)),
        };
        let mut spec = MergeSpec::check(raw, text, path)?;
        spec.order = order;
        Ok(spec)
    }

    fn check(raw: RawSpec, text: &str, path: &Path) -> Result<MergeSpec> {
        let locate = |pointer: &str| fragment::locate(text, Syntax::Yaml, pointer, false, 0);
        let fail = |pointer: &str, message: String| {
            spec_error(path, locate(pointer), DiagnosticKind::Spec { message })
        };
        if !SUPPORTED_VERSIONS.contains(&raw.version) {
            return Err(fail(
                "/version",
                format!(
                    "unsupported spec version {} (this build reads versions {})",
                    raw.version,
                    SUPPORTED_VERSIONS.map(|v| v.to_string()).join(" and ")
                ),
            ));
        }
        let checker = RuleChecker {
            version: raw.version,
            fail: &fail,
            rules: std::cell::Cell::new(0),
        };
        let fields = checker.fields(raw.fields, "/fields", "", 0)?;
        let file_owners = file_owners(&raw.files, &fields, raw.version, &fail)?;
        let spec = MergeSpec {
            path: path.to_path_buf(),
            version: raw.version,
            fields,
            body_field: raw.body_field,
            name_field: raw.name_field,
            enabled_field: raw.enabled_field,
            targets_field: raw.targets_field,
            order: Vec::new(),
            file_owners,
            sha256: sha2::Digest::finalize(<sha2::Sha256 as sha2::Digest>::new_with_prefix(
                text.as_bytes(),
            ))
            .into(),
        };
        for (attr, field) in [
            ("body_field", &spec.body_field),
            ("name_field", &spec.name_field),
        ] {
            if let Some(f) = field {
                let ok = spec.field(f).is_some_and(|f| {
                    matches!(&f.strategy, Strategy::Override { value } if value.is_only(ValueType::String))
                });
                if !ok {
                    return Err(fail(
                        &format!("/{attr}"),
                        format!(
                            "{attr} '{}' must name an OVERRIDE field of type string",
                            text::excerpt(f, text::EXCERPT_CHARS)
                        ),
                    ));
                }
            }
        }
        for (attr, field, strategy_ok, wants) in [
            (
                "enabled_field",
                &spec.enabled_field,
                (|f: &Field| matches!(&f.strategy, Strategy::Override { value } if value.is_only(ValueType::Boolean)))
                    as fn(&Field) -> bool,
                "an OVERRIDE field of type boolean",
            ),
            (
                "targets_field",
                &spec.targets_field,
                |f: &Field| matches!(&f.strategy, Strategy::DeepMerge { .. }),
                "a DEEP_MERGE field",
            ),
        ] {
            if let Some(f) = field {
                if spec.version < RULES_V2 {
                    return Err(fail(
                        &format!("/{attr}"),
                        format!("'{attr}' needs 'version: 2'"),
                    ));
                }
                if !spec.field(f).is_some_and(strategy_ok) {
                    return Err(fail(
                        &format!("/{attr}"),
                        format!(
                            "{attr} '{}' must name {wants}",
                            text::excerpt(f, text::EXCERPT_CHARS)
                        ),
                    ));
                }
            }
        }
        Ok(spec)
    }

    /// Who may provide the file at `rel` (relative to the skill's
    /// directory), if the spec says: the owner of the longest directory
    /// that holds it.
    pub(crate) fn file_owner(&self, rel: &str) -> Option<&FileOwner> {
        self.file_owners.iter().find(|o| {
            rel.strip_prefix(o.dir.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
        })
    }

    /// The rule of a field, if the spec declares it.
    pub fn field(&self, name: &str) -> Option<&Field> {
        find_field(&self.fields, name)
    }

    /// Are directives (`$patch`) read in fragments? (From version 2 on;
    /// under version 1 `$patch` is an ordinary key.)
    pub fn directives(&self) -> bool {
        self.version >= RULES_V2
    }

    /// The declared field names in the order the spec file lists them
    /// (sorted, for a spec that was not read from text).
    pub(crate) fn field_order(&self) -> Vec<&str> {
        if self.order.len() == self.fields.len() {
            self.order.iter().map(String::as_str).collect()
        } else {
            self.field_names().collect()
        }
    }

    /// The declared field names, sorted.
    pub(crate) fn field_names(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|f| f.name.as_str())
    }
}

/// Checks the rules of one level of `fields` (the top level or a DEEP_MERGE
/// field's keys).
struct RuleChecker<'c> {
    version: u64,
    fail: &'c dyn Fn(&str, String) -> Error,
    /// Rules checked so far, at every depth ([`MAX_RULES`]).
    rules: std::cell::Cell<usize>,
}

impl RuleChecker<'_> {
    /// The rules of `raw`, sorted by name. `at` is their pointer in the
    /// spec, `prefix` the dotted path of their parent (`metadata.`).
    fn fields(
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
                let mut value = value_rule(item, "", "type").map_err(|(at, m)| problem(&at, m))?;
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
                    let items = items_rule(items).map_err(|(at, m)| problem(&at, m))?;
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
                    Some(items) => items_rule(items).map_err(|(at, m)| problem(&at, m))?,
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
                required,
                default,
                description,
                examples,
                layers,
            } => {
                needs_v2("entries", entries.is_some())?;
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
                if !schema::field_accepts(&strategy, &d) {
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
fn file_owners(
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

fn spec_error(path: &Path, pos: Option<(usize, usize)>, kind: DiagnosticKind) -> Error {
    Error::Spec(Box::new(Diagnostic::error(Some(path), kind).at(pos)))
}

/// Checks an `items` attribute (either form).
fn items_rule(items: RawItems) -> std::result::Result<ValueRule, (String, String)> {
    match items {
        RawItems::Type(t) => value_rule(
            RawItemRule {
                value_type: Some(t),
                ..RawItemRule::default()
            },
            "items/",
            "items",
        ),
        RawItems::Rule(r) => value_rule(r, "items/", "items/type"),
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
        && let Err(problem) = pattern::check(p)
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
        for (i, v) in allowed.iter().enumerate() {
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

/// Where the spec is looked for, in order of precedence:
///
/// 1. an explicit path (`--spec`);
/// 2. the `BERNSTEIN_SKILLS_SPEC` variable;
/// 3. the copy the user installed beside the base layer
///    (`$XDG_DATA_HOME/bernstein/skills/mergespec.yaml`, written by
///    `bernstein skills spec --install`);
/// 4. the copy installed beside the binary, at the conventional place for a
///    prefix's data (`PREFIX/share/bernstein/skills/mergespec.yaml` for
///    `PREFIX/bin/bernstein`: what a wheel or a distribution's package
///    installs with it);
/// 5. for a development build run from its source tree only, that tree's
///    `spec/mergespec.yaml`.
///
/// A person's own choice (1, 2) comes before what was installed for them;
/// what they installed themselves (3) before what came with the binary (4),
/// so a copy they keep on purpose is not replaced by an upgrade.
///
/// The fields are the inputs, not the process's environment, so the order
/// is tested with plain paths.
#[derive(Debug, Clone, Default)]
pub struct SpecSearch {
    /// `--spec PATH`.
    pub explicit: Option<PathBuf>,
    /// `$BERNSTEIN_SKILLS_SPEC` (empty counts as unset).
    pub env_var: Option<PathBuf>,
    /// `$XDG_DATA_HOME/bernstein/skills`.
    pub data_dir: PathBuf,
    /// `PREFIX/share/bernstein/skills` for the binary's `PREFIX/bin`
    /// ([`SpecSearch::beside_executable`]; `None` when the executable's
    /// path is unknown).
    pub beside_binary: Option<PathBuf>,
    /// The source tree's spec, for a development build (`None` otherwise).
    pub source_tree: Option<PathBuf>,
}

/// The name of the installed spec inside the data directory.
pub const INSTALLED_NAME: &str = "mergespec.yaml";

/// Where a prefix keeps the shipped spec and targets, relative to the
/// prefix (`/usr`, `/usr/local`, a virtual environment): the conventional
/// place for a program's installed data.
pub(crate) const SHARE_DIR: &str = "share/bernstein/skills";

/// Which place of the [`SpecSearch`] the spec in use came from, in order of
/// precedence (an earlier variant wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SpecSource {
    /// `--spec PATH`.
    Explicit,
    /// `$BERNSTEIN_SKILLS_SPEC`.
    EnvVar,
    /// The user's copy, `$XDG_DATA_HOME/bernstein/skills/mergespec.yaml`.
    Installed,
    /// The copy installed with the binary, `PREFIX/share/bernstein/skills`.
    BesideBinary,
    /// The source tree of a development build.
    SourceTree,
}

impl fmt::Display for SpecSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SpecSource::Explicit => "--spec",
            SpecSource::EnvVar => "$BERNSTEIN_SKILLS_SPEC",
            SpecSource::Installed => {
                "the installed copy (written by 'bernstein skills spec --install')"
            }
            SpecSource::BesideBinary => "shipped beside the binary",
            SpecSource::SourceTree => "the source tree of this development build",
        })
    }
}

/// The spec a [`SpecSearch`] chose, where it came from, and why the places
/// before it were passed over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundSpec {
    /// The spec file.
    pub path: PathBuf,
    /// Which place it is.
    pub source: SpecSource,
    /// Each place of higher precedence, with why it was not used
    /// (`--spec (not given)`), in order, escaped for printing.
    pub passed_over: Vec<String>,
}

impl SpecSearch {
    /// The installed copy's path.
    pub fn installed(&self) -> PathBuf {
        self.data_dir.join(INSTALLED_NAME)
    }

    /// The directory of the spec and targets installed with the binary
    /// `exe` (its real path: a symbolic link to it says nothing about where
    /// it was installed): `PREFIX/share/bernstein/skills` for
    /// `PREFIX/bin/bernstein`.
    pub fn beside_executable(exe: &Path) -> Option<PathBuf> {
        Some(exe.parent()?.parent()?.join(SHARE_DIR))
    }

    /// The spec to use. An explicit path or the variable is used as given
    /// (an error then names that file); the installed copies and the source
    /// tree only if they exist. When none is found, one error lists every
    /// place searched, in order, and the fix.
    pub fn resolve(&self) -> Result<FoundSpec> {
        let mut passed_over = Vec::new();
        let found = |path: &Path, source, passed_over: Vec<String>| {
            Ok(FoundSpec {
                path: path.to_path_buf(),
                source,
                passed_over,
            })
        };
        match &self.explicit {
            Some(p) => return found(p, SpecSource::Explicit, passed_over),
            None => passed_over.push("--spec (not given)".to_owned()),
        }
        match self.env_var.as_ref().filter(|p| !p.as_os_str().is_empty()) {
            Some(p) => return found(p, SpecSource::EnvVar, passed_over),
            None => passed_over.push("$BERNSTEIN_SKILLS_SPEC (not set)".to_owned()),
        }
        let installed = self.installed();
        if installed.is_file() {
            return found(&installed, SpecSource::Installed, passed_over);
        }
        passed_over.push(format!("{} (no such file)", crate::text::path(&installed)));
        if let Some(dir) = &self.beside_binary {
            let beside = dir.join(INSTALLED_NAME);
            if beside.is_file() {
                return found(&beside, SpecSource::BesideBinary, passed_over);
            }
            passed_over.push(format!(
                "{} (beside the binary: no such file)",
                crate::text::path(&beside)
            ));
        }
        if let Some(src) = &self.source_tree {
            if src.is_file() {
                return found(src, SpecSource::SourceTree, passed_over);
            }
            passed_over.push(format!(
                "{} (the source tree of this development build: no such file)",
                crate::text::path(src)
            ));
        }
        Err(Error::Refused {
            path: None,
            message: format!(
                "no merge spec found; searched {}; run 'bernstein skills spec --install', or set BERNSTEIN_SKILLS_SPEC",
                passed_over.join(", ")
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn load(fields: &str) -> Result<MergeSpec> {
        MergeSpec::from_str(
            &format!("version: 1\nfields:\n{fields}"),
            Path::new("s.yaml"),
        )
    }

    /// The one located error a spec gives: `line:col: message`.
    fn err(fields: &str) -> String {
        match load(fields) {
            Ok(_) => panic!("the spec loads:\n{fields}"),
            Err(Error::Spec(d)) => format!(
                "{}:{}: {}",
                d.line.unwrap_or(0),
                d.column.unwrap_or(0),
                d.message()
            ),
            Err(e) => panic!("not a spec error: {e}"),
        }
    }

    fn value_rule(spec: &MergeSpec, field: &str) -> ValueRule {
        match &spec.field(field).unwrap().strategy {
            Strategy::Override { value } => value.clone(),
            Strategy::Append { items, .. } => items.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn each_constraint_loads_into_the_rule() {
        let spec = load(
            "  name:\n    strategy: OVERRIDE\n    type: string\n    required: true\n    \
             pattern: '^[a-z]+$'\n    pattern_help: lowercase letters\n    min_length: 1\n    \
             max_length: 64\n  level:\n    strategy: OVERRIDE\n    type: integer\n    \
             minimum: 0\n    maximum: 10\n  mode:\n    strategy: OVERRIDE\n    enum: [fast, slow]\n",
        )
        .unwrap();
        let name = spec.field("name").unwrap();
        assert!(name.required);
        assert_eq!(
            value_rule(&spec, "name"),
            ValueRule {
                types: vec![ValueType::String],
                items: None,
                constraints: Constraints {
                    pattern: Some("^[a-z]+$".into()),
                    pattern_help: Some("lowercase letters".into()),
                    min_length: Some(1),
                    max_length: Some(64),
                    ..Constraints::default()
                },
            }
        );
        let level = value_rule(&spec, "level").constraints;
        assert_eq!(
            (level.minimum, level.maximum),
            (Some(0.into()), Some(10.into()))
        );
        assert_eq!(
            value_rule(&spec, "mode").constraints.allowed,
            Some(vec![json!("fast"), json!("slow")])
        );
        assert!(!spec.field("level").unwrap().required);
    }

    #[test]
    fn a_type_list_and_item_rules_in_both_forms() {
        let spec = load(
            "  tools: {strategy: OVERRIDE, type: [string, array, string], items: string}\n  \
             tags: {strategy: APPEND, items: {type: string, pattern: '^#', max_length: 3}}\n  \
             plain: {strategy: APPEND, items: string}\n  \
             mixed: {strategy: APPEND, items: [string, integer]}\n",
        )
        .unwrap();
        let tools = value_rule(&spec, "tools");
        assert_eq!(tools.types, [ValueType::String, ValueType::Array]);
        assert_eq!(
            tools.items.as_deref(),
            Some(&ValueRule::of(ValueType::String))
        );
        assert_eq!(tools.phrase(), "a string or a list");
        assert_eq!(
            spec.field("tools").unwrap().strategy.type_description(),
            "string or list of string"
        );
        // Unset, a value that may be a string is "".
        assert_eq!(spec.field("tools").unwrap().default, json!(""));
        let tags = value_rule(&spec, "tags");
        assert_eq!(tags.constraints.max_length, Some(3));
        assert_eq!(value_rule(&spec, "plain"), ValueRule::of(ValueType::String));
        assert_eq!(value_rule(&spec, "mixed").plural(), "strings or integers");
    }

    #[test]
    fn required_is_taken_by_every_strategy() {
        let spec = load(
            "  a: {strategy: OVERRIDE, required: true}\n  b: {strategy: APPEND, required: true}\n  \
             c: {strategy: KEYED_REPLACE, required: true}\n  d: {strategy: DEEP_MERGE, required: false}\n",
        )
        .unwrap();
        let required: Vec<bool> = spec.fields.iter().map(|f| f.required).collect();
        assert_eq!(required, [true, true, true, false]);
    }

    #[test]
    fn a_spec_without_the_new_attributes_loads_as_before() {
        let spec = load(
            "  description: {strategy: OVERRIDE, type: string}\n  any: {strategy: OVERRIDE}\n  \
             n: {strategy: OVERRIDE, type: integer}\n  tags: {strategy: APPEND, items: string}\n",
        )
        .unwrap();
        assert_eq!(
            value_rule(&spec, "description"),
            ValueRule::of(ValueType::String)
        );
        assert_eq!(value_rule(&spec, "any"), ValueRule::any());
        assert_eq!(spec.field("any").unwrap().default, json!(""));
        assert_eq!(spec.field("n").unwrap().default, Value::Null);
        assert!(spec.fields.iter().all(|f| !f.required));
        assert!(
            spec.fields
                .iter()
                .all(|f| schema::constraint_help(f).is_none())
        );
    }

    #[test]
    fn bad_constraints_are_one_located_error() {
        for (fields, expected) in [
            (
                "  a: {strategy: OVERRIDE, type: string, pattern: '[a-'}\n",
                "3:50: field 'a': 'pattern' \"[a-\" is not an ECMA-262 regular expression (Unbalanced bracket), as JSON Schema and editors read it",
            ),
            (
                "  a: {strategy: OVERRIDE, type: string, min_length: 5, max_length: 2}\n",
                "3:53: field 'a': 'min_length' 5 is greater than 'max_length' 2",
            ),
            (
                "  a: {strategy: OVERRIDE, type: number, minimum: 5, maximum: 1.5}\n",
                "3:50: field 'a': 'minimum' 5 is greater than 'maximum' 1.5",
            ),
            (
                "  a: {strategy: OVERRIDE, type: integer, max_length: 3}\n",
                "3:54: field 'a': 'max_length' applies to strings, but the value is an integer",
            ),
            (
                "  a: {strategy: OVERRIDE, type: string, minimum: 3}\n",
                "3:50: field 'a': 'minimum' applies to numbers, but the value is a string",
            ),
            (
                "  a: {strategy: OVERRIDE, type: string, pattern_help: words}\n",
                "3:55: field 'a': 'pattern_help' explains a 'pattern', and there is none",
            ),
            (
                "  a: {strategy: OVERRIDE, type: string, enum: [x, 3]}\n",
                "3:51: field 'a': 'enum' value 3 does not fit the rest of the rule (string)",
            ),
            (
                "  a: {strategy: OVERRIDE, type: string, max_length: 1, enum: [x, yy]}\n",
                "3:66: field 'a': 'enum' value \"yy\" does not fit the rest of the rule (string)",
            ),
            (
                "  a: {strategy: OVERRIDE, enum: []}\n",
                "3:33: field 'a': 'enum' lists no value",
            ),
            (
                "  a: {strategy: OVERRIDE, type: []}\n",
                "3:33: field 'a': 'type' lists no type",
            ),
            (
                "  a: {strategy: OVERRIDE, type: [string, any]}\n",
                "3:33: field 'a': 'any' already takes every type; list the types without it",
            ),
            (
                "  a: {strategy: OVERRIDE, type: string, items: string}\n",
                "3:48: field 'a': 'items' applies to lists, but the value is a string",
            ),
            (
                "  a:\n    strategy: APPEND\n    items:\n      type: integer\n      pattern: x\n",
                "7:16: field 'a': 'pattern' applies to strings, but the value is an integer",
            ),
            (
                "  a: {strategy: OVERRIDE, type: string, max_length: 2, default: abc}\n",
                "3:65: field 'a': default \"abc\" does not fit its OVERRIDE rule (string)",
            ),
            // An attribute the strategy does not take.
            (
                "  a: {strategy: APPEND, pattern: x}\n",
                "3:25: field 'a': 'pattern' is an OVERRIDE attribute; for APPEND write 'items: {pattern: ...}' or remove it",
            ),
            (
                "  a: {strategy: KEYED_REPLACE, max_length: 3}\n",
                "3:32: field 'a': 'max_length' is an OVERRIDE attribute; for KEYED_REPLACE remove it",
            ),
            (
                "  a: {strategy: APPEND, items: {type: string, max_lenght: 3}}\n",
                "3:47: field 'a': attributes do not fit the strategy: unknown attribute 'max_lenght'",
            ),
            (
                "  a: {strategy: OVERRIDE, type: [strin, array]}\n",
                "3:34: field 'a': attributes do not fit the strategy: \"strin\" is not one of \"string\", \"integer\", \"number\", \"boolean\", \"object\" and 2 more",
            ),
            (
                "  a: {strategy: OVERRIDE, min_length: -1}\n",
                "3:39: field 'a': attributes do not fit the strategy: -1 is less than the minimum of 0",
            ),
        ] {
            assert_eq!(err(fields), expected, "{fields}");
        }
    }

    #[test]
    fn a_bad_pattern_below_a_nested_rule_is_located() {
        let text = "version: 2\nfields:\n  metadata:\n    strategy: DEEP_MERGE\n    fields:\n      \
                    tags: {strategy: APPEND, items: {type: string, pattern: '(a'}}\n";
        match MergeSpec::from_str(text, Path::new("s.yaml")) {
            Err(Error::Spec(d)) => {
                assert_eq!((d.line, d.column), (Some(6), Some(63)), "{}", d.message());
                assert!(
                    d.message()
                        .starts_with("field 'metadata.tags': 'pattern' \"(a\""),
                    "{}",
                    d.message()
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(MergeSpec::from_str(&text.replace("'(a'", "'^a'"), Path::new("s.yaml")).is_ok());
    }

    #[test]
    fn the_name_and_body_fields_must_stay_plain_strings() {
        let text = "version: 1\nname_field: name\nfields:\n  name: {strategy: OVERRIDE, type: [string, array]}\n";
        assert!(MergeSpec::from_str(text, Path::new("s.yaml")).is_err());
        let text = "version: 1\nname_field: name\nfields:\n  name: {strategy: OVERRIDE, type: string, pattern: '^x'}\n";
        assert!(MergeSpec::from_str(text, Path::new("s.yaml")).is_ok());
    }

    #[test]
    fn constraints_flow_into_the_fragment_schema_and_its_hover_text() {
        let spec = load(
            "  name: {strategy: OVERRIDE, type: string, required: true, pattern: '^[a-z]+$', \
             pattern_help: lowercase letters, max_length: 64}\n  \
             mode: {strategy: OVERRIDE, type: string, enum: [a, b]}\n  \
             tags: {strategy: APPEND, items: {type: string, min_length: 1}}\n",
        )
        .unwrap();
        let schema = fragment_schema(&spec);
        let p = &schema["properties"];
        assert_eq!(p["name"]["pattern"], "^[a-z]+$");
        assert_eq!(p["name"]["maxLength"], 64);
        assert_eq!(p["name"]["type"], json!(["string", "null"]));
        // `null` still resets a field with an `enum`.
        assert_eq!(p["mode"]["enum"], json!(["a", "b", null]));
        assert_eq!(
            p["tags"]["items"],
            json!({"type": "string", "minLength": 1})
        );
        // Several types: one branch per type with the constraints of that
        // type, and null.
        let spec2 = load(
            "  v: {strategy: OVERRIDE, type: [string, integer, array], max_length: 3, \
             minimum: 1, items: string, enum: [ab, 2, [x]]}\n",
        )
        .unwrap();
        assert_eq!(
            fragment_schema(&spec2)["properties"]["v"]["anyOf"],
            json!([
                {"type": "string", "maxLength": 3},
                {"type": "integer", "minimum": 1},
                {"type": "array", "items": {"type": "string"}},
                {"type": "null"}
            ])
        );
        assert_eq!(
            fragment_schema(&spec2)["properties"]["v"]["enum"],
            json!(["ab", 2, ["x"], null])
        );
        let hover = p["name"]["description"].as_str().unwrap();
        assert!(
            hover.starts_with(
                "Required: some layer must give it a non-empty value; an override need not repeat it. \
                 Must be lowercase letters. At most 64 characters.\n\nOVERRIDE:"
            ),
            "{hover}"
        );
    }

    /// Each place of the search wins over every later one, and a place is
    /// passed over (with its reason) only when nothing is there.
    #[test]
    fn spec_search_order_is_explicit_variable_installed_beside_binary_source_tree() {
        let tmp = tempfile::tempdir().unwrap();
        let file = |rel: &str| {
            let p = tmp.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "version: 1\nfields: {}\n").unwrap();
            p
        };
        let explicit = tmp.path().join("explicit.yaml");
        let var = tmp.path().join("var.yaml");
        let data_dir = tmp.path().join("home/.local/share/bernstein/skills");
        let prefix_bin = tmp.path().join("prefix/bin/bernstein");
        let beside = SpecSearch::beside_executable(&prefix_bin).unwrap();
        assert_eq!(beside, tmp.path().join("prefix/share/bernstein/skills"));
        let tree = tmp.path().join("tree/spec/mergespec.yaml");
        let search = SpecSearch {
            explicit: Some(explicit.clone()),
            env_var: Some(var.clone()),
            data_dir: data_dir.clone(),
            beside_binary: Some(beside.clone()),
            source_tree: Some(tree.clone()),
        };
        let found = |s: &SpecSearch| {
            let f = s.resolve().unwrap();
            (f.source, f.path)
        };

        // Nothing exists: the explicit path and the variable are used as
        // given (loading them reports a missing file); the others are not.
        assert_eq!(found(&search), (SpecSource::Explicit, explicit));
        let search = SpecSearch {
            explicit: None,
            ..search
        };
        assert_eq!(found(&search), (SpecSource::EnvVar, var));
        let empty_var = SpecSearch {
            env_var: Some(PathBuf::new()),
            ..search.clone()
        };
        let err = empty_var.resolve().unwrap_err().to_string();
        assert!(err.contains("no merge spec found"), "{err}");
        assert!(err.contains("beside the binary: no such file"), "{err}");

        // Then the first that exists, each found before the ones after it.
        let search = SpecSearch {
            env_var: None,
            ..search
        };
        let tree = file("tree/spec/mergespec.yaml");
        assert_eq!(found(&search), (SpecSource::SourceTree, tree));
        let beside_spec = file("prefix/share/bernstein/skills/mergespec.yaml");
        assert_eq!(
            found(&search),
            (SpecSource::BesideBinary, beside_spec.clone())
        );
        let installed = file("home/.local/share/bernstein/skills/mergespec.yaml");
        assert_eq!(found(&search), (SpecSource::Installed, installed.clone()));
        assert_eq!(
            search.resolve().unwrap().passed_over,
            ["--spec (not given)", "$BERNSTEIN_SKILLS_SPEC (not set)"]
        );

        // Without the user's copy, the reason it was passed over is given.
        std::fs::remove_file(&installed).unwrap();
        let f = search.resolve().unwrap();
        assert_eq!(f.path, beside_spec);
        assert_eq!(
            f.passed_over[2],
            format!("{} (no such file)", installed.display())
        );
    }
}
