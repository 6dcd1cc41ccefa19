#!/usr/bin/env bash
# `npm run test:fast`: the fast tier (docs/adr/0042-fast-test-tier.md). Every *.unit.test.ts of
# every package in one mocha run (.mocharc.fast.cjs): no PostgreSQL, NATS, Kubernetes or child
# process, so it is the one to run while editing. `npm test` runs these files too, with the rest.
# Prints how long the whole run took (loading included), against its budget of 60 s.
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s%N)
mocha --config .mocharc.fast.cjs "$@"
code=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
files=$(node -e "const c=require('./.mocharc.fast.cjs'); console.log(c.UNIT_TEST_GLOBS.flatMap((g) => require('node:fs').globSync(g)).length)")
printf '\nfast tier: %d files in %d.%d s (budget: 60 s)\n' "$files" $(( ms / 1000 )) $(( ms % 1000 / 100 ))
if [ "$ms" -ge 60000 ]; then
  printf 'over budget: move what is slow to the full tier or make it faster (docs/adr/0042-fast-test-tier.md)\n'
fi
exit $code
