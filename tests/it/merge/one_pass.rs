//! One pass per command (issue 29): a resolved skill is an owned result
//! that outlives the loaded layers, and holds the one merge every later
//! step uses.

use crate::it::support::{Sandbox, snapshot};

/// Resolved skills are kept after the `Skills` that read them is gone (a
/// long-running caller, a Python binding), and moved to another thread.
#[test]
fn a_resolved_skill_outlives_the_layers_it_was_read_from() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "writer.yaml",
        "description: Writes.\ntrigger_keywords: [w]\n",
    );
    sb.write("user", "writer.toml", "description = \"Writes well.\"\n");
    let resolved = {
        let skills = sb.skills();
        skills.resolve("writer").expect("writer resolves")
    };
    let resolved = std::thread::spawn(move || resolved).join().unwrap();
    assert_eq!(resolved.name(), "writer");
    assert_eq!(resolved.fragments().len(), 2);
    assert_eq!(
        resolved.effective().to_value()["description"],
        "Writes well."
    );
    assert_eq!(
        sb.resolve_json("writer"),
        bernstein_skills::output::render::to_json(&resolved.effective().to_value())
    );
}

/// The merge is made once: every call gives the very same result.
#[test]
fn the_effective_skill_is_merged_once_per_resolution() {
    let sb = Sandbox::new();
    sb.write("base", "writer.yaml", "description: Writes.\n");
    let skills = sb.skills();
    let resolved = skills.resolve("writer").unwrap();
    assert!(std::ptr::eq(resolved.effective(), resolved.effective()));
}

/// The library takes the working directory from `Env` only: a relative
/// layer root and a relative output directory are found in the `Env`'s
/// working directory, not the process's.
#[test]
fn relative_paths_are_taken_from_the_env_working_directory() {
    use bernstein_skills::source::LayerFlags;
    use bernstein_skills::{Env, Layers, Skills};
    let sb = Sandbox::new();
    sb.write("base", "writer.yaml", "description: Writes.\n");
    let cwd = sb.path().canonicalize().unwrap();
    let env = Env {
        cwd: Some(cwd.clone()),
        ..Env::default()
    };
    let flags = LayerFlags {
        root: Some(sb.root().strip_prefix(sb.path()).unwrap().to_path_buf()),
        ..LayerFlags::default()
    };
    let layers = Layers::choose(&env, &flags);
    let skills = Skills::new(crate::it::support::shipped_spec(), layers, 1 << 20);
    assert_eq!(skills.resolve("writer").unwrap().name(), "writer");
    let out = format!("out-{}", std::process::id());
    let done = skills.export(std::path::Path::new(&out), false, 1).unwrap();
    assert_eq!(done.written, ["writer"]);
    assert!(cwd.join(&out).join("writer.json").is_file());
    assert!(!std::path::Path::new(&out).exists());
}

/// What validate warns about a skill, each in the words `show` prints.
fn warned(diagnostics: &[bernstein_skills::Diagnostic]) -> Vec<String> {
    diagnostics
        .iter()
        .filter(|d| d.severity != bernstein_skills::Severity::Error)
        .map(ToString::to_string)
        .collect()
}

/// The warnings a command prints with a skill are validate's, found from
/// the skill it resolved: the file is not read again, so a change made
/// after the skill was resolved neither adds a warning nor takes one away.
#[test]
fn warnings_are_found_from_the_skill_as_resolved() {
    let sb = Sandbox::new();
    sb.write("base", "writer.yaml", "description: Writes.\n");
    sb.write("team", "writer.yaml", "name: scribe\n");
    let skills = sb.skills();
    let resolved = skills.resolve("writer").unwrap();
    let validated = skills.validate(Some(&["writer".to_owned()]), 1);
    let expected = warned(&validated.diagnostics);
    assert!(
        expected.iter().any(|w| w.contains("'scribe'")),
        "the team file's name differs from the file's: {expected:?}"
    );
    sb.write("team", "writer.yaml", "name: writer\n");
    assert_eq!(warned(&skills.warnings(&resolved)), expected);
    // Resolved again, the skill has the team file's new name.
    let again = skills.resolve("writer").unwrap();
    assert_eq!(warned(&skills.warnings(&again)), Vec::<String>::new());
}

/// Export gives, when asked, validate's warnings about each skill it
/// writes (found from the skill it resolved to write it), into a new
/// directory and into one it wrote before; none about a skill it leaves
/// as it is.
#[test]
fn export_gives_the_warnings_of_each_skill_written() {
    use bernstein_skills::export::{ExportOptions, Format};
    let sb = Sandbox::new();
    sb.write("base", "writer.yaml", "description: Writes.\n");
    sb.write("team", "writer.yaml", "name: scribe\n");
    sb.write("base", "reviewer.yaml", "description: Reviews.\n");
    let skills = sb.skills();
    let validated = skills.validate(None, 1);
    let expected = warned(&validated.diagnostics);
    assert_eq!(expected.len(), 1, "{expected:?}");
    let out = sb.path().join("out");
    // The ledger that lets a later export replace what this one wrote.
    let state = sb.path().join("state");
    let options = ExportOptions {
        format: Format::Json,
        jobs: 2,
        state_dir: Some(&state),
        warnings: true,
        ..ExportOptions::default()
    };
    // A new directory not made because a skill fails: nothing written,
    // nothing to warn about.
    // (The broken skill comes last, on one worker: the others are
    // written into the staging directory first.)
    sb.write("base", "zz-broken.yaml", "unknown_field: 1\n");
    let not_made = sb.path().join("not-made");
    let one_job = ExportOptions {
        jobs: 1,
        adopt: Vec::new(),
        ..options
    };
    let done = sb.skills().export_with(&not_made, &one_job).unwrap();
    assert_eq!((done.written.len(), done.not_written), (0, 2), "{done:?}");
    assert!(done.warnings.is_empty(), "{done:?}");
    std::fs::remove_file(sb.layer("base").join("zz-broken.yaml")).unwrap();
    let done = skills.export_with(&out, &options).unwrap();
    assert_eq!(done.written, ["reviewer", "writer"]);
    assert_eq!(warned(&done.warnings), expected);
    // Nothing to write: nothing to warn about.
    let done = skills.export_with(&out, &options).unwrap();
    assert!(
        done.written.is_empty() && done.warnings.is_empty(),
        "{done:?}"
    );
    // Into the directory it wrote: the changed skill is written, with its
    // warning.
    sb.write("user", "writer.yaml", "description: Writes well.\n");
    let skills = sb.skills();
    let done = skills.export_with(&out, &options).unwrap();
    assert_eq!(done.written, ["writer"], "{done:?}");
    assert_eq!(warned(&done.warnings), expected);
    // Not asked for: none.
    sb.write("user", "writer.yaml", "description: Writes better.\n");
    let done = skills
        .export_with(
            &out,
            &ExportOptions {
                warnings: false,
                ..options
            },
        )
        .unwrap();
    assert_eq!(done.written, ["writer"], "{done:?}");
    assert!(done.warnings.is_empty(), "{done:?}");
}

/// Bytes this thread has read from files (`rchar` of its
/// `/proc/thread-self/io`): an export on one job runs on the calling
/// thread, so tests running beside it do not count.
fn read_by_this_thread() -> u64 {
    let io = std::fs::read_to_string("/proc/thread-self/io").expect("Linux gives /proc");
    io.lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .and_then(|n| n.parse().ok())
        .expect("an rchar line")
}

/// A strict export finds what validate would report from the skills it
/// resolves to write them, each fragment read once: not validate's pass
/// and then the export's. With any problem it writes nothing, into a new
/// directory or one it wrote before, and gives them in validate's order
/// and words.
#[test]
fn a_strict_export_checks_each_skill_as_it_resolves_it() {
    use bernstein_skills::Error;
    use bernstein_skills::export::{ExportOptions, Format};
    // Fragments large enough that reading them dwarfs every other read.
    const PAD: usize = 300_000;
    let padded = |yaml: &str| format!("{yaml}# {}\n", "x".repeat(PAD));
    let sb = Sandbox::new();
    sb.write("base", "writer.yaml", padded("description: Writes.\n"));
    sb.write("team", "writer.yaml", padded("trigger_keywords: [w]\n"));
    sb.write("base", "reviewer.yaml", "description: Reviews.\n");
    let fragments = 2 * PAD as u64;
    let out = sb.path().join("out");
    let state = sb.path().join("state");
    let options = ExportOptions {
        format: Format::Json,
        jobs: 1,
        state_dir: Some(&state),
        strict: true,
        ..ExportOptions::default()
    };
    let strict_export = |dir: &std::path::Path| {
        let skills = sb.skills();
        let before = read_by_this_thread();
        let done = skills.export_with(dir, &options);
        (done, read_by_this_thread() - before)
    };
    let (done, read) = strict_export(&out);
    assert_eq!(done.unwrap().written, ["reviewer", "writer"]);
    assert!(
        (fragments..fragments * 3 / 2).contains(&read),
        "read {read} bytes for {fragments} bytes of fragments"
    );
    // Into the directory it wrote, the changed skill.
    sb.write("user", "writer.yaml", "description: Writes well.\n");
    let (done, read) = strict_export(&out);
    assert_eq!(done.unwrap().written, ["writer"]);
    assert!(
        (fragments..fragments * 3 / 2).contains(&read),
        "read {read} bytes for {fragments} bytes of fragments"
    );

    // An override with no effect: a warning, which strict refuses.
    sb.write("user", "reviewer.yaml", "description: Reviews.\n");
    sb.write("user", "writer.yaml", "description: Writes better.\n");
    let expected: Vec<String> = sb
        .skills()
        .validate(None, 1)
        .diagnostics
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(expected.len(), 1, "{expected:?}");
    let was = snapshot(&out);
    for dir in [&out, &sb.path().join("new")] {
        let problems = match strict_export(dir).0 {
            Err(Error::Strict { problems }) => problems,
            other => panic!("{other:?}"),
        };
        let problems: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(problems, expected);
    }
    assert_eq!(snapshot(&out), was, "nothing written or removed");
    assert!(!sb.path().join("new").exists());
}

/// A command that lists a skill's own files (`explain`, `show --files`)
/// hands the listing to the warnings, which are the same as when they list
/// the files themselves.
#[test]
fn warnings_from_listed_files_are_the_warnings() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "writer/SKILL.md",
        "---\ndescription: Writes.\nreferences: [style.md, gone.md]\n---\nBody.\n",
    );
    sb.write("base", "writer/references/style.md", "Short sentences.\n");
    sb.write("team", "writer.yaml", "description: Writes.\n");
    let skills = sb.skills();
    let resolved = skills.resolve("writer").unwrap();
    let files = skills.files("writer").unwrap();
    let expected = warned(&skills.warnings(&resolved));
    // The missing reference and the override with no effect.
    assert_eq!(expected.len(), 2, "{expected:?}");
    assert_eq!(
        warned(&skills.warnings_with_files(&resolved, &files)),
        expected
    );
}
