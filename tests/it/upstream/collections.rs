//! Collections as they are laid out (issue 42): Anthropic's `skills`
//! repository keeps its skills in `skills/`, a template skill at the top,
//! and declares Claude Code plugins in `.claude-plugin/marketplace.json`.
//! `add` without `--path` took only the top-level template, in silence.
//! Now it takes the skills where the collection keeps them and says what
//! else it found, and `--plugin NAME` takes a plugin's skills as the
//! marketplace file declares them, which `update` follows. The marketplace
//! file is attacker-written: bounded, its paths confined to the
//! repository, each refusal located.

use crate::it::support::{
    Sandbox, Upstream, assert_snapshot, git, lock_file, run, snapshot_file, sources_file, stable,
};

const MARKETPLACE: &str = r#"{
  "name": "anthropic-agent-skills",
  "owner": {"name": "Upstream", "email": "upstream@example.com"},
  "metadata": {"description": "Example skills", "version": "1.0.0"},
  "plugins": [
    {
      "name": "document-skills",
      "description": "Documents",
      "source": "./",
      "strict": false,
      "skills": ["./skills/xlsx", "./skills/docx", "./skills/pptx", "./skills/pdf"]
    },
    {
      "name": "example-skills",
      "description": "Examples",
      "source": "./",
      "strict": false,
      "skills": ["./skills/algorithmic-art", "./skills/skill-creator"]
    }
  ]
}
"#;

/// Anthropic's layout: six skills in `skills/`, `template/` at the top,
/// the marketplace file, a README.
fn anthropic(sb: &Sandbox) -> Upstream {
    let up = Upstream::new(sb, "up");
    for name in [
        "xlsx",
        "docx",
        "pptx",
        "pdf",
        "algorithmic-art",
        "skill-creator",
    ] {
        up.skill(
            &format!("skills/{name}"),
            &format!("{name} skill."),
            "Body.\n",
        );
    }
    up.write(
        "template/SKILL.md",
        "---\nname: template\ndescription: A template.\n---\nT.\n",
    )
    .write(".claude-plugin/marketplace.json", MARKETPLACE)
    .write("README.md", "# Skills\n");
    up.commit();
    up
}

fn sources(sb: &Sandbox) -> String {
    std::fs::read_to_string(sources_file(sb)).unwrap()
}

fn names(sb: &Sandbox) -> Vec<String> {
    run(sb, &["list", "--json"]).json()["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["skill"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn add_takes_the_skills_where_the_collection_keeps_them_and_says_what_else_is_there() {
    let sb = Sandbox::new().with_layer_dirs();
    let up = anthropic(&sb);
    let out = run(&sb, &["add", &up.url()]);
    assert_snapshot(
        stable(out.success(), &up.commits()),
        snapshot_file("upstream-collections-add.txt"),
    );
    assert!(
        sources(&sb).contains("path = \"skills\"\n"),
        "{}",
        sources(&sb)
    );
    assert_eq!(
        names(&sb),
        [
            "algorithmic-art",
            "docx",
            "pdf",
            "pptx",
            "skill-creator",
            "xlsx"
        ]
    );
    // The JSON says the same, as data.
    let sb = Sandbox::new().with_layer_dirs();
    let up = anthropic(&sb);
    let json = run(&sb, &["add", &up.url(), "--json"]).json();
    crate::it::support::assert_output_schema("add", &json);
    let added = &json["added"][0];
    assert_eq!(added["path"], "skills", "{json:#}");
    assert_eq!(
        added["found"]["not_taken"],
        serde_json::json!([{"path": ".", "skills": ["template"]}]),
        "{json:#}"
    );
    assert_eq!(
        added["found"]["plugins"][0],
        serde_json::json!({
            "plugin": "document-skills",
            "skills": ["docx", "pdf", "pptx", "xlsx"],
            "error": null
        }),
        "{json:#}"
    );
    // A skill named that only the top has is taken from there.
    let sb = Sandbox::new().with_layer_dirs();
    let up = anthropic(&sb);
    run(&sb, &["add", &up.url(), "--skill", "template"]).success();
    assert!(!sources(&sb).contains("path ="), "{}", sources(&sb));
    assert_eq!(names(&sb), ["template"]);
    // And `--path .` is the top.
    let sb = Sandbox::new().with_layer_dirs();
    let up = anthropic(&sb);
    run(&sb, &["add", &up.url(), "--path", "."]).success();
    assert_eq!(names(&sb), ["template"]);
}

#[test]
fn a_plugin_of_the_marketplace_file_is_taken_by_name_and_update_follows_it() {
    let sb = Sandbox::new().with_layer_dirs();
    let up = anthropic(&sb);
    let out = run(&sb, &["add", &up.url(), "--plugin", "document-skills"]);
    assert_snapshot(
        stable(out.success(), &up.commits()),
        snapshot_file("upstream-collections-plugin.txt"),
    );
    assert!(
        sources(&sb).contains("plugin = \"document-skills\"\n"),
        "{}",
        sources(&sb)
    );
    let lock = std::fs::read_to_string(lock_file(&sb)).unwrap();
    assert!(lock.contains("plugin = \"document-skills\"\n"), "{lock}");
    assert_eq!(names(&sb), ["docx", "pdf", "pptx", "xlsx"]);
    run(&sb, &["verify"]).success();
    // Upstream declares one more skill in the plugin: update brings it.
    up.write(
        ".claude-plugin/marketplace.json",
        &MARKETPLACE.replace(
            "\"./skills/pdf\"]",
            "\"./skills/pdf\", \"./skills/skill-creator\"]",
        ),
    );
    up.commit();
    let report = run(&sb, &["update"]);
    assert!(
        report.ok().contains("  added skill-creator\n"),
        "{report:?}"
    );
    run(&sb, &["update", "--yes"]).success();
    assert_eq!(names(&sb), ["docx", "pdf", "pptx", "skill-creator", "xlsx"]);
    // A fresh cache fetches the same selection at the locked commit.
    std::fs::remove_dir_all(sb.path().join("home/.cache")).unwrap();
    run(&sb, &["verify"]).success();
    assert_eq!(names(&sb), ["docx", "pdf", "pptx", "skill-creator", "xlsx"]);
    // Some of a plugin's skills.
    let sb = Sandbox::new().with_layer_dirs();
    let up = anthropic(&sb);
    run(
        &sb,
        &[
            "add",
            &up.url(),
            "--plugin",
            "document-skills",
            "--skill",
            "pdf",
        ],
    )
    .success();
    assert_eq!(names(&sb), ["pdf"]);
    // A plugin the file does not declare names those it does.
    let err = run(
        &sb,
        &[
            "add",
            &up.url(),
            "--plugin",
            "document-skils",
            "--name",
            "d",
        ],
    );
    let stderr = err.failed();
    assert!(
        stderr.contains("no plugin 'document-skils'")
            && stderr.contains("did you mean 'document-skills'?")
            && stderr.contains("example-skills"),
        "{stderr}"
    );
}

/// A repository whose skills are neither at the top nor in `skills/`:
/// `add` says where they are and writes nothing.
#[test]
fn skills_kept_elsewhere_are_named_with_the_fix() {
    let sb = Sandbox::new().with_layer_dirs();
    let up = Upstream::new(&sb, "up");
    up.skill("plugins/a/skills/one", "One.", "1.\n")
        .skill("plugins/b/skills/two", "Two.", "2.\n")
        .write("README.md", "# x\n");
    up.commit();
    let err = run(&sb, &["add", &up.url()]);
    let stderr = err.failed();
    assert!(
        stderr.contains("plugins/a/skills (one)")
            && stderr.contains("plugins/b/skills (two)")
            && stderr.contains("--path"),
        "{stderr}"
    );
    assert!(!sources_file(&sb).exists() && !lock_file(&sb).exists());
    // One place only: taken.
    git(&up.dir, &["rm", "-rq", "plugins/b"]);
    up.commit();
    run(&sb, &["add", &up.url()]).success();
    assert!(sources(&sb).contains("path = \"plugins/a/skills\"\n"));
}

/// The marketplace file is the repository's, written by whoever pushes
/// there: every path it names stays inside the repository, and what
/// cannot be read is one located error; nothing is written.
#[test]
fn a_hostile_marketplace_file_is_refused_where_it_is_wrong() {
    let plugin = |skills: &str| {
        format!(
            r#"{{"name": "m", "plugins": [{{"name": "p", "source": "./", "skills": {skills}}}]}}"#
        )
    };
    let cases: Vec<(&str, String, &str)> = vec![
        ("dot-dot", plugin(r#"["./skills/../../etc"]"#), "'..'"),
        ("absolute", plugin(r#"["/etc"]"#), "absolute"),
        ("backslash", plugin(r#"["./skills\\pdf"]"#), "'\\'"),
        ("hidden", plugin(r#"["./.git/x"]"#), "hidden"),
        ("missing", plugin(r#"["./skills/nope"]"#), "holds no SKILL.md"),
        ("not-a-list", plugin(r#"{"a": 1}"#), "a list of paths"),
        ("top", plugin(r#"["./"]"#), "the top of the repository"),
        (
            "remote",
            r#"{"plugins": [{"name": "p", "source": {"source": "github", "repo": "evil/x"}}]}"#.into(),
            "another repository",
        ),
        ("not-json", "{\"plugins\": [\n  {\"name\": \"p\",,}]}".into(), ":2:"),
        (
            "huge",
            format!("{{\"pad\": \"{}\", \"plugins\": []}}", "x".repeat(2 << 20)),
            "larger than",
        ),
        (
            "twice",
            r#"{"plugins": [{"name": "p", "source": "./", "skills": ["./skills/pdf"]}, {"name": "p", "source": "./", "skills": ["./skills/docx"]}]}"#.into(),
            "declared twice",
        ),
    ];
    for (what, text, says) in cases {
        let sb = Sandbox::new().with_layer_dirs();
        let up = Upstream::new(&sb, "up");
        up.skill("skills/pdf", "PDF.", "P.\n")
            .skill("skills/docx", "Docx.", "D.\n")
            .write(".claude-plugin/marketplace.json", &text);
        up.commit();
        let err = run(&sb, &["add", &up.url(), "--plugin", "p"]);
        let stderr = err.failed();
        assert!(
            stderr.contains(".claude-plugin/marketplace.json") && stderr.contains(says),
            "{what}: {stderr}"
        );
        assert!(!sources_file(&sb).exists(), "{what}");
        assert!(!lock_file(&sb).exists(), "{what}");
    }
    // A skill path that is a symbolic link, and a marketplace file that is
    // one: never followed.
    for what in ["skill", "file"] {
        let sb = Sandbox::new().with_layer_dirs();
        let up = Upstream::new(&sb, "up");
        up.skill("skills/pdf", "PDF.", "P.\n");
        std::fs::create_dir_all(up.dir.join(".claude-plugin")).unwrap();
        if what == "skill" {
            std::os::unix::fs::symlink("/etc", up.dir.join("skills/etc")).unwrap();
            up.write(
                ".claude-plugin/marketplace.json",
                &plugin(r#"["./skills/etc"]"#),
            );
        } else {
            up.write("real.json", &plugin(r#"["./skills/pdf"]"#));
            std::os::unix::fs::symlink(
                "../real.json",
                up.dir.join(".claude-plugin/marketplace.json"),
            )
            .unwrap();
        }
        up.commit();
        let err = run(&sb, &["add", &up.url(), "--plugin", "p"]);
        let stderr = err.failed();
        assert!(stderr.contains("symbolic link"), "{what}: {stderr}");
        assert!(!sources_file(&sb).exists(), "{what}");
    }
    // A sources file may not name both a path and a plugin.
    let sb = Sandbox::new().with_layer_dirs();
    std::fs::write(
        sources_file(&sb),
        "[[source]]\nname = \"x\"\nurl = \"https://example.com/x\"\npath = \"skills\"\nplugin = \"p\"\n",
    )
    .unwrap();
    let err = run(&sb, &["list"]);
    assert!(err.failed().contains("path and plugin"), "{err:?}");
}
