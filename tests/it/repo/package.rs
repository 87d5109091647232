//! The crate as Rust users install it (issue 43): `cargo install` builds
//! the binary from the published package, so the package holds what the
//! build and the installed binary need, and none of the repository's
//! tooling.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// `cargo package --list`: the files of the package, as cargo would
/// publish them.
fn package_files() -> BTreeSet<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["package", "--list", "--allow-dirty", "--offline", "--quiet"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo package --list: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Every file a source file compiles in (`include_bytes!`,
/// `include_str!`), relative to the crate's root.
fn compiled_in(dir: &Path, root: &Path, out: &mut BTreeSet<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            compiled_in(&p, root, out);
            continue;
        }
        if p.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        for mac in ["include_bytes!(\"", "include_str!(\""] {
            for (at, _) in text.match_indices(mac) {
                let rest = &text[at + mac.len()..];
                let rel = &rest[..rest.find('"').unwrap()];
                let full = p.parent().unwrap().join(rel);
                // Normalised by hand: `..` components of a path that exists.
                let full = full.canonicalize().unwrap();
                let root = root.canonicalize().unwrap();
                out.insert(
                    full.strip_prefix(&root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
    }
}

#[test]
fn the_package_holds_what_the_binary_needs_and_no_tooling() {
    let files = package_files();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut needed: BTreeSet<String> = [
        "Cargo.toml",
        "Cargo.lock",
        "README.md",
        "LICENSE-APACHE",
        "LICENSE-MIT",
        "src/lib.rs",
        "src/bin/bernstein/main.rs",
        "spec/mergespec.yaml",
        "schemas/skill-fragment.schema.json",
        "schemas/mergespec.schema.json",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    // What the build compiles in: the shipped spec and targets
    // (`spec --install` writes them).
    compiled_in(&root.join("src"), root, &mut needed);
    assert!(needed.iter().any(|f| f.starts_with("spec/targets/")));
    let missing: Vec<_> = needed.difference(&files).collect();
    assert!(missing.is_empty(), "not in the package: {missing:?}");
    // The repository's tooling: tests, benchmarks, examples, fuzzing, the
    // Python package and its wheel, CI.
    let tooling: Vec<_> = files
        .iter()
        .filter(|f| {
            [
                ".ci/",
                ".gitignore",
                "benches/",
                "examples/",
                "fuzz/",
                "proptest-regressions/",
                "pyproject.toml",
                "python/",
                "tests/",
                "wheel-data/",
            ]
            .iter()
            .any(|t| f.starts_with(t))
        })
        .collect();
    assert!(tooling.is_empty(), "tooling in the package: {tooling:?}");
}

/// What crates.io and docs.rs show, and the oldest Rust it builds with
/// (`.ci/run` checks with that toolchain, and runs `cargo publish --dry-run`).
#[test]
fn the_manifest_carries_what_crates_io_shows() {
    let manifest: toml::Table =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
            .unwrap()
            .parse()
            .unwrap();
    let package = manifest["package"].as_table().unwrap();
    for key in [
        "description",
        "license",
        "readme",
        "keywords",
        "categories",
        "rust-version",
    ] {
        assert!(package.contains_key(key), "package.{key}");
    }
    let keywords = package["keywords"].as_array().unwrap();
    // crates.io's limits: five keywords of at most 20 characters.
    assert!(keywords.len() <= 5);
    for k in keywords {
        let k = k.as_str().unwrap();
        assert!(k.len() <= 20 && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
    }
}
