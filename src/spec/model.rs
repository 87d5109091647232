//! The checked rules: what each field is, how it merges, and what its
//! values must be. [`super::MergeSpec`] holds them.

use std::fmt;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Number, Value};

use crate::layer::Layer;

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
/// What a KEYED_REPLACE list does with an entry that has no key: a mapping
/// none of whose key fields holds a non-empty string.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Unkeyed {
    /// The entry is an error, located at its file, line and column: a
    /// higher layer could never replace or delete it.
    #[default]
    Refuse,
    /// The entry is kept: after every keyed entry, in the order the layers
    /// (lowest first) and their lists hold them, as Bernstein's layered
    /// module merges.
    Append,
}

/// What a KEYED_REPLACE list does with a plain string entry
/// (`style.md`), which is keyed by itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Plain {
    /// The entry is kept, keyed by itself (a file's name under `files`).
    #[default]
    Keep,
    /// The entry is an error, located at its file, line and column: every
    /// entry is a mapping, as in Bernstein's layered module.
    Refuse,
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
        /// Whether an entry without a key is refused or kept.
        unkeyed: Unkeyed,
        /// Whether a plain string entry is kept or refused.
        plain: Plain,
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
    pub(super) fn empty_value(&self) -> Value {
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
    /// [`crate::postmerge`] for what empty means for each strategy.)
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
pub(super) fn find_field<'f>(fields: &'f [Field], name: &str) -> Option<&'f Field> {
    fields
        .binary_search_by(|f| f.name.as_str().cmp(name))
        .ok()
        .map(|i| &fields[i])
}
