#!/usr/bin/env bash
# Builds the tests' OCI registry (tools/oci-registry: go-containerregistry's in-memory
# distribution server behind a 30-line main) into ${BROKKR_CACHE:-$HOME/.cache/brokkr}/bin and
# prints its path on stdout; progress goes to stderr. @brokkr/testkit's startOciRegistry runs it.
#
# The binary is named after a hash of the tool's sources (oci-registry-<hash>), so a change to
# main.go or a new go-containerregistry pin builds a new one and an unchanged tool is never
# rebuilt. Built from the Go module proxy (GOTOOLCHAIN=local: no toolchain downloads).
# Measured on 2 cores: a few seconds with warm Go caches; the module is small (pkg/registry
# uses the standard library only).
#
#   scripts/build-oci-registry.sh
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
src="$root/tools/oci-registry"
cache="${BROKKR_CACHE:-$HOME/.cache/brokkr}"
bin="$cache/bin"
hash=$(cat "$src/go.mod" "$src/go.sum" "$src/main.go" | sha256sum | cut -c1-16)
target="$bin/oci-registry-$hash"

log() { printf '[build-oci-registry] %s\n' "$*" >&2; }

if [ ! -x "$target" ]; then
  command -v go >/dev/null 2>&1 || { log "ERROR: no Go toolchain on PATH: the tests' OCI registry is built from tools/oci-registry"; exit 1; }
  export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:--buildvcs=false}"
  mkdir -p "$bin"
  # Test files may start registries side by side: one builds, the others wait for it.
  exec 9>"$bin/.oci-registry.lock"
  flock 9
  if [ ! -x "$target" ]; then
    log "building $target from $src with $(go env GOVERSION)"
    (cd "$src" && nice -n 10 go build -mod=readonly -trimpath -ldflags '-s -w' -o "$target.tmp" .)
    mv "$target.tmp" "$target"
    log "built $target ($(du -h "$target" | cut -f1))"
  fi
fi
echo "$target"
