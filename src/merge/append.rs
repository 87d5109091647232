//! APPEND: lists concatenated base → team → user, duplicates kept unless
//! the rule says `unique`. In a version 2 spec, an element
//! `{$patch: delete, value: X}` removes the lower layers' items equal to
//! `X`, and `{$patch: replace}` makes the layer's items replace theirs.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::merge::provenance::{Shadowed, Sourced};
use crate::spec::{Field, StrategyKind};

use super::{ChangeKind, Contribution, Walk, item_pointer, origin};
use crate::spec::directive::{self, Form, form_of};

/// Above this many comparisons, equality is checked through a set of the
/// items' JSON text instead of a scan, so a huge list cannot make the merge
/// quadratic.
const SCAN_LIMIT: usize = 4096;

/// Merges one APPEND list.
pub(super) fn merge<'a>(
    walk: &mut Walk<'a>,
    field: &'a Field,
    unique: bool,
    layers: &[Contribution<'a>],
    top: bool,
) -> Vec<Sourced<'a>> {
    let replaced = walk.list_replaced(&field.strategy, layers);
    let mut out: Vec<Sourced<'a>> = Vec::new();
    let mut seen: Option<BTreeSet<String>> = None;
    if (top || field.has_default)
        && !replaced
        && let Value::Array(items) = &field.default
    {
        for v in items {
            if !(unique && contains(&out, &mut seen, v)) {
                push(&mut out, &mut seen, Sourced::default_value(v));
            }
        }
    }
    for c in layers {
        let Some(f) = c.fragment else { continue };
        match c.value {
            Value::Array(items) => {
                // This layer's deletes act on the lower layers' items first,
                // so that the layer may list again an item it deleted below.
                if walk.directives {
                    let deletes: Vec<(&'a Value, usize)> = items
                        .iter()
                        .enumerate()
                        .filter(|(_, v)| form_of(&field.strategy, v) == Some(Form::ItemDelete))
                        .filter_map(|(i, v)| Some((v.get(directive::ITEM)?, i)))
                        .collect();
                    if !deletes.is_empty() {
                        let lower = out.len();
                        delete(walk, &mut out, lower, &deletes, c, f);
                        seen = None;
                    }
                }
                for (i, v) in items.iter().enumerate() {
                    // Deletes are done; `{$patch: replace}` was applied
                    // before the merge; a misspelled directive never passes
                    // validation.
                    if walk.directives && directive::is_directive(v) {
                        continue;
                    }
                    let at = origin(f, item_pointer(&c.pointer, i));
                    if unique && contains(&out, &mut seen, v) {
                        walk.change(
                            "",
                            (ChangeKind::Duplicate, StrategyKind::Append),
                            at,
                            Vec::new(),
                        );
                        continue;
                    }
                    push(&mut out, &mut seen, Sourced::new(v, at));
                }
            }
            Value::Null => {}
            // Not a list (only if validation was skipped): one item.
            v => out.push(Sourced::new(v, origin(f, c.pointer.clone()))),
        }
    }
    out
}

/// Removes from `out[..lower]` (the lower layers' items) every item equal
/// to one of `deletes`, recording what each delete removed, or that it
/// found nothing.
fn delete<'a>(
    walk: &mut Walk<'a>,
    out: &mut Vec<Sourced<'a>>,
    lower: usize,
    deletes: &[(&'a Value, usize)],
    c: &Contribution<'a>,
    f: &crate::fragment::Fragment,
) {
    // The delete an item matches, if any.
    let by_text: Option<std::collections::BTreeMap<String, usize>> =
        (lower * deletes.len() > SCAN_LIMIT).then(|| {
            let mut m = std::collections::BTreeMap::new();
            for (d, (v, _)) in deletes.iter().enumerate() {
                m.entry(v.to_string()).or_insert(d);
            }
            m
        });
    let matching = |v: &Value| match &by_text {
        Some(m) => m.get(&v.to_string()).copied(),
        None => deletes.iter().position(|(d, _)| *d == v),
    };
    let mut removed: Vec<Vec<Shadowed<'a>>> = vec![Vec::new(); deletes.len()];
    let mut hit = vec![false; deletes.len()];
    let mut kept = Vec::with_capacity(out.len());
    for (pos, s) in std::mem::take(out).into_iter().enumerate() {
        match (pos < lower).then(|| matching(&s.value)).flatten() {
            Some(d) => {
                hit[d] = true;
                if let Some(o) = s.origin {
                    removed[d].push(Shadowed {
                        value: s.value,
                        origin: o,
                    });
                }
            }
            None => kept.push(s),
        }
    }
    *out = kept;
    for (d, (_, i)) in deletes.iter().enumerate() {
        let by = origin(f, item_pointer(&c.pointer, *i));
        let kind = if hit[d] {
            ChangeKind::Deleted
        } else {
            ChangeKind::Stale
        };
        walk.change(
            "",
            (kind, StrategyKind::Append),
            by,
            std::mem::take(&mut removed[d]),
        );
    }
}

/// Is `v` equal to an item of `out`? Long lists keep a set of the items'
/// JSON text in `seen` (built on first need, kept up to date by [`push`]).
fn contains(out: &[Sourced], seen: &mut Option<BTreeSet<String>>, v: &Value) -> bool {
    if seen.is_none() && out.len() * out.len() <= SCAN_LIMIT {
        return out.iter().any(|s| *s.value == *v);
    }
    seen.get_or_insert_with(|| out.iter().map(|s| s.value.to_string()).collect())
        .contains(&v.to_string())
}

fn push<'a>(out: &mut Vec<Sourced<'a>>, seen: &mut Option<BTreeSet<String>>, s: Sourced<'a>) {
    if let Some(set) = seen {
        set.insert(s.value.to_string());
    }
    out.push(s);
}

#[cfg(test)]
mod tests {
    use super::super::tests::{contributions, frag, spec, walk};
    use super::*;
    use crate::fragment::Fragment;
    use crate::layer::Layer;
    use serde_json::json;

    fn merge<'a>(field: &'a Field, fs: &'a [Fragment]) -> Vec<Sourced<'a>> {
        super::merge(
            &mut walk(field),
            field,
            false,
            &contributions(field, fs),
            true,
        )
    }

    #[test]
    fn concatenated_in_layer_order_with_duplicates() {
        let spec = spec();
        let fs = [
            frag(Layer::Base, json!({"trigger_keywords": ["a", "b"]})),
            frag(Layer::User, json!({"trigger_keywords": ["b", "c"]})),
        ];
        let items = merge(spec.field("trigger_keywords").unwrap(), &fs);
        let values: Vec<_> = items.iter().map(|s| s.value.clone().into_owned()).collect();
        assert_eq!(values, [json!("a"), json!("b"), json!("b"), json!("c")]);
        assert_eq!(
            items[3].origin.as_ref().unwrap().pointer,
            "/trigger_keywords/1"
        );
        assert_eq!(items[3].origin.as_ref().unwrap().layer, Layer::User);
    }
}
