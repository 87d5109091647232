//! Output for a person: coloured as the environment asks (`--color`,
//! `NO_COLOR`, `CLICOLOR_FORCE`, `TERM=dumb`), tables measured in terminal
//! columns and fitted to the terminal or to `COLUMNS`; untouched in a pipe.
//! Some tests run the binary on a pseudo-terminal, as a person would.

use std::process::Command;

use crate::it::support::{Sandbox, assert_snapshot, snapshot_file, visible_escapes};

/// Two skills, one with a CJK name, whose explain and list lines are far
/// wider than 80 columns when nothing is cut.
fn wide() -> Sandbox {
    let sb = Sandbox::new();
    let long = "Writes and edits long-form documentation in the house style, with worked \
                examples, a glossary and a review checklist for every chapter.";
    sb.write(
        "base",
        "writer.yaml",
        format!(
            "description: {long}\ntrigger_keywords: [documentation, style-guide]\n\
             metadata:\n  audience: engineers and technical writers across the whole company\n"
        ),
    );
    sb.write(
        "team",
        "writer.yaml",
        "metadata:\n  audience: the platform team, its on-call rota and everyone it onboards\n",
    );
    sb.write("base", "日本語.yaml", "description: 日本語の説明\n");
    sb
}

/// Display width of a line: CJK characters take two columns.
fn columns(line: &str) -> usize {
    line.chars()
        .map(|c| match c {
            '\u{3000}'..='\u{9fff}' => 2,
            _ => 1,
        })
        .sum()
}

/// `bernstein skills --layers-root layers ARGS` in the sandbox as a plain
/// process, for a pseudo-terminal to be given as its stdout. The layers'
/// paths it prints are relative, so the tables it fits to the terminal are
/// cut alike on any machine.
fn process(sb: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(sb.bare().get_program());
    cmd.env_clear()
        .env("HOME", sb.path().join("home"))
        .env("CARGO_MANIFEST_DIR", env!("CARGO_MANIFEST_DIR"))
        .envs(env.iter().copied())
        .current_dir(sb.path())
        .args(["skills", "--layers-root", "layers"])
        .args(args);
    cmd
}

/// Runs `cmd` with its stdout on a new pseudo-terminal `cols` columns wide
/// and returns what it printed (the terminal's `\r\n` read back as `\n`).
#[cfg(unix)]
fn on_terminal(mut cmd: Command, cols: u16) -> String {
    use rustix::fs::{Mode, OFlags};
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    use std::io::Read;
    use std::process::Stdio;
    let flags = OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC;
    let master = openpt(flags).expect("open a pseudo-terminal");
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let slave = rustix::fs::open(
        name.as_c_str(),
        OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .unwrap();
    let size = rustix::termios::Winsize {
        ws_row: 24,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    rustix::termios::tcsetwinsize(&slave, size).unwrap();
    cmd.stdin(Stdio::null())
        .stdout(std::fs::File::from(slave))
        .stderr(Stdio::piped());
    let child = cmd.spawn().expect("run bernstein");
    // The parent's copy of the terminal's end goes with the command, so
    // that reading stops (EIO) once the child has exited.
    drop(cmd);
    let reader = std::thread::spawn(move || {
        let mut master = std::fs::File::from(master);
        let mut bytes = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = master.read(&mut buf) {
            bytes.extend_from_slice(&buf[..n]);
        }
        bytes
    });
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let bytes = reader.join().unwrap();
    String::from_utf8(bytes).unwrap().replace("\r\n", "\n")
}

#[test]
fn a_cjk_name_aligns_with_the_others() {
    let sb = wide();
    let out = sb.run(&["list"]);
    let lines: Vec<&str> = out.ok().lines().collect();
    // The description starts in the same terminal column on every line:
    // `日本語` is six columns wide, not three.
    let at = |line: &str, what: &str| columns(&line[..line.find(what).unwrap()]);
    assert_eq!(
        at(lines[0], "DESCRIPTION"),
        at(lines[1], "Writes"),
        "{lines:#?}"
    );
    assert_eq!(
        at(lines[0], "DESCRIPTION"),
        at(lines[2], "日本語の説明"),
        "{lines:#?}"
    );
}

#[test]
fn with_columns_set_explain_and_list_fit_in_80_columns() {
    let sb = wide();
    let mut runs = String::new();
    for args in [
        &["explain", "writer"][..],
        &["list"],
        &["list", "--layered"],
    ] {
        // Relative layer paths: the columns are cut alike on any machine.
        let mut cmd = sb.bare();
        cmd.args(["skills", "--layers-root", "layers"])
            .args(args)
            .env("COLUMNS", "80");
        let out = sb.run_cmd(cmd);
        for line in out.ok().lines() {
            assert!(
                columns(line) <= 80,
                "{args:?}: {} columns:\n{line}",
                columns(line)
            );
        }
        runs.push_str(&out.transcript(args));
    }
    // Names and field paths are whole; what was cut ends with `…`.
    assert_snapshot(runs, snapshot_file("terminal-columns-80.txt"));
}

#[test]
fn in_a_pipe_nothing_is_cut() {
    let sb = wide();
    let out = sb.run(&["list"]);
    assert_snapshot(out.ok(), snapshot_file("terminal-pipe-list.txt"));
    // Relative layer paths: the columns are as wide on any machine.
    let out = sb.run_relative(&["explain", "writer"]);
    assert_snapshot(out.ok(), snapshot_file("terminal-pipe-explain.txt"));
}

/// `text` without its SGR escape sequences (`ESC [ ... m`).
fn strip_styles(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("\x1b[") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after.find('m').expect("an SGR sequence ends with m");
        assert!(
            after[..end]
                .bytes()
                .all(|b| b.is_ascii_digit() || b == b';'),
            "{text:?}"
        );
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(unix)]
#[test]
fn on_a_terminal_tables_fit_its_width_and_are_coloured() {
    let sb = wide();
    let mut shown = String::new();
    for (args, width) in [(&["explain", "writer"][..], 80), (&["list"], 50)] {
        let text = on_terminal(process(&sb, args, &[("TERM", "xterm")]), width);
        let plain = strip_styles(&text);
        for line in plain.lines() {
            assert!(columns(line) <= usize::from(width), "{args:?}: {line}");
        }
        shown.push_str(&format!("# {args:?} on {width} columns\n"));
        shown.push_str(&visible_escapes(&text));
    }
    // COLUMNS wins over the terminal's own width.
    let text = on_terminal(
        process(&sb, &["list"], &[("TERM", "xterm"), ("COLUMNS", "200")]),
        60,
    );
    shown.push_str("# [\"list\"] on 60 columns, COLUMNS=200\n");
    shown.push_str(&visible_escapes(&text));
    // Coloured (`␛[`), and cut to the width.
    assert_snapshot(shown, snapshot_file("terminal-on-a-terminal.txt"));
}

#[cfg(unix)]
#[test]
fn term_dumb_and_no_color_turn_colour_off_on_a_terminal() {
    let sb = wide();
    let mut shown = String::new();
    for env in [
        &[("TERM", "dumb")][..],
        &[("TERM", "xterm"), ("NO_COLOR", "1")],
        &[("TERM", "xterm"), ("CLICOLOR", "0")],
    ] {
        let text = on_terminal(process(&sb, &["list"], env), 100);
        assert!(!text.contains('\x1b'), "{env:?}: {text:?}");
        shown.push_str(&format!("# {env:?}\n{text}"));
    }
    assert_snapshot(shown, snapshot_file("terminal-colour-off.txt"));
}

#[test]
fn clicolor_force_colours_a_pipe_unless_no_color_or_never() {
    let sb = wide();
    sb.write("team", "writer.yaml", "descripton: typo\n");
    let run = |env: &[(&str, &str)], color: &str| {
        let mut cmd = sb.skills_cmd(&["--color", color, "validate"]);
        cmd.envs(env.iter().copied());
        sb.run_cmd(cmd).stdout
    };
    let forced = run(&[("CLICOLOR_FORCE", "1")], "auto");
    assert!(!run(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")], "auto").contains('\x1b'));
    assert!(!run(&[("CLICOLOR_FORCE", "1")], "never").contains('\x1b'));
    assert!(!run(&[("TERM", "dumb")], "auto").contains('\x1b'));
    // Both coloured alike.
    let always = run(&[("NO_COLOR", "1")], "always");
    assert_eq!(always, forced);
    assert_snapshot(
        visible_escapes(&forced),
        snapshot_file("terminal-clicolor-force.txt"),
    );
}
