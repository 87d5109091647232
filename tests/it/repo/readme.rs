//! The README and `docs/` show what really happens. Every shell example is
//! one of two kinds:
//!
//! - a ```` ```console ```` block: `$ command` lines, each followed by the
//!   output it prints (stdout and stderr, as a terminal shows them). Each
//!   document's console blocks run in order in one `bash` session — so `cd`,
//!   `export` and files written by one block carry into the next — started
//!   in a scratch copy of the repository's `examples/`, with an empty
//!   `HOME` and the `bernstein` built by this test run first on `PATH`. The
//!   public collection the README's first example takes
//!   (`https://github.com/anthropics/skills`) is served from a git
//!   repository of `tests/fixtures/public-collection/`, by the `insteadOf`
//!   rule of that `HOME`'s git configuration, as a person's own git
//!   configuration would redirect it to a mirror. The
//!   output must be the one shown, as snapbox matches it: a line `...`
//!   stands for any lines, `[..]` for any text within a line. A command
//!   must exit 0 unless it ends in `# exits N`.
//! - a ```` ```sh ```` block: commands a test cannot run (installing,
//!   building the wheel, the test suite itself). Each of its commands must
//!   appear in a CI script under `.ci/`, which runs it on a clean clone.
//!
//! Other blocks (`yaml`, `toml`, `text`, `json`, …) are files and output,
//! not commands.

use crate::it::support::{copy_dir, git, snapshot_assert};
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The README and every Markdown file in `docs/`, with their names.
fn documents() -> Vec<(String, String)> {
    let mut docs = vec![("README.md".to_owned(), read(&root().join("README.md")))];
    let mut names: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    names.sort();
    for p in names {
        let name = format!("docs/{}", p.file_name().unwrap().to_string_lossy());
        docs.push((name, read(&p)));
    }
    docs
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A fenced block: its info string, its lines, and the line it starts on.
struct Block {
    info: String,
    lines: Vec<String>,
    line: usize,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (n, line) in text.lines().enumerate() {
        match &mut open {
            None => {
                if let Some(info) = line.strip_prefix("```") {
                    open = Some(Block {
                        info: info.trim().to_owned(),
                        lines: Vec::new(),
                        line: n + 1,
                    });
                }
            }
            Some(b) => {
                if line == "```" {
                    out.push(open.take().unwrap());
                } else {
                    b.lines.push(line.to_owned());
                }
            }
        }
    }
    assert!(open.is_none(), "an unclosed code block");
    out
}

/// One `$ command` of a console block and the output shown after it.
#[derive(Debug)]
struct Step {
    command: String,
    expected: Vec<String>,
    code: i32,
    at: String,
    /// The document and the index of the line after the command's last.
    end: (String, usize),
}

fn steps(doc: &str, block: &Block) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    let mut lines = block.lines.iter().enumerate().peekable();
    while let Some((i, line)) = lines.next() {
        let Some(first) = line.strip_prefix("$ ") else {
            let step = out.last_mut().unwrap_or_else(|| {
                panic!("{doc}:{}: a console block starts with `$ `", block.line + 1)
            });
            step.expected.push(line.clone());
            continue;
        };
        let mut command = first.to_owned();
        // Continued lines, and a heredoc's body up to its terminator.
        while command.ends_with('\\') {
            command.push('\n');
            command.push_str(lines.next().expect("a continued line").1);
        }
        if let Some(word) = heredoc_word(&command) {
            for (_, l) in lines.by_ref() {
                command.push('\n');
                command.push_str(l);
                if l == &word {
                    break;
                }
            }
        }
        let code = command
            .lines()
            .next()
            .and_then(|l| l.rsplit_once("# exits "))
            .map_or(0, |(_, n)| n.trim().parse().expect("# exits N"));
        let end = block.line + 1 + i + command.lines().count() - 1;
        out.push(Step {
            command,
            expected: Vec::new(),
            code,
            at: format!("{doc}:{}", block.line + 1 + i),
            end: (doc.to_owned(), end),
        });
    }
    out
}

/// `WORD` of a `<<'WORD'` in the command's first line.
fn heredoc_word(command: &str) -> Option<String> {
    let first = command.lines().next()?;
    let (_, rest) = first.split_once("<<")?;
    let word: String = rest
        .trim_start_matches('-')
        .trim_matches(|c| c == '\'' || c == '"')
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!word.is_empty()).then_some(word)
}

/// Does `got` match the lines `expected`, as snapbox matches (a `...` line
/// stands for any lines, `[..]` for any text within a line)? The error is
/// snapbox's diff.
fn matches(expected: &[String], got: &str) -> Result<(), String> {
    use snapbox::IntoData;
    let lines = |text: String| if text.is_empty() { text } else { text + "\n" };
    let got = lines(got.lines().collect::<Vec<_>>().join("\n"));
    let expected = lines(expected.join("\n"));
    // Always verified (SNAPSHOTS is for snapshot files; the documents have
    // BERNSTEIN_BLESS_DOCS), and plain: the diff goes into a panic message,
    // which no stream strips of colour.
    snapshot_assert()
        .action(snapbox::assert::Action::Verify)
        .palette(snapbox::report::Palette::plain())
        .try_eq(None, got.into_data(), expected.into_data())
        .map_err(|e| e.to_string())
}

/// Runs a document's console steps in one bash session in a scratch
/// directory; returns each step's output and exit code.
fn run_session(steps: &[Step]) -> Vec<(String, i32)> {
    let scratch = tempfile::Builder::new()
        .prefix("bernstein-docs-")
        .tempdir()
        .unwrap();
    let dir = scratch.path().canonicalize().unwrap();
    // A fresh clone in the home directory, as `~/bernstein-skills`.
    let home = dir.join("home");
    let clone = home.join("bernstein-skills");
    std::fs::create_dir_all(&home).unwrap();
    for dir in ["examples", "spec"] {
        copy_dir(&root().join(dir), &clone.join(dir));
    }
    public_collection(&dir.join("mirror"), &home);
    let bin = crate::it::support::bin();
    let mut script = String::from("exec 2>&1\n");
    for (i, s) in steps.iter().enumerate() {
        script.push_str(&format!(
            "printf '\\n\\036{i}\\036\\n'\n{}\nprintf '\\n\\036rc %d\\036\\n' $?\n",
            s.command
        ));
    }
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(&script)
        .env_clear()
        .env("HOME", &home)
        .env(
            "PATH",
            format!(
                "{}:/usr/local/bin:/usr/bin:/bin",
                bin.parent().unwrap().display()
            ),
        )
        .env("CARGO_MANIFEST_DIR", env!("CARGO_MANIFEST_DIR"))
        .env("LANG", "C.UTF-8")
        .current_dir(&clone)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let text = text.replace(&home.display().to_string(), "~");
    let mut results = Vec::new();
    for (i, _) in steps.iter().enumerate() {
        let start = format!("\n\u{1e}{i}\u{1e}\n");
        let after = text
            .split_once(&start)
            .unwrap_or_else(|| panic!("the session stopped before step {i}:\n{text}"))
            .1;
        let (body, rest) = after.split_once("\n\u{1e}rc ").unwrap();
        let code = rest.split('\u{1e}').next().unwrap().parse().unwrap();
        results.push((body.to_owned(), code));
    }
    results
}

/// A git repository of `tests/fixtures/public-collection/` at
/// `mirror/skills`, which `home`'s git configuration gives for
/// `https://github.com/anthropics/skills`.
fn public_collection(mirror: &Path, home: &Path) {
    let repo = mirror.join("skills");
    copy_dir(&root().join("tests/fixtures/public-collection"), &repo);
    std::fs::remove_file(repo.join("README.md")).unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "skills"]);
    std::fs::write(
        home.join(".gitconfig"),
        format!(
            "[user]\n\tname = A. Person\n\temail = person@example.com\n\
             [init]\n\tdefaultBranch = main\n\
             [url \"file://{}/\"]\n\tinsteadOf = https://github.com/anthropics/\n",
            mirror.display()
        ),
    )
    .unwrap();
}

#[test]
fn every_console_example_prints_what_it_shows() {
    let mut failures = Vec::new();
    let mut ran = 0;
    // With BERNSTEIN_BLESS_DOCS=1, a command shown with no output gets the
    // output it prints written below it (to review before committing).
    let bless = std::env::var_os("BERNSTEIN_BLESS_DOCS").is_some();
    let mut blessed: Vec<(String, usize, String)> = Vec::new();
    for (doc, text) in documents() {
        let steps: Vec<Step> = blocks(&text)
            .iter()
            .filter(|b| b.info == "console")
            .flat_map(|b| steps(&doc, b))
            .collect();
        if steps.is_empty() {
            continue;
        }
        for (step, (got, code)) in steps.iter().zip(run_session(&steps)) {
            ran += 1;
            if bless && step.expected.is_empty() && !got.is_empty() {
                blessed.push((step.end.0.clone(), step.end.1, got.clone()));
                continue;
            }
            let matched = matches(&step.expected, &got);
            if code != step.code || matched.is_err() {
                // snapbox's diff of the output, or the output if it matched.
                let output = matched.err().unwrap_or(got);
                failures.push(format!(
                    "{}: $ {}\n-- exit {code}, shown {}; output:\n{output}",
                    step.at, step.command, step.code,
                ));
            }
        }
    }
    blessed.sort_by_key(|b| std::cmp::Reverse(b.1));
    for (doc, end, got) in blessed {
        let path = root().join(&doc);
        let mut lines: Vec<String> = read(&path).lines().map(str::to_owned).collect();
        let at = end.min(lines.len());
        lines.splice(at..at, got.lines().map(str::to_owned));
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(ran > 20, "only {ran} console commands found");
}

/// Issue 42: the README's walkthrough starts from `add` on a collection
/// in a git repository, customises it in the team's layer, commits, and
/// takes an upstream release, in that order; the test above runs it.
#[test]
fn the_readme_walkthrough_adds_customises_commits_and_takes_a_release() {
    let readme = read(&root().join("README.md"));
    let section = readme
        .split_once("\n## A team's workflow\n")
        .expect("the README has a section \"A team's workflow\"")
        .1;
    // Up to the next heading of its level outside a code block.
    let mut fenced = false;
    let mut end = section.len();
    let mut at = 0;
    for line in section.split_inclusive('\n') {
        fenced ^= line.starts_with("```");
        if !fenced && line.starts_with("## ") {
            end = at;
            break;
        }
        at += line.len();
    }
    let section = &section[..end];
    let commands: Vec<String> = blocks(section)
        .iter()
        .filter(|b| b.info == "console")
        .flat_map(|b| steps("README.md", b))
        .map(|s| s.command)
        .collect();
    let mut rest = commands.iter();
    for wanted in [
        "git commit -qm v1",
        "git init -q demo",
        "bernstein skills add ",
        "> .bernstein/skills/",
        "git commit",
        "git commit -qam v2",
        "bernstein skills update --check",
        "bernstein skills update --yes",
        "git commit",
    ] {
        assert!(
            rest.any(|c| c.contains(wanted)),
            "no `{wanted}` where the walkthrough should have it: {commands:#?}"
        );
    }
}

#[test]
fn every_sh_example_is_run_by_ci() {
    let mut ci = String::new();
    for e in std::fs::read_dir(root().join(".ci")).unwrap() {
        let p = e.unwrap().path();
        let files: Vec<PathBuf> = if p.is_dir() {
            std::fs::read_dir(&p)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect()
        } else {
            vec![p]
        };
        for f in files {
            if let Ok(t) = std::fs::read_to_string(&f) {
                ci.push_str(&t);
            }
        }
    }
    let mut missing = Vec::new();
    for (doc, text) in documents() {
        for b in blocks(&text).iter().filter(|b| b.info == "sh") {
            for line in &b.lines {
                let command = line.split(" #").next().unwrap().trim();
                if command.is_empty() || command.starts_with('#') {
                    continue;
                }
                if !ci.contains(command) {
                    missing.push(format!("{doc}:{}: {command}", b.line));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "shown in a ```sh block but run by no CI script:\n{}",
        missing.join("\n")
    );
}

#[test]
fn readme_quickstart_commands_are_the_ones_ci_runs() {
    let readme = read(&root().join("README.md"));
    assert!(readme.contains(
        "cargo run --release -- skills --layers-root examples/layers show writer --per-layer\ncargo test\n"
    ));
    let ci = read(&root().join(".ci/run"));
    assert!(
        ci.contains("\ncargo test\n"),
        ".ci/run must run the README's test command"
    );
    assert!(ci.contains("skills --layers-root examples/layers show writer --per-layer"));
}

#[test]
fn the_readme_stays_short() {
    let lines = read(&root().join("README.md")).lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines; move reference text to docs/"
    );
}

/// GitHub's anchor of a heading: lowercase, punctuation dropped but `-`
/// and `_`, spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn every_relative_link_leads_to_a_file_and_heading_that_exist() {
    let mut broken = Vec::new();
    for (doc, text) in documents() {
        let dir = root().join(&doc).parent().unwrap().to_path_buf();
        for (_, rest) in text.match_indices("](").map(|(i, _)| text.split_at(i + 2)) {
            let target = rest.split(')').next().unwrap();
            if target.contains("://") || target.starts_with("mailto:") || target.contains(' ') {
                continue;
            }
            let (file, frag) = target.split_once('#').unwrap_or((target, ""));
            let path = if file.is_empty() {
                root().join(&doc)
            } else {
                dir.join(file)
            };
            if !path.exists() {
                broken.push(format!("{doc}: {target} (no such file)"));
                continue;
            }
            if frag.is_empty() || path.is_dir() {
                continue;
            }
            let headings: Vec<String> = read(&path)
                .lines()
                .filter_map(|l| l.strip_prefix('#'))
                .map(|l| anchor(l.trim_start_matches('#')))
                .collect();
            if !headings.iter().any(|h| h == frag) {
                broken.push(format!("{doc}: {target} (no such heading)"));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}
