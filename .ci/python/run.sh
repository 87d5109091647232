#!/usr/bin/env bash
# The Python package (issue 32): build the wheel (the bernstein_skills
# module and the native `bernstein-skills` command), then
#
# 1. install Bernstein 3.23.0 and the wheel into one fresh virtualenv, in
#    both orders: Bernstein's `bernstein` must still be Bernstein's console
#    script, and `bernstein-skills` the native binary (an ELF file, not a
#    Python script), and both must run;
# 2. run the pytest suite (python/tests/) against the installed wheel: the
#    whole API, the docs' examples, the differential test against
#    Bernstein's layered module, and Project against the installed
#    `bernstein-skills` command over a matrix of projects (git makes their
#    work trees and a local upstream).
#
# Bernstein 3.23.0 asks for Python 3.12. On an older interpreter it is
# installed without its dependencies (--ignore-requires-python): its
# layered module runs there (it needs only PyYAML), its command does not
# (its CLI uses Python 3.12 syntax), so the script checks that the command
# is Bernstein's own, intact, and runs it only on 3.12 or later.
#
# Needs Python 3.10 or newer with the venv module. Environment:
#   PYTHON           the interpreter that creates the virtualenvs (python3)
#   PYTHON_CI_VENV   where the tools' virtualenv lives (.ci/python/.venv)
#   CARGO_TARGET_DIR where cargo builds (the checkout's target/, shared
#                    with .ci/wheel/run.sh)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
python="${PYTHON:-python3}"
start=$SECONDS
# The same target directory as the other CI steps (.ci/wheel/run.sh builds
# this very wheel first), so the extension is compiled once.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"

if ! "$python" -c 'import sys, venv; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null; then
  echo "error: '$python' cannot build and test the Python package (needs Python 3.10 or newer with venv)" >&2
  exit 1
fi
new312="$("$python" -c 'import sys; print(int(sys.version_info >= (3, 12)))')"

# The build tool, maturin, pinned as the wheel check pins it (pytest and
# PyYAML go into the test environment below).
venv="${PYTHON_CI_VENV:-$here/.venv}"
. "$root/.ci/pinned-venv.sh"
pinned_venv "$venv" "$venv/bin/maturin" "$root/.ci/wheel/requirements.txt"

# The extension's crate is outside the main workspace: its own checks.
(cd "$root" && cargo fmt --manifest-path python/Cargo.toml -- --check)
(cd "$root" && cargo clippy --manifest-path python/Cargo.toml -q -- -D warnings)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "building the wheel"
PATH="$venv/bin:$PATH" "$root/python/build-wheel.sh" "$work/dist"
wheels=("$work"/dist/bernstein_skills-*.whl)
if [ "${#wheels[@]}" -ne 1 ] || [ ! -f "${wheels[0]}" ]; then
  echo "error: expected one bernstein_skills wheel, found: ${wheels[*]}" >&2
  exit 1
fi
wheel="${wheels[0]}"
echo "built $(basename "$wheel") in $((SECONDS - start)) s"
# Editors and mypy see the types: the stubs and the marker are in the wheel.
"$python" - "$wheel" <<'PY'
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
need = {"bernstein_skills/py.typed", "bernstein_skills/_native.pyi", "bernstein_skills/__init__.py"}
missing = need - names
scripts = [n for n in names if ".data/scripts/" in n]
if missing or [s.rsplit("/", 1)[1] for s in scripts] != ["bernstein-skills"]:
    sys.exit(f"error: the wheel lacks {sorted(missing)} or has scripts {scripts}")
PY

pip_in() {
  local v="$1"
  shift
  "$v/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
}
install_bernstein() {
  if [ "$new312" = 1 ]; then
    pip_in "$1" "bernstein==3.23.0"
  else
    pip_in "$1" --require-hashes --no-deps --ignore-requires-python -r "$here/bernstein.txt"
  fi
}

# Both commands, in one environment: each is what its package installed.
check_both() {
  local v="$1" order="$2"
  if ! grep -q '^from bernstein.cli.main import cli' "$v/bin/bernstein"; then
    echo "error ($order): $v/bin/bernstein is not Bernstein's console script:" >&2
    head -5 "$v/bin/bernstein" >&2
    exit 1
  fi
  if [ "$(head -c 4 "$v/bin/bernstein-skills" | od -An -c | tr -d ' ')" != '177ELF' ]; then
    echo "error ($order): $v/bin/bernstein-skills is not the native binary" >&2
    exit 1
  fi
  out="$(cd "$root" && "$v/bin/bernstein-skills" skills --layers-root examples/layers show writer)"
  grep -q '"layers_present"' <<<"$out"
  if [ "$new312" = 1 ]; then
    "$v/bin/bernstein" --help >/dev/null
    echo "$order: bernstein (Bernstein's) and bernstein-skills (native) both run"
  else
    echo "$order: bernstein is Bernstein's console script (its CLI needs Python 3.12, not run), bernstein-skills (native) runs"
  fi
  if [ -e "$v/bin/bernstein-skills.exe" ] || grep -rqs 'bernstein_skills' "$v/bin/bernstein"; then
    echo "error ($order): the wheel touched Bernstein's command" >&2
    exit 1
  fi
}

first="$work/bernstein-first"
"$python" -m venv "$first"
install_bernstein "$first"
pip_in "$first" --no-index "$wheel"
check_both "$first" "Bernstein, then the wheel"

second="$work/wheel-first"
"$python" -m venv "$second"
pip_in "$second" --no-index "$wheel"
install_bernstein "$second"
check_both "$second" "the wheel, then Bernstein"

# The suite, against the installed wheel (not the source tree), with the
# test tools beside it.
pip_in "$second" --require-hashes --no-deps -r "$here/requirements.txt"
where="$(cd "$work" && "$second/bin/python" -c 'import bernstein_skills; print(bernstein_skills.__file__)')"
case "$where" in
  "$second"/*) ;;
  *) echo "error: bernstein_skills imported from $where, not the wheel" >&2; exit 1 ;;
esac
(cd "$root" && BERNSTEIN_SKILLS_COMMAND="$second/bin/bernstein-skills" \
  "$second/bin/python" -m pytest -q -p no:cacheprovider python/tests)
echo "python: done in $((SECONDS - start)) s"
