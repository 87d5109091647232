//! `bernstein_skills._native`: the engine behind the Python package.
//!
//! The Python package (`python/bernstein_skills/`) mirrors Bernstein's
//! `bernstein.core.skills.layered` API (enums, frozen dataclasses, errors)
//! and calls these functions for the work: reading the layers, validating
//! fragments and merging them. Values cross the boundary as plain Python
//! objects (`dict`, `list`, `str`, numbers, `None`); every result is owned
//! (converted from the engine's borrowed `Effective` inside the call), and
//! the GIL is released while the engine reads, checks and merges.
//!
//! Errors are raised as `EngineError(kind, message, details)`, which the
//! package turns into Bernstein's exceptions (`UnknownFieldError`,
//! `SkillNotFoundError`, `TypeError`) or its own (`SkillError`), each with
//! the file, line, column and field the engine located.

use std::path::PathBuf;
use std::sync::Arc;

use bernstein_skills::error::{Diagnostic, DiagnosticKind, Severity};
use bernstein_skills::export::{ConflictKind, ExportOptions, Format};
use bernstein_skills::fragment::{DEFAULT_MAX_BYTES, LoadOptions};
use bernstein_skills::output::explain as explain_rows;
use bernstein_skills::spec::StrategyKind as Strategy;
use bernstein_skills::target::TargetSearch;
use bernstein_skills::{Error, Fragment, Layer, Layers, MergeSpec, Skills, Validator, merge};
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
/// call that uses it (compiling the schema is the expensive part).
struct SpecInner {
    spec: MergeSpec,
    /// Bernstein's table: a KEYED_REPLACE entry must be a mapping (the
    /// engine's own specs also take plain names).
    mappings_only: bool,
    validator: Validator,
    options: LoadOptions,
}

/// A merge spec, loaded from text or a file.
#[pyclass(frozen, module = "bernstein_skills._native")]
struct Spec {
    inner: Arc<SpecInner>,
}

impl Spec {
    fn new(spec: MergeSpec, mappings_only: bool) -> Spec {
        let validator = Validator::new(&spec);
        let options = LoadOptions {
            max_bytes: DEFAULT_MAX_BYTES,
            body_field: spec.body_field.clone(),
            ..LoadOptions::default()
        };
        Spec {
            inner: Arc::new(SpecInner {
                spec,
                mappings_only,
                validator,
                options,
            }),
        }
    }
}

#[pymethods]
impl Spec {
    /// A spec from its YAML text; `path` names it in messages.
    /// `mappings_only`: KEYED_REPLACE entries must be mappings, as in
    /// Bernstein's `MergeSpec`.
    #[staticmethod]
    #[pyo3(signature = (text, path, mappings_only=false))]
    fn from_text(
        py: Python<'_>,
        text: String,
        path: PathBuf,
        mappings_only: bool,
    ) -> PyResult<Spec> {
        let spec = py
            .allow_threads(|| MergeSpec::from_str(&text, &path))
            .map_err(|e| error(py, e))?;
        Ok(Spec::new(spec, mappings_only))
    }

    /// The spec in file `path`.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Spec> {
        let spec = py
            .allow_threads(|| MergeSpec::load(&path))
            .map_err(|e| error(py, e))?;
        Ok(Spec::new(spec, false))
    }

    /// The file it was read from.
    #[getter]
    fn path(&self) -> PathBuf {
        self.inner.spec.path.clone()
    }

    /// `(field, strategy)` for every field, sorted by name; the strategy
    /// as Bernstein writes it (`override`, `deep-merge`, …).
    fn fields(&self) -> Vec<(String, &'static str)> {
        self.inner
            .spec
            .fields
            .iter()
            .map(|f| (f.name.clone(), strategy_value(f.strategy.kind())))
            .collect()
    }

    /// The field a SKILL.md body goes to, and the one that defaults to the
    /// skill's name.
    fn roles(&self) -> (Option<String>, Option<String>) {
        (
            self.inner.spec.body_field.clone(),
            self.inner.spec.name_field.clone(),
        )
    }
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

fn kind_name(k: &DiagnosticKind) -> &'static str {
    match k {
        DiagnosticKind::UnknownField { .. } => "unknown_field",
        DiagnosticKind::WrongType { .. } => "wrong_type",
        DiagnosticKind::MissingKey { .. } => "wrong_type",
        _ => "invalid",
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
    out.set_item("kind", kind_name(&d.kind))?;
    out.set_item("text", d.to_string())?;
    Ok(out)
}

/// `EngineError(kind, message, details)`: `details` holds `diagnostics`
/// (each located) and, for a skill no layer has, `name` and `searched`.
fn error(py: Python<'_>, e: Error) -> PyErr {
    let details = PyDict::new(py);
    let build = || -> PyResult<(&'static str, String)> {
        Ok(match &e {
            Error::NotFound { name, searched, .. } => {
                details.set_item("name", name)?;
                details.set_item("searched", searched.clone())?;
                ("not_found", e.to_string())
            }
            Error::NoLayers { .. } => ("no_layers", e.to_string()),
            Error::InvalidName { name, .. } => {
                details.set_item("name", name)?;
                ("invalid_name", e.to_string())
            }
            Error::Spec(d) => {
                details.set_item("diagnostics", vec![diagnostic_dict(py, d)?])?;
                ("spec", e.to_string())
            }
            Error::Strict { problems } => {
                let list = PyList::empty(py);
                for d in problems {
                    list.append(diagnostic_dict(py, d)?)?;
                }
                details.set_item("diagnostics", list)?;
                ("strict", e.to_string())
            }
            Error::Invalid(ds) => {
                let list = PyList::empty(py);
                for d in ds {
                    list.append(diagnostic_dict(py, d)?)?;
                }
                details.set_item("diagnostics", list)?;
                // The first error decides the exception's class.
                let first = ds.iter().find(|d| d.severity == Severity::Error);
                let kind = first.map_or("invalid", |d| kind_name(&d.kind));
                (kind, e.to_string())
            }
            _ => ("error", e.to_string()),
        })
    };
    match build() {
        Ok((kind, message)) => EngineError::new_err((kind, message, details.unbind())),
        Err(err) => err,
    }
}

/// Bernstein's rule that a KEYED_REPLACE list holds mappings: the first
/// entry that is not one, located, as a `wrong_type` error.
fn keyed_entries(
    inner: &SpecInner,
    fragments: &[Fragment],
) -> Result<(), (String, Option<PathBuf>, Option<usize>, String)> {
    if !inner.mappings_only {
        return Ok(());
    }
    for f in fragments {
        for field in &inner.spec.fields {
            if field.strategy.kind() != Strategy::KeyedReplace {
                continue;
            }
            let Some(Value::Array(items)) = f.fields().get(&field.name) else {
                continue;
            };
            if let Some((i, v)) = items.iter().enumerate().find(|(_, v)| !v.is_object()) {
                let pointer = format!("/{}/{i}", field.name);
                let message = format!(
                    "field '{}' expects a list of mappings; saw {} inside the list",
                    field.name,
                    bernstein_skills::fragment::describe(v)
                );
                let file =
                    (!f.path.to_string_lossy().starts_with('<')).then(|| f.path.to_path_buf());
                return Err((field.name.clone(), file, f.line_of(&pointer), message));
            }
        }
    }
    Ok(())
}

fn keyed_error(
    py: Python<'_>,
    (field, file, line, message): (String, Option<PathBuf>, Option<usize>, String),
) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let d = PyDict::new(py);
        d.set_item("file", file)?;
        d.set_item("layer", None::<String>)?;
        d.set_item("line", line)?;
        d.set_item("column", None::<usize>)?;
        d.set_item("field", &field)?;
        d.set_item("message", &message)?;
        d.set_item("severity", "error")?;
        d.set_item("kind", "wrong_type")?;
        let details = PyDict::new(py);
        details.set_item("diagnostics", vec![d])?;
        Ok(EngineError::new_err((
            "wrong_type",
            message.clone(),
            details.unbind(),
        )))
    };
    build().unwrap_or_else(|e| e)
}

/// What a merge can fail with: the engine's error, or Bernstein's rule on
/// keyed entries.
enum Failure {
    Engine(Error),
    Keyed((String, Option<PathBuf>, Option<usize>, String)),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Engine(e)
    }
}

fn failure(py: Python<'_>, f: Failure) -> PyErr {
    match f {
        Failure::Engine(e) => error(py, e),
        Failure::Keyed(k) => keyed_error(py, k),
    }
}

/// The checks Bernstein's table needs of an in-memory fragment, without
/// the schema: every field declared, APPEND and KEYED_REPLACE values lists,
/// DEEP_MERGE values mappings, and each keyed entry's identity (its rule's
/// keys: `name`, `id` or `code` in a table) not repeated in its list, an
/// entry without one refused unless the rule keeps it (`unkeyed: append`,
/// as a table's rules do). A table declares no types or constraints, so
/// the schema would find nothing more; this is what keeps `merge_layers`
/// on small fragments fast.
fn quick_check(spec: &MergeSpec, f: &Fragment) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut push = |key: &str, kind: DiagnosticKind| {
        let mut d = Diagnostic::error(Some(&f.path), kind);
        d.layer = Some(f.layer);
        d.field = Some(key.to_owned());
        out.push(d);
    };
    let wrong = |key: &str, kind: Strategy, expected: &str, v: &Value| DiagnosticKind::WrongType {
        field: key.to_owned(),
        strategy: kind.name().to_owned(),
        expected: expected.to_owned(),
        found: bernstein_skills::fragment::describe(v).to_owned(),
    };
    for (key, v) in f.fields() {
        let Some(field) = spec.field(key) else {
            push(
                key,
                DiagnosticKind::UnknownField {
                    field: key.clone(),
                    suggestion: None,
                },
            );
            continue;
        };
        let kind = field.strategy.kind();
        match (kind, v) {
            (Strategy::Override, _) | (Strategy::Append, Value::Array(_)) => {}
            (Strategy::DeepMerge, Value::Object(_)) => {}
            (Strategy::KeyedReplace, Value::Array(items)) => {
                let bernstein_skills::spec::Strategy::KeyedReplace { keys, unkeyed, .. } =
                    &field.strategy
                else {
                    unreachable!("a KEYED_REPLACE rule")
                };
                let mut seen: Vec<((&str, &str), usize)> = Vec::with_capacity(items.len());
                for (index, item) in items.iter().enumerate() {
                    // Entries that are not mappings: `keyed_entries`.
                    let Value::Object(entry) = item else { continue };
                    let id = keys.iter().find_map(|k| match entry.get(k) {
                        Some(Value::String(s)) if !s.is_empty() => Some((k.as_str(), s.as_str())),
                        _ => None,
                    });
                    match id {
                        None if *unkeyed == bernstein_skills::spec::Unkeyed::Append => {}
                        None => push(
                            key,
                            DiagnosticKind::MissingKey {
                                field: key.clone(),
                                index,
                                keys: keys.clone(),
                                suggestion: None,
                            },
                        ),
                        Some(id) => match seen.iter().find(|s| s.0 == id).map(|s| s.1) {
                            Some(first) => push(
                                key,
                                DiagnosticKind::DuplicateIdentity {
                                    field: key.clone(),
                                    identity: format!("{}={}", id.0, id.1),
                                    first,
                                    index,
                                },
                            ),
                            None => seen.push((id, index)),
                        },
                    }
                }
            }
            (Strategy::Append | Strategy::KeyedReplace, _) => {
                push(key, wrong(key, kind, "a list", v))
            }
            (Strategy::DeepMerge, _) => push(key, wrong(key, kind, "a mapping", v)),
        }
    }
    out
}

// ---- the merge of in-memory fragments ----------------------------------------

/// Bernstein's `merge_layers`: `fragments` is `[(layer, dict)]`, lowest
/// first; the result has every field of the spec.
#[pyfunction]
fn merge_layers<'py>(
    py: Python<'py>,
    spec: &Spec,
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
    frags.sort_by_key(|f| f.layer);
    let inner = spec.inner.clone();
    let merged = py
        .allow_threads(move || {
            let mut errors = Vec::new();
            for f in &frags {
                if inner.mappings_only {
                    errors.extend(quick_check(&inner.spec, f));
                } else {
                    errors.extend(inner.validator.validate(&inner.spec, f));
                }
            }
            errors.retain(|d| d.severity == Severity::Error);
            if !errors.is_empty() {
                return Err(Failure::Engine(Error::Invalid(errors)));
            }
            keyed_entries(&inner, &frags).map_err(Failure::Keyed)?;
            let Value::Object(m) = merge(&inner.spec, "", &frags).to_value() else {
                unreachable!("an effective skill is an object")
            };
            Ok(complete(&inner.spec, m))
        })
        .map_err(|e| failure(py, e))?;
    map_to_py(py, &merged)
}

// ---- layers on disk ----------------------------------------------------------

fn layers(paths: &[PathBuf; 3]) -> Layers {
    Layers::from_paths(paths.clone())
}

/// The fragments of skill `name` in each layer, read and validated, base
/// first. `Ok(None)`: no layer has it.
fn fragments_of(
    inner: &SpecInner,
    paths: &[PathBuf; 3],
    name: &str,
    validate: bool,
) -> Result<Vec<Fragment>, Error> {
    bernstein_skills::layer::check_name(name).map_err(|reason| Error::InvalidName {
        name: name.to_owned(),
        reason,
    })?;
    let layers = layers(paths);
    let located = layers.locate(name);
    if located.is_empty() {
        return Err(Error::NotFound {
            name: name.to_owned(),
            searched: paths.to_vec(),
            suggestion: None,
        });
    }
    let mut fragments = Vec::with_capacity(located.len());
    let mut errors = Vec::new();
    for l in &located {
        match Fragment::load(l, &inner.options) {
            Ok(f) => {
                if validate {
                    errors.extend(
                        inner
                            .validator
                            .validate(&inner.spec, &f)
                            .into_iter()
                            .filter(|d| d.severity == Severity::Error),
                    );
                }
                fragments.push(f);
            }
            Err(d) => errors.push(d),
        }
    }
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    Ok(fragments)
}

/// Bernstein's `load_skill`: `(merged, layers_present)`, the merged dict
/// with every field of the spec.
#[pyfunction]
fn load_skill<'py>(
    py: Python<'py>,
    spec: &Spec,
    paths: [PathBuf; 3],
    name: String,
) -> PyResult<(Bound<'py, PyDict>, Vec<u8>)> {
    let inner = spec.inner.clone();
    let (merged, present) = py
        .allow_threads(move || {
            let fragments = fragments_of(&inner, &paths, &name, true)?;
            keyed_entries(&inner, &fragments).map_err(Failure::Keyed)?;
            let present: Vec<u8> = fragments.iter().map(|f| layer_index(f.layer)).collect();
            let Value::Object(m) = merge(&inner.spec, &name, &fragments).to_value() else {
                unreachable!("an effective skill is an object")
            };
            Ok::<_, Failure>((complete(&inner.spec, m), present))
        })
        .map_err(|e| failure(py, e))?;
    Ok((map_to_py(py, &merged)?, present))
}

/// Bernstein's `collect_layers`: `[(layer, dict)]`, each fragment as
/// written (not validated), base first; `[]` when no layer has it.
#[pyfunction]
fn collect_layers<'py>(
    py: Python<'py>,
    spec: &Spec,
    paths: [PathBuf; 3],
    name: String,
) -> PyResult<Vec<(u8, Bound<'py, PyDict>)>> {
    let inner = spec.inner.clone();
    let fragments = py
        .allow_threads(move || match fragments_of(&inner, &paths, &name, false) {
            Err(Error::NotFound { .. }) => Ok(Vec::new()),
            other => other,
        })
        .map_err(|e| error(py, e))?;
    fragments
        .iter()
        .map(|f| Ok((layer_index(f.layer), map_to_py(py, f.fields())?)))
        .collect()
}

/// Bernstein's `list_skills`: `[(name, [layer])]`, sorted by name.
#[pyfunction]
fn list_skills(py: Python<'_>, paths: [PathBuf; 3]) -> Vec<(String, Vec<u8>)> {
    py.allow_threads(move || {
        layers(&paths)
            .names()
            .into_iter()
            .map(|(n, ls)| (n, ls.into_iter().map(layer_index).collect()))
            .collect()
    })
}

// ---- what this project adds --------------------------------------------------

fn skills(inner: &SpecInner, paths: &[PathBuf; 3]) -> Skills {
    Skills::new(inner.spec.clone(), layers(paths), inner.options.max_bytes)
}

fn place_dict<'py>(py: Python<'py>, p: &explain_rows::Place) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("layer", p.layer.label())?;
    d.set_item("file", &p.file)?;
    d.set_item("line", p.line)?;
    Ok(d)
}

/// One row per value of the effective skill: its path, how it was merged,
/// the value, the layer, file and line that set it, and what it replaced.
#[pyfunction]
fn explain<'py>(
    py: Python<'py>,
    spec: &Spec,
    paths: [PathBuf; 3],
    name: String,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let inner = spec.inner.clone();
    let rows = py
        .allow_threads(move || {
            let skills = skills(&inner, &paths);
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

/// Every problem in the layers (all skills, or `names`), as
/// `validate` finds them: `(diagnostics, files, skills)`.
#[pyfunction]
#[pyo3(signature = (spec, paths, names=None, targets=None, target_dirs=Vec::new()))]
fn validate<'py>(
    py: Python<'py>,
    spec: &Spec,
    paths: [PathBuf; 3],
    names: Option<Vec<String>>,
    targets: Option<Vec<String>>,
    target_dirs: Vec<PathBuf>,
) -> PyResult<(Vec<Bound<'py, PyDict>>, usize, usize)> {
    let inner = spec.inner.clone();
    let report = py
        .allow_threads(move || {
            let mut skills = skills(&inner, &paths);
            if let Some(targets) = targets {
                let search = TargetSearch { dirs: target_dirs };
                let loaded = targets
                    .iter()
                    .map(|t| search.find(t))
                    .collect::<Result<Vec<_>, Error>>()?;
                skills = skills.with_targets(loaded);
            }
            Ok::<_, Error>(skills.validate(names.as_deref(), 1))
        })
        .map_err(|e| error(py, e))?;
    let ds = report
        .diagnostics
        .iter()
        .map(|d| diagnostic_dict(py, d))
        .collect::<PyResult<Vec<_>>>()?;
    Ok((ds, report.files, report.skills))
}

/// The targets found in `dirs` (first wins), by name, with their files.
#[pyfunction]
fn targets(py: Python<'_>, dirs: Vec<PathBuf>) -> PyResult<Vec<(String, PathBuf)>> {
    py.allow_threads(move || {
        let search = TargetSearch { dirs };
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

/// Writes every effective skill into `out` (owning only what it wrote):
/// `{written, unchanged, removed, failed, refused, kept}`.
#[pyfunction]
#[pyo3(signature = (spec, paths, out, format="json", prune=false, adopt=Vec::new(), adopt_all=false, force=false, keep_going=false, state_dir=None, strict=false))]
#[allow(clippy::too_many_arguments)]
fn export<'py>(
    py: Python<'py>,
    spec: &Spec,
    paths: [PathBuf; 3],
    out: PathBuf,
    format: &str,
    prune: bool,
    adopt: Vec<String>,
    adopt_all: bool,
    force: bool,
    keep_going: bool,
    state_dir: Option<PathBuf>,
    strict: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let format = match Format::from_label(format) {
        Some(f) => f,
        None => {
            return Err(PyValueError::new_err(format!(
                "unknown export format {format:?} (expected 'json' or 'skill')"
            )));
        }
    };
    let inner = spec.inner.clone();
    let done = py
        .allow_threads(move || {
            let skills = skills(&inner, &paths);
            let options = ExportOptions {
                format,
                prune,
                adopt,
                adopt_all,
                force,
                keep_going,
                state_dir: state_dir.as_deref(),
                strict,
                // What validate warns about each skill written, as the
                // command prints them.
                warnings: true,
                ..ExportOptions::default()
            };
            skills.export_with(&out, &options)
        })
        .map_err(|e| error(py, e))?;
    let d = PyDict::new(py);
    d.set_item("written", &done.written)?;
    d.set_item("unchanged", done.unchanged)?;
    d.set_item("removed", &done.removed)?;
    d.set_item(
        "failed",
        done.failed
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>(),
    )?;
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
    m.add_class::<Spec>()?;
    m.add_function(wrap_pyfunction!(merge_layers, m)?)?;
    m.add_function(wrap_pyfunction!(load_skill, m)?)?;
    m.add_function(wrap_pyfunction!(collect_layers, m)?)?;
    m.add_function(wrap_pyfunction!(list_skills, m)?)?;
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(targets, m)?)?;
    m.add_function(wrap_pyfunction!(export, m)?)?;
    Ok(())
}
