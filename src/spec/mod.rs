//! The merge specification: which strategy merges each top-level field.
//!
//! The spec is data, read at run time from `spec/mergespec.yaml` (or a file
//! the user names). [`MergeSpec::from_str`] turns it into a checked plan: the
//! only thing compiled into this crate about fields is the set of four
//! strategies ([`Strategy`]) and the attributes each one takes (`RawRule`).
//! A bad spec is one [`Error::Spec`](crate::Error::Spec) naming the spec file and the entry,
//! before any skill is read.

mod cache;
mod consistency;
pub mod directive;
mod misfit;
mod model;
mod pattern;
mod raw;
mod schema;
mod search;

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::digest::Digest;
use crate::error::{DiagnosticKind, Result};
use crate::fragment::{self, Syntax};
use crate::text;

pub use cache::SpecCache;
pub(crate) use cache::{Verdicts, fragment_key};
pub(crate) use consistency::value_rule;
use consistency::{RuleChecker, file_owners, spec_error};
pub(crate) use misfit::{deepest_misfit, schema_message};
use model::find_field;
pub use model::{
    Constraints, EntriesMode, Field, FileOwner, Plain, Sections, Strategy, StrategyKind, Unkeyed,
    ValueRule, ValueType,
};
pub(crate) use pattern::compile_draft7;
pub(crate) use raw::{RawItemRule, RawSpec, RawTypes};
pub(crate) use schema::file_schema;
pub use schema::{fragment_schema, mergespec_schema, strategy_help};
pub(crate) use schema::{validation_schema, value_schema};
pub use search::{FoundSpec, INSTALLED_NAME, SHIPPED, SpecSearch, SpecSource};

/// The largest spec file read: 1 MiB. The shipped spec is a few KiB; the
/// cap keeps a spec pointed at `/dev/zero` or a generated monster from
/// costing more than a bounded read.
pub const MAX_SPEC_BYTES: u64 = 1024 * 1024;

/// The spec versions this build reads. Version 2 adds the rules of the
/// second engine: directives (`$patch`) in fragments, rules for the keys of
/// a DEEP_MERGE field (`fields`), `unique`, `entries`, `unkeyed` and `layers`. A
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
    sha256: Digest,
    /// The fragments the compiled schema of these spec bytes found valid,
    /// kept in the cache ([`SpecCache`]) when the spec came through one.
    pub(crate) verdicts: Option<std::sync::Arc<Verdicts>>,
}

pub use directive::PATCH;

/// The name the effective skill uses for its list of contributing layers.
pub const LAYERS_PRESENT: &str = "layers_present";

impl MergeSpec {
    /// The SHA-256 of the text the spec was read from.
    pub fn sha256(&self) -> Digest {
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
        let text = String::from_utf8(bytes).map_err(|e| utf8_error(&e, path))?;
        MergeSpec::from_str(&text, path)
    }

    /// [`MergeSpec::from_bytes`], with what checking the spec produces
    /// kept in `cache` (see [`SpecCache`]): bytes this build checked
    /// before are not checked again, and the fragments found valid under
    /// them are known valid without compiling the fragment schema. A spec
    /// with other bytes, an edited one, is checked in full; so is any
    /// spec when the cache is missing, not the person's own or not whole.
    pub fn from_bytes_cached(
        bytes: Vec<u8>,
        path: &Path,
        cache: Option<&SpecCache>,
    ) -> Result<MergeSpec> {
        let Some(cache) = cache else {
            return MergeSpec::from_bytes(bytes, path);
        };
        let digest = Digest::of(&bytes);
        if let Ok(text) = std::str::from_utf8(&bytes)
            && let Some((stored, verdicts)) = cache.read(&digest)
            && let Ok(mut spec) = MergeSpec::from_value(&stored.value, text, path, false)
        {
            spec.order = stored.order;
            spec.verdicts = Some(std::sync::Arc::new(verdicts));
            return Ok(spec);
        }
        let text = String::from_utf8(bytes).map_err(|e| utf8_error(&e, path))?;
        let (mut spec, value) = MergeSpec::checked(&text, path)?;
        let stored = cache::Stored {
            value,
            order: spec.order.clone(),
        };
        spec.verdicts = cache.write(&digest, &stored).map(std::sync::Arc::new);
        Ok(spec)
    }

    /// Checks a spec given as text; `path` is only used in messages.
    pub fn from_str(text: &str, path: &Path) -> Result<MergeSpec> {
        Ok(MergeSpec::checked(text, path)?.0)
    }

    /// The spec in `text`, checked in full, and its value as read.
    fn checked(text: &str, path: &Path) -> Result<(MergeSpec, Value)> {
        let (value, order) =
            fragment::parse_yaml_keeping_order(text, "fields", MAX_SPEC_BYTES, "a merge spec")
                .map_err(|(pos, kind)| spec_error(path, pos, kind))?;
        let value = value.unwrap_or(Value::Object(Default::default()));
        let mut spec = MergeSpec::from_value(&value, text, path, true)?;
        spec.order = order;
        Ok((spec, value))
    }

    /// The spec whose file `text` reads as `value`. `schemas`: check what
    /// only a compiled schema judges (defaults, enum values, patterns);
    /// off only for bytes that passed those checks in this build.
    fn from_value(value: &Value, text: &str, path: &Path, schemas: bool) -> Result<MergeSpec> {
        let raw: RawSpec = match RawSpec::deserialize(value) {
            Ok(raw) => raw,
            // The typed parse and the schema describe the same shape; the
            // schema's instance path makes the better message, so ask it.
            Err(e) => return Err(misfit::explain_spec_error(text, path, value, e)),
        };
        MergeSpec::from_raw(raw, text, path, schemas)
    }

    fn from_raw(raw: RawSpec, text: &str, path: &Path, schemas: bool) -> Result<MergeSpec> {
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
            schemas,
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
            sha256: Digest::of(text),
            verdicts: None,
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

    /// The rule of field `name`, the `i`th of a merge under this spec: a
    /// merge gives every field in the spec's order, so it is found by its
    /// position (by its name only if that is another field).
    pub(crate) fn field_at(&self, i: usize, name: &str) -> Option<&Field> {
        match self.fields.get(i) {
            Some(f) if f.name == name => Some(f),
            _ => self.field(name),
        }
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

/// The error of a spec file that is not UTF-8, at the first bad byte.
fn utf8_error(e: &std::string::FromUtf8Error, path: &Path) -> crate::error::Error {
    let valid = e.utf8_error().valid_up_to();
    let before = String::from_utf8_lossy(&e.as_bytes()[..valid]).into_owned();
    spec_error(
        path,
        Some(fragment::offset_to_pos(&before, valid)),
        DiagnosticKind::InvalidUtf8,
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::error::Error;

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
            data_dir: Some(data_dir.clone()),
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
