//! The pipeline put together: a checked spec, its compiled schema, the
//! layer directories and the load options, with the operations the CLI
//! offers (list, resolve, validate).

use std::sync::{Arc, OnceLock};

use crate::error::{Diagnostic, DiagnosticKind, Error, Result};
use crate::fragment::{Fragment, LoadOptions};
use crate::layer::{Form, Layer, check_name};
use crate::merge::{Effective, Resolved, merge};
use crate::source::files::{FileLimits, Generated, SkillFile};
use crate::source::{Layers, Located};
use crate::spec::MergeSpec;
use crate::validate::Validator;

/// A spec, its schema (compiled on first use) and the layers to read.
#[derive(Debug)]
pub struct Skills {
    spec: Arc<MergeSpec>,
    /// The spec's compiled schema, built on first use and shared by every
    /// [`Skills::with_layers`] of the same spec.
    validator: Arc<OnceLock<Validator>>,
    layers: Layers,
    options: LoadOptions,
    file_limits: FileLimits,
    /// The targets `check` judges effective skills for ([`Skills::with_targets`]).
    targets: Vec<crate::target::Target>,
    /// The files other targets write, which `check` judges a skill's files
    /// against ([`Skills::with_file_targets`]).
    file_targets: Vec<Generated>,
    /// Where the targets are, for the warnings about every target
    /// ([`Skills::with_target_search`]), and those targets, loaded on
    /// first use.
    target_search: Option<crate::target::TargetSearch>,
    known_targets: OnceLock<Vec<crate::target::Target>>,
    /// What a finding of the targets judged is: an error, or a warning for
    /// the targets a project names for itself ([`Skills::with_targets_warning`]).
    target_severity: crate::error::Severity,
    /// The names of those targets, read on first use.
    target_names: OnceLock<Vec<String>>,
    /// Every skill name of the layers, indexed for the names one edit
    /// apart, built on first use ([`Skills::misnamed`]).
    near_names: OnceLock<crate::target::orphan::NameIndex>,
}

impl Skills {
    /// Puts a spec and layers together. `max_bytes` caps fragment size.
    pub fn new(spec: MergeSpec, layers: Layers, max_bytes: u64) -> Skills {
        let options = LoadOptions {
            max_bytes,
            body_field: spec.body_field.clone(),
            ..LoadOptions::default()
        };
        Skills {
            spec: Arc::new(spec),
            validator: Arc::new(OnceLock::new()),
            layers,
            options,
            file_limits: FileLimits::default(),
            targets: Vec::new(),
            file_targets: Vec::new(),
            target_search: None,
            known_targets: OnceLock::new(),
            target_severity: crate::error::Severity::Error,
            target_names: OnceLock::new(),
            near_names: OnceLock::new(),
        }
    }

    /// The same spec, options and targets over other layers (the layers a
    /// directory the project commits takes, without the user layer:
    /// [`crate::context::Context::layers_for`]).
    pub fn with_layers(&self, layers: Layers) -> Skills {
        Skills {
            spec: self.spec.clone(),
            validator: self.validator.clone(),
            layers,
            options: self.options.clone(),
            file_limits: self.file_limits,
            targets: self.targets.clone(),
            file_targets: self.file_targets.clone(),
            target_search: self.target_search.clone(),
            known_targets: OnceLock::new(),
            target_severity: self.target_severity,
            target_names: OnceLock::new(),
            near_names: OnceLock::new(),
        }
    }

    /// Where the targets are: without targets to judge for
    /// ([`Skills::with_targets`]), [`Skills::validate`] warns about what any
    /// of them would refuse of a skill's keys (two keys a target that
    /// flattens their field writes as one), and so does
    /// [`Skills::flatten_warnings`]. The targets are read only when a
    /// skill has such keys.
    pub fn with_target_search(mut self, search: crate::target::TargetSearch) -> Skills {
        self.target_search = Some(search);
        self
    }

    /// The warning for a skill that no layer below the one introducing it
    /// defines, and that lacks what the targets found (and `target`)
    /// require, or a body when upstream removed it
    /// ([`crate::target::orphan`]); such a skill is not exported.
    pub(crate) fn orphan(
        &self,
        effective: &Effective,
        fragments: &[Fragment],
        target: Option<&crate::target::Target>,
    ) -> Option<Diagnostic> {
        if fragments.iter().any(|f| f.layer == crate::Layer::Base) {
            return None;
        }
        let mut targets = self.known_targets().to_vec();
        if let Some(t) = target
            && !targets.iter().any(|k| k.name == t.name)
        {
            targets.push(t.clone());
        }
        // A target that writes skills as another does requires what that
        // one requires: the messages name the one.
        let targets: Vec<crate::target::Target> =
            crate::target::distinct(&targets).cloned().collect();
        let removed_by = self.layers.removed_upstream(&effective.name);
        crate::target::orphan::orphan(
            &self.spec,
            effective,
            fragments,
            &targets,
            removed_by,
            // A hint only: a layer too large to list gives none.
            || {
                self.layers
                    .names()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(n, _)| n)
                    .collect()
            },
        )
    }

    /// The warning about a skill no layer below the one introducing it
    /// defines, without instructions of its own, whose name is one edit
    /// from a skill a lower layer defines (`pfd` beside `pdf`): most
    /// likely an override under a misspelt name, which is exported as a
    /// skill of its own (see `target::orphan`). An orphan is warned about
    /// as one instead.
    pub(crate) fn misnamed(
        &self,
        effective: &Effective,
        fragments: &[Fragment],
    ) -> Option<Diagnostic> {
        crate::target::orphan::near_name(&self.spec, effective, fragments, || {
            self.near_names.get_or_init(|| {
                crate::target::orphan::NameIndex::new(self.layers.names().unwrap_or_default())
            })
        })
    }

    /// For a resolved skill that is no orphan ([`Skills::is_orphan`]): the
    /// warning about a skill no layer below the one introducing it
    /// defines, without instructions of its own, whose name is one edit
    /// from a lower layer's skill, which `validate` gives too; what `list`
    /// says of it.
    pub fn misnamed_skill(&self, resolved: &crate::merge::Resolved) -> Option<Diagnostic> {
        if self.is_orphan(resolved) {
            return None;
        }
        self.misnamed(resolved.effective(), resolved.fragments())
    }

    /// Is `resolved` a skill no layer below the one introducing it defines,
    /// lacking what the targets found require: listed, warned about by
    /// `validate`, not exported (see `target::orphan`)?
    pub fn is_orphan(&self, resolved: &crate::merge::Resolved) -> bool {
        self.orphan(resolved.effective(), resolved.fragments(), None)
            .is_some()
    }

    /// Every target of the target search, read on first use; one that does
    /// not load is left out here (naming it with `--target` says why).
    fn known_targets(&self) -> &[crate::target::Target] {
        self.known_targets.get_or_init(|| {
            let Some(search) = &self.target_search else {
                return Vec::new();
            };
            search
                .all()
                .into_iter()
                .filter_map(|(_, t)| t.ok())
                .collect()
        })
    }

    /// Warnings about the keys of `effective` (merged from `fragments`)
    /// that a known target flattening their field would write as one key
    /// ([`Skills::with_target_search`]), each at both keys.
    pub fn flatten_warnings(
        &self,
        effective: &Effective,
        fragments: &[Fragment],
    ) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for field in &effective.fields {
            if !crate::target::may_collide(&field.merged) {
                continue;
            }
            let by: Vec<&str> = crate::target::distinct(self.known_targets())
                .filter(|t| t.flattens(field.name))
                .map(|t| t.name.as_str())
                .collect();
            if !by.is_empty() {
                out.extend(crate::target::flatten_problems(
                    field,
                    fragments,
                    &by.join(", "),
                    crate::error::Severity::Warning,
                ));
            }
        }
        out
    }

    /// Judges the files of every skill [`Skills::validate`] checks against
    /// the files `targets` write too ([`crate::target::Target::generated`]:
    /// a skill's `Agents/openai.yaml` beside codex's `agents/openai.yaml`),
    /// without their rules: so that `validate` without `--target` finds
    /// what an export for any of them would refuse.
    pub fn with_file_targets(mut self, targets: &[crate::target::Target]) -> Skills {
        self.file_targets.clear();
        Generated::merge_into(
            &mut self.file_targets,
            crate::target::distinct(targets).flat_map(|t| t.generated()),
        );
        self
    }

    /// What export may write beside a skill's files, for [`Skills::validate`]:
    /// its `SKILL.md` and the translated files of every target it judges.
    fn generated(&self) -> Vec<Generated> {
        let mut out = vec![Generated::skill_md()];
        let more = self.targets.iter().flat_map(|t| t.generated());
        Generated::merge_into(&mut out, more.chain(self.file_targets.iter().cloned()));
        out
    }

    /// [`Skills::with_targets`], their rules as warnings: for the targets
    /// a project names for itself, which `validate --strict` fails on.
    pub fn with_targets_warning(self, targets: Vec<crate::target::Target>) -> Skills {
        let mut s = self.with_targets(targets);
        s.target_severity = crate::error::Severity::Warning;
        s
    }

    /// Judges every effective skill [`Skills::validate`] checks for `targets`
    /// too: their rules are errors, the fields they leave out notes.
    pub fn with_targets(mut self, targets: Vec<crate::target::Target>) -> Skills {
        // A target's findings are located: most fragments will be asked
        // for positions, which one pass over each then gives with its value.
        self.options.positions = !targets.is_empty();
        self.targets = targets;
        self
    }

    /// The problems of a resolved skill for `targets` (warnings for `show`
    /// and `explain`, which never refuse a skill for a consumer's rule).
    pub fn target_findings(
        &self,
        resolved: &Resolved,
        targets: &[crate::target::Target],
        severity: crate::error::Severity,
    ) -> Vec<Diagnostic> {
        targets
            .iter()
            .flat_map(|t| {
                t.problems(
                    &self.spec,
                    resolved.effective(),
                    resolved.fragments(),
                    severity,
                )
            })
            .collect()
    }

    /// The spec.
    pub fn spec(&self) -> &MergeSpec {
        &self.spec
    }

    /// The fragment size cap, which every file the tool parses from a
    /// layer is held to.
    pub(crate) fn max_fragment_bytes(&self) -> u64 {
        self.options.max_bytes
    }

    /// The largest committed manifest read (by `export --check` and when
    /// comparing before a write): eight times the fragment cap, room for
    /// three full layers and JSON escaping.
    pub(crate) fn max_manifest_bytes(&self) -> u64 {
        self.options.max_bytes.saturating_mul(8)
    }

    /// The layers.
    pub fn layers(&self) -> &Layers {
        &self.layers
    }

    /// Is there any layer directory? [`Error::NoLayers`], naming the three
    /// looked at, when there is none: a mistyped `--layers-root` must not
    /// pass as an empty tree.
    pub fn require_layers(&self) -> Result<()> {
        match no_layers(&self.layers) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The compiled fragment schema (compiled once, on first use).
    pub fn validator(&self) -> &Validator {
        self.validator.get_or_init(|| Validator::new(&self.spec))
    }

    /// Every skill name in any layer, with the layers that hold it.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] when a layer's directory holds more entries than
    /// a layer may ([`crate::source::layers::MAX_LAYER_ENTRIES`]).
    pub fn list(&self) -> Result<Vec<(String, Vec<Layer>)>> {
        self.layers.names()
    }

    /// Where skill `name` is in each layer.
    pub fn locate(&self, name: &str) -> Result<Vec<Located>> {
        check_name(name).map_err(|reason| Error::InvalidName {
            name: name.to_owned(),
            reason,
        })?;
        Ok(self.layers.locate(name))
    }

    /// Loads and validates one located fragment; all its errors on failure.
    pub fn load(&self, located: &Located) -> std::result::Result<Fragment, Vec<Diagnostic>> {
        let fragment = Fragment::load(located, &self.options).map_err(|d| vec![d])?;
        let errors = self.validator().validate(&self.spec, &fragment);
        if errors.is_empty() {
            Ok(fragment)
        } else {
            Err(errors)
        }
    }

    /// Loads, validates and merges skill `name`. Every problem in every
    /// layer is reported together.
    pub fn resolve(&self, name: &str) -> Result<Resolved> {
        let located = self.locate(name)?;
        self.resolve_located(name, &located)
    }

    /// [`Skills::resolve`] for files already located (e.g. by [`Layers::catalog`]).
    pub fn resolve_located(&self, name: &str, located: &[Located]) -> Result<Resolved> {
        let fragments = self.load_checked(name, located)?;
        // The one merge of the skill: the checks and every caller use it.
        self.finish(Resolved::new(self.spec.clone(), name, fragments))
    }

    /// Validates, merges and checks fragments a caller holds rather than
    /// files (Python's `merge_layers`), as [`Skills::resolve`] does a
    /// skill's files: each against the compiled schema, then the merge and
    /// the checks of the merged skill; every problem of every fragment
    /// together.
    pub fn resolve_fragments(&self, name: &str, mut fragments: Vec<Fragment>) -> Result<Resolved> {
        fragments.sort_by_key(|f| f.layer);
        let errors: Vec<Diagnostic> = fragments
            .iter()
            .flat_map(|f| self.validator().validate(&self.spec, f))
            .collect();
        if !errors.is_empty() {
            return Err(Error::Invalid(errors));
        }
        let errors = crate::postmerge::sections(&self.spec, &fragments, self.options.max_bytes);
        if !errors.is_empty() {
            return Err(Error::Invalid(errors));
        }
        self.finish(Resolved::new(self.spec.clone(), name, fragments))
    }

    /// [`Skills::resolve_located`] for a caller that reads only the fields
    /// `keep` selects (`list`: a description and the switches): the same
    /// checks, a merge of those fields and the ones the checks read.
    pub fn resolve_fields(
        &self,
        name: &str,
        located: &[Located],
        keep: &dyn Fn(&crate::spec::Field) -> bool,
    ) -> Result<Resolved> {
        let fragments = self.load_checked(name, located)?;
        let keep = |f: &crate::spec::Field| keep(f) || crate::postmerge::needs(f);
        self.finish(Resolved::new_only(self.spec.clone(), name, fragments, keep))
    }

    /// The checks of a merged skill ([`Skills::merged_problems`]).
    fn finish(&self, resolved: Resolved) -> Result<Resolved> {
        let errors = self.merged_problems(resolved.effective(), resolved.fragments());
        if !errors.is_empty() {
            return Err(Error::Invalid(errors));
        }
        Ok(resolved)
    }

    /// Skill `name`'s fragments, loaded, validated and checked before the
    /// merge; every problem of every layer together.
    fn load_checked(&self, name: &str, located: &[Located]) -> Result<Vec<Fragment>> {
        self.layers_usable()?;
        if located.is_empty() {
            return Err(self.not_found(name));
        }
        if let Some(d) = files_without_skill(name, located) {
            return Err(Error::Invalid(vec![d]));
        }
        let mut fragments = Vec::with_capacity(located.len());
        let mut errors = Vec::new();
        for l in located {
            match self.load(l) {
                Ok(f) => fragments.push(f),
                Err(es) => errors.extend(es),
            }
        }
        if !errors.is_empty() {
            return Err(Error::Invalid(errors));
        }
        if crate::validate::ownership::may_hold_owned_files(&self.spec, located) {
            let errors = crate::validate::ownership::files(&self.spec, &self.files_of(located)?);
            if !errors.is_empty() {
                return Err(Error::Invalid(errors));
            }
        }
        let errors = crate::postmerge::sections(&self.spec, &fragments, self.options.max_bytes);
        if !errors.is_empty() {
            return Err(Error::Invalid(errors));
        }
        Ok(fragments)
    }

    /// The files of skill `name` (every file under its `NAME/` directories
    /// other than `SKILL.md`), layered: see [`crate::source::files`].
    pub fn files(&self, name: &str) -> Result<Vec<SkillFile>> {
        let located = self.locate(name)?;
        if located.is_empty() {
            return Err(self.not_found(name));
        }
        if let Some(d) = files_without_skill(name, &located) {
            return Err(Error::Invalid(vec![d]));
        }
        self.files_of(&located)
    }

    /// [`Skills::files`] for files already located.
    pub(crate) fn files_of(&self, located: &[Located]) -> Result<Vec<SkillFile>> {
        crate::source::files::collect(located, &self.file_limits).map_err(Error::from)
    }

    /// "No layer holds skill `name`", naming the directories searched.
    fn not_found(&self, name: &str) -> Error {
        Error::NotFound {
            name: name.to_owned(),
            searched: self.layers.dirs().iter().map(|d| d.path.clone()).collect(),
            suggestion: self.near_skill(name),
        }
    }

    /// The name of a skill the layers provide that `name` nearly is.
    fn near_skill(&self, name: &str) -> Option<String> {
        let names = self.layers.names().ok()?;
        crate::error::did_you_mean(name, names.iter().map(|(n, _)| n.as_str()))
    }

    /// The checks of an effective skill after the merge ([`crate::postmerge`]):
    /// required fields, and values the merge made (the skill's file name as
    /// its name) against their rule.
    pub(crate) fn merged_problems(
        &self,
        effective: &Effective,
        fragments: &[Fragment],
    ) -> Vec<Diagnostic> {
        crate::postmerge::effective(&self.spec, self.validator(), effective, fragments, &|f| {
            self.shown(f)
        })
    }

    /// A fragment's file as messages name it: the layer, then the path
    /// inside the layer directory (`team/writer.yaml`,
    /// `base/writer/SKILL.md`); the whole path if it is elsewhere.
    pub fn shown(&self, fragment: &Fragment) -> String {
        self.layers
            .dirs()
            .iter()
            .filter(|d| d.layer == fragment.layer)
            .find_map(|d| fragment.path.strip_prefix(&d.path).ok())
            .map(|rel| format!("{}/{}", fragment.layer.label(), rel.display()))
            .unwrap_or_else(|| fragment.path.display().to_string())
    }

    /// Warnings and errors about the layer directories themselves: see
    /// [`Layers::diagnostics`].
    pub(crate) fn layer_warnings(&self) -> Vec<Diagnostic> {
        self.layers.diagnostics()
    }

    /// An error when a layer directory was refused ([`Layers::refusals`]):
    /// no skill is resolved without all of its layers.
    fn layers_usable(&self) -> Result<()> {
        let refused = self.layers.refusals();
        if refused.is_empty() {
            Ok(())
        } else {
            Err(Error::Invalid(refused))
        }
    }

    /// Checks every fragment of every skill (or of `names`): errors, plus
    /// warnings for shadowed forms, name mismatches and overrides with no
    /// effect.
    pub fn validate(&self, names: Option<&[String]>, jobs: usize) -> Report {
        let (results, diagnostics) = match names {
            Some(names) => (
                crate::par::map(names, jobs, |name| self.validate_one(name)),
                self.layer_warnings(),
            ),
            None => match self.catalog_report() {
                Ok((catalog, diagnostics)) => {
                    let results = crate::par::map(&catalog, jobs, |(name, located)| {
                        self.validate_located(name, located)
                    });
                    (results, diagnostics)
                }
                // A layer too large to list: its refusal is the report.
                Err(e) => {
                    let mut diagnostics = self.layer_warnings();
                    diagnostics.extend(e.diagnostics().iter().cloned());
                    (Vec::new(), diagnostics)
                }
            },
        };
        let mut report = Report {
            diagnostics,
            ..Report::default()
        };
        for one in results {
            report.files += one.files;
            report.skills += 1;
            report.diagnostics.extend(one.diagnostics);
        }
        report
    }

    /// Every skill of the layers, with what [`Skills::validate`] says
    /// before any one skill: the layer directories' diagnostics, the
    /// entries skipped for their names, and names that look alike.
    pub(crate) fn catalog_report(
        &self,
    ) -> Result<(crate::source::layers::Catalog, Vec<Diagnostic>)> {
        let mut diagnostics = self.layer_warnings();
        let (catalog, skipped) = self.layers.catalog_with_skipped()?;
        diagnostics.extend(skipped.into_iter().map(|s| {
            Diagnostic::warning(
                Some(&s.path),
                DiagnosticKind::SkippedName {
                    reason: s.reason.to_owned(),
                },
            )
            .in_layer(s.layer)
        }));
        diagnostics.extend(lookalikes(&catalog));
        Ok((catalog, diagnostics))
    }

    /// The warnings [`Skills::validate`] gives about a resolved skill (a
    /// stale directive, an override with no effect, an orphan, ...), which
    /// every command showing the skill prints too. They are found from the
    /// skill as resolved: nothing is read, checked or merged again.
    pub fn warnings(&self, resolved: &Resolved) -> Vec<Diagnostic> {
        self.warnings_listed(resolved, None)
    }

    /// [`Skills::warnings`], for a caller that also listed the skill's own
    /// files ([`Skills::files`]): they are checked as listed, not listed
    /// again.
    pub fn warnings_with_files(&self, resolved: &Resolved, files: &[SkillFile]) -> Vec<Diagnostic> {
        self.warnings_listed(resolved, Some(files))
    }

    /// [`Skills::warnings`], with the skill's files if they were listed.
    fn warnings_listed(&self, resolved: &Resolved, files: Option<&[SkillFile]>) -> Vec<Diagnostic> {
        let name = resolved.name();
        // A resolved skill's name is valid, so it is located again.
        let Ok(located) = self.locate(name) else {
            return Vec::new();
        };
        self.warnings_at(name, &located, resolved, files)
    }

    /// The warnings of [`Skills::resolved_report`].
    pub(crate) fn warnings_at(
        &self,
        name: &str,
        located: &[Located],
        resolved: &Resolved,
        walked: Option<&[SkillFile]>,
    ) -> Vec<Diagnostic> {
        self.resolved_report(name, located, resolved, walked)
            .diagnostics
            .into_iter()
            .filter(|d| !d.is_error())
            .collect()
    }

    /// [`Skills::report`] of a resolved skill at `located`, and of its own
    /// files as `walked` lists them if they were. A skill merged only in
    /// part, or whose files changed since it was resolved (another count of
    /// them), is checked from its files.
    pub(crate) fn resolved_report(
        &self,
        name: &str,
        located: &[Located],
        resolved: &Resolved,
        walked: Option<&[SkillFile]>,
    ) -> Report {
        if resolved.is_whole() && resolved.fragments().len() == located.len() {
            self.report(name, located, Some(resolved), walked)
        } else {
            self.validate_located(name, located)
        }
    }

    /// Checks one skill.
    pub(crate) fn validate_one(&self, name: &str) -> Report {
        match self.locate(name) {
            Ok(located) => self.validate_located(name, &located),
            Err(_) => {
                let mut out = Report::default();
                let reason = check_name(name).err().unwrap_or_default().to_owned();
                out.diagnostics.push(Diagnostic::error(
                    None,
                    DiagnosticKind::InvalidName {
                        name: name.to_owned(),
                        reason,
                    },
                ));
                out
            }
        }
    }

    /// [`Skills::validate_one`] for files already located.
    pub(crate) fn validate_located(&self, name: &str, located: &[Located]) -> Report {
        self.report(name, located, None, None)
    }

    /// What [`Skills::validate`] says of skill `name` at `located`. Given
    /// the skill already resolved from those files (`resolved`), its
    /// fragments and its merge are used instead of being read, checked and
    /// merged a second time; the checks a resolution passed (each
    /// fragment's, the sections', the merged skill's) are not repeated.
    fn report(
        &self,
        name: &str,
        located: &[Located],
        resolved: Option<&Resolved>,
        walked: Option<&[SkillFile]>,
    ) -> Report {
        if located.is_empty() {
            return Report {
                diagnostics: vec![self.not_found_diagnostic(name)],
                ..Report::default()
            };
        }
        let mut out = Report::default();
        out.diagnostics
            .extend(crate::source::unexportable_at(name, located));
        out.diagnostics.extend(misleading_name(name, located));
        let orphan = files_without_skill(name, located);
        let mut failed = orphan.is_some();
        out.diagnostics.extend(orphan);
        let loaded = self.read_fragments(name, located, resolved, &mut out);
        failed |= loaded.is_none();
        let loaded = loaded.unwrap_or_default();
        let fragments = resolved.map_or(loaded.as_slice(), Resolved::fragments);
        // The skill's own files, listed once: by the caller, else here.
        let files = match walked {
            Some(files) => Ok(std::borrow::Cow::Borrowed(files)),
            None => crate::source::files::collect(located, &self.file_limits)
                .map(std::borrow::Cow::Owned),
        };
        match &files {
            Err(d) => out.diagnostics.push(d.clone()),
            Ok(files) => out.diagnostics.extend(self.own_files_problems(files)),
        }
        if !failed && resolved.is_none() {
            // Before the merge, which it bounds.
            let too_many =
                crate::postmerge::sections(&self.spec, fragments, self.options.max_bytes);
            failed = !too_many.is_empty();
            out.diagnostics.extend(too_many);
        }
        if !failed {
            let files = files.as_deref().ok();
            out.diagnostics
                .extend(self.merged_report(name, fragments, resolved, files));
        }
        out
    }

    /// The error for skill `name` that no layer provides, with the name
    /// meant when one is near.
    fn not_found_diagnostic(&self, name: &str) -> Diagnostic {
        Diagnostic::error(
            None,
            DiagnosticKind::SkillNotFound {
                name: name.to_owned(),
                suggestion: self.near_skill(name),
            },
        )
    }

    /// Reads skill `name`'s fragments from the files at `located` (or,
    /// given the skill `resolved`, takes its fragments), counting the
    /// files into `out` and saying there which forms shadow others, which
    /// files fail to load or check, and which declare another name. The
    /// fragments read; `None` if one failed.
    fn read_fragments(
        &self,
        name: &str,
        located: &[Located],
        resolved: Option<&Resolved>,
        out: &mut Report,
    ) -> Option<Vec<Fragment>> {
        let mut failed = false;
        let mut loaded = Vec::new();
        for (i, l) in located.iter().enumerate() {
            out.files += usize::from(l.form != Form::Files) + l.shadowed.len();
            for ignored in &l.shadowed {
                out.diagnostics.push(
                    Diagnostic::warning(
                        Some(ignored),
                        DiagnosticKind::ShadowedForm {
                            winner: l.path.clone(),
                        },
                    )
                    .in_layer(l.layer),
                );
            }
            // A resolved skill has one fragment per located file, in order.
            if let Some(r) = resolved {
                out.diagnostics
                    .extend(self.name_mismatch(name, &r.fragments()[i]));
                continue;
            }
            match self.load(l) {
                Ok(f) => {
                    out.diagnostics.extend(self.name_mismatch(name, &f));
                    loaded.push(f);
                }
                Err(es) => {
                    failed = true;
                    out.diagnostics.extend(es);
                }
            }
        }
        (!failed).then_some(loaded)
    }

    /// What is wrong with a skill's own files: those a layer may not set,
    /// and those export refuses (a `SKILL.md` among them, a file in the
    /// place of one export generates).
    fn own_files_problems(&self, files: &[SkillFile]) -> Vec<Diagnostic> {
        let mut out = crate::validate::ownership::files(&self.spec, files);
        // What export refuses a skill's files for, at the files.
        out.extend(crate::source::files::skill_md_files(files));
        out.extend(crate::source::files::collisions(files, &self.generated()));
        out
    }

    /// What [`Skills::validate`] says of skill `name` once merged (from
    /// `fragments`, here, unless it was `resolved`): the merged skill's
    /// problems, directives and values that do nothing, its switches, an
    /// orphan or a near name, what its targets say of it, and the files
    /// its entries name that no layer provides (with its own `files`, when
    /// they could be listed).
    fn merged_report(
        &self,
        name: &str,
        fragments: &[Fragment],
        resolved: Option<&Resolved>,
        files: Option<&[SkillFile]>,
    ) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let merged;
        let effective = match resolved {
            Some(r) => r.effective(),
            None => {
                merged = merge(&self.spec, name, fragments);
                out.extend(self.merged_problems(&merged, fragments));
                &merged
            }
        };
        out.extend(self.no_effect_warnings(effective, fragments));
        out.extend(crate::target::switch_problems(
            &self.spec, effective, fragments,
        ));
        match self.orphan(effective, fragments, None) {
            Some(orphan) => out.push(orphan),
            None => out.extend(self.misnamed(effective, fragments)),
        }
        if let Some(search) = &self.target_search {
            let known = self.target_names.get_or_init(|| search.names());
            out.extend(crate::target::unknown_switch_targets(
                &self.spec, effective, fragments, known,
            ));
        }
        out.extend(self.target_problems(effective, fragments, files));
        if let Some(files) = files {
            out.extend(self.missing_files(effective, fragments, files));
        }
        out
    }

    /// What the layers wrote that does nothing: a directive that found
    /// nothing to act on, a value the same as the one below, a heading
    /// that only nearly names a lower one; each said once, by the warning
    /// that says why.
    fn no_effect_warnings(&self, effective: &Effective, fragments: &[Fragment]) -> Vec<Diagnostic> {
        // A value whose directive found nothing to act on is the same as
        // the one below because of it: the stale directive says why, and
        // a second warning that the value has no effect says nothing more.
        let stale = stale_deletes(effective, fragments);
        let mut out: Vec<Diagnostic> = no_effect(&self.spec, effective, fragments)
            .into_iter()
            .filter(|d| !stale.iter().any(|s| s.file == d.file && s.field == d.field))
            .collect();
        // A heading that differs from a lower one only in case or
        // spacing was added unmarked: the near miss says why, and names
        // the heading meant.
        let near = crate::postmerge::near_miss_headings(&self.spec, fragments);
        out.extend(stale.into_iter().filter(|d| {
            !matches!(d.kind, DiagnosticKind::UnmarkedAddition { .. })
                || !near.iter().any(|n| n.file == d.file && n.line == d.line)
        }));
        out.extend(near);
        out
    }

    /// What the targets say of the merged skill: each target it goes to
    /// checks its values, and a layer's file a translation merges into is
    /// read as export reads it (from the skill's own `files`, when they
    /// could be listed). With no target, what flattening it loses.
    fn target_problems(
        &self,
        effective: &Effective,
        fragments: &[Fragment],
        files: Option<&[SkillFile]>,
    ) -> Vec<Diagnostic> {
        if self.targets.is_empty() {
            return self.flatten_warnings(effective, fragments);
        }
        let mut out = Vec::new();
        let values = match effective.to_value() {
            serde_json::Value::Object(m) => m,
            _ => serde_json::Map::new(),
        };
        let mut translated: Vec<&str> = Vec::new();
        // A skill switched off for a target is not exported to it, so it
        // is not judged for it either.
        let switch = crate::target::switch(&self.spec, effective);
        for t in self
            .targets
            .iter()
            .filter(|t| switch.enabled && switch.goes_to(&t.name))
        {
            out.extend(t.check_values(
                &self.spec,
                effective,
                &values,
                fragments,
                self.target_severity,
            ));
            for rel in t.translated_files(&self.spec, &values) {
                if !translated.contains(&rel) {
                    translated.push(rel);
                }
            }
        }
        // A layer's file a translation merges into is parsed by export:
        // its problems are export's, so they are found here.
        for f in files
            .unwrap_or_default()
            .iter()
            .filter(|f| translated.contains(&f.rel.as_str()))
        {
            if let Err(d) = crate::target::read_translated(f, self.options.max_bytes) {
                out.push(d);
            }
        }
        out
    }

    /// Plain string entries of fields whose rule says they name files
    /// (`files: references`: `style.md` names `references/style.md`) that
    /// no layer provides: a warning at the entry. Files no entry names are
    /// normal (skills mention them in their body) and get none.
    fn missing_files(
        &self,
        effective: &Effective,
        fragments: &[Fragment],
        files: &[SkillFile],
    ) -> Vec<Diagnostic> {
        use crate::merge::Merged;
        let have: std::collections::BTreeSet<&str> = files.iter().map(|f| f.rel.as_str()).collect();
        let mut out = Vec::new();
        for (i, field) in effective.fields.iter().enumerate() {
            let (Some(dir), Merged::Keyed(entries)) = (
                self.spec
                    .field_at(i, field.name)
                    .and_then(|f| f.files.as_deref()),
                &field.merged,
            ) else {
                continue;
            };
            for entry in entries {
                let (Some(file), Some(origin)) = (entry.item.value.as_str(), &entry.item.origin)
                else {
                    continue;
                };
                let rel = format!("{dir}/{file}");
                if have.contains(rel.as_str()) {
                    continue;
                }
                let f = fragments.iter().find(|f| f.layer == origin.layer);
                out.push(
                    Diagnostic::warning(
                        Some(&origin.path),
                        DiagnosticKind::MissingFile {
                            field: field.name.to_owned(),
                            path: rel,
                        },
                    )
                    .in_layer(origin.layer)
                    .at(f.and_then(|f| f.position(&origin.pointer, false)))
                    .on_field(field.name),
                );
            }
        }
        out
    }

    fn name_mismatch(&self, name: &str, f: &Fragment) -> Option<Diagnostic> {
        let field = self.spec.name_field.as_deref()?;
        let declared = f.fields().get(field)?.as_str()?;
        (declared != name).then(|| {
            let pointer = crate::merge::field_pointer(field);
            Diagnostic::warning(
                Some(&f.path),
                DiagnosticKind::NameMismatch {
                    field: field.to_owned(),
                    declared: crate::text::excerpt(declared, crate::text::EXCERPT_CHARS),
                    file: name.to_owned(),
                },
            )
            .in_layer(f.layer)
            .at(f.position(&pointer, false))
            .on_field(field)
        })
    }
}

/// A files-only directory ([`Form::Files`]) in the lowest layer that has
/// skill `name`: no lower layer defines the skill its files would add to.
/// An error at the directory.
fn files_without_skill(name: &str, located: &[Located]) -> Option<Diagnostic> {
    let first = located.first().filter(|l| l.form == Form::Files)?;
    Some(
        Diagnostic::error(
            Some(&first.path),
            DiagnosticKind::FilesWithoutSkill {
                name: name.to_owned(),
            },
        )
        .in_layer(first.layer),
    )
}

/// [`Error::NoLayers`] when none of the three layer directories exists;
/// when one was refused (a sources file that cannot be read feeds no base
/// layer), that refusal, which is why.
pub fn no_layers(layers: &Layers) -> Option<Error> {
    let dirs = layers.dirs();
    if dirs.iter().any(|d| d.is_dir) {
        return None;
    }
    let refused = layers.refusals();
    if !refused.is_empty() {
        return Some(Error::Invalid(refused));
    }
    Some(Error::NoLayers {
        searched: dirs.iter().map(|d| d.path.clone()).collect(),
    })
}

/// What `validate` found.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Every error and warning, in skill-name, layer, line order.
    pub diagnostics: Vec<Diagnostic>,
    /// How many files were read.
    pub files: usize,
    /// How many skills were checked.
    pub skills: usize,
}

impl Report {
    /// The number of errors.
    pub fn errors(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }

    /// The number of warnings.
    pub fn warnings(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == crate::error::Severity::Warning)
            .count()
    }

    /// The number of notes.
    pub fn notes(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == crate::error::Severity::Note)
            .count()
    }
}

/// Skill names that are distinct strings but equal after NFC normalisation
/// and case folding (`Writer` and `writer`, `café` composed and decomposed):
/// an override written under one silently misses the other. One warning per
/// name, on its first file, naming a look-alike.
fn lookalikes(catalog: &[(String, Vec<Located>)]) -> Vec<Diagnostic> {
    use unicode_normalization::UnicodeNormalization;
    let mut groups: std::collections::HashMap<String, Vec<usize>> = Default::default();
    for (i, (name, _)) in catalog.iter().enumerate() {
        // Plain lowercase ASCII names cannot collide with each other, only
        // with a name that is not plain: skip the normalisation for them.
        let key = if name
            .bytes()
            .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
        {
            name.clone()
        } else {
            name.nfc()
                .collect::<String>()
                .to_lowercase()
                .nfc()
                .collect()
        };
        groups.entry(key).or_default().push(i);
    }
    let mut out = Vec::new();
    for members in groups.values().filter(|m| m.len() > 1) {
        for (k, &i) in members.iter().enumerate() {
            let other = members[if k == 0 { 1 } else { 0 }];
            let (name, located) = &catalog[i];
            if let Some(first) = located.first() {
                out.push(
                    Diagnostic::warning(
                        Some(&first.path),
                        DiagnosticKind::LookalikeNames {
                            name: name.clone(),
                            other: catalog[other].0.clone(),
                        },
                    )
                    .in_layer(first.layer),
                );
            }
        }
    }
    out.extend(confusables(catalog, &groups));
    out.sort_by(|a, b| a.file.cmp(&b.file));
    out
}

/// Skill names that read the same but are not equal after NFC and case
/// folding (those are [`lookalikes`]): equal under the confusable skeleton
/// of UTS #39 (`pdf-tables`, `pdf-tаbles` with a Cyrillic а, `pdf‐tables`
/// with U+2010). One warning per name, on its first file, naming another
/// and that one's first file. `folded` is the NFC and case-folding groups,
/// by key.
fn confusables(
    catalog: &[(String, Vec<Located>)],
    folded: &std::collections::HashMap<String, Vec<usize>>,
) -> Vec<Diagnostic> {
    // Each name's NFC and case-folding group, to leave out the pairs that
    // warning already names.
    let mut fold_of = vec![0usize; catalog.len()];
    for (g, members) in folded.values().enumerate() {
        for &i in members {
            fold_of[i] = g;
        }
    }
    let mut groups: std::collections::HashMap<String, Vec<usize>> = Default::default();
    for (i, (name, _)) in catalog.iter().enumerate() {
        groups
            .entry(crate::layer::skeleton(name))
            .or_default()
            .push(i);
    }
    let mut out = Vec::new();
    for members in groups.values().filter(|m| m.len() > 1) {
        for &i in members {
            let Some(&other) = members.iter().find(|&&j| fold_of[j] != fold_of[i]) else {
                continue;
            };
            let (name, located) = &catalog[i];
            let (Some(first), Some(other_first)) = (located.first(), catalog[other].1.first())
            else {
                continue;
            };
            out.push(
                Diagnostic::warning(
                    Some(&first.path),
                    DiagnosticKind::ConfusableNames {
                        name: crate::layer::shown(name).into_owned(),
                        other: crate::layer::shown(&catalog[other].0).into_owned(),
                        other_file: crate::text::path(&other_first.path),
                    },
                )
                .in_layer(first.layer),
            );
        }
    }
    out
}

/// Names that hold white space or a dash other than `-` (`trail `,
/// `pdf‐tables`): a warning per kind, on the skill's first file.
fn misleading_name(name: &str, located: &[Located]) -> Vec<Diagnostic> {
    use crate::layer::Misleading;
    let Some(first) = located.first() else {
        return Vec::new();
    };
    crate::layer::misleading(name)
        .into_iter()
        .map(|(kind, chars)| {
            let chars: Vec<String> = chars
                .iter()
                .map(|c| format!("U+{:04X}", *c as u32))
                .collect();
            let chars = crate::text::list(chars.iter().map(String::as_str), false);
            let problem = match kind {
                Misleading::WhiteSpace => format!(
                    "white space ({chars}): it reads as another name, and a mention of the skill \
                     ends at it; rename the skill without it"
                ),
                Misleading::OtherDash => format!(
                    "a dash other than the hyphen-minus '-' ({chars}): it reads as a name with \
                     '-'; rename the skill with '-'"
                ),
            };
            Diagnostic::warning(
                Some(&first.path),
                DiagnosticKind::MisleadingName {
                    name: crate::layer::shown(name).into_owned(),
                    problem,
                },
            )
            .in_layer(first.layer)
        })
        .collect()
}

/// Deletes (`$patch: delete`) that found nothing to delete: a warning at
/// the directive. Not an error: the lower layers change on their own (an
/// upstream skill drops an entry an override deleted), and an override
/// that outlived its target must not break `show` for everyone; `validate`
/// says so, and `--strict` makes it fail.
fn stale_deletes(effective: &Effective, fragments: &[Fragment]) -> Vec<Diagnostic> {
    use crate::validate::MAX_PER_FILE;
    let mut out = Vec::new();
    // Per file: how many were kept, and how many more there are.
    let mut counts: Vec<(crate::Layer, usize, usize)> = Vec::new();
    for field in &effective.fields {
        for c in &field.changes {
            let stale = matches!(
                c.kind,
                crate::merge::ChangeKind::Stale
                    | crate::merge::ChangeKind::Unanchored
                    | crate::merge::ChangeKind::Unmarked
                    | crate::merge::ChangeKind::NotNew
            );
            if !stale {
                continue;
            }
            let n = match counts.iter_mut().find(|(l, _, _)| *l == c.by.layer) {
                Some(n) => n,
                None => {
                    counts.push((c.by.layer, 0, 0));
                    counts.last_mut().expect("just pushed")
                }
            };
            if n.1 >= MAX_PER_FILE {
                n.2 += 1;
                continue;
            }
            n.1 += 1;
            let path = crate::text::excerpt(&c.path, crate::text::EXCERPT_CHARS);
            let f = fragments.iter().find(|f| f.layer == c.by.layer);
            let (kind, pos) = match c.kind {
                crate::merge::ChangeKind::Stale => (
                    DiagnosticKind::StaleDelete { path },
                    f.and_then(|f| f.position(&c.by.pointer, false)),
                ),
                crate::merge::ChangeKind::Unmarked | crate::merge::ChangeKind::NotNew => {
                    let line = c.section.map_or(0, |(line, _)| line);
                    (
                        if c.kind == crate::merge::ChangeKind::Unmarked {
                            DiagnosticKind::UnmarkedAddition { path }
                        } else {
                            DiagnosticKind::NotAnAddition { path }
                        },
                        f.and_then(|f| f.position_in_value(&c.by.pointer, line)),
                    )
                }
                _ => {
                    let (line, verb) = c.section.unwrap_or((0, "before"));
                    (
                        DiagnosticKind::StaleSection {
                            path,
                            directive: verb.to_owned(),
                        },
                        f.and_then(|f| f.position_in_value(&c.by.pointer, line)),
                    )
                }
            };
            out.push(
                Diagnostic::warning(Some(&c.by.path), kind)
                    .in_layer(c.by.layer)
                    .at(pos)
                    .on_field(field.name),
            );
        }
    }
    // In the order of the files and lines they are at.
    out.sort_by_key(|d| (d.layer, d.line));
    for (layer, _, more) in counts {
        if more > 0
            && let Some(f) = fragments.iter().find(|f| f.layer == layer)
        {
            out.push(
                Diagnostic::warning(Some(&f.path), DiagnosticKind::TooManyWarnings { more })
                    .in_layer(layer),
            );
        }
    }
    out
}

/// OVERRIDE fields and DEEP_MERGE leaves set to the value they replace: at
/// most [`MAX_PER_FILE`](crate::validate::MAX_PER_FILE) warnings per file
/// (the first ones in it), then one counting the rest.
fn no_effect(spec: &MergeSpec, effective: &Effective, fragments: &[Fragment]) -> Vec<Diagnostic> {
    use crate::merge::provenance::Sourced;
    use crate::merge::{Visited, visit};
    use crate::validate::{Kept, MAX_PER_FILE};
    let mut kept: Vec<Kept> = fragments
        .iter()
        .map(|f| Kept::new(f, MAX_PER_FILE))
        .collect();
    let mut check = |path: &str, s: &Sourced| {
        // Every link of the chain where a layer repeats the value below it.
        let mut chain: Vec<(&serde_json::Value, &crate::merge::provenance::Origin)> = Vec::new();
        if let Some(o) = &s.origin {
            chain.push((&*s.value, o));
        }
        chain.extend(s.overrode.iter().map(|sh| (&*sh.value, &sh.origin)));
        for pair in chain.windows(2) {
            let ((v, o), (below_v, below_o)) = (pair[0], pair[1]);
            if v == below_v
                && o.layer != below_o.layer
                && let Some(k) = kept.iter_mut().find(|k| k.fragment().layer == o.layer)
            {
                // The field's path is only written out for the warnings shown.
                k.offer(o.pointer.clone(), false, || DiagnosticKind::NoEffect {
                    field: path.to_owned(),
                    below: below_o.layer,
                });
            }
        }
    };
    let mut path = String::new();
    for (i, field) in effective.fields.iter().enumerate() {
        let Some(rule) = spec.field_at(i, field.name) else {
            continue;
        };
        path.clear();
        path.push_str(field.name);
        visit(rule, &field.merged, &mut path, &mut |path, _, v| {
            if let Visited::Value(s) = v {
                check(path, s);
            }
        });
    }
    let mut out = Vec::new();
    for k in kept {
        let (f, more) = (k.fragment(), k.more);
        for (_, pos, kind) in k.into_sorted() {
            let DiagnosticKind::NoEffect { field, below } = kind else {
                continue;
            };
            out.push(
                Diagnostic::warning(
                    Some(&f.path),
                    DiagnosticKind::NoEffect {
                        field: crate::text::excerpt(&field, crate::text::EXCERPT_CHARS),
                        below,
                    },
                )
                .in_layer(f.layer)
                .at(pos)
                .on_field(field),
            );
        }
        if more > 0 {
            out.push(
                Diagnostic::warning(Some(&f.path), DiagnosticKind::TooManyWarnings { more })
                    .in_layer(f.layer),
            );
        }
    }
    out
}
