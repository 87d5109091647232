//! `bernstein skills export (--out DIR [--prune] | --check DIR) [--format json|skill]`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use bernstein_skills::export::{Drift, Format};
use bernstein_skills::{Error, Result, par, text};

use crate::cli::Global;
use crate::output;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  bernstein skills export --out manifests/\n  bernstein skills export --out manifests/ --prune\n  bernstein skills export --check manifests/   # in CI: exit 1 if any differ\n  bernstein skills export --format skill --out ~/.claude/skills"
)]
pub struct ExportArgs {
    /// Write DIR/<name>.json for every skill (atomically; unchanged files are left alone).
    #[arg(
        long,
        value_name = "DIR",
        required_unless_present = "check",
        conflicts_with = "check"
    )]
    pub out: Option<PathBuf>,
    /// With --out: remove manifests of skills that no longer exist.
    #[arg(long, requires = "out")]
    pub prune: bool,
    /// Write nothing; exit 1 listing every skill whose manifest in DIR differs.
    #[arg(long, value_name = "DIR")]
    pub check: Option<PathBuf>,
    /// Worker threads [default: one per core].
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,
    /// What to write per skill: `json` (DIR/<name>.json, the `show` JSON)
    /// or `skill` (DIR/<name>/SKILL.md and the skill's files, an Agent
    /// Skills directory any agent loads).
    #[arg(long, value_enum, default_value = "json")]
    pub format: ExportFormat,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ExportFormat {
    Json,
    Skill,
}

pub fn run(args: ExportArgs, global: &Global) -> Result<ExitCode> {
    let skills = global.skills()?;
    let jobs = args.jobs.unwrap_or_else(par::default_jobs);
    let format = match args.format {
        ExportFormat::Json => Format::Json,
        ExportFormat::Skill => Format::Skill,
    };
    if let Some(dir) = &args.check {
        let drift = skills.check_export_as(dir, format, jobs)?;
        if drift.is_empty() {
            output::print(&format!("{}: all manifests up to date\n", text::path(dir)));
            return Ok(ExitCode::SUCCESS);
        }
        let mut out = String::new();
        for (name, d) in &drift {
            let file = match format {
                Format::Json => text::path(&dir.join(format!("{name}.json"))),
                Format::Skill => format!("{}/", text::path(&dir.join(name))),
            };
            let name = text::escape(name);
            match d {
                Drift::Added => out.push_str(&format!("added: {name} (no {file})\n")),
                Drift::Removed => out.push_str(&format!("removed: {name} ({file} has no skill)\n")),
                Drift::Refused(why) => out.push_str(&format!("refused: {name} ({why})\n")),
                Drift::Changed(diff) => {
                    out.push_str(&format!("changed: {name} ({file})\n"));
                    for l in diff {
                        out.push_str(&format!("    {l}\n"));
                    }
                }
            }
        }
        out.push_str(&format!(
            "{} manifest(s) out of date; run `bernstein skills export{} --out {} --prune`\n",
            drift.len(),
            if format == Format::Skill {
                " --format skill"
            } else {
                ""
            },
            text::path(dir)
        ));
        output::print(&out);
        return Ok(ExitCode::from(1));
    }
    let dir = args.out.as_ref().expect("clap requires --out or --check");
    let report = skills.export_as(dir, format, args.prune, jobs)?;
    output::warn(
        report
            .stale_removed
            .iter()
            .map(|p| format!("removed stale export staging directory {}", text::path(p))),
    );
    if !report.failed.is_empty() {
        let diags: Vec<_> = report
            .failed
            .iter()
            .flat_map(|e| e.diagnostics().to_vec())
            .collect();
        for e in report.failed.iter().filter(|e| e.diagnostics().is_empty()) {
            output::print_error(e);
        }
        if !diags.is_empty() {
            output::print_error(&Error::Invalid(diags));
        }
    }
    let mut summary = format!(
        "{} written, {} unchanged, {} removed, {} failed",
        report.written,
        report.unchanged,
        report.removed.len(),
        report.failed.len()
    );
    if report.not_written > 0 {
        summary.push_str(&format!(", {} not written", report.not_written));
    }
    if report.new_dir && !report.failed.is_empty() {
        summary.push_str(&format!("; {} was not created", text::path(dir)));
    }
    summary.push('\n');
    if report.failed.is_empty() {
        output::print(&summary);
        Ok(ExitCode::SUCCESS)
    } else {
        // On failure stdout stays empty; the summary goes with the errors.
        output::warn([format!("error: {}", summary.trim_end())]);
        Ok(ExitCode::from(1))
    }
}
