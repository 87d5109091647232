//! "Why does this skill look like this?": one row per value of the
//! effective skill, with the layer, file and line that supplied it, the
//! strategy that applied and what it replaced.
//!
//! Built entirely from the provenance the interpreter records; lines are
//! found lazily in the fragments' source text.

use serde_json::{Value, json};

use crate::engine::Resolved;
use crate::error::did_you_mean;
use crate::fragment::Fragment;
use crate::layer::Layer;
use crate::merge::{Identity, Merged};
use crate::provenance::{Origin, Sourced};
use crate::spec::{MergeSpec, Strategy};

/// Where a value is: layer, file and line.
#[derive(Debug, Clone, PartialEq)]
pub struct Place {
    /// The layer.
    pub layer: Layer,
    /// The file, as displayed.
    pub file: String,
    /// The 1-based line, when it can be found.
    pub line: Option<usize>,
}

impl Place {
    /// The place of `origin`, its line looked up in `fragments`.
    pub fn of_origin(origin: &Origin, fragments: &[Fragment]) -> Place {
        let line = fragments
            .iter()
            .find(|f| f.layer == origin.layer)
            .and_then(|f| f.line_of(&origin.pointer));
        Place {
            layer: origin.layer,
            file: origin.path.display().to_string(),
            line,
        }
    }

    /// `layer:file:line`, the file name escaped for printing.
    pub fn label(&self) -> String {
        format!("{}:{}", self.layer.label(), self.file_line())
    }

    /// `file:line`, the file name escaped for printing.
    pub fn file_line(&self) -> String {
        let file = crate::text::escape(&self.file);
        match self.line {
            Some(l) => format!("{file}:{l}"),
            None => file.into_owned(),
        }
    }

    fn to_json(&self) -> Value {
        json!({"layer": self.layer, "file": self.file, "line": self.line})
    }
}

/// A value a higher layer replaced.
#[derive(Debug, Clone, PartialEq)]
pub struct Replaced {
    /// The replaced value.
    pub value: Value,
    /// Where it was.
    pub place: Place,
}

/// One value of the effective skill and its story.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The value's path: `description`, `trigger_keywords[0]`,
    /// `references[style]`, `metadata.limits.max_tokens`.
    pub path: String,
    /// The field's strategy.
    pub strategy: &'static str,
    /// The value.
    pub value: Value,
    /// Who supplied it (`None`: the spec's default).
    pub place: Option<Place>,
    /// What it replaced, nearest first.
    pub replaced: Vec<Replaced>,
    /// The layer that reset the whole field with `null`, if any.
    pub reset_by: Option<Place>,
}

impl Row {
    /// The row as JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "path": self.path,
            "strategy": self.strategy,
            "value": self.value,
            "origin": self.place.as_ref().map(Place::to_json),
            "replaced": self.replaced.iter().map(|r| json!({
                "value": r.value,
                "origin": r.place.to_json(),
            })).collect::<Vec<_>>(),
            "reset_by": self.reset_by.as_ref().map(Place::to_json),
        })
    }
}

/// The path segment of a keyed entry: `[style]` for the first key,
/// `[id=x]` for the others.
fn keyed_segment(id: Option<&Identity>, first_key: Option<&str>, index: usize) -> String {
    match id {
        Some(id) if Some(id.key) == first_key => format!("[{}]", id.value),
        Some(id) => format!("[{}={}]", id.key, id.value),
        None => format!("[{index}]"),
    }
}

/// Every value of the effective skill, in field order.
pub fn explain(spec: &MergeSpec, resolved: &Resolved) -> Vec<Row> {
    let frags = &resolved.fragments;
    let mut rows = Vec::new();
    let effective = resolved.effective();
    for field in &effective.fields {
        let reset_by = field.reset_by.as_ref().map(|o| Place::of_origin(o, frags));
        let row = |path: String, s: &Sourced| Row {
            path,
            strategy: field.strategy,
            value: s.value.clone().into_owned(),
            place: s.origin.as_ref().map(|o| Place::of_origin(o, frags)),
            replaced: s
                .overrode
                .iter()
                .map(|sh| Replaced {
                    value: sh.value.clone().into_owned(),
                    place: Place::of_origin(&sh.origin, frags),
                })
                .collect(),
            reset_by: reset_by.clone(),
        };
        let empty = |value: Value| Row {
            path: field.name.to_owned(),
            strategy: field.strategy,
            value,
            place: None,
            replaced: Vec::new(),
            reset_by: reset_by.clone(),
        };
        match &field.merged {
            Merged::Override(s) => rows.push(row(field.name.to_owned(), s)),
            Merged::Append(items) if items.is_empty() => rows.push(empty(json!([]))),
            Merged::Append(items) => {
                for (i, s) in items.iter().enumerate() {
                    rows.push(row(format!("{}[{i}]", field.name), s));
                }
            }
            Merged::Keyed(entries) if entries.is_empty() => rows.push(empty(json!([]))),
            Merged::Keyed(entries) => {
                let first = spec.field(field.name).and_then(|f| match &f.strategy {
                    Strategy::KeyedReplace { keys, .. } => keys.first().cloned(),
                    _ => None,
                });
                for (i, e) in entries.iter().enumerate() {
                    let seg = keyed_segment(e.identity.as_ref(), first.as_deref(), i);
                    rows.push(row(format!("{}{seg}", field.name), &e.item));
                }
            }
            Merged::Deep(tree) => {
                let leaves = tree.leaves();
                if leaves.is_empty() {
                    rows.push(empty(tree.to_value()));
                }
                for (path, s) in leaves {
                    let mut p = field.name.to_owned();
                    for seg in path {
                        p.push('.');
                        p.push_str(seg);
                    }
                    rows.push(row(p, s));
                }
            }
        }
    }
    rows
}

/// One row per file of the skill ([`crate::files`]): its path, the layer
/// and file it comes from, its size, and the lower layers' files at the same
/// path it replaced. Field paths never hold a `/`, so a file's path selects
/// it unambiguously (`explain writer references/style.md`).
pub fn file_rows(files: &[crate::files::SkillFile]) -> Vec<Row> {
    let place = |s: &crate::files::Source| Place {
        layer: s.layer,
        file: s.path.display().to_string(),
        line: None,
    };
    files
        .iter()
        .map(|f| Row {
            path: f.rel.clone(),
            strategy: "FILE",
            value: json!(format!("{} bytes", f.source.size)),
            place: Some(place(&f.source)),
            replaced: f
                .replaced
                .iter()
                .map(|r| Replaced {
                    value: json!(format!("{} bytes", r.size)),
                    place: place(r),
                })
                .collect(),
            reset_by: None,
        })
        .collect()
}

/// The rows at or below `path` (`metadata.limits` selects both of its
/// leaves). An unknown path is an error with a suggestion.
pub fn select(rows: Vec<Row>, path: &str) -> Result<Vec<Row>, String> {
    // `references/` selects every file below that directory.
    let under = |p: &str| {
        p == path
            || (path.ends_with('/') && p.starts_with(path))
            || p.strip_prefix(path)
                .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
    };
    let picked: Vec<Row> = rows.iter().filter(|r| under(&r.path)).cloned().collect();
    if picked.is_empty() {
        let suggestion = did_you_mean(path, rows.iter().map(|r| r.path.as_str()))
            .map(|s| format!(" (did you mean '{s}'?)"))
            .unwrap_or_default();
        return Err(format!("no value at '{path}' in this skill{suggestion}"));
    }
    Ok(picked)
}
