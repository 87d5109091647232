//! The switch fields: whether an effective skill is exported at all, and
//! for which targets.

use crate::error::{Diagnostic, DiagnosticKind};
use crate::fragment::Fragment;
use crate::merge::{Effective, Merged};
use crate::spec::MergeSpec;
use crate::text::{self, EXCERPT_CHARS};

/// Whether an effective skill is switched on, for every target and per
/// target, and which layer said so (the spec's `enabled_field` and
/// `targets_field`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Switch {
    /// Off for every target when `false`.
    pub enabled: bool,
    /// The layer that set `enabled` (`None`: the default).
    pub set_by: Option<crate::layer::Layer>,
    /// The targets it is switched off for, with the layer that did it.
    pub off_for: Vec<(String, Option<crate::layer::Layer>)>,
}

impl Switch {
    /// Does the skill go to target `name`?
    pub(crate) fn goes_to(&self, name: &str) -> bool {
        self.enabled && !self.off_for.iter().any(|(t, _)| t == name)
    }
}

/// The [`Switch`] of `effective` under `spec`.
pub fn switch(spec: &MergeSpec, effective: &Effective) -> Switch {
    let mut out = Switch {
        enabled: true,
        set_by: None,
        off_for: Vec::new(),
    };
    if let Some(f) = spec
        .enabled_field
        .as_deref()
        .and_then(|f| effective.field(f))
        && let Merged::Override(s) = &f.merged
    {
        out.enabled = s.value.as_bool() != Some(false);
        out.set_by = s.origin.as_ref().map(|o| o.layer);
    }
    if let Some(f) = spec
        .targets_field
        .as_deref()
        .and_then(|f| effective.field(f))
        && let Merged::Deep(tree) = &f.merged
    {
        for (target, v) in tree {
            if let Merged::Override(s) = v
                && s.value.as_bool() == Some(false)
            {
                out.off_for
                    .push(((*target).to_owned(), s.origin.as_ref().map(|o| o.layer)));
            }
        }
    }
    out
}

/// Each per-target switch of `effective` (the spec's `targets_field`) that a
/// layer set: the field's name, the target it names, the value, and the
/// fragment it came from with the JSON pointer to it there.
fn set_switches<'a>(
    spec: &'a MergeSpec,
    effective: &'a Effective,
    fragments: &'a [Fragment],
) -> Vec<(
    &'a str,
    &'a str,
    &'a serde_json::Value,
    &'a Fragment,
    &'a str,
)> {
    let Some(name) = spec.targets_field.as_deref() else {
        return Vec::new();
    };
    let Some(Merged::Deep(tree)) = effective.field(name).map(|f| &f.merged) else {
        return Vec::new();
    };
    tree.iter()
        .filter_map(|(target, v)| {
            let Merged::Override(s) = v else { return None };
            let o = s.origin.as_ref()?;
            let f = fragments.iter().find(|f| f.layer == o.layer)?;
            Some((name, &target[..], &*s.value, f, &o.pointer[..]))
        })
        .collect()
}

/// Values of the spec's `targets_field` that are not booleans: an error at
/// each, since the switch could not be read.
pub(crate) fn switch_problems(
    spec: &MergeSpec,
    effective: &Effective,
    fragments: &[Fragment],
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (name, target, value, f, pointer) in set_switches(spec, effective, fragments) {
        if value.is_boolean() {
            continue;
        }
        out.push(switch_error(
            f,
            name,
            target,
            pointer,
            "type",
            format!(
                "switches the skill for target '{}': write true or false; got {}",
                text::excerpt(target, EXCERPT_CHARS),
                text::json_excerpt(value, 60)
            ),
        ));
    }
    out
}

/// Keys of the targets field (`targets: {agent: false}`) that name no
/// target found in `known`: an error at the key, with a did-you-mean and
/// every target's name, since a switch for a misspelt target switches
/// nothing.
pub(crate) fn unknown_switch_targets(
    spec: &MergeSpec,
    effective: &Effective,
    fragments: &[Fragment],
    known: &[String],
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (name, target, _, f, pointer) in set_switches(spec, effective, fragments) {
        if known.iter().any(|k| k == target) {
            continue;
        }
        let suggestion =
            crate::error::did_you_mean_or_prefix(target, known.iter().map(String::as_str));
        out.push(
            Diagnostic::error(
                Some(&f.path),
                DiagnosticKind::Constraint {
                    field: format!("{name}.{}", text::excerpt(target, EXCERPT_CHARS)),
                    constraint: "target".into(),
                    problem: format!(
                        "names no target{}; {}",
                        suggestion
                            .map(|s| format!(" (did you mean '{s}'?)"))
                            .unwrap_or_default(),
                        super::search::known_list(known)
                    ),
                },
            )
            .in_layer(f.layer)
            .at(f.position(pointer, true))
            .on_field(name),
        );
    }
    out
}

/// For a directory written once for several targets (`targets`, the
/// first the one written for): the error when the skill is switched off
/// for some of them and not the others, at the switch that turned it off,
/// since a skill there is read by all of them; `None` when it goes to all
/// or to none.
pub(crate) fn shared_switch_problem(
    spec: &MergeSpec,
    effective: &Effective,
    fragments: &[Fragment],
    targets: &[&str],
) -> Option<Diagnostic> {
    let switch = switch(spec, effective);
    let (off, on): (Vec<&str>, Vec<&str>) = targets.iter().partition(|t| !switch.goes_to(t));
    if off.is_empty() || on.is_empty() {
        return None;
    }
    let (name, target, _, f, pointer) = set_switches(spec, effective, fragments)
        .into_iter()
        .find(|(_, t, v, _, _)| off.contains(t) && v.as_bool() == Some(false))?;
    let list = |names: &[&str]| text::list(names.iter().map(|n| &**n), false);
    Some(switch_error(
        f,
        name,
        target,
        pointer,
        "target",
        format!(
            "switches the skill off for {} but not for {}, which read the same \
             directory, so it cannot be both there and not; switch it off for all of \
             them or for none",
            list(&off),
            list(&on)
        ),
    ))
}

/// An error about the switch for `target` that `f` sets at `pointer`.
fn switch_error(
    f: &Fragment,
    name: &str,
    target: &str,
    pointer: &str,
    constraint: &str,
    problem: String,
) -> Diagnostic {
    Diagnostic::error(
        Some(&f.path),
        DiagnosticKind::Constraint {
            field: format!("{name}.{}", text::excerpt(target, EXCERPT_CHARS)),
            constraint: constraint.into(),
            problem,
        },
    )
    .in_layer(f.layer)
    .at(f.position(pointer, false))
    .on_field(name)
}
