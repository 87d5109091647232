"""bernstein_skills against Bernstein 3.23.0's layered module, in one process.

    cargo run --release --example gen-tree -- DIR 10000 --seed 1
    python benches/python.py DIR [--rounds N]

Needs the wheel installed (python/build-wheel.sh) and Bernstein 3.23.0 with
PyYAML (its layered module is loaded from its file, as the tests do). Two
workloads, each timed `--rounds` times for each module, interleaved, and
reported as medians with the ratio:

- tree: `list_skills`, then `load_skill` of every skill listed;
- merge: `merge_layers` on the design's example fragments, 10,000 times.

The tree is the shipped spec's (gen-tree), so each module runs it under a
strategy table of all the shipped spec's fields (Bernstein's `MergeSpec`
with those strategies; ours `MergeSpec.load(spec/mergespec.yaml)`). Some
skills fail in Bernstein's module where this engine merges them (TOML
fragments, plain names in KEYED_REPLACE lists, the documented differences):
its time for those is the time it took to fail, and the counts of skills
loaded are printed beside the figures.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import bernstein_skills as ours

ROOT = Path(__file__).resolve().parents[1]


def bernstein_layered() -> ModuleType:
    dist = metadata.distribution("bernstein")
    if dist.version != "3.23.0":
        sys.exit(f"error: Bernstein {dist.version} is installed, the comparison is with 3.23.0")
    path = Path(str(dist.locate_file("bernstein/core/skills/layered.py")))
    spec = importlib.util.spec_from_file_location("bernstein_layered_3_23", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def fragments(m: ModuleType) -> dict[Any, dict[str, Any]]:
    """The design's examples (tests/it/merge/design.rs), as one base and one user
    fragment: per-field OVERRIDE, APPEND, KEYED_REPLACE and DEEP_MERGE."""
    return {
        m.SkillLayer.BASE: {
            "description": "base description",
            "author": "core",
            "trigger_keywords": ["base-kw"],
            "references": [{"name": "style", "url": "base-style"}],
            "metadata": {"limits": {"max_tokens": 1000, "temperature": 0.2}},
        },
        m.SkillLayer.USER: {
            "author": "me",
            "references": [
                {"name": "style", "url": "user-style"},
                {"name": "extras", "url": "user-extras"},
            ],
            "metadata": {"limits": {"max_tokens": 2000}},
        },
    }


def tree(m: ModuleType, paths: Any, spec: Any) -> int:
    loaded = 0
    for name, _layers in m.list_skills(paths=paths):
        try:
            m.load_skill(name, paths=paths, spec=spec)
            loaded += 1
        except Exception:  # noqa: BLE001 - Bernstein's YAML errors too; counted
            pass
    return loaded


def merge(m: ModuleType, n: int) -> int:
    f = fragments(m)
    for _ in range(n):
        m.merge_layers(f)
    return n


def timed(fn: Callable[[], int]) -> tuple[float, int]:
    start = time.perf_counter()
    count = fn()
    return time.perf_counter() - start, count


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--merges", type=int, default=10_000)
    args = ap.parse_args()

    theirs = bernstein_layered()
    spec = ours.MergeSpec.load(ROOT / "spec" / "mergespec.yaml")
    their_spec = theirs.MergeSpec(
        strategies={k: theirs.MergeStrategy(v.value) for k, v in spec.strategies.items()}
    )
    d = args.dir
    our_paths = ours.LayeredSkillPaths(d / "base", d / "team", d / "user")
    their_paths = theirs.LayeredSkillPaths(d / "base", d / "team", d / "user")
    skills = len(ours.list_skills(paths=our_paths))

    work = {
        "tree": (
            lambda: tree(ours, our_paths, spec),
            lambda: tree(theirs, their_paths, their_spec),
        ),
        "merge": (lambda: merge(ours, args.merges), lambda: merge(theirs, args.merges)),
    }
    print(f"{skills} skills in {d}; {args.rounds} rounds; Python {sys.version.split()[0]}")
    for label, (mine, their) in work.items():
        a, b = [], []
        for _ in range(args.rounds):
            t, mine_count = timed(mine)
            a.append(t)
            t, their_count = timed(their)
            b.append(t)
        ma, mb = statistics.median(a), statistics.median(b)
        print(
            f"{label:5}  bernstein_skills {ma:8.3f} s ({mine_count} done)"
            f"  bernstein {mb:8.3f} s ({their_count} done)  ratio {mb / ma:6.1f}x"
        )


if __name__ == "__main__":
    main()
