//! KEYED_REPLACE: entries identified by their first present key field;
//! a higher layer's entry replaces the lower one in place, new ones append.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::provenance::Sourced;
use crate::spec::Field;

use super::{Contribution, field_pointer, item_pointer, origin};

/// An entry's identity: the key field that identifies it and its value,
/// borrowed from the spec and the entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Identity<'a> {
    /// The key field (`name`, `id`, ...). A plain string entry uses the first key.
    pub key: &'a str,
    /// The key's value.
    pub value: &'a str,
}

/// The identity of `entry` under `keys`: the first key present with a
/// non-empty string value. A non-empty string entry is keyed by itself,
/// under the first key, so `style.md` and `{name: style.md}` are one entry.
pub fn identity<'a>(entry: &'a Value, keys: &'a [String]) -> Option<Identity<'a>> {
    match entry {
        Value::String(s) if !s.is_empty() => Some(Identity {
            key: keys.first()?,
            value: s,
        }),
        Value::Object(m) => keys.iter().find_map(|k| match m.get(k) {
            Some(Value::String(v)) if !v.is_empty() => Some(Identity { key: k, value: v }),
            _ => None,
        }),
        _ => None,
    }
}

/// One merged entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry<'a> {
    /// Its identity (`None` only for malformed, unvalidated entries).
    pub identity: Option<Identity<'a>>,
    /// The entry, its origin and the entries it replaced.
    pub item: Sourced<'a>,
}

/// Merges one KEYED_REPLACE field.
pub(super) fn merge<'a>(
    field: &'a Field,
    keys: &'a [String],
    layers: &[Contribution<'a>],
) -> Vec<Entry<'a>> {
    let mut out: Vec<Entry<'a>> = match &field.default {
        Value::Array(items) => items
            .iter()
            .map(|v| Entry {
                identity: identity(v, keys),
                item: Sourced::default_value(v),
            })
            .collect(),
        _ => Vec::new(),
    };
    let base = field_pointer(&field.name);
    for &(f, v) in layers {
        let Value::Array(items) = v else {
            continue;
        };
        // Entries of this layer only replace entries of lower layers.
        let lower = out.len();
        // Small lists (the usual case) are scanned; long ones get an index
        // so that a huge fragment cannot make the merge quadratic.
        let index: Option<BTreeMap<Identity, usize>> = (lower * items.len() > 4096).then(|| {
            let mut m = BTreeMap::new();
            for (pos, e) in out.iter().enumerate() {
                if let Some(id) = e.identity {
                    m.entry(id).or_insert(pos);
                }
            }
            m
        });
        for (i, v) in items.iter().enumerate() {
            let id = identity(v, keys);
            let at = origin(f, item_pointer(&base, i));
            let existing = id.and_then(|id| match &index {
                Some(m) => m.get(&id).copied(),
                None => out[..lower].iter().position(|e| e.identity == Some(id)),
            });
            match existing {
                Some(pos) => {
                    let old = std::mem::take(&mut out[pos].item);
                    out[pos].item = old.replaced_by(v, at);
                }
                None => out.push(Entry {
                    identity: id,
                    item: Sourced::new(v, at),
                }),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::{contributions, frag, spec};
    use super::*;
    use crate::fragment::Fragment;
    use crate::layer::Layer;
    use serde_json::json;

    fn merge<'a>(field: &'a Field, keys: &'a [String], fs: &'a [Fragment]) -> Vec<Entry<'a>> {
        super::merge(field, keys, &contributions(field, fs))
    }

    #[test]
    fn same_key_replaced_in_place_new_keys_appended() {
        let spec = spec();
        let fs = [
            frag(
                Layer::Base,
                json!({"references": [{"name": "style", "url": "b"}, {"name": "other"}]}),
            ),
            frag(
                Layer::User,
                json!({"references": [{"name": "extras"}, {"name": "style", "url": "u"}]}),
            ),
        ];
        let keys = ["name".to_string(), "id".to_string()];
        let entries = merge(spec.field("references").unwrap(), &keys, &fs);
        let values: Vec<_> = entries
            .iter()
            .map(|e| e.item.value.clone().into_owned())
            .collect();
        assert_eq!(
            values,
            [
                json!({"name": "style", "url": "u"}),
                json!({"name": "other"}),
                json!({"name": "extras"})
            ]
        );
        assert_eq!(entries[0].item.overrode[0].origin.layer, Layer::Base);
    }

    #[test]
    fn key_field_is_part_of_the_identity() {
        let keys = ["name".to_string(), "id".to_string()];
        assert_ne!(
            identity(&json!({"name": "x"}), &keys),
            identity(&json!({"id": "x"}), &keys)
        );
        assert_eq!(
            identity(&json!("x"), &keys),
            identity(&json!({"name": "x"}), &keys)
        );
        assert_eq!(
            identity(&json!({"name": "", "id": "y"}), &keys)
                .unwrap()
                .key,
            "id"
        );
        assert_eq!(identity(&json!({"url": "y"}), &keys), None);
    }
}
