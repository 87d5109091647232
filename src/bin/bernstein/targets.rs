//! `bernstein skills targets [NAME]`: the consumers effective skills can be
//! checked and exported for.

use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use bernstein_skills::target::{OtherFields, Target};
use bernstein_skills::{Result, output::render, text};

use crate::output::{self, Column};
use bernstein_skills::Context;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  bernstein skills targets\n  bernstein skills targets agent-skills\n  bernstein skills targets --json"
)]
pub struct TargetsArgs {
    /// One target to describe field by field (default: list them all).
    pub name: Option<String>,
    /// Print one JSON document, `{"targets": [...]}` (docs/json.md).
    #[arg(long)]
    pub json: bool,
}

fn to_json(t: &Target) -> serde_json::Value {
    json!({
        "target": t.name,
        "description": t.description,
        "file": t.path.display().to_string(),
        "format": t.format.label(),
        "user_place": t.user_place,
        "project_place": t.project_place,
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
    let targets: Vec<Target> = match &args.name {
        Some(name) => vec![search.find(name)?],
        None => search
            .names()
            .iter()
            .map(|n| search.find(n))
            .collect::<Result<_>>()?,
    };
    if args.json {
        let list: Vec<_> = targets.iter().map(to_json).collect();
        output::print(&render::to_json(&json!({"targets": list})));
        return Ok(ExitCode::SUCCESS);
    }
    if let (Some(_), [t]) = (&args.name, targets.as_slice()) {
        let mut out = format!(
            "target: {}\nfile: {}\nformat: {}\n",
            text::escape(&t.name),
            text::path(&t.path),
            t.format.label()
        );
        if let Some(d) = &t.description {
            out.push_str(&format!("{}\n", text::escape(d)));
        }
        for (scope, place) in [("user", &t.user_place), ("project", &t.project_place)] {
            if let Some(p) = place {
                out.push_str(&format!("{scope} place: {}\n", text::escape(p)));
            }
        }
        out.push_str(&format!(
            "other fields: {}\n\n",
            match t.other_fields {
                OtherFields::Drop => "left out, with a note",
                OtherFields::Refuse => "refused",
                OtherFields::Keep => "kept",
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
        output::print(&out);
        return Ok(ExitCode::SUCCESS);
    }
    let mut rows = vec![
        [
            "TARGET",
            "FORMAT",
            "USER PLACE",
            "PROJECT PLACE",
            "DESCRIPTION",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for t in &targets {
        rows.push(vec![
            text::escape(&t.name).into_owned(),
            t.format.label().into(),
            t.user_place
                .as_deref()
                .map(text::escape)
                .unwrap_or_default()
                .into_owned(),
            t.project_place
                .as_deref()
                .map(text::escape)
                .unwrap_or_default()
                .into_owned(),
            t.description
                .as_deref()
                .map(|d| text::excerpt(d, 60))
                .unwrap_or_default(),
        ]);
    }
    output::print(&output::table(
        &rows,
        &[
            Column::Whole,
            Column::Whole,
            Column::Path,
            Column::Path,
            Column::Text,
        ],
    ));
    Ok(ExitCode::SUCCESS)
}
