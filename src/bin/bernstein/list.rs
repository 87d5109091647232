//! `bernstein skills list`.

use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use bernstein_skills::target::Switch;
use bernstein_skills::{Layer, Result, output::render};

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
    /// Print one JSON document, `{"places": [...], "skills": [...]}`, the
    /// same with or without --layered (docs/json.md).
    #[arg(long)]
    pub json: bool,
}

/// `list --json`: one shape whatever the flags (docs/json.md), each skill
/// resolved once (in parallel) for its description, switch and digest.
fn json(global: &Global) -> Result<ExitCode> {
    let skills = &global.skills()?;
    let layers = skills.layers();
    Global::warn_no_layers(layers);
    let names = layers.names();
    let entries = bernstein_skills::par::map(
        &names,
        bernstein_skills::par::default_jobs(),
        |(name, ls)| {
            let mut entry = json!({
                "skill": name,
                "layers": ls,
                "description": null,
                "enabled": null,
                "enabled_by": null,
                "off_for": [],
                "digest": null,
                "error": null,
            });
            match skills.resolve(name) {
                Ok(r) => {
                    let eff = r.effective();
                    let sw = bernstein_skills::target::switch(skills.spec(), eff);
                    let digest = sha256_hex(render::effective_to_json(eff).as_bytes());
                    entry["description"] = eff
                        .to_value()
                        .get("description")
                        .cloned()
                        .unwrap_or(Value::Null);
                    entry["enabled"] = json!(sw.enabled);
                    entry["enabled_by"] = json!(sw.set_by);
                    entry["off_for"] = sw
                        .off_for
                        .iter()
                        .map(|(t, l)| json!({"target": t, "layer": l}))
                        .collect();
                    entry["digest"] = json!(format!("sha256:{digest}"));
                }
                Err(e) => entry["error"] = output::error_json(&e)["error"].take(),
            }
            entry
        },
    );
    output::print(&render::to_json(&json!({
        "places": Global::places_json(layers),
        "skills": entries,
    })));
    Ok(ExitCode::SUCCESS)
}

pub fn run(args: ListArgs, global: &Global) -> Result<ExitCode> {
    if args.json {
        return json(global);
    }
    if args.layered {
        let layers = global.layers()?;
        Global::warn_no_layers(&layers);
        let names = layers.names();
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
            let mut row = vec![bernstein_skills::layer::shown(name).into_owned()];
            for l in Layer::ALL {
                row.push(if ls.contains(&l) { "yes" } else { "-" }.into());
            }
            row.push(ls.iter().map(|l| l.label()).collect::<Vec<_>>().join("+"));
            rows.push(row);
        }
        let mut out = table(&rows, &[]);
        out.push_str(&Global::places(&layers));
        output::print(&out);
        return Ok(ExitCode::SUCCESS);
    }
    // Plain list: names with their effective descriptions.
    let skills = &global.skills()?;
    let layers = skills.layers();
    Global::warn_no_layers(layers);
    let names = layers.names();
    let describe = |name: &str| -> std::result::Result<(Value, Switch), String> {
        let r = skills.resolve(name).map_err(|e| e.to_string())?;
        let eff = r.effective();
        let v = eff.to_value();
        let switch = bernstein_skills::target::switch(skills.spec(), eff);
        Ok((v.get("description").cloned().unwrap_or(Value::Null), switch))
    };
    let mut items = Vec::new();
    for (name, _) in &names {
        let (desc, switch, err) = match describe(name) {
            Ok((Value::String(s), sw)) => (s, Some(sw), None),
            Ok((Value::Null, sw)) => (String::new(), Some(sw), None),
            Ok((v, sw)) => (v.to_string(), Some(sw), None),
            Err(e) => (String::new(), None, Some(e)),
        };
        items.push((name.clone(), desc, switch, err));
    }
    if names.is_empty() {
        output::print(&nothing_found(layers));
        return Ok(ExitCode::SUCCESS);
    }
    // The STATE column appears when some skill is switched off.
    let any_off = items.iter().any(|(_, _, sw, _)| {
        sw.as_ref()
            .is_some_and(|s| !s.enabled || !s.off_for.is_empty())
    });
    let mut header = vec!["NAME".to_string()];
    if any_off {
        header.push("STATE".into());
    }
    header.push("DESCRIPTION".into());
    let mut rows = vec![header];
    for (n, d, sw, e) in &items {
        let d = match e {
            None => d.lines().next().unwrap_or("").to_string(),
            Some(_) => "(invalid: run `bernstein skills validate`)".into(),
        };
        let mut row = vec![bernstein_skills::layer::shown(n).into_owned()];
        if any_off {
            row.push(sw.as_ref().map(state).unwrap_or_default());
        }
        row.push(bernstein_skills::text::escape(&d).into_owned());
        rows.push(row);
    }
    print_table(&rows, &[Column::Whole, Column::Text]);
    Ok(ExitCode::SUCCESS)
}

/// A skill's switch in words: `on`, `off (team)`, `off for codex (team)`.
fn state(sw: &Switch) -> String {
    let by = |l: &Option<bernstein_skills::Layer>| {
        l.map(|l| format!(" ({})", l.label())).unwrap_or_default()
    };
    if !sw.enabled {
        return format!("off{}", by(&sw.set_by));
    }
    if sw.off_for.is_empty() {
        return "on".into();
    }
    let parts: Vec<String> = sw
        .off_for
        .iter()
        .map(|(t, l)| format!("{}{}", bernstein_skills::text::escape(t), by(l)))
        .collect();
    format!("off for {}", parts.join(", "))
}

/// The table (header first), then the count of skills.
fn print_table(rows: &[Vec<String>], columns: &[Column]) {
    output::print(&table(rows, columns));
}

/// [`print_table`]'s text.
fn table(rows: &[Vec<String>], columns: &[Column]) -> String {
    let mut out = output::table(rows, columns);
    out.push_str(&format!("{} skill(s)\n", rows.len() - 1));
    out
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
