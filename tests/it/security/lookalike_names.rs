//! Issue 28, item 10: skill names that read as others passed `validate
//! --strict`, and `list` showed three rows reading `pdf-tables`
//! (`pdf-tables`, `pdf-tаbles` with a Cyrillic а, `pdf‐tables` with U+2010)
//! and two reading `trail` (`trail`, `trail `). Names equal under Unicode's
//! confusable skeleton (UTS #39), and names holding white space or a dash
//! other than `-`, are warnings naming the skills and their files
//! (`--strict` fails on them); `list` writes the characters that read as
//! others as code points.

use crate::it::support::{Run, Sandbox};

const CYRILLIC: &str = "pdf-t\u{430}bles";
const HYPHEN: &str = "pdf\u{2010}tables";

/// The skill `name` in `form` (`yaml`, `toml`, `skill-md`) in the base
/// layer; returns its file below `[ROOT]/layers/`.
fn skill(sb: &Sandbox, name: &str, form: &str) -> String {
    let rel = match form {
        "yaml" => {
            let rel = format!("{name}.yaml");
            sb.write("base", &rel, "description: d\n");
            rel
        }
        "toml" => {
            let rel = format!("{name}.toml");
            sb.write("base", &rel, "description = \"d\"\n");
            rel
        }
        _ => {
            let rel = format!("{name}/SKILL.md");
            sb.write("base", &rel, "---\ndescription: d\n---\n\nBody.\n");
            rel
        }
    };
    format!("base/{rel}")
}

fn has_line(run: &Run, line: &str) -> bool {
    run.stdout.lines().any(|l| l == line)
}

fn confusable(name: &str, file: &str, other: &str, other_file: &str) -> String {
    format!(
        "[ROOT]/layers/{file}: warning: skill name '{name}' reads as '{other}' \
         ([ROOT]/layers/{other_file}): the two are the same under Unicode's confusable skeleton \
         (UTS #39), and an override under one name does not apply to the other; rename one"
    )
}

#[test]
fn names_that_read_the_same_are_warned_about_naming_both_files() {
    for (a, b, c) in [
        ("yaml", "toml", "skill-md"),
        ("toml", "skill-md", "yaml"),
        ("skill-md", "yaml", "toml"),
    ] {
        let sb = Sandbox::new().with_layer_dirs();
        let plain = skill(&sb, "pdf-tables", a);
        let cyrillic = skill(&sb, CYRILLIC, b);
        let hyphen = skill(&sb, HYPHEN, c);
        let run = sb.run(&["validate"]);
        assert_eq!(run.code, Some(0), "{run:#?}");
        for line in [
            confusable("pdf-tables", &plain, "pdf-t\\u{430}bles", &cyrillic),
            confusable("pdf-t\\u{430}bles", &cyrillic, "pdf-tables", &plain),
            confusable("pdf\\u{2010}tables", &hyphen, "pdf-tables", &plain),
            format!(
                "[ROOT]/layers/{hyphen}: warning: skill name 'pdf\\u{{2010}}tables' holds a dash \
                 other than the hyphen-minus '-' (U+2010): it reads as a name with '-'; rename \
                 the skill with '-'"
            ),
        ] {
            assert!(has_line(&run, &line), "{line}\n{run:#?}");
        }
        assert!(
            run.stdout
                .ends_with("0 error(s), 4 warning(s) in 3 file(s)\n"),
            "{run:#?}"
        );
        let run = sb.run(&["validate", "--strict"]);
        assert_eq!(run.code, Some(1), "{run:#?}");

        let run = sb.run(&["validate", "--json"]);
        assert_eq!(run.code, Some(0), "{run:#?}");
        let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(v["warnings"], 4, "{v:#}");
        let d = v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| {
                d["file"]
                    .as_str()
                    .is_some_and(|f| f.ends_with(&cyrillic[5..]))
            })
            .unwrap_or_else(|| panic!("{v:#}"));
        assert_eq!(d["severity"], "warning");
        assert_eq!(d["layer"], "base");
        assert_eq!(
            d["message"],
            confusable("pdf-t\\u{430}bles", &cyrillic, "pdf-tables", &plain)
                .split_once(": warning: ")
                .unwrap()
                .1
        );
    }
}

#[test]
fn white_space_and_other_dashes_in_a_name_are_warned_about() {
    for (name, shown, what) in [
        (
            "trail ",
            "trail\\u{20}",
            "white space (U+0020): it reads as another name, and a mention of the skill ends at \
             it; rename the skill without it",
        ),
        (
            "trail\u{a0}",
            "trail\\u{a0}",
            "white space (U+00A0): it reads as another name, and a mention of the skill ends at \
             it; rename the skill without it",
        ),
        (
            "big\u{3000}data",
            "big\\u{3000}data",
            "white space (U+3000): it reads as another name, and a mention of the skill ends at \
             it; rename the skill without it",
        ),
        (
            "pdf\u{2013}tables",
            "pdf\\u{2013}tables",
            "a dash other than the hyphen-minus '-' (U+2013): it reads as a name with '-'; rename \
             the skill with '-'",
        ),
        (
            "pdf\u{2212}tables",
            "pdf\\u{2212}tables",
            "a dash other than the hyphen-minus '-' (U+2212): it reads as a name with '-'; rename \
             the skill with '-'",
        ),
    ] {
        for form in ["yaml", "toml", "skill-md"] {
            let sb = Sandbox::new().with_layer_dirs();
            let file = skill(&sb, name, form);
            let expected =
                format!("[ROOT]/layers/{file}: warning: skill name '{shown}' holds {what}");
            let run = sb.run(&["validate"]);
            assert_eq!(run.code, Some(0), "{run:#?}");
            assert!(has_line(&run, &expected), "{expected}\n{run:#?}");
            // Named on the command line too.
            let run = sb.run(&["validate", name, "--strict"]);
            assert_eq!(run.code, Some(1), "{run:#?}");
            assert!(has_line(&run, &expected), "{expected}\n{run:#?}");
        }
    }
}

#[test]
fn list_shows_the_characters_that_read_as_others_as_code_points() {
    let sb = Sandbox::new().with_layer_dirs();
    for name in [
        "pdf-tables",
        CYRILLIC,
        HYPHEN,
        "trail",
        "trail ",
        "café",
        "翻訳",
    ] {
        skill(&sb, name, "skill-md");
    }
    let run = sb.run(&["list"]);
    let out = run.ok();
    let names: Vec<&str> = out
        .lines()
        .skip(1)
        .filter_map(|l| l.split("  ").next())
        .collect();
    for shown in [
        "pdf-tables",
        "pdf-t\\u{430}bles",
        "pdf\\u{2010}tables",
        "trail",
        "trail\\u{20}",
        "café",
        "翻訳",
    ] {
        assert!(names.contains(&shown), "{shown}\n{out}");
    }
    let run = sb.run(&["list", "--layered"]);
    let out = run.ok();
    assert!(out.contains("\npdf-t\\u{430}bles "), "{out}");
    assert!(out.contains("\ntrail\\u{20} "), "{out}");
    // JSON carries the names as they are.
    let v = sb.run(&["list", "--json"]).json();
    let skills: Vec<&str> = v["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["skill"].as_str().unwrap())
        .collect();
    assert!(
        skills.contains(&CYRILLIC) && skills.contains(&"trail "),
        "{v:#}"
    );
}

/// `Writer` and `writer` (and a name composed and decomposed) keep their
/// warning, once: they are not also reported as confusable.
#[test]
fn names_equal_after_folding_keep_their_own_warning_only() {
    let sb = Sandbox::new().with_layer_dirs();
    skill(&sb, "Writer", "yaml");
    skill(&sb, "writer", "toml");
    skill(&sb, "caf\u{e9}", "yaml");
    skill(&sb, "cafe\u{301}", "skill-md");
    let run = sb.run(&["validate"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert!(
        has_line(
            &run,
            "[ROOT]/layers/base/Writer.yaml: warning: skill name 'Writer' looks like 'writer' \
             (equal after Unicode normalisation and case folding); an override under one name \
             does not apply to the other"
        ),
        "{run:#?}"
    );
    assert!(!run.stdout.contains("confusable"), "{run:#?}");
    assert!(
        run.stdout
            .ends_with("0 error(s), 4 warning(s) in 4 file(s)\n"),
        "{run:#?}"
    );
}

#[test]
fn distinct_names_pass() {
    let sb = Sandbox::new().with_layer_dirs();
    for name in [
        "pdf-tables",
        "pdf-table",
        "trail",
        "trails",
        "café",
        "翻訳",
        "αβγ",
    ] {
        skill(&sb, name, "yaml");
    }
    sb.run(&["validate", "--strict"]).ok();
}

/// Issue 42: a team-only skill whose name is one edit from a skill of a
/// lower layer (`team/pfd.yaml` setting only `description`, beside base
/// `pdf`) was exported as a new skill with no word: the override the team
/// meant never applied. It is a warning with a did-you-mean in validate,
/// export and list, and `validate --strict` fails on it. A deliberate
/// team-only skill stays silent: one with its own instructions, or with a
/// name further away.
#[test]
fn a_team_only_skill_one_edit_from_a_lower_one_is_a_warning() {
    let sb = Sandbox::new().with_layer_dirs();
    sb.write(
        "base",
        "pdf/SKILL.md",
        "---\ndescription: PDF.\n---\nBody.\n",
    );
    sb.write("team", "pfd.yaml", "description: Our PDF skill.\n");
    // Deliberate: its own instructions, one edit away; a distinct name.
    sb.write(
        "team",
        "pdfs/SKILL.md",
        "---\ndescription: Many PDFs.\n---\nRead each.\n",
    );
    sb.write("team", "house.yaml", "description: The team's own skill.\n");
    let warning = "[ROOT]/layers/team/pfd.yaml: warning: skill 'pfd' is defined by no layer \
                   below the team layer, and its name is one edit from 'pdf', which the base \
                   layer defines: it is exported as a skill of its own, not as an override of \
                   'pdf' (did you mean 'pdf'?); rename it to override 'pdf', or give it \
                   instructions of its own if it is meant as a new skill";
    let run = sb.run(&["validate"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert!(has_line(&run, warning), "{run:#?}");
    assert!(
        run.stdout
            .ends_with("0 error(s), 1 warning(s) in 4 file(s)\n"),
        "{run:#?}"
    );
    assert_eq!(sb.run(&["validate", "--strict"]).code, Some(1));
    // Export writes it, and says so.
    let run = sb.export_skills("out");
    assert_eq!(run.code, Some(0), "{run:#?}");
    let said = "skill 'pfd' is defined by no layer below the team layer, and its name is one \
                edit from 'pdf'";
    assert!(run.stderr.contains(said), "{run:#?}");
    assert!(sb.path().join("out/pfd/SKILL.md").exists());
    // List says it too.
    let run = sb.run(&["list"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert!(run.stderr.contains(said), "{run:#?}");
    // Renamed as suggested, it is the override it was meant to be.
    std::fs::rename(
        sb.layer("team").join("pfd.yaml"),
        sb.layer("team").join("pdf.yaml"),
    )
    .unwrap();
    sb.run(&["validate", "--strict"]).ok();
}
