//! What the tool keeps for the person outside every repository — their
//! trust in projects and export's ledgers (`$XDG_STATE_HOME`), fetched
//! sources and their locks (`$XDG_CACHE_HOME`) — is theirs alone: made
//! private, never reached through another user's symlink, and refused
//! when another user owns it or others can write it (issue 44, item 12),
//! as ssh's StrictModes refuses such files.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::it::support::{Run, Sandbox, Upstream, assert_snapshot, sha256_hex, snapshot_file};

/// The uid of `nobody`: "another user" when the tests run as root.
const NOBODY: u32 = 65534;

/// A base layer with one skill, and a cloned repository (`repo/`) whose
/// project-local layer overrides it.
fn clone() -> (Sandbox, PathBuf) {
    let sb = Sandbox::new();
    sb.write_file(
        "base/writer.yaml",
        "description: Writes prose.\nbody: Write clearly.\n",
    );
    let repo = sb.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    sb.write_file(
        "repo/.bernstein/skills/writer.yaml",
        "body: Obey the README of this repository.\n",
    );
    (sb, repo)
}

/// A directory every user may create entries in, as `/tmp` is: a shared
/// `XDG_STATE_HOME` or `XDG_CACHE_HOME`.
fn shared(sb: &Sandbox, name: &str) -> PathBuf {
    let dir = sb.path().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
    dir
}

/// `bernstein skills --base <sandbox>/base ARGS...` in `dir`, with
/// `XDG_STATE_HOME` at `state`.
fn in_dir(sb: &Sandbox, dir: &Path, state: &Path, args: &[&str]) -> Run {
    let mut cmd = sb.bare();
    cmd.arg("skills")
        .arg("--base")
        .arg(sb.path().join("base"))
        .args(args)
        .current_dir(dir)
        .env("XDG_STATE_HOME", state);
    sb.run_cmd(cmd)
}

/// Gives `path` (not following a symlink) to `nobody`; false when this
/// process may not (it is not root), which the caller says.
fn give_to_nobody(path: &Path) -> bool {
    match std::os::unix::fs::lchown(path, Some(NOBODY), Some(NOBODY)) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => false,
        Err(e) => panic!("{}: {e}", path.display()),
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn global_skills(sb: &Sandbox) -> PathBuf {
    sb.path().join("home/.claude/skills")
}

#[test]
fn issue_44_12_a_trust_file_others_can_write_is_refused_and_the_advice_works() {
    let (sb, repo) = clone();
    let state = shared(&sb, "shared-state");
    in_dir(&sb, &repo, &state, &["trust"]).ok();
    let file = state.join("bernstein/skills/trusted.json");
    // Anyone could have written what it says.
    chmod(&file, 0o666);
    let args = ["export", "--target", "claude-code"];
    let err = in_dir(&sb, &repo, &state, &args);
    assert_snapshot(
        err.failed(),
        snapshot_file("state-trust-file-writable-by-others.stderr"),
    );
    assert!(!global_skills(&sb).exists(), "nothing is written");
    let status = in_dir(&sb, &repo, &state, &["trust", "--status"]);
    assert_eq!(status.code, Some(1), "{status:#?}");
    assert_eq!(status.stderr, err.stderr);
    // The advice, followed.
    let advice = err
        .stderr
        .split('`')
        .nth(1)
        .unwrap()
        .replace("[ROOT]", &sb.path().display().to_string());
    let (cmd, arg) = advice.split_once(' ').unwrap();
    let (flags, path) = arg.split_once(' ').unwrap();
    assert_eq!((cmd, flags), ("chmod", "go-w"), "{advice}");
    let ran = std::process::Command::new(cmd)
        .args([flags, path])
        .status()
        .unwrap();
    assert!(ran.success());
    in_dir(&sb, &repo, &state, &args).ok();
    // So is a directory of the tool's own there that others can write.
    let dir = state.join("bernstein");
    chmod(&dir, 0o777);
    assert_snapshot(
        in_dir(&sb, &repo, &state, &args).failed(),
        snapshot_file("state-directory-writable-by-others.stderr"),
    );
}

#[test]
fn issue_44_12_a_trust_file_another_user_owns_is_refused() {
    let (sb, repo) = clone();
    let state = shared(&sb, "shared-state");
    in_dir(&sb, &repo, &state, &["trust"]).ok();
    let file = state.join("bernstein/skills/trusted.json");
    // Another user's file, as they would leave it in a shared directory.
    chmod(&file, 0o644);
    if !give_to_nobody(&file) {
        eprintln!("SKIPPED issue_44_12_a_trust_file_another_user_owns_is_refused: not root");
        return;
    }
    let args = ["export", "--target", "claude-code"];
    let err = in_dir(&sb, &repo, &state, &args);
    assert_snapshot(
        err.failed(),
        snapshot_file("state-trust-file-another-users.stderr"),
    );
    assert!(!global_skills(&sb).exists(), "nothing is written");
    // Trusting again replaces nothing of theirs either.
    let again = in_dir(&sb, &repo, &state, &["trust"]);
    assert_eq!(again.stderr, err.stderr, "{again:#?}");
    assert_eq!(
        std::fs::symlink_metadata(&file)
            .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
            .unwrap(),
        NOBODY
    );
    // A directory of the tool's own that another user made first: the
    // same, for the ledger export keeps beside the trust file too.
    let (sb, repo) = clone();
    let state = shared(&sb, "shared-state");
    std::fs::create_dir_all(state.join("bernstein/skills")).unwrap();
    give_to_nobody(&state.join("bernstein"));
    assert_snapshot(
        in_dir(&sb, &repo, &state, &["trust"]).failed(),
        snapshot_file("state-directory-another-users.stderr"),
    );
    let out = sb.path().join("out");
    let run = in_dir(
        &sb,
        sb.path(),
        &state,
        &["export", "--out", out.to_str().unwrap()],
    );
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert!(
        run.stderr
            .contains("[ROOT]/shared-state/bernstein: owned by another user"),
        "{run:#?}"
    );
}

#[test]
fn issue_44_12_state_and_cache_directories_are_made_private() {
    let (sb, repo) = clone();
    let home = sb.path().join("home");
    in_dir(&sb, &repo, &home.join(".local/state"), &["trust"]).ok();
    let up = Upstream::new(&sb, "up");
    up.skill("writer", "Writes.", "Write.\n");
    up.commit();
    let layers = sb.path().join("layers");
    std::fs::create_dir_all(&layers).unwrap();
    crate::it::support::run(&sb, &["add", &up.url()]).success();
    let out = sb.path().join("out");
    in_dir(
        &sb,
        sb.path(),
        &home.join(".local/state"),
        &["export", "--out", out.to_str().unwrap()],
    )
    .ok();
    for dir in [
        ".local/state/bernstein",
        ".local/state/bernstein/skills",
        ".local/state/bernstein/skills/exports",
        ".cache/bernstein",
        ".cache/bernstein/skills",
        ".cache/bernstein/skills/sources",
    ] {
        assert_eq!(mode(&home.join(dir)), 0o700, "{dir}");
    }
    let trusted = home.join(".local/state/bernstein/skills/trusted.json");
    assert_eq!(mode(&trusted), 0o600);
}

/// The key of the cache's lock file for the project lock at `lock`.
fn lock_key(lock: &Path) -> String {
    sha256_hex(lock.as_os_str().as_encoded_bytes())[..32].to_owned()
}

#[test]
fn issue_44_12_a_symlink_at_the_caches_lock_file_is_never_followed() {
    let sb = Sandbox::new().with_layer_dirs();
    let up = Upstream::new(&sb, "up");
    up.skill("writer", "Writes.", "Write.\n");
    up.commit();
    crate::it::support::run(&sb, &["add", &up.url()]).success();
    let victim = sb.path().join("victim");
    let update = |cache: &Path| {
        let mut cmd = crate::it::support::cmd(&sb, &["update", "--yes"]);
        cmd.env("XDG_CACHE_HOME", cache);
        sb.run_cmd(cmd)
    };
    let key = lock_key(&sb.root().join("sources.lock"));
    // Another user's directories in a shared cache, their symlink at the
    // lock file.
    let cache = shared(&sb, "shared-cache");
    let locks = cache.join("bernstein/skills/sources/.locks");
    std::fs::create_dir_all(&locks).unwrap();
    std::os::unix::fs::symlink(&victim, locks.join(&key)).unwrap();
    let as_root = [
        "bernstein",
        "bernstein/skills",
        "bernstein/skills/sources",
        "bernstein/skills/sources/.locks",
    ]
    .iter()
    .all(|d| give_to_nobody(&cache.join(d)));
    if !as_root {
        // Not root: the same directories, writable by anyone.
        for d in ["bernstein", "bernstein/skills", "bernstein/skills/sources"] {
            chmod(&cache.join(d), 0o777);
        }
    }
    give_to_nobody(&locks.join(&key));
    let run = update(&cache);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert!(
        run.stderr
            .starts_with("error: [ROOT]/shared-cache/bernstein: ")
            && run.stderr.lines().count() == 1,
        "{run:#?}"
    );
    assert!(!victim.exists(), "the symlink was followed");
    // The directories the person's own and private: the symlink at the
    // lock file is still never followed.
    let cache = sb.path().join("own-cache");
    let locks = cache.join("bernstein/skills/sources/.locks");
    std::fs::create_dir_all(&locks).unwrap();
    for d in [
        "bernstein",
        "bernstein/skills",
        "bernstein/skills/sources",
        "bernstein/skills/sources/.locks",
    ] {
        chmod(&cache.join(d), 0o700);
    }
    std::os::unix::fs::symlink(&victim, locks.join(&key)).unwrap();
    let run = update(&cache);
    assert_snapshot(
        run.failed().replace(&key, "[KEY]"),
        snapshot_file("state-lock-file-symlink.stderr"),
    );
    assert!(!victim.exists(), "the symlink was followed");
}

/// The spec's cache: `$XDG_CACHE_HOME/bernstein/skills/specs` below the
/// sandbox's home.
fn spec_entries(sb: &Sandbox) -> Vec<PathBuf> {
    let dir = sb.path().join("home/.cache/bernstein/skills/specs");
    let Ok(list) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = list.map(|e| e.unwrap().path()).collect();
    out.sort();
    out
}

const CACHED_SPEC: &str = "version: 1\nfields:\n  description: {strategy: OVERRIDE, type: string}\n  \
                           tags: {strategy: APPEND, items: string}\n";

/// Issue 43 (start-up): what checking a spec produced is kept in the
/// cache, private, and the same output comes from it; an edited spec is
/// checked again, and so is an edited fragment.
#[test]
fn a_spec_is_checked_once_and_an_edited_spec_or_fragment_again() {
    let sb = Sandbox::with_spec(CACHED_SPEC);
    sb.write("base", "writer.yaml", "description: Writes.\ntags: [a]\n");
    sb.write("team", "writer.yaml", "tags: [b]\n");
    let first = sb.run(&["show", "writer"]).ok().to_owned();
    let entries = spec_entries(&sb);
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(mode(&entries[0]), 0o600);
    assert_eq!(mode(entries[0].parent().unwrap()), 0o700);
    assert_eq!(sb.run(&["show", "writer"]).ok(), first);
    // A default that does not fit its rule: only a compiled schema says so.
    let spec = sb.path().join("spec.yaml");
    std::fs::write(
        &spec,
        CACHED_SPEC.replace("type: string}", "type: string, default: 5}"),
    )
    .unwrap();
    let run = sb.run(&["show", "writer"]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert!(run.stderr.contains("default 5 does not fit"), "{run:#?}");
    std::fs::write(&spec, CACHED_SPEC).unwrap();
    assert_eq!(sb.run(&["show", "writer"]).ok(), first);
    // A fragment known valid, edited: judged again.
    sb.write("team", "writer.yaml", "tags: b\n");
    let run = sb.run(&["show", "writer"]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert!(run.stderr.contains("team"), "{run:#?}");
}

/// Issue 43: a cache entry is input like any file: one changed or cut is
/// not used (the spec is checked as without it) and is written again.
#[test]
fn a_changed_or_cut_spec_cache_entry_is_a_miss() {
    let sb = Sandbox::with_spec(CACHED_SPEC);
    sb.write("base", "writer.yaml", "description: Writes.\n");
    let first = sb.run(&["show", "writer"]).ok().to_owned();
    let entry = spec_entries(&sb).remove(0);
    let good = std::fs::read(&entry).unwrap();
    let flipped = String::from_utf8(good.clone())
        .unwrap()
        .replace("\"OVERRIDE\"", "\"APPEND\"");
    assert_ne!(flipped.as_bytes(), good);
    for bad in [
        flipped.into_bytes(),
        good[..good.len() / 2].to_vec(),
        Vec::new(),
    ] {
        std::fs::write(&entry, bad).unwrap();
        assert_eq!(sb.run(&["show", "writer"]).ok(), first);
        assert_eq!(std::fs::read(&entry).unwrap(), good);
    }
}

/// Issue 43: a spec cache in a directory another user owns is not used:
/// nothing is read from it or written into it, and the command runs.
#[test]
fn a_spec_cache_another_user_owns_is_not_used() {
    let sb = Sandbox::with_spec(CACHED_SPEC);
    sb.write("base", "writer.yaml", "description: Writes.\n");
    let cache = shared(&sb, "cache");
    let theirs = cache.join("bernstein");
    std::fs::create_dir_all(theirs.join("skills")).unwrap();
    if !give_to_nobody(&theirs) || !give_to_nobody(&theirs.join("skills")) {
        eprintln!("skipped: changing a directory's owner needs root");
        return;
    }
    let mut cmd = sb.skills_cmd(&["show", "writer"]);
    cmd.env("XDG_CACHE_HOME", &cache);
    let run = sb.run_cmd(cmd);
    assert!(run.ok().contains("Writes."), "{run:#?}");
    assert_eq!(
        std::fs::read_dir(theirs.join("skills")).unwrap().count(),
        0,
        "nothing written there"
    );
}
