#!/usr/bin/env bash
# Runs a command with Node >= 22 first on PATH (plus the repo's node_modules/.bin).
# Node 20 is end-of-life; when the machine's node is older than 22 we install Node 24
# from the npm registry (the `node` package ships the binary) into ~/.cache/brokkr/node.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$here/scripts/lib/ensure-node.sh"
ensure_node
export PATH="$here/node_modules/.bin:$PATH"
exec "$@"
