//! DEEP_MERGE: mappings merged recursively; the same path overrides,
//! distinct paths coexist, `null` deletes a key. A key the rule declares a
//! rule for (`fields:`) is merged by that rule, at any depth. In a version
//! 2 spec, `$patch: replace` in a mapping replaces the lower layers'
//! mapping whole and `{$patch: delete}` deletes it.

use serde_json::Value;

use crate::spec::Field;

use super::{
    Contribution, IMPLICIT, Merged, PATCH, Tree, Walk, key_rule, maps_are_sorted, replaced_by,
};
use crate::spec::Strategy;
use crate::spec::directive::{Form, form_of};

/// Merges one DEEP_MERGE mapping (or a key below one without a rule).
pub(crate) fn merge<'a>(
    walk: &mut Walk<'a>,
    rule: &'a Field,
    layers: &mut [Contribution<'a>],
    top: bool,
) -> Merged<'a> {
    let replaced = walk.directives
        && layers
            .first()
            .is_some_and(|c| form_of(&rule.strategy, c.value) == Some(Form::MapReplace));
    // The default, as the lowest contribution (it has no origin).
    let mut with_default;
    let layers = if (top || rule.has_default)
        && !replaced
        && rule.default.as_object().is_some_and(|m| !m.is_empty())
    {
        with_default = std::iter::once(Contribution {
            fragment: None,
            value: &rule.default,
            pointer: String::new(),
            key: "",
        })
        .chain(layers.iter().cloned())
        .collect::<Vec<_>>();
        &mut with_default[..]
    } else {
        layers
    };
    // A value that is not a mapping replaces whatever was below it whole,
    // and a mapping above it starts again from that mapping.
    let from = layers
        .iter()
        .rposition(|c| !c.value.is_object())
        .map_or(0, |i| i + 1);
    if from == layers.len() && from > 0 {
        return Merged::Override(top_value(layers));
    }
    let mut values = key_values(walk, &mut layers[from..]);
    let mut tree = merge_keys(walk, rule, &mut values);
    add_defaults(walk, rule, &mut tree);
    Merged::Deep(tree)
}

/// Where the top layer's value is no mapping: that value, replacing the
/// ones of its run of non-mappings below it (the values above the last
/// mapping).
fn top_value<'a>(layers: &mut [Contribution<'a>]) -> super::Sourced<'a> {
    let run = layers
        .iter()
        .rposition(|c| c.value.is_object())
        .map_or(0, |i| i + 1);
    let (first, later) = layers[run..]
        .split_first_mut()
        .expect("the top layer is no mapping");
    let mut out = first.take_sourced();
    for c in later {
        out = replaced_by(out, c);
    }
    out
}

/// Each key's values, lowest layer first: the values of every mapping's
/// keys in one list, sorted by key (a stable sort keeps the layer order);
/// a `$patch` key is a directive, no value. One list for the mapping
/// instead of a list per key in a B-tree map: those were a fifth of a
/// merge's allocations.
fn key_values<'a>(walk: &Walk<'a>, layers: &mut [Contribution<'a>]) -> Vec<Contribution<'a>> {
    let mut values: Vec<Contribution<'a>> = Vec::with_capacity(
        layers
            .iter()
            .map(|c| c.value.as_object().map_or(0, |m| m.len()))
            .sum(),
    );
    for c in layers.iter() {
        let Value::Object(m) = c.value else { continue };
        for (k, v) in m {
            if walk.directives && k == PATCH {
                continue;
            }
            values.push(c.child(k, v));
        }
    }
    // One mapping's keys are sorted already.
    if layers.len() != 1 || !maps_are_sorted() {
        values.sort_by(|a, b| a.key.cmp(b.key));
    }
    values
}

/// Merges each key's values (`values`, sorted by key) by the key's rule.
fn merge_keys<'a>(
    walk: &mut Walk<'a>,
    rule: &'a Field,
    values: &mut [Contribution<'a>],
) -> Tree<'a> {
    let mut tree = Tree::new();
    let mut start = 0;
    while start < values.len() {
        let k = values[start].key;
        let end = start + values[start..].iter().take_while(|c| c.key == k).count();
        let key_rule = key_rule(rule, k);
        let merged = match &mut values[start..end] {
            // A leaf of one layer, under no rule of its own (the usual
            // case): itself, as `nested` would make it, without the walk.
            [only]
                if std::ptr::eq(key_rule, &IMPLICIT)
                    && !only.value.is_null()
                    && !only.value.is_object() =>
            {
                Some(Merged::Override(only.take_sourced()))
            }
            group => nested_key(walk, k, key_rule, group),
        };
        if let Some(m) = merged {
            tree.insert(k, m);
        }
        start = end;
    }
    tree
}

/// Adds the keys whose rule has a default and that no layer sets: they
/// appear all the same (merging nothing records no change, so their order
/// does not matter).
fn add_defaults<'a>(walk: &mut Walk<'a>, rule: &'a Field, tree: &mut Tree<'a>) {
    let Strategy::DeepMerge { fields } = &rule.strategy else {
        return;
    };
    for f in fields.iter().filter(|f| f.has_default) {
        if !tree.contains_key(f.name.as_str())
            && let Some(m) = nested_key(walk, &f.name, f, &mut [])
        {
            tree.insert(&f.name, m);
        }
    }
}

/// Merges the values `group` of key `k` by `rule`, with the key on the
/// walk's path while it does.
fn nested_key<'a>(
    walk: &mut Walk<'a>,
    k: &str,
    rule: &'a Field,
    group: &mut [Contribution<'a>],
) -> Option<Merged<'a>> {
    let len = walk.path.len();
    walk.path.push('.');
    walk.path.push_str(k);
    let merged = walk.nested(rule, group);
    walk.path.truncate(len);
    merged
}

#[cfg(test)]
mod tests {
    use super::super::tests::{contributions, frag, spec, walk};
    use super::*;
    use crate::fragment::Fragment;
    use crate::layer::Layer;
    use serde_json::json;

    fn merge<'a>(field: &'a Field, fs: &'a [Fragment]) -> Merged<'a> {
        super::merge(&mut walk(field), field, &mut contributions(field, fs), true)
    }

    #[test]
    fn same_path_overrides_distinct_paths_coexist_null_deletes() {
        let spec = spec();
        let fs = [
            frag(
                Layer::Base,
                json!({"metadata": {"limits": {"max_tokens": 1000, "temperature": 0.2}, "gone": 1}}),
            ),
            frag(
                Layer::User,
                json!({"metadata": {"limits": {"max_tokens": 2000}, "gone": null}}),
            ),
        ];
        let tree = merge(spec.field("metadata").unwrap(), &fs);
        assert_eq!(
            tree.to_value(),
            json!({"limits": {"max_tokens": 2000, "temperature": 0.2}})
        );
        let Merged::Deep(top) = &tree else {
            panic!("{tree:?}")
        };
        let Merged::Deep(limits) = &top["limits"] else {
            panic!("{top:?}")
        };
        let Merged::Override(s) = &limits["max_tokens"] else {
            panic!("{limits:?}")
        };
        assert_eq!(
            s.origin.as_ref().unwrap().pointer,
            "/metadata/limits/max_tokens"
        );
        assert_eq!(*s.overrode[0].value, json!(1000));
    }

    #[test]
    fn mapping_meeting_scalar_higher_wins() {
        let spec = spec();
        let field = spec.field("metadata").unwrap();
        let fs = [
            frag(Layer::Base, json!({"metadata": {"a": {"b": 1}}})),
            frag(Layer::User, json!({"metadata": {"a": 5}})),
        ];
        assert_eq!(merge(field, &fs).to_value(), json!({"a": 5}));
        let fs = [
            frag(Layer::Base, json!({"metadata": {"a": 5}})),
            frag(Layer::User, json!({"metadata": {"a": {"b": 1}}})),
        ];
        assert_eq!(merge(field, &fs).to_value(), json!({"a": {"b": 1}}));
    }
}
