//! The README's command reference shows real output: each block that is
//! shown whole is what the command prints on the bundled demo layers today.

use std::path::Path;

use assert_cmd::Command;

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

/// `bernstein skills --layers-root examples/layers ARGS` run from the
/// repository root, as the README's `$R` examples are.
fn demo(args: &[&str]) -> String {
    let out = Command::cargo_bin("bernstein")
        .unwrap()
        .env_clear()
        .env("CARGO_MANIFEST_DIR", env!("CARGO_MANIFEST_DIR"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["skills", "--layers-root", "examples/layers"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn readme_shows_the_real_output_of_the_demo_commands() {
    let readme = readme();
    for args in [
        &["list"][..],
        &["list", "--layered"],
        &["explain", "writer", "metadata.limits.max_tokens"],
    ] {
        let block = format!("$ bernstein skills $R {}\n{}", args.join(" "), demo(args));
        assert!(
            readme.contains(&block),
            "README.md does not show this output:\n{block}"
        );
    }
}

#[test]
fn readme_quickstart_commands_are_the_ones_ci_runs() {
    let readme = readme();
    assert!(readme.contains(
        "cargo run --release -- skills --layers-root examples/layers show writer --per-layer\ncargo test\n"
    ));
    let ci =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/run")).unwrap();
    assert!(
        ci.contains("\ncargo test\n"),
        ".ci/run must run the README's test command"
    );
    assert!(ci.contains("skills --layers-root examples/layers show writer --per-layer"));
}
