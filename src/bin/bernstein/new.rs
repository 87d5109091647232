//! `bernstein skills new NAME --layer team|user [--form yaml|md|toml]`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use bernstein_skills::layer::{Form, check_name};
use bernstein_skills::source::PlaceSource;
use bernstein_skills::spec::strategy_help;
use bernstein_skills::{Error, ErrorKind, Layer, Result, output::render, text};

use crate::output;
use bernstein_skills::Context;

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

/// A relative path from directory `from` to file `to` (both under one root).
fn relative(from: &Path, to: &Path) -> PathBuf {
    let from: Vec<_> = from.components().collect();
    let to_c: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to_c).take_while(|(a, b)| a == b).count();
    let mut p = PathBuf::new();
    for _ in common..from.len() {
        p.push("..");
    }
    for c in &to_c[common..] {
        p.push(c);
    }
    p
}

pub fn run(args: NewArgs, ctx: &Context) -> Result<ExitCode> {
    check_name(&args.name).map_err(|reason| Error::InvalidName {
        name: args.name.clone(),
        reason,
    })?;
    let spec = crate::global::load_spec(ctx)?;
    let layers = crate::global::layers(ctx)?;
    let layer = match args.layer {
        OverrideLayer::Team => Layer::Team,
        OverrideLayer::User => Layer::User,
    };
    let place = &layers.dirs()[layer as usize];
    let (dir, why) = match place.source {
        PlaceSource::NoHome { .. } => {
            return Err(Error::Refused {
                kind: ErrorKind::NoPlace,
                path: None,
                message: format!(
                    "the {layer} is {}; give it with --{} or set the variable \
                     (nothing was written)",
                    place.source.why(layer),
                    layer.label()
                ),
            });
        }
        // Inside a git work tree that has no layer of its own yet, the
        // team's override belongs to the project, not to the person's
        // configuration.
        PlaceSource::Xdg { .. } if layer == Layer::Team => {
            let env = ctx.env();
            match env.work_tree() {
                Some(top) => (
                    bernstein_skills::source::project::relative_to(
                        &bernstein_skills::source::Project::at(&top).layer,
                        env.cwd.as_deref(),
                    ),
                    "project-local: the first in this git work tree".to_owned(),
                ),
                None => (place.path.clone(), place.source.why(layer)),
            }
        }
        source => (place.path.clone(), source.why(layer)),
    };
    let form = match args.form {
        NewForm::Yaml => Form::Yaml,
        NewForm::Md => Form::SkillMd,
        NewForm::Toml => Form::Toml,
    };
    if let Some(existing) = layers
        .locate(&args.name)
        .into_iter()
        .find(|l| l.layer == layer)
    {
        // A directory of files only takes a SKILL.md; any other form
        // would shadow it.
        let message = match existing.form {
            Form::Files if form == Form::SkillMd => None,
            Form::Files => Some(format!(
                "the {layer} holds files for skill '{}' in this directory; add the override as \
                 its SKILL.md (--form md) (nothing was written)",
                args.name
            )),
            _ => Some(format!(
                "the {layer} already has skill '{}'; edit this file instead (nothing was written)",
                args.name
            )),
        };
        if let Some(message) = message {
            return Err(Error::Refused {
                kind: ErrorKind::Exists,
                path: Some(existing.path),
                message,
            });
        }
    }
    let path = form.path_in(&dir, &args.name);
    let parent = path.parent().unwrap_or(&dir).to_path_buf();
    // The layer may come from strangers: a symlink there (`team/NAME ->
    // /elsewhere`) must not make us write outside it, and something at the
    // file's name that is no skill is refused by name, before the schema
    // is written.
    bernstein_skills::export::prepare_new_in_layer(&dir, &path, layer)?;

    // The schema sits beside the layers so the modeline is a relative path
    // that works for everyone who checks the layer out.
    let schema_path = dir
        .parent()
        .unwrap_or(&dir)
        .join("skill-fragment.schema.json");
    bernstein_skills::export::write_schema(
        &schema_path,
        render::to_json(&ctx.editor_schema(&spec)?).as_bytes(),
        args.force,
    )?;
    let schema_rel = relative(&parent, &schema_path);

    let comment = |c: &str| -> String {
        let mut s = format!("{c} {layer} override of skill '{}'.\n", args.name);
        s.push_str(&format!(
            "{c} Set only what should differ from the layers below; every field is optional.\n\
             {c} A required field must be set by some layer, not necessarily this one.\n{c}\n"
        ));
        let width = spec.fields.iter().map(|f| f.name.len()).max().unwrap_or(0);
        let mut seen = Vec::new();
        for f in &spec.fields {
            let required = if f.required && spec.name_field.as_ref() != Some(&f.name) {
                "  (required)"
            } else {
                ""
            };
            s.push_str(&format!(
                "{c}   {:<width$}  {}{required}\n",
                f.name,
                f.strategy.name()
            ));
            if !seen.contains(&f.strategy.name()) {
                seen.push(f.strategy.name());
            }
        }
        s.push_str(&format!("{c}\n"));
        for name in seen {
            if let Some(f) = spec.fields.iter().find(|f| f.strategy.name() == name) {
                s.push_str(&format!("{c} {}\n", strategy_help(&f.strategy)));
            }
        }
        s
    };
    let text = match form {
        Form::Toml => format!("#:schema {}\n{}", schema_rel.display(), comment("#")),
        Form::SkillMd => format!(
            "---\n# yaml-language-server: $schema={}\n{}---\n",
            schema_rel.display(),
            comment("#")
        ),
        _ => format!(
            "# yaml-language-server: $schema={}\n{}",
            schema_rel.display(),
            comment("#")
        ),
    };
    // Never over anything, even if the file appeared meanwhile, and never
    // through a symlink planted at its name.
    bernstein_skills::export::create_new(&path, text.as_bytes())?;
    if args.json {
        output::print(&render::to_json(&serde_json::json!({
            "skill": args.name,
            "layer": layer,
            "file": path.display().to_string(),
            "schema": schema_path.display().to_string(),
        })));
    } else {
        output::print(&format!(
            "created {} ({}: {})\n",
            bernstein_skills::text::path(&path),
            layer.label(),
            text::escape(&why)
        ));
    }
    Ok(ExitCode::SUCCESS)
}
