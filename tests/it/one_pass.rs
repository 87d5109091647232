//! One pass per command (issue 29): a resolved skill is an owned result
//! that outlives the loaded layers, and holds the one merge every later
//! step uses.

use super::support::Sandbox;

/// Resolved skills are kept after the `Skills` that read them is gone (a
/// long-running caller, a Python binding), and moved to another thread.
#[test]
fn a_resolved_skill_outlives_the_layers_it_was_read_from() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "writer.yaml",
        "description: Writes.\ntrigger_keywords: [w]\n",
    );
    sb.write("user", "writer.toml", "description = \"Writes well.\"\n");
    let resolved = {
        let skills = sb.skills();
        skills.resolve("writer").expect("writer resolves")
    };
    let resolved = std::thread::spawn(move || resolved).join().unwrap();
    assert_eq!(resolved.name(), "writer");
    assert_eq!(resolved.fragments().len(), 2);
    assert_eq!(
        resolved.effective().to_value()["description"],
        "Writes well."
    );
    assert_eq!(
        sb.resolve_json("writer"),
        bernstein_skills::output::render::to_json(&resolved.effective().to_value())
    );
}

/// The merge is made once: every call gives the very same result.
#[test]
fn the_effective_skill_is_merged_once_per_resolution() {
    let sb = Sandbox::new();
    sb.write("base", "writer.yaml", "description: Writes.\n");
    let skills = sb.skills();
    let resolved = skills.resolve("writer").unwrap();
    assert!(std::ptr::eq(resolved.effective(), resolved.effective()));
}
