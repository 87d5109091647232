//! The merge specification: which strategy merges each top-level field.
//!
//! The spec is data, read at run time from `spec/mergespec.yaml` (or a file
//! the user names). [`MergeSpec::from_str`] turns it into a checked plan: the
//! only thing compiled into this crate about fields is the set of four
//! strategies ([`Strategy`]) and the attributes each one takes ([`RawRule`]).
//! A bad spec is one [`Error::Spec`] naming the spec file and the entry,
//! before any skill is read.

mod schema;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::error::{Diagnostic, DiagnosticKind, Error, Result};
use crate::fragment::{self, Syntax};
use crate::text;

pub use schema::{fragment_schema, mergespec_schema, strategy_help};

/// The spec versions this build reads.
pub const SUPPORTED_VERSION: u64 = 1;

/// The file as written: the shape `schemas/mergespec.schema.json` describes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "bernstein merge specification")]
pub struct RawSpec {
    /// The format version of this file. This build reads version 1.
    pub version: u64,
    /// The OVERRIDE string field that receives the Markdown after a SKILL.md frontmatter.
    #[serde(default)]
    pub body_field: Option<String>,
    /// The OVERRIDE field that defaults to the skill's name when no layer sets it.
    #[serde(default)]
    pub name_field: Option<String>,
    /// Every top-level field a skill fragment may set, with the rule that merges it.
    pub fields: BTreeMap<String, RawRule>,
}

/// A field's rule as written: a strategy and its attributes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(tag = "strategy", deny_unknown_fields)]
pub enum RawRule {
    /// Scalars: the highest layer that sets the field replaces it wholesale.
    #[serde(rename = "OVERRIDE")]
    Override {
        /// The value's type (default: any JSON value).
        #[serde(rename = "type", default)]
        value_type: Option<ValueType>,
        /// The value when no layer sets the field.
        #[serde(default)]
        default: Option<Value>,
        /// What the field is for; shown as hover text by editors.
        #[serde(default)]
        description: Option<String>,
        /// Example values, copied into the generated schema.
        #[serde(default)]
        examples: Option<Vec<Value>>,
    },
    /// Unkeyed lists: items concatenated base, team, user.
    #[serde(rename = "APPEND")]
    Append {
        /// The items' type (default: any JSON value).
        #[serde(default)]
        items: Option<ValueType>,
        /// The value when no layer sets the field.
        #[serde(default)]
        default: Option<Value>,
        /// What the field is for; shown as hover text by editors.
        #[serde(default)]
        description: Option<String>,
        /// Example values, copied into the generated schema.
        #[serde(default)]
        examples: Option<Vec<Value>>,
    },
    /// Lists keyed by a field: same key replaced in place, new keys appended.
    #[serde(rename = "KEYED_REPLACE")]
    KeyedReplace {
        /// The fields that identify an entry, tried in order (default: name, id, code).
        #[serde(default)]
        keys: Option<Vec<String>>,
        /// The value when no layer sets the field.
        #[serde(default)]
        default: Option<Value>,
        /// What the field is for; shown as hover text by editors.
        #[serde(default)]
        description: Option<String>,
        /// Example values, copied into the generated schema.
        #[serde(default)]
        examples: Option<Vec<Value>>,
    },
    /// Mappings: merged recursively, same path overrides, distinct paths coexist.
    #[serde(rename = "DEEP_MERGE")]
    DeepMerge {
        /// The value when no layer sets the field.
        #[serde(default)]
        default: Option<Value>,
        /// What the field is for; shown as hover text by editors.
        #[serde(default)]
        description: Option<String>,
        /// Example values, copied into the generated schema.
        #[serde(default)]
        examples: Option<Vec<Value>>,
    },
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
    pub fn json_type(self) -> Option<&'static str> {
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
    pub fn phrase(self) -> &'static str {
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
    pub fn plural(self) -> &'static str {
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

/// The four merge strategies, with the attributes each needs.
#[derive(Debug, Clone, PartialEq)]
pub enum Strategy {
    /// The highest layer that sets the field wins.
    Override {
        /// The value's type.
        value_type: ValueType,
    },
    /// Lists concatenated in layer order.
    Append {
        /// The items' type.
        item_type: ValueType,
    },
    /// Lists of entries keyed by the first present key field.
    KeyedReplace {
        /// Key fields, tried in order.
        keys: Vec<String>,
    },
    /// Mappings merged recursively.
    DeepMerge,
}

impl Strategy {
    /// The name used in the spec: `OVERRIDE`, `APPEND`, ...
    pub fn name(&self) -> &'static str {
        match self {
            Strategy::Override { .. } => "OVERRIDE",
            Strategy::Append { .. } => "APPEND",
            Strategy::KeyedReplace { .. } => "KEYED_REPLACE",
            Strategy::DeepMerge => "DEEP_MERGE",
        }
    }

    /// The value a field has when no layer sets it (before the rule's `default`).
    fn empty_value(&self) -> Value {
        match self {
            Strategy::Override { value_type } => match value_type {
                ValueType::String | ValueType::Any => Value::String(String::new()),
                _ => Value::Null,
            },
            Strategy::Append { .. } | Strategy::KeyedReplace { .. } => Value::Array(Vec::new()),
            Strategy::DeepMerge => Value::Object(Default::default()),
        }
    }

    /// The type column of `bernstein skills spec`.
    pub fn type_description(&self) -> String {
        match self {
            Strategy::Override { value_type } => value_type.json_type().unwrap_or("any").into(),
            Strategy::Append { item_type } => {
                format!("list of {}", item_type.json_type().unwrap_or("any"))
            }
            Strategy::KeyedReplace { keys } => format!("list keyed by {}", keys.join("/")),
            Strategy::DeepMerge => "mapping".into(),
        }
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
    /// Its documentation.
    pub description: Option<String>,
    /// Example values.
    pub examples: Vec<Value>,
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
}

/// The default KEYED_REPLACE key fields.
const DEFAULT_KEYS: [&str; 3] = ["name", "id", "code"];

/// The name the effective skill uses for its list of contributing layers.
pub const LAYERS_PRESENT: &str = "layers_present";

impl MergeSpec {
    /// Reads and checks a spec file.
    pub fn load(path: &Path) -> Result<MergeSpec> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            spec_error(
                path,
                None,
                DiagnosticKind::Io {
                    message: e.to_string(),
                },
            )
        })?;
        MergeSpec::from_str(&text, path)
    }

    /// Checks a spec given as text; `path` is only used in messages.
    pub fn from_str(text: &str, path: &Path) -> Result<MergeSpec> {
        let value =
            fragment::parse_yaml(text).map_err(|(pos, kind)| spec_error(path, pos, kind))?;
        let value = value.unwrap_or(Value::Object(Default::default()));
        let raw: RawSpec = match RawSpec::deserialize(&value) {
            Ok(raw) => raw,
            // The typed parse and the schema describe the same shape; the
            // schema's instance path makes the better message, so ask it.
            Err(e) => return Err(schema::explain_spec_error(text, path, &value, e)),
        };
        MergeSpec::check(raw, text, path)
    }

    fn check(raw: RawSpec, text: &str, path: &Path) -> Result<MergeSpec> {
        let locate = |pointer: &str| fragment::locate(text, Syntax::Yaml, pointer, false, 0);
        let fail = |pointer: &str, message: String| {
            spec_error(path, locate(pointer), DiagnosticKind::Spec { message })
        };
        if raw.version != SUPPORTED_VERSION {
            return Err(fail(
                "/version",
                format!(
                    "unsupported spec version {} (this build reads version {SUPPORTED_VERSION})",
                    raw.version
                ),
            ));
        }
        let mut fields = Vec::with_capacity(raw.fields.len());
        for (name, rule) in raw.fields {
            let pointer = format!("/fields/{}", fragment::escape_pointer(&name));
            let quoted = text::excerpt(&name, text::EXCERPT_CHARS);
            if name.is_empty() || name == LAYERS_PRESENT {
                return Err(fail(
                    &pointer,
                    format!("field name '{quoted}' is reserved or empty"),
                ));
            }
            let (strategy, common) = match rule {
                RawRule::Override {
                    value_type,
                    default,
                    description,
                    examples,
                } => (
                    Strategy::Override {
                        value_type: value_type.unwrap_or(ValueType::Any),
                    },
                    (default, description, examples),
                ),
                RawRule::Append {
                    items,
                    default,
                    description,
                    examples,
                } => (
                    Strategy::Append {
                        item_type: items.unwrap_or(ValueType::Any),
                    },
                    (default, description, examples),
                ),
                RawRule::KeyedReplace {
                    keys,
                    default,
                    description,
                    examples,
                } => {
                    let keys = keys
                        .unwrap_or_else(|| DEFAULT_KEYS.iter().map(|k| k.to_string()).collect());
                    let mut seen = std::collections::BTreeSet::new();
                    if keys.is_empty() || keys.iter().any(|k| k.is_empty() || !seen.insert(k)) {
                        return Err(fail(
                            &format!("{pointer}/keys"),
                            format!(
                                "field '{quoted}': keys must be a non-empty list of distinct names"
                            ),
                        ));
                    }
                    (
                        Strategy::KeyedReplace { keys },
                        (default, description, examples),
                    )
                }
                RawRule::DeepMerge {
                    default,
                    description,
                    examples,
                } => (Strategy::DeepMerge, (default, description, examples)),
            };
            let (default, description, examples) = common;
            let default = match default {
                Some(d) => {
                    if !schema::field_accepts(&strategy, &d) {
                        return Err(fail(
                            &format!("{pointer}/default"),
                            format!(
                                "field '{quoted}': default {} does not fit its {} rule ({})",
                                text::json_excerpt(&d, text::EXCERPT_CHARS),
                                strategy.name(),
                                match &strategy {
                                    Strategy::KeyedReplace { keys } => format!(
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
            fields.push(Field {
                name,
                strategy,
                default,
                description,
                examples: examples.unwrap_or_default(),
            });
        }
        let spec = MergeSpec {
            path: path.to_path_buf(),
            version: raw.version,
            fields,
            body_field: raw.body_field,
            name_field: raw.name_field,
        };
        for (attr, field) in [
            ("body_field", &spec.body_field),
            ("name_field", &spec.name_field),
        ] {
            if let Some(f) = field {
                let ok = spec.field(f).is_some_and(|f| {
                    matches!(
                        f.strategy,
                        Strategy::Override {
                            value_type: ValueType::String | ValueType::Any
                        }
                    )
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
        Ok(spec)
    }

    /// The rule of a field, if the spec declares it.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields
            .binary_search_by(|f| f.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.fields[i])
    }

    /// The declared field names, sorted.
    pub fn field_names(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|f| f.name.as_str())
    }
}

fn spec_error(path: &Path, pos: Option<(usize, usize)>, kind: DiagnosticKind) -> Error {
    Error::Spec(Box::new(Diagnostic::error(Some(path), kind).at(pos)))
}

/// Where the spec comes from, in order: an explicit path, the
/// `BERNSTEIN_SKILLS_SPEC` variable, the copy installed beside the base
/// layer, then the source tree this binary was built from.
pub fn resolve_path(explicit: Option<&Path>, env_var: Option<PathBuf>, data_dir: &Path) -> PathBuf {
    if let Some(p) = explicit {
        return p.to_path_buf();
    }
    if let Some(p) = env_var.filter(|p| !p.as_os_str().is_empty()) {
        return p;
    }
    let installed = data_dir.join("mergespec.yaml");
    if installed.is_file() {
        return installed;
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("spec/mergespec.yaml")
}
