//! `bernstein skills explain NAME [FIELD_PATH]`.

use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use bernstein_skills::output::explain::{Row, explain, file_rows, select};
use bernstein_skills::{Error, ErrorKind, Result, output::render};

use crate::output::{self, Column, Stream, Style, paint};
use bernstein_skills::Context;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  bernstein skills explain writer\n  bernstein skills explain writer metadata.limits.max_tokens\n  bernstein skills explain writer 'references[style]'\n  bernstein skills explain writer --set\n  bernstein skills explain writer --json"
)]
pub struct ExplainArgs {
    /// The skill's name.
    #[arg(add = clap_complete::ArgValueCandidates::new(crate::complete::skill_names))]
    pub name: String,
    /// Narrow to one value or subtree: `description`, `trigger_keywords[0]`,
    /// `references[style]`, `metadata.limits`.
    #[arg(add = clap_complete::ArgValueCandidates::new(crate::complete::field_paths))]
    pub field_path: Option<String>,
    /// Print one JSON document, `{"skill", "places", "layers", "values"}`
    /// (docs/json.md).
    #[arg(long)]
    pub json: bool,
    /// Only the values some layer set: leave out the fields that hold the
    /// spec's default.
    #[arg(long)]
    pub set: bool,
    /// Warn (on stderr) about what a consumer's rules say of the skill; the
    /// skill is explained all the same. Repeatable.
    #[arg(long = "target", value_name = "TARGET")]
    pub targets: Vec<String>,
}

/// A value as compact JSON, cut to 60 characters and made safe to print
/// (JSON escapes its own backslashes).
fn short(v: &Value) -> String {
    bernstein_skills::text::sanitized_excerpt(&v.to_string(), 59)
}

/// Prints `doc` (the canonical JSON of a document whose last key is
/// `values`, an empty list) with `rows` as its values, each rendered and
/// written in turn: the same text as the whole document rendered at once,
/// without holding every row as JSON (a skill may have hundreds of
/// thousands of rows, each several maps).
fn print_json(doc: &str, rows: &[Row]) {
    let Some(head) = doc.strip_suffix("[]\n}\n").filter(|_| !rows.is_empty()) else {
        output::print(doc);
        return;
    };
    let mut out = String::from(head);
    out.push_str("[\n");
    for (i, r) in rows.iter().enumerate() {
        // At depth 2: pretty JSON has no line break inside a string.
        let item = render::to_json(&r.to_json());
        for line in item.lines() {
            out.push_str("    ");
            out.push_str(line);
            out.push('\n');
        }
        if i + 1 < rows.len() {
            out.pop();
            out.push_str(",\n");
        }
        if out.len() >= 1 << 16 {
            output::print(&out);
            out.clear();
        }
    }
    out.push_str("  ]\n}\n");
    output::print(&out);
}

/// A row's cells in the table: origin, strategy, path, value.
fn cells(r: &Row) -> Vec<String> {
    let origin = match &r.place {
        Some(p) => p.label(),
        None => "default".into(),
    };
    let value = match (r.removed, r.notes.first()) {
        (true, Some(n)) => format!("({})", n.kind.label()),
        _ => short(&r.value),
    };
    vec![
        origin,
        r.kind.name().into(),
        bernstein_skills::text::excerpt(&r.path, bernstein_skills::text::EXCERPT_CHARS),
        value,
    ]
}

/// The lines under a row: what it replaced, the changes at its path, and
/// the reset of its field.
fn notes(r: &Row) -> Vec<String> {
    let mut n = Vec::new();
    for rep in &r.replaced {
        use bernstein_skills::output::explain::RowKind;
        use bernstein_skills::spec::StrategyKind;
        let verb = if matches!(
            r.kind,
            RowKind::File | RowKind::Merged(StrategyKind::KeyedReplace)
        ) {
            "replaced"
        } else {
            "shadowed"
        };
        n.push(format!(
            "{verb}: {} `{}` {}",
            rep.place.layer.label(),
            rep.place.file_line(),
            short(&rep.value)
        ));
    }
    for note in &r.notes {
        n.push(note.sentence());
        for d in &note.dropped {
            n.push(format!(
                "  was: {} `{}` {}",
                d.place.layer.label(),
                d.place.file_line(),
                short(&d.value)
            ));
        }
    }
    if let Some(p) = &r.reset_by {
        n.push(format!(
            "field reset with null by {} `{}`",
            p.layer.label(),
            p.file_line()
        ));
    }
    n
}

pub fn run(args: ExplainArgs, ctx: &Context) -> Result<ExitCode> {
    let skills = &crate::global::skills(ctx)?;
    let targets = ctx.targets(skills.spec(), &args.targets)?;
    crate::global::warn_no_layers(skills.layers());
    let resolved = skills.resolve(&args.name)?;
    // The skill's own files, listed once: for their rows and the warnings.
    let files = skills.files(&args.name);
    // Every warning validate gives about the skill (a stale directive, a
    // key a known target writes as one, ...), then the targets' findings.
    crate::output::warn_diagnostics(&match &files {
        Ok(files) => skills.warnings_with_files(&resolved, files),
        Err(_) => skills.warnings(&resolved),
    });
    if !targets.is_empty() {
        crate::output::warn_diagnostics(&skills.target_findings(
            &resolved,
            &targets,
            bernstein_skills::Severity::Warning,
        ));
    }
    let mut rows = explain(skills.spec(), &resolved);
    rows.extend(file_rows(&files?));
    if args.set {
        rows.retain(|r| r.place.is_some() || r.reset_by.is_some());
    }
    if let Some(path) = &args.field_path {
        rows = select(rows, path).map_err(|message| Error::Refused {
            kind: ErrorKind::NotFound,
            path: None,
            message,
        })?;
    }
    if args.json {
        let doc = json!({
            "skill": args.name,
            "places": crate::global::places_json(skills.layers()),
            "layers": resolved.fragments().iter().map(|f| json!({
                "layer": f.layer, "file": f.path.display().to_string()
            })).collect::<Vec<_>>(),
            "values": [],
        });
        print_json(&render::to_json(&doc), &rows);
        return Ok(ExitCode::SUCCESS);
    }
    // The table's cells and each row's notes are made twice, to measure
    // the columns and then to write the lines, a few at a time: a skill
    // may have hundreds of thousands of rows, and cells and lines held for
    // all of them at once would cost several times the rows themselves.
    let header: Vec<String> = ["ORIGIN", "STRATEGY", "PATH", "VALUE"]
        .map(String::from)
        .to_vec();
    // The origin is a path with a line, cut in the middle only if cutting
    // the value is not enough; the field path is what `explain NAME
    // FIELD_PATH` takes, never cut.
    let mut layout =
        output::Layout::new(&[Column::Path, Column::Whole, Column::Whole, Column::Text]);
    layout.measure(&header);
    for r in &rows {
        layout.measure(&cells(r));
    }
    let layout = layout.fit(output::width_limit());
    let mut out = String::new();
    layout.line(&header, true, &mut out);
    for r in &rows {
        layout.line(&cells(r), false, &mut out);
        for note in notes(r) {
            let note = output::fit(&note, 4);
            out.push_str(&format!("    {}\n", paint(&note, Style::Dim, Stream::Out)));
        }
        if out.len() >= 1 << 16 {
            output::print(&out);
            out.clear();
        }
    }
    // Where each layer came from, for the whole skill (a narrowed
    // explain answers one question).
    if args.field_path.is_none() {
        out.push('\n');
        out.push_str(&crate::global::places(skills.layers()));
    }
    output::print(&out);
    Ok(ExitCode::SUCCESS)
}
