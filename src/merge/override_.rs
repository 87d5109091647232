//! OVERRIDE: the highest layer that sets the field wins, wholesale.

use crate::merge::provenance::{Origin, Sourced};
use crate::spec::Field;

use super::{Contribution, replaced_by};

/// Merges one OVERRIDE value. `reset_by` is the layer whose `null` the
/// contributions start after, if any.
pub(super) fn merge<'a>(
    field: &'a Field,
    layers: &mut [Contribution<'a>],
    reset_by: Option<Origin>,
) -> Sourced<'a> {
    let mut out = Sourced {
        origin: reset_by,
        ..Sourced::default_value(&field.default)
    };
    for c in layers {
        out = replaced_by(out, c);
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

    fn merge<'a>(field: &'a Field, fs: &'a [Fragment], reset: Option<Origin>) -> Sourced<'a> {
        super::merge(field, &mut contributions(field, fs), reset)
    }

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
        assert_eq!(*s.value, json!("u"));
        assert_eq!(s.origin.unwrap().layer, Layer::User);
        assert_eq!(s.overrode.len(), 1);
        assert_eq!(*s.overrode[0].value, json!("b"));
    }

    #[test]
    fn unset_is_the_default_with_no_origin() {
        let spec = spec();
        let fs = [frag(Layer::Base, json!({}))];
        let s = merge(spec.field("author").unwrap(), &fs, None);
        assert_eq!(*s.value, json!(""));
        assert!(s.origin.is_none());
    }
}
