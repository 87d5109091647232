"""docs/python.md shows each public name with an example; every example
runs, as it is, from the checkout's root."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import bernstein_skills

from conftest import ROOT

DOC = ROOT / "docs" / "python.md"


def examples() -> list[tuple[int, str]]:
    text = DOC.read_text(encoding="utf-8")
    found = []
    for m in re.finditer(r"^```python\n(.*?)^```$", text, re.S | re.M):
        found.append((text[: m.start()].count("\n") + 1, m.group(1)))
    return found


@pytest.mark.parametrize("line,code", examples(), ids=[f"line-{n}" for n, _ in examples()])
def test_example_runs(line: int, code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    exec(compile(code, f"{DOC}:{line}", "exec"), {"__name__": "docs_example"})


def test_every_public_name_has_an_example() -> None:
    code = "\n".join(c for _, c in examples())
    missing = [name for name in bernstein_skills.__all__ if not re.search(rf"\b{name}\b", code)]
    assert missing == []
