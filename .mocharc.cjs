// One mocha setup for every package: tsx loads TypeScript, the `development` export condition
// makes `@brokkr/*` imports resolve to src/ (no build needed to test), and the testkit's global
// fixture starts PostgreSQL once per run and builds the migrated template database.
const path = require('node:path');
module.exports = {
  'node-option': ['import=tsx', 'conditions=development'],
  require: [path.join(__dirname, 'shared/testkit/src/global-fixture.ts')],
  timeout: 60000,
  slow: 2000,
  exit: true,
};
