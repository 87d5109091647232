//! What a source brings is checked as the layer reader checks a layer,
//! before it is locked: whatever `validate` and `export` would refuse of
//! it, `add` and `update` refuse first, so a project never locks content
//! it then cannot use.
//!
//! The checks are not written a second time here: the fetched skills are
//! laid out in a temporary directory and read as a base layer alone, by
//! the same reader and validation every command uses (file names, as
//! [`crate::layer::check_name`] takes them; a `SKILL.md` nested in a
//! skill; two paths equal but for case; the caps; each `SKILL.md` as a
//! fragment of the merge spec). What depends on the layers above (a field
//! the spec requires, which a team override may set; a value the merge
//! makes) is left to the merge, where `validate` reports it.

use std::path::{Path, PathBuf};

use crate::error::{Diagnostic, DiagnosticKind, Error, Result, Severity};
use crate::source::Layers;
use crate::source::confine::Boundary;
use crate::spec::MergeSpec;

/// Refuses what source `source` brings at `commit`, laid out in `dir`
/// (one directory per skill: [`super::cache::Cache::stage`]), when the
/// layer reader refuses any of it: every problem, each at the file it is
/// about, named `SOURCE@COMMIT/SKILL/PATH`.
pub fn as_layer(spec: &MergeSpec, source: &str, commit: &str, dir: &Path) -> Result<()> {
    let base = dir.to_path_buf();
    // No layer above: names no skill directory can have (a hidden entry).
    let layers = Layers::from_paths_in(
        [base.clone(), dir.join(".team"), dir.join(".user")],
        &Boundary::default(),
    );
    let skills = crate::Skills::new(spec.clone(), layers, crate::fragment::DEFAULT_MAX_BYTES);
    let report = skills.validate(None, 1);
    let commit = &commit[..commit.len().min(12)];
    let problems: Vec<Diagnostic> = report
        .diagnostics
        .into_iter()
        .filter(|d| d.severity == Severity::Error && !left_to_the_merge(&d.kind))
        .map(|mut d| {
            let named = format!("{source}@{commit}/");
            d.file = d.file.map(|f| {
                let rel = f.strip_prefix(&base).unwrap_or(&f);
                PathBuf::from(format!("{named}{}", rel.display()))
            });
            // A message naming another file names it as the source's too.
            let at_base = format!("base layer: {}/", crate::text::path(&base));
            let rename = |s: &mut String| *s = s.replace(&at_base, &named);
            match &mut d.kind {
                DiagnosticKind::CaseCollision { other, .. }
                | DiagnosticKind::PathConflict { other, .. } => rename(other),
                _ => {}
            }
            d.layer = None;
            d
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::Invalid(problems))
    }
}

/// A problem that the layers above a source may mend: a required field no
/// layer sets yet, or a value checked only once merged.
fn left_to_the_merge(kind: &DiagnosticKind) -> bool {
    matches!(
        kind,
        DiagnosticKind::RequiredMissing { .. }
            | DiagnosticKind::RequiredEmpty { .. }
            | DiagnosticKind::Constraint { .. }
    )
}
