"""``Project(path, env)`` against the ``bernstein-skills`` command, run in
the same place with the same environment, over a matrix of projects (the
layer variables, a project's own ``.bernstein/skills`` found from below its
root, ``targets.toml``, a source with a local upstream, a broken skill):
``list_skills()`` is what ``list --json`` prints, ``effective(name)`` what
``show NAME --json`` prints (or the same kind of error), and ``export``
writes the same bytes, refuses the same way, into the same places."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

import bernstein_skills as bs

from conftest import ROOT

SPEC = ROOT / "spec" / "mergespec.yaml"


def command() -> Path | None:
    """The command to compare with: ``$BERNSTEIN_SKILLS_COMMAND`` (CI names
    the one the wheel installed, and fails without it), else the one
    installed beside this interpreter, else a build of the checkout."""
    named = os.environ.get("BERNSTEIN_SKILLS_COMMAND")
    if named:
        assert Path(named).is_file(), f"BERNSTEIN_SKILLS_COMMAND={named} is not a file"
        return Path(named)
    for candidate in (
        Path(sys.prefix) / "bin" / "bernstein-skills",
        ROOT / "target" / "release" / "bernstein",
        ROOT / "target" / "debug" / "bernstein",
    ):
        if candidate.is_file():
            return candidate
    return None


@pytest.fixture(scope="module")
def cli() -> Path:
    found = command()
    if found is None:
        pytest.skip("no bernstein-skills command to compare with (build the wheel, or cargo build)")
    return found


def run(cli: Path, cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(cli), "skills", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", *args],
        cwd=cwd, check=True, capture_output=True,
        env={"PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"},
    )


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def home_env(root: Path) -> dict[str, str]:
    """A hermetic environment below ``root``: its own HOME, nothing else
    inherited but PATH, the spec named by its variable."""
    (root / "home").mkdir(parents=True, exist_ok=True)
    return {"PATH": os.environ["PATH"], "HOME": str(root / "home"), "BERNSTEIN_SKILLS_SPEC": str(SPEC)}


WRITER_BASE = "---\nname: writer\ndescription: Writes docs.\ntrigger_keywords: [docs]\n---\n# Writer\n\n## Style\n\nPlain.\n"
REVIEW_BASE = "description: Reviews.\nreferences:\n  - {name: style, path: base/style.md}\n"


def variables(root: Path) -> tuple[Path, dict[str, str]]:
    """Every layer named by its variable; no project."""
    write(root, {
        "b/writer/SKILL.md": WRITER_BASE,
        "b/review.yaml": REVIEW_BASE,
        "t/review.yaml": "references:\n  - {name: style, path: team/style.md}\n",
        "u/writer.toml": 'author = "me"\n[metadata.limits]\ntemperature = 0.5\n',
    })
    env = home_env(root)
    env.update({
        "BERNSTEIN_SKILLS_BASE": str(root / "b"),
        "BERNSTEIN_SKILLS_TEAM": str(root / "t"),
        "BERNSTEIN_SKILLS_USER": str(root / "u"),
    })
    (root / "work").mkdir()
    return root / "work", env


def project_local(root: Path) -> tuple[Path, dict[str, str]]:
    """A git work tree whose .bernstein/skills is the team layer, found
    from a directory below its root; base and user in the XDG places."""
    env = home_env(root)
    env["XDG_DATA_HOME"] = str(root / "data")
    env["XDG_CONFIG_HOME"] = str(root / "config")
    write(root, {
        "data/bernstein/skills/base/writer/SKILL.md": WRITER_BASE,
        "data/bernstein/skills/base/review.yaml": REVIEW_BASE,
        "proj/.bernstein/skills/writer.yaml": "trigger_keywords: [team]\nmetadata: {tone: dry}\n",
        "proj/.bernstein/skills/review/references/team.md": "Team notes.\n",
        "proj/src/README": "code\n",
        "config/bernstein/skills/user/writer.yaml": "author: me\n",
    })
    git(root / "proj", "init", "-q")
    return root / "proj" / "src", env


def with_targets(root: Path) -> tuple[Path, dict[str, str]]:
    """A project naming its targets in targets.toml, with a description
    longer than the Agent Skills standard takes."""
    cwd, env = project_local(root)
    write(root, {
        "proj/.bernstein/targets.toml": 'targets = ["agent-skills", "claude-code"]\n',
        "proj/.bernstein/skills/long.yaml": "description: " + "x" * 1100 + "\n",
    })
    return cwd, env


def with_source(root: Path) -> tuple[Path, dict[str, str]]:
    """A project taking skills from a local upstream repository, added and
    locked by the command."""
    cwd, env = project_local(root)
    up = root / "upstream"
    write(up, {
        "pdf/SKILL.md": "---\nname: pdf\ndescription: Reads PDFs.\n---\n# PDF\n",
        "pdf/scripts/run.py": "print(1)\n",
        "lint/SKILL.md": "---\nname: lint\ndescription: Lints.\n---\n# Lint\n",
    })
    git(up, "init", "-q")
    git(up, "add", "-A")
    git(up, "commit", "-qm", "c")
    write(root, {"proj/.bernstein/skills/pdf.yaml": "trigger_keywords: [pdf]\n"})
    cli_path = command()
    assert cli_path is not None
    added = run(cli_path, root / "proj", env, "add", str(up))
    assert added.returncode == 0, added.stderr
    return cwd, env


def broken(root: Path) -> tuple[Path, dict[str, str]]:
    """A skill that does not check, beside ones that do."""
    cwd, env = variables(root)
    write(root, {"u/review.yaml": "descripton: typo\n"})
    return cwd, env


CASES: dict[str, Callable[[Path], tuple[Path, dict[str, str]]]] = {
    "variables": variables,
    "project-local": project_local,
    "targets-toml": with_targets,
    "source": with_source,
    "broken": broken,
}


def files(root: Path) -> dict[str, bytes]:
    """Every file below ``root``, by its path relative to it."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


@pytest.mark.parametrize("case", sorted(CASES))
def test_list_and_show_are_the_commands(cli: Path, tmp_path: Path, case: str) -> None:
    cwd, env = CASES[case](tmp_path)
    project = bs.Project(cwd, env)

    listed = run(cli, cwd, env, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    doc = json.loads(listed.stdout)
    assert project.list_skills() == doc
    assert doc["skills"], "the case has skills"

    for entry in doc["skills"]:
        name = entry["skill"]
        shown = run(cli, cwd, env, "show", name, "--json")
        if shown.returncode == 0:
            assert project.effective(name) == json.loads(shown.stdout), name
            continue
        error = json.loads(shown.stdout)["error"]
        with pytest.raises(bs.BernsteinSkillsError) as raised:
            project.effective(name)
        assert raised.value.kind == error["kind"] == entry["error"]["kind"], name
        assert [d.message for d in raised.value.diagnostics] == [
            d["message"] for d in error["diagnostics"]
        ]


@pytest.mark.parametrize("case", sorted(CASES))
def test_export_writes_the_commands_bytes(cli: Path, tmp_path: Path, case: str) -> None:
    """The same project twice, one exported by the command, one by
    Project: the same files, byte for byte, the same refusals."""
    a, env_a = CASES[case](tmp_path / "a")
    b, env_b = CASES[case](tmp_path / "b")
    project = bs.Project(b, env_b)
    keep_going = ["--keep-going"] if case == "broken" else []

    # Outside the project: a project's own layer must be trusted first.
    cli_out, py_out = tmp_path / "a" / "out", tmp_path / "b" / "out"
    done = run(cli, a, env_a, "export", "--out", str(cli_out), "--format", "skill", "--json", *keep_going)
    if done.returncode == 1 and "error" in json.loads(done.stdout):
        kind = json.loads(done.stdout)["error"]["kind"]
        with pytest.raises(bs.BernsteinSkillsError) as raised:
            project.export(py_out, format="skill", keep_going=bool(keep_going))
        assert raised.value.kind == kind
        assert kind == "untrusted" and isinstance(raised.value, bs.UntrustedError)
        assert not py_out.exists() and not cli_out.exists()
        for cwd, env in ((a, env_a), (b, env_b)):
            trusted = run(cli, cwd, env, "trust")
            assert trusted.returncode == 0, trusted.stderr
        done = run(cli, a, env_a, "export", "--out", str(cli_out), "--format", "skill", *keep_going)
    result = project.export(py_out, format="skill", keep_going=bool(keep_going))
    assert files(cli_out) == files(py_out)
    assert result.dir == py_out and result.written
    if case == "broken":
        assert done.returncode == 1 and [e.kind for e in result.errors] == ["invalid"]
    else:
        assert done.returncode == 0, done.stderr

    # JSON manifests, and once more: nothing to write.
    run(cli, a, env_a, "export", "--out", str(cli_out / "json"), *keep_going)
    project.export(py_out / "json", keep_going=bool(keep_going))
    assert files(cli_out) == files(py_out)
    assert project.export(py_out / "json", keep_going=bool(keep_going)).written == ()

    # A target's place in the project: the base and team layers only.
    if (a / ".git").exists() or any((p / ".git").exists() for p in a.parents):
        done = run(cli, a, env_a, "export", "--target", "claude-code", "--scope", "project", *keep_going)
        assert done.returncode == 0, done.stderr
        result = project.export(target="claude-code", scope="project")
        assert result.written
        assert files(tmp_path / "a" / "proj" / ".claude") == files(tmp_path / "b" / "proj" / ".claude")
        assert "author: me" not in (result.dir / "writer" / "SKILL.md").read_text()


def test_validate_is_the_commands(cli: Path, tmp_path: Path) -> None:
    """With a targets.toml, validate judges by those targets' rules, as
    warnings; the same diagnostics as the command's."""
    cwd, env = with_targets(tmp_path)
    checked = run(cli, cwd, env, "validate", "--json")
    doc = json.loads(checked.stdout)
    mine = bs.Project(cwd, env).validate()
    assert [(d.severity, d.message) for d in mine] == [
        (d["severity"], d["message"]) for d in doc["diagnostics"]
    ]
    assert any(d.severity == "warning" and "1024" in d.message for d in mine)


def test_a_project_finds_what_the_command_finds(tmp_path: Path) -> None:
    cwd, env = project_local(tmp_path)
    project = bs.Project(cwd, env)
    places = {p["layer"]: p for p in project.list_skills()["places"]}
    assert places["team"]["found_by"] == "project"
    # Named as a person standing in `cwd` would type it, as the command names it.
    assert (cwd / places["team"]["dir"]).resolve() == (tmp_path / "proj" / ".bernstein" / "skills").resolve()
    assert project.effective("writer")["trigger_keywords"] == ["docs", "team"]
    # Bernstein's functions keep Bernstein's layout: its XDG team layer,
    # not the project's.
    os.chdir(cwd)
    assert bs.load_skill("writer", env=env).trigger_keywords == ("docs",)
    # The command's error, as its kind's class.
    with pytest.raises(bs.NotFoundError) as nf:
        project.effective("ghost")
    assert nf.value.kind == "not_found" and "skill 'ghost' not found in any layer" in str(nf.value)


def test_every_kind_has_its_class() -> None:
    kinds = bs._native.ERROR_KINDS
    assert sorted(bs._BY_KIND) == sorted(kinds)
    for kind, cls in bs._BY_KIND.items():
        assert issubclass(cls, bs.BernsteinSkillsError) and cls.kind == kind
    assert issubclass(bs.SkillNotFoundError, bs.NotFoundError)
    assert issubclass(bs.UnknownFieldError, bs.BernsteinSkillsError)
    assert issubclass(bs.SkillTypeError, bs.BernsteinSkillsError)
    assert shutil.which("git") is not None
