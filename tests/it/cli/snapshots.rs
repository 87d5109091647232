//! The whole output of each command on the bundled example layers
//! (`examples/layers/`, copied into a sandbox and named `--layers-root
//! layers` from there, so that every path reads `layers/...` and tables
//! aligned on paths are as wide on any machine), pinned by a snapshot file
//! per case in
//! `tests/snapshots/`, named after the case: `.txt` or `.json` for stdout,
//! `.stderr` for stderr. `SNAPSHOTS=overwrite cargo test --test main --
//! snapshots::` rewrites the files that differ; review the diff before
//! committing.
//!
//! The binary runs with an empty environment (no `COLUMNS`, no colour
//! variables) and its stdout in a pipe, so tables are neither fitted nor
//! coloured; the shipped spec's path is redacted as `[REPO]`.

use crate::it::support::{Run, Sandbox, assert_snapshot, snapshot_file};

/// The sandbox over a copy of `examples/layers/`.
fn layers() -> Sandbox {
    Sandbox::new().with_example("layers")
}

/// Runs `args` on the example layers; checks it succeeded with nothing on
/// stderr and that stdout is the snapshot `name`.
fn pin_ok(args: &[&str], name: &str) -> Sandbox {
    let sb = layers();
    let run = sb.run_relative(args);
    assert_snapshot(run.ok(), snapshot_file(name));
    sb
}

/// Checks that `run` failed (exit 1, stdout empty) and that its stderr is
/// the snapshot `name`.
#[track_caller]
fn pin_failed(run: &Run, name: &str) {
    assert_snapshot(run.failed(), snapshot_file(name));
}

#[test]
fn list() {
    pin_ok(&["list"], "list.txt");
}

#[test]
fn list_layered() {
    pin_ok(&["list", "--layered"], "list-layered.txt");
}

#[test]
fn list_json() {
    pin_ok(&["list", "--json"], "list.json");
}

#[test]
fn list_layered_json() {
    pin_ok(&["list", "--layered", "--json"], "list-layered.json");
}

#[test]
fn show_writer() {
    pin_ok(&["show", "writer"], "show-writer.json");
}

#[test]
fn show_writer_json() {
    // The skill itself is always JSON: --json changes nothing here.
    pin_ok(&["show", "writer", "--json"], "show-writer.json");
}

#[test]
fn show_writer_files() {
    pin_ok(&["show", "writer", "--files"], "show-writer-files.txt");
}

#[test]
fn show_writer_per_layer() {
    pin_ok(
        &["show", "writer", "--per-layer"],
        "show-writer-per-layer.txt",
    );
}

#[test]
fn show_writer_per_layer_json() {
    pin_ok(
        &["show", "writer", "--per-layer", "--json"],
        "show-writer-per-layer.json",
    );
}

#[test]
fn show_writer_origins() {
    pin_ok(&["show", "writer", "--origins"], "show-writer-origins.txt");
}

#[test]
fn explain_writer() {
    pin_ok(&["explain", "writer"], "explain-writer.txt");
}

#[test]
fn explain_writer_one_field() {
    pin_ok(
        &["explain", "writer", "description"],
        "explain-writer-description.txt",
    );
}

#[test]
fn explain_writer_json() {
    pin_ok(&["explain", "writer", "--json"], "explain-writer.json");
}

#[test]
fn validate() {
    pin_ok(&["validate"], "validate.txt");
}

#[test]
fn validate_json() {
    pin_ok(&["validate", "--json"], "validate.json");
}

#[test]
fn export() {
    let sb = layers();
    let run = sb.run_relative(&["export", "--out", "out"]);
    assert_snapshot(run.ok(), snapshot_file("export.txt"));
    // The manifests are `show`'s output, pinned above for writer.
    assert_snapshot(
        std::fs::read_to_string(sb.path().join("out/writer.json")).unwrap(),
        snapshot_file("show-writer.json"),
    );
}

#[test]
fn export_check_clean() {
    let sb = layers();
    sb.run_relative(&["export", "--out", "out"]).ok();
    let run = sb.run_relative(&["export", "--check", "out"]);
    assert_snapshot(run.ok(), snapshot_file("export-check-clean.txt"));
}

#[test]
fn export_check_drift() {
    let sb = layers();
    sb.run_relative(&["export", "--out", "out"]).ok();
    // One skill changed, one added, one removed.
    sb.write(
        "team",
        "writer.yaml",
        "description: team description, edited\n",
    );
    sb.write(
        "base",
        "added.yaml",
        "description: Added after the export.\n",
    );
    std::fs::remove_file(sb.layer("base").join("reviewer.yaml")).unwrap();
    let run = sb.run_relative(&["export", "--check", "out"]);
    assert_snapshot(run.failed_report(), snapshot_file("export-check-drift.txt"));
}

#[test]
fn spec() {
    pin_ok(&["spec"], "spec.txt");
}

#[test]
fn spec_json() {
    pin_ok(&["spec", "--json"], "spec.json");
}

#[test]
fn spec_impact_against_the_classic_spec() {
    // Every skill gains the fields the classic spec lacks: exit 1.
    let sb = layers();
    let classic = crate::it::support::classic_spec_path();
    let run = sb.run_relative(&["spec", "impact", "--against", classic.to_str().unwrap()]);
    assert_snapshot(run.failed_report(), snapshot_file("spec-impact.txt"));
}

#[test]
fn targets() {
    pin_ok(&["targets"], "targets.txt");
}

#[test]
fn error_yaml_syntax() {
    let sb = layers();
    sb.write("team", "writer.yaml", "description: [unclosed\n");
    pin_failed(
        &sb.run_relative(&["show", "writer"]),
        "error-yaml-syntax.stderr",
    );
}

#[test]
fn error_unknown_field() {
    let sb = layers();
    sb.write("team", "writer.yaml", "descripton: typo\n");
    pin_failed(
        &sb.run_relative(&["show", "writer"]),
        "error-unknown-field.stderr",
    );
}

#[test]
fn error_wrong_type() {
    let sb = layers();
    sb.write("team", "writer.yaml", "trigger_keywords: not-a-list\n");
    pin_failed(
        &sb.run_relative(&["show", "writer"]),
        "error-wrong-type.stderr",
    );
}

#[test]
fn error_bad_spec() {
    let sb = Sandbox::with_spec("version: 2\nfields: [oops\n").with_example("layers");
    pin_failed(&sb.run_relative(&["list"]), "error-bad-spec.stderr");
}

#[test]
fn error_unknown_skill() {
    let sb = layers();
    pin_failed(
        &sb.run_relative(&["show", "writr"]),
        "error-unknown-skill.stderr",
    );
}

#[test]
fn error_unknown_skill_json() {
    // Under --json the error is JSON on stdout, and the exit code 1.
    let sb = layers();
    let run = sb.run_relative(&["show", "writr", "--json"]);
    assert_snapshot(
        run.failed_report(),
        snapshot_file("error-unknown-skill.json"),
    );
}

#[test]
fn error_unknown_field_path() {
    let sb = layers();
    pin_failed(
        &sb.run_relative(&["explain", "writer", "metadata.nope"]),
        "error-unknown-field-path.stderr",
    );
}
