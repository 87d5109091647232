//! APPEND: lists concatenated base → team → user, duplicates kept.

use serde_json::Value;

use crate::fragment::Fragment;
use crate::provenance::Sourced;
use crate::spec::Field;

use super::{field_pointer, item_pointer, origin};

/// Merges one APPEND field.
pub(super) fn merge(field: &Field, fragments: &[Fragment]) -> Vec<Sourced> {
    let mut out: Vec<Sourced> = match &field.default {
        Value::Array(items) => items
            .iter()
            .map(|v| Sourced {
                value: v.clone(),
                origin: None,
                overrode: Vec::new(),
            })
            .collect(),
        _ => Vec::new(),
    };
    let base = field_pointer(&field.name);
    for f in fragments {
        match f.fields().get(&field.name) {
            Some(Value::Array(items)) => {
                out.extend(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, v)| Sourced::new(v.clone(), origin(f, item_pointer(&base, i)))),
                );
            }
            Some(Value::Null) | None => {}
            // Not a list (only if validation was skipped): one item.
            Some(v) => out.push(Sourced::new(v.clone(), origin(f, base.clone()))),
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
    fn concatenated_in_layer_order_with_duplicates() {
        let spec = spec();
        let fs = [
            frag(Layer::Base, json!({"trigger_keywords": ["a", "b"]})),
            frag(Layer::User, json!({"trigger_keywords": ["b", "c"]})),
        ];
        let items = merge(spec.field("trigger_keywords").unwrap(), &fs);
        let values: Vec<_> = items.iter().map(|s| s.value.clone()).collect();
        assert_eq!(values, [json!("a"), json!("b"), json!("b"), json!("c")]);
        assert_eq!(
            items[3].origin.as_ref().unwrap().pointer,
            "/trigger_keywords/1"
        );
        assert_eq!(items[3].origin.as_ref().unwrap().layer, Layer::User);
    }
}
