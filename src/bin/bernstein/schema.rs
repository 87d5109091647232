//! `bernstein skills schema`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use bernstein_skills::spec::mergespec_schema;
use bernstein_skills::{Result, output::render};

use crate::output;
use bernstein_skills::Context;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  bernstein skills schema > skill-fragment.schema.json\n  bernstein skills schema --mergespec\n  bernstein skills schema --out schemas/\n  bernstein skills schema --target agent-skills"
)]
pub struct SchemaArgs {
    /// Print the schema of the merge spec file instead.
    #[arg(long, conflicts_with = "out")]
    pub mergespec: bool,
    /// Print the schema of a target's SKILL.md frontmatter instead (what
    /// `export --target` writes for it).
    #[arg(long, value_name = "TARGET", conflicts_with_all = ["out", "mergespec"])]
    pub target: Option<String>,
    /// Write skill-fragment.schema.json, mergespec.schema.json, target.schema.json
    /// and targets/NAME.schema.json (each target's frontmatter) into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// With --out: replace files there that this tool did not write.
    #[arg(long, requires = "out")]
    pub force: bool,
}

pub fn run(args: SchemaArgs, ctx: &Context) -> Result<ExitCode> {
    if args.mergespec {
        output::print(&render::to_json(&mergespec_schema()));
        return Ok(ExitCode::SUCCESS);
    }
    let spec = crate::global::load_spec(ctx)?;
    if let Some(name) = &args.target {
        let target = ctx.target_search(&spec).find(name)?;
        output::print(&render::to_json(&target.schema()));
        return Ok(ExitCode::SUCCESS);
    }
    let fragment = render::to_json(&ctx.editor_schema(&spec)?);
    match args.out {
        None => output::print(&fragment),
        Some(dir) => {
            bernstein_skills::export::make_dirs(&dir)?;
            let mut files = vec![
                (dir.join("skill-fragment.schema.json"), fragment),
                (
                    dir.join("mergespec.schema.json"),
                    render::to_json(&mergespec_schema()),
                ),
                (
                    dir.join("target.schema.json"),
                    render::to_json(&bernstein_skills::target::target_schema()),
                ),
            ];
            // Each target's frontmatter, for an editor or a checker of what
            // export writes for it: once for the targets that write as
            // another (`cursor` as `agents`), under that one's name.
            let targets_dir = dir.join("targets");
            let targets = ctx
                .target_search(&spec)
                .all()
                .into_iter()
                .map(|(_, t)| t)
                .collect::<Result<Vec<_>>>()?;
            for target in bernstein_skills::target::distinct(&targets) {
                files.push((
                    targets_dir.join(format!("{}.schema.json", target.name)),
                    render::to_json(&target.schema()),
                ));
            }
            // Every file is judged before any is written.
            for (path, text) in &files {
                bernstein_skills::export::may_write_schema(path, text.as_bytes(), args.force)?;
            }
            bernstein_skills::export::make_dirs(&targets_dir)?;
            for (path, text) in &files {
                bernstein_skills::export::write_schema(path, text.as_bytes(), args.force)?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
