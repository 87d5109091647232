//! APPEND: lists concatenated base → team → user, duplicates kept.

use serde_json::Value;

use crate::provenance::Sourced;
use crate::spec::Field;

use super::{Contribution, field_pointer, item_pointer, origin};

/// Merges one APPEND field.
pub(super) fn merge<'a>(field: &'a Field, layers: &[Contribution<'a>]) -> Vec<Sourced<'a>> {
    let mut out: Vec<Sourced<'a>> = match &field.default {
        Value::Array(items) => items.iter().map(Sourced::default_value).collect(),
        _ => Vec::new(),
    };
    let base = field_pointer(&field.name);
    for &(f, v) in layers {
        match v {
            Value::Array(items) => {
                out.extend(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, v)| Sourced::new(v, origin(f, item_pointer(&base, i)))),
                );
            }
            Value::Null => {}
            // Not a list (only if validation was skipped): one item.
            v => out.push(Sourced::new(v, origin(f, base.clone()))),
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

    fn merge<'a>(field: &'a Field, fs: &'a [Fragment]) -> Vec<Sourced<'a>> {
        super::merge(field, &contributions(field, fs))
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
