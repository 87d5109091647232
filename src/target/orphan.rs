//! Skills that no layer below the one introducing them defines, and that
//! lack what the targets require (issue 30): a misspelt override (`pfd`
//! for `pdf`), or a person's override of a skill this project lacks. They
//! would be listed and exported as skills of their own, holding little
//! more than a name.

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
/// only for an orphan.
pub(crate) fn orphan(
    spec: &MergeSpec,
    effective: &Effective,
    fragments: &[Fragment],
    targets: &[Target],
    names: impl FnOnce() -> Vec<String>,
) -> Option<Diagnostic> {
    let first = fragments.first()?;
    if fragments.iter().any(|f| f.layer == Layer::Base) {
        return None;
    }
    // Each required field left empty, with the targets that require it.
    let mut lacks: Vec<(String, Vec<&str>)> = Vec::new();
    for t in targets {
        for f in t.fields.iter().filter(|f| f.required) {
            if spec.name_field.as_deref() == Some(f.name.as_str()) {
                continue;
            }
            let empty = effective
                .field(&f.name)
                .is_none_or(|m| crate::postmerge::is_empty(&m.merged.to_value()));
            if !empty {
                continue;
            }
            match lacks.iter_mut().find(|(n, _)| *n == f.name) {
                Some((_, by)) => by.push(&t.name),
                None => lacks.push((f.name.clone(), vec![&t.name])),
            }
        }
    }
    if lacks.is_empty() {
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
    let suggestion = did_you_mean(name, names.iter().map(String::as_str).filter(|n| n != name));
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
            },
        )
        .in_layer(first.layer),
    )
}
