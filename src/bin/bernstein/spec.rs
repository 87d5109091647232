//! `bernstein skills spec`.

use std::process::ExitCode;

use clap::Args;

use bernstein_skills::Result;
use bernstein_skills::spec::{Constraints, Field, Strategy};

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
        ["FIELD", "STRATEGY", "TYPE", "DEFAULT", "CHECKS"]
            .map(String::from)
            .to_vec(),
    ];
    for f in &spec.fields {
        rows.push(vec![
            f.name.clone(),
            f.strategy.name().into(),
            f.strategy.type_description(),
            f.default.to_string(),
            checks(f),
        ]);
    }
    out.push_str(&output::table(&rows));
    output::print(&out);
    Ok(ExitCode::SUCCESS)
}

/// The CHECKS column: `required`, then the constraints in short.
fn checks(field: &Field) -> String {
    let mut out = Vec::new();
    if field.required {
        out.push("required".to_owned());
    }
    match &field.strategy {
        Strategy::Override { value } => {
            out.extend(short(&value.constraints));
            if let Some(items) = &value.items {
                out.extend(short(&items.constraints).map(|c| format!("items {c}")));
            }
        }
        Strategy::Append { items } => {
            out.extend(short(&items.constraints).map(|c| format!("items {c}")));
        }
        _ => {}
    }
    out.join(", ")
}

fn short(c: &Constraints) -> impl Iterator<Item = String> {
    let length = match (c.min_length, c.max_length) {
        (Some(min), Some(max)) => Some(format!("{min}-{max} chars")),
        (Some(min), None) => Some(format!(">= {min} chars")),
        (None, Some(max)) => Some(format!("<= {max} chars")),
        (None, None) => None,
    };
    let range = match (&c.minimum, &c.maximum) {
        (Some(min), Some(max)) => Some(format!("{min}..{max}")),
        (Some(min), None) => Some(format!(">= {min}")),
        (None, Some(max)) => Some(format!("<= {max}")),
        (None, None) => None,
    };
    [
        c.pattern.as_ref().map(|_| "pattern".to_owned()),
        length,
        c.allowed.as_ref().map(|v| format!("one of {}", v.len())),
        range,
    ]
    .into_iter()
    .flatten()
}
