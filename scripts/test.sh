#!/usr/bin/env bash
# The README's test command (`npm test`): lint, typecheck, then every package's tests (lerna, one
# package at a time: the machine has 2 cores and the tests start real servers), then the
# repository-level tests (compose, Dockerfile, start script).
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
start=$(date +%s)
step "lint (eslint)"
eslint .
step "typecheck (tsc -b, tests and scripts)"
tsc -b
tsc -p tsconfig.check.json
step "package tests (lerna run test)"
NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false lerna run test --concurrency 1 --stream --skip-nx-cache
step "repository tests"
mocha --config .mocharc.cjs 'test/**/*.test.ts'
step "all green in $(( $(date +%s) - start )) s"
