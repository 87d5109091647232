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

use crate::merge::provenance::{Origin, Shadowed, Sourced};
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
    let mut list = List {
        keys,
        merging: mode == EntriesMode::Merge,
        out: Vec::new(),
        unkeyed: Vec::new(),
    };
    if (top || field.has_default)
        && !replaced
        && let Value::Array(items) = &field.default
    {
        list.defaults(items);
    }
    for c in layers {
        let (Some(f), Value::Array(items)) = (c.fragment, c.value) else {
            continue;
        };
        list.layer(walk, field, f, &c.pointer, items);
    }
    list.finish(walk)
}

/// A KEYED_REPLACE list being merged.
struct List<'a> {
    keys: &'a [String],
    /// `entries: merge`: each entry's contributions are kept, to merge at
    /// the end.
    merging: bool,
    /// The keyed entries, in order; `None` where one was deleted.
    out: Vec<Option<Slot<'a>>>,
    /// The entries without a key, in encounter order: they go after `out`.
    unkeyed: Vec<Slot<'a>>,
}

impl<'a> List<'a> {
    /// Adds `slot`, among the keyed entries or, without a key, after them.
    fn push(&mut self, slot: Slot<'a>) {
        match slot.identity {
            Some(_) => self.out.push(Some(slot)),
            None => self.unkeyed.push(slot),
        }
    }

    /// Starts the list with the spec's default entries, `items`.
    fn defaults(&mut self, items: &'a [Value]) {
        for v in items {
            let part = Contribution {
                fragment: None,
                value: v,
                pointer: String::new(),
                key: "",
            };
            self.push(Slot {
                identity: identity(v, self.keys),
                item: Sourced::default_value(v),
                parts: if self.merging { vec![part] } else { Vec::new() },
            });
        }
    }

    /// Merges the entries `items` of one layer's fragment `f` (at
    /// `pointer`) into the list: each deletes, replaces or merges into the
    /// entry of a lower layer with its identity, or is added.
    fn layer(
        &mut self,
        walk: &mut Walk<'a>,
        field: &'a Field,
        f: &'a crate::fragment::Fragment,
        pointer: &str,
        items: &'a [Value],
    ) {
        let lower = Lower::of(&self.out, items.len());
        for (i, v) in items.iter().enumerate() {
            let id = identity(v, self.keys);
            let pointer = item_pointer(pointer, i);
            let mut whole = !self.merging;
            let mut value = Cow::Borrowed(v);
            if walk.directives && directive::is_directive(v) {
                match form_of(&field.strategy, v) {
                    Some(Form::EntryDelete) => {
                        let seg = keyed_segment(id.as_ref(), self.keys, i);
                        let found = lower.find(&self.out, id);
                        self.delete(walk, found, &seg, origin(f, pointer));
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
            let part = self.merging.then(|| Contribution {
                fragment: Some(f),
                value: v,
                pointer: pointer.clone(),
                key: "",
            });
            let at = origin(f, pointer);
            match lower.find(&self.out, id) {
                Some(pos) => {
                    let slot = self.out[pos].as_mut().expect("found entries are live");
                    let old = std::mem::take(&mut slot.item);
                    slot.item = old.replaced_by(v, at);
                    slot.item.value = value;
                    if whole {
                        slot.parts.clear();
                    }
                    slot.parts.extend(part);
                }
                None => self.push(Slot {
                    identity: id,
                    item: Sourced {
                        value,
                        ..Sourced::new(v, at)
                    },
                    parts: part.into_iter().collect(),
                }),
            }
        }
    }

    /// A `$patch: delete` entry (at `seg`, written at `by`): deletes the
    /// lower entry `found`, recorded with what it dropped, or is stale.
    fn delete(&mut self, walk: &mut Walk<'a>, found: Option<usize>, seg: &str, by: Origin) {
        let kind = StrategyKind::KeyedReplace;
        let Some(pos) = found else {
            walk.change(seg, (ChangeKind::Stale, kind), by, Vec::new());
            return;
        };
        let gone = self.out[pos].take().expect("found entries are live");
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
        walk.change(seg, (ChangeKind::Deleted, kind), by, dropped);
    }

    /// The merged entries: the keyed ones, then those without a key; each
    /// that more than one layer set, under `entries: merge`, merged key by
    /// key.
    fn finish(self, walk: &mut Walk<'a>) -> Vec<Entry<'a>> {
        let keys = self.keys;
        let keys_path = walk.path.len();
        self.out
            .into_iter()
            .flatten()
            .chain(self.unkeyed)
            .enumerate()
            .map(|(i, mut slot)| {
                let mut item = slot.item;
                // An entry set by one layer is merged too when it holds
                // what a merge acts on (a `null`, a directive), so that
                // neither reaches the effective skill.
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
}

/// Finds an entry of the lower layers by its identity, while one layer's
/// entries are merged (they only replace entries of lower layers).
struct Lower<'a> {
    /// How many entries the lower layers left.
    len: usize,
    /// Small lists (the usual case) are scanned; long ones get an index
    /// so that a huge fragment cannot make the merge quadratic.
    index: Option<BTreeMap<Identity<'a>, usize>>,
}

impl<'a> Lower<'a> {
    /// The lower entries `out`, for a layer of `items` entries.
    fn of(out: &[Option<Slot<'a>>], items: usize) -> Self {
        let len = out.len();
        let index = (len * items > 4096).then(|| {
            let mut m = BTreeMap::new();
            for (pos, e) in out.iter().enumerate() {
                if let Some(id) = e.as_ref().and_then(|e| e.identity) {
                    m.entry(id).or_insert(pos);
                }
            }
            m
        });
        Lower { len, index }
    }

    /// Where in `out` the live lower entry with identity `id` is.
    fn find(&self, out: &[Option<Slot<'a>>], id: Option<Identity<'a>>) -> Option<usize> {
        let id = id?;
        let pos = match &self.index {
            Some(m) => m.get(&id).copied(),
            None => out[..self.len]
                .iter()
                .position(|e| e.as_ref().is_some_and(|e| e.identity == Some(id))),
        }?;
        out[pos].is_some().then_some(pos)
    }
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
