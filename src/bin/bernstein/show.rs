//! `bernstein skills show NAME`.

use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use bernstein_skills::{Result, render};

use crate::cli::Global;
use crate::output;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  bernstein skills show writer\n  bernstein skills show writer --per-layer\n  bernstein skills show writer --per-layer --json\n  bernstein skills show writer --origins"
)]
pub struct ShowArgs {
    /// The skill's name.
    pub name: String,
    /// Also print each contributing layer's raw fragment.
    #[arg(long)]
    pub per_layer: bool,
    /// With --per-layer: one JSON document {"skill": ..., "layers": [...]}.
    #[arg(long)]
    pub json: bool,
    /// Annotate each value with the layer, file and line it came from.
    #[arg(long, conflicts_with_all = ["per_layer", "json"])]
    pub origins: bool,
}

pub fn run(args: ShowArgs, global: &Global) -> Result<ExitCode> {
    let skills = global.skills()?;
    let resolved = skills.resolve(&args.name)?;
    let out = if args.origins {
        crate::origins::render(&resolved)
    } else if !args.per_layer {
        render::effective_to_json(&resolved.effective())
    } else if args.json {
        let skill = resolved.effective().to_value();
        let layers: Vec<Value> = resolved
            .fragments
            .iter()
            .map(|f| {
                json!({
                    "layer": f.layer,
                    "path": f.path.display().to_string(),
                    "fragment": f.as_value(),
                })
            })
            .collect();
        render::to_json(&json!({"skill": skill, "layers": layers}))
    } else {
        let mut out = render::effective_to_json(&resolved.effective());
        for f in &resolved.fragments {
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
