//! `bernstein skills trust [--revoke | --list | --status]`: the person's
//! say that the project-local layer found from here may reach places
//! outside the project (an export to `~/.claude/skills`).

use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use bernstein_skills::source::Project;
use bernstein_skills::source::trust::{Snapshot, TrustState, TrustStore};
use bernstein_skills::{Error, ErrorKind, Result, output::render, text};

use crate::output;
use bernstein_skills::Context;

#[derive(Debug, Args)]
#[command(after_help = AFTER_HELP)]
pub struct TrustArgs {
    /// Forget the trust in this project's layer.
    #[arg(long, conflicts_with_all = ["list", "status"])]
    pub revoke: bool,
    /// List every trusted project layer.
    #[arg(long, conflicts_with = "status")]
    pub list: bool,
    /// Say whether this project's layer is trusted as it is now, and what
    /// changed since it was (exit 1 when it is not), without trusting it.
    #[arg(long)]
    pub status: bool,
    /// Print one JSON document (docs/json.md).
    #[arg(long)]
    pub json: bool,
}

const AFTER_HELP: &str = "\
A project's own layer (.bernstein/skills in its git work tree) comes with
every clone. Commands read it inside the project, but an export into a
place outside it (the default --scope user of export --target, or an --out
elsewhere) takes it only after you have reviewed it and run this command in
the project. Trust covers the layer's files as they are now: when any is
added, removed or changed, such an export is refused again and names them.
Trust is kept outside every repository, in $XDG_STATE_HOME/bernstein/skills/
(default ~/.local/state/bernstein/skills/).

Examples:
  bernstein skills trust            # trust this project's layer as it is now
  bernstein skills trust --status   # is it trusted? what changed since?
  bernstein skills trust --revoke
  bernstein skills trust --list";

pub fn run(args: TrustArgs, ctx: &Context) -> Result<ExitCode> {
    let store = ctx.trust_store();
    if args.list {
        return list(&store, args.json);
    }
    let layers = crate::global::layers(ctx)?;
    let Some((project, cwd)) = layers.project() else {
        return Err(Error::Refused {
            kind: ErrorKind::NoPlace,
            path: None,
            message: "no project here: trust is for a project's .bernstein/ (its skills/ \
                      layer, sources.toml, sources.lock or targets.toml) found from the working \
                      directory (in it or above it, within its git work tree), and a flag or a \
                      variable names the team layer instead, or there is none"
                .into(),
        });
    };
    let team = &layers.dirs()[1];
    // What is trusted is the project's `.bernstein/`: its layer and the
    // files beside it, each shown from where the person stands.
    let shown = text::path(&bernstein_skills::source::project::relative_to(
        &project.dir,
        Some(cwd),
    ));
    if args.revoke {
        return revoke(&store, project, &shown, args.json);
    }
    let now = Snapshot::of_project(project, team.root.as_deref(), Some(cwd))?;
    let files = now.files.len();
    let (state, trusted) = if args.status {
        (store.state(project, &now)?, false)
    } else {
        (store.trust(project, now)?, true)
    };
    let ok = trusted || state == TrustState::Trusted;
    let changes = match &state {
        TrustState::Changed(c) => c.as_slice(),
        _ => &[],
    };
    if args.json {
        output::print(&render::to_json(&json!({
            "layer": "team",
            "dir": project.layer.display().to_string(),
            "project": project.root.display().to_string(),
            "files": files,
            "was": match &state {
                TrustState::Trusted => "trusted",
                TrustState::Untrusted => "untrusted",
                TrustState::Changed(_) => "changed",
            },
            "trusted": ok,
            "changes": changes,
        })));
    } else {
        let mut out = String::new();
        for c in changes {
            out.push_str(&format!("    {}: {}\n", c.label(), c.shown(&team.path)));
        }
        output::print(&state_words(&state, trusted, &shown, files, &out));
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `trust --list`: every trusted project layer, and how many.
fn list(store: &TrustStore, json: bool) -> Result<ExitCode> {
    let trusted = store.list()?;
    if json {
        output::print(&render::to_json(&json!({
            "trust_file": store.file().map(|p| p.display().to_string()),
            "trusted": trusted
                .iter()
                .map(|p| json!({"dir": p.display().to_string()}))
                .collect::<Vec<_>>(),
        })));
    } else {
        let mut out: String = trusted
            .iter()
            .map(|p| format!("{}\n", text::path(p)))
            .collect();
        out.push_str(&format!("{} trusted project layer(s)\n", trusted.len()));
        output::print(&out);
    }
    Ok(ExitCode::SUCCESS)
}

/// `trust --revoke`: forgets the trust in `project` (`shown` as the person
/// names it from here), and says whether there was any.
fn revoke(store: &TrustStore, project: &Project, shown: &str, json: bool) -> Result<ExitCode> {
    let was = store.revoke(project)?;
    if json {
        output::print(&render::to_json(&json!({
            "layer": "team",
            "dir": project.layer.display().to_string(),
            "revoked": was,
        })));
    } else if was {
        output::print(&format!("no longer trusted: {shown}\n"));
    } else {
        output::print(&format!("{shown} was not trusted\n"));
    }
    Ok(ExitCode::SUCCESS)
}

/// What `trust` (`trusted`: it trusted the layer now) or `trust --status`
/// says of the layer (`shown`, `files` files) that was in `state`; `changes`
/// lists what changed since it was trusted, a line each.
fn state_words(
    state: &TrustState,
    trusted: bool,
    shown: &str,
    files: usize,
    changes: &str,
) -> String {
    match (state, trusted) {
        (TrustState::Trusted, _) => format!("{shown} is trusted as it is ({files} file(s))\n"),
        (TrustState::Untrusted, false) => format!(
            "{shown} is not trusted ({files} file(s)); review it, then run `bernstein skills trust`\n"
        ),
        (TrustState::Changed(c), false) => format!(
            "{shown} changed in {} file(s) since you trusted it:\n{changes}review the changes, then run `bernstein skills trust`\n",
            c.len()
        ),
        (TrustState::Untrusted, true) => format!("trusted {shown} ({files} file(s))\n"),
        (TrustState::Changed(c), true) => format!(
            "trusted {shown} ({files} file(s)), with {} change(s) since you last trusted it:\n{changes}",
            c.len()
        ),
    }
}
