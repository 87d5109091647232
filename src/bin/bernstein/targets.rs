//! `bernstein skills targets [NAME] [--installed]`: the consumers effective
//! skills can be checked and exported for, and which of them this machine
//! has.

use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use bernstein_skills::target::{OtherFields, Target};
use bernstein_skills::{MergeSpec, Result, output::render, text};

use crate::output::{self, Column};
use bernstein_skills::Context;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  bernstein skills targets\n  bernstein skills targets --installed\n  bernstein skills targets github-copilot\n  bernstein skills targets --json"
)]
pub struct TargetsArgs {
    /// One target to describe field by field (default: list them all).
    pub name: Option<String>,
    /// Only the targets whose agent is installed on this machine: its
    /// configuration directory exists (~/.cursor for Cursor, the target's
    /// `detect` paths), with the path that shows it.
    #[arg(long, conflicts_with = "name")]
    pub installed: bool,
    /// Print one JSON document, `{"targets": [...]}` (docs/json.md).
    #[arg(long)]
    pub json: bool,
}

fn to_json(t: &Target, installed: Option<(String, std::path::PathBuf)>) -> serde_json::Value {
    json!({
        "target": t.name,
        "display_name": t.display_name,
        "description": t.description,
        "file": t.path.display().to_string(),
        "extends": t.extends,
        "renders_as": t.renders_as,
        "format": t.format.label(),
        "user_place": t.user_place,
        "project_place": t.project_place,
        "detect": t.detect_paths(),
        "installed": installed.map(|(_, p)| p.display().to_string()),
        "other_fields": match t.other_fields {
            OtherFields::Drop => "drop",
            OtherFields::Refuse => "refuse",
            OtherFields::Keep => "keep",
        },
        "fields": t.fields.iter().map(|f| json!({
            "field": f.name,
            "required": f.required,
            "type": f.rule.type_description(),
        })).collect::<Vec<_>>(),
        "docs": t.source,
    })
}

pub fn run(args: TargetsArgs, ctx: &Context) -> Result<ExitCode> {
    let spec = crate::global::load_spec(ctx)?;
    let search = ctx.target_search(&spec);
    let mut targets: Vec<Target> = match &args.name {
        Some(name) => vec![search.find(name)?],
        None => search
            .all()
            .into_iter()
            .map(|(_, t)| t)
            .collect::<Result<_>>()?,
    };
    if args.installed {
        targets.retain(|t| ctx.installed(t).is_some());
    }
    if args.json {
        let list: Vec<_> = targets
            .iter()
            .map(|t| to_json(t, ctx.installed(t)))
            .collect();
        output::print(&render::to_json(&json!({"targets": list})));
        return Ok(ExitCode::SUCCESS);
    }
    if let (Some(_), [t]) = (&args.name, targets.as_slice()) {
        output::print(&describe(ctx, t));
        return Ok(ExitCode::SUCCESS);
    }
    let mut head = vec!["TARGET", "NAME", "USER PLACE", "PROJECT PLACE"];
    let mut columns = vec![Column::Whole, Column::Text, Column::Path, Column::Path];
    if args.installed {
        head.push("FOUND");
        columns.push(Column::Path);
    }
    head.push("DESCRIPTION");
    columns.push(Column::Text);
    let mut rows = vec![head.into_iter().map(String::from).collect::<Vec<_>>()];
    for t in &targets {
        let mut row = vec![
            text::escape(&t.name).into_owned(),
            t.display_name
                .as_deref()
                .map(text::escape)
                .unwrap_or_default()
                .into_owned(),
            place(&t.user_place),
            place(&t.project_place),
        ];
        if args.installed {
            row.push(
                ctx.installed(t)
                    .map(|(p, _)| text::escape(&p).into_owned())
                    .unwrap_or_default(),
            );
        }
        row.push(
            t.description
                .as_deref()
                .map(|d| text::excerpt(d, 60))
                .unwrap_or_default(),
        );
        rows.push(row);
    }
    let mut out = output::table(&rows, &columns);
    if args.installed && targets.is_empty() {
        out = "no agent's directory was found on this machine; `bernstein skills targets` lists \
               every target\n"
            .to_owned();
    }
    output::print(&out);
    Ok(ExitCode::SUCCESS)
}

/// A place for the listing: as written, `-` for none.
fn place(p: &Option<String>) -> String {
    p.as_deref()
        .map(|p| text::escape(p).into_owned())
        .unwrap_or_else(|| "-".into())
}

/// One target, field by field.
fn describe(ctx: &Context, t: &Target) -> String {
    let mut out = format!(
        "target: {}\nfile: {}\nformat: {}\n",
        text::escape(&t.name),
        text::path(&t.path),
        t.format.label()
    );
    if let Some(d) = &t.display_name {
        out.push_str(&format!("name: {}\n", text::escape(d)));
    }
    if let Some(d) = &t.description {
        out.push_str(&format!("{}\n", text::escape(d)));
    }
    if let Some(base) = &t.extends {
        out.push_str(&format!("extends: {}", text::escape(base)));
        if t.renders_as != t.name {
            out.push_str(&format!(
                " (writes skills as {} does)",
                text::escape(&t.renders_as)
            ));
        }
        out.push('\n');
    }
    for (scope, place) in [("user", &t.user_place), ("project", &t.project_place)] {
        if let Some(p) = place {
            out.push_str(&format!("{scope} place: {}\n", text::escape(p)));
        }
    }
    let detect = t.detect_paths();
    if !detect.is_empty() {
        out.push_str(&match ctx.installed(t) {
            Some((p, _)) => format!("installed: yes ({} exists)\n", text::escape(&p)),
            None => format!(
                "installed: no ({} not found)\n",
                text::list(detect.iter().map(String::as_str), false)
            ),
        });
    }
    out.push_str(&format!(
        "other fields: {}\n\n",
        match (&t.other_fields_into, t.other_fields) {
            (Some(into), _) => format!("written into {} as strings", text::escape(into)),
            (None, OtherFields::Drop) => "left out, with a note".into(),
            (None, OtherFields::Refuse) => "refused".into(),
            (None, OtherFields::Keep) => "kept".into(),
        }
    ));
    let mut rows = vec![["FIELD", "TYPE", "CHECKS"].map(String::from).to_vec()];
    for f in &t.fields {
        let mut checks = Vec::new();
        if f.required {
            checks.push("required".to_owned());
        }
        let c = &f.rule.constraints;
        match (c.min_length, c.max_length) {
            (Some(a), Some(b)) => checks.push(format!("{a}-{b} chars")),
            (Some(a), None) => checks.push(format!(">= {a} chars")),
            (None, Some(b)) => checks.push(format!("<= {b} chars")),
            (None, None) => {}
        }
        if c.pattern.is_some() {
            checks.push("pattern".into());
        }
        if f.matches_directory {
            checks.push("= directory name".into());
        }
        rows.push(vec![
            text::escape(&f.name).into_owned(),
            f.rule.type_description(),
            checks.join(", "),
        ]);
    }
    out.push_str(&output::table(
        &rows,
        &[Column::Whole, Column::Text, Column::Text],
    ));
    for tr in &t.translate {
        out.push_str(&format!(
            "{} is written to {} as {}\n",
            text::escape(&tr.field),
            text::escape(&tr.file),
            text::escape(&tr.key.join("."))
        ));
    }
    out
}

/// What a command given no target says instead of guessing: the agents
/// installed on this machine, why each counts as installed, and `command`
/// with a `--target` for each; or that none was found.
pub fn installed_advice(ctx: &Context, spec: &MergeSpec, command: &str) -> String {
    let found = ctx.installed_targets(spec);
    if found.is_empty() {
        return "No agent's directory was found on this machine; `bernstein skills targets` \
                lists the targets known, and `--target NAME` picks one."
            .into();
    }
    let why: Vec<String> = found
        .iter()
        .map(|(t, p)| format!("{} ({} exists)", text::escape(&t.name), text::escape(p)))
        .collect();
    let flags: Vec<String> = found
        .iter()
        .map(|(t, _)| format!("--target {}", text::escape(&t.name)))
        .collect();
    format!(
        "The agents installed on this machine are {}: `{command} {}` exports to them.",
        text::list(why.iter().map(String::as_str), false),
        flags.join(" ")
    )
}
