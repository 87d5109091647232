//! The installed binary stands alone (issue 14): copied away from the source
//! tree it never reads the build machine's files, says where it looked for a
//! spec and how to install one, and `skills spec --install` sets it up.
//! Installed with its data (a wheel: `PREFIX/bin/bernstein` and
//! `PREFIX/share/bernstein/skills/`) it needs no step at all, and a
//! user-installed spec that is not the one it ships is a warning.
//! `show` of several names pays start-up once.

use std::path::PathBuf;

use assert_cmd::Command;

use crate::it::support::{Sandbox, assert_snapshot, snapshot_file};

/// The test binary copied into the sandbox, as `cargo install` or a release
/// download would place it: outside the source tree it was built from.
fn copied_binary(sb: &Sandbox) -> PathBuf {
    let built = crate::it::support::bin();
    let to = sb.path().join("bin/bernstein");
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(&built, &to).unwrap();
    to
}

fn run(sb: &Sandbox, bin: &PathBuf, args: &[&str]) -> crate::it::support::Run {
    let mut cmd = Command::new(bin);
    cmd.env_clear()
        .env("HOME", sb.path().join("home"))
        .current_dir(sb.path())
        .args(args);
    sb.run_cmd(cmd)
}

#[test]
fn a_copied_binary_without_a_spec_lists_where_it_looked_then_installs_one() {
    let sb = Sandbox::new();
    sb.write("base", "writer.yaml", "description: Writes.\n");
    std::fs::create_dir_all(sb.path().join("home")).unwrap();
    let bin = copied_binary(&sb);
    let show = ["skills", "--layers-root", "layers", "show", "writer"];

    let err = run(&sb, &bin, &show).failed().to_owned();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(
        err,
        "error: no merge spec found; searched --spec (not given), $BERNSTEIN_SKILLS_SPEC (not set), \
         [ROOT]/home/.local/share/bernstein/skills/mergespec.yaml (no such file), \
         [ROOT]/share/bernstein/skills/mergespec.yaml (beside the binary: no such file); \
         run 'bernstein skills spec --install', or set BERNSTEIN_SKILLS_SPEC\n"
    );
    assert!(!err.contains(env!("CARGO_MANIFEST_DIR")), "{err}");

    let out = run(&sb, &bin, &["skills", "spec", "--install"]);
    assert_eq!(
        out.ok(),
        "installed the shipped merge spec to [ROOT]/home/.local/share/bernstein/skills/mergespec.yaml, \
         and its targets to [ROOT]/home/.local/share/bernstein/skills/targets\n"
    );
    // The targets came with it.
    let targets = run(&sb, &bin, &["skills", "targets"]);
    assert_snapshot(
        targets.ok(),
        snapshot_file("standalone-installed-targets.txt"),
    );
    let checked = run(
        &sb,
        &bin,
        &[
            "skills",
            "--layers-root",
            "layers",
            "validate",
            "--target",
            "agent-skills",
        ],
    );
    assert_snapshot(
        checked.ok(),
        snapshot_file("standalone-installed-validate.txt"),
    );
    let installed = sb
        .path()
        .join("home/.local/share/bernstein/skills/mergespec.yaml");
    assert_eq!(
        std::fs::read(&installed).unwrap(),
        std::fs::read(crate::it::support::shipped_spec_path()).unwrap()
    );
    let v: serde_json::Value = serde_json::from_str(run(&sb, &bin, &show).ok()).unwrap();
    assert_eq!(v["description"], "Writes.");
    assert_snapshot(
        run(&sb, &bin, &["skills", "spec"]).ok(),
        snapshot_file("standalone-installed-spec.txt"),
    );

    // Again: nothing to do. A different installed spec is kept unless --force.
    assert_snapshot(
        run(&sb, &bin, &["skills", "spec", "--install"]).ok(),
        snapshot_file("standalone-install-again.txt"),
    );
    std::fs::write(&installed, "version: 1\nfields: {}\n").unwrap();
    let err = run(&sb, &bin, &["skills", "spec", "--install"])
        .failed()
        .to_owned();
    assert_snapshot(err, snapshot_file("standalone-install-over-another.stderr"));
    assert_eq!(
        std::fs::read_to_string(&installed).unwrap(),
        "version: 1\nfields: {}\n"
    );
    run(&sb, &bin, &["skills", "spec", "--install", "--force"]).ok();
    assert_eq!(
        std::fs::read(&installed).unwrap(),
        std::fs::read(crate::it::support::shipped_spec_path()).unwrap()
    );
}

/// The binary, spec and targets laid out in a prefix as `pip install` of
/// the wheel lays them out: `PREFIX/bin/bernstein`,
/// `PREFIX/share/bernstein/skills/{mergespec.yaml,targets/}`.
fn installed_prefix(sb: &Sandbox) -> PathBuf {
    let prefix = sb.path().join("prefix");
    let bin = prefix.join("bin/bernstein");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::copy(crate::it::support::bin(), &bin).unwrap();
    let share = prefix.join("share/bernstein/skills");
    std::fs::create_dir_all(share.join("targets")).unwrap();
    let spec_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("spec");
    std::fs::copy(
        spec_dir.join("mergespec.yaml"),
        share.join("mergespec.yaml"),
    )
    .unwrap();
    for entry in std::fs::read_dir(spec_dir.join("targets")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), share.join("targets").join(entry.file_name())).unwrap();
    }
    bin
}

#[test]
fn a_binary_installed_with_its_data_finds_the_spec_and_targets_beside_it() {
    let sb = Sandbox::new();
    sb.write("base", "writer.yaml", "description: Writes.\n");
    std::fs::create_dir_all(sb.path().join("home")).unwrap();
    let bin = installed_prefix(&sb);
    // Also through a symbolic link elsewhere on PATH (pipx and uv put one in
    // ~/.local/bin): the data is found beside the real binary.
    let link = sb.path().join("home/.local/bin/bernstein");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&bin, &link).unwrap();
    for bin in [&bin, &link] {
        // The same through the link as from the binary itself.
        let spec = run(&sb, bin, &["skills", "spec"]);
        assert_snapshot(spec.ok(), snapshot_file("standalone-prefix-spec.txt"));
        let targets = run(&sb, bin, &["skills", "targets", "agent-skills"]);
        assert_snapshot(
            targets.ok(),
            snapshot_file("standalone-prefix-targets-agent-skills.txt"),
        );
        let checked = run(
            &sb,
            bin,
            &[
                "skills",
                "--layers-root",
                "layers",
                "validate",
                "--target",
                "claude-code",
            ],
        );
        assert_snapshot(
            checked.ok(),
            snapshot_file("standalone-prefix-validate.txt"),
        );
        let v = run(
            &sb,
            bin,
            &["skills", "--layers-root", "layers", "show", "writer"],
        )
        .json();
        assert_eq!(v["description"], "Writes.");
    }

    // The targets beside the binary are found with a spec from elsewhere too.
    std::fs::copy(
        crate::it::support::shipped_spec_path(),
        sb.path().join("own.yaml"),
    )
    .unwrap();
    let targets = run(
        &sb,
        &bin,
        &["skills", "--spec", "own.yaml", "targets", "codex"],
    );
    assert_snapshot(
        targets.ok(),
        snapshot_file("standalone-own-spec-targets-codex.txt"),
    );
}

#[test]
fn a_user_installed_spec_that_is_not_the_shipped_one_is_one_warning_naming_the_fix() {
    let sb = Sandbox::new();
    sb.write("base", "writer.yaml", "description: Writes.\n");
    let bin = installed_prefix(&sb);
    let show = ["skills", "--layers-root", "layers", "show", "writer"];
    let validate = ["skills", "--layers-root", "layers", "validate"];
    let shipped = std::fs::read(crate::it::support::shipped_spec_path()).unwrap();
    let installed = sb
        .path()
        .join("home/.local/share/bernstein/skills/mergespec.yaml");
    std::fs::create_dir_all(installed.parent().unwrap()).unwrap();

    // The copy `spec --install` wrote, unchanged: it is used, silently.
    std::fs::write(&installed, &shipped).unwrap();
    let spec = run(&sb, &bin, &["skills", "spec"]);
    assert_snapshot(
        spec.ok(),
        snapshot_file("standalone-installed-copy-spec.txt"),
    );
    run(&sb, &bin, &show).json();

    // An earlier release's copy (or an edited one): still used, and said once.
    let mut older = shipped.clone();
    older.extend_from_slice(b"# an earlier release\n");
    std::fs::write(&installed, &older).unwrap();
    let warning = "[ROOT]/home/.local/share/bernstein/skills/mergespec.yaml: warning: \
                   the installed merge spec is not the one bernstein "
        .to_owned()
        + env!("CARGO_PKG_VERSION")
        + " ships (an earlier release's, or edited); update it with \
           'bernstein skills spec --install --force', or keep it as your own spec with \
           BERNSTEIN_SKILLS_SPEC=[ROOT]/home/.local/share/bernstein/skills/mergespec.yaml\n";
    for args in [&show[..], &validate, &["skills", "spec"]] {
        let out = run(&sb, &bin, args);
        out.success();
        assert_eq!(out.stderr, warning, "{args:?}");
    }

    // Named on purpose, the same file is the person's choice: no warning.
    let path = installed.display().to_string();
    run(
        &sb,
        &bin,
        &[
            "skills",
            "--spec",
            &path,
            "--layers-root",
            "layers",
            "show",
            "writer",
        ],
    )
    .json();
    let mut cmd = Command::new(&bin);
    cmd.env_clear()
        .env("HOME", sb.path().join("home"))
        .env("BERNSTEIN_SKILLS_SPEC", &installed)
        .current_dir(sb.path())
        .args(show);
    sb.run_cmd(cmd).json();

    // The fix the warning names.
    run(&sb, &bin, &["skills", "spec", "--install", "--force"]).ok();
    assert_eq!(std::fs::read(&installed).unwrap(), shipped);
    run(&sb, &bin, &show).json();
}

/// The wheel ships `spec/` as data (`pyproject.toml`: maturin's `data`
/// directory): its files there are links to `spec/`, the one copy people
/// edit, and must be every file of it, byte for byte. A new target needs
/// its link (`ln -s` as the others).
#[test]
fn the_wheel_data_is_the_spec_directory_file_for_file() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    fn files(dir: &std::path::Path, rel: &str, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir.join(rel)).unwrap() {
            let entry = entry.unwrap();
            let name = format!("{rel}{}", entry.file_name().to_str().unwrap());
            if entry.path().is_dir() {
                files(dir, &format!("{name}/"), out);
            } else {
                out.push(name);
            }
        }
        out.sort();
    }
    let (spec, data) = (
        root.join("spec"),
        root.join("wheel-data/data/share/bernstein/skills"),
    );
    let (mut in_spec, mut in_wheel) = (Vec::new(), Vec::new());
    files(&spec, "", &mut in_spec);
    files(&data, "", &mut in_wheel);
    assert_eq!(
        in_wheel, in_spec,
        "wheel-data/data/share/bernstein/skills/ must mirror spec/"
    );
    for rel in &in_spec {
        assert_eq!(
            std::fs::read(data.join(rel)).unwrap(),
            std::fs::read(spec.join(rel)).unwrap(),
            "wheel-data/.../{rel} differs from spec/{rel}"
        );
    }
    let pyproject = std::fs::read_to_string(root.join("pyproject.toml")).unwrap();
    assert!(
        pyproject.contains("\ndata = \"wheel-data\"\n"),
        "{pyproject}"
    );
}

#[test]
fn the_development_build_falls_back_to_its_source_tree() {
    // The test binary runs from the source tree's target directory.
    let sb = Sandbox::new();
    sb.write("base", "writer.yaml", "description: Writes.\n");
    let out = sb.run(&["spec"]);
    assert_snapshot(out.ok(), snapshot_file("standalone-development-spec.txt"));
}

#[test]
fn show_of_several_names_is_one_object_keyed_by_name() {
    let sb = Sandbox::new();
    sb.write("base", "writer.yaml", "description: Writes.\n");
    sb.write("base", "reviewer.yaml", "description: Reviews.\n");
    sb.write("team", "reviewer.yaml", "author: team\n");
    let out = sb.run(&["show", "writer", "reviewer", "writer"]);
    let text = out.ok().to_owned();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["reviewer", "writer"]);
    // Each value is exactly that skill's `show` JSON, indented one level.
    for name in ["reviewer", "writer"] {
        assert_eq!(
            bernstein_skills::output::render::to_json(&v[name]),
            sb.run(&["show", name]).ok()
        );
    }
    assert_snapshot(text, snapshot_file("standalone-show-several.json"));

    let out = sb.run(&["show", "writer", "nope", "x/y"]);
    assert_snapshot(
        out.failed(),
        snapshot_file("standalone-show-several-bad.stderr"),
    );

    let err = sb
        .run(&["show", "writer", "reviewer", "--origins"])
        .failed()
        .to_owned();
    assert_snapshot(err, snapshot_file("standalone-show-several-origins.stderr"));
}
