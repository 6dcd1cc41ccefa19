#!/usr/bin/env bash
# Puts a pinned schemathesis (the OpenAPI conformance fuzzer used by services/api's
# openapi-fuzz test) into a virtualenv at $BROKKR_CACHE/venv-schemathesis, installing it from
# PyPI only when that version is missing. Needs python3 >= 3.9 with the venv module.
# Prints the `st` executable's path on stdout; progress goes to stderr.
set -euo pipefail
cache="${BROKKR_CACHE:-$HOME/.cache/brokkr}"
venv="$cache/venv-schemathesis"
VERSION="${BROKKR_SCHEMATHESIS_VERSION:-4.32.5}"
# Its dependencies are pinned too (a constraints file): the stamp names both, so a change to
# either reinstalls.
constraints="$(cd "$(dirname "$0")" && pwd)/schemathesis-constraints.txt"
stamp="$venv/.brokkr-schemathesis-$VERSION-$(sha256sum "$constraints" | cut -c1-12)"
if [ -x "$venv/bin/st" ] && [ -f "$stamp" ]; then
  echo "$venv/bin/st"
  exit 0
fi
# A bare Debian machine may lack python3 or its venv module (python3-venv): install them like
# the other test prerequisites, with apt.
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "[brokkr] installing python3 and python3-venv with apt-get (for schemathesis)" >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3 python3-venv >&2 || {
      $sudo apt-get update -q >&2
      $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3 python3-venv >&2
    }
  fi
  python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || { echo "schemathesis needs python3 (>= 3.9) with venv and pip" >&2; exit 1; }
fi
mkdir -p "$cache"
# Two test runs installing at once would share one half-built venv.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$cache/venv-schemathesis.lock"
  flock 9
  if [ -x "$venv/bin/st" ] && [ -f "$stamp" ]; then echo "$venv/bin/st"; exit 0; fi
fi
echo "[brokkr] installing schemathesis $VERSION into $venv (once; about a minute)" >&2
rm -rf "$venv"
python3 -m venv "$venv" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -c "$constraints" "schemathesis==$VERSION" >&2
touch "$stamp"
echo "$venv/bin/st"
