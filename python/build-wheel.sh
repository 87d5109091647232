#!/usr/bin/env bash
# Builds the Python wheel (pyproject.toml) into DIR (default dist/): the
# `bernstein_skills` module and the native `bernstein-skills` command in
# one wheel. maturin builds one kind of artefact per wheel (here the PyO3
# module), so the command is built first with cargo and put where the
# wheel's scripts go (wheel-data/scripts/, ignored by git); pip installs
# it into bin/ unchanged. Honours CARGO_TARGET_DIR, and BERNSTEIN (a
# release binary already built, to reuse instead of building one).
#
#   python/build-wheel.sh [DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-dist}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
bin="${BERNSTEIN:-}"
if [ -z "$bin" ]; then
  (cd "$root" && cargo build --release --quiet --bin bernstein)
  bin="${CARGO_TARGET_DIR:-$root/target}/release/bernstein"
fi
mkdir -p "$root/wheel-data/scripts"
install -m 755 "$bin" "$root/wheel-data/scripts/bernstein-skills"
cd "$root"
maturin build --release --quiet --out "$out"
