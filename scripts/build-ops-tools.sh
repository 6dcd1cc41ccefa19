#!/usr/bin/env bash
# Builds the operator tools the deploy/ tests need, from the Go module proxy only (no GitHub
# release downloads, no Docker):
#
#   helm      helm.sh/helm/v4/cmd/helm                       (helm lint / helm template of deploy/helm)
#   promtool  github.com/prometheus/prometheus/cmd/promtool  (promtool check rules of deploy/prometheus)
#
#   scripts/build-ops-tools.sh                # both; progress on stderr, HELM=<path> and PROMTOOL=<path> on stdout
#   scripts/build-ops-tools.sh helm           # only one of them
#   BROKKR_HELM_VERSION=4.3.1 BROKKR_PROMETHEUS_VERSION=3.16.0 scripts/build-ops-tools.sh
#
# Output: ${BROKKR_CACHE:-$HOME/.cache/brokkr}/bin/{helm,promtool}. Idempotent: a binary that exists
# and reports the pinned version is kept, so only the first run builds. Measured cold (empty module
# and build caches, 2 cores): helm 3 min 5 s, then promtool 1 min 41 s (it reuses helm's compiled
# Kubernetes client packages), 2.2 GB of modules and 1.7 GB of build cache.
# promtool is built with Prometheus' `remove_all_sd` tag: rule checks and rule unit tests need no
# service discovery, and leaving out every cloud SDK (AWS, Azure, GCE, Kubernetes, ...) roughly
# halves the build.
#
# Version pins: the modules' go.mod `go` lines must be <= the local Go (GOTOOLCHAIN=local: no
# toolchain downloads). helm v4.3.1 asks for go 1.26.0; Prometheus 3.16.0 (module version
# v0.316.0: Prometheus publishes v3.X.Y as Go module v0.3XX.Y) asks for go 1.26.7.
set -euo pipefail

HELM_VERSION="${BROKKR_HELM_VERSION:-4.3.1}"
PROMETHEUS_VERSION="${BROKKR_PROMETHEUS_VERSION:-3.16.0}"
cache="${BROKKR_CACHE:-$HOME/.cache/brokkr}"
bin="$cache/bin"
work="$cache/ops-tools"

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:--buildvcs=false}"

started=$(date +%s)
log() { printf '[build-ops-tools %4ss] %s\n' "$(( $(date +%s) - started ))" "$*" >&2; }
step_started=$started
step() { step_started=$(date +%s); log "$*"; }
done_step() { log "$* (took $(( $(date +%s) - step_started )) s)"; }
die() { log "ERROR: $*"; exit 1; }
# `go get` lists every module it adds (hundreds of lines): keep them in a file, show them on failure.
quiet() {
  local logfile=$1
  shift
  "$@" >"$logfile" 2>&1 || { tail -20 "$logfile" >&2; die "$* failed (full output: $logfile)"; }
}

helm_ready() { [ -x "$bin/helm" ] && [ "$("$bin/helm" version --template '{{.Version}}' 2>/dev/null)" = "v$HELM_VERSION" ]; }
promtool_ready() { [ -x "$bin/promtool" ] && "$bin/promtool" --version 2>/dev/null | grep -q "version $PROMETHEUS_VERSION "; }

# Fails when a module's go.mod asks for a newer Go than the local toolchain (GOTOOLCHAIN=local).
check_go_line() { # <module@version>
  local mod want have
  mod=$(go mod download -json "$1" | sed -n 's/.*"GoMod": "\([^"]*\)".*/\1/p')
  [ -n "$mod" ] || die "cannot download $1 from $(go env GOPROXY)"
  want=$(sed -n 's/^go \([0-9.]*\).*/\1/p' "$mod")
  have=$(go env GOVERSION | sed 's/^go//')
  [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -1)" = "$want" ] ||
    die "$1 needs go $want but the local Go is $have; pick an older version"
  log "$1 go.mod asks for go $want (local go $have): ok"
}

# build <name> <module@version> <package> <ldflags> [go build flags...]: a throwaway wrapper module
# requires the tool's module (so its go.mod decides every dependency version), downloads, then
# builds into $bin.
build() {
  local name=$1 modver=$2 pkg=$3 ld=$4 dir="$work/$1"
  shift 4
  mkdir -p "$dir" "$bin"
  cd "$dir"
  rm -f go.mod go.sum
  go mod init "brokkr.local/$name" >/dev/null 2>&1
  step "$name: resolving $modver"
  check_go_line "$modver"
  step "$name: go get $pkg (module download when cold)"
  quiet "$dir/go-get.log" go get "$pkg@${modver#*@}"
  done_step "$name: modules downloaded"
  step "$name: go build $pkg"
  nice -n 10 go build -mod=mod -trimpath -ldflags "-s -w $ld" "$@" -o "$bin/$name.tmp" "$pkg"
  mv "$bin/$name.tmp" "$bin/$name"
  done_step "$name: built ($(du -h "$bin/$name" | cut -f1))"
}

build_helm() {
  build helm "helm.sh/helm/v4@v$HELM_VERSION" helm.sh/helm/v4/cmd/helm \
    "-X helm.sh/helm/v4/internal/version.version=v$HELM_VERSION -X helm.sh/helm/v4/internal/version.gitTreeState=clean"
  helm_ready || die "helm was built but does not report v$HELM_VERSION"
}

build_promtool() {
  local v=github.com/prometheus/common/version
  build promtool "github.com/prometheus/prometheus@v0.$(echo "$PROMETHEUS_VERSION" | awk -F. '{ printf "%d%02d.%d", $1, $2, $3 }')" \
    github.com/prometheus/prometheus/cmd/promtool \
    "-X $v.Version=$PROMETHEUS_VERSION -X $v.Branch=HEAD -X $v.BuildUser=brokkr -X $v.BuildDate=$(date -u +%Y%m%d-%H:%M:%S)" \
    -tags remove_all_sd
  promtool_ready || die "promtool was built but does not report version $PROMETHEUS_VERSION"
}

wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=(helm promtool)
for tool in "${wanted[@]}"; do
  case $tool in helm | promtool) ;; *) die "unknown tool '$tool' (helm or promtool)" ;; esac
done

need_build=0
for tool in "${wanted[@]}"; do "${tool}_ready" || need_build=1; done
if [ $need_build -eq 1 ]; then
  command -v go >/dev/null || die "no Go toolchain on PATH (need Go >= 1.26.7 for promtool, 1.26.0 for helm)"
  mkdir -p "$work"
  # Two concurrent runs (e.g. two test files) would fight over the same wrapper modules.
  exec 9>"$work/.build.lock"
  log "waiting for the build lock $work/.build.lock"
  flock 9
  log "building into $bin with $(go env GOVERSION)"
  for tool in "${wanted[@]}"; do "${tool}_ready" || "build_${tool}"; done
  log "done in $(( $(date +%s) - started ))s"
fi

for tool in "${wanted[@]}"; do
  case $tool in
    helm) log "helm: $("$bin/helm" version --short)"; echo "HELM=$bin/helm" ;;
    promtool) log "promtool: $("$bin/promtool" --version | head -1)"; echo "PROMTOOL=$bin/promtool" ;;
  esac
done
