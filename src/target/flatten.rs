//! Keys that collide when a target flattens a field.
//!
//! A target that renders a field as a `string-map` (the Agent Skills
//! standard's `metadata`) writes every nested key as one dotted key:
//! `sandbox: {network: deny}` becomes `sandbox.network: deny`. A layer that
//! writes the key `"sandbox.network"` itself sets a different key of the
//! effective skill, which the merge keeps beside the nested one, and the
//! flattened file can hold only one of them: whichever the rendering wrote
//! last, not the higher layer's. So the two are reported, each at its key,
//! naming the other: errors for a target asked for, warnings otherwise.
//!
//! Only the keys are looked at, never the spec's field names: the fields
//! come from the targets that flatten them.

use std::collections::HashMap;
use std::hash::BuildHasher;

use serde_json::{Map, Value};

use crate::error::{Diagnostic, DiagnosticKind, Severity};
use crate::fragment::{Fragment, escape_pointer};
use crate::layer::Layer;
use crate::merge::{FieldMerge, Merged};
use crate::text;

/// The most collisions reported for one field: each is two diagnostics.
const MAX_COLLISIONS: usize = crate::validate::MAX_PER_FILE / 2;

/// How many characters of a key a message quotes.
const KEY_CHARS: usize = 40;

/// Can two keys of `merged` be written as one when it is flattened? Only
/// when some key holds a `.` or is empty: otherwise the dotted key is
/// the nested keys joined, and splitting it at the dots gives them back.
/// One walk, nothing allocated.
pub(crate) fn may_collide(merged: &Merged<'_>) -> bool {
    fn in_value(m: &Map<String, Value>) -> bool {
        m.iter().any(|(k, v)| {
            suspect(k)
                || match v {
                    Value::Object(inner) => in_value(inner),
                    _ => false,
                }
        })
    }
    fn suspect(k: &str) -> bool {
        k.is_empty() || k.contains('.')
    }
    match merged {
        Merged::Deep(tree) => tree.iter().any(|(k, m)| suspect(k) || may_collide(m)),
        Merged::Override(s) => match &*s.value {
            Value::Object(m) => in_value(m),
            _ => false,
        },
        _ => false,
    }
}

/// Where a leaf of the flattened field was written: the origin (layer and
/// JSON pointer) of the value that holds it, when the merge recorded one,
/// and how many keys of its path lie below that value's pointer (a mapping
/// one layer wrote whole, under a key with a rule of its own).
#[derive(Clone, Copy)]
struct At<'m> {
    origin: Option<(Layer, &'m str)>,
    below: usize,
}

/// Calls `f` with every leaf of `merged` as the `string-map` rendering sees
/// it (a value that is not a non-empty mapping): its path below the field,
/// and where it was written. Nothing is allocated but `path`'s growth.
fn visit<'m>(
    merged: &'m Merged<'_>,
    path: &mut Vec<&'m str>,
    f: &mut dyn FnMut(&[&'m str], At<'m>),
) {
    match merged {
        Merged::Deep(tree) => {
            for (k, m) in tree {
                path.push(k);
                match m {
                    Merged::Deep(t) if !t.is_empty() => visit(m, path, f),
                    Merged::Override(s) => {
                        let origin = s.origin.as_ref().map(|o| (o.layer, o.pointer.as_str()));
                        match &*s.value {
                            Value::Object(o) if !o.is_empty() => visit_value(o, origin, 0, path, f),
                            _ => f(path, At { origin, below: 0 }),
                        }
                    }
                    other => f(
                        path,
                        At {
                            origin: first_origin(other),
                            below: 0,
                        },
                    ),
                }
                path.pop();
            }
        }
        Merged::Override(s) => {
            if let Value::Object(o) = &*s.value {
                let origin = s.origin.as_ref().map(|o| (o.layer, o.pointer.as_str()));
                visit_value(o, origin, 0, path, f);
            }
        }
        _ => {}
    }
}

/// [`visit`] of a mapping one layer wrote whole, `below` keys below the
/// pointer of `origin`.
fn visit_value<'m>(
    m: &'m Map<String, Value>,
    origin: Option<(Layer, &'m str)>,
    below: usize,
    path: &mut Vec<&'m str>,
    f: &mut dyn FnMut(&[&'m str], At<'m>),
) {
    for (k, v) in m {
        path.push(k);
        match v {
            Value::Object(inner) if !inner.is_empty() => {
                visit_value(inner, origin, below + 1, path, f);
            }
            _ => f(
                path,
                At {
                    origin,
                    below: below + 1,
                },
            ),
        }
        path.pop();
    }
}

/// The origin of the first value inside `m` (an APPEND or KEYED value
/// under its own rule), pointing at the key it sits under.
fn first_origin<'m>(m: &'m Merged<'_>) -> Option<(Layer, &'m str)> {
    let (o, item) = match m {
        Merged::Override(s) => (s.origin.as_ref()?, false),
        Merged::Append(items) => (items.first()?.origin.as_ref()?, true),
        Merged::Keyed(entries) => (entries.first()?.item.origin.as_ref()?, true),
        Merged::Deep(_) => return None,
    };
    // An item's pointer, less its index, is its list's.
    let pointer = match o.pointer.rsplit_once('/') {
        Some((list, _)) if item => list,
        _ => o.pointer.as_str(),
    };
    Some((o.layer, pointer))
}

/// Writes the key `path` as the string-map rendering writes it into `out`:
/// the keys joined with `.` (an empty key adds no dot at the start).
fn flat_into(path: &[&str], out: &mut String) {
    out.clear();
    for k in path {
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(k);
    }
}

/// A leaf whose dotted key another leaf may share: its path and where it
/// was written.
struct Leaf<'m> {
    path: Vec<&'m str>,
    at: At<'m>,
}

/// The problems of field `field` (merged from `fragments`) for the
/// targets `by` that flatten it: for each two keys written as one, a
/// diagnostic of `severity` at each key naming the other.
///
/// Two passes over the leaves, so that a field of many keys and no
/// collision costs a hash per key: the first hashes every dotted key,
/// the second keeps, and compares in full, only the keys whose hash
/// another key has.
pub(crate) fn problems(
    field: &FieldMerge<'_>,
    fragments: &[Fragment],
    by: &str,
    severity: Severity,
) -> Vec<Diagnostic> {
    if !may_collide(&field.merged) {
        return Vec::new();
    }
    let hasher = std::hash::RandomState::new();
    let mut buf = String::new();
    let mut hashes = Vec::new();
    visit(&field.merged, &mut Vec::new(), &mut |path, _| {
        flat_into(path, &mut buf);
        hashes.push(hasher.hash_one(buf.as_str()));
    });
    hashes.sort_unstable();
    let mut shared: Vec<u64> = hashes
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect();
    drop(hashes);
    shared.dedup();
    if shared.is_empty() {
        return Vec::new();
    }
    let mut kept: Vec<Leaf<'_>> = Vec::new();
    let mut first: HashMap<String, usize> = HashMap::new();
    let mut pairs = Vec::new();
    visit(&field.merged, &mut Vec::new(), &mut |path, at| {
        if pairs.len() >= MAX_COLLISIONS {
            return;
        }
        flat_into(path, &mut buf);
        if shared
            .binary_search(&hasher.hash_one(buf.as_str()))
            .is_err()
        {
            return;
        }
        kept.push(Leaf {
            path: path.to_vec(),
            at,
        });
        let i = kept.len() - 1;
        match first.entry(buf.clone()) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(i);
            }
            std::collections::hash_map::Entry::Occupied(e) => {
                pairs.push((*e.get(), i, e.key().clone()));
            }
        }
    });
    let mut out = Vec::with_capacity(2 * pairs.len());
    for (a, b, key) in pairs {
        let (da, db) = (
            located(field.name, &kept[a], fragments, severity),
            located(field.name, &kept[b], fragments, severity),
        );
        for (mut d, this, other, other_at) in [
            (da.clone(), &kept[a], &kept[b], db.location()),
            (db, &kept[b], &kept[a], da.location()),
        ] {
            d.kind = DiagnosticKind::FlattenedKeys {
                targets: by.to_owned(),
                field: text::excerpt(field.name, text::EXCERPT_CHARS),
                key: describe(&this.path),
                other: describe(&other.path),
                other_at,
                flat: text::excerpt(&key, KEY_CHARS * 2),
            };
            out.push(d);
        }
    }
    out
}

/// A diagnostic (its message set later) at the key of `leaf`: where the
/// merge says it was written, or else in the highest layer that has it.
fn located(field: &str, leaf: &Leaf<'_>, fragments: &[Fragment], severity: Severity) -> Diagnostic {
    let pointer = match leaf.at.origin {
        Some((_, p)) => {
            let mut p = p.to_owned();
            for k in &leaf.path[leaf.path.len() - leaf.at.below..] {
                p.push('/');
                p.push_str(&escape_pointer(k));
            }
            p
        }
        None => {
            let mut p = crate::merge::field_pointer(field);
            for k in &leaf.path {
                p.push('/');
                p.push_str(&escape_pointer(k));
            }
            p
        }
    };
    let fragment = match leaf.at.origin {
        Some((layer, _)) => fragments.iter().find(|f| f.layer == layer),
        None => fragments
            .iter()
            .rev()
            .find(|f| f.as_value().pointer(&pointer).is_some()),
    };
    let mut d = Diagnostic::error(
        fragment.map(|f| &*f.path),
        DiagnosticKind::Spec {
            message: String::new(),
        },
    )
    .on_field(field);
    d.severity = severity;
    match fragment {
        Some(f) => d.at(f.position(&pointer, true)).in_layer(f.layer),
        None => d,
    }
}

/// A key's path below its field, each key quoted: `'sandbox' > 'network'`.
fn describe(path: &[&str]) -> String {
    path.iter()
        .map(|k| format!("'{}'", text::excerpt(k, KEY_CHARS)))
        .collect::<Vec<_>>()
        .join(" > ")
}
