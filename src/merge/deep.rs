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
        let run = layers[..from]
            .iter()
            .rposition(|c| c.value.is_object())
            .map_or(0, |i| i + 1);
        let (first, later) = layers[run..].split_first_mut().expect("run < from");
        let mut out = first.take_sourced();
        for c in later {
            out = replaced_by(out, c);
        }
        return Merged::Override(out);
    }
    // Each key's values, lowest layer first: the values of every layer's
    // keys in one list, sorted by key (a stable sort keeps the layer order).
    // One list for the mapping instead of a list per key in a B-tree map:
    // those were a fifth of a merge's allocations.
    let mut values: Vec<Contribution<'a>> = Vec::with_capacity(
        layers[from..]
            .iter()
            .map(|c| c.value.as_object().map_or(0, |m| m.len()))
            .sum(),
    );
    for c in &layers[from..] {
        let Value::Object(m) = c.value else { continue };
        for (k, v) in m {
            if walk.directives && k == PATCH {
                continue;
            }
            values.push(c.child(k, v));
        }
    }
    // One mapping's keys are sorted already.
    if from + 1 != layers.len() || !maps_are_sorted() {
        values.sort_by(|a, b| a.key.cmp(b.key));
    }
    let mut tree = Tree::new();
    let len = walk.path.len();
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
            group => {
                walk.path.push('.');
                walk.path.push_str(k);
                let merged = walk.nested(key_rule, group);
                walk.path.truncate(len);
                merged
            }
        };
        if let Some(m) = merged {
            tree.insert(k, m);
        }
        start = end;
    }
    // Keys whose rule has a default appear even when no layer sets them
    // (merging nothing records no change, so their order does not matter).
    if let Strategy::DeepMerge { fields } = &rule.strategy {
        for f in fields.iter().filter(|f| f.has_default) {
            if !tree.contains_key(f.name.as_str()) {
                walk.path.push('.');
                walk.path.push_str(&f.name);
                if let Some(m) = walk.nested(f, &mut []) {
                    tree.insert(&f.name, m);
                }
                walk.path.truncate(len);
            }
        }
    }
    Merged::Deep(tree)
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
