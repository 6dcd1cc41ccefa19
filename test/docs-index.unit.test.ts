import fs from 'node:fs';
import { expect } from 'chai';

describe('docs: the ADR index', () => {
  it('lists every ADR, and nothing that is not one', () => {
    const adrs = fs.readdirSync('docs/adr').filter((f) => /^\d{4}-.*\.md$/.test(f));
    const index = fs.readFileSync('docs/adr/README.md', 'utf8');
    const listed = [...index.matchAll(/\]\((\d{4}-[^)]+\.md)\)/g)].map((m) => m[1]);
    expect([...listed].sort()).to.deep.equal([...adrs].sort());
  });
});
