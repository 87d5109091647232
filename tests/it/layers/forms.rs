//! The four on-disk forms, first-form-wins, SKILL.md bodies, TOML specifics
//! and the kinds of valid input that must keep working.

use std::path::Path;

use serde_json::json;

use bernstein_skills::fragment::LoadOptions;
use bernstein_skills::layer::Form;
use bernstein_skills::{Fragment, Layer};

use crate::it::support::{Sandbox, assert_snapshot, snapshot_file};

/// The same fragment in each of the four forms.
fn each_form(description: &str) -> [(&'static str, String); 4] {
    [
        (
            "s.yaml",
            format!("description: {description}\ntrigger_keywords: [k]\n"),
        ),
        (
            "s.yml",
            format!("description: {description}\ntrigger_keywords: [k]\n"),
        ),
        (
            "s/SKILL.md",
            format!("---\ndescription: {description}\ntrigger_keywords: [k]\n---\n"),
        ),
        (
            "s.toml",
            format!("description = \"{description}\"\ntrigger_keywords = [\"k\"]\n"),
        ),
    ]
}

#[test]
fn each_of_the_four_forms_loads() {
    for (rel, text) in each_form("hello") {
        let sb = Sandbox::new();
        sb.write("team", rel, &text);
        let v = sb.resolve_value("s");
        assert_eq!(v["description"], "hello", "{rel}");
        assert_eq!(v["trigger_keywords"], json!(["k"]), "{rel}");
        assert_eq!(v["layers_present"], json!(["team"]), "{rel}");
        let skills = sb.skills();
        let resolved = skills.resolve("s").unwrap();
        assert_eq!(
            resolved.fragments()[0].path.as_ref(),
            sb.layer("team").join(rel),
            "{rel}"
        );
    }
}

#[test]
fn first_form_wins_yaml_then_yml_then_skill_md_then_toml() {
    let sb = Sandbox::new();
    sb.write("base", "s.yaml", "description: yaml\n");
    sb.write("base", "s.yml", "description: yml\n");
    sb.write("base", "s/SKILL.md", "---\ndescription: md\n---\n");
    sb.write("base", "s.toml", "description = \"toml\"\n");
    for (winner, label) in [
        ("s.yaml", "yaml"),
        ("s.yml", "yml"),
        ("s/SKILL.md", "md"),
        ("s.toml", "toml"),
    ] {
        assert_eq!(
            sb.resolve_value("s")["description"],
            label,
            "{winner} should win"
        );
        std::fs::remove_file(sb.layer("base").join(winner)).unwrap();
    }
}

#[test]
fn forms_may_differ_between_layers() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "s/SKILL.md",
        "---\ndescription: b\ntrigger_keywords: [b]\n---\n# Body\n",
    );
    sb.write("team", "s.yml", "trigger_keywords: [t]\n");
    sb.write("user", "s.toml", "trigger_keywords = [\"u\"]\n");
    let v = sb.resolve_value("s");
    assert_eq!(v["trigger_keywords"], json!(["b", "t", "u"]));
    assert_eq!(v["body"], "# Body");
}

#[test]
fn skill_md_body_is_the_markdown_after_the_frontmatter_less_the_line_endings_around_it() {
    let sb = Sandbox::new();
    // The customary blank line after the fence and the final newline are
    // not part of the body; everything else is.
    sb.write(
        "base",
        "s/SKILL.md",
        "---\nname: s\ndescription: d\n---\n\n# Title\n\nText.\n",
    );
    assert_eq!(sb.resolve_value("s")["body"], "# Title\n\nText.");
    sb.write(
        "base",
        "s/SKILL.md",
        "---\nname: s\ndescription: d\n---\n\n\n    indented\n---\nText.\n\n",
    );
    assert_eq!(
        sb.resolve_value("s")["body"],
        "\n    indented\n---\nText.\n"
    );
    // The body is placed at its first line that is not blank.
    let origins = sb.run(&["show", "s", "--origins"]).ok().to_owned();
    assert_snapshot(origins, snapshot_file("forms-body-origin.txt"));
}

#[test]
fn skill_md_without_frontmatter_is_all_body() {
    let sb = Sandbox::new();
    sb.write("base", "s.yaml", "description: d\nauthor: a\n");
    sb.write("user", "s/SKILL.md", "# Only a body\n");
    let v = sb.resolve_value("s");
    assert_eq!(v["body"], "# Only a body");
    // It sets no other field.
    assert_eq!(
        (&v["description"], &v["author"]),
        (&"d".into(), &"a".into())
    );
    // Only the final line ending is taken off.
    sb.write("user", "s/SKILL.md", "\n# Only a body\n\n");
    assert_eq!(sb.resolve_value("s")["body"], "\n# Only a body\n");
}

#[test]
fn skill_md_with_an_empty_body_keeps_the_lower_layers_body() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "s/SKILL.md",
        "---\ndescription: b\n---\nBase body\n",
    );
    sb.write("user", "s/SKILL.md", "---\ndescription: u\n---\n");
    let v = sb.resolve_value("s");
    assert_eq!(v["body"], "Base body");
    assert_eq!(v["description"], "u");
    // Nor does a body of blank lines and spaces set anything.
    sb.write(
        "user",
        "s/SKILL.md",
        "---\ndescription: u\n---\n\n  \n\t\n\n",
    );
    assert_eq!(sb.resolve_value("s")["body"], "Base body");
}

#[test]
fn skill_md_body_overrides_a_lower_body() {
    let sb = Sandbox::new();
    sb.write("base", "s.yaml", "description: d\nbody: from yaml\n");
    sb.write("user", "s/SKILL.md", "---\n---\nfrom markdown\n");
    assert_eq!(sb.resolve_value("s")["body"], "from markdown");
}

#[test]
fn skill_md_setting_the_body_twice_is_an_error_on_the_body_line() {
    let sb = Sandbox::new();
    sb.write("base", "s/SKILL.md", "---\nbody: fm\n---\n\nmarkdown\n");
    let run = sb.run(&["show", "s"]);
    let (line, col, _) = run.located_error("base/s/SKILL.md");
    assert_eq!((line, col), (5, 1));
    assert_snapshot(run.failed(), snapshot_file("forms-body-set-twice.stderr"));
}

#[test]
fn toml_tables_arrays_of_tables_and_datetimes() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "s.toml",
        "description = \"t\"\n\n[[references]]\nname = \"style\"\nurl = \"u\"\n\n\
         [[references]]\nid = \"x\"\n\n[metadata]\nwhen = 1979-05-27T07:32:00Z\n\
         offset = 1979-05-27T00:32:00.999999-07:00\nday = 1979-05-27\nat = 07:32:00\n\
         [metadata.limits]\nmax_tokens = 2000\nratio = 0.5\nok = true\n",
    );
    let v = sb.resolve_value("s");
    assert_eq!(
        v["references"],
        json!([{"name": "style", "url": "u"}, {"id": "x"}])
    );
    assert_eq!(
        v["metadata"],
        json!({
            "when": "1979-05-27T07:32:00Z",
            "offset": "1979-05-27T00:32:00.999999-07:00",
            "day": "1979-05-27",
            "at": "07:32:00",
            "limits": {"max_tokens": 2000, "ratio": 0.5, "ok": true},
        })
    );
}

#[test]
fn empty_and_comment_only_files_are_empty_fragments() {
    let cases = [
        ("s.yaml", ""),
        ("s.yaml", "# nothing here\n\n# at all\n"),
        ("s.yaml", "---\n"),
        ("s.yml", "\n\n"),
        ("s.toml", ""),
        ("s.toml", "# only a comment\n"),
        ("s/SKILL.md", ""),
        ("s/SKILL.md", "---\n# a comment\n---\n"),
    ];
    for (rel, text) in cases {
        let sb = Sandbox::new();
        sb.write("base", "s.yml", "description: from base\n");
        sb.write("user", rel, text);
        let v = sb.resolve_value("s");
        assert_eq!(v["description"], "from base", "{rel}: {text:?}");
        assert_eq!(
            v["layers_present"],
            json!(["base", "user"]),
            "{rel}: {text:?}"
        );
    }
}

#[test]
fn utf8_bom_is_ignored_in_every_form() {
    for (rel, text) in each_form("bom") {
        let sb = Sandbox::new();
        sb.write("base", rel, format!("\u{feff}{text}"));
        assert_eq!(sb.resolve_value("s")["description"], "bom", "{rel}");
    }
}

#[test]
fn crlf_line_endings_load_like_lf_in_every_form() {
    for (rel, text) in each_form("crlf") {
        let sb = Sandbox::new();
        sb.write("base", rel, text.replace('\n', "\r\n"));
        let v = sb.resolve_value("s");
        assert_eq!(v["description"], "crlf", "{rel}");
        assert_eq!(v["trigger_keywords"], json!(["k"]), "{rel}");
    }
}

/// A git checkout with `core.autocrlf` turns a SKILL.md's line endings into
/// CRLF; the effective skill must not change with them.
#[test]
fn crlf_skill_md_body_gives_the_same_bytes_as_lf() {
    let lf = "---\ndescription: d\n---\n\n# Title\n\nLine one.\nLine two.\n";
    let a = Sandbox::new();
    a.write("base", "s/SKILL.md", lf);
    let b = Sandbox::new();
    b.write("base", "s/SKILL.md", lf.replace('\n', "\r\n"));
    assert_eq!(
        a.resolve_value("s")["body"],
        "# Title\n\nLine one.\nLine two."
    );
    assert_eq!(b.resolve_json("s"), a.resolve_json("s"));
}

#[test]
fn non_ascii_text_round_trips_unescaped() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "s/SKILL.md",
        "---\ndescription: Écrit des textes — vite ✓\nmetadata: {clé: 日本語}\n---\nCorps: ünïcödé 🎉\n",
    );
    sb.write("user", "s.toml", "author = \"Zoë\"\n");
    let out = sb.run(&["show", "s"]);
    let stdout = out.ok();
    // Written as they are, never as `\u` escapes.
    assert!(!stdout.contains("\\u"), "{stdout}");
    assert_snapshot(stdout, snapshot_file("forms-unicode-show.json"));
}

#[test]
fn files_that_are_no_skill_form_are_ignored() {
    let sb = Sandbox::new();
    sb.write("base", "s.yaml", "description: real\n");
    sb.write("base", "s.json", "{\"description\": \"json is no form\"}");
    sb.write("base", "notes.txt", "hello");
    sb.write("base", "README.md", "# not a skill");
    sb.write("base", "dir-without-skill-md/other.md", "x");
    sb.write("base", ".hidden.yaml", "description: hidden\n");
    let list = sb.run(&["list", "--layered", "--json"]).json();
    let names: Vec<&str> = list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["skill"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["s"]);
    assert_eq!(sb.resolve_value("s")["description"], "real");
}

#[test]
fn fragment_from_str_parses_each_form() {
    let opts = LoadOptions {
        body_field: Some("body".into()),
        ..LoadOptions::default()
    };
    let cases = [
        (Form::Yaml, "description: y\n"),
        (Form::Yml, "description: y\n"),
        (Form::SkillMd, "---\ndescription: y\n---\nB\n"),
        (Form::Toml, "description = \"y\"\n"),
    ];
    for (form, text) in cases {
        let f = Fragment::from_str(text.into(), form, Layer::Team, Path::new("t/s"), &opts)
            .unwrap_or_else(|d| panic!("{form:?}: {d}"));
        assert_eq!(f.fields()["description"], "y", "{form:?}");
        assert_eq!(f.layer, Layer::Team);
        assert_eq!(f.form, form);
    }
}
