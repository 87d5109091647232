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

/// The library takes the working directory from `Env` only: a relative
/// layer root and a relative output directory are found in the `Env`'s
/// working directory, not the process's.
#[test]
fn relative_paths_are_taken_from_the_env_working_directory() {
    use bernstein_skills::source::LayerFlags;
    use bernstein_skills::{Env, Layers, Skills};
    let sb = Sandbox::new();
    sb.write("base", "writer.yaml", "description: Writes.\n");
    let cwd = sb.path().canonicalize().unwrap();
    let env = Env {
        cwd: Some(cwd.clone()),
        ..Env::default()
    };
    let flags = LayerFlags {
        root: Some(sb.root().strip_prefix(sb.path()).unwrap().to_path_buf()),
        ..LayerFlags::default()
    };
    let layers = Layers::choose(&env, &flags);
    let skills = Skills::new(super::support::shipped_spec(), layers, 1 << 20);
    assert_eq!(skills.resolve("writer").unwrap().name(), "writer");
    let out = format!("out-{}", std::process::id());
    let done = skills.export(std::path::Path::new(&out), false, 1).unwrap();
    assert_eq!(done.written, ["writer"]);
    assert!(cwd.join(&out).join("writer.json").is_file());
    assert!(!std::path::Path::new(&out).exists());
}
