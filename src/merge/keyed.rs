//! KEYED_REPLACE: entries identified by their first present key field;
//! a higher layer's entry replaces the lower one in place (or, under
//! `entries: merge`, is merged into it key by key), new ones append. In a
//! version 2 spec, `{name: x, $patch: delete}` removes the lower entry `x`
//! and `{$patch: replace}` makes the layer's entries replace theirs.
//!
//! An entry without a key (kept only under `unkeyed: append`; validation
//! refuses it otherwise) replaces nothing and nothing replaces it: every
//! one comes after the keyed entries, in the order the layers, lowest
//! first, hold them, as Bernstein's layered module merges.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::Value;

use crate::merge::provenance::{Shadowed, Sourced};
use crate::spec::{EntriesMode, Field, StrategyKind};

use super::{
    ChangeKind, Contribution, IMPLICIT, Merged, PATCH, Walk, deep, item_pointer, keyed_segment,
    origin,
};
use crate::spec::directive::{self, Form, form_of};

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
    /// The entry, its origin and the entries it replaced. Under
    /// `entries: merge`, the value is the merged entry, the origin the
    /// highest layer that set it, and `overrode` the lower versions merged in.
    pub item: Sourced<'a>,
    /// Under `entries: merge`, for an entry more than one layer set: the
    /// entry merged key by key, with the origin of each value.
    pub parts: Option<Box<Merged<'a>>>,
}

/// An entry being merged; under `entries: merge`, with its contributions
/// since it was last replaced whole (none are kept under `replace`, where
/// they would not be read).
struct Slot<'a> {
    identity: Option<Identity<'a>>,
    item: Sourced<'a>,
    parts: Vec<Contribution<'a>>,
}

/// Merges one KEYED_REPLACE list.
pub(super) fn merge<'a>(
    walk: &mut Walk<'a>,
    field: &'a Field,
    keys: &'a [String],
    mode: EntriesMode,
    layers: &[Contribution<'a>],
    top: bool,
) -> Vec<Entry<'a>> {
    let replaced = walk.list_replaced(&field.strategy, layers);
    let merging = mode == EntriesMode::Merge;
    let mut out: Vec<Option<Slot<'a>>> = Vec::new();
    // The entries without a key, in encounter order: they go after `out`.
    let mut unkeyed: Vec<Slot<'a>> = Vec::new();
    if (top || field.has_default)
        && !replaced
        && let Value::Array(items) = &field.default
    {
        for v in items {
            let slot = Slot {
                identity: identity(v, keys),
                item: Sourced::default_value(v),
                parts: if merging {
                    vec![Contribution {
                        fragment: None,
                        value: v,
                        pointer: String::new(),
                        key: "",
                    }]
                } else {
                    Vec::new()
                },
            };
            match slot.identity {
                Some(_) => out.push(Some(slot)),
                None => unkeyed.push(slot),
            }
        }
    }
    for c in layers {
        let (Some(f), Value::Array(items)) = (c.fragment, c.value) else {
            continue;
        };
        // Entries of this layer only replace entries of lower layers.
        let lower = out.len();
        // Small lists (the usual case) are scanned; long ones get an index
        // so that a huge fragment cannot make the merge quadratic.
        let index: Option<BTreeMap<Identity, usize>> = (lower * items.len() > 4096).then(|| {
            let mut m = BTreeMap::new();
            for (pos, e) in out.iter().enumerate() {
                if let Some(id) = e.as_ref().and_then(|e| e.identity) {
                    m.entry(id).or_insert(pos);
                }
            }
            m
        });
        let find = |out: &[Option<Slot<'a>>], id: Option<Identity<'a>>| {
            let id = id?;
            let pos = match &index {
                Some(m) => m.get(&id).copied(),
                None => out[..lower]
                    .iter()
                    .position(|e| e.as_ref().is_some_and(|e| e.identity == Some(id))),
            }?;
            out[pos].is_some().then_some(pos)
        };
        for (i, v) in items.iter().enumerate() {
            let id = identity(v, keys);
            let pointer = item_pointer(&c.pointer, i);
            let mut whole = !merging;
            let mut value = Cow::Borrowed(v);
            if walk.directives && directive::is_directive(v) {
                match form_of(&field.strategy, v) {
                    Some(Form::EntryDelete) => {
                        let seg = keyed_segment(id.as_ref(), keys, i);
                        let by = origin(f, pointer);
                        match find(&out, id) {
                            Some(pos) => {
                                let gone = out[pos].take().expect("found entries are live");
                                let mut dropped: Vec<Shadowed<'a>> = gone
                                    .item
                                    .origin
                                    .map(|o| Shadowed {
                                        value: gone.item.value,
                                        origin: o,
                                    })
                                    .into_iter()
                                    .collect();
                                dropped.extend(gone.item.overrode);
                                walk.change(
                                    &seg,
                                    (ChangeKind::Deleted, StrategyKind::KeyedReplace),
                                    by,
                                    dropped,
                                );
                            }
                            None => walk.change(
                                &seg,
                                (ChangeKind::Stale, StrategyKind::KeyedReplace),
                                by,
                                Vec::new(),
                            ),
                        }
                        continue;
                    }
                    // The entry replaces the lower one whole, even when
                    // entries merge; the directive itself is not kept.
                    Some(Form::EntryReplace) => {
                        whole = true;
                        if let Value::Object(m) = v {
                            let mut m = m.clone();
                            m.remove(PATCH);
                            value = Cow::Owned(Value::Object(m));
                        }
                    }
                    // `{$patch: replace}` was applied before the merge; a
                    // misspelled directive never passes validation.
                    _ => continue,
                }
            }
            // Under `entries: merge` the entry is kept as a part to merge
            // at the end.
            let part = merging.then(|| Contribution {
                fragment: Some(f),
                value: v,
                pointer: pointer.clone(),
                key: "",
            });
            let at = origin(f, pointer);
            match find(&out, id) {
                Some(pos) => {
                    let slot = out[pos].as_mut().expect("found entries are live");
                    let old = std::mem::take(&mut slot.item);
                    slot.item = old.replaced_by(v, at);
                    slot.item.value = value;
                    if whole {
                        slot.parts.clear();
                    }
                    slot.parts.extend(part);
                }
                None => {
                    let slot = Slot {
                        identity: id,
                        item: Sourced {
                            value,
                            ..Sourced::new(v, at)
                        },
                        parts: part.into_iter().collect(),
                    };
                    match id {
                        Some(_) => out.push(Some(slot)),
                        None => unkeyed.push(slot),
                    }
                }
            }
        }
    }
    let keys_path = walk.path.len();
    out.into_iter()
        .flatten()
        .chain(unkeyed)
        .enumerate()
        .map(|(i, mut slot)| {
            let mut item = slot.item;
            // An entry set by one layer is merged too when it holds what
            // a merge acts on (a `null`, a directive), so that neither
            // reaches the effective skill.
            let acts = |c: &Contribution| holds_reset(c.value, walk.directives);
            let parts = (slot.parts.len() > 1 || slot.parts.iter().any(acts)).then(|| {
                walk.path
                    .push_str(&keyed_segment(slot.identity.as_ref(), keys, i));
                let merged = deep::merge(walk, &IMPLICIT, &mut slot.parts, false);
                walk.path.truncate(keys_path);
                item.value = Cow::Owned(merged.to_value());
                Box::new(merged)
            });
            Entry {
                identity: slot.identity,
                item,
                parts,
            }
        })
        .collect()
}

/// Does the entry `v` hold, at any depth of mappings, a `null` or (with
/// directives) a `$patch` key below its top: something a deep merge acts
/// on? (The entry's own `$patch` is its verb, already applied.)
fn holds_reset(v: &Value, directives: bool) -> bool {
    fn below(v: &Value, directives: bool) -> bool {
        match v {
            Value::Object(m) => m
                .iter()
                .any(|(k, v)| v.is_null() || (directives && k == PATCH) || below(v, directives)),
            _ => false,
        }
    }
    match v {
        Value::Object(m) => m
            .iter()
            .any(|(k, v)| k != PATCH && (v.is_null() || below(v, directives))),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{contributions, frag, spec, walk};
    use super::*;
    use crate::fragment::Fragment;
    use crate::layer::Layer;
    use serde_json::json;

    fn merge<'a>(field: &'a Field, keys: &'a [String], fs: &'a [Fragment]) -> Vec<Entry<'a>> {
        super::merge(
            &mut walk(field),
            field,
            keys,
            EntriesMode::Replace,
            &contributions(field, fs),
            true,
        )
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

    /// Bernstein's order: the keyed entries as they merge, then every entry
    /// without a key, lowest layer first, each layer's in its order; none
    /// replaces another, however equal.
    #[test]
    fn entries_without_a_key_come_after_the_keyed_ones_in_encounter_order() {
        let spec = spec();
        let fs = [
            frag(
                Layer::Base,
                json!({"references": [{"url": "b1"}, {"name": "style", "url": "b"}, {"url": "b2"}]}),
            ),
            frag(
                Layer::Team,
                json!({"references": [{"url": "b1"}, {"name": "", "url": "t"}, {"name": "glossary"}]}),
            ),
            frag(
                Layer::User,
                json!({"references": [{"name": "style", "url": "u"}, {"id": 7}]}),
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
                json!({"name": "glossary"}),
                json!({"url": "b1"}),
                json!({"url": "b2"}),
                json!({"url": "b1"}),
                json!({"name": "", "url": "t"}),
                json!({"id": 7}),
            ]
        );
        let layers: Vec<_> = entries
            .iter()
            .map(|e| e.item.origin.as_ref().map(|o| o.layer))
            .collect();
        assert_eq!(
            layers[2..],
            [
                Some(Layer::Base),
                Some(Layer::Base),
                Some(Layer::Team),
                Some(Layer::Team),
                Some(Layer::User)
            ]
        );
        assert!(
            entries[2..]
                .iter()
                .all(|e| e.identity.is_none() && e.item.overrode.is_empty())
        );
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
