#!/usr/bin/env python3
"""Differential test of `bernstein skills validate` against the Agent Skills
reference validator (`agentskills validate`, from skills-ref).

Every directory under fixtures/ is a skill in the standard's shape. Each is
validated by both tools: the reference validator on the directory, and
Bernstein with the fixtures as its base layer, the shipped spec and the
standard's target (`validate --strict --target agent-skills`). The verdicts (valid or invalid) must
agree, except on the fixtures listed in expected-disagreements.txt with the
reason. Prints a table; exits 1 on any unexpected disagreement, on a listed
disagreement that no longer happens, or if a tool fails to run.

Usage: compare.py --agentskills PATH --bernstein PATH
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(HERE, "fixtures")
EXPECTED = os.path.join(HERE, "expected-disagreements.txt")
SPEC = os.path.join(ROOT, "spec", "mergespec.yaml")


def width(text):
    """Columns `text` takes in a terminal (wide CJK and emoji count two)."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def pad(text, columns):
    return text + " " * max(0, columns - width(text))


def verdict(run):
    return {0: "valid", 1: "invalid"}.get(run.returncode)


def first_lines(run, n=3):
    text = (run.stdout + run.stderr).strip().splitlines()
    return [line[:160] for line in text[:n]]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agentskills", required=True)
    parser.add_argument("--bernstein", required=True)
    args = parser.parse_args()

    expected = {}
    with open(EXPECTED, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.strip() and not line.startswith("#"):
                name, _, reason = line.partition("\t")
                expected[name] = reason
    fixtures = sorted(
        d for d in os.listdir(FIXTURES) if os.path.isfile(os.path.join(FIXTURES, d, "SKILL.md"))
    )
    missing = sorted(set(expected) - set(fixtures))
    if missing:
        print(f"error: expected-disagreements.txt names no fixture: {', '.join(missing)}")
        return 1

    rows, failures, details = [], 0, []
    with tempfile.TemporaryDirectory(prefix="bernstein-skills-ref-") as tmp:
        layers = os.path.join(tmp, "layers")
        shutil.copytree(FIXTURES, os.path.join(layers, "base"))
        home = os.path.join(tmp, "home")
        os.mkdir(home)
        env = {"HOME": home, "PATH": os.environ.get("PATH", ""), "LC_ALL": "C.UTF-8"}
        for name in fixtures:
            ref = subprocess.run(
                [args.agentskills, "validate", os.path.join(FIXTURES, name)],
                capture_output=True, text=True, env=env,
            )
            ours = subprocess.run(
                [args.bernstein, "skills", "--spec", SPEC, "--layers-root", layers,
                 "--color", "never", "validate", "--strict", "--target", "agent-skills",
                 "--", name],
                capture_output=True, text=True, env=env,
            )
            a, b = verdict(ref), verdict(ours)
            if a is None or b is None:
                result = "TOOL FAILED"
            elif a == b:
                result = "STALE: agrees now" if name in expected else "agree"
            else:
                result = "deliberate" if name in expected else "DISAGREE"
            if result not in ("agree", "deliberate"):
                failures += 1
                details.append((name, ref, ours))
            rows.append((name, a or f"exit {ref.returncode}", b or f"exit {ours.returncode}", result))

    header = ("FIXTURE", "SKILLS-REF", "BERNSTEIN", "RESULT")
    cols = [max(width(r[i]) for r in rows + [header]) for i in range(3)]
    for r in [header] + rows:
        print("  ".join(pad(r[i], cols[i]) for i in range(3)) + "  " + r[3])
    deliberate = [r[0] for r in rows if r[3] == "deliberate"]
    if deliberate:
        print("\nDeliberate disagreements:")
        for name in deliberate:
            print(f"  {name}: {expected[name]}")
    for name, ref, ours in details:
        print(f"\n{name}:")
        print("  agentskills validate:", *first_lines(ref), sep="\n    ")
        print("  bernstein skills validate --strict --target agent-skills:", *first_lines(ours),
              sep="\n    ")
    agree = sum(1 for r in rows if r[3] == "agree")
    print(
        f"\nskills-ref: {len(rows)} fixtures, {agree} agree, {len(deliberate)} deliberate "
        f"disagreement(s), {failures} failure(s)"
    )
    return 1 if failures or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
