//! Issue 28, item 7: a target that flattens a field into dotted keys
//! (`render: string-map`, the standard's `metadata`) writes the nested key
//! `sandbox: {network: deny}` and the key `"sandbox.network"` as one key,
//! and the flattened file held whichever came last: a team's
//! `"sandbox.network": allow` beat the user's `sandbox.network: deny`. Two
//! such keys are an error at each of them for a target asked for
//! (`validate --target`, `export --target`, `export --check`), and a
//! warning naming the targets that flatten the field otherwise.

use crate::it::support::{Run, Sandbox, assert_snapshot, snapshot_file};

/// The user's nested key and the team's dotted one, in `user_form` and
/// `team_form` (`yaml`, `toml` or `skill-md`); returns the sandbox and the
/// two keys' places, `layer/file:line:col`.
fn user_deny_team_allow(user_form: &str, team_form: &str) -> (Sandbox, String, String) {
    let sb = Sandbox::new().with_layer_dirs();
    sb.write("base", "s/SKILL.md", "---\ndescription: d\n---\n\nBody.\n");
    let user = match user_form {
        "yaml" => {
            sb.write(
                "user",
                "s.yaml",
                "metadata:\n  sandbox:\n    network: deny\n",
            );
            "user/s.yaml:3:5"
        }
        "toml" => {
            sb.write("user", "s.toml", "[metadata.sandbox]\nnetwork = \"deny\"\n");
            "user/s.toml:2:1"
        }
        _ => {
            sb.write(
                "user",
                "s/SKILL.md",
                "---\nmetadata:\n  sandbox:\n    network: deny\n---\n",
            );
            "user/s/SKILL.md:4:5"
        }
    };
    let team = match team_form {
        "yaml" => {
            sb.write(
                "team",
                "s.yaml",
                "metadata:\n  \"sandbox.network\": allow\n",
            );
            "team/s.yaml:2:3"
        }
        "toml" => {
            sb.write(
                "team",
                "s.toml",
                "[metadata]\n\"sandbox.network\" = \"allow\"\n",
            );
            "team/s.toml:2:1"
        }
        _ => {
            sb.write(
                "team",
                "s/SKILL.md",
                "---\nmetadata:\n  sandbox.network: allow\n---\n",
            );
            "team/s/SKILL.md:3:3"
        }
    };
    (sb, user.to_owned(), team.to_owned())
}

const FORMS: [&str; 3] = ["yaml", "toml", "skill-md"];

/// The message at the key `this` (`'sandbox' > 'network'`) naming `other`
/// at `other_at` (below `[ROOT]/layers/`), for `targets`.
fn message(targets: &str, this: &str, other: &str, other_at: &str) -> String {
    format!(
        "{targets}: 'metadata' key {this} and key {other} at [ROOT]/layers/{other_at} are both \
         written as 'sandbox.network' when 'metadata' is flattened to dotted keys, so one would \
         replace the other whatever the layers' order; write the key one way (nested, or dotted) \
         in every layer"
    )
}

const NESTED: &str = "'sandbox' > 'network'";
const DOTTED: &str = "'sandbox.network'";
/// The shipped targets that flatten `metadata`, as a warning names them:
/// the many that write as one of these (codex, cursor...) are named by it.
const FLATTENERS: &str = "agent-skills, agents";

fn has_line(run: &Run, line: &str) -> bool {
    run.all().lines().any(|l| l == line)
}

#[test]
fn a_dotted_key_beside_a_nested_one_is_an_error_for_a_target_that_flattens() {
    for user_form in FORMS {
        for team_form in FORMS {
            let (sb, user, team) = user_deny_team_allow(user_form, team_form);
            let at_user = format!(
                "[ROOT]/layers/{user}: error: {}",
                message("codex", NESTED, DOTTED, &team)
            );
            let at_team = format!(
                "[ROOT]/layers/{team}: error: {}",
                message("codex", DOTTED, NESTED, &user)
            );
            let run = sb.run(&["validate", "--target", "codex"]);
            assert_eq!(run.code, Some(1), "{run:#?}");
            assert!(
                has_line(&run, &at_user),
                "{user_form}/{team_form}: {run:#?}"
            );
            assert!(
                has_line(&run, &at_team),
                "{user_form}/{team_form}: {run:#?}"
            );

            let run = sb.run(&["export", "--target", "codex", "--out", "out"]);
            let stderr = run.failed();
            assert!(has_line(&run, &at_user), "{stderr}");
            assert!(has_line(&run, &at_team), "{stderr}");
            assert!(!sb.path().join("out").exists());

            // A target that does not flatten `metadata` writes both keys.
            sb.run(&["validate", "--target", "claude-code", "--strict"])
                .ok();
            // (Export says what other targets would refuse, as validate does.)
            sb.run(&["export", "--target", "claude-code", "--out", "claude"])
                .success();
            let md = std::fs::read_to_string(sb.path().join("claude/s/SKILL.md")).unwrap();
            assert!(
                md.contains("  sandbox:\n    network: deny\n")
                    && md.contains("  sandbox.network: allow\n"),
                "{md}"
            );
        }
    }
}

#[test]
fn export_check_reports_the_collision() {
    let sb = Sandbox::new().with_layer_dirs();
    sb.write("base", "s/SKILL.md", "---\ndescription: d\n---\n\nBody.\n");
    sb.run(&["export", "--target", "codex", "--out", "out"])
        .ok();
    let (_, user, team) = ("", "user/s.yaml:3:5", "team/s.yaml:2:3");
    sb.write(
        "user",
        "s.yaml",
        "metadata:\n  sandbox:\n    network: deny\n",
    );
    sb.write(
        "team",
        "s.yaml",
        "metadata:\n  \"sandbox.network\": allow\n",
    );
    let run = sb.run(&["export", "--target", "codex", "--check", "out"]);
    run.failed();
    assert!(
        has_line(
            &run,
            &format!(
                "[ROOT]/layers/{user}: error: {}",
                message("codex", NESTED, DOTTED, team)
            )
        ),
        "{run:#?}"
    );
}

#[test]
fn plain_validate_and_explain_warn_naming_the_targets_that_flatten() {
    let mut runs = String::new();
    for form in FORMS {
        let (sb, user, team) = user_deny_team_allow(form, form);
        let at_user = format!(
            "[ROOT]/layers/{user}: warning: {}",
            message(FLATTENERS, NESTED, DOTTED, &team)
        );
        let at_team = format!(
            "[ROOT]/layers/{team}: warning: {}",
            message(FLATTENERS, DOTTED, NESTED, &user)
        );
        let run = sb.run(&["validate"]);
        assert_eq!(run.code, Some(0), "{run:#?}");
        assert!(has_line(&run, &at_user), "{form}: {run:#?}");
        assert!(has_line(&run, &at_team), "{form}: {run:#?}");
        runs.push_str(&format!("# both in {form}\n"));
        runs.push_str(&run.transcript(&["validate"]));
        let run = sb.run(&["validate", "--strict"]);
        assert_eq!(run.code, Some(1), "{run:#?}");

        let run = sb.run(&["validate", "--json"]);
        let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(v["warnings"], 2, "{v:#}");
        let d = v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["layer"] == "team")
            .unwrap_or_else(|| panic!("{v:#}"));
        let (file, line, col) = {
            let mut parts = team.rsplitn(3, ':');
            let col: u64 = parts.next().unwrap().parse().unwrap();
            let line: u64 = parts.next().unwrap().parse().unwrap();
            (parts.next().unwrap().to_owned(), line, col)
        };
        assert_eq!(d["severity"], "warning", "{v:#}");
        assert!(d["file"].as_str().unwrap().ends_with(&file), "{v:#}");
        assert_eq!(
            (d["line"].as_u64(), d["column"].as_u64()),
            (Some(line), Some(col))
        );
        assert_eq!(d["field"], "metadata", "{v:#}");
        assert_eq!(
            d["message"],
            message(FLATTENERS, DOTTED, NESTED, &user),
            "{v:#}"
        );

        let run = sb.run(&["explain", "s", "metadata"]);
        assert_eq!(run.code, Some(0), "{run:#?}");
        assert!(run.stderr.lines().any(|l| l == at_user), "{form}: {run:#?}");
        assert!(run.stderr.lines().any(|l| l == at_team), "{form}: {run:#?}");
        // With a target, only that target's rules are said.
        let run = sb.run(&["explain", "s", "--target", "codex"]);
        assert!(
            run.stderr.lines().any(|l| l
                == format!(
                    "[ROOT]/layers/{user}: warning: {}",
                    message("codex", NESTED, DOTTED, &team)
                )),
            "{form}: {run:#?}"
        );
    }
    // Each names the targets that flatten, ending with the count.
    assert_snapshot(runs, snapshot_file("flattened-validate-warns.txt"));
}

#[test]
fn keys_of_one_layer_collide_too() {
    for (file, text, at) in [
        (
            "s.yaml",
            "metadata:\n  sandbox.network: allow\n  sandbox:\n    network: deny\n",
            ["s.yaml:2:3", "s.yaml:4:5"],
        ),
        (
            "s.toml",
            "[metadata]\n\"sandbox.network\" = \"allow\"\nsandbox.network = \"deny\"\n",
            ["s.toml:2:1", "s.toml:3:9"],
        ),
        (
            "s/SKILL.md",
            "---\nmetadata:\n  sandbox: {network: deny}\n  sandbox.network: allow\n---\n",
            ["s/SKILL.md:4:3", "s/SKILL.md:3:13"],
        ),
    ] {
        let sb = Sandbox::new().with_layer_dirs();
        sb.write("base", "s/SKILL.md", "---\ndescription: d\n---\n\nBody.\n");
        sb.write("team", file, text);
        let (dotted, nested) = (format!("team/{}", at[0]), format!("team/{}", at[1]));
        let run = sb.run(&["validate", "--target", "agent-skills"]);
        assert_eq!(run.code, Some(1), "{run:#?}");
        for line in [
            format!(
                "[ROOT]/layers/{nested}: error: {}",
                message("agent-skills", NESTED, DOTTED, &dotted)
            ),
            format!(
                "[ROOT]/layers/{dotted}: error: {}",
                message("agent-skills", DOTTED, NESTED, &nested)
            ),
        ] {
            assert!(has_line(&run, &line), "{file}: {line}\n{run:#?}");
        }
        let run = sb.run(&["export", "--target", "agent-skills", "--out", "out"]);
        run.failed();
    }
}

/// Which fields are flattened is the targets' to say: a target of one's own
/// that flattens `hooks` makes colliding `hooks` keys its error, and no
/// shipped target flattens `hooks`, so plain validate says nothing.
#[test]
fn the_flattened_fields_come_from_the_target_files() {
    let sb = Sandbox::new().with_layer_dirs();
    sb.write("base", "s/SKILL.md", "---\ndescription: d\n---\n\nBody.\n");
    sb.write(
        "team",
        "s.yaml",
        "hooks:\n  Post.Edit: one\n  Post:\n    Edit: two\n",
    );
    sb.write_file(
        "t/mine.yaml",
        "version: 1\nname: mine\nformat: skill\nfields:\n  name: {type: string}\n  \
         description: {type: string}\n  hooks: {type: object, render: string-map}\n",
    );
    sb.run(&["validate", "--strict"]).ok();
    let run = sb.pin(
        &["validate", "--target", "t/mine.yaml"],
        "flattened-string-map-collision.txt",
    );
    assert_eq!(run.code, Some(1), "{run:#?}");
}

#[test]
fn dotted_keys_that_do_not_collide_pass() {
    let sb = Sandbox::new().with_layer_dirs();
    sb.write("base", "s/SKILL.md", "---\ndescription: d\n---\n\nBody.\n");
    sb.write(
        "team",
        "s.yaml",
        "metadata:\n  \"sandbox.network\": allow\n  sandbox:\n    files: read\n",
    );
    sb.run(&["validate", "--strict"]).ok();
    sb.run(&["validate", "--target", "codex", "--strict"]).ok();
    sb.run(&["export", "--target", "codex", "--out", "out"])
        .ok();
    let md = std::fs::read_to_string(sb.path().join("out/s/SKILL.md")).unwrap();
    assert!(
        md.contains("metadata:\n  sandbox.files: read\n  sandbox.network: allow\n"),
        "{md}"
    );
}

/// An empty key adds no dot: `"": {b: 1}` is written as `b`.
#[test]
fn an_empty_key_collides_with_the_key_below_it() {
    let sb = Sandbox::new().with_layer_dirs();
    sb.write("base", "s/SKILL.md", "---\ndescription: d\n---\n\nBody.\n");
    sb.write(
        "team",
        "s.yaml",
        "metadata:\n  \"\":\n    b: one\n  b: two\n",
    );
    let run = sb.pin(
        &["validate", "--target", "codex"],
        "flattened-empty-key.txt",
    );
    assert_eq!(run.code, Some(1), "{run:#?}");
}

/// Many dotted keys: only the two that collide are named, and a field
/// of many collisions names at most 25 pairs (50 errors).
#[test]
fn collisions_among_many_dotted_keys_are_found_and_capped() {
    let sb = Sandbox::new().with_layer_dirs();
    sb.write("base", "s/SKILL.md", "---\ndescription: d\n---\n\nBody.\n");
    let mut text = String::from("metadata:\n");
    for i in 0..2000 {
        text.push_str(&format!("  k.{i}: v\n"));
    }
    text.push_str("  k:\n    '1999': w\n");
    sb.write("team", "s.yaml", &text);
    let run = sb.pin(
        &["validate", "--target", "codex"],
        "flattened-many-dotted-keys.txt",
    );
    assert_eq!(run.code, Some(1), "{run:#?}");

    let mut text = String::from("metadata:\n  k:\n");
    for i in 0..100 {
        text.push_str(&format!("    '{i}': v\n"));
    }
    for i in 0..100 {
        text.push_str(&format!("  k.{i}: w\n"));
    }
    sb.write("team", "s.yaml", &text);
    sb.pin(
        &["validate", "--target", "codex"],
        "flattened-many-collisions-capped.txt",
    );
}
