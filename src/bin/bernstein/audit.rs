//! `bernstein skills audit`: what is deployed is what the lock and the
//! layers give, checked on any clone with no per-machine state: every
//! locked source against the lock (as `verify`), then every directory the
//! project exports to (its `targets.toml`, at the project's places) as
//! `export --check` sees it.

use std::process::ExitCode;

use clap::Args;

use bernstein_skills::context::{Audit, AuditCheck, AuditOptions};
use bernstein_skills::{Context, Result, output::render, par, text};

use crate::output;

#[derive(Debug, Args)]
#[command(after_help = AFTER_HELP)]
pub struct AuditArgs {
    /// Print one JSON document (docs/json.md): `{"up_to_date", "sources",
    /// "checks"}`.
    #[arg(long)]
    pub json: bool,
}

const AFTER_HELP: &str = "\
Checks the project's deployed skills against what sources.lock and the
layers give now, on any machine: every locked source is fetched if the
cache lacks it and checked file by file against the lock (as verify
does), then each directory of the project's targets (.bernstein/targets.toml,
at the project's places, e.g. .claude/skills) is compared with what export
would write there, as export --check does: missing, changed, removed,
hand-edited and hand-added files, and skills export did not write. Nothing
is written but the cache. Exit 1 on any difference. What CI and a
pre-commit hook run.

Examples:
  bernstein skills audit
  bernstein skills audit --json";

pub fn run(args: AuditArgs, ctx: &Context) -> Result<ExitCode> {
    let audit = ctx.audit(&AuditOptions {
        jobs: par::default_jobs(),
        on_wait: Some(&crate::export::waiting),
    })?;
    if audit.spec.stale {
        crate::global::warn_stale(&audit.spec.path);
    }
    output::warn_diagnostics(&audit.warnings);
    if args.json {
        output::print(&render::to_json(&output::value(&audit)));
    } else {
        print_text(&audit);
    }
    Ok(if audit.up_to_date {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The audit as text: the sources as `verify` prints them, each directory
/// as `export --check` prints it (a directory never exported in one line),
/// then a line that sums it up.
fn print_text(audit: &Audit) {
    crate::sources::print_verified(&audit.verified);
    for check in &audit.checks {
        match check {
            AuditCheck::Checked(check) => {
                let places = crate::export::places_once(&check.places);
                crate::export::print_check(check, &places);
            }
            AuditCheck::Missing(missing) => output::print(&format!(
                "missing: {} ({}) was never exported\n",
                text::path(&missing.dir),
                text::list(
                    std::iter::once(missing.target.as_str())
                        .chain(missing.shared_with.iter().map(String::as_str)),
                    false
                )
            )),
        }
    }
    let dirs = output::count(audit.checks.len(), "directory", "directories");
    if audit.up_to_date {
        output::print(&format!(
            "audit: {dirs} match what the lock and the layers give\n"
        ));
    } else {
        output::print(&format!(
            "audit: {} of {dirs} differ from what the lock and the layers give; \
             `bernstein skills sync` exports them again (with the flags the lines above name)\n",
            audit.differ()
        ));
    }
}
