//! A spec that does not fit its own schema, said in words: the typed
//! parse's refusal turned into one located error naming the entry, the
//! attribute and what to write instead.

use std::path::Path;

use serde_json::Value;

use super::mergespec_schema;
use crate::error::{Diagnostic, DiagnosticKind, Error};
use crate::fragment::{self, Syntax};
use crate::text::{EXCERPT_CHARS, MESSAGE_CHARS, excerpt, json_excerpt, list};

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

/// Where `value` does not fit `schema`, a file's own schema (a target
/// file's, say), after its typed parse refused it without saying where:
/// the place the deepest error names (an unexpected key's own place, not
/// its mapping's) as a pointer, and whether it is a key. `None` if the
/// schema finds nothing wrong.
pub(crate) fn deepest_misfit(schema: &Value, value: &Value) -> Option<(String, bool)> {
    use jsonschema::error::ValidationErrorKind as K;
    let validator = jsonschema::draft202012::new(schema).ok()?;
    let best = validator
        .iter_errors(value)
        .max_by_key(|e| e.instance_path().as_str().matches('/').count())?;
    let at = match best.kind() {
        K::AdditionalProperties { unexpected } => Target::unexpected(&best, unexpected),
        _ => Target::value(best.instance_path().as_str().to_owned()),
    };
    Some((at.pointer, at.key))
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
        attribute: "unkeyed",
        strategy: "KEYED_REPLACE",
        instead: &[],
    },
    StrategyAttribute {
        attribute: "plain",
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
    use serde_json::json;

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
