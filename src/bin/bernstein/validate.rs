//! `bernstein skills validate [NAME...]`.

use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use bernstein_skills::{Result, output::render};

use crate::output;
use bernstein_skills::Context;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  bernstein skills validate\n  bernstein skills validate writer --strict\n  bernstein skills validate --json\n  bernstein skills validate --spec-only"
)]
pub struct ValidateArgs {
    /// Only these skills (default: every skill in any layer).
    #[arg(add = clap_complete::ArgValueCandidates::new(crate::complete::skill_names))]
    pub names: Vec<String>,
    /// Fail on warnings too.
    #[arg(long)]
    pub strict: bool,
    /// Print one JSON object: `{"places", "diagnostics", "errors",
    /// "warnings", "notes", "files", "skills"}`, each diagnostic `{severity,
    /// file, layer, line, column, field, message}` (docs/json.md).
    #[arg(long)]
    pub json: bool,
    /// Worker threads [default: one per core].
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Only check the merge spec.
    #[arg(long, conflicts_with = "names")]
    pub spec_only: bool,
    /// Also check each effective skill against a consumer's rules (a target
    /// name, see `bernstein skills targets`, or a target file); repeatable.
    /// Without it, only the merge is judged: types, keys, ownership,
    /// directives and unknown fields.
    #[arg(long = "target", value_name = "TARGET")]
    pub targets: Vec<String>,
}

pub fn run(args: ValidateArgs, ctx: &Context) -> Result<ExitCode> {
    let spec = crate::global::load_spec(ctx)?;
    let skills = ctx.skills_with(spec, ctx.layers_local())?;
    let skills = ctx.validation(&skills, &args.targets)?;
    if args.spec_only && args.json {
        output::print(&render::to_json(&json!({
            "places": [],
            "diagnostics": [],
            "errors": 0,
            "warnings": 0,
            "notes": 0,
            "files": 0,
            "skills": 0,
        })));
        return Ok(ExitCode::SUCCESS);
    }
    if args.spec_only {
        output::print(&format!(
            "{}: ok\n",
            bernstein_skills::text::path(&skills.spec().path)
        ));
        return Ok(ExitCode::SUCCESS);
    }
    skills.require_layers()?;
    let names = (!args.names.is_empty()).then_some(args.names.as_slice());
    let jobs = args
        .jobs
        .unwrap_or_else(bernstein_skills::par::default_jobs);
    let report = skills.validate(names, jobs);
    let (errors, warnings, notes) = (report.errors(), report.warnings(), report.notes());
    if args.json {
        let v: Vec<Value> = report.diagnostics.iter().map(|d| d.to_json()).collect();
        output::print(&render::to_json(&json!({
            "places": crate::global::places_json(skills.layers()),
            "diagnostics": v,
            "errors": errors,
            "warnings": warnings,
            "notes": notes,
            "files": report.files,
            "skills": report.skills,
        })));
    } else {
        let mut out = crate::global::places(skills.layers());
        // Each line is escaped and located: a tree with many problems
        // formats them on every thread, in order.
        let chunks: Vec<_> = report.diagnostics.chunks(1024).collect();
        for part in bernstein_skills::par::map(&chunks, jobs, |chunk| {
            let mut part = String::new();
            for d in *chunk {
                part.push_str(&output::diagnostic(d, output::Stream::Out));
                part.push('\n');
            }
            part
        }) {
            out.push_str(&part);
        }
        out.push_str(&format!(
            "{errors} error(s), {warnings} warning(s){} in {} file(s)\n",
            if notes > 0 {
                format!(", {notes} note(s)")
            } else {
                String::new()
            },
            report.files
        ));
        output::print(&out);
    }
    let fail = errors > 0 || (args.strict && warnings > 0);
    Ok(if fail {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
