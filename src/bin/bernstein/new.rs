//! `bernstein skills new NAME --layer team|user [--form yaml|md|toml]`.

use std::process::ExitCode;

use clap::{Args, ValueEnum};

use bernstein_skills::context::NewOverride;
use bernstein_skills::layer::Form;
use bernstein_skills::{Context, Layer, Result, output::render, text};

use crate::output;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OverrideLayer {
    Team,
    User,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum NewForm {
    Yaml,
    Md,
    Toml,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  bernstein skills new writer --layer user\n  bernstein skills new writer --layer team --form toml"
)]
pub struct NewArgs {
    /// The skill to override.
    #[arg(add = clap_complete::ArgValueCandidates::new(crate::complete::skill_names))]
    pub name: String,
    /// Which layer to write the override into.
    #[arg(long)]
    pub layer: OverrideLayer,
    /// The file form.
    #[arg(long, default_value = "yaml")]
    pub form: NewForm,
    /// Replace a `skill-fragment.schema.json` beside the layers that this
    /// tool did not write.
    #[arg(long)]
    pub force: bool,
    /// Print one JSON document, `{"skill", "layer", "file", "schema"}`
    /// (docs/json.md).
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: NewArgs, ctx: &Context) -> Result<ExitCode> {
    let layer = match args.layer {
        OverrideLayer::Team => Layer::Team,
        OverrideLayer::User => Layer::User,
    };
    let form = match args.form {
        NewForm::Yaml => Form::Yaml,
        NewForm::Md => Form::SkillMd,
        NewForm::Toml => Form::Toml,
    };
    let req = NewOverride::new(&args.name, layer, form, args.force)?;
    let spec = crate::global::load_spec(ctx)?;
    let layers = crate::global::layers(ctx)?;
    let made = ctx.new_override(&spec, &layers, &req)?;
    if args.json {
        output::print(&render::to_json(&serde_json::json!({
            "skill": args.name,
            "layer": layer,
            "file": made.path.display().to_string(),
            "schema": made.schema.display().to_string(),
        })));
    } else {
        output::print(&format!(
            "created {} ({}: {})\n",
            text::path(&made.path),
            layer.label(),
            text::escape(&made.why)
        ));
    }
    Ok(ExitCode::SUCCESS)
}
