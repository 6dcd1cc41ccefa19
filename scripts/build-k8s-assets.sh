#!/usr/bin/env bash
# Builds envtest-style test assets (kube-apiserver + etcd) for the agent's Kubernetes tests from
# the Go module proxy only: no GitHub, dl.k8s.io or Docker needed.
#
#   scripts/build-k8s-assets.sh            # prints progress on stderr, KUBEBUILDER_ASSETS=<dir> on stdout
#   BROKKR_KUBE_VERSION=1.33.13 BROKKR_ETCD_VERSION=3.5.35 scripts/build-k8s-assets.sh
#
# Output: ${BROKKR_CACHE:-$HOME/.cache/brokkr}/k8s/v<kube>/bin/{kube-apiserver,etcd,kube-controller-manager,
# kube-scheduler,kwok}, and KWOK's own stage definitions in .../k8s/v<kube>/kwok-stages/ (the clusters
# where pods run: controllers, scheduler and KWOK's simulated nodes; @brokkr/infra startKubeCluster).
# Idempotent: when every binary exists and answers --version, it only prints the directory.
#
# Why a wrapper module: k8s.io/kubernetes requires its staging modules (k8s.io/api, ...) at v0.0.0
# and replaces them with ./staging/..., so `go install k8s.io/kubernetes/cmd/kube-apiserver@v1.x`
# is refused. Replace directives of a dependency are ignored, so a wrapper module that replaces
# each staging module with its published v0.<minor>.<patch> tag builds cleanly. etcd's go.mod has
# relative replaces too; the same trick (as a dependency) applies.
#
# Why 1.33.x + etcd 3.5.x: Kubernetes 1.33 is the last minor on the etcd 3.5 client; 1.34 moved to
# the 3.6 client. Both go.mod `go` lines must be <= the local Go (GOTOOLCHAIN=local: no downloads).
set -euo pipefail

KUBE_VERSION="${BROKKR_KUBE_VERSION:-1.33.13}"
ETCD_VERSION="${BROKKR_ETCD_VERSION:-3.5.35}"
KWOK_VERSION="${BROKKR_KWOK_VERSION:-0.8.0}"
root="${BROKKR_CACHE:-$HOME/.cache/brokkr}/k8s/v${KUBE_VERSION}"
bin="$root/bin"

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:--buildvcs=false}"

started=$(date +%s)
log() { printf '[build-k8s-assets %4ss] %s\n' "$(( $(date +%s) - started ))" "$*" >&2; }
# step <what>: starts a step; done_step prints how long it took.
step_started=$started
step() { step_started=$(date +%s); log "$*"; }
done_step() { log "$* (took $(( $(date +%s) - step_started )) s)"; }
die() { log "ERROR: $*"; exit 1; }
# `go get` lists every module it adds (hundreds of lines): keep them in a file, show them on failure.
quiet() {
  "$@" >"$root/go-get.log" 2>&1 || { tail -20 "$root/go-get.log" >&2; die "$* failed (full output: $root/go-get.log)"; }
}

runs() { [ -x "$bin/$1" ] && "$bin/$1" --version >/dev/null 2>&1; }
stages_ready() { [ -f "$root/kwok-stages/pod-ready.yaml" ]; }
assets_ready() {
  runs kube-apiserver && runs etcd && runs kube-controller-manager && runs kube-scheduler && runs kwok && stages_ready
}

finish() {
  log "kube-apiserver: $("$bin/kube-apiserver" --version) ($(du -h "$bin/kube-apiserver" | cut -f1))"
  log "etcd: $("$bin/etcd" --version | head -1) ($(du -h "$bin/etcd" | cut -f1))"
  log "kube-controller-manager, kube-scheduler, kwok: $("$bin/kwok" --version 2>&1 | head -1)"
  echo "KUBEBUILDER_ASSETS=$bin"
  exit 0
}

# Fails when a module's go.mod asks for a newer Go than the local toolchain (GOTOOLCHAIN=local).
check_go_line() { # <go.mod path> <label>
  local want have
  want=$(sed -n 's/^go \([0-9.]*\).*/\1/p' "$1")
  have=$(go env GOVERSION | sed 's/^go//')
  [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -1)" = "$want" ] ||
    die "$2 needs go $want but the local Go is $have; pick an older version"
  log "$2 go.mod asks for go $want (local go $have): ok"
}

gomod_of() { # <module@version> -> path of its downloaded go.mod
  go mod download -json "$1" | sed -n 's/.*"GoMod": "\([^"]*\)".*/\1/p'
}

# build_kube <command>: kube-apiserver, kube-controller-manager or kube-scheduler, from one wrapper
# module (the later ones reuse its module downloads and Go build cache: about 5 min for the
# controller-manager cold, under 1 min for the scheduler after it).
build_kube() {
  local cmd=$1 dir="$root/wrap-kube-apiserver" mod minor ld m
  mkdir -p "$dir" && cd "$dir"
  [ -f go.mod ] || go mod init brokkr.local/k8sbins >/dev/null 2>&1
  step "resolving k8s.io/kubernetes@v$KUBE_VERSION"
  mod=$(gomod_of "k8s.io/kubernetes@v$KUBE_VERSION")
  [ -n "$mod" ] || die "cannot download k8s.io/kubernetes@v$KUBE_VERSION"
  check_go_line "$mod" "k8s.io/kubernetes v$KUBE_VERSION"
  for m in $(sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) => \./staging/.*#\1#p' "$mod"); do
    go mod edit -replace="$m=$m@v0.${KUBE_VERSION#1.}"
  done
  step "go get k8s.io/kubernetes/cmd/$cmd@v$KUBE_VERSION (module download, ~1 GB when cold)"
  quiet go get "k8s.io/kubernetes/cmd/$cmd@v$KUBE_VERSION"
  done_step "$cmd modules downloaded"
  minor=$(echo "$KUBE_VERSION" | cut -d. -f2)
  ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=v$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
    ld="$ld -X $p.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  done
  step "go build $cmd (the slow part: about 5 min on 2 cores when cold)"
  nice -n 10 go build -mod=mod -trimpath -ldflags "$ld" -o "$bin/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd"
  mv "$bin/$cmd.tmp" "$bin/$cmd"
  done_step "$cmd built"
}

# KWOK (Kubernetes WithOut Kubelet): simulated nodes and pod lifecycles. Its stage definitions
# ship in its module; the fast ones are copied beside the binaries.
build_kwok() {
  local dir="$root/wrap-kwok" src
  mkdir -p "$dir" && cd "$dir"
  [ -f go.mod ] || go mod init brokkr.local/kwokbin >/dev/null 2>&1
  step "go install sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION (about 2 min cold)"
  GOBIN="$dir/bin" nice -n 10 go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION"
  mv "$dir/bin/kwok" "$bin/kwok"
  src="$(go env GOMODCACHE)/sigs.k8s.io/kwok@v$KWOK_VERSION/kustomize/stage"
  mkdir -p "$root/kwok-stages"
  cp "$src/node/fast/node-initialize.yaml" "$src/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml" \
    "$src/pod/fast/pod-ready.yaml" "$src/pod/fast/pod-complete.yaml" "$src/pod/fast/pod-delete.yaml" "$root/kwok-stages/"
  chmod u+w "$root/kwok-stages/"*
  done_step "kwok built"
}

build_etcd() {
  local dir="$root/wrap-etcd" mod
  mkdir -p "$dir" && cd "$dir"
  [ -f go.mod ] || go mod init brokkr.local/etcdbin >/dev/null 2>&1
  step "resolving go.etcd.io/etcd/server/v3@v$ETCD_VERSION"
  mod=$(gomod_of "go.etcd.io/etcd/server/v3@v$ETCD_VERSION")
  [ -n "$mod" ] || die "cannot download go.etcd.io/etcd/server/v3@v$ETCD_VERSION"
  check_go_line "$mod" "etcd server v$ETCD_VERSION"
  quiet go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION"
  done_step "etcd modules downloaded"
  step "go build etcd"
  nice -n 10 go build -mod=mod -trimpath -ldflags "-s -w" -o "$bin/etcd.tmp" go.etcd.io/etcd/server/v3
  mv "$bin/etcd.tmp" "$bin/etcd"
  done_step "etcd built"
}

command -v go >/dev/null || die "no Go toolchain on PATH (need Go >= the modules' go lines)"
assets_ready && finish

mkdir -p "$bin"
# Two concurrent runs (e.g. parallel test jobs) would fight over the same wrapper modules.
exec 9>"$root/.build.lock"
log "waiting for the build lock $root/.build.lock"
flock 9
assets_ready && finish

log "building into $bin with $(go env GOVERSION)"
if ! ( [ -x "$bin/etcd" ] && "$bin/etcd" --version >/dev/null 2>&1 ); then build_etcd; fi
for cmd in kube-apiserver kube-controller-manager kube-scheduler; do runs "$cmd" || build_kube "$cmd"; done
{ runs kwok && stages_ready; } || build_kwok
assets_ready || die "binaries were built but do not run"
log "done in $(( $(date +%s) - started ))s"
finish
