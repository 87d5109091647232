//! Issue 28, item 3: a file of a skill that a target's translation merges
//! into (Codex reads `disable-model-invocation` from `agents/openai.yaml`)
//! is parsed by export, so it is read as a fragment is: refused past the
//! fragment cap before it is read, parsed by the same reader under the same
//! budgets (aliases, mappings), every error located in that file. An 8 MiB
//! team `agents/openai.yaml` cost `export --target codex` 679 MiB.

use crate::it::support::{Sandbox, assert_snapshot, snapshot_file};

/// The three forms that can set the translated field: the base SKILL.md's
/// frontmatter, a team YAML fragment, a user TOML fragment.
const FORMS: [&str; 3] = ["skill-md", "yaml", "toml"];

/// Skill `s` with `disable-model-invocation: true` set in `form`, and
/// `openai` as the base layer's `s/agents/openai.yaml`.
fn skill(form: &str, openai: &str) -> Sandbox {
    let sb = Sandbox::new().with_layer_dirs();
    let front = if form == "skill-md" {
        "disable-model-invocation: true\n"
    } else {
        ""
    };
    sb.write(
        "base",
        "s/SKILL.md",
        format!("---\ndescription: d\n{front}---\n\nBody.\n"),
    );
    match form {
        "yaml" => {
            sb.write("team", "s.yaml", "disable-model-invocation: true\n");
        }
        "toml" => {
            sb.write("user", "s.toml", "disable-model-invocation = true\n");
        }
        _ => {}
    }
    sb.write("base", "s/agents/openai.yaml", openai);
    sb
}

/// `interface: {maps: [{a: 1}, ...]}` with `n` one-entry mappings.
fn maps(n: usize) -> String {
    format!("interface:\n  maps: [{}]\n", vec!["{a: 1}"; n].join(", "))
}

#[test]
fn a_translated_file_over_the_fragment_cap_is_refused_by_validate_and_export() {
    // validate, export and --check each name the file, its size and the flag.
    let mut runs = String::new();
    for form in FORMS {
        runs.push_str(&format!("# set in {form}\n"));
        // 4,004 bytes of valid YAML under a 3,200-byte cap.
        let text = format!("interface:\n  note: \"{}\"\n", "x".repeat(3982));
        let sb = skill(form, &text);
        let cap = ["--max-fragment-bytes", "3200"];
        let args = [&cap[..], &["validate", "--target", "codex"]].concat();
        let run = sb.run(&args);
        assert_eq!(run.code, Some(1), "{form}: {run:#?}");
        runs.push_str(&run.transcript(&args));
        // Plain validate does not read it: no target translates it.
        sb.run(&[&cap[..], &["validate", "--strict"]].concat()).ok();
        let args = [&cap[..], &["export", "--target", "codex", "--out", "out"]].concat();
        let run = sb.run(&args);
        run.failed();
        runs.push_str(&run.transcript(&args));
        assert!(!sb.path().join("out").exists(), "{form}");
        // The fix the message names works.
        let raised = ["--max-fragment-bytes", "8000"];
        let run = sb.run(
            &[
                &raised[..],
                &["export", "--target", "codex", "--out", "out"],
            ]
            .concat(),
        );
        assert_eq!(
            run.ok_report(),
            "out (codex): 1 written, 0 unchanged, 0 removed, 0 failed\n"
        );
        assert_eq!(
            std::fs::read_to_string(sb.path().join("out/s/agents/openai.yaml")).unwrap(),
            format!(
                "interface:\n  note: {}\npolicy:\n  allow_implicit_invocation: false\n",
                "x".repeat(3982)
            )
        );
        let args = [&cap[..], &["export", "--target", "codex", "--check", "out"]].concat();
        let run = sb.run(&args);
        run.failed();
        runs.push_str(&run.transcript(&args));
    }
    assert_snapshot(runs, snapshot_file("translated-over-the-cap.txt"));
}

/// The case, scaled down: a team's files-only directory adds an
/// `agents/openai.yaml` of tiny mappings. A file may hold one mapping per
/// 32 bytes of the cap, as a fragment may; past that it is refused at the
/// mapping that passes it.
#[test]
fn a_team_translated_file_of_tiny_mappings_is_refused_at_the_mapping_budget() {
    let sb = Sandbox::new().with_layer_dirs();
    sb.write(
        "base",
        "s/SKILL.md",
        "---\ndescription: d\ndisable-model-invocation: true\n---\n\nBody.\n",
    );
    let cap = ["--max-fragment-bytes", "3200"];
    // The root and `interface` count: 100 mappings under a 3,200-byte cap.
    sb.write("team", "s/agents/openai.yaml", maps(98));
    sb.run(&[&cap[..], &["validate", "--target", "codex", "--strict"]].concat())
        .ok();
    sb.write("team", "s/agents/openai.yaml", maps(99));
    let message = "file holds more than 100 mappings, one per 32 bytes of the 3200-byte size \
                   limit; a mapping costs far more memory than its text (raise the limit with \
                   --max-fragment-bytes)";
    let run = sb.run(&[&cap[..], &["export", "--target", "codex", "--out", "out"]].concat());
    let (line, col, msg) = run.located_error("team/s/agents/openai.yaml");
    assert_eq!((line, col, msg.as_str()), (2, 10 + 8 * 98, message));
    let args = [&cap[..], &["validate", "--target", "codex"]].concat();
    let run = sb.run(&args);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert_snapshot(
        run.transcript(&args),
        snapshot_file("translated-too-many-mappings-validate.txt"),
    );
    let run = sb.run(&[&cap[..], &["validate", "--target", "codex", "--json"]].concat());
    assert_eq!(run.code, Some(1), "{run:#?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let d = &v["diagnostics"][0];
    assert_eq!(d["severity"], "error", "{v:#}");
    assert!(
        d["file"]
            .as_str()
            .unwrap()
            .ends_with("layers/team/s/agents/openai.yaml"),
        "{v:#}"
    );
    assert_eq!(d["layer"], "team", "{v:#}");
    assert_eq!(d["line"], 2, "{v:#}");
    assert_eq!(d["column"], 10 + 8 * 98, "{v:#}");
    assert_eq!(d["message"], message, "{v:#}");
    assert_eq!(v["errors"], 1, "{v:#}");
}

#[test]
fn an_alias_bomb_in_a_translated_file_is_refused_at_its_first_alias() {
    let mut text = format!("a0: &a0 [{}]\n", vec!["lol"; 100].join(", "));
    for i in 1..5 {
        text.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            vec![format!("*a{}", i - 1); 100].join(", ")
        ));
    }
    // export and validate each name the aliases, at 2:10 of the file.
    let mut runs = String::new();
    for form in FORMS {
        runs.push_str(&format!("# set in {form}\n"));
        let sb = skill(form, &text);
        let args = ["export", "--target", "codex", "--out", "out"];
        let run = sb.run(&args);
        let (line, col, msg) = run.located_error("base/s/agents/openai.yaml");
        assert_eq!((line, col), (2, 10), "{form}: {msg}");
        runs.push_str(&run.transcript(&args));
        let args = ["validate", "--target", "codex"];
        let run = sb.run(&args);
        assert_eq!(run.code, Some(1), "{form}: {run:#?}");
        runs.push_str(&run.transcript(&args));
    }
    assert_snapshot(runs, snapshot_file("translated-alias-bomb.txt"));
}

#[test]
fn a_translated_file_that_does_not_parse_is_a_located_error() {
    let mut runs = String::new();
    for (text, at, message) in [
        (
            "interface:\n  a: 1\n  a: 2\n",
            (3, 3),
            "duplicate key 'a' in one mapping; remove one of them",
        ),
        (
            "- one\n- two\n",
            (1, 1),
            "the top level must be a mapping of field names to values, got a list",
        ),
        (
            "interface:\n  k: !!binary aGk=\n",
            (2, 15),
            "YAML tag !!binary is not supported; only !!str, !!int, !!float, !!bool, !!null, \
             !!map and !!seq are (remove the tag, or quote the value to keep it as text)",
        ),
    ] {
        for form in FORMS {
            let sb = skill(form, text);
            let run = sb.run(&["export", "--target", "codex", "--out", "out"]);
            let (line, col, msg) = run.located_error("base/s/agents/openai.yaml");
            assert_eq!((line, col, msg.as_str()), (at.0, at.1, message), "{form}");
            assert!(!sb.path().join("out").exists());
            let args = ["validate", "--target", "codex"];
            runs.push_str(&format!("# {text:?} set in {form}\n"));
            runs.push_str(&sb.run(&args).transcript(&args));
        }
    }
    // validate locates each error as export does.
    assert_snapshot(runs, snapshot_file("translated-does-not-parse.txt"));
}

#[test]
fn an_empty_translated_file_takes_the_translation() {
    let sb = skill("skill-md", "");
    sb.run(&["validate", "--target", "codex", "--strict"]).ok();
    sb.run(&["export", "--target", "codex", "--out", "out"])
        .ok();
    assert_eq!(
        std::fs::read_to_string(sb.path().join("out/s/agents/openai.yaml")).unwrap(),
        "policy:\n  allow_implicit_invocation: false\n"
    );
}

/// Without the translated field set, the file is one of the skill's files
/// like any other: copied as bytes, never parsed.
#[test]
fn a_file_no_translation_writes_is_copied_unparsed() {
    let sb = Sandbox::new().with_layer_dirs();
    sb.write("base", "s/SKILL.md", "---\ndescription: d\n---\n\nBody.\n");
    let text = "interface: [\n  not: yaml: at all\n";
    sb.write("base", "s/agents/openai.yaml", text);
    sb.run(&["validate", "--target", "codex", "--strict"]).ok();
    sb.run(&["export", "--target", "codex", "--out", "out"])
        .ok();
    assert_eq!(
        std::fs::read_to_string(sb.path().join("out/s/agents/openai.yaml")).unwrap(),
        text
    );
}

/// The merge spec and a target file are read under their own size caps
/// (1 MiB, 256 KiB), and now parsed under the budgets a fragment is: one
/// mapping per 32 bytes of their cap. A 1 MiB spec of one-entry mappings
/// was read whole (131,000 of them); the refusal does not name
/// `--max-fragment-bytes`, which does not raise these caps.
#[test]
fn the_spec_and_targets_hold_one_mapping_per_32_bytes_of_their_cap() {
    let spec = std::fs::read_to_string(crate::it::support::shipped_spec_path()).unwrap();
    let sb = Sandbox::with_spec(&format!(
        "{spec}x: [{}]\n",
        vec!["{a: 1}"; 40_000].join(", ")
    ));
    sb.write("base", "s.yaml", "description: d\n");
    let run = sb.run(&["validate"]);
    let stderr = run.failed();
    let line = spec.lines().count() + 1;
    // Located at the mapping past the budget, on the line of the list: the
    // line after the shipped spec's last. `[..]` in the snapshot stands for
    // the line and column, which move whenever the shipped spec changes.
    assert!(
        stderr.starts_with(&format!("[ROOT]/spec.yaml:{line}:")),
        "{run:#?}"
    );
    assert_snapshot(
        stderr,
        snapshot_file("translated-spec-too-many-mappings.stderr"),
    );

    let sb = Sandbox::new().with_layer_dirs();
    sb.write("base", "s.yaml", "description: d\n");
    let codex = std::fs::read_to_string(
        crate::it::support::shipped_spec_path().with_file_name("targets/codex.yaml"),
    )
    .unwrap();
    sb.write_file(
        "t/codex.yaml",
        format!("{codex}x: [{}]\n", vec!["{a: 1}"; 9_000].join(", ")),
    );
    let run = sb.run(&["validate", "--target", "t/codex.yaml"]);
    // Located past the shipped codex target's own mappings: `[..]` in the
    // snapshot stands for where, which moves whenever that file changes.
    assert_snapshot(
        run.failed(),
        snapshot_file("translated-target-too-many-mappings.stderr"),
    );
}
