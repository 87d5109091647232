"""Shared fixtures: Bernstein 3.23.0's layered module, and layer trees."""

from __future__ import annotations

import importlib.util
import sys
from importlib import metadata
from pathlib import Path
from types import ModuleType

import pytest

import bernstein_skills as ours

ROOT = Path(__file__).resolve().parents[2]


def bernstein_layered() -> ModuleType | None:
    """Bernstein's ``bernstein.core.skills.layered``, loaded from its file.

    Imported by path rather than through ``bernstein.core.skills``: the
    package's ``__init__`` pulls in the whole application (pydantic, the
    CLI, …) and Bernstein 3.23.0 asks for Python 3.12, while the layered
    module itself needs only PyYAML and runs on 3.10 and later.
    """
    try:
        dist = metadata.distribution("bernstein")
    except metadata.PackageNotFoundError:
        return None
    if dist.version != "3.23.0":
        return None
    path = Path(str(dist.locate_file("bernstein/core/skills/layered.py")))
    spec = importlib.util.spec_from_file_location("bernstein_layered_3_23", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def theirs() -> ModuleType:
    module = bernstein_layered()
    if module is None:
        pytest.skip("Bernstein 3.23.0 is not installed")
    return module


def tree(root: Path, files: dict[str, str]) -> ours.LayeredSkillPaths:
    """Layers ``root/base``, ``root/team``, ``root/user`` holding ``files``
    (``"team/writer.yaml": text``)."""
    for layer in ("base", "team", "user"):
        (root / layer).mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return ours.LayeredSkillPaths(base=root / "base", team=root / "team", user=root / "user")
