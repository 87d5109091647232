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

/// One key of the flattened field: its path below the field, and the layer
/// and JSON pointer it was written at, when the merge recorded them.
struct Leaf<'m> {
    path: Vec<&'m str>,
    at: Option<(Layer, String)>,
}

/// Every leaf of `merged` as the `string-map` rendering sees it: a value
/// that is not a non-empty mapping.
fn leaves<'m>(merged: &'m Merged<'_>, path: &mut Vec<&'m str>, out: &mut Vec<Leaf<'m>>) {
    match merged {
        Merged::Deep(tree) => {
            for (k, m) in tree {
                path.push(k);
                match m {
                    Merged::Deep(t) if !t.is_empty() => leaves(m, path, out),
                    Merged::Override(s) => {
                        let at = s.origin.as_ref().map(|o| (o.layer, o.pointer.clone()));
                        match &*s.value {
                            Value::Object(o) if !o.is_empty() => value_leaves(o, at, path, out),
                            _ => out.push(Leaf {
                                path: path.clone(),
                                at,
                            }),
                        }
                    }
                    other => out.push(Leaf {
                        path: path.clone(),
                        at: first_origin(other),
                    }),
                }
                path.pop();
            }
        }
        Merged::Override(s) => {
            if let Value::Object(o) = &*s.value {
                let at = s.origin.as_ref().map(|o| (o.layer, o.pointer.clone()));
                value_leaves(o, at, path, out);
            }
        }
        _ => {}
    }
}

/// [`leaves`] of a mapping one layer wrote whole, at `at`.
fn value_leaves<'m>(
    m: &'m Map<String, Value>,
    at: Option<(Layer, String)>,
    path: &mut Vec<&'m str>,
    out: &mut Vec<Leaf<'m>>,
) {
    for (k, v) in m {
        path.push(k);
        let here = at
            .as_ref()
            .map(|(l, p)| (*l, format!("{p}/{}", escape_pointer(k))));
        match v {
            Value::Object(inner) if !inner.is_empty() => value_leaves(inner, here, path, out),
            _ => out.push(Leaf {
                path: path.clone(),
                at: here,
            }),
        }
        path.pop();
    }
}

/// The origin of the first value inside `m` (an APPEND or KEYED value
/// under its own rule): where the key it sits under was written.
fn first_origin(m: &Merged<'_>) -> Option<(Layer, String)> {
    let o = match m {
        Merged::Override(s) => s.origin.as_ref(),
        Merged::Append(items) => items.first().and_then(|s| s.origin.as_ref()),
        Merged::Keyed(entries) => entries.first().and_then(|e| e.item.origin.as_ref()),
        Merged::Deep(_) => None,
    }?;
    // The key's own pointer: the value's, less the item's index.
    let pointer = match m {
        Merged::Override(_) => o.pointer.clone(),
        _ => o
            .pointer
            .rsplit_once('/')
            .map_or_else(|| o.pointer.clone(), |(p, _)| p.to_owned()),
    };
    Some((o.layer, pointer))
}

/// The key `path` as the string-map rendering writes it: the keys joined
/// with `.` (an empty key adds no dot at the start).
fn flat(path: &[&str]) -> String {
    let mut out = String::new();
    for k in path {
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(k);
    }
    out
}

/// The problems of field `field` (merged from `fragments`) for the
/// targets `by` that flatten it: for each two keys written as one, a
/// diagnostic of `severity` at each key naming the other.
pub(crate) fn problems(
    field: &FieldMerge<'_>,
    fragments: &[Fragment],
    by: &str,
    severity: Severity,
) -> Vec<Diagnostic> {
    if !may_collide(&field.merged) {
        return Vec::new();
    }
    let mut all = Vec::new();
    leaves(&field.merged, &mut Vec::new(), &mut all);
    let mut first: HashMap<String, usize> = HashMap::with_capacity(all.len());
    let mut pairs = Vec::new();
    for (i, leaf) in all.iter().enumerate() {
        match first.entry(flat(&leaf.path)) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(i);
            }
            std::collections::hash_map::Entry::Occupied(e) => {
                pairs.push((*e.get(), i, e.key().clone()));
                if pairs.len() >= MAX_COLLISIONS {
                    break;
                }
            }
        }
    }
    let mut out = Vec::with_capacity(2 * pairs.len());
    for (a, b, key) in pairs {
        let (da, db) = (
            located(field.name, &all[a], fragments, severity),
            located(field.name, &all[b], fragments, severity),
        );
        for (mut d, this, other, other_at) in [
            (da.clone(), &all[a], &all[b], db.location()),
            (db, &all[b], &all[a], da.location()),
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
    let pointer = match &leaf.at {
        Some((_, p)) => p.clone(),
        None => {
            let mut p = crate::merge::field_pointer(field);
            for k in &leaf.path {
                p.push('/');
                p.push_str(&escape_pointer(k));
            }
            p
        }
    };
    let fragment = match &leaf.at {
        Some((layer, _)) => fragments.iter().find(|f| f.layer == *layer),
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
