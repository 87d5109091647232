#!/usr/bin/env bash
# Differential test: `bernstein skills validate` against the Agent Skills
# reference validator (`agentskills validate`, PyPI package skills-ref) on
# every skill under fixtures/. Installs the reference validator into a
# virtualenv from requirements.txt (pinned, with hashes), builds bernstein,
# then runs compare.py, which prints a table and fails on any disagreement
# not listed, with its reason, in expected-disagreements.txt.
#
# Needs Python 3.11 or newer with the venv module. Environment:
#   PYTHON          the interpreter that creates the virtualenv (python3)
#   SKILLS_REF_VENV where the virtualenv lives (.ci/skills-ref/.venv)
#   BERNSTEIN       a bernstein binary to test instead of building one
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
python="${PYTHON:-python3}"

if ! command -v "$python" >/dev/null 2>&1; then
  echo "error: '$python' not found: the skills-ref check needs Python 3.11 or newer" >&2
  exit 1
fi
if ! "$python" -c 'import sys, venv; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
  echo "error: $("$python" --version 2>&1) cannot run skills-ref (needs Python 3.11 or newer with venv)" >&2
  exit 1
fi

venv="${SKILLS_REF_VENV:-$here/.venv}"
. "$root/.ci/pinned-venv.sh"
pinned_venv "$venv" "$venv/bin/agentskills" "$here/requirements.txt"

bernstein="${BERNSTEIN:-}"
if [ -z "$bernstein" ]; then
  (cd "$root" && cargo build --release --quiet --bin bernstein)
  bernstein="${CARGO_TARGET_DIR:-$root/target}/release/bernstein"
fi

"$venv/bin/python" "$here/compare.py" --agentskills "$venv/bin/agentskills" --bernstein "$bernstein"

# The other half of the format: what `export --format skill` writes is a
# skill the reference validator accepts. The bundled demo's pdf-tables is a
# public-style skill (standard fields only) with a team override that
# changes its description and adds a reference file.
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$bernstein" skills --layers-root "$root/examples/layers" --spec "$root/spec/mergespec.yaml" \
  export --format skill --out "$out/skills" >/dev/null
test -f "$out/skills/pdf-tables/references/house-style.md"
"$venv/bin/agentskills" validate "$out/skills/pdf-tables"
echo "skills-ref: the exported pdf-tables skill is valid"

# And what `export --target agent-skills` writes: every skill it exports
# (those that pass the target's rules; --keep-going names the others) is
# one the reference validator accepts.
code=0
"$bernstein" skills --layers-root "$root/examples/layers" --spec "$root/spec/mergespec.yaml" \
  export --target agent-skills --keep-going --out "$out/agent-skills" >/dev/null 2>&1 || code=$?
test "$code" -le 1
n=0
for d in "$out/agent-skills"/*/; do
  "$venv/bin/agentskills" validate "$d"
  n=$((n + 1))
done
test "$n" -ge 1
echo "skills-ref: the $n skill(s) exported for the agent-skills target are valid"
