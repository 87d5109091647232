//! The scheduled job of `docs/upstream.md` (issue 42, "the report where
//! a team reviews it"), run as the document writes it: its ```` ```sh
//! scheduled-job ```` block is taken from the document and run by bash in
//! a fresh clone of a project, with a home directory of its own (an empty
//! cache, no configuration), against a local upstream that has made a
//! release. Only the command that opens the pull request is a stand-in:
//! a `gh` first on `PATH` that records what it is asked and keeps the
//! body it is given.

use std::path::{Path, PathBuf};

use crate::it::support::{
    Machine, Sandbox, Upstream, assert_snapshot, bin, clone, commit_all, git, snapshot_file,
    stable, synced_project,
};

/// The shell steps of the scheduled job, as `docs/upstream.md` shows
/// them.
fn job() -> String {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/upstream.md"))
            .unwrap();
    let mut blocks = doc.split("\n```sh scheduled-job\n").skip(1);
    let block = blocks
        .next()
        .expect("docs/upstream.md has a scheduled-job block");
    assert!(blocks.next().is_none(), "one scheduled-job block");
    let (steps, _) = block.split_once("\n```\n").expect("the block is closed");
    format!("{steps}\n")
}

/// A stand-in for `gh` in `dir`: it appends its arguments to
/// `dir/gh.log`, one line each and a blank line after, copies the file
/// `--body-file` names to `dir/body.md`, and refuses a second `pr create`
/// as GitHub refuses a second pull request of one branch.
fn stub_gh(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).unwrap();
    let d = dir.display();
    let script = format!(
        "#!/bin/sh\n\
         printf '%s\\n' \"$@\" '' >> '{d}/gh.log'\n\
         if [ \"$1 $2\" = 'pr create' ]; then\n\
         \x20 [ -e '{d}/open' ] && {{ echo 'a pull request for this branch already exists' >&2; exit 1; }}\n\
         \x20 touch '{d}/open'\n\
         fi\n\
         while [ $# -gt 0 ]; do\n\
         \x20 [ \"$1\" = --body-file ] && cp \"$2\" '{d}/body.md'\n\
         \x20 shift\n\
         done\n\
         exit 0\n"
    );
    let gh = dir.join("gh");
    std::fs::write(&gh, script).unwrap();
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Runs the job in `work` on `machine`, with `stubs` first on `PATH`;
/// returns its exit code and what it printed.
fn run_job(machine: &Machine<'_>, work: &Path, stubs: &Path) -> (i32, String) {
    let path = format!(
        "{}:{}:/usr/local/bin:/usr/bin:/bin",
        stubs.display(),
        bin().parent().unwrap().display()
    );
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(job())
        .env_clear()
        .env("HOME", &machine.home)
        .env("PATH", path)
        .env("LANG", "C.UTF-8")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("CARGO_MANIFEST_DIR", env!("CARGO_MANIFEST_DIR"))
        .current_dir(work)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// The upstream's first release: three skills, `docx` with a section the
/// team replaces.
fn upstream(sb: &Sandbox) -> Upstream {
    let up = Upstream::new(sb, "up");
    up.skill(
        "pdf",
        "Reads PDF files.",
        "# PDF\n\nRead it.\n\n## Install\n\npip install pypdf\n",
    )
    .write("pdf/scripts/fill.py", "print('fill')\n")
    .skill(
        "docx",
        "Writes Word files.",
        "# DOCX\n\nWrite it.\n\n## Dependencies\n\npip install python-docx\n",
    )
    .skill("xlsx", "Reads spreadsheets.", "# XLSX\n\nRead it.\n");
    up.commit();
    up
}

/// A project that syncs the upstream into Claude Code's place, with the
/// team's `docx` replacing upstream's `Dependencies`, committed and
/// published as `origin.git`.
fn project(sb: &Sandbox, up: &Upstream) -> PathBuf {
    let alice = Machine::new(sb, "alice");
    let (project, _) = synced_project(&alice, up, &["claude-code"]);
    let team = project.join(".bernstein/skills/docx");
    std::fs::create_dir_all(&team).unwrap();
    std::fs::write(
        team.join("SKILL.md"),
        "<!-- $patch: sections -->\n## Dependencies\n\nThe team's mirror has them: `pip install -i https://pypi.internal python-docx`.\n",
    )
    .unwrap();
    alice.run(&project, &["sync"]).success();
    commit_all(&project);
    git(
        sb.path(),
        &["clone", "-q", "--bare", "project", "origin.git"],
    );
    sb.path().join("origin.git")
}

/// `git show` of `rev:path` in `repo`.
fn show(repo: &Path, rev: &str, path: &str) -> String {
    git(repo, &["show", &format!("{rev}:{path}")])
}

const BRANCH: &str = "skills/upstream-release";

#[test]
fn the_documented_job_takes_a_release_into_a_pull_request_once() {
    let sb = Sandbox::new();
    let up = upstream(&sb);
    let origin = project(&sb, &up);
    let main_before = git(&origin, &["rev-parse", "main"]);
    let stubs = sb.path().join("stubs");
    stub_gh(&stubs);

    // Nothing upstream yet: the job stops at its first step.
    let ci = Machine::new(&sb, "ci");
    let work = clone(&sb, &origin, "ci-0");
    let (code, out) = run_job(&ci, &work, &stubs);
    assert_eq!((code, out.as_str()), (0, "every source is up to date\n"));
    assert!(!stubs.join("gh.log").exists());

    // The release: a description, the section the team replaced
    // rewritten, a script made executable, a skill removed.
    up.skill(
        "pdf",
        "Reads and fills PDF files.",
        "# PDF\n\nRead it.\n\n## Install\n\npip install pypdf\n",
    )
    .skill(
        "docx",
        "Writes Word files.",
        "# DOCX\n\nWrite it.\n\n## Dependencies\n\npip install python-docx lxml\n",
    )
    .executable("pdf/scripts/fill.py")
    .remove("xlsx");
    up.commit();

    let ci = Machine::new(&sb, "ci-fresh");
    let work = clone(&sb, &origin, "ci-1");
    let (code, out) = run_job(&ci, &work, &stubs);
    assert_eq!(code, 0, "{out}");
    // The pull request, and its body: the update report in Markdown.
    let log = std::fs::read_to_string(stubs.join("gh.log")).unwrap();
    let args: Vec<&str> = log.lines().collect();
    assert_eq!(
        args[..7],
        [
            "pr",
            "create",
            "--head",
            BRANCH,
            "--title",
            "Take the skills' upstream release",
            "--body-file"
        ],
        "{log}"
    );
    let body = std::fs::read_to_string(stubs.join("body.md")).unwrap();
    assert_snapshot(
        stable(&body, &up.commits()),
        snapshot_file("upstream-job-body.md"),
    );
    // The branch pushed: the lock, and the export of the new release,
    // the team's section kept, the removed skill gone; main untouched.
    assert_eq!(git(&origin, &["rev-parse", "main"]), main_before);
    assert_eq!(
        git(&origin, &["log", "--format=%s", "-1", BRANCH]),
        "Take the skills' upstream release"
    );
    let changed = git(
        &origin,
        &["diff", "--name-status", "--no-renames", "main", BRANCH],
    );
    assert_snapshot(
        format!("{changed}\n"),
        snapshot_file("upstream-job-committed.txt"),
    );
    let pdf = show(&origin, BRANCH, ".claude/skills/pdf/SKILL.md");
    assert!(
        pdf.contains("description: Reads and fills PDF files."),
        "{pdf}"
    );
    let docx = show(&origin, BRANCH, ".claude/skills/docx/SKILL.md");
    assert!(docx.contains("The team's mirror has them"), "{docx}");
    assert!(!docx.contains("lxml"), "{docx}");
    let lock = show(&origin, BRANCH, ".bernstein/sources.lock");
    assert!(lock.contains(&up.commits()[1]), "{lock}");
    assert!(
        lock.contains("executable = [\"pdf/scripts/fill.py\"]"),
        "{lock}"
    );

    // Next week, the pull request still open: the same branch, and the
    // open pull request gets the new body.
    let ci = Machine::new(&sb, "ci-next");
    let work = clone(&sb, &origin, "ci-2");
    let (code, out) = run_job(&ci, &work, &stubs);
    assert_eq!(code, 0, "{out}");
    let log = std::fs::read_to_string(stubs.join("gh.log")).unwrap();
    let last: Vec<&str> = log
        .trim_end()
        .rsplit("\n\n")
        .next()
        .unwrap()
        .lines()
        .collect();
    assert_eq!(last[..3], ["pr", "edit", BRANCH], "{log}");

    // Merged: the job finds nothing to do.
    git(&origin, &["update-ref", "refs/heads/main", BRANCH]);
    let ci = Machine::new(&sb, "ci-merged");
    let work = clone(&sb, &origin, "ci-3");
    let log_before = std::fs::read_to_string(stubs.join("gh.log")).unwrap();
    let (code, out) = run_job(&ci, &work, &stubs);
    assert_eq!((code, out.as_str()), (0, "every source is up to date\n"));
    assert_eq!(
        std::fs::read_to_string(stubs.join("gh.log")).unwrap(),
        log_before
    );
}
