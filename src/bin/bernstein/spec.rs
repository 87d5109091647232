//! `bernstein skills spec`.

use std::process::ExitCode;

use clap::Args;

use bernstein_skills::Result;

use crate::cli::Global;
use crate::output;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  bernstein skills spec\n  bernstein skills spec --spec ./my-mergespec.yaml"
)]
pub struct SpecArgs {}

pub fn run(_args: SpecArgs, global: &Global) -> Result<ExitCode> {
    let spec = global.load_spec()?;
    let mut out = format!(
        "spec: {}\nversion: {}\n",
        bernstein_skills::text::path(&spec.path),
        spec.version
    );
    if let Some(b) = &spec.body_field {
        out.push_str(&format!(
            "SKILL.md body field: {}\n",
            bernstein_skills::text::escape(b)
        ));
    }
    if let Some(n) = &spec.name_field {
        out.push_str(&format!(
            "name field: {}\n",
            bernstein_skills::text::escape(n)
        ));
    }
    out.push('\n');
    let mut rows = vec![
        ["FIELD", "STRATEGY", "TYPE", "DEFAULT"]
            .map(String::from)
            .to_vec(),
    ];
    for f in &spec.fields {
        rows.push(vec![
            f.name.clone(),
            f.strategy.name().into(),
            f.strategy.type_description(),
            f.default.to_string(),
        ]);
    }
    out.push_str(&output::table(&rows));
    output::print(&out);
    Ok(ExitCode::SUCCESS)
}
