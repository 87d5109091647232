//! `bernstein_skills._native`: the engine behind the Python package.
//!
//! Every call goes through the library's one [`Context`], built from the
//! environment the caller passes (`Env::from_vars`: a map, and the
//! working directory) and the explicit choices it makes (`Options`: the
//! layer directories of Bernstein's `paths`), exactly as the command line
//! builds it from the process: the same layers (the variables, a
//! project's own `.bernstein/skills`, its locked sources), the same spec
//! and targets, the same checks (the spec's compiled schema, the checks
//! after the merge) and the same export. Values cross the boundary as
//! plain Python objects (`dict`, `list`, `str`, numbers, `None`); every
//! result is owned, and the GIL is released while the engine works (on
//! its thread pool for export, validate and list).
//!
//! Errors are raised as `EngineError(kind, message, details)`: `kind` is
//! the engine's [`ErrorKind`] (`not_found`, `invalid`, ...), which the
//! package turns into one exception class per kind (and Bernstein's own
//! classes where its API raises them), with the file, line, column and
//! field the engine located.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;

use bernstein_skills::context::{Context, Options, Scope};
use bernstein_skills::error::{Diagnostic, DiagnosticKind, Severity};
use bernstein_skills::export::{ConflictKind, ExportOptions, Format};
use bernstein_skills::fragment::LoadOptions;
use bernstein_skills::output::explain as explain_rows;
use bernstein_skills::source::LayerFlags;
use bernstein_skills::spec::StrategyKind as Strategy;
use bernstein_skills::target::TargetSearch;
use bernstein_skills::{Env, Error, ErrorKind, Fragment, Layer, Layers, MergeSpec, Skills, par};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

create_exception!(
    _native,
    EngineError,
    PyException,
    "An error of the engine: (kind, message, details)."
);

/// How deep a Python value may nest before it is refused (the engine's
/// parsers have their own cap; this one keeps the conversion's recursion
/// bounded for values built in Python).
const MAX_DEPTH: usize = 128;

/// A checked merge spec and its compiled fragment schema, shared by every
/// call that uses it (compiling the schema is the expensive part): the
/// engine's `Skills` over no layers, which each call puts over its own.
#[pyclass(frozen, module = "bernstein_skills._native")]
struct Spec {
    template: Skills,
}

impl Spec {
    fn new(spec: MergeSpec) -> Spec {
        let max = bernstein_skills::fragment::DEFAULT_MAX_BYTES;
        Spec {
            template: Skills::new(spec, Layers::from_paths(Default::default()), max),
        }
    }
}

#[pymethods]
impl Spec {
    /// A spec from its YAML text; `path` names it in messages.
    #[staticmethod]
    fn from_text(py: Python<'_>, text: String, path: PathBuf) -> PyResult<Spec> {
        let spec = py
            .allow_threads(|| MergeSpec::from_str(&text, &path))
            .map_err(|e| error(py, e))?;
        Ok(Spec::new(spec))
    }

    /// The spec in file `path`.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Spec> {
        let spec = py
            .allow_threads(|| MergeSpec::load(&path))
            .map_err(|e| error(py, e))?;
        Ok(Spec::new(spec))
    }

    /// The file it was read from.
    #[getter]
    fn path(&self) -> PathBuf {
        self.template.spec().path.clone()
    }

    /// `(field, strategy)` for every field, sorted by name; the strategy
    /// as Bernstein writes it (`override`, `deep-merge`, …).
    fn fields(&self) -> Vec<(String, &'static str)> {
        self.template
            .spec()
            .fields
            .iter()
            .map(|f| (f.name.clone(), strategy_value(f.strategy.kind())))
            .collect()
    }

    /// The field a SKILL.md body goes to, and the one that defaults to the
    /// skill's name.
    fn roles(&self) -> (Option<String>, Option<String>) {
        let spec = self.template.spec();
        (spec.body_field.clone(), spec.name_field.clone())
    }

    /// Bernstein's `merge_layers`: `fragments` is `[(layer, dict)]`; the
    /// result has every field of the spec. Each fragment is checked
    /// against the spec's compiled schema, and the merged skill as every
    /// skill is.
    fn merge<'py>(
        &self,
        py: Python<'py>,
        fragments: Vec<(u8, Bound<'py, PyDict>)>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let mut frags = Vec::with_capacity(fragments.len());
        for (layer, d) in &fragments {
            let layer = layer_of(*layer)?;
            let Value::Object(fields) = to_value(d.as_any(), 0)? else {
                unreachable!("a dict converts to an object")
            };
            let path = PathBuf::from(format!("<{}>", layer.label()));
            frags.push(Fragment::from_fields(layer, &path, fields));
        }
        let skills = &self.template;
        let merged = py
            .allow_threads(|| {
                let resolved = skills.resolve_fragments("", frags)?;
                let Value::Object(m) = resolved.effective().to_value() else {
                    unreachable!("an effective skill is an object")
                };
                Ok::<_, Error>(complete(skills.spec(), m))
            })
            .map_err(|e| error(py, e))?;
        map_to_py(py, &merged)
    }
}

/// What the process would hold: the environment's variables, the
/// working directory, and the data the wheel installed.
fn env_of(vars: &HashMap<String, String>, cwd: PathBuf, share_dir: Option<PathBuf>) -> Env {
    let mut env = Env::from_vars(|k| vars.get(k).map(OsString::from), Some(cwd));
    env.share_dir = share_dir;
    env
}

/// One project, or one set of layer directories, as the engine sees it:
/// the [`Context`] built once, and the spec (with its compiled schema)
/// loaded once. The layers are read again on each call, as each run of
/// the command reads them.
#[pyclass(frozen, module = "bernstein_skills._native")]
struct Engine {
    ctx: Context,
    template: Skills,
}

impl Engine {
    /// The spec and the layers as they are now.
    fn skills(&self) -> Result<Skills, Error> {
        Ok(self.template.with_layers(self.ctx.layers()?))
    }

    /// The fragments of skill `name` in each layer as written (not
    /// validated), base first.
    fn fragments(&self, name: &str) -> Result<Vec<Fragment>, Error> {
        let skills = self.skills()?;
        let located = skills.locate(name)?;
        let options = LoadOptions {
            max_bytes: self.ctx.options().max_fragment_bytes,
            body_field: skills.spec().body_field.clone(),
            ..LoadOptions::default()
        };
        let mut fragments = Vec::with_capacity(located.len());
        let mut errors = Vec::new();
        for l in &located {
            match Fragment::load(l, &options) {
                Ok(f) => fragments.push(f),
                Err(d) => errors.push(d),
            }
        }
        if errors.is_empty() {
            Ok(fragments)
        } else {
            Err(Error::Invalid(errors))
        }
    }
}

#[pymethods]
impl Engine {
    /// The context of `env` (the variables) standing in `cwd`: the
    /// layers `layers` names (base, team, user), else those the
    /// environment chooses as the command line does; the spec `spec`,
    /// else the one the command line finds; the data the wheel installed
    /// in `share_dir`.
    #[new]
    #[pyo3(signature = (env, cwd, share_dir=None, layers=None, spec=None))]
    fn new(
        py: Python<'_>,
        env: HashMap<String, String>,
        cwd: PathBuf,
        share_dir: Option<PathBuf>,
        layers: Option<[PathBuf; 3]>,
        spec: Option<&Spec>,
    ) -> PyResult<Engine> {
        let flags = match layers {
            Some([base, team, user]) => LayerFlags {
                base: Some(base),
                team: Some(team),
                user: Some(user),
                ..LayerFlags::default()
            },
            None => LayerFlags::default(),
        };
        let ctx = Context::new(
            env_of(&env, cwd, share_dir),
            Options {
                layers: flags,
                ..Options::default()
            },
        );
        let template = match spec {
            Some(s) => {
                let search = ctx.target_search(s.template.spec());
                s.template
                    .with_layers(ctx.layers_local())
                    .with_target_search(search)
            }
            None => py
                .allow_threads(|| {
                    let spec = ctx.load_spec()?;
                    ctx.skills_with(spec, ctx.layers_local())
                })
                .map_err(|e| error(py, e))?,
        };
        Ok(Engine { ctx, template })
    }

    /// The spec in use.
    fn spec(&self) -> Spec {
        Spec {
            template: self.template.with_layers(self.template.layers().clone()),
        }
    }

    /// Bernstein's `list_skills`: `[(name, [layer])]`, sorted by name.
    fn names(&self, py: Python<'_>) -> PyResult<Vec<(String, Vec<u8>)>> {
        py.allow_threads(|| {
            let skills = self.skills()?;
            Ok::<_, Error>(
                skills
                    .list()?
                    .into_iter()
                    .map(|(n, ls)| (n, ls.into_iter().map(layer_index).collect()))
                    .collect(),
            )
        })
        .map_err(|e| error(py, e))
    }

    /// `list --json`'s document: `{"places", "skills"}`.
    fn list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let doc = py
            .allow_threads(|| {
                let skills = self.skills()?;
                skills.require_layers()?;
                bernstein_skills::report::list(&skills, par::default_jobs())
            })
            .map_err(|e| error(py, e))?;
        to_py(py, &doc)
    }

    /// `show NAME --json`: the effective skill.
    fn effective<'py>(&self, py: Python<'py>, name: String) -> PyResult<Bound<'py, PyAny>> {
        let value = py
            .allow_threads(|| {
                let resolved = self.skills()?.resolve(&name)?;
                Ok::<_, Error>(resolved.effective().to_value())
            })
            .map_err(|e| error(py, e))?;
        to_py(py, &value)
    }

    /// Bernstein's `load_skill`: `(merged, layers_present)`, the merged
    /// dict with every field of the spec.
    fn load<'py>(&self, py: Python<'py>, name: String) -> PyResult<(Bound<'py, PyDict>, Vec<u8>)> {
        let (merged, present) = py
            .allow_threads(|| {
                let skills = self.skills()?;
                let resolved = skills.resolve(&name)?;
                let present: Vec<u8> = resolved
                    .fragments()
                    .iter()
                    .map(|f| layer_index(f.layer))
                    .collect();
                let Value::Object(m) = resolved.effective().to_value() else {
                    unreachable!("an effective skill is an object")
                };
                Ok::<_, Error>((complete(skills.spec(), m), present))
            })
            .map_err(|e| error(py, e))?;
        Ok((map_to_py(py, &merged)?, present))
    }

    /// Bernstein's `collect_layers`: `[(layer, dict)]`, each fragment as
    /// written (not validated), base first.
    fn collect<'py>(
        &self,
        py: Python<'py>,
        name: String,
    ) -> PyResult<Vec<(u8, Bound<'py, PyDict>)>> {
        let fragments = py
            .allow_threads(|| self.fragments(&name))
            .map_err(|e| error(py, e))?;
        fragments
            .iter()
            .map(|f| Ok((layer_index(f.layer), map_to_py(py, f.fields())?)))
            .collect()
    }

    /// One row per value of the effective skill: its path, how it was
    /// merged, the value, the layer, file and line that set it, and what
    /// it replaced.
    fn explain<'py>(&self, py: Python<'py>, name: String) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let rows = py
            .allow_threads(|| {
                let skills = self.skills()?;
                let resolved = skills.resolve(&name)?;
                Ok::<_, Error>(explain_rows::explain(skills.spec(), &resolved))
            })
            .map_err(|e| error(py, e))?;
        rows.iter()
            .map(|r| {
                let d = PyDict::new(py);
                d.set_item("path", &r.path)?;
                d.set_item("kind", r.kind.name())?;
                d.set_item("value", to_py(py, &r.value)?)?;
                d.set_item(
                    "origin",
                    r.place.as_ref().map(|p| place_dict(py, p)).transpose()?,
                )?;
                let replaced = PyList::empty(py);
                for x in &r.replaced {
                    let e = place_dict(py, &x.place)?;
                    e.set_item("value", to_py(py, &x.value)?)?;
                    replaced.append(e)?;
                }
                d.set_item("replaced", replaced)?;
                d.set_item("removed", r.removed)?;
                Ok(d)
            })
            .collect()
    }

    /// Every problem in the layers (all skills, or `names`), as the
    /// command's `validate` finds them, on the engine's thread pool:
    /// `(diagnostics, files, skills)`. `targets`: the consumers whose
    /// rules to judge by (else the project's own, as warnings);
    /// `target_dirs`: where to find them instead of the context's places.
    #[pyo3(signature = (names=None, targets=Vec::new(), target_dirs=None))]
    fn validate<'py>(
        &self,
        py: Python<'py>,
        names: Option<Vec<String>>,
        targets: Vec<String>,
        target_dirs: Option<Vec<PathBuf>>,
    ) -> PyResult<(Vec<Bound<'py, PyDict>>, usize, usize)> {
        let report = py
            .allow_threads(|| {
                let skills = match target_dirs {
                    Some(dirs) => {
                        let search = TargetSearch { dirs };
                        let loaded = targets
                            .iter()
                            .map(|t| search.find(t))
                            .collect::<Result<Vec<_>, Error>>()?;
                        self.template
                            .with_layers(self.ctx.layers_quiet())
                            .with_target_search(search)
                            .with_targets(loaded)
                    }
                    None => self.ctx.validation(&self.template, &targets)?,
                };
                skills.require_layers()?;
                Ok::<_, Error>(skills.validate(names.as_deref(), par::default_jobs()))
            })
            .map_err(|e| error(py, e))?;
        let ds = report
            .diagnostics
            .iter()
            .map(|d| diagnostic_dict(py, d))
            .collect::<PyResult<Vec<_>>>()?;
        Ok((ds, report.files, report.skills))
    }

    /// The targets found (first wins), by name, with their files: in
    /// `dirs`, else where the context looks.
    #[pyo3(signature = (dirs=None))]
    fn targets(
        &self,
        py: Python<'_>,
        dirs: Option<Vec<PathBuf>>,
    ) -> PyResult<Vec<(String, PathBuf)>> {
        py.allow_threads(|| {
            let search = match dirs {
                Some(dirs) => TargetSearch { dirs },
                None => self.ctx.target_search(self.template.spec()),
            };
            search
                .names()
                .into_iter()
                .map(|n| {
                    let t = search.find(&n)?;
                    Ok((n, t.path.clone()))
                })
                .collect::<Result<Vec<_>, Error>>()
        })
        .map_err(|e| error(py, e))
    }

    /// Writes every effective skill into `out` (or, for `target`, its
    /// place for `scope`), as `export --out` (`--target`) does, owning only
    /// what it wrote: `{dir, written, unchanged, removed, failed, refused,
    /// kept, warnings}`.
    #[pyo3(signature = (out=None, target=None, scope="user", format="json", prune=false, adopt=Vec::new(), adopt_all=false, force=false, keep_going=false, state_dir=None, strict=false))]
    #[allow(clippy::too_many_arguments)]
    fn export<'py>(
        &self,
        py: Python<'py>,
        out: Option<PathBuf>,
        target: Option<String>,
        scope: &str,
        format: &str,
        prune: bool,
        adopt: Vec<String>,
        adopt_all: bool,
        force: bool,
        keep_going: bool,
        state_dir: Option<PathBuf>,
        strict: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let Some(format) = Format::from_label(format) else {
            return Err(PyValueError::new_err(format!(
                "unknown export format {format:?} (expected 'json' or 'skill')"
            )));
        };
        let scope = match scope {
            "user" => Scope::User,
            "project" => Scope::Project,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "unknown scope {scope:?} (expected 'user' or 'project')"
                )));
            }
        };
        let ctx = &self.ctx;
        let (dir, done) = py
            .allow_threads(|| {
                let skills = self.skills()?;
                let target = match &target {
                    Some(t) => ctx.targets(skills.spec(), std::slice::from_ref(t))?.pop(),
                    None => None,
                };
                let dir = match (out, &target) {
                    (Some(d), _) => d,
                    (None, Some(t)) => ctx.target_place(t, scope)?,
                    (None, None) => {
                        return Err(Error::refused(
                            ErrorKind::InvalidInput,
                            None,
                            "export needs a directory (out) or a target",
                        ));
                    }
                };
                let (skills, in_repository) = ctx.for_export(&skills, &dir);
                let trust = ctx.trust_store();
                let state_dir = state_dir.or_else(|| ctx.state_dir());
                let options = ExportOptions {
                    format,
                    prune,
                    adopt,
                    adopt_all,
                    force,
                    keep_going,
                    jobs: par::default_jobs(),
                    state_dir: state_dir.as_deref(),
                    target: target.as_ref(),
                    trust: Some(&trust),
                    in_repository,
                    strict,
                    // What validate warns about each skill written, as the
                    // command prints them.
                    warnings: true,
                    ..ExportOptions::default()
                };
                let done = skills.export_with(&dir, &options)?;
                Ok::<_, Error>((dir, done))
            })
            .map_err(|e| error(py, e))?;
        let d = PyDict::new(py);
        d.set_item("dir", dir)?;
        d.set_item("written", &done.written)?;
        d.set_item("unchanged", done.unchanged)?;
        d.set_item("removed", &done.removed)?;
        let failed = PyList::empty(py);
        for e in &done.failed {
            failed.append(error_dict(py, e)?)?;
        }
        d.set_item("failed", failed)?;
        d.set_item(
            "refused",
            done.refused
                .iter()
                .map(|c| format!("{}: {}", c.path.display(), conflict(&c.kind)))
                .collect::<Vec<_>>(),
        )?;
        d.set_item("kept", &done.kept)?;
        let warnings = PyList::empty(py);
        for w in &done.warnings {
            warnings.append(diagnostic_dict(py, w)?)?;
        }
        d.set_item("warnings", warnings)?;
        Ok(d)
    }
}

/// Bernstein's layer directories for `env` (its XDG layout: the data home
/// for the base layer, the configuration home for team and user), as the
/// engine reads the variables; `None` where they name no absolute place.
#[pyfunction]
fn default_layer_roots(env: HashMap<String, String>) -> [Option<PathBuf>; 3] {
    let env = Env::from_vars(|k| env.get(k).map(OsString::from), None);
    let data = env.data_dir();
    let config = env.config_dir();
    [
        data.map(|d| d.join("base")),
        config.as_ref().map(|d| d.join("team")),
        config.map(|d| d.join("user")),
    ]
}

fn place_dict<'py>(py: Python<'py>, p: &explain_rows::Place) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("layer", p.layer.label())?;
    d.set_item("file", &p.file)?;
    d.set_item("line", p.line)?;
    Ok(d)
}

fn strategy_value(s: Strategy) -> &'static str {
    match s {
        Strategy::Override => "override",
        Strategy::DeepMerge => "deep-merge",
        Strategy::KeyedReplace => "keyed-replace",
        Strategy::Append => "append",
    }
}

fn layer_of(i: u8) -> PyResult<Layer> {
    match i {
        0 => Ok(Layer::Base),
        1 => Ok(Layer::Team),
        2 => Ok(Layer::User),
        _ => Err(PyValueError::new_err(format!("no layer {i}"))),
    }
}

fn layer_index(l: Layer) -> u8 {
    match l {
        Layer::Base => 0,
        Layer::Team => 1,
        Layer::User => 2,
    }
}

/// The value a field takes when no layer sets it, as Bernstein's
/// `merge_layers` fills it: `""`, `[]` or `{}` by strategy.
fn default_for(s: Strategy) -> Value {
    match s {
        Strategy::Override => Value::String(String::new()),
        Strategy::Append | Strategy::KeyedReplace => Value::Array(Vec::new()),
        Strategy::DeepMerge => Value::Object(Map::new()),
    }
}

/// Every field of `spec` in `merged`, with the default where no layer set it.
fn complete(spec: &MergeSpec, mut merged: Map<String, Value>) -> Map<String, Value> {
    merged.remove(bernstein_skills::spec::LAYERS_PRESENT);
    for f in &spec.fields {
        if !merged.contains_key(&f.name) {
            let default = match &f.default {
                Value::Null => default_for(f.strategy.kind()),
                v => v.clone(),
            };
            merged.insert(f.name.clone(), default);
        }
    }
    merged
}

// ---- values across the boundary --------------------------------------------

fn to_value(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err(format!(
            "a value nests deeper than {MAX_DEPTH} levels"
        )));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        return Ok(Value::String(s.to_str()?.to_owned()));
    }
    if let Ok(b) = obj.downcast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(i) = obj.downcast::<PyInt>() {
        if let Ok(v) = i.extract::<i64>() {
            return Ok(Value::Number(v.into()));
        }
        if let Ok(v) = i.extract::<u64>() {
            return Ok(Value::Number(v.into()));
        }
        return Err(PyValueError::new_err(
            "an integer outside the 64-bit range cannot be merged",
        ));
    }
    if let Ok(f) = obj.downcast::<PyFloat>() {
        return Number::from_f64(f.value())
            .map(Value::Number)
            .ok_or_else(|| PyValueError::new_err("NaN and infinity cannot be merged"));
    }
    if let Ok(d) = obj.downcast::<PyDict>() {
        let mut m = Map::new();
        for (k, v) in d.iter() {
            let Ok(k) = k.downcast::<PyString>() else {
                return Err(PyTypeError::new_err(format!(
                    "non-string key {}",
                    k.repr()?
                )));
            };
            m.insert(k.to_str()?.to_owned(), to_value(&v, depth + 1)?);
        }
        return Ok(Value::Object(m));
    }
    if let Ok(l) = obj.downcast::<PyList>() {
        return l.iter().map(|v| to_value(&v, depth + 1)).collect();
    }
    if let Ok(t) = obj.downcast::<PyTuple>() {
        return t.iter().map(|v| to_value(&v, depth + 1)).collect();
    }
    Err(PyTypeError::new_err(format!(
        "a value of type {} cannot be merged (dict, list, tuple, str, int, float, bool and None can)",
        obj.get_type().name()?
    )))
}

fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(a) => {
            let list = PyList::empty(py);
            for x in a {
                list.append(to_py(py, x)?)?;
            }
            list.into_any()
        }
        Value::Object(m) => map_to_py(py, m)?.into_any(),
    })
}

fn map_to_py<'py>(py: Python<'py>, m: &Map<String, Value>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, x) in m {
        d.set_item(k, to_py(py, x)?)?;
    }
    Ok(d)
}

// ---- errors ------------------------------------------------------------------

/// What Bernstein's API raises for a diagnostic: `KeyError`
/// (`unknown_field`), `TypeError` (`wrong_type`), or neither.
fn bernstein_class(k: &DiagnosticKind) -> Option<&'static str> {
    match k {
        DiagnosticKind::UnknownField { .. } => Some("unknown_field"),
        DiagnosticKind::WrongType { .. } | DiagnosticKind::MissingKey { .. } => Some("wrong_type"),
        _ => None,
    }
}

fn diagnostic_dict<'py>(py: Python<'py>, d: &Diagnostic) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("file", d.file.as_ref().map(|p| p.to_path_buf()))?;
    out.set_item("layer", d.layer.map(|l| l.label()))?;
    out.set_item("line", d.line)?;
    out.set_item("column", d.column)?;
    let field = match &d.kind {
        DiagnosticKind::UnknownField { field, .. } => Some(field.clone()),
        _ => d.field.clone(),
    };
    out.set_item("field", field)?;
    out.set_item("message", d.message())?;
    out.set_item(
        "severity",
        match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        },
    )?;
    out.set_item("class", bernstein_class(&d.kind))?;
    out.set_item("text", d.to_string())?;
    Ok(out)
}

/// An error as a dict: `kind` (the engine's [`ErrorKind`]), `message`,
/// `file`, `diagnostics` (each located), and, for a skill no layer has,
/// `name` and `searched`.
fn error_dict<'py>(py: Python<'py>, e: &Error) -> PyResult<Bound<'py, PyDict>> {
    let details = PyDict::new(py);
    details.set_item("kind", e.kind().label())?;
    details.set_item("message", e.to_string())?;
    details.set_item("file", e.file().map(|p| p.to_path_buf()))?;
    match e {
        Error::NotFound { name, searched, .. } => {
            details.set_item("name", name)?;
            details.set_item("searched", searched.clone())?;
        }
        Error::InvalidName { name, .. } => details.set_item("name", name)?,
        _ => {}
    }
    let list = PyList::empty(py);
    for d in e.diagnostics() {
        list.append(diagnostic_dict(py, d)?)?;
    }
    details.set_item("diagnostics", list)?;
    Ok(details)
}

/// `EngineError(kind, message, details)` ([`error_dict`]).
fn error(py: Python<'_>, e: Error) -> PyErr {
    match error_dict(py, &e) {
        Ok(details) => EngineError::new_err((e.kind().label(), e.to_string(), details.unbind())),
        Err(err) => err,
    }
}

/// Why export refused a skill, in words.
fn conflict(kind: &ConflictKind) -> String {
    match kind {
        ConflictKind::Unmanaged(what) => {
            format!("{what} export did not write (adopt it to take it over)")
        }
        ConflictKind::HandEdited => {
            "changed by hand since export wrote it (force to overwrite)".into()
        }
        ConflictKind::Unconfirmed(what) => format!(
            "{what} the directory's record claims, which no export on this machine wrote (adopt it to confirm)"
        ),
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("EngineError", m.py().get_type::<EngineError>())?;
    m.add("ERROR_KINDS", ErrorKind::ALL.map(ErrorKind::label).to_vec())?;
    m.add_class::<Spec>()?;
    m.add_class::<Engine>()?;
    m.add_function(wrap_pyfunction!(default_layer_roots, m)?)?;
    Ok(())
}
