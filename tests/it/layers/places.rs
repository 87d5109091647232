//! Where each layer lives: its flag (`--base`, `--team`, `--user`), its
//! variable (`BERNSTEIN_SKILLS_*`), the project-local `.bernstein/skills/`
//! found from the working directory up to the git work tree's root, then the
//! XDG directories — in that order, each layer on its own. And what a layer
//! directory may hold besides a whole skill: only files, or a lowercase
//! `skill.md`.

use assert_cmd::Command;
use std::path::PathBuf;

use crate::it::support::{Run, Sandbox, assert_snapshot, create_file, snapshot_file};

/// A sandbox with a base layer defining `s` under `XDG_DATA_HOME`, a team
/// and a user layer under `XDG_CONFIG_HOME`, and a git work tree `repo/`
/// (with `repo/sub/dir/` inside it).
fn world() -> Sandbox {
    let sb = Sandbox::new();
    let p = sb.path();
    create_file(
        &p.join("data/bernstein/skills/base/s.yaml"),
        "description: base\nauthor: base\n",
    );
    create_file(
        &p.join("config/bernstein/skills/team/s.yaml"),
        "description: xdg team\n",
    );
    create_file(
        &p.join("config/bernstein/skills/user/s.yaml"),
        "trigger_keywords: [xdg-user]\n",
    );
    std::fs::create_dir_all(p.join("repo/.git")).unwrap();
    std::fs::create_dir_all(p.join("repo/sub/dir")).unwrap();
    sb
}

/// `bernstein skills ARGS` in `cwd` (relative to the sandbox) with the XDG
/// variables of [`world`] and `vars`.
fn cmd_in(sb: &Sandbox, cwd: &str, vars: &[(&str, PathBuf)], args: &[&str]) -> Command {
    let mut cmd = sb.bare();
    cmd.current_dir(sb.path().join(cwd))
        .env("XDG_DATA_HOME", sb.path().join("data"))
        .env("XDG_CONFIG_HOME", sb.path().join("config"));
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.arg("skills").args(args);
    cmd
}

fn run_in(sb: &Sandbox, cwd: &str, vars: &[(&str, PathBuf)], args: &[&str]) -> Run {
    sb.run_cmd(cmd_in(sb, cwd, vars, args))
}

fn description(sb: &Sandbox, cwd: &str, vars: &[(&str, PathBuf)], args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.extend(["show", "s"]);
    run_in(sb, cwd, vars, &all).json()["description"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn each_layer_has_its_own_flag_and_the_others_stay_where_they_were() {
    let sb = world();
    let team = create_file(
        &sb.path().join("elsewhere/s.yaml"),
        "description: flag team\n",
    );
    let team = team.parent().unwrap().to_str().unwrap().to_owned();
    let v = run_in(&sb, ".", &[], &["--team", &team, "show", "s"]).json();
    assert_eq!(v["description"], "flag team");
    // The personal layer did not move with it.
    assert_eq!(v["trigger_keywords"], serde_json::json!(["xdg-user"]));
    assert_eq!(v["author"], "base");
    // --base and --user likewise.
    let base = create_file(&sb.path().join("b/s.yaml"), "author: flag base\n");
    let user = create_file(
        &sb.path().join("u/s.yaml"),
        "trigger_keywords: [flag-user]\n",
    );
    let v = run_in(
        &sb,
        ".",
        &[],
        &[
            "--base",
            base.parent().unwrap().to_str().unwrap(),
            "--user",
            user.parent().unwrap().to_str().unwrap(),
            "show",
            "s",
        ],
    )
    .json();
    assert_eq!(v["author"], "flag base");
    assert_eq!(v["description"], "xdg team");
    assert_eq!(v["trigger_keywords"], serde_json::json!(["flag-user"]));
}

#[test]
fn flag_beats_variable_beats_project_local_beats_xdg() {
    let sb = world();
    let p = sb.path();
    assert_eq!(description(&sb, "repo", &[], &[]), "xdg team");
    create_file(
        &p.join("repo/.bernstein/skills/s.yaml"),
        "description: project team\n",
    );
    assert_eq!(description(&sb, "repo", &[], &[]), "project team");
    let var = create_file(&p.join("var/s.yaml"), "description: variable team\n");
    let var = [("BERNSTEIN_SKILLS_TEAM", var.parent().unwrap().to_owned())];
    assert_eq!(description(&sb, "repo", &var, &[]), "variable team");
    let flag = create_file(&p.join("flag/s.yaml"), "description: flag team\n");
    let flag = flag.parent().unwrap().to_str().unwrap().to_owned();
    assert_eq!(
        description(&sb, "repo", &var, &["--team", &flag]),
        "flag team"
    );
    // An empty variable counts as unset.
    let empty = [("BERNSTEIN_SKILLS_TEAM", PathBuf::new())];
    assert_eq!(description(&sb, "repo", &empty, &[]), "project team");
}

#[test]
fn the_project_local_layer_is_found_up_to_the_work_tree_root_and_no_further() {
    let sb = world();
    let p = sb.path();
    create_file(
        &p.join("repo/.bernstein/skills/s.yaml"),
        "description: project team\n",
    );
    // From deep inside the work tree.
    assert_eq!(description(&sb, "repo/sub/dir", &[], &[]), "project team");
    // The nearest one wins.
    create_file(
        &p.join("repo/sub/.bernstein/skills/s.yaml"),
        "description: nearer team\n",
    );
    assert_eq!(description(&sb, "repo/sub/dir", &[], &[]), "nearer team");
    // A nested repository is a boundary: the outer project's layer is not
    // its layer.
    std::fs::create_dir_all(p.join("repo/sub/dir/inner/.git")).unwrap();
    assert_eq!(description(&sb, "repo/sub/dir/inner", &[], &[]), "xdg team");
    // Outside a work tree only the working directory itself counts: a
    // `.bernstein` in a parent of a plain directory is not looked at.
    create_file(
        &p.join("plain/.bernstein/skills/s.yaml"),
        "description: plain team\n",
    );
    std::fs::create_dir_all(p.join("plain/child")).unwrap();
    assert_eq!(description(&sb, "plain", &[], &[]), "plain team");
    assert_eq!(description(&sb, "plain/child", &[], &[]), "xdg team");
}

#[test]
fn list_validate_and_explain_say_where_each_layer_came_from_and_why() {
    let sb = world();
    let p = sb.path();
    create_file(
        &p.join("repo/.bernstein/skills/s.yaml"),
        "description: project team\n",
    );
    let user = create_file(&p.join("u/s.yaml"), "author: me\n");
    let vars = [("BERNSTEIN_SKILLS_USER", user.parent().unwrap().to_owned())];
    // Each ends (validate: starts) with the three places and their reasons.
    // The explain table's first column is as wide as the sandbox's path,
    // which differs between machines: `...` in the snapshot stands for it.
    let mut runs = String::new();
    for args in [&["list", "--layered"][..], &["validate"], &["explain", "s"]] {
        let run = run_in(&sb, "repo/sub", &vars, args);
        run.ok();
        runs.push_str(&run.transcript(args));
    }
    assert_snapshot(runs, snapshot_file("places-each-layer-says-why.txt"));
    // A layer that is not there says so, and the default says why it is the
    // default.
    create_file(
        &p.join("home/.local/share/bernstein/skills/base/s.yaml"),
        "author: a\n",
    );
    let mut cmd = sb.bare();
    cmd.current_dir(p).args(["skills", "validate"]);
    let run = sb.run_cmd(cmd);
    assert_snapshot(
        run.transcript(&["validate"]),
        snapshot_file("places-default-layers.txt"),
    );
}

#[test]
fn every_place_is_confined_whichever_way_it_was_chosen() {
    let sb = world();
    let p = sb.path();
    // A committed `.bernstein` that is a symlink out of the repository is
    // refused, not followed and not skipped in silence.
    create_file(&p.join("outside/skills/s.yaml"), "description: stolen\n");
    std::os::unix::fs::symlink(p.join("outside"), p.join("repo/.bernstein")).unwrap();
    let run = run_in(&sb, "repo", &[], &["show", "s"]);
    assert!(!run.all().contains("stolen"), "{run:#?}");
    let validate = run_in(&sb, "repo", &[], &["validate"]);
    assert_snapshot(
        validate.transcript(&["validate"]),
        snapshot_file("places-project-local-symlink.txt"),
    );
    // A file below a --team directory that links out of it is refused like
    // one in any layer.
    let team = p.join("flagteam");
    std::fs::create_dir_all(&team).unwrap();
    create_file(&p.join("secret.yaml"), "description: secret\n");
    std::os::unix::fs::symlink(p.join("secret.yaml"), team.join("s.yaml")).unwrap();
    let run = run_in(
        &sb,
        ".",
        &[],
        &["--team", team.to_str().unwrap(), "show", "s"],
    );
    assert!(!run.all().contains("secret\""), "{run:#?}");
    assert_ne!(run.code, Some(0), "{run:#?}");
    // So is one below the project-local layer.
    let sb = world();
    let p = sb.path();
    std::fs::create_dir_all(p.join("repo/.bernstein/skills")).unwrap();
    create_file(&p.join("secret.yaml"), "description: secret\n");
    std::os::unix::fs::symlink(
        p.join("secret.yaml"),
        p.join("repo/.bernstein/skills/s.yaml"),
    )
    .unwrap();
    let run = run_in(&sb, "repo", &[], &["show", "s"]);
    assert!(!run.all().contains("secret\""), "{run:#?}");
    assert_ne!(run.code, Some(0), "{run:#?}");
}

#[test]
fn a_directory_of_files_only_adds_its_files_and_no_fields() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "pdf/SKILL.md",
        "---\nname: pdf\ndescription: upstream\n---\nUpstream body.\n",
    );
    sb.write("base", "pdf/references/forms.md", "upstream forms\n");
    sb.write("team", "pdf/references/house-style.md", "house style\n");
    // The team's directory changes no field and keeps the upstream body.
    let v = sb.resolve_value("pdf");
    assert_eq!(v["description"], "upstream");
    assert_eq!(v["body"], "Upstream body.");
    // Its file is the skill's, with its origin.
    // Relative layer paths: the columns are as wide on any machine.
    let files = sb.run_relative(&["show", "pdf", "--files"]);
    assert_snapshot(
        files.ok(),
        snapshot_file("places-files-only-show-files.txt"),
    );
    let explain = sb.run_relative(&["explain", "pdf"]);
    assert_snapshot(explain.ok(), snapshot_file("places-files-only-explain.txt"));
    // validate is clean, and the export carries the file.
    sb.run(&["validate", "--strict"]).ok();
    let out = sb.path().join("out");
    sb.run(&[
        "export",
        "--format",
        "skill",
        "--out",
        out.to_str().unwrap(),
    ])
    .ok();
    assert_eq!(
        std::fs::read_to_string(out.join("pdf/references/house-style.md")).unwrap(),
        "house style\n"
    );
    assert!(
        std::fs::read_to_string(out.join("pdf/SKILL.md"))
            .unwrap()
            .contains("Upstream body.")
    );
}

#[test]
fn files_for_a_skill_no_lower_layer_defines_are_a_located_error() {
    let sb = Sandbox::new();
    sb.write("base", "other.yaml", "description: d\n");
    sb.write("team", "ghost/references/notes.md", "notes\n");
    let run = sb.pin(&["validate"], "places-files-for-no-skill-validate.txt");
    assert_eq!(run.code, Some(1), "{run:#?}");
    let show = sb.run(&["show", "ghost"]);
    assert_snapshot(
        show.failed(),
        snapshot_file("places-files-for-no-skill-show.stderr"),
    );
    // A directory of hidden entries only is nothing at all.
    sb.write("team", "quiet/.keep", "");
    assert!(!sb.run(&["list"]).ok().contains("quiet"));
    // In the base layer a directory without SKILL.md is no skill.
    sb.write("base", "loose/notes.md", "notes\n");
    assert!(!sb.run(&["list"]).ok().contains("loose"));
}

#[test]
fn a_lowercase_skill_md_is_read_and_an_uppercase_one_beside_it_wins() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "lower/skill.md",
        "---\ndescription: from lowercase\n---\nLower body.\n",
    );
    let v = sb.resolve_value("lower");
    assert_eq!(v["description"], "from lowercase");
    assert_eq!(v["body"], "Lower body.");
    sb.write(
        "base",
        "lower/SKILL.md",
        "---\ndescription: from upper\n---\nUpper.\n",
    );
    // On a file system that ignores case the two names are one file.
    let both = std::fs::read_dir(sb.layer("base").join("lower"))
        .unwrap()
        .count()
        == 2;
    if both {
        assert_eq!(sb.resolve_value("lower")["description"], "from upper");
        sb.pin(&["validate"], "places-lowercase-skill-md-shadowed.txt");
        // The shadowed lowercase file is not exported as one of the
        // skill's files.
        let files = sb.run(&["show", "lower", "--files"]);
        assert!(!files.success().contains("skill.md"), "{files:#?}");
    }
}

#[test]
fn explain_set_leaves_out_the_fields_no_layer_set() {
    let sb = Sandbox::new();
    sb.write("base", "s.yaml", "description: d\ntrigger_keywords: [a]\n");
    sb.write("user", "s.yaml", "trigger_keywords: [b]\n");
    // Without --set, the fields no layer set are there, from the default.
    let all = sb.run_relative(&["explain", "s"]);
    assert_snapshot(all.ok(), snapshot_file("places-explain-all.txt"));
    let set = sb.run_relative(&["explain", "s", "--set"]);
    assert_snapshot(set.ok(), snapshot_file("places-explain-set.txt"));
    let rows: Vec<&str> = set
        .ok()
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().nth(2).unwrap())
        .collect();
    assert_eq!(
        rows,
        ["description", "trigger_keywords[0]", "trigger_keywords[1]"]
    );
    let json = sb.run(&["explain", "s", "--set", "--json"]).json();
    assert_eq!(json["values"].as_array().unwrap().len(), 3, "{json}");
}
