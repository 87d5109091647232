//! `bernstein skills list`.

use std::process::ExitCode;

use clap::Args;
use serde_json::Value;

use bernstein_skills::report::{DESCRIPTION, description};
use bernstein_skills::source::Located;
use bernstein_skills::target::Switch;
use bernstein_skills::{Diagnostic, Layer, Result, Skills, output::render};

use crate::output::{self, Column};
use bernstein_skills::Context;

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
/// resolved once (on the thread pool `validate` uses) for its description,
/// switch and digest ([`bernstein_skills::report::list`]).
fn json(ctx: &Context) -> Result<ExitCode> {
    let skills = &crate::global::skills(ctx)?;
    crate::global::warn_no_layers(skills.layers());
    let doc = bernstein_skills::report::list(skills, bernstein_skills::par::default_jobs())?;
    output::print(&render::to_json(&doc));
    Ok(ExitCode::SUCCESS)
}

pub fn run(args: ListArgs, ctx: &Context) -> Result<ExitCode> {
    if args.json {
        return json(ctx);
    }
    if args.layered {
        return layered(ctx);
    }
    plain(ctx)
}

/// `list --layered`: a table of which layers hold each skill, then the
/// layers' places.
fn layered(ctx: &Context) -> Result<ExitCode> {
    let layers = crate::global::layers(ctx)?;
    crate::global::warn_no_layers(&layers);
    let names = layers.names()?;
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
    out.push_str(&crate::global::places(&layers));
    output::print(&out);
    Ok(ExitCode::SUCCESS)
}

/// What the plain list shows of one skill.
struct Listed {
    name: String,
    /// Its effective description (empty when it has none or does not
    /// resolve).
    description: String,
    /// Its switch, and whether no lower layer defines it (an orphan, not
    /// exported); `None` when it does not resolve.
    switch: Option<(Switch, bool)>,
    /// It does not resolve.
    invalid: bool,
    /// The warning that it looks like a misspelt override.
    near: Option<Diagnostic>,
}

/// `list`: the names with their effective descriptions, and their state
/// when some skill is switched off or not exported.
fn plain(ctx: &Context) -> Result<ExitCode> {
    let skills = &crate::global::skills(ctx)?;
    let layers = skills.layers();
    crate::global::warn_no_layers(layers);
    let catalog = layers.catalog()?;
    let items = listed(skills, &catalog);
    crate::output::warn_diagnostics(
        &items
            .iter()
            .filter_map(|i| i.near.clone())
            .collect::<Vec<_>>(),
    );
    if catalog.is_empty() {
        output::print(&nothing_found(layers));
        return Ok(ExitCode::SUCCESS);
    }
    print_table(&plain_rows(skills, &items), &[Column::Whole, Column::Text]);
    Ok(ExitCode::SUCCESS)
}

/// Each skill of `catalog`, checked as `show` would and merged only for
/// what is printed, on the thread pool `validate` uses.
fn listed(skills: &Skills, catalog: &[(String, Vec<Located>)]) -> Vec<Listed> {
    let spec = skills.spec();
    let printed = |f: &bernstein_skills::spec::Field| {
        f.name == DESCRIPTION
            || spec.enabled_field.as_deref() == Some(f.name.as_str())
            || spec.targets_field.as_deref() == Some(f.name.as_str())
    };
    bernstein_skills::par::map(
        catalog,
        bernstein_skills::par::default_jobs(),
        |(name, located)| {
            // Only a skill no base file provides can be an orphan: it
            // alone is merged whole, to tell.
            let whole = !located.iter().any(|l| l.layer == Layer::Base);
            let resolved = if whole {
                skills.resolve_located(name, located)
            } else {
                skills.resolve_fields(name, located, &printed)
            };
            let Ok(r) = resolved else {
                return Listed {
                    name: name.clone(),
                    description: String::new(),
                    switch: None,
                    invalid: true,
                    near: None,
                };
            };
            let sw = bernstein_skills::target::switch(spec, r.effective());
            let description = match description(r.effective()) {
                Value::String(s) => s,
                Value::Null => String::new(),
                v => v.to_string(),
            };
            let orphan = whole && skills.is_orphan(&r);
            Listed {
                name: name.clone(),
                description,
                switch: Some((sw, orphan)),
                invalid: false,
                // A misspelt override is listed, and said.
                near: whole.then(|| skills.misnamed_skill(&r)).flatten(),
            }
        },
    )
}

/// The plain list's table: each skill's name, the first line of its
/// description, and a STATE column when some skill is switched off, or is
/// not exported for want of a lower layer that defines it.
fn plain_rows(skills: &Skills, items: &[Listed]) -> Vec<Vec<String>> {
    let any_off = items.iter().any(|i| {
        i.switch
            .as_ref()
            .is_some_and(|(s, orphan)| *orphan || !s.enabled || !s.off_for.is_empty())
    });
    let mut header = vec!["NAME".to_string()];
    if any_off {
        header.push("STATE".into());
    }
    header.push("DESCRIPTION".into());
    let mut rows = vec![header];
    for i in items {
        let d = if i.invalid {
            "(invalid: run `bernstein skills validate`)".into()
        } else {
            i.description.lines().next().unwrap_or("").to_string()
        };
        let mut row = vec![bernstein_skills::layer::shown(&i.name).into_owned()];
        if any_off {
            row.push(
                i.switch
                    .as_ref()
                    .map(|(s, orphan)| {
                        if *orphan && skills.layers().removed_upstream(&i.name).is_some() {
                            "not exported: upstream removed it".to_owned()
                        } else if *orphan {
                            "not exported: no lower layer defines it".to_owned()
                        } else {
                            state(s)
                        }
                    })
                    .unwrap_or_default(),
            );
        }
        row.push(bernstein_skills::text::escape(&d).into_owned());
        rows.push(row);
    }
    rows
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
        out.push_str(&format!("  {}\n", d.describe()));
    }
    out
}
