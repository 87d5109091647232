//! The library's pipeline, end to end, over the bundled example layers:
//! load the shipped spec, check every fragment, merge one skill, print its
//! JSON, say where each value came from, and write it as a `SKILL.md`.
//!
//! ```text
//! cargo run --example library [SKILL]
//! ```
//!
//! Run from the checkout: it reads `spec/mergespec.yaml` and the layers
//! under `examples/layers/`.

use std::path::Path;
use std::process::ExitCode;

use bernstein_skills::fragment::DEFAULT_MAX_BYTES;
use bernstein_skills::output::{explain, render, skillmd};
use bernstein_skills::{Layers, MergeSpec, Skills};

fn main() -> ExitCode {
    let name = std::env::args().nth(1).unwrap_or_else(|| "writer".into());
    match run(&name) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(name: &str) -> bernstein_skills::Result<()> {
    // 1. The merge spec is data, read at run time.
    let spec = MergeSpec::load(Path::new("spec/mergespec.yaml"))?;
    // 2. Three layer directories below one root (`base/`, `team/`, `user/`);
    //    `Layers::discover(&Env::from_process())` finds the XDG ones instead.
    let layers = Layers::from_root(Path::new("examples/layers"));
    let skills = Skills::new(spec, layers, DEFAULT_MAX_BYTES);

    // 3. Every fragment of every skill, checked against the schema the spec
    //    generates, as `bernstein skills validate` does.
    let report = skills.validate(None, 1);
    println!(
        "checked {} skills in {} files: {} errors, {} warnings",
        report.skills,
        report.files,
        report.errors(),
        report.warnings()
    );
    for d in &report.diagnostics {
        println!("  {d}");
    }

    // 4. One skill merged: its fragments, base first, then the effective
    //    skill with provenance for every value.
    let resolved = skills.resolve(name)?;
    let effective = resolved.effective();
    print!("{}", render::to_json(&effective.to_value()));

    // 5. Where each value a layer set came from, and what it replaced.
    for row in explain::explain(skills.spec(), &resolved) {
        let Some(place) = &row.place else { continue };
        let line = place.line.map_or(String::new(), |l| format!(":{l}"));
        println!(
            "{:<28} {:<14} {}{line} (replaced {})",
            row.path,
            row.kind.name(),
            place.file,
            row.replaced.len()
        );
    }

    // 6. The same skill as an agent reads it.
    print!("{}", skillmd::render(skills.spec(), effective));
    Ok(())
}
