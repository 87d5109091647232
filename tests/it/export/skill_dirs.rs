//! Effective skills as directories an agent loads (issue 12 §4):
//! `export --format skill` writes `DIR/NAME/SKILL.md` plus the resolved
//! files, with the same whole-or-nothing writing, `--check` and `--prune` as
//! the JSON manifests, and reads back as the same skill.

use bernstein_skills::export::Format;
use bernstein_skills::{Layers, output::render};
use proptest::prelude::*;
use serde_json::{Map, Value};

use crate::it::support::{Sandbox, assert_snapshot, classic_spec, snapshot_file};

fn layered() -> Sandbox {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "writer/SKILL.md",
        "---\nname: writer\ndescription: Writes docs.\n---\n\n# Writer\n\nDraft prose.\n",
    );
    sb.write("base", "writer/references/style.md", "# Base style\n");
    sb.write("base", "writer/assets/logo.bin", [0u8, 159, 146, 150, 255]);
    sb.write(
        "team",
        "writer/SKILL.md",
        "---\ndescription: Writes docs in the team's voice.\n---\n",
    );
    sb.write("team", "writer/references/glossary.md", "# Terms\n");
    sb.write("user", "writer.yaml", "trigger_keywords: [mine]\n");
    sb
}

#[test]
fn a_layered_skill_exports_as_a_skill_directory() {
    let sb = layered();
    sb.export_skills("out").ok();
    let out = sb.path().join("out/writer");
    assert_eq!(
        std::fs::read_to_string(out.join("SKILL.md")).unwrap(),
        "---\nname: writer\ndescription: Writes docs in the team's voice.\ntrigger_keywords:\n- mine\n---\n\n# Writer\n\nDraft prose.\n"
    );
    assert_eq!(
        std::fs::read(out.join("assets/logo.bin")).unwrap(),
        [0u8, 159, 146, 150, 255],
        "binary files are copied as bytes"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("references/glossary.md")).unwrap(),
        "# Terms\n"
    );
    let mut names: Vec<String> = walk(&out);
    names.sort();
    assert_eq!(
        names,
        [
            "SKILL.md",
            "assets/logo.bin",
            "references/glossary.md",
            "references/style.md"
        ]
    );
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().into_string().unwrap();
        if e.file_type().unwrap().is_dir() {
            out.extend(walk(&e.path()).into_iter().map(|n| format!("{name}/{n}")));
        } else {
            out.push(name);
        }
    }
    out
}

#[test]
fn an_executable_script_stays_executable() {
    use std::os::unix::fs::PermissionsExt;
    let sb = layered();
    let script = sb.write("base", "writer/scripts/run.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    sb.export_skills("out").ok();
    let mode = |rel: &str| {
        std::fs::metadata(sb.path().join("out/writer").join(rel))
            .unwrap()
            .permissions()
            .mode()
    };
    assert_ne!(mode("scripts/run.sh") & 0o100, 0);
    assert_eq!(mode("references/style.md") & 0o111, 0);
    // Losing the bit is drift, and the next export restores it.
    let out = sb.path().join("out/writer/scripts/run.sh");
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o644)).unwrap();
    sb.pin(
        &["export", "--format", "skill", "--check", "out"],
        "skill_dirs-check-execute-bit.txt",
    );
    sb.export_skills("out").ok();
    assert_ne!(mode("scripts/run.sh") & 0o100, 0);
}

#[test]
fn an_untouched_skill_comes_out_as_it_went_in() {
    let sb = Sandbox::new();
    let skill = "---\nname: pdf\ndescription: Extracts text and tables from PDF files.\n---\n\n# PDF\n\nUse the scripts.\n";
    sb.write("base", "pdf/SKILL.md", skill);
    sb.write("base", "pdf/scripts/extract.py", "print('x')\n");
    sb.export_skills("out").ok();
    assert_eq!(
        std::fs::read_to_string(sb.path().join("out/pdf/SKILL.md")).unwrap(),
        skill
    );
}

#[test]
fn check_reports_drift_in_any_file_and_out_then_prune_repairs_it() {
    let sb = layered();
    sb.write("base", "gone/SKILL.md", "---\ndescription: Going.\n---\n");
    sb.export_skills("out").ok();
    assert_snapshot(
        sb.check_skills("out").ok(),
        snapshot_file("skill_dirs-check-up-to-date.txt"),
    );
    let out = sb.path().join("out");
    std::fs::remove_dir_all(sb.layer("base").join("gone")).unwrap();
    sb.write("team", "writer/references/glossary.md", "# More terms\n");
    sb.write("team", "writer/references/new.md", "# New\n");
    std::fs::remove_file(sb.layer("base").join("writer/references/style.md")).unwrap();
    let run = sb.check_skills("out");
    assert_eq!(run.code, Some(1), "{run:#?}");
    for line in [
        "changed: writer (out/writer/)",
        "    ~ references/glossary.md (8 → 13 bytes)",
        "    + references/new.md",
        "    - references/style.md",
        "removed: gone (out/gone/ has no skill)",
        "2 manifest(s) out of date; run `bernstein skills export --format skill --out out --prune`",
    ] {
        assert!(run.stdout.lines().any(|l| l == line), "{line}: {run:#?}");
    }
    assert_eq!(
        sb.run(&["export", "--format", "skill", "--out", "out", "--prune"])
            .ok_report(),
        "out: 1 written, 0 unchanged, 1 removed, 0 failed\n"
    );
    assert!(!out.join("gone").exists());
    assert!(!out.join("writer/references/style.md").exists());
    sb.check_skills("out").ok();
}

#[test]
fn check_tells_hand_edits_and_hand_added_files_from_changes() {
    let sb = layered();
    sb.export_skills("out").ok();
    let out = sb.path().join("out");
    std::fs::write(out.join("writer/references/style.md"), "tampered\n").unwrap();
    std::fs::write(out.join("writer/references/extra.md"), "extra\n").unwrap();
    std::fs::remove_file(out.join("writer/references/glossary.md")).unwrap();
    let run = sb.check_skills("out");
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert_eq!(
        run.report(),
        "changed: writer (out/writer/)\n    + references/glossary.md\n\
         hand-edited: writer (out/writer/)\n    ~ references/style.md (9 → 13 bytes)\n\
         hand-added: writer (out/writer/)\n    ? references/extra.md\n\
         1 manifest(s) out of date; run `bernstein skills export --format skill --out out --prune` \
         with the flag each line below names\n\
         \x20 hand-edited: export refuses to overwrite these without --force\n\
         \x20 hand-added: export did not write these files and never deletes them; \
         remove them by hand for this check to pass\n"
    );
    // --force restores the edited file; the added one stays.
    let run = sb.run(&["export", "--format", "skill", "--out", "out", "--force"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert_eq!(
        std::fs::read_to_string(out.join("writer/references/style.md")).unwrap(),
        "# Base style\n"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("writer/references/extra.md")).unwrap(),
        "extra\n"
    );
}

#[test]
fn a_new_skill_directory_appears_whole_or_not_at_all() {
    let sb = layered();
    sb.write("base", "broken.yaml", "descripton: typo\n");
    let run = sb.export_skills("out");
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert!(!sb.path().join("out").exists());
    assert_eq!(
        std::fs::read_dir(sb.path())
            .unwrap()
            .filter(|e| e
                .as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with('.'))
            .count(),
        0,
        "no staging directory is left"
    );
}

#[test]
fn writing_never_follows_a_symlink_planted_in_the_output() {
    let sb = layered();
    sb.export_skills("out").ok();
    let out = sb.path().join("out/writer");
    std::fs::create_dir_all(sb.path().join("elsewhere")).unwrap();
    std::fs::write(sb.path().join("elsewhere/keep.md"), "keep\n").unwrap();
    std::fs::remove_dir_all(out.join("references")).unwrap();
    std::os::unix::fs::symlink(sb.path().join("elsewhere"), out.join("references")).unwrap();
    // The link is not something export wrote: refused, never followed.
    let run = sb.export_skills("out");
    assert_snapshot(
        run.failed(),
        snapshot_file("skill_dirs-symlinked-directory.stderr"),
    );
    let check = sb.check_skills("out");
    assert_eq!(check.code, Some(1), "{check:#?}");
    // Forced, the link itself is replaced by a directory.
    sb.run(&["export", "--format", "skill", "--out", "out", "--force"])
        .ok();
    assert_eq!(
        std::fs::read_to_string(sb.path().join("elsewhere/keep.md")).unwrap(),
        "keep\n"
    );
    assert_eq!(
        std::fs::read_dir(sb.path().join("elsewhere"))
            .unwrap()
            .count(),
        1
    );
    assert!(
        std::fs::symlink_metadata(out.join("references"))
            .unwrap()
            .is_dir()
    );
}

/// A body of any shape a SKILL.md must carry byte for byte: blank lines
/// before or after it, an indented first line, lines that read `---`, LF,
/// CRLF and lone CR line endings, no final newline, or empty.
///
/// A body of blank space alone is never generated: read from a SKILL.md it
/// sets nothing (so an override that only changes the frontmatter keeps
/// the lower body), so such an effective body cannot survive the round
/// trip, by design.
fn body() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        Just(String::new()),
        Just("---".to_owned()),
        Just("  indented".to_owned()),
        Just("\tcode".to_owned()),
        Just("# Title".to_owned()),
        Just("...".to_owned()),
        Just("é 🙂 \u{2028}".to_owned()),
        "[a-z ]{0,8}",
    ];
    let eol = prop_oneof![4 => Just("\n"), 1 => Just("\r\n"), 1 => Just("\r")];
    (prop::collection::vec((line, eol), 0..6), any::<bool>())
        .prop_map(|(lines, last_eol)| {
            let mut s = String::new();
            let n = lines.len();
            for (i, (line, eol)) in lines.into_iter().enumerate() {
                s.push_str(&line);
                if i + 1 < n || last_eol {
                    s.push_str(eol);
                }
            }
            s
        })
        .prop_filter("a body of blank space alone sets nothing when read", |b| {
            b.is_empty() || !b.trim().is_empty()
        })
}

/// Writes a generated fragment as `NAME/SKILL.md` (its body, if it has
/// one, below the frontmatter; and a file) or `NAME.yaml`.
fn write_layer(sb: &Sandbox, layer: &str, fields: &Map<String, Value>, md: bool, file: u8) {
    if md {
        let mut fm = fields.clone();
        let body = match fm.remove("body") {
            Some(Value::String(b)) => b,
            _ => format!("# {layer} body"),
        };
        let yaml = serde_json::to_string(&fm).unwrap();
        sb.write(layer, "s/SKILL.md", format!("---\n{yaml}\n---\n\n{body}\n"));
        sb.write(
            layer,
            &format!("s/references/f{}.md", file % 3),
            [layer.as_bytes(), &[file]].concat(),
        );
    } else {
        sb.write(layer, "s.yaml", serde_json::to_string(fields).unwrap());
    }
}

/// A generated fragment with a body of any shape, or none, or `null`.
fn layer() -> impl Strategy<Value = (Map<String, Value>, bool, u8)> {
    let body = prop_oneof![
        2 => Just(None),
        1 => Just(Some(Value::Null)),
        4 => body().prop_map(|b| Some(Value::String(b))),
    ];
    (
        crate::it::merge::props::fragment(),
        body,
        any::<bool>(),
        any::<u8>(),
    )
        .prop_map(|(mut fields, body, md, file)| {
            if let Some(b) = body {
                fields.insert("body".into(), b);
            }
            (fields, md, file)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Exported as a skill directory and read back as a lone base layer,
    /// every skill gives the same effective JSON, files included.
    #[test]
    fn exported_skills_read_back_identically(
        layers in [
            layer().prop_map(Some).boxed(),
            prop::option::weighted(0.6, layer()).boxed(),
            prop::option::weighted(0.6, layer()).boxed(),
        ]
    ) {
        // The round trip is the same under any spec; the classic one takes
        // every generated fragment (the shipped one requires a description).
        let sb = Sandbox::classic().with_layer_dirs();
        for (layer, l) in ["base", "team", "user"].into_iter().zip(&layers) {
            if let Some((fields, md, file)) = l {
                write_layer(&sb, layer, fields, *md, *file);
            }
        }
        let skills = sb.skills();
        // Every generated fragment is valid, so every skill resolves.
        let resolved = skills.resolve("s").unwrap();
        let mut original: Value = resolved.effective().to_value();
        original.as_object_mut().unwrap().remove("layers_present");
        let files = skills.files("s").unwrap();

        let out = sb.path().join("out");
        let done = skills.export_as(&out, Format::Skill, false, 1).unwrap();
        prop_assert!(done.failed.is_empty());
        let skill_md = std::fs::read_to_string(out.join("s/SKILL.md")).unwrap();
        let front = skill_md.split("\n---\n").next().unwrap();
        prop_assert!(!front.contains("\nbody:"), "{skill_md:?}");
        let back = bernstein_skills::Skills::new(
            classic_spec(),
            Layers::from_paths([out.clone(), sb.path().join("none1"), sb.path().join("none2")]),
            bernstein_skills::fragment::DEFAULT_MAX_BYTES,
        );
        let mut again: Value = back.resolve("s").unwrap().effective().to_value();
        again.as_object_mut().unwrap().remove("layers_present");
        prop_assert_eq!(render::to_json(&again), render::to_json(&original));
        let back_files: Vec<(String, Vec<u8>)> = back
            .files("s")
            .unwrap()
            .into_iter()
            .map(|f| (f.rel, std::fs::read(f.source.path).unwrap()))
            .collect();
        let want: Vec<(String, Vec<u8>)> = files
            .into_iter()
            .map(|f| (f.rel, std::fs::read(f.source.path).unwrap()))
            .collect();
        prop_assert_eq!(back_files, want);
    }
}

/// Issue 19: a body that starts with a blank or indented line (set by a
/// YAML override) went into the frontmatter as `body: |2`, and the agent
/// read an empty body below it. It is the body below the frontmatter now,
/// byte for byte, and `validate --strict` checks the same skill.
#[test]
fn a_body_starting_with_a_blank_or_indented_line_is_exported_as_the_body() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "writer/SKILL.md",
        "---\nname: writer\ndescription: Writes docs.\n---\n\n# Writer\n",
    );
    sb.write(
        "team",
        "writer.yaml",
        "body: \"\\n    Indented steps.\\n---\\nMore.\\n\"\n",
    );
    sb.export_skills("out").ok();
    let out = sb.path().join("out");
    assert_eq!(
        std::fs::read_to_string(out.join("writer/SKILL.md")).unwrap(),
        "---\nname: writer\ndescription: Writes docs.\n---\n\n\n    Indented steps.\n---\nMore.\n\n"
    );
    let back = Sandbox::new();
    back.write(
        "base",
        "writer/SKILL.md",
        std::fs::read(out.join("writer/SKILL.md")).unwrap(),
    );
    assert_eq!(
        back.resolve_value("writer")["body"],
        "\n    Indented steps.\n---\nMore.\n"
    );
    back.run(&["validate", "--strict"]).ok();
}
