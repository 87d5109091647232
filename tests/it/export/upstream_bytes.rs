//! Issue 45, "Upstream bytes kept": a skill that neither the layers nor the
//! target change is exported byte for byte as upstream wrote its
//! `SKILL.md` (the frontmatter's spelling, comments, blank lines, key order
//! and final newline), for every target and without one; any change by a
//! layer or a target writes it again, and a CRLF file is written with LF.

use crate::it::support::Sandbox;

/// A `SKILL.md` no writer of YAML would produce: a comment, quoted keys and
/// values, a blank line and `description` before `name` in the frontmatter,
/// blank lines around the body and no final newline (as five of
/// Anthropic's collection end).
const ODD: &str = "---\n# upstream's own comment\n\"description\": 'Fills PDF forms.'\n\n\
                   name:   \"pdf\"\nlicense: Proprietary. LICENSE.txt has complete terms\n---\n\n\n\
                   # PDF\n\nFill the form.";

fn odd() -> Sandbox {
    let sb = Sandbox::new().with_layer_dirs();
    sb.write("base", "pdf/SKILL.md", ODD);
    sb.write("base", "pdf/reference.md", "# Reference\n");
    sb
}

fn exported(sb: &Sandbox, args: &[&str]) -> String {
    let mut all = vec!["export"];
    all.extend_from_slice(args);
    all.extend(["--out", "out"]);
    sb.run(&all).ok();
    std::fs::read_to_string(sb.path().join("out/pdf/SKILL.md")).unwrap()
}

#[test]
fn an_unchanged_skill_is_exported_as_upstream_wrote_it_for_every_target() {
    for args in [
        &["--format", "skill"][..],
        &["--target", "claude-code"],
        &["--target", "agent-skills"],
        &["--target", "agents"],
        &["--target", "codex"],
        &["--target", "gemini-cli"],
    ] {
        let sb = odd();
        assert_eq!(exported(&sb, args), ODD, "{args:?}");
        // What is there is what an export writes: nothing to do.
        let mut check = vec!["export"];
        check.extend_from_slice(args);
        check.extend(["--check", "out"]);
        sb.run(&check).ok();
    }
}

#[test]
fn a_layer_that_only_adds_files_leaves_the_upstream_bytes() {
    let sb = odd();
    sb.write("team", "pdf/notes/team.md", "# Our notes\n");
    assert_eq!(exported(&sb, &["--target", "claude-code"]), ODD);
    assert_eq!(
        std::fs::read_to_string(sb.path().join("out/pdf/notes/team.md")).unwrap(),
        "# Our notes\n"
    );
}

#[test]
fn a_layer_that_sets_a_field_has_the_skill_written_again() {
    let sb = odd();
    sb.write("team", "pdf.yaml", "description: Fills our PDF forms.\n");
    assert_eq!(
        exported(&sb, &["--target", "claude-code"]),
        "---\nname: pdf\ndescription: Fills our PDF forms.\nlicense: Proprietary. LICENSE.txt has \
         complete terms\n---\n\n\n# PDF\n\nFill the form.\n"
    );
}

#[test]
fn a_target_that_changes_the_frontmatter_has_the_skill_written_again() {
    let sb = Sandbox::new().with_layer_dirs();
    let text = "---\nname: pdf\ndescription: Fills PDF forms.\nauthor: 'upstream'\n---\n\nBody.";
    sb.write("base", "pdf/SKILL.md", text);
    // Claude Code drops `author`; the standard moves it into `metadata`;
    // a plain export keeps it as it is.
    assert_eq!(
        exported(&sb, &["--target", "claude-code"]),
        "---\nname: pdf\ndescription: Fills PDF forms.\n---\n\nBody.\n"
    );
    let sb = Sandbox::new().with_layer_dirs();
    sb.write("base", "pdf/SKILL.md", text);
    assert_eq!(
        exported(&sb, &["--target", "agent-skills"]),
        "---\nname: pdf\ndescription: Fills PDF forms.\nmetadata:\n  author: upstream\n---\n\nBody.\n"
    );
    let sb = Sandbox::new().with_layer_dirs();
    sb.write("base", "pdf/SKILL.md", text);
    assert_eq!(exported(&sb, &["--format", "skill"]), text);
    // A value the target renders another way (a list written as one
    // string) is a change too.
    let sb = Sandbox::new().with_layer_dirs();
    sb.write(
        "base",
        "pdf/SKILL.md",
        "---\nname: pdf\ndescription: D.\nallowed-tools: [Read, Grep]\n---\nBody",
    );
    assert_eq!(
        exported(&sb, &["--target", "agent-skills"]),
        "---\nname: pdf\ndescription: D.\nallowed-tools: Read Grep\n---\n\nBody\n"
    );
    // A SKILL.md without a name gets one: the standard requires it.
    let sb = Sandbox::new().with_layer_dirs();
    sb.write("base", "pdf/SKILL.md", "---\ndescription: D.\n---\nBody");
    assert_eq!(
        exported(&sb, &["--target", "claude-code"]),
        "---\nname: pdf\ndescription: D.\n---\n\nBody\n"
    );
}

#[test]
fn a_crlf_skill_md_is_written_with_lf_whatever_the_checkout() {
    // The same skill checked out with core.autocrlf or without exports the
    // same bytes: CRLF is the checkout's, not upstream's.
    let lf = "---\nname: pdf\ndescription: 'Fills forms.'\n---\n\nBody.\nMore.\n";
    let sb = Sandbox::new().with_layer_dirs();
    sb.write("base", "pdf/SKILL.md", lf.replace('\n', "\r\n"));
    let from_crlf = exported(&sb, &["--target", "claude-code"]);
    assert_eq!(
        from_crlf,
        "---\nname: pdf\ndescription: Fills forms.\n---\n\nBody.\nMore.\n"
    );
    let sb = Sandbox::new().with_layer_dirs();
    sb.write("base", "pdf/SKILL.md", lf);
    assert_eq!(exported(&sb, &["--target", "claude-code"]), lf);
}

#[test]
fn a_byte_order_mark_is_never_exported() {
    let sb = odd();
    sb.write("base", "pdf/SKILL.md", format!("\u{feff}{ODD}"));
    assert_eq!(exported(&sb, &["--target", "claude-code"]), ODD);
}
