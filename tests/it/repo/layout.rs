//! The layout shows the pipeline (issue 22): each stage of the library is
//! a top-level module, and a stage uses only the stages before it — no
//! circle, no import running back up.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The stages, in pipeline order. A module may use the ones before it.
const ORDER: &[&str] = &[
    "text",
    "digest",
    "par",
    "beneath",
    "layer",
    "error",
    "source",
    "fragment",
    "spec",
    "merge",
    "validate",
    "postmerge",
    "target",
    "output",
    "engine",
    "export",
    "impact",
    "upstream",
    "report",
    "context",
];

/// Every `crate::MODULE` a file's code (not its comments) names.
fn uses(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_stage_uses_only_the_stages_before_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_owned();
        // The binary is a crate of its own, on top of the library.
        if top == "bin" || top == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        // Tests of a module may use any stage.
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        edges.entry(top.clone()).or_default().extend(
            uses(code)
                .into_iter()
                .filter(|m| m != &top && ORDER.contains(&m.as_str())),
        );
    }
    let rank = |m: &str| {
        ORDER
            .iter()
            .position(|o| *o == m)
            .unwrap_or_else(|| panic!("src/{m}: not a stage in ORDER; add it where it belongs"))
    };
    let mut back = Vec::new();
    for (from, tos) in &edges {
        for to in tos {
            if rank(to) > rank(from) {
                back.push(format!("{from} -> {to}"));
            }
        }
    }
    assert!(
        back.is_empty(),
        "imports that run back up the pipeline: {back:?}"
    );
}

/// The command line has no import circle either (issue 29): each command's
/// file uses the shared modules (`global`, `output`), never `cli`, which
/// dispatches to them. `main.rs`, the crate root, declares them all.
#[test]
fn the_binary_has_no_import_circle() {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bin/bernstein");
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in std::fs::read_dir(&bin).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        if p.extension().is_none_or(|x| x != "rs") || name == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let mut used = uses(&text);
        used.remove(&name);
        edges.insert(name, used);
    }
    // A depth-first walk from every module; a module met again on the
    // path closes a circle.
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) {
        if let Some(at) = path.iter().position(|p| p == m) {
            panic!(
                "import circle in the binary: {} -> {m}",
                path[at..].join(" -> ")
            );
        }
        if !done.insert(m.to_owned()) {
            return;
        }
        path.push(m.to_owned());
        for next in edges.get(m).into_iter().flatten() {
            visit(next, edges, path, done);
        }
        path.pop();
    }
    let mut done = BTreeSet::new();
    for m in edges.keys() {
        visit(m, &edges, &mut Vec::new(), &mut done);
    }
}

/// The command line's crates: argument parsing, completions, the man page,
/// colour and the allocator.
const CLI_CRATES: &[&str] = &[
    "anstream",
    "anstyle",
    "clap",
    "clap_complete",
    "clap_mangen",
    "mimalloc",
];

fn manifest(path: &str) -> toml::Table {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path)
        .unwrap()
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The binary's crates stay in the binary (issue 43): each is optional and
/// turned on by the `cli` feature, which the binary requires and the
/// default turns on, and the library's programs (the Python extension, the
/// fuzz targets) depend on the library without it, so none of these crates
/// is built into them.
#[test]
fn the_command_lines_crates_are_behind_the_cli_feature() {
    let root = manifest("Cargo.toml");
    let features = root["features"].as_table().unwrap();
    let cli: Vec<&str> = features["cli"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        features["default"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v.as_str() == Some("cli")),
        "`cargo run` and `cargo test` build the binary as the README says"
    );
    let deps = root["dependencies"].as_table().unwrap();
    for name in CLI_CRATES {
        let dep = deps[*name].as_table().unwrap_or_else(|| panic!("{name}"));
        assert_eq!(
            dep.get("optional"),
            Some(&toml::Value::Boolean(true)),
            "{name}"
        );
        assert!(cli.contains(&format!("dep:{name}").as_str()), "{name}");
    }
    let bins = root["bin"].as_array().unwrap();
    let bin = bins
        .iter()
        .find(|b| b["name"].as_str() == Some("bernstein"))
        .unwrap();
    assert_eq!(
        bin["required-features"].as_array().unwrap(),
        &vec![toml::Value::from("cli")]
    );
    for program in ["python/Cargo.toml", "fuzz/Cargo.toml"] {
        let dep = &manifest(program)["dependencies"]["bernstein-skills"];
        assert_eq!(
            dep.get("default-features"),
            Some(&toml::Value::Boolean(false)),
            "{program} builds the library without the command line's crates"
        );
    }
}

/// The library's code names none of the command line's crates, so it
/// builds without the `cli` feature (`cargo check --no-default-features`).
#[test]
fn the_library_uses_none_of_the_command_lines_crates() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let mut found = Vec::new();
    for f in files {
        if f.strip_prefix(&src).unwrap().starts_with("bin") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for name in CLI_CRATES {
                let named = code.match_indices(&format!("{name}::")).any(|(at, _)| {
                    !code[..at]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_')
                });
                if named {
                    found.push(format!("{}:{}: {name}", f.display(), n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "the library names the command line's crates: {found:?}"
    );
}

/// The library's modules, file by file, as a graph: one module's code (not
/// its tests) naming another's items through `crate::…`, `super::…` or
/// `self::…` paths, an item re-exported by a module root counted as its
/// file's. A module root's own children are left out (it declares and
/// re-exports them; they use what it defines), so what remains must have
/// no circle: two sibling modules that each need the other are one piece
/// of the pipeline cut in two (as `source/layers.rs` and
/// `source/trust.rs` once were, each importing the other's types).
#[test]
fn the_crate_has_no_import_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    // Module path (`source::layers`) → file.
    let mut modules: BTreeMap<Vec<String>, std::path::PathBuf> = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        if rel.starts_with("bin") {
            continue;
        }
        let mut path: Vec<String> = rel
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if path.last().is_some_and(|l| l == "mod" || l == "lib") {
            path.pop();
        }
        modules.insert(path, f.clone());
    }
    // Per module root: item name → the child module it re-exports it from.
    let mut reexports: BTreeMap<Vec<String>, BTreeMap<String, String>> = BTreeMap::new();
    for (path, file) in &modules {
        let text = std::fs::read_to_string(file).unwrap();
        for stmt in text.split(';') {
            let stmt = stmt.trim();
            let Some(rest) = stmt
                .strip_prefix("pub use ")
                .or_else(|| stmt.strip_prefix("pub(crate) use "))
            else {
                continue;
            };
            for (child, item) in use_items(rest) {
                if modules.contains_key(&[path.clone(), vec![child.clone()]].concat()) {
                    reexports
                        .entry(path.clone())
                        .or_default()
                        .insert(item, child);
                }
            }
        }
    }
    let resolve = |from: &[String], written: &[String]| -> Option<Vec<String>> {
        let mut at: Vec<String> = match written.first()?.as_str() {
            "crate" => Vec::new(),
            "self" => from.to_vec(),
            "super" => from[..from.len().saturating_sub(1)].to_vec(),
            _ => return None,
        };
        let mut rest = &written[1..];
        while rest.first().is_some_and(|s| s == "super") {
            at.pop();
            rest = &rest[1..];
        }
        for seg in rest {
            let mut next = at.clone();
            next.push(seg.clone());
            if modules.contains_key(&next) {
                at = next;
                continue;
            }
            if let Some(child) = reexports.get(&at).and_then(|r| r.get(seg)) {
                at.push(child.clone());
            }
            break;
        }
        Some(at)
    };
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (path, file) in &modules {
        let text = std::fs::read_to_string(file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let code: String = code
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        // `mod.rs`/`lib.rs` paths resolve from themselves: `super` of
        // `source` (source/mod.rs) is the crate.
        for written in paths_in(&code) {
            let Some(to) = resolve(path, &written) else {
                continue;
            };
            let is_child = to.len() > path.len() && to.starts_with(path);
            if to != *path && !is_child && modules.contains_key(&to) {
                edges.entry(path.clone()).or_default().insert(to);
            }
        }
    }
    fn visit(
        m: &Vec<String>,
        edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        stack: &mut Vec<Vec<String>>,
        done: &mut BTreeSet<Vec<String>>,
    ) {
        if let Some(at) = stack.iter().position(|p| p == m) {
            let circle: Vec<String> = stack[at..]
                .iter()
                .chain(std::iter::once(m))
                .map(|p| p.join("::"))
                .collect();
            panic!("import circle: {}", circle.join(" -> "));
        }
        if !done.insert(m.clone()) {
            return;
        }
        stack.push(m.clone());
        for next in edges.get(m).into_iter().flatten() {
            visit(next, edges, stack, done);
        }
        stack.pop();
    }
    let mut done = BTreeSet::new();
    for m in edges.keys() {
        visit(m, &edges, &mut Vec::new(), &mut done);
    }
    // The graph is not empty: the test would pass on nothing otherwise.
    assert!(
        edges
            .get(&vec!["source".to_owned(), "layers".to_owned()])
            .is_some_and(|e| e.contains(&vec!["source".to_owned(), "project".to_owned()])),
        "source::layers uses source::project"
    );
}

/// `(child, item)` for each name a `pub use` statement's tail brings in
/// from a child module: `project::{Project, ProjectFile}` gives
/// `(project, Project)` and `(project, ProjectFile)`.
fn use_items(tail: &str) -> Vec<(String, String)> {
    let tail: String = tail.chars().filter(|c| !c.is_whitespace()).collect();
    let Some((child, rest)) = tail.split_once("::") else {
        return Vec::new();
    };
    let names: Vec<&str> = match rest.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        Some(list) => list.split(',').collect(),
        None => vec![rest],
    };
    names
        .into_iter()
        .filter_map(|n| {
            let n = n.rsplit("::").next()?;
            let n = n.split(" as ").next()?;
            (!n.is_empty() && n != "*").then(|| (child.to_owned(), n.to_owned()))
        })
        .collect()
}

/// Every `crate::…`, `super::…` and `self::…` path the code names, as its
/// segments; a `{…}` group after a prefix gives one path per member.
fn paths_in(code: &str) -> Vec<Vec<String>> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let starts = ["crate::", "super::", "self::"]
            .iter()
            .find(|p| code_at(&bytes, i, p) && (i == 0 || !ident(bytes[i - 1])));
        let Some(_) = starts else {
            i += 1;
            continue;
        };
        // The path's segments up to a `{`, or its end.
        let mut segs = Vec::new();
        let mut cur = String::new();
        while i < bytes.len() {
            let c = bytes[i];
            if ident(c) {
                cur.push(c);
                i += 1;
            } else if code_at(&bytes, i, "::") {
                segs.push(std::mem::take(&mut cur));
                i += 2;
            } else {
                break;
            }
        }
        if !cur.is_empty() {
            segs.push(cur);
        }
        if i < bytes.len() && bytes[i] == '{' {
            let end = bytes[i..].iter().position(|c| *c == '}').map(|e| i + e);
            if let Some(end) = end {
                let group: String = bytes[i + 1..end].iter().collect();
                for member in group.split(',') {
                    let mut p = segs.clone();
                    p.extend(
                        member
                            .trim()
                            .split("::")
                            .map(|s| s.trim().split(' ').next().unwrap_or("").to_owned())
                            .filter(|s| !s.is_empty()),
                    );
                    out.push(p);
                }
                i = end + 1;
                continue;
            }
        }
        out.push(segs);
    }
    out
}

fn code_at(chars: &[char], i: usize, s: &str) -> bool {
    s.chars()
        .enumerate()
        .all(|(k, c)| chars.get(i + k) == Some(&c))
}

/// The raw calls that walk, read whole, write, remove or lock by path (or
/// look at an entry without following it), which only `src/beneath/` makes (issue 43, "one file-system layer"): everywhere
/// else a walk goes through its bounded walks and a write through its
/// confined writes, so a new caller cannot go around the caps and the
/// refusals by calling the standard library itself.
const RAW_FS_CALLS: &[&str] = &[
    "fs::read_dir",
    // A look at an entry by path without following it: `beneath::kind_of`.
    "symlink_metadata",
    // A read of a whole file, unbounded: through a root (`source::Root`),
    // or `source::read_bounded` for a file a person names.
    "fs::read(",
    "fs::read_to_string",
    "fs::rename",
    "OpenOptions",
    "fs::create_dir",
    "DirBuilder",
    "fs::write",
    "File::create",
    "fs::remove_dir",
    "fs::remove_file",
    "fs::copy",
    "fs::hard_link",
    "unix::fs::symlink",
    "tempfile::",
    "flock",
    "FlockOperation",
    "File::lock",
    "try_lock_shared",
];

/// The few raw calls outside `src/beneath/` that stay, each with why.
const RAW_FS_ALLOWED: &[(&str, &str)] = &[
    // The bare repository a fetch runs `git` in: git writes it, to a depth
    // its refs decide, and tempfile removes it whole; the tool writes
    // nothing there itself.
    ("src/upstream/git.rs", "tempfile::"),
    // What git wrote there (`FETCH_HEAD`, `shallow`): small files of its
    // own in that repository, not the fetched content.
    ("src/upstream/git.rs", "fs::read_to_string"),
];

/// `text` without comments and without its test code: a `#[cfg(test)]`
/// (or `#[cfg(all(test, …))]`) module written in the file (up to the `}` that closes it at the start
/// of a line, as rustfmt writes it). The files of modules declared
/// `#[cfg(test)] mod NAME;` go into `test_files`.
fn code_outside_tests(
    file: &Path,
    text: &str,
    test_files: &mut BTreeSet<std::path::PathBuf>,
) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim();
        if t.starts_with("#[cfg(")
            && t.contains("test")
            && let Some(next) = lines.peek()
        {
            let decl = next
                .trim()
                .trim_start_matches("pub ")
                .trim_start_matches("pub(crate) ");
            if let Some(name) = decl.strip_prefix("mod ").and_then(|d| d.strip_suffix(';')) {
                let dir = if file
                    .file_name()
                    .is_some_and(|n| n == "mod.rs" || n == "lib.rs" || n == "main.rs")
                {
                    file.parent().unwrap().to_path_buf()
                } else {
                    file.with_extension("")
                };
                test_files.insert(dir.join(format!("{name}.rs")));
                test_files.insert(dir.join(name).join("mod.rs"));
                continue;
            }
            if decl.starts_with("mod ") && decl.ends_with('{') {
                let indent = next.len() - next.trim_start().len();
                let close = format!("{}}}", " ".repeat(indent));
                for skipped in lines.by_ref() {
                    if skipped == close {
                        break;
                    }
                }
                continue;
            }
        }
        out.push_str(line.split("//").next().unwrap_or(""));
        out.push('\n');
    }
    out
}

#[test]
fn only_beneath_walks_writes_and_locks_with_raw_calls() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    files.sort();
    let mut test_files = BTreeSet::new();
    let mut code = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(root).unwrap().to_path_buf();
        let text = std::fs::read_to_string(f).unwrap();
        code.push((
            rel.clone(),
            code_outside_tests(&rel, &text, &mut test_files),
        ));
    }
    let mut found = Vec::new();
    let mut allowed_used = BTreeSet::new();
    for (rel, text) in &code {
        if rel.starts_with("src/beneath") || test_files.contains(rel) {
            continue;
        }
        for (n, line) in text.lines().enumerate() {
            for call in RAW_FS_CALLS.iter().filter(|c| line.contains(**c)) {
                let shown = rel.to_string_lossy().into_owned();
                if let Some(a) = RAW_FS_ALLOWED
                    .iter()
                    .find(|(f, c)| *f == shown && c == call)
                {
                    allowed_used.insert(*a);
                    continue;
                }
                found.push(format!("{shown}:{}: {call}", n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "raw file-system calls outside src/beneath/ (use its walks and writes, or \
         add the call to RAW_FS_ALLOWED with the reason): {found:#?}"
    );
    // An entry of the allow-list that nothing needs any more goes.
    let stale: Vec<_> = RAW_FS_ALLOWED
        .iter()
        .filter(|a| !allowed_used.contains(*a))
        .collect();
    assert!(stale.is_empty(), "allowed but no longer made: {stale:?}");
    // The test sees test code as test code, and a raw call as one.
    assert!(test_files.contains(Path::new("src/target/tests.rs")));
    let planted = code_outside_tests(
        Path::new("src/x.rs"),
        "fn f() { std::fs::write(p, b) }\n#[cfg(test)]\nmod tests {\n    fn g() { std::fs::read_dir(p) }\n}\nfn h() {}\n",
        &mut BTreeSet::new(),
    );
    assert!(
        planted.contains("fs::write") && !planted.contains("read_dir") && planted.contains("fn h")
    );
}

/// The command line parses arguments and prints (issue 43): what it reads
/// and writes, the library does. Its files name no `std::fs` call, test
/// code aside, but those below, each with why (none today).
const BINARY_FS_ALLOWED: &[(&str, &str)] = &[];

#[test]
fn the_command_line_touches_no_files_itself() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    walk(&root.join("src/bin"), &mut files);
    files.sort();
    let mut found = Vec::new();
    let mut allowed_used = BTreeSet::new();
    for f in &files {
        let rel = f.strip_prefix(root).unwrap().to_path_buf();
        let text = std::fs::read_to_string(f).unwrap();
        let code = code_outside_tests(&rel, &text, &mut BTreeSet::new());
        let shown = rel.to_string_lossy().into_owned();
        for (n, line) in code.lines().enumerate() {
            let Some(at) = line.find("std::fs") else {
                continue;
            };
            let call: String = line[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            match BINARY_FS_ALLOWED
                .iter()
                .find(|(f, c)| *f == shown && *c == call)
            {
                Some(a) => {
                    allowed_used.insert(*a);
                }
                None => found.push(format!("{shown}:{}: {call}", n + 1)),
            }
        }
    }
    assert!(
        found.is_empty(),
        "the command line reads or writes files itself (move it into the library, or add \
         it to BINARY_FS_ALLOWED with the reason): {found:#?}"
    );
    let stale: Vec<_> = BINARY_FS_ALLOWED
        .iter()
        .filter(|a| !allowed_used.contains(*a))
        .collect();
    assert!(stale.is_empty(), "allowed but no longer made: {stale:?}");
}
