import { expect } from 'chai';
import fs from 'node:fs';
import { withEnvTable } from '../scripts/env-docs.ts';

describe('README', () => {
  const readme = fs.readFileSync('README.md', 'utf8');

  it('lists every environment variable the services accept (regenerate with scripts/env-docs.ts --write)', () => {
    expect(withEnvTable(readme)).to.equal(readme);
  });

  it('gives the two commands, and CI runs exactly the test command', () => {
    expect(readme).to.include('npm ci && npm start');
    expect(readme).to.include('npm ci && npm test');
    expect(fs.readFileSync('.ci/run', 'utf8')).to.match(/^npm test$/m);
  });
});
