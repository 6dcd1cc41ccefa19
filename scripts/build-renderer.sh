#!/usr/bin/env bash
# Builds brokkr-render (tools/renderer: Helm's and kustomize's engines behind a one-job JSON
# interface, run by @brokkr/render in sandboxed processes) from the Go module proxy into
# ${BROKKR_CACHE:-$HOME/.cache/brokkr}/bin and prints its path.
#
# The binary's name carries a hash of what it is built from (tools/renderer's Go sources, go.mod,
# go.sum and this script's build recipe): bin/brokkr-render-<hash>, with bin/brokkr-render a
# symlink to the newest. An edit to the renderer builds a new binary; a run that finds the binary
# for the current sources takes milliseconds. The hash is also compiled into `brokkr-render
# --version`, which the hub keys cached renders by.
#
# Measured on 2 cores: cold (empty Go module and build caches; 243 MB of modules downloaded, 602 MB
# of build cache) 243 s of CPU — 11.4 min of wall time while other work kept the machine at load
# 12-17, so about 2-3 min on an idle one; most of it compiles Kubernetes' client packages, which
# helm's build in build-ops-tools.sh shares. After a source edit with warm caches: 4 s idle, up to
# 18 s under load. A run that finds the binary: ~60 ms.
#
#   scripts/build-renderer.sh        # progress on stderr, the path on stdout
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src="$here/../tools/renderer"
cache="${BROKKR_CACHE:-$HOME/.cache/brokkr}"
bin="$cache/bin"
link="$bin/brokkr-render"
# Part of the hash: a change here (flags, injected versions) must build a new binary too.
recipe='go build -mod=readonly -trimpath -ldflags "-s -w -X main.sourceHash=<hash> -X helm.sh/helm/v4/internal/version.version=<helm>"'

started=$(date +%s)
log() { printf '[build-renderer %4ss] %s\n' "$(( $(date +%s) - started ))" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

source_hash() {
  (
    cd "$src"
    printf '%s\n' "$recipe"
    find . -type f \( -name '*.go' ! -name '*_test.go' -o -name go.mod -o -name go.sum \) | LC_ALL=C sort |
      while read -r f; do printf '%s %s\n' "$f" "$(sha256sum <"$f" | cut -d' ' -f1)"; done
  ) | sha256sum | cut -c1-16
}

hash=$(source_hash)
versioned="brokkr-render-$hash"

ready() { [ -x "$bin/$versioned" ] && [ "$(readlink "$link" 2>/dev/null)" = "$versioned" ]; }

# go build says nothing while it compiles; a line every 15 s shows the build is alive.
with_heartbeat() {
  "$@" &
  local pid=$! code=0 waited=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    waited=$((waited + 1))
    if [ $((waited % 15)) -eq 0 ] && kill -0 "$pid" 2>/dev/null; then log "still building brokkr-render..."; fi
  done
  wait "$pid" || code=$?
  return $code
}

build() {
  local helm out
  helm=$(sed -n 's#^[[:space:]]*helm\.sh/helm/v4 \(v[^ ]*\).*#\1#p' "$src/go.mod" | head -1)
  [ -n "$helm" ] || die "tools/renderer/go.mod requires no helm.sh/helm/v4"
  out=$(mktemp "$bin/.brokkr-render.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -f '$out'" EXIT
  log "building brokkr-render ($hash; helm $helm) with $(go env GOVERSION) from $(go env GOPROXY) (minutes the first time)"
  (cd "$src" && with_heartbeat nice -n 10 go build -mod=readonly -trimpath \
    -ldflags "-s -w -X main.sourceHash=$hash -X helm.sh/helm/v4/internal/version.version=$helm" -o "$out" .) ||
    die "go build of tools/renderer failed"
  "$out" --version | grep -q "+$hash " || die "the built brokkr-render does not report $hash: $("$out" --version 2>&1)"
  chmod 0755 "$out"
  mv "$out" "$bin/$versioned"
  log "built $bin/$versioned ($(du -h "$bin/$versioned" | cut -f1)) in $(( $(date +%s) - started )) s: $("$bin/$versioned" --version)"
}

if ! ready; then
  mkdir -p "$bin"
  # Test files may ask for it side by side: one builds, the others wait for it.
  exec 9>"$bin/.brokkr-render.lock"
  flock 9
  if ! ready; then
    if [ ! -x "$bin/$versioned" ]; then
      command -v go >/dev/null 2>&1 || die "no Go toolchain on PATH: brokkr-render is built from tools/renderer with Go >= 1.26"
      export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:--buildvcs=false}"
      build
    fi
    # A rename is atomic: a process starting the renderer meanwhile sees the old file or the link.
    ln -sfn "$versioned" "$link.tmp.$$"
    mv -Tf "$link.tmp.$$" "$link"
    log "$link -> $versioned"
  fi
fi
echo "$bin/$versioned"
