# Sourced by the CI steps that need Python tools: `pinned_venv VENV EXE
# REQUIREMENTS` makes VENV a virtualenv holding exactly the packages of
# REQUIREMENTS (pinned with hashes, installed without their dependencies),
# reusing it while EXE (a path inside VENV) exists and the file's SHA-256
# is the one recorded beside it. Needs $python, the interpreter that
# creates the virtualenv.
pinned_venv() {
  local venv="$1" exe="$2" requirements="$3"
  local stamp="$venv/.requirements.sha256" want
  want="$("$python" -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$requirements")"
  if [ ! -x "$exe" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
      --require-hashes --no-deps -r "$requirements"
    echo "$want" >"$stamp"
  fi
}
