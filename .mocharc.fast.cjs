// The fast tier (`npm run test:fast`, docs/adr/0042-fast-test-tier.md): every *.unit.test.ts of
// every package in one mocha run, without the global fixture (no PostgreSQL); the testkit refuses
// NATS, Kubernetes, services and child processes here (shared/testkit/src/tier.ts).
const path = require('node:path');
const process = require('node:process');
const base = require('./.mocharc.cjs');

/** Where unit test files live; `npm test` runs them too, each in its package's run. */
const UNIT_TEST_GLOBS = [
  'shared/*/test/**/*.unit.test.ts',
  'services/*/test/**/*.unit.test.ts',
  'tools/*/test/**/*.unit.test.ts',
  'test/**/*.unit.test.ts',
];

// The YAML fast path's differential test runs 1,000 + 1,000 random inputs here instead of
// 8,000 + 6,000 (about 2 s instead of 15); `npm test` runs it whole. Set them to run more.
process.env.YAML_FUZZ_MUTANTS ??= '1000';
process.env.YAML_FUZZ_DOCUMENTS ??= '1000';

module.exports = {
  ...base,
  require: [path.join(__dirname, 'shared/testkit/src/fast-tier.ts')],
  spec: UNIT_TEST_GLOBS.map((glob) => path.join(__dirname, glob)),
  UNIT_TEST_GLOBS,
};
