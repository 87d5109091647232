//! Skills that no layer below the one introducing them defines, and that
//! lack what the targets require (issue 30): a misspelt override (`pfd`
//! for `pdf`), or a person's override of a skill this project lacks. They
//! would be listed and exported as skills of their own, holding little
//! more than a name. So is an override of a skill that upstream removed
//! (the lock records it: `removed` in `sources.lock`) when the layers
//! above give it no body: its description alone would be exported as a
//! new skill.
//!
//! A skill introduced above the base layer that has what the targets
//! require but no instructions of its own, under a name one edit from a
//! skill a lower layer defines (`team/pfd.yaml` setting a description
//! beside base `pdf`), is most likely such an override too: it is
//! exported, but warned about ([`near_name`]).

use crate::error::{Diagnostic, DiagnosticKind, did_you_mean};
use crate::fragment::Fragment;
use crate::layer::Layer;
use crate::merge::Effective;
use crate::spec::MergeSpec;
use crate::target::Target;

/// The warning for skill `name` if it is such an orphan, at the fragment
/// that introduced it: every fragment comes from above the base layer, and
/// the effective skill leaves empty a field some target in `targets`
/// requires (the name field, which defaults to the skill's name, aside).
/// `names` gives the skills the layers hold, for a did-you-mean: called
/// only for an orphan. `removed_by`: the source upstream removed the skill
/// from; then a skill with no body is an orphan too, whatever it sets.
pub(crate) fn orphan(
    spec: &MergeSpec,
    effective: &Effective,
    fragments: &[Fragment],
    targets: &[Target],
    removed_by: Option<&str>,
    names: impl FnOnce() -> Vec<String>,
) -> Option<Diagnostic> {
    let first = fragments.first()?;
    if fragments.iter().any(|f| f.layer == Layer::Base) {
        return None;
    }
    let empty = |field: &str| {
        effective
            .field(field)
            .is_none_or(|m| crate::postmerge::is_empty(&m.merged.to_value()))
    };
    // Each required field left empty, with the targets that require it.
    let mut lacks: Vec<(String, Vec<&str>)> = Vec::new();
    for t in targets {
        for f in t.fields.iter().filter(|f| f.required) {
            if spec.name_field.as_deref() == Some(f.name.as_str()) {
                continue;
            }
            if !empty(&f.name) {
                continue;
            }
            match lacks.iter_mut().find(|(n, _)| *n == f.name) {
                Some((_, by)) => by.push(&t.name),
                None => lacks.push((f.name.clone(), vec![&t.name])),
            }
        }
    }
    // A skill upstream removed keeps what the layers above give it only
    // with a body of its own (copied in, to keep it as theirs).
    let no_body = removed_by.is_some() && spec.body_field.as_deref().is_none_or(empty);
    if lacks.is_empty() && !no_body {
        return None;
    }
    let mut by: Vec<&str> = lacks
        .iter()
        .flat_map(|(_, by)| by.iter().copied())
        .collect();
    by.sort_unstable();
    by.dedup();
    let switches = [spec.enabled_field.as_deref(), spec.targets_field.as_deref()];
    let switch_only = fragments.iter().all(|f| {
        f.as_value()
            .as_object()
            .is_some_and(|m| m.keys().all(|k| switches.contains(&Some(k.as_str()))))
    });
    let name = &effective.name;
    let names = names();
    // A name upstream had is no misspelling.
    let suggestion = removed_by
        .is_none()
        .then(|| did_you_mean(name, names.iter().map(String::as_str).filter(|n| n != name)))
        .flatten();
    let needed_by = match by.as_slice() {
        [one] => crate::text::escape(one).into_owned(),
        [rest @ .., last] => format!(
            "{} and {}",
            rest.iter()
                .map(|t| crate::text::escape(t).into_owned())
                .collect::<Vec<_>>()
                .join(", "),
            crate::text::escape(last)
        ),
        [] => String::new(),
    };
    Some(
        Diagnostic::warning(
            Some(&first.path),
            DiagnosticKind::Orphan {
                skill: crate::text::escape(name).into_owned(),
                layer: first.layer,
                lacks: lacks.into_iter().map(|(n, _)| n).collect(),
                needed_by,
                switch_only,
                suggestion,
                removed_by: removed_by.map(|s| crate::text::escape(s).into_owned()),
            },
        )
        .in_layer(first.layer),
    )
}

/// The longest name compared for [`near_name`]: the Agent Skills standard
/// allows 64 characters, and every longer name is left out, so building
/// and asking the index stays linear in the names.
const NEAR_NAME_CHARS: usize = 64;

/// Every skill name of the layers, indexed to find the names one edit
/// from another (an insertion, a deletion, a substitution or a swap of two
/// neighbours) without comparing every pair: a name and each string made
/// by deleting one of its characters are its keys, and two names one edit
/// apart share a key. Keys are hashed, so the index holds numbers; a
/// shared key is confirmed by the distance itself.
#[derive(Debug, Default)]
pub(crate) struct NameIndex {
    names: Vec<(String, Vec<Layer>)>,
    by_key: std::collections::HashMap<u64, Vec<u32>>,
}

impl NameIndex {
    /// The index of `names` (each with the layers that hold it).
    pub(crate) fn new(names: Vec<(String, Vec<Layer>)>) -> NameIndex {
        let mut by_key: std::collections::HashMap<u64, Vec<u32>> = Default::default();
        for (i, (name, _)) in names.iter().enumerate() {
            for key in keys(name) {
                by_key.entry(key).or_default().push(i as u32);
            }
        }
        NameIndex { names, by_key }
    }

    /// The first name, in order, one edit from `name` that a layer below
    /// `below` holds, with the lowest layer that holds it.
    fn one_edit_below(&self, name: &str, below: Layer) -> Option<(&str, Layer)> {
        let mut best: Option<(&str, Layer)> = None;
        for key in keys(name) {
            for &i in self.by_key.get(&key).into_iter().flatten() {
                let (other, layers) = &self.names[i as usize];
                let Some(&lowest) = layers.iter().min() else {
                    continue;
                };
                if lowest < below
                    && best.is_none_or(|(b, _)| other.as_str() < b)
                    && strsim::osa_distance(name, other) == 1
                    && !look_alike(name, other)
                {
                    best = Some((other, lowest));
                }
            }
        }
        best
    }
}

/// Do `a` and `b` read as one name: equal once lowercased, or under the
/// confusable skeleton? The look-alike warnings name such pairs already
/// (`Writer` beside `writer`), so [`near_name`] does not say it again.
fn look_alike(a: &str, b: &str) -> bool {
    a.to_lowercase() == b.to_lowercase() || crate::layer::skeleton(a) == crate::layer::skeleton(b)
}

/// The keys of `name` ([`NameIndex`]): the hash of the name and of each
/// string made by deleting one character; none past [`NEAR_NAME_CHARS`].
fn keys(name: &str) -> Vec<u64> {
    use std::hash::Hasher;
    if name.chars().count() > NEAR_NAME_CHARS {
        return Vec::new();
    }
    let hash = |a: &str, b: &str| {
        let mut h = std::hash::DefaultHasher::new();
        h.write(a.as_bytes());
        h.write(b.as_bytes());
        h.finish()
    };
    let mut out = vec![hash(name, "")];
    for (i, c) in name.char_indices() {
        out.push(hash(&name[..i], &name[i + c.len_utf8()..]));
    }
    out
}

/// The warning for skill `effective` (merged from `fragments`) if no
/// layer below the one introducing it defines it, it has no instructions
/// of its own (the spec's body field empty), and a lower layer defines a
/// skill whose name is one edit from its own: at the fragment that
/// introduced it. `index` is asked only for such a skill.
pub(crate) fn near_name<'i>(
    spec: &MergeSpec,
    effective: &Effective,
    fragments: &[Fragment],
    index: impl FnOnce() -> &'i NameIndex,
) -> Option<Diagnostic> {
    let first = fragments.first()?;
    if fragments.iter().any(|f| f.layer == Layer::Base) {
        return None;
    }
    let instructions = spec.body_field.as_deref().is_some_and(|body| {
        effective
            .field(body)
            .is_some_and(|m| !crate::postmerge::is_empty(&m.merged.to_value()))
    });
    if instructions {
        return None;
    }
    let name = &effective.name;
    let (other, other_layer) = index().one_edit_below(name, first.layer)?;
    Some(
        Diagnostic::warning(
            Some(&first.path),
            DiagnosticKind::NearName {
                skill: crate::text::escape(name).into_owned(),
                layer: first.layer,
                other: crate::text::escape(other).into_owned(),
                other_layer,
            },
        )
        .in_layer(first.layer),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_one_edit_apart_are_found_below_a_layer() {
        let index = NameIndex::new(vec![
            ("pdf".into(), vec![Layer::Base]),
            ("pdf-tables".into(), vec![Layer::Base, Layer::Team]),
            ("pfd".into(), vec![Layer::Team]),
            ("writer".into(), vec![Layer::Team]),
        ]);
        assert_eq!(
            index.one_edit_below("pfd", Layer::Team),
            Some(("pdf", Layer::Base))
        );
        assert_eq!(
            index.one_edit_below("pd", Layer::Team),
            Some(("pdf", Layer::Base))
        );
        assert_eq!(
            index.one_edit_below("pdfs", Layer::Team),
            Some(("pdf", Layer::Base))
        );
        assert_eq!(
            index.one_edit_below("pdg", Layer::Team),
            Some(("pdf", Layer::Base))
        );
        assert_eq!(
            index.one_edit_below("pdf-table", Layer::Team),
            Some(("pdf-tables", Layer::Base))
        );
        // Two edits, or only in the same layer: nothing.
        assert_eq!(index.one_edit_below("pxy", Layer::Team), None);
        assert_eq!(index.one_edit_below("writes", Layer::Team), None);
        assert_eq!(
            index.one_edit_below("writes", Layer::User),
            Some(("writer", Layer::Team))
        );
    }
}
