//! DEEP_MERGE: mappings merged recursively; the same path overrides,
//! distinct paths coexist, `null` deletes a key.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::fragment::Fragment;
use crate::provenance::Sourced;
use crate::spec::Field;

use super::{Contribution, field_pointer, origin, push_segment};

/// A merged mapping: inner nodes are mappings, leaves carry origins.
#[derive(Debug, Clone, PartialEq)]
pub enum Tree<'a> {
    /// A mapping (possibly empty).
    Map(BTreeMap<&'a str, Tree<'a>>),
    /// A scalar or list, replaced wholesale by a higher layer.
    Leaf(Sourced<'a>),
}

impl<'a> Tree<'a> {
    /// The value without provenance.
    pub fn to_value(&self) -> Value {
        match self {
            Tree::Map(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| ((*k).to_owned(), v.to_value()))
                    .collect(),
            ),
            Tree::Leaf(s) => s.value.clone().into_owned(),
        }
    }

    /// Every leaf with its path below the field, in key order.
    pub fn leaves(&self) -> Vec<(Vec<&'a str>, &Sourced<'a>)> {
        let mut out = Vec::new();
        let mut stack: Vec<(Vec<&'a str>, &Tree<'a>)> = vec![(Vec::new(), self)];
        while let Some((path, node)) = stack.pop() {
            match node {
                Tree::Leaf(s) => out.push((path, s)),
                Tree::Map(m) => {
                    for (k, v) in m.iter().rev() {
                        let mut p = path.clone();
                        p.push(k);
                        stack.push((p, v));
                    }
                }
            }
        }
        out
    }

    /// `value` as a tree; leaves get their origin in `source` (none for a
    /// spec default) at `pointer` extended by their path.
    fn from_value(value: &'a Value, source: Option<&Fragment>, pointer: &mut String) -> Tree<'a> {
        match value {
            Value::Object(m) => Tree::from_map(m, source, pointer),
            v => Tree::Leaf(match source {
                Some(f) => Sourced::new(v, origin(f, pointer.clone())),
                None => Sourced::default_value(v),
            }),
        }
    }

    fn from_map(
        m: &'a Map<String, Value>,
        source: Option<&Fragment>,
        pointer: &mut String,
    ) -> Tree<'a> {
        let mut out = BTreeMap::new();
        for (k, v) in m {
            if v.is_null() {
                continue;
            }
            let len = pointer.len();
            push_segment(pointer, k);
            out.insert(k.as_str(), Tree::from_value(v, source, pointer));
            pointer.truncate(len);
        }
        Tree::Map(out)
    }

    /// Applies a higher layer's mapping (from `source`, at `pointer`) on top
    /// of `self`.
    fn apply(&mut self, higher: &'a Map<String, Value>, source: &Fragment, pointer: &mut String) {
        let Tree::Map(lower) = self else {
            // A mapping meeting a non-mapping: the higher layer wins.
            *self = Tree::from_map(higher, Some(source), pointer);
            return;
        };
        for (k, v) in higher {
            let len = pointer.len();
            push_segment(pointer, k);
            match (lower.get_mut(k.as_str()), v) {
                (_, Value::Null) => {
                    lower.remove(k.as_str());
                }
                (Some(node @ Tree::Map(_)), Value::Object(m)) => node.apply(m, source, pointer),
                (Some(Tree::Leaf(old)), v) if !v.is_object() => {
                    let replaced = std::mem::take(old);
                    *old = replaced.replaced_by(v, origin(source, pointer.clone()));
                }
                (_, v) => {
                    lower.insert(k.as_str(), Tree::from_value(v, Some(source), pointer));
                }
            }
            pointer.truncate(len);
        }
    }
}

/// Merges one DEEP_MERGE field.
pub(super) fn merge<'a>(field: &'a Field, layers: &[Contribution<'a>]) -> Tree<'a> {
    let mut tree = Tree::Map(BTreeMap::new());
    if field.default.is_object() {
        // Defaults carry no origin.
        tree = Tree::from_value(&field.default, None, &mut String::new());
    }
    let base = field_pointer(&field.name);
    let mut pointer = String::new();
    for &(f, v) in layers {
        pointer.clone_from(&base);
        match v {
            Value::Object(m) => tree.apply(m, f, &mut pointer),
            Value::Null => {}
            // Not a mapping (only if validation was skipped): taken wholesale.
            v => tree = Tree::from_value(v, Some(f), &mut pointer),
        }
    }
    tree
}

#[cfg(test)]
mod tests {
    use super::super::tests::{contributions, frag, spec};
    use super::*;
    use crate::layer::Layer;
    use serde_json::json;

    fn merge<'a>(field: &'a Field, fs: &'a [Fragment]) -> Tree<'a> {
        super::merge(field, &contributions(field, fs))
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
        let leaves = tree.leaves();
        assert_eq!(leaves[0].0, ["limits", "max_tokens"]);
        assert_eq!(
            leaves[0].1.origin.as_ref().unwrap().pointer,
            "/metadata/limits/max_tokens"
        );
        assert_eq!(*leaves[0].1.overrode[0].value, json!(1000));
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
