# shellcheck shell=bash
# ensure_node: puts a Node >= 22 first on PATH, installing Node 24 into the cache when needed.
BROKKR_CACHE="${BROKKR_CACHE:-$HOME/.cache/brokkr}"
BROKKR_NODE_VERSION="${BROKKR_NODE_VERSION:-24}"

node_major() { "${1:-node}" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

ensure_node() {
  if command -v node >/dev/null 2>&1 && [ "$(node_major node)" -ge 22 ]; then
    return 0
  fi
  local dir="$BROKKR_CACHE/node" bin="$BROKKR_CACHE/node/node_modules/node/bin"
  if [ ! -x "$bin/node" ] || [ "$(node_major "$bin/node")" -lt 22 ]; then
    echo "[brokkr] node $(node --version 2>/dev/null || echo missing) is older than 22; installing Node $BROKKR_NODE_VERSION into $dir" >&2
    mkdir -p "$dir"
    npm install --no-save --no-package-lock --prefix "$dir" "node@$BROKKR_NODE_VERSION" >&2
  fi
  export PATH="$bin:$PATH"
}
