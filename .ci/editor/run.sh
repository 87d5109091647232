#!/usr/bin/env bash
# Checks the generated editor schemas (schemas/*.schema.json) with real
# validators: Ajv in strict draft 2020-12 mode, yaml-language-server driven
# over LSP, and Taplo. Installs them from package-lock.json first.
set -euo pipefail
cd "$(dirname "$0")"

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "error: '$tool' not found: the editor schema checks need Node.js 18 or newer with npm" >&2
    exit 1
  fi
done
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)'; then
  echo "error: Node.js $(node --version) is too old for the editor schema checks (need 18 or newer)" >&2
  exit 1
fi

npm ci --no-audit --no-fund
node check.mjs
