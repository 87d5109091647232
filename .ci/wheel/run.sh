#!/usr/bin/env bash
# A Python user's install: build the wheel (python/build-wheel.sh: the
# release binary, then maturin with pyproject.toml), install it into a fresh
# virtualenv, and from there run, as `bernstein-skills`, the README's
# quickstart, `validate` on the demo layers and `targets`, with no Rust
# toolchain on PATH, nothing but HOME (empty) and PATH in the environment,
# and the virtualenv outside the checkout: the spec and targets must be the
# ones the wheel installed beside the binary. Then the README's other way,
# `cargo install --path .` and `skills spec --install`.
#
# The binary and maturin build with cargo in the same target directory as
# the other CI steps, so the release builds are shared (.ci/python/run.sh
# builds the same wheel).
#
# Needs Python 3 with the venv module. Environment:
#   PYTHON           the interpreter that creates the virtualenvs (python3)
#   WHEEL_VENV       where maturin's virtualenv lives (.ci/wheel/.venv)
#   CARGO_TARGET_DIR where cargo builds (the checkout's target/)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
python="${PYTHON:-python3}"

if ! "$python" -c 'import venv' 2>/dev/null; then
  echo "error: '$python' with the venv module is needed to build and install the wheel" >&2
  exit 1
fi

venv="${WHEEL_VENV:-$here/.venv}"
. "$root/.ci/pinned-venv.sh"
pinned_venv "$venv" "$venv/bin/maturin" "$here/requirements.txt"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "building the wheel"
(cd "$root" && CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}" PATH="$venv/bin:$PATH" \
  python/build-wheel.sh "$work/dist")
wheels=("$work"/dist/bernstein_skills-*.whl)
if [ "${#wheels[@]}" -ne 1 ] || [ ! -f "${wheels[0]}" ]; then
  echo "error: expected one bernstein_skills wheel, found: ${wheels[*]}" >&2
  exit 1
fi
echo "built $(basename "${wheels[0]}")"

# A fresh environment, installed from the wheel file alone.
prefix="$(cd "$work" && pwd -P)/venv"
"$python" -m venv "$prefix"
"$prefix/bin/python" -m pip install --quiet --disable-pip-version-check --no-index "${wheels[0]}"

# PATH: the virtualenv's bin, then the system's directories without any
# that holds a Rust toolchain (~/.cargo/bin, a toolchain's own bin).
clean="$prefix/bin"
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -n "$d" ] || continue
  if [ -e "$d/cargo" ] || [ -e "$d/rustc" ] || [ -e "$d/rustup" ]; then
    continue
  fi
  clean="$clean:$d"
done
home="$work/home"
mkdir -p "$home"
bare() { (cd "$root" && env -i HOME="$home" PATH="$clean" "$@"); }

if bare sh -c 'command -v cargo || command -v rustc'; then
  echo "error: a Rust toolchain is still on PATH" >&2
  exit 1
fi
found="$(bare sh -c 'command -v bernstein-skills')"
if [ "$found" != "$prefix/bin/bernstein-skills" ]; then
  echo "error: 'bernstein-skills' on PATH is '$found', not the wheel's" >&2
  exit 1
fi
# Bernstein installs a console script named `bernstein`: the wheel must not.
if [ -e "$prefix/bin/bernstein" ]; then
  echo "error: the wheel installs a 'bernstein' command, which would replace Bernstein's" >&2
  exit 1
fi

# Each command must succeed with nothing on stderr (no warning, no error).
check() {
  local out err
  out="$work/out" err="$work/err"
  if ! bare "$@" >"$out" 2>"$err" || [ -s "$err" ]; then
    echo "error: '$*' failed or wrote to stderr:" >&2
    cat "$out" "$err" >&2
    exit 1
  fi
}

check bernstein-skills skills spec
share="$prefix/share/bernstein/skills"
if ! head -2 "$work/out" | diff - <(printf 'spec: %s\nfrom: shipped beside the binary\n' "$share/mergespec.yaml") >&2; then
  echo "error: the wheel's bernstein-skills does not use the spec installed beside it" >&2
  exit 1
fi
check bernstein-skills skills --layers-root examples/layers show writer --per-layer
grep -q '"layers_present"' "$work/out"
check bernstein-skills skills --layers-root examples/layers validate
grep -q '^0 error(s)' "$work/out"
check bernstein-skills skills targets
grep -q 'agent-skills' "$work/out"
# Every shipped target, each from the directory beside the binary.
check bernstein-skills skills targets --json
"$python" - "$work/out" "$root/spec/targets" "$share/targets" <<'PY'
import json, os, sys
listed = json.load(open(sys.argv[1]))["targets"]
shipped = sorted(f[: -len(".yaml")] for f in os.listdir(sys.argv[2]) if f.endswith(".yaml"))
names = sorted(t["target"] for t in listed)
if names != shipped:
    sys.exit(f"error: 'skills targets' lists {names}, the wheel ships {shipped}")
for t in listed:
    if os.path.dirname(t["file"]) != sys.argv[3]:
        sys.exit(f"error: target {t['target']} read from {t['file']}, not from {sys.argv[3]}")
PY
echo "wheel: pip install gives a working bernstein-skills with its spec and targets beside it"

# The other way the README gives, which must keep working: `cargo install`
# installs no data, so `spec --install` writes the spec and targets.
(cd "$root" && CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}" CARGO_INSTALL_ROOT="$work/cargo" \
  cargo install --locked --path . --quiet)
rm -rf "$home" && mkdir -p "$home"
clean="$work/cargo/bin:$clean"
check bernstein skills spec --install
check bernstein skills --layers-root examples/layers show writer --per-layer
grep -q '"layers_present"' "$work/out"
check bernstein skills spec
head -1 "$work/out" | grep -qxF "spec: $home/.local/share/bernstein/skills/mergespec.yaml"
echo "cargo install: bernstein works after 'skills spec --install'"

# The README's pip install, as the README writes it: `pip` and `maturin`
# from maturin's pinned virtualenv (maturin is installed there already, so
# pip reaches no index), the wheel into a fresh virtualenv. It builds into
# the checkout's dist/ (ignored by git), so a dist/ that is already there is
# left alone and the step skipped.
if [ -e "$root/dist" ]; then
  echo "README: skipped the pip install commands: $root/dist exists"
  exit 0
fi
(
  cd "$root"
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
  export PATH="$venv/bin:$PATH"
  pip install maturin
  python/build-wheel.sh dist
  "$python" -m venv "$work/readme-venv"
  # shellcheck disable=SC1091
  . "$work/readme-venv/bin/activate"
  pip install dist/bernstein_skills-*.whl
  rm -rf dist
  HOME="$work/readme-home" bernstein-skills skills --layers-root examples/layers show writer --per-layer | grep -q '"layers_present"'
)
echo "README: the pip install commands work as written"
