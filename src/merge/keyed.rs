//! KEYED_REPLACE: entries identified by their first present key field;
//! a higher layer's entry replaces the lower one in place, new ones append.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::fragment::Fragment;
use crate::provenance::Sourced;
use crate::spec::Field;

use super::{field_pointer, item_pointer, origin};

/// An entry's identity: the key field that identifies it and its value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Identity {
    /// The key field (`name`, `id`, ...). A plain string entry uses the first key.
    pub key: String,
    /// The key's value.
    pub value: String,
}

/// The identity of `entry` under `keys`: the first key present with a
/// non-empty string value. A non-empty string entry is keyed by itself,
/// under the first key, so `style.md` and `{name: style.md}` are one entry.
pub fn identity(entry: &Value, keys: &[String]) -> Option<Identity> {
    match entry {
        Value::String(s) if !s.is_empty() => Some(Identity {
            key: keys.first()?.clone(),
            value: s.clone(),
        }),
        Value::Object(m) => keys.iter().find_map(|k| match m.get(k) {
            Some(Value::String(v)) if !v.is_empty() => Some(Identity {
                key: k.clone(),
                value: v.clone(),
            }),
            _ => None,
        }),
        _ => None,
    }
}

/// One merged entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Its identity (`None` only for malformed, unvalidated entries).
    pub identity: Option<Identity>,
    /// The entry, its origin and the entries it replaced.
    pub item: Sourced,
}

/// Merges one KEYED_REPLACE field.
pub(super) fn merge(field: &Field, keys: &[String], fragments: &[Fragment]) -> Vec<Entry> {
    let mut out: Vec<Entry> = match &field.default {
        Value::Array(items) => items
            .iter()
            .map(|v| Entry {
                identity: identity(v, keys),
                item: Sourced {
                    value: v.clone(),
                    origin: None,
                    overrode: Vec::new(),
                },
            })
            .collect(),
        _ => Vec::new(),
    };
    for f in fragments {
        let Some(Value::Array(items)) = f.fields().get(&field.name) else {
            continue;
        };
        let base = field_pointer(&field.name);
        // Entries of this layer only replace entries of lower layers.
        let lower = out.len();
        // Small lists (the usual case) are scanned; long ones get an index
        // so that a huge fragment cannot make the merge quadratic.
        let index: Option<BTreeMap<Identity, usize>> = (lower * items.len() > 4096).then(|| {
            let mut m = BTreeMap::new();
            for (pos, e) in out.iter().enumerate() {
                if let Some(id) = &e.identity {
                    m.entry(id.clone()).or_insert(pos);
                }
            }
            m
        });
        for (i, v) in items.iter().enumerate() {
            let id = identity(v, keys);
            let at = origin(f, item_pointer(&base, i));
            let existing = id.as_ref().and_then(|id| match &index {
                Some(m) => m.get(id).copied(),
                None => out[..lower]
                    .iter()
                    .position(|e| e.identity.as_ref() == Some(id)),
            });
            match existing {
                Some(pos) => {
                    let old = std::mem::take(&mut out[pos].item);
                    out[pos].item = old.replaced_by(v.clone(), at);
                }
                None => out.push(Entry {
                    identity: id,
                    item: Sourced::new(v.clone(), at),
                }),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::{frag, spec};
    use super::*;
    use crate::layer::Layer;
    use serde_json::json;

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
        let entries = merge(
            spec.field("references").unwrap(),
            &["name".into(), "id".into()],
            &fs,
        );
        let values: Vec<_> = entries.iter().map(|e| e.item.value.clone()).collect();
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
