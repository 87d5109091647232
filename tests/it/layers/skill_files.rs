//! A skill's files are layered (issue 12 §3): every file under `NAME/` but
//! `SKILL.md` is part of the skill, a higher layer's file at the same path
//! replaces the lower one, a `NAME.yaml` override keeps the files, and only
//! regular files inside the layer count.

use crate::it::support::{Sandbox, assert_snapshot, snapshot_file};

fn layered() -> Sandbox {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "writer/SKILL.md",
        "---\ndescription: Writes.\n---\nBody.\n",
    );
    sb.write("base", "writer/references/style.md", "# Base style\n");
    sb.write("base", "writer/scripts/lint.sh", "#!/bin/sh\necho base\n");
    sb.write("team", "writer/SKILL.md", "---\ndescription: Team.\n---\n");
    sb.write(
        "team",
        "writer/references/style.md",
        "# Team style, longer\n",
    );
    sb.write("team", "writer/references/glossary.md", "terms\n");
    sb.write("user", "writer.yaml", "author: me\n");
    sb
}

#[test]
fn show_files_lists_each_path_with_the_layer_it_comes_from() {
    let sb = layered();
    let out = sb.run(&["show", "writer", "--files"]);
    let rows: Vec<Vec<&str>> = out
        .ok()
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        [
            vec!["PATH", "LAYER", "SOURCE", "REPLACES"],
            vec![
                "references/glossary.md",
                "team",
                "[ROOT]/layers/team/writer/references/glossary.md"
            ],
            vec![
                "references/style.md",
                "team",
                "[ROOT]/layers/team/writer/references/style.md",
                "base"
            ],
            vec![
                "scripts/lint.sh",
                "base",
                "[ROOT]/layers/base/writer/scripts/lint.sh"
            ],
            vec!["3", "file(s)"],
        ]
    );
    let v = sb.run(&["show", "writer", "--files", "--json"]).json();
    assert_eq!(v["skill"], "writer");
    assert_eq!(v["files"][1]["path"], "references/style.md");
    assert_eq!(v["files"][1]["layer"], "team");
    assert_eq!(v["files"][1]["size"], 21);
    assert_eq!(v["files"][1]["replaced"][0]["layer"], "base");
    assert_eq!(v["files"][1]["replaced"][0]["size"], 13);
    // The SKILL.md body merges as before.
    assert_eq!(sb.resolve_value("writer")["body"], "Body.");
}

#[test]
fn explain_shows_a_files_origin_and_what_it_replaced() {
    let sb = layered();
    // Relative layer paths: the columns are as wide on any machine.
    let out = sb.run_relative(&["explain", "writer", "references/style.md"]);
    assert_snapshot(out.ok(), snapshot_file("skill_files-explain-file.txt"));
    // A field path still selects only fields; a directory selects its files.
    let text = sb.run(&["explain", "writer", "references"]).ok().to_owned();
    assert!(!text.contains("style.md"), "{text}");
    let text = sb
        .run_relative(&["explain", "writer", "references/"])
        .ok()
        .to_owned();
    assert_snapshot(text, snapshot_file("skill_files-explain-directory.txt"));
}

#[test]
fn a_file_symlinked_out_of_its_layer_is_an_error_in_validate_and_explain() {
    let sb = layered();
    sb.write_file("secret", "TOKEN");
    std::os::unix::fs::symlink(
        sb.path().join("secret"),
        sb.layer("team").join("writer/references/leak.md"),
    )
    .unwrap();
    let out = sb.run(&["validate"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert!(!out.stdout.contains("TOKEN"));
    assert_snapshot(
        out.transcript(&["validate"]),
        snapshot_file("skill_files-symlink-out-validate.txt"),
    );
    let err = sb.run(&["show", "writer", "--files"]).failed().to_owned();
    assert_snapshot(
        err,
        snapshot_file("skill_files-symlink-out-show-files.stderr"),
    );
}

#[test]
fn show_without_files_does_not_walk_the_skill_directory() {
    // An unreadable-to-list directory only matters when files are asked for.
    let sb = layered();
    std::os::unix::fs::symlink("/proc/self/environ", sb.layer("base").join("writer/env")).unwrap();
    sb.run(&["show", "writer"]).ok();
    sb.run(&["show", "writer", "--files"]).failed();
}

#[test]
fn an_entry_naming_a_file_no_layer_provides_is_a_located_warning() {
    let sb = layered();
    // base provides references/style.md; the team names it and a missing one.
    sb.write(
        "team",
        "writer.toml",
        "references = [\"style.md\", \"missing.md\"]\nscripts = [\"deploy.sh\"]\n",
    );
    std::fs::remove_dir_all(sb.layer("team").join("writer")).unwrap();
    let out = sb.run(&["validate"]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert!(!out.stdout.contains("style.md"), "{out:#?}");
    assert_snapshot(
        out.transcript(&["validate"]),
        snapshot_file("skill_files-named-files-missing.txt"),
    );
    assert_eq!(sb.run(&["validate", "--strict"]).code, Some(1));
    // A file present in any layer satisfies it, and a file no entry names is fine.
    sb.write("user", "writer/SKILL.md", "---\n---\n");
    sb.write("user", "writer/references/missing.md", "now here\n");
    sb.write("user", "writer/scripts/deploy.sh", "echo\n");
    std::fs::remove_file(sb.layer("user").join("writer.yaml")).unwrap();
    sb.run(&["validate", "--strict"]).ok();
}

#[test]
fn a_files_directory_leaving_the_skill_is_a_spec_error() {
    let sb = Sandbox::new();
    sb.write_file(
        "spec.yaml",
        "version: 1\nfields:\n  references: {strategy: KEYED_REPLACE, files: ../secrets}\n",
    );
    sb.write("base", "w.yaml", "references: [a]\n");
    let err = sb
        .run(&["--spec", "spec.yaml", "validate"])
        .failed()
        .to_owned();
    assert_snapshot(err, snapshot_file("skill_files-spec-files-outside.stderr"));
}
