//! `show --origins`: the effective skill as JSON, each value annotated with
//! the layer, file and line it came from.

use serde_json::Value;

use bernstein_skills::fragment::escape_pointer;
use bernstein_skills::merge::provenance::Sourced;
use bernstein_skills::merge::{ChangeKind, FieldMerge, Merged};
use bernstein_skills::output::explain::Place;
use bernstein_skills::spec::LAYERS_PRESENT;
use bernstein_skills::{Fragment, Resolved, output::render};

type Lines = Vec<(String, Option<String>)>;

/// Pushes `value` rendered at `depth`, prefixed by `key`, annotating its first line.
fn push_value(
    out: &mut Lines,
    depth: usize,
    key: Option<&str>,
    value: &Value,
    note: Option<String>,
    last: bool,
) {
    let text = render::to_json(value);
    let pad = "  ".repeat(depth);
    let n = text.trim_end().lines().count();
    for (i, line) in text.trim_end().lines().enumerate() {
        let mut s = if i == 0 {
            match key {
                Some(k) => format!(
                    "{pad}{}: {line}",
                    render::to_json(&Value::String(k.into())).trim_end()
                ),
                None => format!("{pad}{line}"),
            }
        } else {
            format!("{pad}{line}")
        };
        if i + 1 == n && !last {
            s.push(',');
        }
        out.push((s, if i == 0 { note.clone() } else { None }));
    }
}

fn note(s: &Sourced, frags: &[Fragment]) -> Option<String> {
    Some(match &s.origin {
        Some(o) => Place::of_origin(o, frags).label(),
        None => "default".into(),
    })
}

/// Where an empty list or mapping at `pointer` comes from: the highest
/// layer whose fragment sets it (to `[]`, `{}` or `null`), else the spec's
/// default.
fn empty_note(pointer: &str, frags: &[Fragment]) -> Option<String> {
    let set = frags
        .iter()
        .rev()
        .find(|f| f.as_value().pointer(pointer).is_some());
    Some(match set {
        Some(f) => Place {
            layer: f.layer,
            file: f.path.display().to_string(),
            line: f.line_of(pointer),
        }
        .label(),
        None => "default".into(),
    })
}

fn open(out: &mut Lines, depth: usize, key: &str, bracket: char) {
    out.push((
        format!(
            "{}{}: {bracket}",
            "  ".repeat(depth),
            render::to_json(&Value::String(key.into())).trim_end()
        ),
        None,
    ));
}

fn close(out: &mut Lines, depth: usize, bracket: char, last: bool) {
    out.push((
        format!(
            "{}{bracket}{}",
            "  ".repeat(depth),
            if last { "" } else { "," }
        ),
        None,
    ));
}

/// Renders one merged value under `key` (at JSON pointer `pointer` in a
/// fragment), annotated (nested lists, keyed lists and mappings alike).
fn merged(
    out: &mut Lines,
    depth: usize,
    (key, pointer): (&str, &str),
    m: &Merged,
    frags: &[Fragment],
    last: bool,
) {
    match m {
        Merged::Override(s) => push_value(out, depth, Some(key), &s.value, note(s, frags), last),
        Merged::Append(items) => list(
            out,
            depth,
            (key, pointer),
            &items.iter().collect::<Vec<_>>(),
            frags,
            last,
        ),
        Merged::Keyed(entries) => list(
            out,
            depth,
            (key, pointer),
            &entries.iter().map(|e| &e.item).collect::<Vec<_>>(),
            frags,
            last,
        ),
        Merged::Deep(t) if t.is_empty() => push_value(
            out,
            depth,
            Some(key),
            &Value::Object(Default::default()),
            empty_note(pointer, frags),
            last,
        ),
        Merged::Deep(t) => {
            open(out, depth, key, '{');
            let n = t.len();
            for (i, (k, v)) in t.iter().enumerate() {
                let below = format!("{pointer}/{}", escape_pointer(k));
                merged(out, depth + 1, (k, &below), v, frags, i + 1 == n);
            }
            close(out, depth, '}', last);
        }
    }
}

fn list(
    out: &mut Lines,
    depth: usize,
    (key, pointer): (&str, &str),
    items: &[&Sourced],
    frags: &[Fragment],
    last: bool,
) {
    if items.is_empty() {
        let note = empty_note(pointer, frags);
        push_value(out, depth, Some(key), &Value::Array(Vec::new()), note, last);
        return;
    }
    open(out, depth, key, '[');
    for (i, s) in items.iter().enumerate() {
        push_value(
            out,
            depth + 1,
            None,
            &s.value,
            note(s, frags),
            i + 1 == items.len(),
        );
    }
    close(out, depth, ']', last);
}

/// Renders the annotated view.
pub fn render(resolved: &Resolved) -> String {
    let frags = resolved.fragments();
    let eff = resolved.effective();
    // Fields and layers_present, in sorted key order like the JSON output
    // (sorted once: a spec may declare very many fields).
    let mut keys: Vec<(&str, Option<&FieldMerge>)> =
        eff.fields.iter().map(|f| (f.name, Some(f))).collect();
    keys.push((LAYERS_PRESENT, None));
    keys.sort_by_key(|&(k, _)| k);
    let mut out: Lines = vec![("{".into(), None)];
    let n = keys.len();
    for (i, (key, field)) in keys.into_iter().enumerate() {
        let last = i + 1 == n;
        let Some(field) = field else {
            let layers = Value::Array(
                eff.layers_present
                    .iter()
                    .map(|l| Value::String(l.label().into()))
                    .collect(),
            );
            push_value(&mut out, 1, Some(key), &layers, None, last);
            continue;
        };
        let pointer = format!("/{}", escape_pointer(key));
        merged(&mut out, 1, (key, &pointer), &field.merged, frags, last);
        // A value merged by section: where each section came from, below
        // it, and which were added (marked `$patch: add` or not).
        let additions: std::collections::HashMap<&str, ChangeKind> = field
            .changes
            .iter()
            .filter(|c| {
                matches!(
                    c.kind,
                    ChangeKind::Added | ChangeKind::Unmarked | ChangeKind::NotNew
                )
            })
            .map(|c| (c.path.as_str(), c.kind))
            .collect();
        for piece in field.sections.iter().flatten() {
            let place = Place::of_section(&piece.origin.origin, piece.origin.line, frags);
            let label = piece
                .key
                .as_ref()
                .map_or_else(|| "(inserted)".to_owned(), |k| k.label());
            out.push((
                format!(
                    "  # {}[{}] from {}{}{}",
                    key,
                    bernstein_skills::text::escape(&label),
                    place.label(),
                    match piece.replaced.first() {
                        Some((_, o)) => format!(
                            ", replacing {}",
                            Place::of_section(&o.origin, o.line, frags).label()
                        ),
                        None => String::new(),
                    },
                    match additions.get(format!("{key}[{label}]").as_str()) {
                        Some(ChangeKind::Added) => ", an addition ($patch: add)",
                        Some(ChangeKind::Unmarked) =>
                            ", added at the end: no lower section has this heading (not marked $patch: add)",
                        Some(ChangeKind::NotNew) => ", marked $patch: add",
                        _ => "",
                    }
                ),
                None,
            ));
        }
    }
    out.push(("}".into(), None));
    let width = out
        .iter()
        .filter(|(_, n)| n.is_some())
        .map(|(l, _)| crate::output::width(l))
        .max()
        .unwrap_or(0)
        .min(72);
    let mut s = String::new();
    for (line, n) in out {
        match n {
            Some(n) => {
                s.push_str(&format!("{}  # {n}\n", crate::output::pad(&line, width)));
            }
            None => {
                s.push_str(&line);
                s.push('\n');
            }
        }
    }
    s
}
