//! "Why does this skill look like this?": one row per value of the
//! effective skill, with the layer, file and line that supplied it, the
//! strategy that applied and what it replaced.
//!
//! Built entirely from the provenance the interpreter records; lines are
//! found lazily in the fragments' source text.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::error::did_you_mean;
use crate::fragment::Fragment;
use crate::layer::Layer;
use crate::merge::Resolved;
use crate::merge::provenance::{Origin, Shadowed};
use crate::merge::{Change, ChangeKind, FieldMerge, Visited, visit};
use crate::spec::{Field, MergeSpec};

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

    /// The place of line `line` (0-based) of the value at `origin`, as a
    /// value merged by section counts its lines.
    pub fn of_section(origin: &Origin, line: usize, fragments: &[Fragment]) -> Place {
        let line = fragments
            .iter()
            .find(|f| f.layer == origin.layer)
            .and_then(|f| f.position_in_value(&origin.pointer, line))
            .map(|(l, _)| l);
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

/// A deletion, a whole replacement, a stale delete or a dropped duplicate
/// at a row's path ([`crate::merge::Change`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    /// What happened ([`ChangeKind`]).
    pub kind: ChangeKind,
    /// The directive that did it.
    pub by: Place,
    /// The lower layers' values it removed or replaced.
    pub dropped: Vec<Replaced>,
}

impl Note {
    /// `deleted by user:user/writer.yaml:4`.
    pub fn sentence(&self) -> String {
        format!("{} {}", self.kind.phrase(), self.by.label())
    }

    fn to_json(&self) -> Value {
        json!({
            "kind": self.kind.label(),
            "by": self.by.to_json(),
            "dropped": self.dropped.iter().map(Replaced::to_json).collect::<Vec<_>>(),
        })
    }
}

impl Replaced {
    fn to_json(&self) -> Value {
        json!({"value": self.value, "origin": self.place.to_json()})
    }
}

/// What an `explain` row is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    /// A value, merged by this strategy.
    Merged(crate::spec::StrategyKind),
    /// A file of the skill, layered by path.
    File,
    /// A section of a value merged by section (the body).
    Section,
}

impl RowKind {
    /// Its name in tables and JSON: the strategy's, or `FILE`.
    pub fn name(self) -> &'static str {
        match self {
            RowKind::Merged(s) => s.name(),
            RowKind::File => "FILE",
            RowKind::Section => "SECTION",
        }
    }
}

/// One value of the effective skill and its story; or a value that is not
/// there, and the directive that removed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The value's path: `description`, `trigger_keywords[0]`,
    /// `references[style]`, `metadata.limits.max_tokens`.
    pub path: String,
    /// What made it: the strategy of the rule that merged it, or the
    /// layering of files.
    pub kind: RowKind,
    /// The value (`null` for a row of a removed value).
    pub value: Value,
    /// Who supplied it (`None`: the spec's default).
    pub place: Option<Place>,
    /// What it replaced, nearest first.
    pub replaced: Vec<Replaced>,
    /// The layer that reset the whole field with `null`, if any.
    pub reset_by: Option<Place>,
    /// Deletions and whole replacements at or above this path.
    pub notes: Vec<Note>,
    /// Is this the row of a value that was removed (no value in the
    /// effective skill)?
    pub removed: bool,
}

impl Row {
    /// The row as JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "field": self.path,
            "strategy": self.kind.name(),
            "value": self.value,
            "removed": self.removed,
            "origin": self.place.as_ref().map(Place::to_json),
            "replaced": self.replaced.iter().map(Replaced::to_json).collect::<Vec<_>>(),
            "reset_by": self.reset_by.as_ref().map(Place::to_json),
            "changes": self.notes.iter().map(Note::to_json).collect::<Vec<_>>(),
        })
    }
}

/// Is `path` at or below `top` (`metadata.limits` is below `metadata`,
/// `references[a]` below `references`)?
fn is_under(path: &str, top: &str) -> bool {
    path.strip_prefix(top)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.') || rest.starts_with('['))
}

/// The rows of `index` (rows by path) at or below `top`, as [`is_under`]
/// finds them, without a look at any other row: the path itself, then the
/// paths that continue it with `.` or `[`, each a range of the map.
fn rows_under(index: &BTreeMap<String, Vec<usize>>, top: &str) -> Vec<usize> {
    let mut out: Vec<usize> = index.get(top).cloned().unwrap_or_default();
    // `top.` up to `top/` and `top[` up to `top\`: the characters after
    // `.` and `[`.
    for (from, to) in [('.', '/'), ('[', '\\')] {
        let range = (
            std::ops::Bound::Included(format!("{top}{from}")),
            std::ops::Bound::Excluded(format!("{top}{to}")),
        );
        for (path, rows) in index.range::<String, _>(range) {
            debug_assert!(is_under(path, top));
            out.extend(rows);
        }
    }
    out
}

/// A lower layer's value `sh` replaced, and where it was.
fn replaced_of(sh: &Shadowed, frags: &[Fragment]) -> Replaced {
    Replaced {
        value: sh.value.clone().into_owned(),
        place: Place::of_origin(&sh.origin, frags),
    }
}

/// Every value of the effective skill, in field order, and the values
/// directives removed.
pub fn explain(spec: &MergeSpec, resolved: &Resolved) -> Vec<Row> {
    let frags = resolved.fragments();
    let mut rows = Vec::new();
    for field in &resolved.effective().fields {
        let Some(rule) = spec.field(field.name) else {
            continue;
        };
        let reset_by = field.reset_by.as_ref().map(|o| Place::of_origin(o, frags));
        let first = rows.len();
        value_rows(&mut rows, rule, field, &reset_by, frags);
        section_rows(&mut rows, field, &reset_by, frags);
        change_rows(&mut rows, first, field, &reset_by, frags);
    }
    rows
}

/// Appends a row for each value of `field` as its rule walks it (the
/// field, each item, key and entry), with who supplied it and what it
/// replaced.
fn value_rows(
    rows: &mut Vec<Row>,
    rule: &Field,
    field: &FieldMerge,
    reset_by: &Option<Place>,
    frags: &[Fragment],
) {
    let mut path = field.name.to_owned();
    visit(rule, &field.merged, &mut path, &mut |path, strategy, v| {
        let (value, s) = match v {
            Visited::Value(s) | Visited::Item(s) | Visited::Key(s) => {
                (s.value.clone().into_owned(), Some(s))
            }
            Visited::Entry(e) => (e.item.value.clone().into_owned(), Some(&e.item)),
            Visited::Empty(m) => (m.to_value(), None),
        };
        rows.push(Row {
            path: path.to_owned(),
            kind: RowKind::Merged(strategy),
            value,
            place: s
                .and_then(|s| s.origin.as_ref())
                .map(|o| Place::of_origin(o, frags)),
            replaced: s
                .map(|s| s.overrode.iter().map(|sh| replaced_of(sh, frags)).collect())
                .unwrap_or_default(),
            reset_by: reset_by.clone(),
            notes: Vec::new(),
            removed: false,
        });
    });
}

/// Appends a row for each section of a field merged by section
/// (`body[## Usage]`, `body[(inserted)]`), with the layer and line it came
/// from and the sections it replaced.
fn section_rows(
    rows: &mut Vec<Row>,
    field: &FieldMerge,
    reset_by: &Option<Place>,
    frags: &[Fragment],
) {
    let section = |o: &crate::merge::SectionOrigin| Place::of_section(&o.origin, o.line, frags);
    for piece in field.sections.iter().flatten() {
        rows.push(Row {
            path: format!(
                "{}[{}]",
                field.name,
                piece
                    .key
                    .as_ref()
                    .map_or_else(|| "(inserted)".to_owned(), |k| k.label())
            ),
            kind: RowKind::Section,
            value: Value::String(piece.text.clone().into_owned()),
            place: Some(section(&piece.origin)),
            replaced: piece
                .replaced
                .iter()
                .map(|(text, o)| Replaced {
                    value: Value::String(text.clone().into_owned()),
                    place: section(o),
                })
                .collect(),
            reset_by: reset_by.clone(),
            notes: Vec::new(),
            removed: false,
        });
    }
}

/// Files each deletion, whole replacement, stale delete and dropped
/// duplicate of `field` (whose rows start at `first`): as a note under the
/// rows it concerns, or, with none, as a row of its own for the removed
/// value.
fn change_rows(
    rows: &mut Vec<Row>,
    first: usize,
    field: &FieldMerge,
    reset_by: &Option<Place>,
    frags: &[Fragment],
) {
    // The field's rows by path, for the rows below a whole replacement:
    // made when the first one comes, and kept up to date after it.
    let mut by_path: Option<BTreeMap<String, Vec<usize>>> = None;
    for change in &field.changes {
        let note = note_of(change, frags);
        let under = rows_noted(rows, first, &mut by_path, change);
        if !under.is_empty() {
            for i in under {
                rows[i].notes.push(note.clone());
            }
            continue;
        }
        if let Some(index) = &mut by_path {
            index
                .entry(change.path.clone())
                .or_default()
                .push(rows.len());
        }
        rows.push(Row {
            path: change.path.clone(),
            kind: RowKind::Merged(change.strategy),
            value: Value::Null,
            place: Some(note.by.clone()),
            replaced: Vec::new(),
            reset_by: reset_by.clone(),
            notes: vec![note],
            removed: change.kind != ChangeKind::Replaced,
        });
    }
}

/// A change as a note: what happened, the directive that did it (at its
/// line inside a value merged by section) and the values it dropped.
fn note_of(change: &Change, frags: &[Fragment]) -> Note {
    Note {
        kind: change.kind,
        by: match change.section {
            Some((line, _)) => Place::of_section(&change.by, line, frags),
            None => Place::of_origin(&change.by, frags),
        },
        dropped: change
            .dropped
            .iter()
            .map(|sh| match change.dropped_line {
                Some(line) => Replaced {
                    value: sh.value.clone().into_owned(),
                    place: Place::of_section(&sh.origin, line, frags),
                },
                None => replaced_of(sh, frags),
            })
            .collect(),
    }
}

/// The rows a change's note goes under: for a whole replacement, every row
/// at or below its path; for a section added (marked or not), which is a
/// row already, that section's row; for any other change, none.
/// `by_path` indexes the field's rows (from `first`) by path, made here
/// when first needed.
fn rows_noted(
    rows: &[Row],
    first: usize,
    by_path: &mut Option<BTreeMap<String, Vec<usize>>>,
    change: &Change,
) -> Vec<usize> {
    let added = matches!(
        change.kind,
        ChangeKind::Added | ChangeKind::Unmarked | ChangeKind::NotNew
    );
    if change.kind != ChangeKind::Replaced && !added {
        return Vec::new();
    }
    let index = by_path.get_or_insert_with(|| {
        let mut m: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, r) in rows.iter().enumerate().skip(first) {
            m.entry(r.path.clone()).or_default().push(i);
        }
        m
    });
    if added {
        index
            .get(&change.path)
            .into_iter()
            .flatten()
            .copied()
            .filter(|&i| rows[i].kind == RowKind::Section)
            .take(1)
            .collect()
    } else {
        rows_under(index, &change.path)
    }
}

/// One row per file of the skill ([`crate::source::files`]): its path, the layer
/// and file it comes from, its size, and the lower layers' files at the same
/// path it replaced. Field paths never hold a `/`, so a file's path selects
/// it unambiguously (`explain writer references/style.md`).
pub fn file_rows(files: &[crate::source::files::SkillFile]) -> Vec<Row> {
    let place = |s: &crate::source::files::Source| Place {
        layer: s.layer,
        file: s.path.display().to_string(),
        line: None,
    };
    files
        .iter()
        .map(|f| Row {
            path: f.rel.clone(),
            kind: RowKind::File,
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
            notes: Vec::new(),
            removed: false,
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
    if !rows.iter().any(|r| under(&r.path)) {
        let suggestion = did_you_mean(path, rows.iter().map(|r| r.path.as_str()))
            .map(|s| format!(" (did you mean '{s}'?)"))
            .unwrap_or_default();
        return Err(format!("no value at '{path}' in this skill{suggestion}"));
    }
    // Taken, not copied: the rows may be very many.
    Ok(rows.into_iter().filter(|r| under(&r.path)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The rows a whole replacement notes are those a scan of every
        /// row finds, whatever characters the paths hold next to `.` and
        /// `[` (`/` and `\` sort right after them, `-` right before `.`).
        #[test]
        fn rows_under_finds_what_a_scan_finds(
            paths in proptest::collection::vec("[a.\\[\\]/\\\\-]{0,6}", 0..40),
            top in "[a.\\[\\]/\\\\-]{0,3}",
        ) {
            let mut index: BTreeMap<String, Vec<usize>> = BTreeMap::new();
            for (i, p) in paths.iter().enumerate() {
                index.entry(p.clone()).or_default().push(i);
            }
            let mut found = rows_under(&index, &top);
            found.sort_unstable();
            let scanned: Vec<usize> = (0..paths.len())
                .filter(|&i| is_under(&paths[i], &top))
                .collect();
            proptest::prop_assert_eq!(found, scanned);
        }
    }
}
