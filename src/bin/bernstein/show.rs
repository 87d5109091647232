//! `bernstein skills show NAME`.

use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use bernstein_skills::source::files::{SkillFile, Source};
use bernstein_skills::{Error, ErrorKind, Result, Skills, output::render, text};

use crate::output::{self, Column};
use bernstein_skills::Context;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  bernstein skills show writer\n  bernstein skills show writer --per-layer\n  bernstein skills show writer --per-layer --json\n  bernstein skills show writer --origins"
)]
pub struct ShowArgs {
    /// The skill's name. Several names print one JSON object keyed by name
    /// (start-up is paid once); --per-layer and --origins take one name.
    #[arg(required = true, value_name = "NAME", add = clap_complete::ArgValueCandidates::new(crate::complete::skill_names))]
    pub names: Vec<String>,
    /// Also print each contributing layer's raw fragment.
    #[arg(long)]
    pub per_layer: bool,
    /// With --per-layer or --files: one JSON document (docs/json.md); and
    /// an error as JSON on stdout. The skill itself is always JSON.
    #[arg(long)]
    pub json: bool,
    /// Annotate each value with the layer, file and line it came from.
    #[arg(long, conflicts_with_all = ["per_layer", "json"])]
    pub origins: bool,
    /// List the skill's files (everything under NAME/ but SKILL.md): path,
    /// the layer it comes from, its source file; with --json, one document.
    #[arg(long, conflicts_with_all = ["per_layer", "origins"])]
    pub files: bool,
    /// Warn (on stderr) about what a consumer's rules say of the skill; the
    /// skill is shown all the same. Repeatable.
    #[arg(long = "target", value_name = "TARGET")]
    pub targets: Vec<String>,
}

/// `show a b c`: `{"a": {...}, "b": {...}, "c": {...}}`, keys sorted, each
/// value the skill's `show` JSON. Every skill that fails is reported and
/// nothing is printed on stdout.
fn several(
    mut names: Vec<String>,
    skills: &Skills,
    targets: &[bernstein_skills::target::Target],
) -> Result<ExitCode> {
    names.sort_unstable();
    names.dedup();
    let mut resolved = Vec::with_capacity(names.len());
    let mut errors = Vec::new();
    for name in &names {
        match skills.resolve(name) {
            Ok(r) => resolved.push(r),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() && output::json_mode() {
        output::print(&render::to_json(&output::errors_json(&errors)));
        return Ok(ExitCode::from(1));
    }
    if !errors.is_empty() {
        errors.iter().for_each(output::print_error);
        return Ok(ExitCode::from(1));
    }
    for r in &resolved {
        crate::output::warn_diagnostics(&skills.warnings(r));
        crate::output::warn_diagnostics(&skills.target_findings(
            r,
            targets,
            bernstein_skills::Severity::Warning,
        ));
    }
    let pairs: Vec<(&str, &_)> = resolved.iter().map(|r| (r.name(), r.effective())).collect();
    output::print(&render::effectives_to_json(&pairs));
    Ok(ExitCode::SUCCESS)
}

/// `show NAME --files`.
fn files(name: &str, files: &[SkillFile], json: bool) -> Result<ExitCode> {
    if json {
        let source = |s: &Source| json!({"layer": s.layer, "file": s.path.display().to_string(), "size": s.size});
        let list: Vec<Value> = files
            .iter()
            .map(|f| {
                let mut v = source(&f.source);
                v["path"] = json!(f.rel);
                v["replaced"] = f.replaced.iter().map(source).collect();
                v
            })
            .collect();
        output::print(&render::to_json(&json!({"skill": name, "files": list})));
        return Ok(ExitCode::SUCCESS);
    }
    if files.is_empty() {
        output::print(&format!(
            "{}: no files besides SKILL.md\n",
            text::escape(name)
        ));
        return Ok(ExitCode::SUCCESS);
    }
    let mut rows = vec![
        ["PATH", "LAYER", "SOURCE", "REPLACES"]
            .map(String::from)
            .to_vec(),
    ];
    for f in files {
        rows.push(vec![
            text::escape(&f.rel).into_owned(),
            f.source.layer.label().into(),
            text::path(&f.source.path),
            f.replaced
                .iter()
                .map(|r| r.layer.label())
                .collect::<Vec<_>>()
                .join(", "),
        ]);
    }
    let mut out = output::table(
        &rows,
        &[Column::Whole, Column::Whole, Column::Path, Column::Whole],
    );
    out.push_str(&format!("{} file(s)\n", files.len()));
    output::print(&out);
    Ok(ExitCode::SUCCESS)
}

pub fn run(args: ShowArgs, ctx: &Context) -> Result<ExitCode> {
    let skills = &crate::global::skills(ctx)?;
    crate::global::warn_no_layers(skills.layers());
    if args.names.len() > 1 {
        if args.per_layer || args.origins || args.files {
            return Err(Error::Refused {
                kind: ErrorKind::InvalidInput,
                path: None,
                message: "--per-layer, --origins and --files show one skill; name only one".into(),
            });
        }
        let targets = ctx.targets(skills.spec(), &args.targets)?;
        return several(args.names, skills, &targets);
    }
    let targets = ctx.targets(skills.spec(), &args.targets)?;
    let resolved = skills.resolve(&args.names[0])?;
    // With --files, the skill's own files are listed once, for the rows
    // and the warnings.
    let listed = args.files.then(|| skills.files(resolved.name()));
    // Every warning validate gives about the skill travels with it.
    crate::output::warn_diagnostics(&match &listed {
        Some(Ok(files)) => skills.warnings_with_files(&resolved, files),
        _ => skills.warnings(&resolved),
    });
    crate::output::warn_diagnostics(&skills.target_findings(
        &resolved,
        &targets,
        bernstein_skills::Severity::Warning,
    ));
    if let Some(listed) = listed {
        return files(resolved.name(), &listed?, args.json);
    }
    let out = if args.origins {
        crate::origins::render(&resolved)
    } else if !args.per_layer {
        render::effective_to_json(resolved.effective())
    } else if args.json {
        let effective = resolved.effective().to_value();
        let layers: Vec<Value> = resolved
            .fragments()
            .iter()
            .map(|f| {
                json!({
                    "layer": f.layer,
                    "file": f.path.display().to_string(),
                    "fragment": f.as_value(),
                })
            })
            .collect();
        render::to_json(&json!({
            "skill": resolved.name(),
            "effective": effective,
            "layers": layers,
        }))
    } else {
        let mut out = render::effective_to_json(resolved.effective());
        for f in resolved.fragments() {
            out.push_str(&format!(
                "\n# {} ({})\n",
                f.layer,
                bernstein_skills::text::path(&f.path)
            ));
            out.push_str(&render::to_json(f.as_value()));
        }
        out
    };
    output::print(&out);
    Ok(ExitCode::SUCCESS)
}
