//! A hostile team layer, what is printed (issue 11 §3): no control, bidi or
//! invisible character from a layer reaches a terminal or CI log as is, in
//! any command; JSON stays valid JSON; names that cannot be told apart are
//! refused or warned about.

use std::os::unix::ffi::OsStrExt;

use super::support::{Run, Sandbox};

/// Characters that rewrite a terminal or forge a line.
const FORGERS: [char; 7] = [
    '\u{1b}', '\r', '\u{9b}', '\u{7f}', '\u{202e}', '\u{2066}', '\u{8}',
];

/// Nothing printed holds a forging character, and no line was forged.
fn assert_clean(out: &Run) {
    for (stream, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        for c in FORGERS {
            assert!(!text.contains(c), "{stream} holds {c:?}: {out:#?}");
        }
        assert!(
            !text.lines().any(|l| l.starts_with("FORGED")),
            "{stream} has a forged line: {out:#?}"
        );
    }
}

/// A value meant to clear the screen and forge a summary line.
const EVIL: &str = "x\u{1b}[2J\u{1b}[H\r\nFORGED 0 error(s)\u{9b}31m\u{202e}txt\u{7f}";

/// `s` as a YAML double-quoted scalar, every non-printable-ASCII character
/// written as a `\uXXXX` escape (YAML allows no raw C1 or DEL).
fn evil_yaml(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            ' '..='~' if c != '"' && c != '\\' => out.push(c),
            c => out.push_str(&format!("\\u{:04x}", c as u32)),
        }
    }
    out.push('"');
    out
}

#[test]
fn validate_escapes_keys_and_messages() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "writer.yaml",
        format!(
            "description: ok\n{}: 1\nname: {}\n",
            evil_yaml(EVIL),
            evil_yaml(EVIL)
        ),
    );
    let out = sb.run(&["validate"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_clean(&out);
    assert!(out.stdout.contains("unknown field 'x\\x1b[2J"), "{out:#?}");
    // The name breaks the spec's pattern, and the message quoting it is escaped too.
    assert!(
        out.stdout.contains("'name' must be lowercase letters")
            && out.stdout.contains("got 'x\\x1b[2J"),
        "{out:#?}"
    );
    let json = sb.run(&["validate", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).expect("valid JSON");
    assert_eq!(v["errors"], 2);
}

#[test]
fn list_explain_show_and_origins_escape_values() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "writer.yaml",
        format!(
            "description: {}\ntrigger_keywords: [{}]\nmetadata: {{{}: {}}}\n",
            evil_yaml(EVIL),
            evil_yaml(EVIL),
            evil_yaml(EVIL),
            evil_yaml(EVIL)
        ),
    );
    for args in [
        &["list"][..],
        &["list", "--layered"],
        &["explain", "writer"],
        &["show", "writer", "--origins"],
        &["show", "writer", "--per-layer"],
        &["show", "writer"],
    ] {
        let out = sb.run(args);
        assert_eq!(out.code, Some(0), "{args:?}: {out:#?}");
        assert_clean(&out);
    }
    // JSON escapes them and means the same string.
    let v = sb.run(&["show", "writer"]).json();
    assert_eq!(v["description"], EVIL);
    assert!(
        sb.run(&["show", "writer"])
            .stdout
            .contains("\\u001b[2J\\u001b[H\\r\\nFORGED 0 error(s)\\u009b31m\\u202etxt\\u007f")
    );
}

#[test]
fn export_check_escapes_names_and_old_manifest_bytes() {
    let sb = Sandbox::new();
    sb.write("base", "writer.yaml", "description: ok\n");
    sb.run(&["export", "--out", "manifests"]).ok();
    let m = sb.path().join("manifests");
    // A hand edit that forges lines: refused and checked, escaped.
    std::fs::write(
        m.join("writer.json"),
        format!("{{\n  \"description\": \"{EVIL}\"\n}}\n"),
    )
    .unwrap();
    for args in [
        &["export", "--check", "manifests"][..],
        &["export", "--out", "manifests"],
    ] {
        let out = sb.run(args);
        assert_eq!(out.code, Some(1), "{out:#?}");
        assert_clean(&out);
        assert!(
            format!("{}{}", out.stdout, out.stderr).contains("\"x\\x1b[2J\\x1b[H"),
            "{out:#?}"
        );
    }
    // File names and link targets in a skill directory are escaped too.
    sb.run(&["export", "--format", "skill", "--out", "skills"])
        .ok();
    let skill = sb.path().join("skills/writer");
    std::fs::write(skill.join("evil\u{1b}[2J\nFORGED.md"), "x").unwrap();
    std::os::unix::fs::symlink("/else\u{1b}[2J\nFORGED", skill.join("SKILL.md.d")).unwrap();
    let out = sb.run(&["export", "--format", "skill", "--check", "skills"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_clean(&out);
    assert!(
        out.stdout.contains("    ? evil\\x1b[2J\\nFORGED.md\n"),
        "{out:#?}"
    );
}

#[test]
fn file_names_that_cannot_be_skill_names_are_warned_about_escaped() {
    let sb = Sandbox::new().with_layer_dirs();
    sb.write("base", "writer.yaml", "description: ok\n");
    let team = sb.layer("team");
    std::fs::write(team.join("bell\u{7}.yaml"), "description: x\n").unwrap();
    std::fs::write(team.join("new\nline.yaml"), "description: x\n").unwrap();
    std::fs::write(team.join("zero\u{200b}width.yaml"), "description: x\n").unwrap();
    std::fs::write(team.join("rl\u{202e}o.toml"), "description = 'x'\n").unwrap();
    std::fs::write(
        team.join(std::ffi::OsStr::from_bytes(b"latin1-\xe9.yaml")),
        "description: x\n",
    )
    .unwrap();
    std::fs::write(team.join(".hidden.yaml"), "description: x\n").unwrap();
    let out = sb.run(&["validate"]);
    assert_clean(&out);
    assert_eq!(out.code, Some(0), "{out:#?}");
    for (name, reason) in [
        ("bell\\x07.yaml", "control characters"),
        ("new\\nline.yaml", "control characters"),
        ("zero\\u{200b}width.yaml", "invisible characters"),
        ("rl\\u{202e}o.toml", "bidirectional control characters"),
        ("latin1-\u{fffd}.yaml", "not valid UTF-8"),
    ] {
        assert!(
            out.stdout.lines().any(|l| l.contains(name)
                && l.contains("warning: not read as a skill")
                && l.contains(reason)),
            "{name}: {out:#?}"
        );
    }
    assert!(!out.stdout.contains(".hidden"), "{out:#?}");
    assert!(out.stdout.contains("0 error(s), 5 warning(s)"), "{out:#?}");
    assert_eq!(sb.run(&["validate", "--strict"]).code, Some(1));
}

#[test]
fn invisible_and_bidi_names_are_refused() {
    let sb = Sandbox::new();
    sb.write("base", "writer.yaml", "description: ok\n");
    for name in ["wri\u{200b}ter", "wri\u{202e}ter", "\u{feff}writer"] {
        let out = sb.run(&["show", name]);
        let err = out.failed();
        assert!(err.contains("invalid skill name"), "{err}");
        assert_clean(&out);
    }
}

#[test]
fn names_equal_after_nfc_and_case_folding_are_warned_about() {
    // The classic spec: the shipped one also refuses `Writer` and a
    // decomposed `é` as names (its lowercase pattern), which is beside the point here.
    let sb = Sandbox::classic();
    sb.write("base", "writer.yaml", "description: ok\n");
    sb.write("team", "Writer.yaml", "description: team\n");
    sb.write("base", "caf\u{e9}.yaml", "description: composed\n");
    sb.write("user", "cafe\u{301}.yaml", "description: decomposed\n");
    let out = sb.run(&["validate"]);
    assert_eq!(out.code, Some(0), "{out:#?}");
    assert!(
        out.stdout
            .contains("team/Writer.yaml: warning: skill name 'Writer' looks like 'writer'"),
        "{out:#?}"
    );
    assert!(
        out.stdout.contains(
            "user/cafe\u{301}.yaml: warning: skill name 'cafe\u{301}' looks like 'caf\u{e9}'"
        ),
        "{out:#?}"
    );
    assert_eq!(out.stdout.matches("looks like").count(), 4, "{out:#?}");
}
