//! `bernstein skills list`.

use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use bernstein_skills::{Layer, Result, Skills, render};

use crate::cli::Global;
use crate::output::{self, Column};

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  bernstein skills list\n  bernstein skills list --layered\n  bernstein skills list --layered --json"
)]
pub struct ListArgs {
    /// Show which layers hold each skill.
    #[arg(long)]
    pub layered: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ListArgs, global: &Global) -> Result<ExitCode> {
    if args.layered {
        let layers = global.layers()?;
        let names = layers.names();
        if args.json {
            // The digest needs the effective skill, so JSON mode resolves
            // every skill (in parallel); the table only lists files.
            let skills = Skills::new(global.load_spec()?, layers, global.max_fragment_bytes);
            let digests = bernstein_skills::par::map(
                &names,
                bernstein_skills::par::default_jobs(),
                |(n, _)| skills.manifest(n).map(|text| sha256_hex(text.as_bytes())),
            );
            let v: Vec<Value> = names
                .iter()
                .zip(digests)
                .map(|((n, ls), d)| match d {
                    Ok(d) => json!({"name": n, "layers": ls, "digest": format!("sha256:{d}")}),
                    Err(e) => {
                        json!({"name": n, "layers": ls, "digest": null, "error": e.to_string()})
                    }
                })
                .collect();
            output::print(&render::to_json(&Value::Array(v)));
            return Ok(ExitCode::SUCCESS);
        }
        if names.is_empty() {
            output::print(&nothing_found(&layers));
            return Ok(ExitCode::SUCCESS);
        }
        let mut rows = vec![
            ["NAME", "BASE", "TEAM", "USER", "ORIGIN"]
                .map(String::from)
                .to_vec(),
        ];
        for (name, ls) in &names {
            let mut row = vec![bernstein_skills::text::escape(name).into_owned()];
            for l in Layer::ALL {
                row.push(if ls.contains(&l) { "yes" } else { "-" }.into());
            }
            row.push(ls.iter().map(|l| l.label()).collect::<Vec<_>>().join("+"));
            rows.push(row);
        }
        print_table(&rows, &[]);
        return Ok(ExitCode::SUCCESS);
    }
    // Plain list: names with their effective descriptions.
    let skills = global.skills()?;
    let layers = skills.layers();
    let names = layers.names();
    let describe = |name: &str| -> std::result::Result<Value, String> {
        let r = skills.resolve(name).map_err(|e| e.to_string())?;
        let v = r.effective().to_value();
        Ok(v.get("description").cloned().unwrap_or(Value::Null))
    };
    let mut items = Vec::new();
    for (name, _) in &names {
        let (desc, err) = match describe(name) {
            Ok(Value::String(s)) => (s, None),
            Ok(Value::Null) => (String::new(), None),
            Ok(v) => (v.to_string(), None),
            Err(e) => (String::new(), Some(e)),
        };
        items.push((name.clone(), desc, err));
    }
    if args.json {
        let v: Vec<Value> = items
            .iter()
            .map(|(n, d, e)| match e {
                None => json!({"name": n, "description": d}),
                Some(e) => json!({"name": n, "error": e}),
            })
            .collect();
        output::print(&render::to_json(&Value::Array(v)));
        return Ok(ExitCode::SUCCESS);
    }
    if names.is_empty() {
        output::print(&nothing_found(layers));
        return Ok(ExitCode::SUCCESS);
    }
    let mut rows = vec![vec!["NAME".to_string(), "DESCRIPTION".to_string()]];
    for (n, d, e) in &items {
        let d = match e {
            None => d.lines().next().unwrap_or("").to_string(),
            Some(_) => "(invalid: run `bernstein skills validate`)".into(),
        };
        rows.push(vec![
            bernstein_skills::text::escape(n).into_owned(),
            bernstein_skills::text::escape(&d).into_owned(),
        ]);
    }
    print_table(&rows, &[Column::Whole, Column::Text]);
    Ok(ExitCode::SUCCESS)
}

/// The table (header first), then the count of skills.
fn print_table(rows: &[Vec<String>], columns: &[Column]) {
    let mut out = output::table(rows, columns);
    out.push_str(&format!("{} skill(s)\n", rows.len() - 1));
    output::print(&out);
}

fn nothing_found(layers: &bernstein_skills::Layers) -> String {
    let mut out = String::from("no skills found; searched:\n");
    for d in layers.dirs() {
        out.push_str(&format!(
            "  {:<5} {}\n",
            d.layer.label(),
            bernstein_skills::text::path(&d.path)
        ));
    }
    out
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
