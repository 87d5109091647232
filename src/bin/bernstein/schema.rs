//! `bernstein skills schema`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use bernstein_skills::spec::{fragment_schema, mergespec_schema};
use bernstein_skills::{Error, Result, render};

use crate::cli::Global;
use crate::output;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  bernstein skills schema > skill-fragment.schema.json\n  bernstein skills schema --mergespec\n  bernstein skills schema --out schemas/"
)]
pub struct SchemaArgs {
    /// Print the schema of the merge spec file instead.
    #[arg(long, conflicts_with = "out")]
    pub mergespec: bool,
    /// Write skill-fragment.schema.json and mergespec.schema.json into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

pub fn run(args: SchemaArgs, global: &Global) -> Result<ExitCode> {
    if args.mergespec {
        output::print(&render::to_json(&mergespec_schema()));
        return Ok(ExitCode::SUCCESS);
    }
    let spec = global.load_spec()?;
    let fragment = render::to_json(&fragment_schema(&spec));
    match args.out {
        None => output::print(&fragment),
        Some(dir) => {
            std::fs::create_dir_all(&dir).map_err(|source| Error::Write {
                path: dir.clone(),
                source,
            })?;
            for (name, text) in [
                ("skill-fragment.schema.json", fragment),
                (
                    "mergespec.schema.json",
                    render::to_json(&mergespec_schema()),
                ),
            ] {
                bernstein_skills::export::write_atomic(&dir.join(name), text.as_bytes())?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
