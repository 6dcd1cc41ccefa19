#!/usr/bin/env bash
# Installs the PostgreSQL server binaries from Debian when none are found. The package's own
# cluster is not started (policy-rc.d), so nothing keeps running after we are done.
set -euo pipefail
if ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || command -v postgres >/dev/null 2>&1; then exit 0; fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "PostgreSQL server binaries not found and apt-get is unavailable: install PostgreSQL >= 14 or set BROKKR__DATABASE__URL" >&2
  exit 1
fi
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "[brokkr] installing postgresql with apt-get" >&2
policy=/usr/sbin/policy-rc.d; created_policy=0
if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null; $sudo chmod +x "$policy"; created_policy=1; fi
trap '[ $created_policy -eq 1 ] && $sudo rm -f "$policy"' EXIT
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2 || {
  $sudo apt-get update -q >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2
}
