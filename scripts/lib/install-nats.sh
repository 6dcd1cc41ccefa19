#!/usr/bin/env bash
# Puts the pinned nats-server into ${BROKKR_CACHE:-$HOME/.cache/brokkr}/bin and prints its path.
#
# The release is pinned once, in scripts/lib/nats-server.version: `npm start` and the tests run it
# (shared/infra finds it here), compose's image tag and the hub chart's are checked against it
# (test/compose.test.ts, test/helm-charts.test.ts). It is built from the Go module proxy with
# `go install` (no GitHub release downloads, no apt). Measured on 2 cores with empty Go module and
# build caches: 62 s idle (3 min while tests shared the cores; ~82 s of CPU); 3 s with warm caches;
# then cached (a run that finds it takes milliseconds).
#
# The binary keeps its version in its name (bin/nats-server-v2.15.2) and bin/nats-server is a
# symlink to it. Pinning another release builds that one and moves the link; a binary an older
# version of this script left at bin/nats-server (Debian's 2.9.10, a plain file) is replaced by
# the link, never run again.
#
#   scripts/lib/install-nats.sh        # progress on stderr, the path on stdout
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=$(tr -d '[:space:]' <"$here/nats-server.version")
module="github.com/nats-io/nats-server/v2@v$version"
cache="${BROKKR_CACHE:-$HOME/.cache/brokkr}"
bin="$cache/bin"
versioned="nats-server-v$version"
link="$bin/nats-server"

started=$(date +%s)
log() { printf '[install-nats %4ss] %s\n' "$(( $(date +%s) - started ))" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

ready() { [ "$(readlink "$link" 2>/dev/null)" = "$versioned" ] && [ -x "$bin/$versioned" ]; }

# Fails early, with a reason, when the module's go.mod asks for a newer Go than the local toolchain.
check_go_line() {
  local mod want have
  mod=$(go mod download -json "$module" | sed -n 's/.*"GoMod": "\([^"]*\)".*/\1/p')
  [ -n "$mod" ] || die "cannot download $module from $(go env GOPROXY)"
  want=$(sed -n 's/^go \([0-9.]*\).*/\1/p' "$mod")
  have=$(go env GOVERSION | sed 's/^go//')
  [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -1)" = "$want" ] ||
    die "$module needs go $want but the local Go is $have: install a newer Go"
  log "$module asks for go $want (local go $have): ok"
}

# go install says nothing while it compiles; a line every 15 s shows the build is alive.
with_heartbeat() {
  "$@" &
  local pid=$! code=0 waited=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    waited=$((waited + 1))
    if [ $((waited % 15)) -eq 0 ] && kill -0 "$pid" 2>/dev/null; then log "still building nats-server v$version..."; fi
  done
  wait "$pid" || code=$?
  return $code
}

build() {
  local out
  out=$(mktemp -d "$bin/.nats-build.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$out'" EXIT
  log "building nats-server v$version from $(go env GOPROXY) with $(go env GOVERSION) (about a minute the first time)"
  check_go_line
  log "go install $module"
  GOBIN="$out" with_heartbeat nice -n 10 go install -trimpath -ldflags '-s -w' "$module" ||
    die "go install $module failed"
  "$out/nats-server" --version 2>/dev/null | grep -q "v$version\$" ||
    die "the built nats-server does not report v$version: $("$out/nats-server" --version 2>&1)"
  mv "$out/nats-server" "$bin/$versioned"
  log "built $bin/$versioned ($(du -h "$bin/$versioned" | cut -f1)) in $(( $(date +%s) - started )) s"
}

if ! ready; then
  command -v go >/dev/null 2>&1 ||
    die "no Go toolchain on PATH: nats-server v$version is built from the Go module proxy (or set BROKKR__NATS__URL to a server of yours)"
  export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:--buildvcs=false}"
  mkdir -p "$bin"
  # Test files start servers side by side: one builds, the others wait for it.
  exec 9>"$bin/.nats-server.lock"
  flock 9
  if ! ready; then
    [ -x "$bin/$versioned" ] || build
    # A rename is atomic: a process starting nats-server meanwhile sees the old file or the link.
    ln -sfn "$versioned" "$link.tmp.$$"
    mv -Tf "$link.tmp.$$" "$link"
    log "$link -> $versioned"
  fi
fi
echo "$link"
