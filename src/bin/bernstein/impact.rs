//! `bernstein skills spec impact --against OLD_SPEC`: what replacing
//! OLD_SPEC with the spec in use changes in the layers.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use bernstein_skills::impact::{FragmentChange, Impact, ImpactOptions, compare};
use bernstein_skills::{DiagnosticKind, Error, MergeSpec, Result, output::render, par, text};

use crate::output::{self, count, thousands};
use bernstein_skills::Context;

#[derive(Debug, Args)]
#[command(
    after_help = "Exit 0 when nothing changes, 1 when any skill or fragment does.\n\nExamples:\n  git show origin/main:spec/mergespec.yaml > /tmp/old.yaml\n  bernstein skills spec impact --against /tmp/old.yaml\n  bernstein skills --spec spec/mergespec.yaml spec impact --against /tmp/old.yaml --json"
)]
pub struct ImpactArgs {
    /// The spec before the edit; the spec in use (--spec,
    /// $BERNSTEIN_SKILLS_SPEC, the installed one, ...) is the one after it.
    #[arg(long, value_name = "OLD_SPEC")]
    pub against: PathBuf,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
    /// Worker threads [default: one per core].
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,
}

/// A spec's load error, saying which of the two specs it is.
fn which(e: Error, role: &str) -> Error {
    match e {
        Error::Spec(mut d) => {
            d.kind = DiagnosticKind::Spec {
                message: format!("{role}: {}", d.kind),
            };
            Error::Spec(d)
        }
        Error::Refused {
            kind,
            path,
            message,
        } => Error::Refused {
            kind,
            path,
            message: format!("{role}: {message}"),
        },
        e => e,
    }
}

pub fn run(args: ImpactArgs, ctx: &Context) -> Result<ExitCode> {
    let new = crate::global::load_spec(ctx).map_err(|e| which(e, "the spec in use"));
    let old = MergeSpec::load(&args.against)
        .map_err(|e| which(e, "the spec to compare against (--against)"));
    let (old, new) = match (old, new) {
        (Ok(old), Ok(new)) => (old, new),
        (Err(e), Ok(_)) | (Ok(_), Err(e)) => return Err(e),
        (Err(old), Err(new)) => {
            output::print_error(&new);
            return Err(old);
        }
    };
    let options = ImpactOptions {
        jobs: args.jobs.unwrap_or_else(par::default_jobs),
        max_fragment_bytes: ctx.options().max_fragment_bytes,
        ..ImpactOptions::default()
    };
    let layers = crate::global::layers(ctx)?;
    crate::global::warn_no_layers(&layers);
    let impact = compare(&old, &new, &layers, &options)?;
    if args.json {
        output::print(&render::to_json(&impact.to_value()));
    } else {
        output::print(&report(&impact, &old, &new));
    }
    Ok(if impact.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// How many skills that fail under both specs are named.
const FAILING_NAMED: usize = 5;

fn report(impact: &Impact, old: &MergeSpec, new: &MergeSpec) -> String {
    let mut out = format!(
        "spec impact: {} -> {}\n",
        text::path(&old.path),
        text::path(&new.path)
    );
    for c in &impact.changed {
        let fields: Vec<String> = c
            .fields
            .iter()
            .map(|f| text::excerpt(f, text::EXCERPT_CHARS))
            .collect();
        out.push_str(&format!(
            "changed: {} ({})\n",
            text::escape(&c.name),
            fields.join(", ")
        ));
        for l in &c.diff {
            out.push_str(&format!("    {l}\n"));
        }
    }
    let more = |c: &FragmentChange| match c.problems {
        1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    for c in &impact.became_invalid {
        let d = &c.problem;
        out.push_str(&format!(
            "becomes invalid: {}: {}{}\n",
            d.location(),
            d.message(),
            more(c)
        ));
    }
    for c in &impact.became_valid {
        let d = &c.problem;
        out.push_str(&format!(
            "becomes valid: {}: was: {}{}\n",
            d.location(),
            d.message(),
            more(c)
        ));
    }
    let failing = impact.failing_both.len();
    if failing > 0 {
        let named: Vec<String> = impact
            .failing_both
            .iter()
            .take(FAILING_NAMED)
            .map(|n| text::escape(n).into_owned())
            .collect();
        out.push_str(&format!(
            "fails under both specs: {} ({}{}); see `bernstein skills validate`\n",
            count(failing, "skill", "skills"),
            named.join(", "),
            if failing > FAILING_NAMED { ", …" } else { "" }
        ));
    }
    out.push_str(&summary(impact));
    out
}

/// `312 of 10,000 skills change; 2 fragments become invalid; 0 become valid`.
fn summary(impact: &Impact) -> String {
    let verb = |n: usize, one: &'static str, many: &'static str| if n == 1 { one } else { many };
    let (changed, invalid, valid) = (
        impact.changed.len(),
        impact.became_invalid.len(),
        impact.became_valid.len(),
    );
    let mut s = format!(
        "{} of {} {}; {} {} invalid; {} {} valid",
        thousands(changed),
        count(impact.skills, "skill", "skills"),
        verb(changed, "changes", "change"),
        count(invalid, "fragment", "fragments"),
        verb(invalid, "becomes", "become"),
        thousands(valid),
        verb(valid, "becomes", "become"),
    );
    let failing = impact.failing_both.len();
    if failing > 0 {
        s.push_str(&format!(
            "; {} {} under both",
            count(failing, "skill", "skills"),
            verb(failing, "fails", "fail")
        ));
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_are_separated() {
        assert_eq!(crate::output::thousands(0), "0");
        assert_eq!(crate::output::thousands(999), "999");
        assert_eq!(crate::output::thousands(10_000), "10,000");
        assert_eq!(crate::output::thousands(1_234_567), "1,234,567");
    }
}
