//! The interpreter: merges fragments field by field under a [`MergeSpec`].
//!
//! [`merge`] walks the spec's fields and dispatches on each field's
//! [`Strategy`] with one exhaustive `match`; each strategy lives in its own
//! module. The function is pure: no I/O, no hash-map iteration, so the same
//! fragments always give the same [`Effective`] skill.

mod append;
mod deep;
mod keyed;
mod override_;

use std::fmt;

use serde_json::{Map, Value};

use crate::fragment::{Fragment, escape_pointer};
use crate::layer::Layer;
use crate::provenance::{Origin, Sourced};
use crate::spec::{Field, LAYERS_PRESENT, MergeSpec, Strategy};

pub use deep::Tree;
pub use keyed::{Entry, Identity, identity};

/// One field of the effective skill, with provenance.
#[derive(Debug, Clone, PartialEq)]
pub enum Merged<'a> {
    /// An OVERRIDE field.
    Override(Sourced<'a>),
    /// An APPEND field: each item with its origin.
    Append(Vec<Sourced<'a>>),
    /// A KEYED_REPLACE field: each entry with its origin and what it replaced.
    Keyed(Vec<Entry<'a>>),
    /// A DEEP_MERGE field: a tree whose leaves carry origins.
    Deep(Tree<'a>),
}

impl Merged<'_> {
    /// The value without provenance.
    pub fn to_value(&self) -> Value {
        match self {
            Merged::Override(s) => s.value.clone().into_owned(),
            Merged::Append(items) => {
                Value::Array(items.iter().map(|s| s.value.clone().into_owned()).collect())
            }
            Merged::Keyed(entries) => Value::Array(
                entries
                    .iter()
                    .map(|e| e.item.value.clone().into_owned())
                    .collect(),
            ),
            Merged::Deep(tree) => tree.to_value(),
        }
    }
}

/// One merged field.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldMerge<'a> {
    /// The field's name.
    pub name: &'a str,
    /// Its strategy's name (`OVERRIDE`, ...).
    pub strategy: &'static str,
    /// The merged value with provenance.
    pub merged: Merged<'a>,
    /// The last layer that reset the field with `null`, if any.
    pub reset_by: Option<Origin>,
}

/// The effective skill: every spec field, merged, plus the layers present.
/// It borrows its values from the fragments and the spec it was merged from.
#[derive(Debug, Clone, PartialEq)]
pub struct Effective<'a> {
    /// The requested skill name.
    pub name: String,
    /// Every field of the spec, in spec (name) order.
    pub fields: Vec<FieldMerge<'a>>,
    /// The layers that contributed a fragment, base first.
    pub layers_present: Vec<Layer>,
}

impl<'a> Effective<'a> {
    /// The values-only view: a JSON object with every field and `layers_present`.
    pub fn to_value(&self) -> Value {
        let mut m: Map<String, Value> = self
            .fields
            .iter()
            .map(|f| (f.name.to_owned(), f.merged.to_value()))
            .collect();
        m.insert(
            LAYERS_PRESENT.into(),
            Value::Array(
                self.layers_present
                    .iter()
                    .map(|l| Value::String(l.label().into()))
                    .collect(),
            ),
        );
        Value::Object(m)
    }

    /// A merged field by name.
    pub fn field(&self, name: &str) -> Option<&FieldMerge<'a>> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// The origin of `pointer` inside `fragment`.
pub(crate) fn origin(fragment: &Fragment, pointer: String) -> Origin {
    Origin {
        layer: fragment.layer,
        path: fragment.path.clone(),
        pointer,
    }
}

/// The pointer of a top-level field.
pub(crate) fn field_pointer(field: &str) -> String {
    let mut pointer = String::with_capacity(field.len() + 1);
    push_segment(&mut pointer, field);
    pointer
}

/// `base/i`: the pointer of item `i` of a list. Written without the
/// formatting machinery, which was a seventh of a merge (one per list item).
pub(crate) fn item_pointer(base: &str, i: usize) -> String {
    let mut digits = [0u8; 20];
    let (mut n, mut at) = (i, digits.len());
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut pointer = String::with_capacity(base.len() + 1 + digits.len() - at);
    pointer.push_str(base);
    pointer.push('/');
    pointer.extend(digits[at..].iter().map(|&d| char::from(d)));
    pointer
}

/// Appends `/key`, escaped, to a JSON pointer. Keys rarely need escaping,
/// so the usual case copies the key as is, without a temporary string.
pub(crate) fn push_segment(pointer: &mut String, key: &str) {
    pointer.push('/');
    if key.bytes().any(|b| b == b'~' || b == b'/') {
        pointer.push_str(&escape_pointer(key));
    } else {
        pointer.push_str(key);
    }
}

/// Merges `fragments` (lowest layer first) into the effective skill `name`.
///
/// Fragments are expected to have passed validation; invalid ones still
/// merge without panicking (a malformed value is taken as it is). The
/// result borrows its values from `fragments` and `spec`.
pub fn merge<'a>(spec: &'a MergeSpec, name: &str, fragments: &'a [Fragment]) -> Effective<'a> {
    merge_only(spec, name, fragments, |_| true)
}

/// [`merge`] of only the fields `keep` selects, for a check that needs a
/// few fields of the effective skill (its other fields are left out).
pub fn merge_only<'a>(
    spec: &'a MergeSpec,
    name: &str,
    fragments: &'a [Fragment],
    keep: impl Fn(&Field) -> bool,
) -> Effective<'a> {
    // Each field's value in each fragment, looked up once.
    let mut values: Vec<Contribution<'a>> = Vec::with_capacity(fragments.len());
    let fields = spec
        .fields
        .iter()
        .filter(|field| keep(field))
        .map(|field| {
            values.clear();
            values.extend(
                fragments
                    .iter()
                    .filter_map(|f| Some((f, f.fields().get(&field.name)?))),
            );
            // Only the fragments after the last reset contribute; the reset
            // itself starts the field again from its default.
            let mut reset_by = None;
            let mut start = 0;
            for (i, (f, v)) in values.iter().enumerate() {
                if v.is_null() {
                    start = i + 1;
                    reset_by = Some(origin(f, field_pointer(&field.name)));
                }
            }
            let layers = &values[start..];
            let mut merged = match &field.strategy {
                Strategy::Override { .. } => {
                    Merged::Override(override_::merge(field, layers, reset_by.clone()))
                }
                Strategy::Append { .. } => Merged::Append(append::merge(field, layers)),
                Strategy::KeyedReplace { keys, .. } => Merged::Keyed(keyed::merge(field, keys, layers)),
                Strategy::DeepMerge { .. } => Merged::Deep(deep::merge(field, layers)),
            };
            if spec.name_field.as_deref() == Some(field.name.as_str())
                && let Merged::Override(s) = &mut merged
                && *s.value == field.default
            {
                s.value = std::borrow::Cow::Owned(Value::String(name.to_owned()));
            }
            FieldMerge {
                name: &field.name,
                strategy: field.strategy.name(),
                merged,
                reset_by,
            }
        })
        .collect();
    let mut layers_present: Vec<Layer> = fragments.iter().map(|f| f.layer).collect();
    layers_present.dedup();
    Effective {
        name: name.to_owned(),
        fields,
        layers_present,
    }
}

/// One layer's value of the field being merged, with its fragment.
pub(crate) type Contribution<'a> = (&'a Fragment, &'a Value);

impl fmt::Display for Identity<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.key, self.value)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::Path;

    use serde_json::Value;

    use crate::fragment::Fragment;
    use crate::layer::Layer;
    use crate::spec::MergeSpec;

    pub fn spec() -> MergeSpec {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("spec/mergespec.yaml");
        MergeSpec::load(&path).expect("shipped spec loads")
    }

    #[test]
    fn pointers() {
        assert_eq!(super::item_pointer("/refs", 0), "/refs/0");
        assert_eq!(super::item_pointer("/refs", 1207), "/refs/1207");
        assert_eq!(
            super::item_pointer("", usize::MAX),
            format!("/{}", usize::MAX)
        );
        assert_eq!(super::field_pointer("a/b~c"), "/a~1b~0c");
        assert_eq!(super::field_pointer("plain"), "/plain");
    }

    /// The contributions of `fs` to `field`, as [`super::merge`] passes them.
    pub fn contributions<'a>(
        field: &crate::spec::Field,
        fs: &'a [Fragment],
    ) -> Vec<super::Contribution<'a>> {
        fs.iter()
            .filter_map(|f| Some((f, f.fields().get(&field.name)?)))
            .collect()
    }

    pub fn frag(layer: Layer, v: Value) -> Fragment {
        let Value::Object(m) = v else {
            panic!("object")
        };
        Fragment::from_fields(layer, Path::new(&format!("{}/x.yaml", layer.label())), m)
    }
}
