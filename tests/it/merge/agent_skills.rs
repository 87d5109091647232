//! Skills in the open Agent Skills format, under the shipped spec: the
//! standard's fields and Claude Code's extensions validate and merge as the
//! design merges them, the standard's rules are the agent-skills target's,
//! checked on the merged skill and located in every form, and hyphenated
//! field names work in every command.

use serde_json::json;

use crate::it::support::{Sandbox, assert_snapshot, snapshot_file};

/// A skill directory as the standard shapes it, with resource directories.
const PDF_SKILL: &str = "---
name: pdf-tools
description: Extracts text and tables from PDF files.
license: Apache-2.0
compatibility: Requires Python 3.11 and pdfplumber
metadata:
  author: example-org
  version: \"1.0\"
allowed-tools: Bash(python3:*) Read
---

# PDF tools

Run `scripts/extract.py`.
";

fn pdf_skill(sb: &Sandbox) {
    sb.write("base", "pdf-tools/SKILL.md", PDF_SKILL);
    sb.write("base", "pdf-tools/scripts/extract.py", "print(1)\n");
    sb.write("base", "pdf-tools/references/REFERENCE.md", "# Reference\n");
}

/// `validate`'s lines (without the summary) and its exit code.
fn validate(sb: &Sandbox, args: &[&str]) -> (Option<i32>, Vec<String>) {
    let mut all = vec!["validate"];
    all.extend_from_slice(args);
    let run = sb.run(&all);
    let mut lines: Vec<String> = run.report().lines().map(str::to_owned).collect();
    assert!(
        lines.pop().is_some_and(|l| l.contains("error(s)")),
        "{run:#?}"
    );
    (run.code, lines)
}

#[test]
fn a_skill_in_the_standards_shape_validates_and_merges_as_written() {
    let sb = Sandbox::new();
    pdf_skill(&sb);
    assert_eq!(validate(&sb, &["--strict"]), (Some(0), vec![]));
    let v = sb.run(&["show", "pdf-tools"]).json();
    assert_eq!(v["name"], "pdf-tools");
    assert_eq!(v["license"], "Apache-2.0");
    assert_eq!(v["compatibility"], "Requires Python 3.11 and pdfplumber");
    assert_eq!(v["allowed-tools"], "Bash(python3:*) Read");
    assert_eq!(
        v["metadata"],
        json!({"author": "example-org", "version": "1.0"})
    );
    assert_eq!(v["body"], "# PDF tools\n\nRun `scripts/extract.py`.");
    // Fields no layer sets: "" for strings, null for Claude Code's booleans.
    assert_eq!(v["argument-hint"], "");
    assert_eq!(v["disable-model-invocation"], json!(null));
    assert_eq!(v["hooks"], json!({}));
}

#[test]
fn allowed_tools_is_a_string_or_a_list_and_the_highest_layer_states_it_whole() {
    let sb = Sandbox::new();
    pdf_skill(&sb);
    sb.write("team", "pdf-tools.yaml", "allowed-tools: [Read, Grep]\n");
    assert_eq!(
        sb.run(&["show", "pdf-tools"]).json()["allowed-tools"],
        json!(["Read", "Grep"])
    );
    // TOML's bare keys take hyphens; the comma-separated form is a string.
    sb.write(
        "user",
        "pdf-tools.toml",
        "allowed-tools = \"Read, Grep, Glob\"\n",
    );
    assert_eq!(
        sb.run(&["show", "pdf-tools"]).json()["allowed-tools"],
        "Read, Grep, Glob"
    );
    assert_eq!(validate(&sb, &["--strict"]), (Some(0), vec![]));
}

#[test]
fn claude_code_fields_validate_and_merge() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "review/SKILL.md",
        "---\nname: review\ndescription: Reviews a change.\ndisable-model-invocation: true\n\
         user-invocable: false\nargument-hint: \"[pr-number]\"\nmodel: sonnet\ncontext: fork\n\
         agent: Explore\nhooks:\n  PostToolUse:\n    - matcher: Edit\n      \
         hooks: [{type: command, command: ./format.sh}]\n---\nReview it.\n",
    );
    sb.write(
        "team",
        "review.yaml",
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks: [{type: command, command: ./check.sh}]\n",
    );
    // A quoted TOML key works as well as a bare one.
    sb.write(
        "user",
        "review.toml",
        "\"user-invocable\" = true\nargument-hint = \"[pr]\"\n",
    );
    assert_eq!(validate(&sb, &["--strict"]), (Some(0), vec![]));
    let v = sb.run(&["show", "review"]).json();
    assert_eq!(v["disable-model-invocation"], true);
    assert_eq!(v["user-invocable"], true);
    assert_eq!(v["argument-hint"], "[pr]");
    assert_eq!(
        (&v["model"], &v["context"], &v["agent"]),
        (&json!("sonnet"), &json!("fork"), &json!("Explore"))
    );
    // hooks merge event by event.
    assert_eq!(
        v["hooks"],
        json!({
            "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "./format.sh"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}],
        })
    );
}

#[test]
fn unknown_fields_stay_errors() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "s/SKILL.md",
        "---\ndescription: d\nallowed_tools: Read\ntags: [x]\n---\n",
    );
    assert_eq!(
        validate(&sb, &[]),
        (
            Some(1),
            vec![
                "[ROOT]/layers/base/s/SKILL.md:3:1: error: unknown field 'allowed_tools' (did you mean 'allowed-tools'?)".to_owned(),
                "[ROOT]/layers/base/s/SKILL.md:4:1: error: unknown field 'tags'".to_owned(),
            ]
        )
    );
}

#[test]
fn the_standards_rules_are_a_target_located_in_yaml() {
    let sb = Sandbox::new();
    sb.write("base", "s.yaml", "description: d\n");
    sb.write(
        "team",
        "s.yaml",
        format!(
            "name: Bad--Name\ndescription: ''\ncompatibility: {}\nallowed-tools: [Read, 7]\n",
            "c".repeat(501)
        ),
    );
    // The merge judges types only: the standard's rules are not its own.
    assert_eq!(
        validate(&sb, &[]),
        (
            Some(1),
            vec!["[ROOT]/layers/team/s.yaml:4:23: error: 'allowed-tools[1]' (OVERRIDE) expects a string, got an integer".to_owned()]
        )
    );
    sb.write(
        "team",
        "s.yaml",
        format!(
            "name: Bad--Name\ndescription: ''\ncompatibility: {}\nallowed-tools: [Read]\n",
            "c".repeat(501)
        ),
    );
    assert_eq!(
        validate(&sb, &["--target", "agent-skills"]),
        (
            Some(1),
            vec![
                "[ROOT]/layers/team/s.yaml:1:7: warning: 'name' is 'Bad--Name' but the file is named 's'".to_owned(),
                "[ROOT]/layers/team/s.yaml:1:7: error: agent-skills: 'name' must equal the skill's directory name 's'; got 'Bad--Name'".to_owned(),
                "[ROOT]/layers/team/s.yaml:2:14: error: agent-skills: 'description' is required, but its value is empty".to_owned(),
                "[ROOT]/layers/team/s.yaml:3:16: error: agent-skills: 'compatibility' must be at most 500 characters long; got 501".to_owned(),
                "[ROOT]/layers/team/s.yaml:1:7: error: agent-skills: 'name' must be lowercase letters, letters without case and digits, in words joined by single hyphens; got 'Bad--Name'".to_owned(),
            ]
        )
    );
}

#[test]
fn the_standards_rules_are_located_in_toml() {
    let sb = Sandbox::new();
    sb.write(
        "user",
        "s.toml",
        format!(
            "name = \"-lead\"\ndescription = \"{}\"\n\"allowed-tools\" = [\"Read\"]\n",
            "d".repeat(1025)
        ),
    );
    let args = ["validate", "--target", "agent-skills"];
    let run = sb.run(&args);
    assert_eq!(run.code, Some(1));
    assert_snapshot(
        run.transcript(&args),
        snapshot_file("agent_skills-user-layer-rules.txt"),
    );
}

#[test]
fn the_standards_rules_are_located_in_a_skill_md_frontmatter_and_never_refuse_show() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "s/SKILL.md",
        format!(
            "---\nname: s\ndescription: d\ncompatibility: \"{}\"\n---\nBody.\n",
            "é".repeat(501)
        ),
    );
    assert_eq!(validate(&sb, &["--strict"]), (Some(0), vec![]));
    let line = "[ROOT]/layers/base/s/SKILL.md:4:16: error: agent-skills: 'compatibility' must be at \
                most 500 characters long; got 501";
    assert_eq!(
        validate(&sb, &["--target", "agent-skills"]),
        (Some(1), vec![line.to_owned()])
    );
    // show shows it, and warns.
    let run = sb.run(&["show", "s", "--target", "agent-skills"]);
    assert_eq!(run.json_ignoring_stderr()["compatibility"], "é".repeat(501));
    assert_eq!(
        run.stderr,
        format!("{}\n", line.replace(": error: ", ": warning: "))
    );
    // A type the spec gives a field is the merge's own rule: it refuses.
    sb.write("team", "s.yaml", "license: 3\n");
    let (l, c, msg) = sb.run(&["show", "s"]).located_error("team/s.yaml");
    assert_eq!((l, c), (1, 10));
    assert_eq!(msg, "'license' (OVERRIDE) expects a string, got an integer");
}

#[test]
fn lengths_count_characters_not_bytes() {
    let sb = Sandbox::new();
    // 64 three-byte characters: a valid name of 192 bytes.
    let name = "日".repeat(64);
    sb.write(
        "base",
        &format!("{name}/SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: {}\n---\n",
            "é".repeat(1024)
        ),
    );
    assert_eq!(validate(&sb, &["--strict"]), (Some(0), vec![]));
}

#[test]
fn required_description_set_in_the_base_only_is_enough() {
    let sb = Sandbox::new();
    pdf_skill(&sb);
    sb.write("team", "pdf-tools.yaml", "license: MIT\n");
    sb.write("user", "pdf-tools.toml", "model = \"opus\"\n");
    assert_eq!(validate(&sb, &["--strict"]), (Some(0), vec![]));
    assert_eq!(
        sb.run(&["show", "pdf-tools"]).json()["description"],
        "Extracts text and tables from PDF files."
    );
}

/// The design's own examples set no description: they merge, show and
/// validate as Bernstein 3.23 merges them. The standard requires one: its
/// target says so, located.
#[test]
fn a_description_no_layer_sets_is_the_standards_rule_not_the_merges() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "writer/SKILL.md",
        "---\nname: writer\n---\nDraft.\n",
    );
    sb.write("team", "writer.yaml", "license: MIT\n");
    assert_eq!(validate(&sb, &["--strict"]), (Some(0), vec![]));
    for args in [
        &["show", "writer"][..],
        &["show", "writer", "--origins"],
        &["explain", "writer"],
    ] {
        sb.run(args).ok();
    }
    let expected = "[ROOT]/layers/team/writer.yaml: error: agent-skills: 'description' is \
                    required, but no layer sets it";
    assert_eq!(
        validate(&sb, &["--target", "agent-skills"]),
        (Some(1), vec![expected.to_owned()])
    );
    let json = sb.run(&["validate", "--json", "--target", "agent-skills"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["diagnostics"][0]["field"], "description");
    assert_eq!(v["diagnostics"][0]["layer"], "team");
    assert_eq!(v["diagnostics"][0]["line"], json!(null));
    let run = sb.run(&["explain", "writer", "--target", "agent-skills"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert_eq!(
        run.stderr,
        format!("{}\n", expected.replace(": error: ", ": warning: "))
    );
}

#[test]
fn a_blank_or_reset_required_value_is_located_where_it_was_set() {
    let sb = Sandbox::new();
    sb.write("base", "s.yaml", "description: d\n");
    sb.write("team", "s.yaml", "description: \"   \"\n");
    let target = ["--target", "agent-skills"];
    assert_eq!(
        validate(&sb, &target).1,
        [
            "[ROOT]/layers/team/s.yaml:1:14: error: agent-skills: 'description' is required, but its value is empty"
        ]
    );
    sb.write("team", "s.yaml", "description: null\n");
    assert_eq!(
        validate(&sb, &target).1,
        [
            "[ROOT]/layers/team/s.yaml:1:14: error: agent-skills: 'description' is required, but its value is empty"
        ]
    );
    // A higher layer that sets it again is enough.
    sb.write("user", "s.yaml", "description: again\n");
    assert_eq!(validate(&sb, &target), (Some(0), vec![]));
}

#[test]
fn a_skill_directory_whose_name_breaks_the_standard_is_reported_at_its_file() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "My_Skill/SKILL.md",
        "---\ndescription: d\n---\nBody.\n",
    );
    assert_eq!(validate(&sb, &["--strict"]), (Some(0), vec![]));
    sb.run(&["show", "My_Skill"]).ok();
    let target = ["--target", "agent-skills"];
    assert_eq!(
        validate(&sb, &target),
        (
            Some(1),
            vec![
                "[ROOT]/layers/base/My_Skill/SKILL.md: error: agent-skills: 'name' must be \
                  lowercase letters, letters without case and digits, in words joined by single \
                  hyphens; got 'My_Skill'"
                    .to_owned()
            ]
        )
    );
    // Naming it in the frontmatter satisfies the pattern, not the standard's
    // rule that the directory has the skill's name.
    sb.write(
        "base",
        "My_Skill/SKILL.md",
        "---\nname: my-skill\ndescription: d\n---\nBody.\n",
    );
    let (code, lines) = validate(&sb, &target);
    assert_eq!(code, Some(1));
    assert_eq!(
        lines,
        [
            "[ROOT]/layers/base/My_Skill/SKILL.md:2:7: warning: 'name' is 'my-skill' but the file is named 'My_Skill'",
            "[ROOT]/layers/base/My_Skill/SKILL.md:2:7: error: agent-skills: 'name' must equal the skill's directory name 'My_Skill'; got 'my-skill'",
        ]
    );
}

#[test]
fn explain_and_origins_name_a_hyphenated_field() {
    let sb = Sandbox::new();
    pdf_skill(&sb);
    sb.write("team", "pdf-tools.yaml", "allowed-tools: [Read, Grep]\n");
    sb.write(
        "user",
        "pdf-tools.toml",
        "model = \"opus\"\nallowed-tools = \"Read, Grep, Glob\"\n",
    );
    // Columns are aligned to the sandbox's real path: compare words.
    let out = sb
        .run(&["explain", "pdf-tools", "allowed-tools"])
        .ok()
        .to_owned();
    let words: Vec<String> = out
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        words,
        [
            "ORIGIN STRATEGY PATH VALUE",
            "user:[ROOT]/layers/user/pdf-tools.toml:2 OVERRIDE allowed-tools \"Read, Grep, Glob\"",
            "shadowed: team `[ROOT]/layers/team/pdf-tools.yaml:1` [\"Read\",\"Grep\"]",
            "shadowed: base `[ROOT]/layers/base/pdf-tools/SKILL.md:9` \"Bash(python3:*) Read\"",
        ]
    );
    let v = sb
        .run(&["explain", "pdf-tools", "allowed-tools", "--json"])
        .json();
    assert_eq!(v["values"][0]["field"], "allowed-tools");
    assert_eq!(v["values"][0]["origin"]["line"], 2);
    let origins = sb.run(&["show", "pdf-tools", "--origins"]).ok().to_owned();
    assert_snapshot(
        origins,
        snapshot_file("agent_skills-allowed-tools-origins.txt"),
    );
    // A typo in the path is caught with a suggestion.
    let err = sb
        .run(&["explain", "pdf-tools", "allowed_tools"])
        .failed()
        .to_owned();
    assert_snapshot(err, snapshot_file("agent_skills-explain-typo.stderr"));
}

#[test]
fn new_scaffold_lists_hyphenated_fields_and_marks_required_ones() {
    let sb = Sandbox::new();
    pdf_skill(&sb);
    for (form, rel) in [
        ("yaml", "team/pdf-tools.yaml"),
        ("toml", "user/pdf-tools.toml"),
    ] {
        let layer = &rel[..4];
        sb.run(&["new", "pdf-tools", "--layer", layer, "--form", form])
            .ok();
        let text = std::fs::read_to_string(sb.layer(layer).join(&rel[5..])).unwrap();
        for row in [
            "#   allowed-tools             OVERRIDE\n",
            "#   disable-model-invocation  OVERRIDE\n",
            "#   hooks                     DEEP_MERGE\n",
            "#   description               OVERRIDE\n",
            // The name defaults to the file name: never to be set by hand.
            "#   name                      OVERRIDE\n",
        ] {
            assert!(text.contains(row), "{form}: {row:?} in\n{text}");
        }
    }
    // The scaffolds are valid overrides of the base skill.
    assert_eq!(validate(&sb, &["--strict"]), (Some(0), vec![]));
    // The schema written beside the layers knows the hyphenated fields, for
    // the editor; a consumer's constraints are not the merge's.
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(sb.root().join("skill-fragment.schema.json")).unwrap(),
    )
    .unwrap();
    let props = &schema["properties"];
    // A value of several types is one branch per type (Ajv's strict mode
    // refuses other type lists), plus null, the reset.
    assert_eq!(
        props["allowed-tools"]["anyOf"],
        json!([
            {"type": "string"},
            {"type": "array", "items": {"type": "string"}},
            {"type": "null"}
        ])
    );
    assert!(props["description"].get("maxLength").is_none());
    assert!(props["name"].get("pattern").is_none());
}

/// A spec with every kind of constraint, for the located-error tests.
const CONSTRAINED_SPEC: &str = "version: 1
body_field: body
fields:
  body: {strategy: OVERRIDE, type: string}
  description: {strategy: OVERRIDE, type: string}
  code: {strategy: OVERRIDE, type: string, pattern: '^[A-Z]{3}$', pattern_help: three capital letters}
  title: {strategy: OVERRIDE, type: string, min_length: 2, max_length: 5}
  mode: {strategy: OVERRIDE, enum: [fast, slow]}
  level: {strategy: OVERRIDE, type: integer, minimum: 1, maximum: 9}
  tags: {strategy: APPEND, items: {type: string, max_length: 3}}
";

/// The messages every form of the same broken fragment must give, in line order.
const BROKEN: [&str; 6] = [
    "'code' must be three capital letters; got 'abc'",
    "'title' must be at least 2 characters long; got 1 ('x')",
    "'mode' must be one of \"fast\", \"slow\"; got \"medium\"",
    "'level' must be at least 1; got 0",
    "'tags[1]' must be at most 3 characters long; got 4",
    "'level' must be at most 9; got 10",
];

#[test]
fn every_constraint_is_located_in_yaml_toml_and_skill_md() {
    let sb = Sandbox::new();
    let spec = sb.write_file("constrained.yaml", CONSTRAINED_SPEC);
    // (file, text, the line:col of each of BROKEN's messages)
    let cases = [
        (
            "base/y.yaml",
            "code: abc\ntitle: x\nmode: medium\nlevel: 0\ntags: [ab, abcd]\n",
            ["1:7", "2:8", "3:7", "4:8", "5:12"],
        ),
        (
            "base/t.toml",
            "code = \"abc\"\ntitle = \"x\"\nmode = \"medium\"\nlevel = 0\ntags = [\"ab\", \"abcd\"]\n",
            ["1:8", "2:9", "3:8", "4:9", "5:15"],
        ),
        (
            "base/m/SKILL.md",
            "---\ncode: abc\ntitle: x\nmode: medium\nlevel: 0\ntags: [ab, abcd]\n---\nBody.\n",
            ["2:7", "3:8", "4:7", "5:8", "6:12"],
        ),
    ];
    for (file, text, _) in &cases {
        sb.write_file(&format!("layers/{file}"), text);
    }
    for (file, _, at) in &cases {
        let name = file.split(['/', '.']).nth(1).unwrap();
        let mut cmd = sb.skills_cmd(&["validate", name]);
        cmd.arg("--spec").arg(&spec);
        let run = sb.run_cmd(cmd);
        assert_eq!(run.code, Some(1), "{run:#?}");
        let expected: Vec<String> = at
            .iter()
            .zip(BROKEN)
            .map(|(at, msg)| format!("[ROOT]/layers/{file}:{at}: error: {msg}"))
            .collect();
        let got: Vec<&str> = run.report().lines().take(5).collect();
        assert_eq!(got, expected, "{file}");
    }
    // The upper bounds, once, in YAML.
    sb.write("base", "y.yaml", "level: 10\ntitle: toolong\n");
    let mut cmd = sb.skills_cmd(&["validate", "y"]);
    cmd.arg("--spec").arg(&spec);
    let run = sb.run_cmd(cmd);
    assert_eq!(
        run.report().lines().take(2).collect::<Vec<_>>(),
        [
            format!("[ROOT]/layers/base/y.yaml:1:8: error: {}", BROKEN[5]),
            "[ROOT]/layers/base/y.yaml:2:8: error: 'title' must be at most 5 characters long; got 7"
                .to_owned(),
        ]
    );
}
