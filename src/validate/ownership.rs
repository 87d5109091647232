//! Which layers may set a value: the spec's `layers` attribute.
//!
//! A rule with `layers: [base, team]` (a top-level field's, or a nested
//! key's under a DEEP_MERGE rule's `fields:`) lets only those layers set
//! its value. A value in any other layer is one error at that value, however
//! it is written: a plain value, `null`, a `$patch` directive, or a mapping
//! or list that holds directives. Only the outermost refused value is
//! reported, not the values inside it. This is how a team fixes what a
//! personal layer may not widen.
//!
//! [`walk`] visits the values a fragment sets that a rule covers, at any
//! depth; `refused` uses it to find the ones the fragment's layer may not
//! set. The validator runs it only when some rule of the spec has `layers`
//! (`any_owned`), so a spec without the attribute pays nothing.

use serde_json::{Map, Value};

use crate::error::{Diagnostic, DiagnosticKind};
use crate::fragment::Fragment;
use crate::layer::Layer;
use crate::merge::push_segment;
use crate::spec::{Field, MergeSpec, Strategy};
use crate::text::{EXCERPT_CHARS, excerpt};
use crate::validate::Kept;

/// Where [`walk`] is: the JSON pointer of the value in its fragment
/// (`/metadata/tools`) and its path as `explain` writes it
/// (`metadata.tools`).
#[derive(Debug)]
pub struct At<'w> {
    /// The value's JSON pointer in the fragment.
    pub pointer: &'w str,
    /// The value's path: the field, then `.key` for each key below it.
    pub path: &'w str,
}

/// What [`walk`] does after visiting a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Visit the keys below it that have rules.
    Into,
    /// Go on with its siblings, not below it.
    Over,
    /// Stop the walk.
    Stop,
}

/// Calls `visit` with every value of `fragment` that a rule of `spec`
/// covers: each top-level field the spec declares, and, below a DEEP_MERGE
/// field whose value is a mapping, each key its rule declares a rule for
/// (`fields:`), at any depth, as long as `visit` says [`Step::Into`]. Keys
/// without a rule of their own (and `$patch`) are not visited: they are
/// their ancestor's business. Siblings come in key order.
///
/// The cost is one lookup per key the fragment sets at the levels visited:
/// bounded by the fragment's size, whatever the spec holds.
pub fn walk<'s>(
    spec: &'s MergeSpec,
    fragment: &Fragment,
    visit: &mut dyn FnMut(&At<'_>, &'s Field, &Value) -> Step,
) {
    let mut pointer = String::new();
    let mut path = String::new();
    level(
        &spec.fields,
        fragment.fields(),
        &mut pointer,
        &mut path,
        visit,
    );
}

/// The values of `map` that one of `rules` (sorted by name) covers, and
/// below them. False when the walk stops.
fn level<'s>(
    rules: &'s [Field],
    map: &Map<String, Value>,
    pointer: &mut String,
    path: &mut String,
    visit: &mut dyn FnMut(&At<'_>, &'s Field, &Value) -> Step,
) -> bool {
    if rules.is_empty() {
        return true;
    }
    let mut one = |rule: &'s Field, value: &Value| -> bool {
        let (pointer_len, path_len) = (pointer.len(), path.len());
        push_segment(pointer, &rule.name);
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(&rule.name);
        let step = visit(
            &At {
                pointer: pointer.as_str(),
                path: path.as_str(),
            },
            rule,
            value,
        );
        let go_on = match (step, &rule.strategy, value) {
            (Step::Stop, _, _) => false,
            (Step::Into, Strategy::DeepMerge { fields }, Value::Object(m)) => {
                level(fields, m, pointer, path, visit)
            }
            _ => true,
        };
        pointer.truncate(pointer_len);
        path.truncate(path_len);
        go_on
    };
    // Whichever is shorter is walked, the other looked up in: both are
    // sorted by name, so the values come in key order either way.
    if rules.len() <= map.len() {
        for rule in rules {
            if let Some(value) = map.get(&rule.name)
                && !one(rule, value)
            {
                return false;
            }
        }
    } else {
        for (key, value) in map {
            if let Ok(i) = rules.binary_search_by(|r| r.name.as_str().cmp(key))
                && !one(&rules[i], value)
            {
                return false;
            }
        }
    }
    true
}

/// The layers that may set `field`'s value, when that is not all three.
pub fn owners(field: &Field) -> Option<&[Layer]> {
    field.owners()
}

/// Does any rule of `spec`, at any depth, keep a layer from setting it?
pub(crate) fn any_owned(spec: &MergeSpec) -> bool {
    fn owned(fields: &[Field]) -> bool {
        fields.iter().any(|f| {
            owners(f).is_some()
                || matches!(&f.strategy, Strategy::DeepMerge { fields } if owned(fields))
        })
    }
    owned(&spec.fields)
}

/// Why a layer may not set a value.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Refusal<'s> {
    /// The value's own rule does not list the layer.
    NotOwner,
    /// The value resets or replaces a mapping that holds `owned` (at
    /// `path` below it), whose rule does not list the layer: the reset
    /// would remove what that layer may not touch.
    Reset {
        /// The owned key's rule.
        owned: &'s Field,
        /// Its path below the mapping (`allowed`, `limits.max`).
        path: &'s str,
    },
}

/// Does `value` throw away the lower layers' mapping: `null`, or (with
/// directives) `{$patch: delete}` or a mapping with `$patch: replace`?
fn resets(spec: &MergeSpec, value: &Value) -> bool {
    value.is_null()
        || (spec.directives() && crate::spec::directive::Verb::of_mapping(value).is_some())
}

/// The first key below a DEEP_MERGE rule (at any depth) that `layer` may
/// not set, with its path below the rule.
fn owned_below(rule: &Field, layer: Layer) -> Option<(&Field, String)> {
    let Strategy::DeepMerge { fields } = &rule.strategy else {
        return None;
    };
    fields.iter().find_map(|f| {
        if !f.allows_layer(layer) {
            return Some((f, f.name.clone()));
        }
        owned_below(f, layer).map(|(o, p)| (o, format!("{}.{p}", f.name)))
    })
}

/// Calls `found` with each value of `fragment` that its layer may not set
/// (see [`walk`] for the order): the outermost one only, not the values
/// inside it.
pub(crate) fn refused<'s>(
    spec: &'s MergeSpec,
    fragment: &Fragment,
    found: &mut dyn FnMut(&At<'_>, &'s Field, Refusal<'_>),
) {
    walk(spec, fragment, &mut |at, rule, value| {
        if !rule.allows_layer(fragment.layer) {
            found(at, rule, Refusal::NotOwner);
            return Step::Over;
        }
        if resets(spec, value)
            && let Some((owned, path)) = owned_below(rule, fragment.layer)
        {
            found(at, rule, Refusal::Reset { owned, path: &path });
            return Step::Over;
        }
        Step::Into
    });
}

/// May `fragment`'s layer set every value it sets?
pub fn allowed(spec: &MergeSpec, fragment: &Fragment) -> bool {
    let mut ok = true;
    walk(spec, fragment, &mut |_, rule, value| {
        if rule.allows_layer(fragment.layer)
            && !(resets(spec, value) && owned_below(rule, fragment.layer).is_some())
        {
            Step::Into
        } else {
            ok = false;
            Step::Stop
        }
    });
    ok
}

/// Offers each value of `fragment` its layer may not set to `kept`, located
/// at its key (where the value is set; at the value when the key has no
/// position, as for a SKILL.md body).
pub(crate) fn offer(spec: &MergeSpec, fragment: &Fragment, kept: &mut Kept) {
    refused(spec, fragment, &mut |at, rule, why| {
        let pos = fragment
            .position(at.pointer, true)
            .or_else(|| fragment.position(at.pointer, false));
        kept.offer_at(at.pointer.to_owned(), pos, || match why {
            Refusal::NotOwner => refusal(at.path, rule),
            Refusal::Reset { owned, path } => DiagnosticKind::ResetOfOwned {
                field: excerpt(at.path, EXCERPT_CHARS),
                owned: excerpt(&format!("{}.{path}", at.path), EXCERPT_CHARS),
                allowed: owned.layers.clone().unwrap_or_default(),
            },
        });
    });
}

/// Each file of a skill (and each lower-layer file it replaced) that a
/// layer the spec does not let provide files there provides, as an error
/// at that file.
pub fn files(spec: &MergeSpec, files: &[crate::source::files::SkillFile]) -> Vec<Diagnostic> {
    if spec.file_owners.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for f in files {
        let Some(owner) = spec.file_owner(&f.rel) else {
            continue;
        };
        for source in std::iter::once(&f.source).chain(&f.replaced) {
            if owner.layers.contains(&source.layer) {
                continue;
            }
            out.push(
                Diagnostic::error(
                    Some(&source.path),
                    DiagnosticKind::FileNotAllowed {
                        file: excerpt(&f.rel, EXCERPT_CHARS),
                        dir: excerpt(&owner.dir, EXCERPT_CHARS),
                        allowed: owner.layers.clone(),
                    },
                )
                .in_layer(source.layer),
            );
        }
    }
    out.sort_by(|a, b| (a.layer, &a.file).cmp(&(b.layer, &b.file)));
    out
}

/// Might skill files in `located` break the spec's file ownership: does a
/// layer not allowed under an owned directory have that directory? One
/// lookup per owned directory and layer, so that commands that read no
/// files (`show`) only walk them when they must.
pub(crate) fn may_hold_owned_files(spec: &MergeSpec, located: &[crate::source::Located]) -> bool {
    located.iter().any(|l| {
        let Some(skill_dir) = l.skill_dir() else {
            return false;
        };
        spec.file_owners.iter().any(|o| {
            !o.layers.contains(&l.layer)
                && !l
                    .root
                    .metadata(&skill_dir.join(&o.dir))
                    .is_err_and(|r| r.is_not_found())
        })
    })
}

/// The error for a value at `path` that a layer outside `rule`'s `layers`
/// set.
pub fn refusal(path: &str, rule: &Field) -> DiagnosticKind {
    DiagnosticKind::LayerNotAllowed {
        field: excerpt(path, EXCERPT_CHARS),
        allowed: rule.layers.clone().unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::layer::Form;

    fn spec() -> MergeSpec {
        MergeSpec::from_str(
            "version: 2\nfields:\n  \
             description: {strategy: OVERRIDE, type: string}\n  \
             allowed-tools: {strategy: OVERRIDE, layers: [team, base]}\n  \
             references: {strategy: KEYED_REPLACE, layers: [base, team]}\n  \
             trigger_keywords: {strategy: APPEND, layers: [base]}\n  \
             metadata:\n    strategy: DEEP_MERGE\n    fields:\n      \
             allowed: {strategy: OVERRIDE, layers: [base, team]}\n      \
             limits:\n        strategy: DEEP_MERGE\n        layers: [base, user]\n        \
             fields:\n          max: {strategy: OVERRIDE, layers: [base]}\n  \
             owned:\n    strategy: DEEP_MERGE\n    layers: [base]\n    fields:\n      \
             inner: {strategy: OVERRIDE, layers: [base]}\n",
            Path::new("spec.yaml"),
        )
        .unwrap()
    }

    fn fragment(layer: Layer, text: &str) -> Fragment {
        Fragment::from_str(
            text.into(),
            Form::Yaml,
            layer,
            Path::new("f.yaml"),
            &Default::default(),
        )
        .unwrap()
    }

    /// `pointer path` of each refused value.
    fn refused_in(layer: Layer, text: &str) -> Vec<String> {
        let spec = spec();
        let f = fragment(layer, text);
        let mut out = Vec::new();
        refused(&spec, &f, &mut |at, _, _| {
            out.push(format!("{} {}", at.pointer, at.path))
        });
        assert_eq!(allowed(&spec, &f), out.is_empty(), "{text}");
        out
    }

    #[test]
    fn the_walk_visits_top_level_fields_and_keys_with_rules_at_any_depth() {
        let spec = spec();
        let f = fragment(
            Layer::User,
            "description: d\nunknown: 1\nmetadata:\n  free: {allowed: 1}\n  allowed: x\n  \
             limits: {max: 2, other: 3}\n  $patch: replace\nowned: {inner: 1}\n",
        );
        let mut seen = Vec::new();
        walk(&spec, &f, &mut |at, rule, value| {
            seen.push(format!("{} {} {} {value}", at.pointer, at.path, rule.name));
            Step::Into
        });
        assert_eq!(
            seen,
            [
                "/description description description \"d\"",
                "/metadata metadata metadata {\"$patch\":\"replace\",\"allowed\":\"x\",\"free\":{\"allowed\":1},\"limits\":{\"max\":2,\"other\":3}}",
                "/metadata/allowed metadata.allowed allowed \"x\"",
                "/metadata/limits metadata.limits limits {\"max\":2,\"other\":3}",
                "/metadata/limits/max metadata.limits.max max 2",
                "/owned owned owned {\"inner\":1}",
                "/owned/inner owned.inner inner 1",
            ]
        );
        // Over skips what is below; Stop ends the walk.
        let mut n = 0;
        walk(&spec, &f, &mut |_, _, _| {
            n += 1;
            Step::Over
        });
        assert_eq!(n, 3);
        let mut n = 0;
        walk(&spec, &f, &mut |_, _, _| {
            n += 1;
            Step::Stop
        });
        assert_eq!(n, 1);
    }

    #[test]
    fn a_value_in_a_layer_its_rule_does_not_list_is_refused_outermost_only() {
        let text = "description: d\nallowed-tools: Read\nreferences: [a, {name: b, $patch: delete}]\n\
                    trigger_keywords: null\nmetadata:\n  allowed: null\n  free: 1\n  \
                    limits: {max: 1}\nowned: {$patch: delete}\n";
        assert_eq!(
            refused_in(Layer::User, text),
            [
                "/allowed-tools allowed-tools",
                "/metadata/allowed metadata.allowed",
                "/metadata/limits/max metadata.limits.max",
                "/owned owned",
                "/references references",
                "/trigger_keywords trigger_keywords",
            ]
        );
        // The team may set what it owns; `limits` is not its to set, so
        // `max` below it is not reported again.
        assert_eq!(
            refused_in(Layer::Team, text),
            [
                "/metadata/limits metadata.limits",
                "/owned owned",
                "/trigger_keywords trigger_keywords",
            ]
        );
        assert!(refused_in(Layer::Base, text).is_empty());
        // A mapping that is not one, or no value at all: nothing below.
        assert!(refused_in(Layer::User, "metadata: {free: 1}\ndescription: x\n").is_empty());
    }

    #[test]
    fn the_validator_locates_each_refusal_at_its_key_within_the_cap() {
        let spec = spec();
        let v = crate::Validator::new(&spec);
        let f = fragment(
            Layer::User,
            "description: d\nallowed-tools: [Read]\nmetadata:\n  free: 1\n  allowed:\n    - x\n",
        );
        assert!(!v.is_valid(&spec, &f));
        let lines: Vec<String> = v
            .validate(&spec, &f)
            .iter()
            .map(|d| d.to_string())
            .collect();
        assert_eq!(
            lines,
            [
                "f.yaml:2:1: error: 'allowed-tools' may be set only in the base and team layers",
                "f.yaml:5:3: error: 'metadata.allowed' may be set only in the base and team layers",
            ]
        );
        assert!(v.is_valid(&spec, &fragment(Layer::Team, "allowed-tools: [Read]\n")));
        // Sixty owned fields set: fifty errors, then one counting the rest.
        let mut text = String::from("version: 2\nfields:\n");
        let mut frag = String::new();
        for i in 0..60 {
            text.push_str(&format!(
                "  f{i:02}: {{strategy: OVERRIDE, layers: [base]}}\n"
            ));
            frag.push_str(&format!("f{i:02}: 1\n"));
        }
        let many = MergeSpec::from_str(&text, Path::new("spec.yaml")).unwrap();
        let ds = crate::Validator::new(&many).validate(&many, &fragment(Layer::Team, &frag));
        assert_eq!(ds.len(), 51);
        assert_eq!(
            ds[49].to_string(),
            "f.yaml:50:1: error: 'f49' may be set only in the base layer"
        );
        assert_eq!(
            ds[50].to_string(),
            "f.yaml: error: 10 more problem(s) in this file not shown; fix the ones above first"
        );
    }

    #[test]
    fn ownership_is_looked_for_at_any_depth_once() {
        assert!(any_owned(&spec()));
        let plain = MergeSpec::from_str(
            "version: 2\nfields:\n  m:\n    strategy: DEEP_MERGE\n    fields:\n      \
             k: {strategy: OVERRIDE}\n",
            Path::new("spec.yaml"),
        )
        .unwrap();
        assert!(!any_owned(&plain));
        let deep = MergeSpec::from_str(
            "version: 2\nfields:\n  m:\n    strategy: DEEP_MERGE\n    fields:\n      \
             k:\n        strategy: DEEP_MERGE\n        fields:\n          \
             j: {strategy: OVERRIDE, layers: [user]}\n",
            Path::new("spec.yaml"),
        )
        .unwrap();
        assert!(any_owned(&deep));
    }

    #[test]
    fn layers_in_words() {
        use crate::layer::layers_phrase;
        assert_eq!(layers_phrase(&[Layer::Base]), "the base layer");
        assert_eq!(
            layers_phrase(&[Layer::Base, Layer::Team]),
            "the base and team layers"
        );
        assert_eq!(layers_phrase(&Layer::ALL), "the base, team and user layers");
    }
}
