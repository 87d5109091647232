//! Checks of the effective skill, after the merge: what no single fragment
//! can show.
//!
//! Every fragment is checked on its own against the fragment schema first
//! ([`crate::validate`]). Two rules of the spec are about the merged skill
//! instead, and [`effective`] checks them:
//!
//! - **`required: true`**: the effective skill must have a non-empty value
//!   for the field. An override need not repeat it; a skill that no layer
//!   sets it for fails. What counts as empty depends on the strategy
//!   ([`is_empty`]): for OVERRIDE `null`, a string of nothing but
//!   whitespace, an empty list or an empty mapping (`false` and `0` are
//!   values); for APPEND no item; for KEYED_REPLACE no entry; for
//!   DEEP_MERGE no key.
//! - **A value the merge made** rather than read from a layer must fit its
//!   rule too. That is the `name_field`, which defaults to the skill's file
//!   name: a skill directory `My_Skill` that no layer names breaks a
//!   lowercase `pattern`. (A rule's `default` is checked when the spec
//!   loads.)
//!
//! And one bound no single fragment can show: a value merged by section
//! ([`sections`]) may be merged from at most one section or change per
//! [`CAP_BYTES_PER_SECTION`] bytes of the size cap, counted over the layers
//! that take part, before anything is merged.

use serde_json::Value;

use crate::error::{Diagnostic, DiagnosticKind};
use crate::fragment::Fragment;
use crate::merge::{Effective, FieldMerge, Merged, field_pointer};
use crate::spec::{Field, MergeSpec, Strategy};
use crate::validate::Validator;

/// Is this value empty for `required`? `null`, a blank string, `[]`, `{}`.
pub fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        Value::Bool(_) | Value::Number(_) => false,
    }
}

/// Is the merged field empty, by its strategy's measure?
fn merged_is_empty(merged: &Merged) -> bool {
    match merged {
        Merged::Override(s) => is_empty(&s.value),
        Merged::Append(items) => items.is_empty(),
        Merged::Keyed(entries) => entries.is_empty(),
        Merged::Deep(tree) => tree.is_empty(),
    }
}

/// Does [`effective`] look at this field? The required ones, and the
/// OVERRIDE fields with constraints (whose value the merge may have made).
/// A caller that merges only to check can merge just these
/// (`merge_only`).
pub fn needs(field: &Field) -> bool {
    field.required
        || matches!(&field.strategy, Strategy::Override { value } if value.has_constraints())
}

/// The problems of the effective skill: required fields left empty, and
/// values the merge made that break their rule. `fragments` are the ones
/// it was merged from (base first); `shown` names a fragment's file in a
/// message (e.g. `team/writer.yaml`).
///
/// Diagnostics are located at the file (and line) that made the value
/// what it is, or at the highest layer's file when no layer set it.
pub fn effective(
    spec: &MergeSpec,
    validator: &Validator,
    effective: &Effective,
    fragments: &[Fragment],
    shown: &dyn Fn(&Fragment) -> String,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(top) = fragments.last() else {
        return out;
    };
    let at_top = |kind: DiagnosticKind, field: &str| {
        Diagnostic::error(Some(&top.path), kind)
            .in_layer(top.layer)
            .on_field(field)
    };
    for (i, field) in effective.fields.iter().enumerate() {
        let Some(rule) = spec.field_at(i, field.name) else {
            continue;
        };
        if rule.required && merged_is_empty(&field.merged) {
            out.push(required(field, fragments, shown).unwrap_or_else(|| {
                at_top(
                    DiagnosticKind::RequiredMissing {
                        field: field.name.to_owned(),
                        looked_at: fragments.iter().map(shown).collect(),
                    },
                    field.name,
                )
            }));
            continue;
        }
        let (Strategy::Override { value: value_rule }, Merged::Override(s)) =
            (&rule.strategy, &field.merged)
        else {
            continue;
        };
        if !value_rule.has_constraints() || s.value.is_null() {
            continue;
        }
        // Written by a layer: that fragment passed the same rule already.
        let from_layer = s
            .origin
            .as_ref()
            .and_then(|o| fragments.iter().find(|f| f.layer == o.layer))
            .and_then(|f| f.fields().get(field.name))
            == Some(&*s.value);
        if from_layer {
            continue;
        }
        let made_by = if spec.name_field.as_deref() == Some(field.name)
            && s.value.as_str() == Some(effective.name.as_str())
        {
            format!(
                "no layer sets '{}', so it is the skill's file name",
                field.name
            )
        } else {
            "no layer sets it, so it is the spec's default".to_owned()
        };
        for kind in validator.check_value(spec, field.name, &s.value) {
            let kind = match kind {
                DiagnosticKind::Constraint {
                    field,
                    constraint,
                    problem,
                } => DiagnosticKind::Constraint {
                    field,
                    constraint,
                    problem: format!("{problem} ({made_by})"),
                },
                other => other,
            };
            out.push(at_top(kind, field.name));
        }
    }
    out
}

/// Bytes of the size cap per section or change a value merged by section
/// may be merged from: 131,072 under the default 4 MiB cap, far more than
/// any skill's instructions hold. Each becomes a piece of the merged value
/// with its provenance, or a change, and a row of `explain` (about a
/// kilobyte on the way out); a body of `#` lines has one every two bytes,
/// which would cost that much per two bytes of text (`benches/README.md`).
pub const CAP_BYTES_PER_SECTION: u64 = 32;

/// The values merged by section ([`crate::merge::sections`]) whose layers
/// hold more sections and changes than `cap` allows
/// ([`CAP_BYTES_PER_SECTION`]): an error at the one past the limit. Counts
/// what the merge would read, layer by layer, without merging: the
/// changes of each layer that asks, and the sections of the value below
/// the first of them, which a layer that replaces the value whole starts
/// again.
pub fn sections(spec: &MergeSpec, fragments: &[Fragment], cap: u64) -> Vec<Diagnostic> {
    use crate::merge::sections;
    let limit = cap / CAP_BYTES_PER_SECTION;
    let mut out = Vec::new();
    for field in spec.fields.iter().filter(|f| f.sections.is_some()) {
        let always = field.sections == Some(crate::spec::Sections::Always);
        // How many may still be read, and the value replaced whole that a
        // layer changing it by section would split.
        let mut left = limit;
        let mut whole: Option<(&Fragment, &str)> = None;
        let mut past = None;
        for f in fragments {
            match f.fields().get(&field.name) {
                None => {}
                Some(Value::String(text)) if always || sections::asks(text) => {
                    for (f, text, changes) in whole
                        .take()
                        .map(|(f, t)| (f, t, false))
                        .into_iter()
                        .chain([(f, text.as_str(), true)])
                    {
                        match sections::count(text, changes, left) {
                            Ok(n) => left -= n,
                            Err(line) => {
                                past = Some((f, line));
                                break;
                            }
                        }
                    }
                    if past.is_some() {
                        break;
                    }
                }
                Some(Value::String(text)) => {
                    left = limit;
                    whole = Some((f, text));
                }
                // `null` resets the field, and a value of another type
                // (`$patch: delete`) replaces it.
                Some(_) => {
                    left = limit;
                    whole = None;
                }
            }
        }
        if let Some((f, line)) = past {
            out.push(
                Diagnostic::error(
                    Some(&f.path),
                    DiagnosticKind::TooManySections {
                        field: field.name.clone(),
                        limit,
                        cap,
                    },
                )
                .in_layer(f.layer)
                .at(f.position_in_value(&field_pointer(&field.name), line))
                .on_field(&field.name),
            );
        }
    }
    out
}

/// The diagnostic of a required field some layer did set (to something
/// empty, or to `null`); `None` when no layer sets it at all.
fn required(
    field: &FieldMerge,
    fragments: &[Fragment],
    shown: &dyn Fn(&Fragment) -> String,
) -> Option<Diagnostic> {
    let pointer = field_pointer(field.name);
    let reset_layer = field.reset_by.as_ref().map(|o| o.layer);
    let setter = fragments
        .iter()
        .rev()
        .find(|f| f.fields().get(field.name).is_some_and(|v| !v.is_null()))
        .filter(|f| reset_layer.is_none_or(|r| f.layer > r));
    let (fragment, problem) = match (setter, reset_layer) {
        (Some(f), _) => {
            let what = match &field.merged {
                Merged::Override(s) => match &*s.value {
                    Value::String(v) if v.is_empty() => "its value is empty".to_owned(),
                    Value::String(_) => "its value is only whitespace".to_owned(),
                    Value::Array(_) => "its value is an empty list".to_owned(),
                    _ => "its value is an empty mapping".to_owned(),
                },
                Merged::Append(_) => "it has no items".to_owned(),
                Merged::Keyed(_) => "it has no entries".to_owned(),
                Merged::Deep(_) => "it has no keys".to_owned(),
            };
            (f, format!("{what} (set in {})", shown(f)))
        }
        (None, Some(layer)) => {
            let f = fragments.iter().find(|f| f.layer == layer)?;
            (
                f,
                format!(
                    "{} resets it with null and no layer above sets it",
                    shown(f)
                ),
            )
        }
        (None, None) => return None,
    };
    Some(
        Diagnostic::error(
            Some(&fragment.path),
            DiagnosticKind::RequiredEmpty {
                field: field.name.to_owned(),
                problem,
            },
        )
        .in_layer(fragment.layer)
        .at(fragment.position(&pointer, false))
        .on_field(field.name),
    )
}

/// The sections of values merged by section whose heading matches none of
/// the lower layers' but one of them when case and spacing are ignored
/// (`## a` over `## A`): a warning at the section naming the heading the
/// lower layers have, since the section was added as a new one.
pub fn near_miss_headings(spec: &MergeSpec, fragments: &[Fragment]) -> Vec<Diagnostic> {
    use crate::merge::sections;
    use std::collections::HashMap;
    fn fold(h: &str) -> String {
        h.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    }
    let mut out = Vec::new();
    for field in spec.fields.iter().filter(|f| f.sections.is_some()) {
        let always = field.sections == Some(crate::spec::Sections::Always);
        let asks = |f: &Fragment| match f.fields().get(&field.name) {
            Some(Value::String(text)) => always || sections::asks(text),
            _ => false,
        };
        // Only a layer that merges by section can add a near miss: without
        // one, the lower layers' headings are not worth splitting out.
        if !fragments.iter().any(asks) {
            continue;
        }
        // The lower layers' headings, exactly and folded.
        let mut exact: std::collections::HashSet<String> = Default::default();
        let mut folded: HashMap<String, String> = HashMap::new();
        let add = |h: &str,
                   exact: &mut std::collections::HashSet<String>,
                   folded: &mut HashMap<String, String>| {
            exact.insert(h.to_owned());
            folded.entry(fold(h)).or_insert_with(|| h.to_owned());
        };
        let pointer = format!("/{}", crate::fragment::escape_pointer(&field.name));
        for f in fragments {
            match f.fields().get(&field.name) {
                Some(Value::String(text)) if always || sections::asks(text) => {
                    let Ok(ops) = sections::ops(text) else {
                        continue;
                    };
                    for op in ops {
                        let sections::Op::Put { section, .. } = op else {
                            continue;
                        };
                        let h = section.key.heading.as_str();
                        if h.is_empty() || exact.contains(h) {
                            continue;
                        }
                        if let Some(existing) = folded.get(&fold(h))
                            && !exact.is_empty()
                        {
                            out.push(
                                Diagnostic::warning(
                                    Some(&f.path),
                                    DiagnosticKind::NearMissHeading {
                                        path: crate::text::excerpt(
                                            &format!("{}[{}]", field.name, section.key.label()),
                                            crate::text::EXCERPT_CHARS,
                                        ),
                                        existing: crate::text::excerpt(
                                            existing,
                                            crate::text::EXCERPT_CHARS,
                                        ),
                                    },
                                )
                                .in_layer(f.layer)
                                .at(f.position_in_value(&pointer, section.line))
                                .on_field(&field.name),
                            );
                            if out.len() >= crate::validate::MAX_PER_FILE {
                                return out;
                            }
                        }
                        add(h, &mut exact, &mut folded);
                    }
                }
                Some(Value::String(text)) => {
                    exact.clear();
                    folded.clear();
                    for s in sections::split(text) {
                        add(&s.key.heading, &mut exact, &mut folded);
                    }
                }
                Some(_) => {
                    exact.clear();
                    folded.clear();
                }
                None => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::layer::Layer;
    use crate::merge::merge;
    use crate::merge::tests::frag;

    fn spec() -> MergeSpec {
        MergeSpec::from_str(
            "version: 1\nname_field: name\nfields:\n  \
             name: {strategy: OVERRIDE, type: string, pattern: '^[a-z]+$', pattern_help: lowercase letters}\n  \
             description: {strategy: OVERRIDE, type: string, required: true}\n  \
             flag: {strategy: OVERRIDE, type: boolean, required: true}\n  \
             tags: {strategy: APPEND, required: true}\n  \
             refs: {strategy: KEYED_REPLACE, required: true}\n  \
             meta: {strategy: DEEP_MERGE, required: true}\n  \
             plain: {strategy: APPEND}\n",
            Path::new("spec.yaml"),
        )
        .unwrap()
    }

    fn problems(name: &str, fragments: &[Fragment]) -> Vec<String> {
        let spec = spec();
        let validator = Validator::new(&spec);
        let e = merge(&spec, name, fragments);
        effective(&spec, &validator, &e, fragments, &|f| {
            format!("{}/x", f.layer.label())
        })
        .iter()
        .map(|d| format!("{}: {}", d.layer.map_or("-", |l| l.label()), d.kind))
        .collect()
    }

    fn full() -> serde_json::Value {
        json!({"description": "d", "flag": false, "tags": ["t"], "refs": ["r"], "meta": {"k": 1}})
    }

    #[test]
    fn a_value_in_any_layer_satisfies_required() {
        assert!(
            problems(
                "s",
                &[frag(Layer::Base, full()), frag(Layer::User, json!({}))]
            )
            .is_empty()
        );
    }

    #[test]
    fn empty_means_blank_string_no_item_no_entry_no_key_but_false_is_a_value() {
        let p = problems(
            "s",
            &[frag(
                Layer::Team,
                json!({"description": " \n", "flag": false, "tags": [], "refs": [], "meta": {}}),
            )],
        );
        assert_eq!(
            p,
            [
                "team: 'description' is required but its value is only whitespace (set in team/x)",
                "team: 'meta' is required but it has no keys (set in team/x)",
                "team: 'refs' is required but it has no entries (set in team/x)",
                "team: 'tags' is required but it has no items (set in team/x)",
            ]
        );
    }

    #[test]
    fn no_layer_names_the_files_looked_at_and_a_reset_names_the_layer() {
        let mut user = full();
        user["description"] = json!(null);
        user.as_object_mut().unwrap().remove("flag");
        let p = problems(
            "s",
            &[
                frag(Layer::Base, json!({"description": "d"})),
                frag(Layer::User, user),
            ],
        );
        assert_eq!(
            p,
            [
                "user: 'description' is required but user/x resets it with null and no layer above sets it",
                "user: 'flag' is required but no layer sets it (looked at base/x, user/x)",
            ]
        );
    }

    #[test]
    fn deep_merge_deletions_can_empty_a_required_mapping() {
        let mut user = full();
        user["meta"] = json!({"k": null});
        let p = problems("s", &[frag(Layer::Base, full()), frag(Layer::User, user)]);
        assert_eq!(
            p,
            ["user: 'meta' is required but it has no keys (set in user/x)"]
        );
    }

    #[test]
    fn checking_only_the_needed_fields_finds_the_same_problems() {
        let spec = spec();
        let validator = Validator::new(&spec);
        let fragments = [frag(Layer::Team, json!({"description": " ", "tags": []}))];
        let shown = |f: &Fragment| f.layer.label().to_owned();
        let full = merge(&spec, "Bad", &fragments);
        let only = crate::merge::merge_only(&spec, "Bad", &fragments, needs);
        assert!(only.fields.len() < full.fields.len());
        assert_eq!(
            effective(&spec, &validator, &only, &fragments, &shown),
            effective(&spec, &validator, &full, &fragments, &shown)
        );
    }

    #[test]
    fn the_name_taken_from_the_file_name_must_fit_the_pattern() {
        let p = problems("My_Skill", &[frag(Layer::Base, full())]);
        assert_eq!(
            p,
            [
                "base: 'name' must be lowercase letters; got 'My_Skill' (no layer sets 'name', so it is the skill's file name)"
            ]
        );
        let mut named = full();
        named["name"] = json!("fine");
        assert!(problems("My_Skill", &[frag(Layer::Base, named)]).is_empty());
        assert!(problems("fine", &[frag(Layer::Base, full())]).is_empty());
    }
}
