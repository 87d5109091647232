#!/usr/bin/env bash
# The exported frontmatter means the same to every YAML reader: the Rust
# test `frontmatter` writes a corpus of generated values (reserved words in
# every case, numbers in every YAML 1.1 form, dates, merge keys, control and
# invisible characters, nested lists and mappings...) with the frontmatter
# bernstein writes for each, and two independent readers read each back:
# PyYAML (YAML 1.1; installed into a virtualenv from requirements.txt,
# pinned with hashes) and js-yaml plus the yaml package in its 1.1 and 1.2
# modes (installed from package-lock.json). Any value that does not read
# back equal to its JSON fails the check.
#
# Needs Python 3 with the venv module, and Node.js 18 or newer with npm.
# Environment:
#   PYTHON            the interpreter that creates the virtualenv (python3)
#   YAML_READERS_VENV where the virtualenv lives (.ci/yaml-readers/.venv)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
python="${PYTHON:-python3}"

for tool in "$python" node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "error: '$tool' not found: the YAML reader check needs Python 3 and Node.js 18 or newer with npm" >&2
    exit 1
  fi
done

venv="${YAML_READERS_VENV:-$here/.venv}"
. "$root/.ci/pinned-venv.sh"
pinned_venv "$venv" "$venv/bin/python" "$here/requirements.txt"
(cd "$here" && npm ci --no-audit --no-fund --silent)

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
corpus="$tmp/corpus.json"
(cd "$root" && BERNSTEIN_YAML_CORPUS="$corpus" cargo test -q --test main frontmatter:: >/dev/null)
test -s "$corpus"

status=0
"$venv/bin/python" "$here/check.py" "$corpus" || status=1
node "$here/check.mjs" "$corpus" || status=1
exit "$status"
