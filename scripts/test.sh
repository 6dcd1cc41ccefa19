#!/usr/bin/env bash
# The README's test command (`npm test`). On a machine with only git, Node, npm and Go it gets what
# the tests need itself: PostgreSQL is installed on first use by the test fixtures (@brokkr/infra),
# and the pinned nats-server, kube-apiserver + etcd, helm, promtool and brokkr-render builds happen here, once,
# cached under ~/.cache/brokkr. Then: lint, typecheck, every package's tests (one package at a time: 2 cores,
# and the tests start real servers), the repository-level tests.
#
# Every step runs even when an earlier one failed, so one red package never hides the others; the
# summary at the end lists every outcome and the exit code is non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
bold() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
start=$(date +%s)
results=()
failed=0

# run <label> <command...>: runs one step, records "ok|FAILED label (Ns)".
run() {
  local label=$1 t0 code
  shift
  bold "$label"
  t0=$(date +%s)
  "$@"
  code=$?
  local took=$(( $(date +%s) - t0 ))
  if [ $code -eq 0 ]; then results+=("ok      ${label} (${took} s)"); else results+=("FAILED  ${label} (${took} s, exit ${code})"); failed=1; fi
  return 0
}

kube_assets() {
  local out
  out=$(bash scripts/build-k8s-assets.sh) || return 1
  KUBEBUILDER_ASSETS=$(printf '%s\n' "$out" | sed -n 's/^KUBEBUILDER_ASSETS=//p' | tail -1)
  export KUBEBUILDER_ASSETS
  echo "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"
}

package_tests() { (cd "$1" && npm run --silent test); }

# The nats-server release compose and the chart run (scripts/lib/nats-server.version); built here
# rather than inside a test's 60 s set-up hook.
run "nats-server (the pinned release, built once from the Go module proxy, then cached)" bash scripts/lib/install-nats.sh
run "kube-apiserver + etcd (built once from the Go module proxy, then cached)" kube_assets
# helm (chart tests) and promtool (alert-rule checks): same story, ~/.cache/brokkr/bin.
run "helm + promtool (built once from the Go module proxy, then cached)" bash scripts/build-ops-tools.sh
# brokkr-render (@brokkr/render's tests): rebuilt when tools/renderer's sources change, else cached.
run "brokkr-render (built from tools/renderer when its sources change, then cached)" bash scripts/build-renderer.sh
run "lint (eslint)" eslint .
run "format (prettier --check; npm run format fixes it)" prettier --check --log-level warn .
run "typecheck (tsc -b, then tests and scripts)" sh -c 'tsc -b && tsc -p tsconfig.check.json'
for dir in shared/*/ services/*/ tools/*/; do
  dir=${dir%/}
  [ -f "$dir/package.json" ] || continue
  node -e "process.exit(require('./$dir/package.json').scripts?.test ? 0 : 1)" || continue
  run "tests: $dir" package_tests "$dir"
done
run "tests: repository (test/)" mocha --config .mocharc.cjs 'test/**/*.test.ts'

bold "summary ($(( $(date +%s) - start )) s)"
printf '  %s\n' "${results[@]}"
if [ $failed -ne 0 ]; then
  printf '\n\033[1;31mnpm test failed\033[0m (see FAILED above)\n'
  exit 1
fi
printf '\n\033[1;32mall green\033[0m\n'
