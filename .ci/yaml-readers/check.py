#!/usr/bin/env python3
"""Reads every frontmatter of the corpus with PyYAML (a YAML 1.1 reader)
and fails on any that does not read back as its JSON value.

The corpus is written by the Rust test `frontmatter` (tests/it/export/
frontmatter.rs) when BERNSTEIN_YAML_CORPUS names a file: a JSON list of
{"json": mapping, "yaml": the frontmatter bernstein writes for it}. Equal
means of the same type too: a boolean is not the integer 1, an integer is
not a float, -0.0 is not 0.0, a string is not a date.

Prints one line per reader and loader; exits 1 on any difference.

Usage: check.py CORPUS
"""

import json
import math
import sys

import yaml


def same(a, b):
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        corpus = json.load(f)
    loaders = [("SafeLoader", yaml.SafeLoader)]
    if getattr(yaml, "CSafeLoader", None) is not None:
        loaders.append(("CSafeLoader (libyaml)", yaml.CSafeLoader))
    failed = 0
    for name, loader in loaders:
        bad = []
        for case in corpus:
            try:
                got = yaml.load(case["yaml"], Loader=loader)
            except yaml.YAMLError as e:
                got = f"<error: {str(e).splitlines()[0]}>"
            if not same(got, case["json"]):
                bad.append((case, got))
        for case, got in bad[:10]:
            print(f"  {case['yaml'][:200]!r}\n    read as {got!r:.200}\n    not     {case['json']!r:.200}")
        verdict = "PASS" if not bad else "FAIL"
        print(f"{verdict} PyYAML {yaml.__version__} {name}: {len(corpus) - len(bad)} of {len(corpus)} read back equal")
        failed += bool(bad)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
