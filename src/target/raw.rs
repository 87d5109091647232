//! A target file as written: the shape `schemas/target.schema.json`
//! describes, deserialised before any check.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{Format, Normalize, OtherFields, Render};
use crate::spec::RawTypes;

/// The file as written: the shape `schemas/target.schema.json` describes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "bernstein export target")]
pub(crate) struct RawTarget {
    /// The format version of this file: 1.
    pub version: u64,
    /// The target's name, equal to the file's name without `.yaml`.
    pub name: String,
    /// The target this file builds on, by name (found as `--target` finds one; a file extending its own name builds on the next file of that name in the search): every key this file leaves out is the base's (`description`, `source`, `format`, `places`, `other_fields`, `other_fields_into`, `fields`, `translate`), except `display_name` and `detect`. A field under `fields` replaces the base's field of that name or is added after them; `null` removes it.
    #[serde(default)]
    pub extends: Option<String>,
    /// The consumer's name as people know it (`GitHub Copilot`), shown by `targets`.
    #[serde(default)]
    pub display_name: Option<String>,
    /// One sentence: the consumer and what it accepts.
    #[serde(default)]
    pub description: Option<String>,
    /// The documentation its rules are taken from.
    #[serde(default)]
    pub source: Vec<String>,
    /// What export writes for each skill: `skill` (an Agent Skills directory, `DIR/<name>/SKILL.md` and its files) or `json` (`DIR/<name>.json`, the effective skill as `show` prints it).
    #[serde(default = "Format::target_default")]
    pub format: Format,
    /// Where the consumer loads skills from.
    #[serde(default)]
    pub places: RawPlaces,
    /// Paths whose existence shows the consumer is installed on this machine (`~` is the home directory), for `targets --installed`; an empty list: never shown as installed [default: the directory holding the user place, `~/.cursor` for `~/.cursor/skills`].
    #[serde(default)]
    pub detect: Option<Vec<String>>,
    /// What happens to an effective field the target does not list.
    #[serde(default)]
    pub other_fields: OtherFields,
    /// Instead: write each effective field the target does not list into this mapping field of the target (the standard's `metadata`), keyed by its name, as a string (a nested value flattened to dotted keys, a value that is not a string as its JSON text). A key the mapping already has keeps its value, and the field is left out with a note.
    #[serde(default)]
    pub other_fields_into: Option<String>,
    /// The frontmatter fields the consumer takes, in the order they are written, with its rules for each (in a file that `extends` another, `null` removes the base's field).
    #[serde(default)]
    pub fields: std::collections::BTreeMap<String, Option<RawTargetField>>,
    /// Fields the consumer reads from another file of the skill's directory.
    #[serde(default)]
    pub translate: Vec<RawTranslate>,
}
/// Where a consumer loads skills from, per scope.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPlaces {
    /// The directory of the person's own skills; `~` is the home directory.
    #[serde(default)]
    pub user: Option<String>,
    /// The directory of a project's skills, relative to the project's root (its git work tree).
    #[serde(default)]
    pub project: Option<String>,
}
/// One field a target takes, with its rules.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTargetField {
    /// The effective skill must have a non-empty value.
    #[serde(default)]
    pub required: Option<bool>,
    /// The value's type as the consumer reads it (after `render`), or a list of types.
    #[serde(rename = "type", default)]
    pub(crate) value_type: Option<RawTypes>,
    /// A string value must match this ECMA-262 regular expression (no backreferences or lookaround).
    #[serde(default)]
    pub pattern: Option<String>,
    /// What `pattern` asks for, in words.
    #[serde(default)]
    pub pattern_help: Option<String>,
    /// A string value has at least this many characters (Unicode code points), after `normalize`.
    #[serde(default)]
    pub min_length: Option<u64>,
    /// A string value has at most this many characters (Unicode code points), after `normalize`.
    #[serde(default)]
    pub max_length: Option<u64>,
    /// The only values allowed.
    #[serde(rename = "enum", default)]
    pub allowed: Option<Vec<Value>>,
    /// A number value is at least this.
    #[serde(default)]
    pub minimum: Option<serde_json::Number>,
    /// A number value is at most this.
    #[serde(default)]
    pub maximum: Option<serde_json::Number>,
    /// How the consumer normalises a string before checking it: one step, or a list of steps applied in order.
    #[serde(default)]
    pub normalize: Option<Normalizations>,
    /// The value must equal the skill's directory name.
    #[serde(default)]
    pub matches_directory: Option<bool>,
    /// How the value is written for the consumer.
    #[serde(default)]
    pub render: Option<Render>,
}

/// A normalisation step, or several in order.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum Normalizations {
    /// One step.
    One(Normalize),
    /// Steps applied in order.
    Many(Vec<Normalize>),
}
/// A field the consumer reads from another file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTranslate {
    /// The effective skill's field.
    pub field: String,
    /// The YAML file inside the exported skill directory it is written to.
    pub file: String,
    /// The dotted key in that file (`policy.allow_implicit_invocation`).
    pub key: String,
    /// Effective values and what is written for each; a value not listed is written as it is.
    #[serde(default)]
    pub values: Vec<RawValueMap>,
}

/// One effective value and what a translation writes for it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawValueMap {
    /// The effective value.
    pub from: Value,
    /// What is written.
    pub to: Value,
}
