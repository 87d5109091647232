//! Hostile and broken input (issue 3). Every case: exit code 1, nothing on
//! stdout, a located `path:line:col: error: ...` on stderr naming the file,
//! no panic, and quickly. Valid-but-unusual input lives in `layers/forms.rs`.

use crate::it::support::{
    Sandbox, assert_snapshot, permissions_are_enforced, shipped_spec_path, snapshot_file,
};

/// Writes `text` as `base/<rel>` and runs `show <name>`; returns its
/// stderr, after checking that the run failed with an error located in
/// that file.
fn show_error(rel: &str, name: &str, text: impl AsRef<[u8]>) -> String {
    let sb = Sandbox::new();
    sb.write("base", rel, text);
    let run = sb.run(&["show", name]);
    run.located_error(&format!("base/{rel}"));
    run.stderr
}

/// Like [`show_error`] for `base/s.yaml`.
fn yaml_error(text: &str) -> String {
    show_error("s.yaml", "s", text)
}

/// The message of the first error in `stderr`, after its location.
fn message(stderr: &str) -> &str {
    let first = stderr.lines().next().unwrap_or_default();
    first.split_once(": error: ").map_or(first, |(_, m)| m)
}

#[test]
fn malformed_yaml() {
    // An unclosed list, an unterminated string, a bad indentation.
    let errors = [
        yaml_error("description: ok\nauthor: [unclosed\nversion: '1'\n"),
        yaml_error("description: \"unterminated\n"),
        yaml_error("a:\n  - b\n c: d\n"),
    ];
    assert_snapshot(
        errors.concat(),
        snapshot_file("bad_input-malformed-yaml.stderr"),
    );
}

/// The parser's message must not carry a second, different position: the
/// location prefix is the position.
#[test]
fn malformed_yaml_message_has_no_embedded_position() {
    let stderr = yaml_error("description: ok\nauthor: [unclosed\n");
    let msg = message(&stderr);
    assert!(!msg.contains(" at line "), "{msg}");
    assert!(!msg.contains(" column "), "{msg}");
}

#[test]
fn top_level_list_or_scalar() {
    // A list, a string, an integer, a boolean: each said to be one.
    let errors: String = ["- a\n- b\n", "just a string\n", "42\n", "true\n"]
        .map(yaml_error)
        .concat();
    assert_snapshot(
        errors,
        snapshot_file("bad_input-top-level-not-a-mapping.stderr"),
    );
}

#[test]
fn wrong_type_for_each_strategy() {
    // Each error at the value, naming the field, its strategy and types.
    let errors: String = [
        "description: 5\n",
        "author: [a]\n",
        "trigger_keywords: kw\n",
        "trigger_keywords: [ok, 7]\n",
        "references: {a: 1}\n",
        "scripts: [5]\n",
        "assets: ['']\n",
        "metadata: [1]\n",
        "metadata: text\n",
    ]
    .map(yaml_error)
    .concat();
    assert_snapshot(
        errors,
        snapshot_file("bad_input-wrong-type-for-each-strategy.stderr"),
    );
}

#[test]
fn keyed_entries_without_a_key_field() {
    let errors = [
        yaml_error("references:\n  - url: x\n"),
        // A misspelt key gets a suggestion.
        yaml_error("scripts:\n  - {name: ok}\n  - {nmae: lint}\n"),
        // An empty key value cannot be a key: said as such (issue 30, item 16).
        yaml_error("assets:\n  - {name: ''}\n"),
    ];
    assert_snapshot(
        errors.concat(),
        snapshot_file("bad_input-keyed-entries-without-a-key.stderr"),
    );
}

#[test]
fn duplicate_identities_in_one_layer() {
    let errors = [
        yaml_error("references:\n  - {name: x}\n  - {name: y}\n  - {name: x, url: 2}\n"),
        // A string entry and a mapping with that name are the same identity.
        yaml_error("assets: [logo.svg, {name: logo.svg}]\n"),
    ];
    assert_snapshot(
        errors.concat(),
        snapshot_file("bad_input-duplicate-identities.stderr"),
    );
    // ... but name and id with one value are not.
    let sb = Sandbox::new();
    sb.write(
        "base",
        "s.yaml",
        "description: d\nassets: [{name: x}, {id: x}]\n",
    );
    sb.run(&["show", "s"]).ok();
}

#[test]
fn duplicate_keys_in_one_yaml_mapping() {
    let errors = [
        yaml_error("description: a\nauthor: b\ndescription: c\n"),
        yaml_error("metadata:\n  a: 1\n  b: 2\n  a: 3\n"),
    ];
    assert_snapshot(
        errors.concat(),
        snapshot_file("bad_input-duplicate-keys.stderr"),
    );
    // The same key in two different mappings is fine.
    let sb = Sandbox::new();
    sb.write(
        "base",
        "s.yaml",
        "description: d\nmetadata:\n  x: {a: 1}\n  y: {a: 2}\n",
    );
    sb.run(&["show", "s"]).ok();
}

#[test]
fn non_string_keys_at_the_top_level() {
    let errors: String = ["1: a\n", "true: a\n", "~: a\n", "[a]: b\n"]
        .map(yaml_error)
        .concat();
    assert_snapshot(errors, snapshot_file("bad_input-non-string-keys.stderr"));
}

#[test]
fn multi_document_yaml_file() {
    let errors = [
        yaml_error("description: a\n---\ndescription: b\n"),
        yaml_error("---\ndescription: a\n...\n---\n- b\n"),
    ];
    assert_snapshot(
        errors.concat(),
        snapshot_file("bad_input-multi-document-yaml.stderr"),
    );
}

/// Nine levels of nine-fold aliases: a billion strings if expanded.
fn billion_laughs(indent: &str) -> String {
    let mut s = format!("{indent}a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..10 {
        let refs = vec![format!("*a{}", i - 1); 9].join(", ");
        s.push_str(&format!("{indent}a{i}: &a{i} [{refs}]\n"));
    }
    s
}

#[test]
fn yaml_alias_bomb_at_the_top_level() {
    assert_snapshot(
        yaml_error(&billion_laughs("")),
        snapshot_file("bad_input-alias-bomb-top-level.stderr"),
    );
}

#[test]
fn yaml_alias_bomb_nested_inside_metadata() {
    let stderr = yaml_error(&format!(
        "description: ok\nmetadata:\n{}",
        billion_laughs("  ")
    ));
    assert_snapshot(
        stderr,
        snapshot_file("bad_input-alias-bomb-in-metadata.stderr"),
    );
}

#[test]
fn yaml_aliases_that_do_not_explode_still_work() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "s.yaml",
        "description: d\nmetadata:\n  base: &b {x: 1}\n  copy: *b\n",
    );
    assert_eq!(
        sb.resolve_value("s")["metadata"]["copy"],
        serde_json::json!({"x": 1})
    );
}

const DEEP: usize = 10_000;

#[test]
fn yaml_nesting_ten_thousand_levels_of_lists() {
    let errors = [
        yaml_error(&format!(
            "metadata:\n  x: {}{}\n",
            "[".repeat(DEEP),
            "]".repeat(DEEP)
        )),
        yaml_error(&format!("metadata:\n  x:\n    {}x\n", "- ".repeat(DEEP))),
    ];
    assert_snapshot(
        errors.concat(),
        snapshot_file("bad_input-deep-lists.stderr"),
    );
}

#[test]
fn yaml_nesting_ten_thousand_levels_of_mappings() {
    let text = format!(
        "metadata:\n  x: {}1{}\n",
        "{a: ".repeat(DEEP),
        "}".repeat(DEEP)
    );
    assert_snapshot(
        yaml_error(&text),
        snapshot_file("bad_input-deep-mappings.stderr"),
    );
}

/// libyaml's scanner does work proportional to the flow depth for every
/// token, so a deeply nested flow collection took quadratic time before the
/// depth limit applied: 100,000 levels (200 KB) ran for minutes, a 4 MiB file
/// for hours.
#[test]
fn deep_flow_nesting_took_quadratic_time() {
    const VERY_DEEP: usize = 100_000;
    let mut errors = String::new();
    for text in [
        format!(
            "metadata:\n  x: {}{}\n",
            "[".repeat(VERY_DEEP),
            "]".repeat(VERY_DEEP)
        ),
        format!(
            "metadata:\n  x: {}1{}\n",
            "{a: ".repeat(VERY_DEEP),
            "}".repeat(VERY_DEEP)
        ),
        // Unclosed, and with closing brackets hidden in quoted strings.
        format!("metadata:\n  x: {}\n", "[\"]]\", ".repeat(VERY_DEEP)),
    ] {
        errors.push_str(&yaml_error(&text));
    }
    assert_snapshot(errors, snapshot_file("bad_input-very-deep-flow.stderr"));
}

#[test]
fn flow_collections_that_are_wide_not_deep_still_work() {
    let sb = Sandbox::new();
    let items = vec!["[a, {b: [c]}]"; 500].join(", ");
    sb.write(
        "base",
        "s.yaml",
        format!("description: d\nmetadata:\n  x: [{items}]\n  y: '[[[[['\n"),
    );
    let v = sb.resolve_value("s");
    assert_eq!(v["metadata"]["x"].as_array().unwrap().len(), 500);
    assert_eq!(v["metadata"]["y"], "[[[[[");
}

#[test]
fn toml_nesting_ten_thousand_levels() {
    let lists = format!("[metadata]\nx = {}{}\n", "[".repeat(DEEP), "]".repeat(DEEP));
    let tables = format!(
        "[metadata]\nx = {}1{}\n",
        "{a = ".repeat(DEEP),
        "}".repeat(DEEP)
    );
    let errors = [
        show_error("s.toml", "s", lists),
        show_error("s.toml", "s", tables),
    ];
    assert_snapshot(errors.concat(), snapshot_file("bad_input-deep-toml.stderr"));
}

#[test]
fn skill_md_frontmatter_nesting_ten_thousand_levels() {
    let text = format!(
        "---\nmetadata:\n  x: {}{}\n---\nbody\n",
        "[".repeat(DEEP),
        "]".repeat(DEEP)
    );
    assert_snapshot(
        show_error("s/SKILL.md", "s", text),
        snapshot_file("bad_input-deep-frontmatter.stderr"),
    );
}

#[test]
fn fragment_larger_than_the_default_four_mib_cap() {
    let sb = Sandbox::new();
    let limit = 4 * 1024 * 1024;
    let mut text = String::from("description: \"");
    text.push_str(&"x".repeat(limit));
    text.push_str("\"\n");
    sb.write("base", "s.yaml", &text);
    // The size the report states: the cap and the 16 bytes around the value.
    assert_eq!(text.len(), limit + 16);
    assert_snapshot(
        sb.run(&["show", "s"]).failed(),
        snapshot_file("bad_input-fragment-over-default-cap.stderr"),
    );
}

#[test]
fn fragment_larger_than_max_fragment_bytes() {
    let sb = Sandbox::new();
    let exactly = format!("description: {}\n", "x".repeat(100 - 14));
    assert_eq!(exactly.len(), 100);
    sb.write("base", "ok.yaml", &exactly);
    sb.write(
        "base",
        "big.yaml",
        format!("description: {}\n", "x".repeat(101 - 14)),
    );
    sb.run(&["--max-fragment-bytes", "100", "show", "ok"]).ok();
    assert_snapshot(
        sb.run(&["--max-fragment-bytes", "100", "show", "big"])
            .failed(),
        snapshot_file("bad_input-fragment-over-max-bytes.stderr"),
    );
    // The cap applies to every form.
    sb.write(
        "team",
        "big/SKILL.md",
        format!("---\n---\n{}\n", "b".repeat(200)),
    );
    assert_snapshot(
        sb.run(&["--max-fragment-bytes", "100", "show", "big"])
            .failed(),
        snapshot_file("bad_input-fragment-over-max-bytes-skill-md.stderr"),
    );
}

#[test]
fn invalid_toml() {
    // A missing value, an unclosed table header, a key given twice.
    let errors = [
        show_error("s.toml", "s", "description = \"ok\"\nauthor = \n"),
        show_error("s.toml", "s", "[metadata\nx = 1\n"),
        show_error("s.toml", "s", "a = 1\na = 2\n"),
    ];
    assert_snapshot(
        errors.concat(),
        snapshot_file("bad_input-invalid-toml.stderr"),
    );
}

#[test]
fn unknown_field_in_toml_with_line_and_column() {
    assert_snapshot(
        show_error("s.toml", "s", "author = \"a\"\n\ndescripton = \"x\"\n"),
        snapshot_file("bad_input-unknown-field-toml.stderr"),
    );
}

#[test]
fn wrong_types_in_toml_with_line_and_column() {
    let errors = [
        show_error("s.toml", "s", "author = \"a\"\ndescription = 5\n"),
        show_error("s.toml", "s", "trigger_keywords = [\"a\", 2]\n"),
        // An entry of an array of tables is pointed at by its `[[header]]`.
        show_error(
            "s.toml",
            "s",
            "[[references]]\nname = \"ok\"\n\n[[references]]\nurl = \"x\"\n",
        ),
        show_error("s.toml", "s", "description = \"d\"\nmetadata = 3\n"),
    ];
    assert_snapshot(
        errors.concat(),
        snapshot_file("bad_input-wrong-types-toml.stderr"),
    );
}

#[test]
fn unterminated_skill_md_frontmatter() {
    assert_snapshot(
        show_error("s/SKILL.md", "s", "---\nname: s\ndescription: d\n"),
        snapshot_file("bad_input-unterminated-frontmatter.stderr"),
    );
}

#[test]
fn skill_md_frontmatter_that_is_not_a_mapping() {
    let errors = [
        show_error("s/SKILL.md", "s", "---\n- a\n- b\n---\nbody\n"),
        show_error("s/SKILL.md", "s", "---\njust text\n---\n"),
    ];
    assert_snapshot(
        errors.concat(),
        snapshot_file("bad_input-frontmatter-not-a-mapping.stderr"),
    );
}

#[test]
fn skill_md_frontmatter_errors_count_lines_in_the_whole_file() {
    let md = |fm: &str| format!("---\nname: s\ndescription: fine\n{fm}---\n\n# Body\n");
    let unclosed = show_error("s/SKILL.md", "s", md("author: [unclosed\n"));
    let msg = message(&unclosed);
    assert!(
        !msg.contains("line"),
        "the message repeats a frontmatter-relative line: {msg}"
    );
    let errors = [
        show_error("s/SKILL.md", "s", md("authr: x\n")),
        show_error("s/SKILL.md", "s", md("author: 5\n")),
        show_error(
            "s/SKILL.md",
            "s",
            md("trigger_keywords:\n  - ok\n  - [nested]\n"),
        ),
        show_error("s/SKILL.md", "s", md("description: dup\n")),
        unclosed,
    ];
    assert_snapshot(
        errors.concat(),
        snapshot_file("bad_input-frontmatter-lines-in-whole-file.stderr"),
    );
}

#[test]
fn invalid_utf8() {
    let errors = [
        show_error("s.yaml", "s", b"description: ok\nauthor: caf\xff\n"),
        show_error("s.toml", "s", b"a = \"\xc3\x28\"\n"),
        show_error("s/SKILL.md", "s", b"---\n---\n\xe2\x82\n"),
    ];
    assert_snapshot(
        errors.concat(),
        snapshot_file("bad_input-invalid-utf8.stderr"),
    );
}

#[test]
fn unreadable_file() {
    use std::os::unix::fs::PermissionsExt;
    // The spec handed to the run from inside the sandbox: the checkout's,
    // which a development build reads otherwise, may lie where `nobody`
    // cannot reach (a clone in a directory only root may enter).
    let spec = std::fs::read_to_string(shipped_spec_path()).unwrap();
    let sb = Sandbox::with_spec(&spec);
    let path = sb.write("team", "s.yaml", "description: secret\n");
    // As root a file of mode 000 is readable: the commands then run as the
    // unprivileged user `nobody` (setpriv), for whom it is not.
    let as_nobody = !permissions_are_enforced(sb.path());
    let run = |args: &[&str]| {
        let cmd = sb.skills_cmd(args);
        if !as_nobody {
            return sb.run_cmd(cmd);
        }
        let mut nobody = assert_cmd::Command::new("setpriv");
        nobody
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(cmd.get_program())
            .args(cmd.get_args())
            .env_clear()
            .envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .current_dir(sb.path());
        sb.run_cmd(nobody)
    };
    if as_nobody {
        // Everything up to the file itself readable by that user.
        std::fs::create_dir_all(sb.path().join("home")).unwrap();
        for (path, mode) in [
            (sb.path().to_path_buf(), 0o755),
            (sb.root(), 0o755),
            (sb.layer("team"), 0o755),
            (sb.path().join("home"), 0o755),
            (sb.path().join("spec.yaml"), 0o644),
            (path.clone(), 0o644),
        ] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        // What the test needs from that user, while the file is readable:
        // the binary runs, reads the spec and merges the layer.
        let probe = run(&["validate"]);
        if probe.code != Some(0) {
            // The binary lies where that user cannot run it (a target
            // directory in /root): said, not passed silently.
            eprintln!(
                "SKIPPED unreadable_file: running as root, and `nobody` cannot run the binary: {probe:#?}"
            );
            return;
        }
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    // The same report as root (run as `nobody`) and as anyone else.
    assert_snapshot(
        run(&["show", "s"]).failed(),
        snapshot_file("bad_input-unreadable-file-show.stderr"),
    );
    let run = run(&["validate"]);
    assert_eq!(run.code, Some(1));
    assert_eq!(run.stderr, "", "{run:#?}");
    assert_snapshot(
        &run.stdout,
        snapshot_file("bad_input-unreadable-file-validate.txt"),
    );
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
}

#[test]
fn names_with_path_traversal_are_refused() {
    let sb = Sandbox::new();
    sb.write("base", "ok.yaml", "");
    // What `../x` from the base directory would reach.
    sb.write_file("layers/x.yaml", "description: outside\n");
    // Each name: `show`'s stderr, then `validate`'s stdout.
    let mut reports = String::new();
    for name in ["../x", "/etc/passwd", "a/b", "..", "", ".x", "a\\b"] {
        let run = sb.run(&["show", name]);
        reports.push_str(run.failed());
        let run = sb.run(&["validate", name]);
        assert_eq!(run.code, Some(1), "{name:?}");
        assert_eq!(run.stderr, "", "{name:?}: {run:#?}");
        reports.push_str(&run.stdout);
        assert!(matches!(
            sb.skills().resolve(name),
            Err(bernstein_skills::Error::InvalidName { .. })
        ));
    }
    assert_snapshot(reports, snapshot_file("bad_input-path-traversal-names.txt"));
}

#[test]
fn symlink_loops_inside_a_layer_do_not_hang_listing_or_validate() {
    use std::os::unix::fs::symlink;
    let sb = Sandbox::new().with_layer_dirs();
    sb.write("base", "real.yaml", "description: real\n");
    let base = sb.layer("base");
    symlink(".", base.join("self")).unwrap();
    symlink("loop-b", base.join("loop-a")).unwrap();
    symlink("loop-a", base.join("loop-b")).unwrap();
    symlink("x.yaml", base.join("x.yaml")).unwrap();
    symlink("..", base.join("up")).unwrap();
    std::fs::create_dir(base.join("deep")).unwrap();
    symlink("../deep", base.join("deep/again")).unwrap();
    symlink("../base", sb.layer("team").join("base-again")).unwrap();
    symlink(&base, sb.layer("user").join("real")).unwrap();

    let list = sb.run(&["list", "--layered", "--json"]);
    let names: Vec<String> = list.json()["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["skill"].as_str().unwrap().to_owned())
        .collect();
    assert!(list.elapsed < crate::it::support::QUICK);
    assert!(names.contains(&"real".to_owned()), "{names:?}");
    for run in [
        sb.run(&["list"]),
        sb.run(&["list", "--layered"]),
        sb.run(&["validate"]),
    ] {
        assert!(run.elapsed < crate::it::support::QUICK, "{run:#?}");
        assert!(!run.stderr.contains("panicked"), "{run:#?}");
        assert!(run.code == Some(0) || run.code == Some(1), "{run:#?}");
    }
    for name in ["x", "loop-a", "self"] {
        let run = sb.run(&["show", name]);
        run.failed();
    }
    assert_eq!(sb.run(&["show", "real"]).json()["description"], "real");
}

#[test]
fn layer_path_that_is_a_file_warns_in_validate_and_is_absent() {
    let sb = Sandbox::new();
    sb.write("base", "s.yaml", "description: base\n");
    sb.write_file("layers/team", "description: I am a file\n");
    let run = sb.run(&["validate"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert_eq!(run.stderr, "", "{run:#?}");
    assert_snapshot(
        &run.stdout,
        snapshot_file("bad_input-layer-is-a-file-validate.txt"),
    );
    assert_eq!(sb.run(&["validate", "--strict"]).code, Some(1));
    assert_eq!(
        sb.resolve_value("s")["layers_present"],
        serde_json::json!(["base"])
    );
    let run = sb.run(&["list", "--layered"]);
    assert_snapshot(
        run.success(),
        snapshot_file("bad_input-layer-is-a-file-list.txt"),
    );
    assert_snapshot(
        &run.stderr,
        snapshot_file("bad_input-layer-is-a-file-list.stderr"),
    );
}

#[test]
fn layer_path_that_is_a_file_warns_on_stderr_in_show() {
    let sb = Sandbox::new();
    sb.write("base", "s.yaml", "description: base\n");
    sb.write_file("layers/user", "not a directory");
    let run = sb.run(&["show", "s"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&run.stdout).unwrap()["layers_present"],
        serde_json::json!(["base"])
    );
    assert_snapshot(
        &run.stderr,
        snapshot_file("bad_input-layer-is-a-file-show.stderr"),
    );
}

#[test]
fn every_problem_of_every_layer_is_reported_together() {
    let sb = Sandbox::new();
    sb.write("base", "s.yaml", "descripton: a\nauthor: 5\n");
    sb.write("team", "s.toml", "bad = \n");
    sb.write("user", "s.yaml", "trigger_keywords: x\n");
    assert_snapshot(
        sb.run(&["show", "s"]).failed(),
        snapshot_file("bad_input-every-problem-together.stderr"),
    );
}

/// Like [`show_error`] for the skill `s`, and the run prints that one error
/// and nothing else.
fn only_error(rel: &str, text: &str) -> String {
    let stderr = show_error(rel, "s", text);
    assert_eq!(stderr.matches("error:").count(), 1, "{stderr}");
    stderr
}

/// `!!binary`, `!!set` and `!!python/…` were dropped in silence (the value
/// read as if untagged, while a YAML 1.1 reader would apply the tag), and
/// `!custom` was refused with a message about enums: every tag but the core
/// schema's is refused alike, at its node.
#[test]
fn yaml_tags_other_than_the_core_schemas_are_refused_alike_at_their_node() {
    let mut errors = String::new();
    for value in [
        "!!binary aGVsbG8=",
        "!!python/object:os.system {cmd: ls}",
        "!custom v",
        "!!set {a, b}",
        "!!timestamp 2001-12-14",
    ] {
        let text = format!("description: d\nmetadata:\n  x: {value}\n");
        errors.push_str(&only_error("s.yaml", &text));
    }
    // In a SKILL.md, at its line in the whole file.
    errors.push_str(&only_error(
        "s/SKILL.md",
        "---\ndescription: d\nmetadata: {x: !!binary aGk=}\n---\nBody\n",
    ));
    assert_snapshot(errors, snapshot_file("bad_input-yaml-tags.stderr"));
}

#[test]
fn yaml_core_schema_tags_still_apply() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "s.yaml",
        "description: !!str d\nmetadata: !!map {s: !!str 5, i: !!int \"7\", f: !!float 1, l: !!seq [a]}\n",
    );
    assert_eq!(
        sb.resolve_value("s")["metadata"],
        serde_json::json!({"s": "5", "i": 7, "f": 1.0, "l": ["a"]})
    );
    assert_snapshot(
        only_error("s.yaml", "description: d\nmetadata: {n: !!int ten}\n"),
        snapshot_file("bad_input-yaml-core-tag-does-not-fit.stderr"),
    );
}

/// `1e400` was read as the string "1e400", and an integer past u64 was
/// refused with a message about u128 (past u128 it became a float): a
/// number by the YAML core schema that JSON cannot hold is refused at it.
#[test]
fn yaml_numbers_out_of_range_are_refused_at_the_value() {
    let mut errors = String::new();
    for value in [
        "1e400",
        "-1e400",
        "18446744073709551616",
        "-9223372036854775809",
        "0x1FFFFFFFFFFFFFFFF",
        "123456789012345678901234567890123456789012",
    ] {
        let text = format!("description: d\nmetadata:\n  limits: [1, {value}]\n");
        errors.push_str(&only_error("s.yaml", &text));
    }
    assert_snapshot(
        errors,
        snapshot_file("bad_input-yaml-numbers-out-of-range.stderr"),
    );
    // Quoted, it is the string it says; the largest integers still fit.
    let sb = Sandbox::new();
    sb.write(
        "base",
        "s.yaml",
        "description: d\nmetadata: {a: '1e400', b: 18446744073709551615, c: -9223372036854775808}\n",
    );
    assert_eq!(
        sb.resolve_value("s")["metadata"],
        serde_json::json!({"a": "1e400", "b": u64::MAX, "c": i64::MIN})
    );
}

/// A literal `<<` key was accepted, and a YAML 1.1 reader of the same file
/// applies it as a merge key: a plain `<<` key is refused; quoted, it is an
/// ordinary key.
#[test]
fn yaml_merge_keys_are_refused_and_a_quoted_one_is_a_key() {
    let text = "description: d\nmetadata:\n  base: &b {owner: team}\n  copy:\n    <<: *b\n";
    let errors = [
        only_error("s.yaml", text),
        only_error("s.yaml", "description: d\nmetadata: {<<: {a: 1}}\n"),
    ];
    assert_snapshot(
        errors.concat(),
        snapshot_file("bad_input-yaml-merge-keys.stderr"),
    );
    let sb = Sandbox::new();
    sb.write(
        "base",
        "s.yaml",
        "description: d\nmetadata:\n  '<<': single\n  nested: {\"<<\": double}\n",
    );
    sb.write("team", "s.toml", "[metadata]\n\"<<\" = \"toml\"\n");
    let v = sb.resolve_value("s");
    assert_eq!(v["metadata"]["<<"], "toml");
    assert_eq!(v["metadata"]["nested"]["<<"], "double");
}
