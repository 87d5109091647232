//! OVERRIDE: the highest layer that sets the field wins, wholesale.

use crate::fragment::Fragment;
use crate::provenance::{Origin, Sourced};
use crate::spec::Field;

use super::{field_pointer, origin};

/// Merges one OVERRIDE field. `reset_by` is the layer whose `null` the
/// fragments start after, if any.
pub(super) fn merge(field: &Field, fragments: &[Fragment], reset_by: Option<Origin>) -> Sourced {
    let mut out = Sourced {
        value: field.default.clone(),
        origin: reset_by,
        overrode: Vec::new(),
    };
    for f in fragments {
        if let Some(v) = f.fields().get(&field.name) {
            out = out.replaced_by(v.clone(), origin(f, field_pointer(&field.name)));
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
    fn highest_layer_wins_and_remembers_what_it_replaced() {
        let spec = spec();
        let field = spec.field("description").unwrap();
        let fs = [
            frag(Layer::Base, json!({"description": "b"})),
            frag(Layer::Team, json!({})),
            frag(Layer::User, json!({"description": "u"})),
        ];
        let s = merge(field, &fs, None);
        assert_eq!(s.value, json!("u"));
        assert_eq!(s.origin.unwrap().layer, Layer::User);
        assert_eq!(s.overrode.len(), 1);
        assert_eq!(s.overrode[0].value, json!("b"));
    }

    #[test]
    fn unset_is_the_default_with_no_origin() {
        let spec = spec();
        let s = merge(
            spec.field("author").unwrap(),
            &[frag(Layer::Base, json!({}))],
            None,
        );
        assert_eq!(s.value, json!(""));
        assert!(s.origin.is_none());
    }
}
