#!/usr/bin/env bash
# Puts a k6 binary into $BROKKR_CACHE/bin (used by `npm run bench:api`). Built from the Go module
# proxy with the local Go toolchain: v1.8.1's go.mod says `go 1.25.0`, so any Go >= 1.25 builds it
# without downloading another toolchain. k6 >= 1.0 runs TypeScript scripts natively.
# Prints the binary's path on stdout; progress goes to stderr.
set -euo pipefail
cache="${BROKKR_CACHE:-$HOME/.cache/brokkr}"
bin="$cache/bin"
K6_VERSION="${BROKKR_K6_VERSION:-v1.8.1}"
mkdir -p "$bin"
if [ -x "$bin/k6" ] && "$bin/k6" version 2>/dev/null | grep -q "${K6_VERSION#v}"; then
  echo "$bin/k6"
  exit 0
fi
command -v go >/dev/null 2>&1 || { echo "k6 needs Go >= 1.25 to build (or put a k6 binary in $bin)" >&2; exit 1; }
echo "[brokkr] building k6 $K6_VERSION with go install (a few minutes the first time)" >&2
GOBIN="$bin" GOTOOLCHAIN=local CGO_ENABLED=0 go install "go.k6.io/k6@$K6_VERSION" >&2
echo "$bin/k6"
