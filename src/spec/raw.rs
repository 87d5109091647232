//! The spec file as written: the shape `schemas/mergespec.schema.json`
//! describes, deserialised before any check.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Number, Value};

use super::{EntriesMode, Plain, Sections, Unkeyed, ValueType};
use crate::layer::Layer;

/// The file as written: the shape `schemas/mergespec.schema.json` describes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "bernstein merge specification")]
pub(crate) struct RawSpec {
    /// The format version of this file: 1, or 2 for directives in fragments and the rule attributes `fields`, `unique`, `entries`, `unkeyed` and `layers`.
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
        /// An entry with no key (no key field holding a non-empty string): `refuse` it with a located error (the default), or `append` it after the keyed entries, in the order the layers hold them (Bernstein's merge). Needs version 2.
        #[serde(default)]
        unkeyed: Option<Unkeyed>,
        /// A plain string entry (`style.md`, keyed by itself): `keep` it (the default), or `refuse` it with a located error, every entry being a mapping (Bernstein's merge). Needs version 2.
        #[serde(default)]
        plain: Option<Plain>,
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
    pub(super) fn layer(self) -> Layer {
        match self {
            LayerName::Base => Layer::Base,
            LayerName::Team => Layer::Team,
            LayerName::User => Layer::User,
        }
    }
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
