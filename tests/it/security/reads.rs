//! A hostile team layer, what is read (issue 11 §1): nothing outside the
//! layer directories or the manifests directory, no special or non-regular
//! file, everything bounded, and a refused file's content never printed.

use std::os::unix::fs::symlink;

use crate::it::support::{Run, Sandbox, assert_snapshot, snapshot_file};

const SECRET: &str = "ghp_TOPSECRETTOKEN0123456789";

/// A file outside the layers holding a secret, as a private key would be.
fn secret_file(sb: &Sandbox) -> std::path::PathBuf {
    sb.write_file(
        "outside/id_key",
        format!("description: {SECRET}\nbody: {SECRET}\n"),
    )
}

/// A base skill `writer`, so that an override has something to override.
fn with_base(sb: &Sandbox) {
    sb.write(
        "base",
        "writer.yaml",
        "description: Writes.\ntrigger_keywords: [a]\n",
    );
    std::fs::create_dir_all(sb.layer("team")).unwrap();
}

fn assert_no_secret(out: &Run) {
    assert!(
        !out.stdout.contains(SECRET) && !out.stderr.contains(SECRET),
        "the secret leaked: {out:#?}"
    );
}

#[test]
fn skill_md_symlinked_to_proc_self_environ_is_refused_and_never_printed() {
    let sb = Sandbox::new();
    with_base(&sb);
    std::fs::create_dir_all(sb.layer("team").join("writer")).unwrap();
    symlink(
        "/proc/self/environ",
        sb.layer("team").join("writer/SKILL.md"),
    )
    .unwrap();
    let mut runs = String::new();
    for args in [
        &["validate", "--strict"][..],
        &["show", "writer"],
        &["explain", "writer"],
    ] {
        let mut cmd = sb.skills_cmd(args);
        cmd.env("CI_TOKEN", SECRET);
        let out = sb.run_cmd(cmd);
        assert_eq!(out.code, Some(1), "{args:?}: {out:#?}");
        assert_no_secret(&out);
        runs.push_str(&out.transcript(args));
    }
    assert_snapshot(runs, snapshot_file("reads-skill-md-to-proc-environ.txt"));
}

#[test]
fn yaml_symlinked_outside_is_refused() {
    let sb = Sandbox::new();
    with_base(&sb);
    let secret = secret_file(&sb);
    symlink(&secret, sb.layer("team").join("writer.yaml")).unwrap();
    let out = sb.run(&["show", "writer"]);
    assert_no_secret(&out);
    assert_snapshot(
        out.failed(),
        snapshot_file("reads-yaml-symlinked-outside.stderr"),
    );
    let out = sb.run(&["validate", "--strict"]);
    assert_eq!(out.code, Some(1));
    assert_no_secret(&out);
}

#[test]
fn a_skill_directory_symlinked_outside_is_refused() {
    let sb = Sandbox::new();
    with_base(&sb);
    sb.write_file(
        "elsewhere/SKILL.md",
        format!("---\ndescription: x\n---\n{SECRET}\n"),
    );
    symlink(sb.path().join("elsewhere"), sb.layer("team").join("writer")).unwrap();
    let out = sb.run(&["show", "writer"]);
    assert_no_secret(&out);
    assert_snapshot(
        out.failed(),
        snapshot_file("reads-skill-directory-symlinked-outside.stderr"),
    );
}

#[test]
fn a_symlink_that_stays_inside_its_layer_is_followed() {
    let sb = Sandbox::new();
    with_base(&sb);
    sb.write("team", "shared/writer.yaml", "description: Shared.\n");
    symlink("shared/writer.yaml", sb.layer("team").join("writer.yaml")).unwrap();
    // And a layer directory that is itself a symlink is fine.
    symlink(sb.layer("team"), sb.path().join("team-link")).unwrap();
    assert_eq!(sb.resolve_value("writer")["description"], "Shared.");
}

#[test]
fn a_symlink_into_another_layer_is_refused() {
    // Each layer is its own root: the team layer cannot borrow the user's files.
    let sb = Sandbox::new();
    with_base(&sb);
    sb.write("user", "private.yaml", format!("description: {SECRET}\n"));
    symlink(
        sb.layer("user").join("private.yaml"),
        sb.layer("team").join("writer.yaml"),
    )
    .unwrap();
    let out = sb.run(&["show", "writer"]);
    out.failed();
    assert_no_secret(&out);
}

#[test]
fn fifos_and_devices_are_refused_without_hanging() {
    let sb = Sandbox::new();
    with_base(&sb);
    let fifo = sb.layer("team").join("writer.yaml");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    assert_snapshot(
        sb.run(&["show", "writer"]).failed(),
        snapshot_file("reads-fifo-show.stderr"),
    );
    let out = sb.run(&["validate"]);
    assert_eq!(out.code, Some(1));
    assert_eq!(out.stderr, "", "{out:#?}");
    assert_snapshot(&out.stdout, snapshot_file("reads-fifo-validate.txt"));
    std::fs::remove_file(&fifo).unwrap();
    symlink("/dev/zero", &fifo).unwrap();
    assert_snapshot(
        sb.run(&["show", "writer"]).failed(),
        snapshot_file("reads-dev-zero-show.stderr"),
    );
}

#[test]
fn a_committed_manifest_symlinked_to_a_key_is_refused_not_diffed() {
    let sb = Sandbox::new();
    with_base(&sb);
    let secret = secret_file(&sb);
    std::fs::create_dir_all(sb.path().join("manifests")).unwrap();
    symlink(&secret, sb.path().join("manifests/writer.json")).unwrap();
    let out = sb.run(&["export", "--check", "manifests"]);
    assert_no_secret(&out);
    assert_snapshot(
        out.failed_report(),
        snapshot_file("reads-manifest-symlink-unmanaged.txt"),
    );
    // Listed in a record as a manifest export wrote, it is still never read.
    std::fs::remove_file(sb.path().join("manifests/writer.json")).unwrap();
    sb.run(&["export", "--out", "manifests"]).ok();
    std::fs::remove_file(sb.path().join("manifests/writer.json")).unwrap();
    symlink(&secret, sb.path().join("manifests/writer.json")).unwrap();
    // --check names the link; forced, export replaces it.
    let mut runs = String::new();
    for args in [
        &["export", "--check", "manifests"][..],
        &["export", "--out", "manifests", "--force"],
    ] {
        let out = sb.run(args);
        assert_no_secret(&out);
        runs.push_str(&out.transcript(args));
    }
    assert_snapshot(runs, snapshot_file("reads-manifest-symlink-managed.txt"));
    assert_eq!(
        std::fs::read_to_string(&secret).unwrap(),
        format!("description: {SECRET}\nbody: {SECRET}\n")
    );
    assert!(
        !std::fs::symlink_metadata(sb.path().join("manifests/writer.json"))
            .unwrap()
            .file_type()
            .is_symlink(),
        "forced, the link itself was replaced"
    );
}

#[test]
fn export_check_diffs_quote_only_short_excerpts() {
    // Even a value from inside the layers is never dumped whole by a diff.
    let sb = Sandbox::new();
    sb.write("base", "writer.yaml", "description: d\nauthor: old\n");
    sb.run(&["export", "--out", "manifests"]).ok();
    let long = "k".repeat(5000);
    sb.write(
        "base",
        "writer.yaml",
        format!("description: d\nauthor: {long}\n"),
    );
    let out = sb.run(&["export", "--check", "manifests"]);
    assert_snapshot(
        out.failed_report(),
        snapshot_file("reads-check-long-value.txt"),
    );
    for line in out.stdout.lines() {
        assert!(line.chars().count() <= 140, "a long line: {line}");
    }
}

#[test]
fn the_spec_is_read_bounded_and_never_from_a_special_file() {
    let sb = Sandbox::new();
    with_base(&sb);
    symlink("/dev/zero", sb.path().join("zero.yaml")).unwrap();
    assert_snapshot(
        sb.run(&["--spec", "zero.yaml", "show", "writer"]).failed(),
        snapshot_file("reads-spec-dev-zero.stderr"),
    );

    let fifo = sb.path().join("fifo.yaml");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    assert_snapshot(
        sb.run(&["--spec", "fifo.yaml", "show", "writer"]).failed(),
        snapshot_file("reads-spec-fifo.stderr"),
    );

    let mut big = String::from("version: 1\nfields:\n");
    while big.len() <= 1024 * 1024 {
        big.push_str(&format!("  f{}: {{strategy: OVERRIDE}}\n", big.len()));
    }
    sb.write_file("big.yaml", &big);
    assert_snapshot(
        sb.run(&["--spec", "big.yaml", "show", "writer"]).failed(),
        snapshot_file("reads-spec-too-big.stderr"),
    );
}

#[test]
fn export_check_refuses_a_manifests_directory_that_is_a_symlink() {
    let sb = Sandbox::new();
    with_base(&sb);
    sb.write_file("outside/writer.json", format!("{SECRET}\n"));
    symlink(sb.path().join("outside"), sb.path().join("manifests")).unwrap();
    let out = sb.run(&["export", "--check", "manifests"]);
    assert_no_secret(&out);
    assert_snapshot(
        out.failed(),
        snapshot_file("reads-check-symlinked-manifests-directory.stderr"),
    );
}
