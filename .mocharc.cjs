// One mocha setup for every package: tsx loads TypeScript, the `development` export condition
// makes `@brokkr/*` imports resolve to src/ (no build needed to test), and the testkit's global
// fixture records the run; PostgreSQL and the migrated template database start once per run, when
// a test first asks for a database. The fast tier's configuration is .mocharc.fast.cjs.
const path = require('node:path');
module.exports = {
  'node-option': ['import=tsx', 'conditions=development'],
  require: [path.join(__dirname, 'shared/testkit/src/global-fixture.ts')],
  timeout: 60000,
  slow: 2000,
  exit: true,
};
