//! The sandbox every test runs in: a fresh temporary directory holding a
//! layer tree (`layers/base`, `layers/team`, `layers/user`), a home directory
//! and anything else a test writes, plus helpers to run the library and the
//! `bernstein` binary against it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use bernstein_skills::fragment::DEFAULT_MAX_BYTES;
use bernstein_skills::{Layers, MergeSpec, Skills, output::render};

/// The layer labels, lowest precedence first.
pub const LAYERS: [&str; 3] = ["base", "team", "user"];

/// How long one CLI run may take before the test fails (debug build, slow CI).
pub const QUICK: Duration = Duration::from_secs(10);

/// The spec shipped in this repository.
pub fn shipped_spec_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("spec/mergespec.yaml")
}

/// The shipped spec, loaded.
pub fn shipped_spec() -> MergeSpec {
    MergeSpec::load(&shipped_spec_path()).expect("the shipped spec loads")
}

/// The spec this repository shipped before it declared the Agent Skills
/// standard's fields and constraints, kept verbatim: the merge tests run
/// on it, pinning that a spec without the new attributes loads and merges
/// exactly as before.
pub fn classic_spec_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mergespec-classic.yaml")
}

/// The classic spec, loaded.
pub fn classic_spec() -> MergeSpec {
    MergeSpec::load(&classic_spec_path()).expect("the classic spec loads")
}

/// A fresh temporary directory with a layer tree under `layers/`.
pub struct Sandbox {
    dir: tempfile::TempDir,
    /// The spec used instead of the shipped one, if any.
    spec: Option<PathBuf>,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Sandbox {
    /// An empty sandbox: no layer directory exists yet.
    pub fn new() -> Sandbox {
        let dir = tempfile::Builder::new()
            .prefix("bernstein-it-")
            .tempdir()
            .expect("create a temporary directory");
        Sandbox { dir, spec: None }
    }

    /// An empty sandbox made in `parent` (a file system the test is
    /// about), or `None` where `parent` cannot hold one.
    pub fn new_in(parent: &Path) -> Option<Sandbox> {
        let dir = tempfile::Builder::new()
            .prefix("bernstein-it-")
            .tempdir_in(parent)
            .ok()?;
        Some(Sandbox { dir, spec: None })
    }

    /// This sandbox with its layers a copy of `examples/<name>/` (its
    /// `base`, `team` and `user`), at the sandbox's fixed layout: the output
    /// names them `[ROOT]/layers/...` on any machine.
    pub fn with_example(self, name: &str) -> Sandbox {
        copy_dir(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("examples")
                .join(name),
            &self.root(),
        );
        self
    }

    /// An empty sandbox whose library pipeline and CLI runs use the classic
    /// spec ([`classic_spec_path`]) instead of the shipped one.
    pub fn classic() -> Sandbox {
        Sandbox {
            spec: Some(classic_spec_path()),
            ..Sandbox::new()
        }
    }

    /// An empty sandbox whose library pipeline and CLI runs use the spec
    /// `text`, written to `spec.yaml` in the sandbox (outside the layers).
    pub fn with_spec(text: &str) -> Sandbox {
        let mut sb = Sandbox::new();
        sb.spec = Some(sb.write_file("spec.yaml", text));
        sb
    }

    /// The sandbox directory itself.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The layers root (`--layers-root`): `<sandbox>/layers`.
    pub fn root(&self) -> PathBuf {
        self.path().join("layers")
    }

    /// The directory of one layer (`base`, `team`, `user`).
    pub fn layer(&self, layer: &str) -> PathBuf {
        self.root().join(layer)
    }

    /// Creates the three layer directories, empty.
    pub fn with_layer_dirs(self) -> Sandbox {
        for l in LAYERS {
            std::fs::create_dir_all(self.layer(l)).unwrap();
        }
        self
    }

    /// Writes `contents` to `<layer>/<rel>`, creating directories; returns the path.
    pub fn write(&self, layer: &str, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        create_file(&self.layer(layer).join(rel), contents)
    }

    /// Writes `contents` to `rel` below the sandbox directory.
    pub fn write_file(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        create_file(&self.path().join(rel), contents)
    }

    /// The library pipeline over this sandbox's layers with the sandbox's
    /// spec (the shipped one unless [`Sandbox::classic`]).
    pub fn skills(&self) -> Skills {
        let spec = match &self.spec {
            Some(path) => MergeSpec::load(path).expect("the sandbox's spec loads"),
            None => shipped_spec(),
        };
        self.skills_with(spec, DEFAULT_MAX_BYTES)
    }

    /// The library pipeline with another spec or size cap.
    pub fn skills_with(&self, spec: MergeSpec, max_bytes: u64) -> Skills {
        Skills::new(spec, Layers::from_root(&self.root()), max_bytes)
    }

    /// The effective skill `name` as the deterministic JSON `show` prints.
    pub fn resolve_json(&self, name: &str) -> String {
        let skills = self.skills();
        let resolved = skills
            .resolve(name)
            .unwrap_or_else(|e| panic!("resolve {name}: {e}"));
        render::to_json(&resolved.effective().to_value())
    }

    /// The effective skill `name` as a JSON value.
    pub fn resolve_value(&self, name: &str) -> serde_json::Value {
        serde_json::from_str(&self.resolve_json(name)).unwrap()
    }

    /// `bernstein` with a hermetic environment: nothing inherited, `HOME`
    /// pointing at an empty directory inside the sandbox, no arguments.
    pub fn bare(&self) -> Command {
        let home = self.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let mut cmd = Command::cargo_bin("bernstein").expect("the bernstein binary is built");
        cmd.env_clear().env("HOME", &home).current_dir(self.path());
        // What `cargo test` gives every process it runs, and what a
        // development build looks for to find its source tree's spec
        // wherever CARGO_TARGET_DIR put the binary.
        cmd.env("CARGO_MANIFEST_DIR", env!("CARGO_MANIFEST_DIR"));
        cmd
    }

    /// `bernstein skills --layers-root <root> ARGS...` (with `--spec` for a
    /// [`Sandbox::classic`] or [`Sandbox::with_spec`] one).
    pub fn skills_cmd(&self, args: &[&str]) -> Command {
        let mut cmd = self.bare();
        cmd.arg("skills").arg("--layers-root").arg(self.root());
        if let Some(spec) = &self.spec {
            cmd.arg("--spec").arg(spec);
        }
        cmd.args(args);
        cmd
    }

    /// Runs `bernstein skills --layers-root <root> ARGS...`.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_cmd(self.skills_cmd(args))
    }

    /// Runs `bernstein skills --layers-root <root> ARGS...` and checks its
    /// [`Run::transcript`] (exit code, stdout and stderr) is the snapshot
    /// file `name`.
    #[track_caller]
    pub fn pin(&self, args: &[&str], name: &str) -> Run {
        let run = self.run(args);
        assert_snapshot(run.transcript(args), snapshot_file(name));
        run
    }

    /// Runs `export --format skill --out DIR`: every skill as a directory
    /// an agent loads, in `dir` (relative to the sandbox).
    pub fn export_skills(&self, dir: &str) -> Run {
        self.run(&["export", "--format", "skill", "--out", dir])
    }

    /// Runs `export --format skill --check DIR`: is `dir` what
    /// [`Sandbox::export_skills`] would write?
    pub fn check_skills(&self, dir: &str) -> Run {
        self.run(&["export", "--format", "skill", "--check", dir])
    }

    /// Runs `bernstein skills --layers-root layers ARGS...` in the sandbox
    /// directory: the layers' paths it prints are relative
    /// (`layers/team/...`), so columns aligned on them are as wide on any
    /// machine, wherever the temporary directory is.
    pub fn run_relative(&self, args: &[&str]) -> Run {
        let mut cmd = self.bare();
        cmd.args(["skills", "--layers-root", "layers"]);
        if let Some(spec) = &self.spec {
            cmd.arg("--spec").arg(spec);
        }
        cmd.args(args);
        self.run_cmd(cmd)
    }

    /// Runs a prepared command, timing it, with this sandbox's path in its
    /// output replaced by `[ROOT]`.
    pub fn run_cmd(&self, mut cmd: Command) -> Run {
        let start = Instant::now();
        // A binary a test has just copied may still be open for writing in
        // a child another thread forked meanwhile ("text file busy"): the
        // kernel's answer until that child execs; try again.
        let mut tries = 0;
        let out = loop {
            match cmd.output() {
                Err(e) if e.raw_os_error() == Some(26) && tries < 50 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                r => break r.expect("run bernstein"),
            }
        };
        let elapsed = start.elapsed();
        let scrub = |b: &[u8]| {
            let s = String::from_utf8(b.to_vec()).expect("output is UTF-8");
            s.replace(&self.path().display().to_string(), "[ROOT]")
        };
        Run {
            code: out.status.code(),
            stdout: scrub(&out.stdout),
            stderr: scrub(&out.stderr),
            elapsed,
        }
    }
}

/// Writes `contents` to `path`, creating the directories above it;
/// returns the path.
pub fn create_file(path: &Path, contents: impl AsRef<[u8]>) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, contents).unwrap();
    path.to_path_buf()
}

/// The SHA-256 of `bytes`, in lowercase hex: how the lock and the export
/// record write a digest.
pub fn sha256_hex(bytes: impl AsRef<[u8]>) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Asserts that `doc` is valid under `schemas/output/<command>.schema.json`,
/// the schema of `command`'s `--json` output.
#[track_caller]
pub fn assert_output_schema(command: &str, doc: &serde_json::Value) {
    let validator = jsonschema::draft202012::new(&output_schema(command))
        .unwrap_or_else(|e| panic!("{command}.schema.json: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{command}: {errors:#?}\n{}",
        serde_json::to_string_pretty(doc).unwrap()
    );
}

/// The schema of `command`'s `--json` output.
pub fn output_schema(command: &str) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schemas/output")
        .join(format!("{command}.schema.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// What one run of the binary did.
#[derive(Debug)]
pub struct Run {
    /// The exit code (`None` if killed by a signal).
    pub code: Option<i32>,
    /// Stdout, sandbox path replaced by `[ROOT]`.
    pub stdout: String,
    /// Stderr, sandbox path replaced by `[ROOT]`.
    pub stderr: String,
    /// Wall-clock time.
    pub elapsed: Duration,
}

impl Run {
    /// The exit code, stdout and stderr headed by the run's arguments `args`:
    /// one part of a snapshot file that holds several runs.
    pub fn transcript(&self, args: &[&str]) -> String {
        format!(
            "$ skills {}\nexit {}\n--- stdout\n{}--- stderr\n{}",
            args.join(" "),
            self.code
                .map_or("by a signal".to_owned(), |c| c.to_string()),
            self.stdout,
            self.stderr
        )
    }

    /// Stdout and stderr together, for what may be on either.
    pub fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }

    /// Stdout after the lines that say where each layer came from
    /// (`base: DIR (from --layers-root)`), which `validate` prints first:
    /// its diagnostics and summary.
    pub fn report(&self) -> &str {
        without_places(&self.stdout)
    }

    /// stderr without the lines saying where each layer is, which a
    /// failed export prints before its errors.
    pub fn error_report(&self) -> &str {
        without_places(&self.stderr)
    }
}

/// `text` without its leading `base:`, `team:` and `user:` lines.
fn without_places(text: &str) -> &str {
    {
        let mut rest = text;
        for label in LAYERS {
            if let Some(after) = rest.strip_prefix(label).and_then(|r| r.strip_prefix(": "))
                && let Some((_, tail)) = after.split_once('\n')
            {
                rest = tail;
            }
        }
        rest
    }
}

impl Run {
    /// [`Run::ok`], then [`Run::report`].
    pub fn ok_report(&self) -> &str {
        self.ok();
        self.report()
    }

    /// Exit 0, nothing on stderr; returns stdout.
    pub fn ok(&self) -> &str {
        assert_eq!(self.code, Some(0), "expected success: {self:#?}");
        assert_eq!(self.stderr, "", "expected an empty stderr: {self:#?}");
        &self.stdout
    }

    /// Exit 1 with the report on stdout (`validate`, `export --check`,
    /// `--json` errors) and nothing on stderr; returns stdout.
    pub fn failed_report(&self) -> &str {
        assert_eq!(self.code, Some(1), "expected exit code 1: {self:#?}");
        assert_eq!(self.stderr, "", "the report is stdout: {self:#?}");
        &self.stdout
    }

    /// Exit 0 (stderr may hold warnings); returns stdout.
    pub fn success(&self) -> &str {
        assert_eq!(self.code, Some(0), "expected success: {self:#?}");
        &self.stdout
    }

    /// Stdout parsed as JSON, after checking the run exited 0 (stderr may
    /// hold warnings).
    pub fn json_ignoring_stderr(&self) -> serde_json::Value {
        serde_json::from_str(self.success())
            .unwrap_or_else(|e| panic!("stdout is JSON ({e}): {self:#?}"))
    }

    /// Stdout parsed as JSON, after checking the run succeeded.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.ok())
            .unwrap_or_else(|e| panic!("stdout is JSON ({e}): {self:#?}"))
    }

    /// Exit 1, nothing on stdout, no panic, finished quickly; returns stderr.
    pub fn failed(&self) -> &str {
        assert_eq!(self.code, Some(1), "expected exit code 1: {self:#?}");
        assert_eq!(
            self.stdout, "",
            "stdout must stay empty on error: {self:#?}"
        );
        assert!(!self.stderr.contains("panicked"), "panic: {self:#?}");
        assert!(self.elapsed < QUICK, "took {:?}: {self:#?}", self.elapsed);
        &self.stderr
    }

    /// Exit 2 (usage), nothing on stdout; returns stderr.
    pub fn usage_error(&self) -> &str {
        assert_eq!(self.code, Some(2), "expected exit code 2: {self:#?}");
        assert_eq!(
            self.stdout, "",
            "stdout must stay empty on error: {self:#?}"
        );
        assert!(!self.stderr.contains("panicked"), "panic: {self:#?}");
        &self.stderr
    }

    /// A failed run whose first stderr line is `<prefix>:L:C: error: ...`, with
    /// `prefix` being a path below `[ROOT]/layers/`. Returns `(line, column, message)`.
    pub fn located_error(&self, file: &str) -> (usize, usize, String) {
        self.failed();
        let first = self.error_report().lines().next().unwrap_or_default();
        let prefix = format!("[ROOT]/layers/{file}:");
        let rest = first
            .strip_prefix(&prefix)
            .unwrap_or_else(|| panic!("expected an error located in {prefix}: {self:#?}"));
        let parse = |s: &str| s.parse::<usize>().ok();
        let mut parts = rest.splitn(3, ':');
        let (line, col, tail) = (parts.next(), parts.next(), parts.next());
        match (line.and_then(parse), col.and_then(parse), tail) {
            (Some(l), Some(c), Some(msg)) if msg.starts_with(" error: ") && l > 0 && c > 0 => {
                (l, c, msg[" error: ".len()..].to_owned())
            }
            _ => panic!("expected `{prefix}LINE:COL: error: ...`: {self:#?}"),
        }
    }
}

/// Is this process able to read a file whatever its permission bits (root)?
/// Found out by trying, on a probe file made unreadable.
pub fn permissions_are_enforced(dir: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let probe = dir.join(".permission-probe");
    std::fs::write(&probe, "x").unwrap();
    std::fs::set_permissions(&probe, std::fs::Permissions::from_mode(0o000)).unwrap();
    let enforced = std::fs::read(&probe).is_err();
    std::fs::set_permissions(&probe, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::remove_file(&probe).unwrap();
    enforced
}

/// A public collection of 17 skills in the standard's shape; one has a
/// 1,068-character description (Claude Code takes up to 1,536, the
/// standard 1,024).
pub fn public_collection() -> Sandbox {
    let sb = Sandbox::new().with_layer_dirs();
    for i in 1..=17 {
        let description = if i == 9 {
            "d".repeat(1068)
        } else {
            format!("Skill number {i}.")
        };
        sb.write(
            "base",
            &format!("s{i:02}/SKILL.md"),
            format!("---\nname: s{i:02}\ndescription: {description}\n---\n\nBody {i}.\n"),
        );
    }
    sb
}

/// Names in `dir`, sorted (hidden ones included); empty if it is missing.
pub fn entries(dir: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = rd
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Every entry below `dir`, sorted: a file with its bytes, a symlink as
/// its target, a directory (an empty one included) as its path with a
/// trailing `/` and no bytes: to assert that a command changed nothing
/// there.
pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&p).unwrap();
                out.push((p, target.into_os_string().into_encoded_bytes()));
            } else if meta.is_dir() {
                out.push((p.join(""), Vec::new()));
                todo.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Copies the tree `from` into `to` (files and directories).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// The base-layer skills `writer` (a SKILL.md with a reference file) and
/// `reviewer` (YAML).
pub fn two_skills() -> Sandbox {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "writer/SKILL.md",
        "---\nname: writer\ndescription: Writes docs.\n---\n\n# Writer\n\nDraft prose.\n",
    );
    sb.write("base", "writer/references/style.md", "# Style\n");
    sb.write("base", "reviewer.yaml", "description: Reviews code.\n");
    sb
}

/// The `bernstein` binary the tests run, found from this test binary's
/// place as it runs (not from where it was compiled, which
/// `CARGO_BIN_EXE_bernstein` names): CI runs the suite again from a copy of
/// the target directory, and the binaries from there must be the ones run.
pub fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("bernstein")
}

/// A pid that is certainly dead: a child that has exited and been reaped.
pub fn dead_pid() -> u32 {
    let mut child = std::process::Command::new(bin())
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// `text` with each escape byte shown as `␛`: coloured output a snapshot
/// file holds readably.
pub fn visible_escapes(text: &str) -> String {
    text.replace('\x1b', "␛")
}

/// The snapshot file `tests/snapshots/<name>`, for [`assert_snapshot`]:
/// found from the package's directory (snapbox's `file!` guesses the
/// workspace root from the `Cargo.toml` files above it, which a checkout
/// inside another Cargo project would mislead).
pub fn snapshot_file(name: &str) -> snapbox::Data {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    snapbox::Data::read_from(&path, None)
}

/// Asserts that `actual` matches `expected` as snapbox matches: a `...`
/// line stands for any lines, `[..]` for any text within a line, and
/// `[REPO]` for this repository's directory (where the shipped spec is),
/// `[TARGET]` for the build's (where a spec beside the binary would be).
/// With `SNAPSHOTS=overwrite`, a snapshot file that differs is rewritten
/// instead. Backslashes are kept (snapbox would turn them into `/`, which
/// would garble JSON escapes).
#[track_caller]
pub fn assert_snapshot(actual: impl snapbox::IntoData, expected: impl snapbox::IntoData) {
    snapshot_assert().eq(actual, expected);
}

/// The snapbox assertion [`assert_snapshot`] makes, for a caller that
/// wants the mismatch as a value (`try_eq`).
pub fn snapshot_assert() -> snapbox::Assert {
    let mut redactions = snapbox::Redactions::new();
    redactions
        .insert("[REPO]", env!("CARGO_MANIFEST_DIR"))
        .expect("a valid placeholder");
    // target/debug/bernstein: the spec beside it is looked for in target/share.
    // The binary the tests run ([`Sandbox::bare`]), found from this test
    // binary's place as it runs, not from where it was compiled: CI runs the
    // suite again from a copy of the target directory.
    let bin = bin();
    if let Some(target) = bin.parent().and_then(Path::parent) {
        redactions
            .insert("[TARGET]", target.to_path_buf())
            .expect("a valid placeholder");
    }
    snapbox::Assert::new()
        .action_env(snapbox::assert::DEFAULT_ACTION_ENV)
        .normalize_paths(false)
        .redact_with(redactions)
}

// Upstream repositories and the projects that take them.

/// Runs `git` in `dir` with no configuration of this machine.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = StdCommand::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// An upstream repository at `sb/<name>`.
pub struct Upstream {
    pub dir: PathBuf,
}

impl Upstream {
    pub fn new(sb: &Sandbox, name: &str) -> Upstream {
        let dir = sb.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        git(&dir, &["init", "-q"]);
        Upstream { dir }
    }

    pub fn write(&self, rel: &str, contents: &str) -> &Self {
        let p = self.dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, contents).unwrap();
        self
    }

    pub fn skill(&self, name: &str, description: &str, body: &str) -> &Self {
        self.write(
            &format!("{name}/SKILL.md"),
            &format!("---\nname: {name}\ndescription: {description}\n---\n{body}"),
        )
    }

    /// Sets the execute bits of `rel`.
    pub fn executable(&self, rel: &str) -> &Self {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(self.dir.join(rel), mode).unwrap();
        self
    }

    /// Removes `rel` (a file, or a directory with everything in it).
    pub fn remove(&self, rel: &str) -> &Self {
        let p = self.dir.join(rel);
        if p.is_dir() {
            std::fs::remove_dir_all(p).unwrap();
        } else {
            std::fs::remove_file(p).unwrap();
        }
        self
    }

    /// Commits everything; returns the commit.
    pub fn commit(&self) -> String {
        git(&self.dir, &["add", "-A"]);
        git(&self.dir, &["commit", "-qm", "c", "--allow-empty"]);
        git(&self.dir, &["rev-parse", "HEAD"])
    }

    pub fn url(&self) -> String {
        self.dir.display().to_string()
    }

    /// Its commits, oldest first.
    pub fn commits(&self) -> Vec<String> {
        git(
            &self.dir,
            &["rev-list", "--all", "--topo-order", "--reverse"],
        )
        .lines()
        .map(str::to_owned)
        .collect()
    }
}

/// `text` with the commits it names put in words, since a commit's digest
/// holds the time it was made: the `n`th of `commits` (counting from 1) is
/// `[COMMITn]`, its first twelve digits `[COMMITn-12]`, and the sixteen
/// digits of the key after them in a cache entry's name
/// (`NAME@COMMIT-KEY`, a digest of the lock's entry) `[KEY]`.
pub fn stable(text: &str, commits: &[String]) -> String {
    let mut text = text.to_owned();
    for (n, commit) in commits.iter().enumerate() {
        let n = n + 1;
        text = text.replace(commit.as_str(), &format!("[COMMIT{n}]"));
        let entry = format!("@{}-", &commit[..12]);
        let mut out = String::new();
        let mut rest = text.as_str();
        while let Some(at) = rest.find(&entry) {
            out.push_str(&rest[..at]);
            out.push_str(&format!("@[COMMIT{n}-12]-"));
            rest = &rest[at + entry.len()..];
            let key = rest
                .char_indices()
                .take_while(|(_, c)| c.is_ascii_hexdigit())
                .count();
            if key == 16 {
                out.push_str("[KEY]");
                rest = &rest[16..];
            }
        }
        out.push_str(rest);
        text = out.replace(&commit[..12], &format!("[COMMIT{n}-12]"));
    }
    text
}

/// `bernstein skills --layers-root ... ARGS` with git on PATH.
pub fn cmd(sb: &Sandbox, args: &[&str]) -> Command {
    let mut c = sb.skills_cmd(args);
    c.env("PATH", std::env::var_os("PATH").unwrap_or_default());
    c
}

/// Runs [`cmd`].
pub fn run(sb: &Sandbox, args: &[&str]) -> Run {
    sb.run_cmd(cmd(sb, args))
}

/// The sources file `add` writes beside the sandbox's layers.
pub fn sources_file(sb: &Sandbox) -> PathBuf {
    sb.root().join("sources.toml")
}

/// The lock `add` and `update` write beside the sandbox's layers.
pub fn lock_file(sb: &Sandbox) -> PathBuf {
    sb.root().join("sources.lock")
}

/// Where fetched sources are kept, in the sandbox's home.
pub fn cache_dir(sb: &Sandbox) -> PathBuf {
    sb.path().join("home/.cache/bernstein/skills/sources")
}

/// A sandbox with a team layer and an upstream of two skills.
pub fn collection() -> (Sandbox, Upstream) {
    let sb = Sandbox::new().with_layer_dirs();
    let up = Upstream::new(&sb, "up");
    up.skill(
        "pdf-tables",
        "Extracts tables.",
        "# PDF tables\n\nRun it.\n\n## Checks\n\nCheck it.\n",
    )
    .write("pdf-tables/scripts/extract.py", "print(1)\n")
    .skill("writer", "Writes.", "Write.\n");
    up.commit();
    (sb, up)
}

/// One machine: a home directory of its own (its cache, state and
/// configuration), with git on PATH.
pub struct Machine<'a> {
    pub sb: &'a Sandbox,
    pub home: PathBuf,
}

impl<'a> Machine<'a> {
    pub fn new(sb: &'a Sandbox, name: &str) -> Machine<'a> {
        let home = sb.path().join(name);
        std::fs::create_dir_all(&home).unwrap();
        Machine { sb, home }
    }

    /// `bernstein skills ARGS` run in `dir` on this machine.
    pub fn run(&self, dir: &Path, args: &[&str]) -> Run {
        let mut cmd = self.sb.bare();
        cmd.env("HOME", &self.home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .current_dir(dir)
            .arg("skills")
            .args(args);
        self.sb.run_cmd(cmd)
    }
}

/// A new git repository `sb/project` that `who` makes a project of `up`
/// with `sync URL --target T...` (each of `targets`), as a person starts
/// one; checks the sync succeeded and returns it with the project.
pub fn synced_project(who: &Machine<'_>, up: &Upstream, targets: &[&str]) -> (PathBuf, Run) {
    let project = repository(who.sb, "project");
    let url = up.url();
    let mut args = vec!["sync", url.as_str()];
    for t in targets {
        args.extend(["--target", t]);
    }
    let run = who.run(&project, &args);
    run.success();
    (project, run)
}

/// A new git repository at `sb/<name>`.
pub fn repository(sb: &Sandbox, name: &str) -> PathBuf {
    let dir = sb.path().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q"]);
    dir
}

pub fn commit_all(dir: &Path) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "skills"]);
}

/// Every file below `dir` and its bytes, by its path relative to `dir`.
pub fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    snapshot(dir)
        .into_iter()
        .map(|(p, b)| (p.strip_prefix(dir).unwrap().to_path_buf(), b))
        .collect()
}

/// `git clone` of `from` into `sb/<name>`.
pub fn clone(sb: &Sandbox, from: &Path, name: &str) -> PathBuf {
    let to = sb.path().join(name);
    git(
        sb.path(),
        &["clone", "-q", &from.display().to_string(), name],
    );
    to
}
