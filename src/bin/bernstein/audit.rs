//! `bernstein skills audit`: what is deployed is what the lock and the
//! layers give, checked on any clone with no per-machine state: every
//! locked source against the lock (as `verify`), then every directory the
//! project exports to (its `targets.toml`, at the project's places) as
//! `export --check` sees it.

use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use bernstein_skills::context::Scope;
use bernstein_skills::{Context, Error, ErrorKind, Result, output::render, text};

use crate::export::{ExportArgs, Scope as ScopeArg};
use crate::output;
use crate::sources::VerifyArgs;

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
    // The sources first: what the checks below compare with comes from them.
    let (code, verified) = output::nested(args.json, || {
        crate::sources::verify(VerifyArgs { json: args.json }, ctx)
    })?;
    if code != ExitCode::SUCCESS {
        return Ok(code);
    }
    let layers = ctx.layers_without_sources()?;
    let Some((file, names)) = ctx.project_targets(&layers)? else {
        return Err(Error::Refused {
            kind: ErrorKind::NotFound,
            path: None,
            message: format!(
                "the project names no targets to audit: {} does not exist; `bernstein skills \
                 sync --target NAME` exports to a target and records it there",
                text::path(&ctx.paths(&layers).targets)
            ),
        });
    };
    let spec = crate::global::load_spec(ctx)?;
    let targets = ctx.targets_in_file(&spec, &file, &names)?;
    // Each directory once, with every target reading it (`.agents/skills`
    // for several agents).
    let places = ctx.target_places_in_file(&targets, &file, Scope::Project)?;
    let mut checks = Vec::new();
    let mut differ = 0;
    for place in &places {
        let dir = ctx.shown(&place.dir);
        let target = place.target();
        let names = place.names();
        let check = ExportArgs {
            check: Some(dir.clone()),
            targets: names.iter().map(|n| (*n).to_owned()).collect(),
            scope: ScopeArg::Project,
            json: args.json,
            extra: true,
            ..ExportArgs::default()
        };
        if !dir.exists() {
            // Never exported here: everything is missing.
            differ += 1;
            let shown = ctx.shown(&dir);
            if args.json {
                checks.push(json!({
                    "dir": shown.display().to_string(),
                    "target": target.name,
                    "shared_with": target.shared_with(),
                    "up_to_date": false,
                    "missing": true,
                    "drift": [],
                }));
            } else {
                output::print(&format!(
                    "missing: {} ({}) was never exported\n",
                    text::path(&shown),
                    text::list(names.iter().copied(), false)
                ));
            }
            continue;
        }
        let (code, doc) = output::nested(args.json, || crate::export::run(check, ctx))?;
        if code != ExitCode::SUCCESS {
            differ += 1;
        }
        if let Some(list) = doc.get("checks").and_then(Value::as_array) {
            checks.extend(list.iter().cloned());
        }
    }
    let ok = differ == 0;
    if args.json {
        output::print(&render::to_json(&json!({
            "up_to_date": ok,
            "sources": verified.get("sources").cloned().unwrap_or(json!([])),
            "checks": checks,
        })));
    } else if ok {
        output::print(&format!(
            "audit: {} match what the lock and the layers give\n",
            output::count(places.len(), "directory", "directories")
        ));
    } else {
        output::print(&format!(
            "audit: {differ} of {} differ from what the lock and the layers give; \
             `bernstein skills sync` exports them again (with the flags the lines above name)\n",
            output::count(places.len(), "directory", "directories")
        ));
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
