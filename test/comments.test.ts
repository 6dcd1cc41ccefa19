import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { expect } from 'chai';

/**
 * The repository stands on its own: code and its comments cite what is in it (docs/, the ADRs,
 * tests, the OpenAPI document) or state the fact themselves — never section numbers of documents
 * a maintainer does not have, nor the numbers of the issues that led to a change (the commit
 * history holds those). Public standards (`RFC 9110 §13.1.2`) are fine.
 */
const OUTSIDE_REFERENCES = [
  /DESIGN(?:\.md)? §/,
  /\b[Cc]ontract §/,
  /live-channel\.md|api-contract\.md|agent-behavior\.md|style-and-libs\.md|kwok-clusters\.md/,
  /agent behaviou?r §/i,
  /(?<!RFC \d+ )(?<!RFC \d+, )§ ?\d/,
  /\bissue #?\d+\b/i,
  /\.\.\/shared\/(?:reference|DESIGN)/,
];
const SOURCE = /\.(?:ts|js|mjs|cjs|sh|sql|ya?ml)$/;

describe('comments and code cite only what the repository holds', () => {
  it('no section numbers of outside documents, no issue numbers', () => {
    const files = execFileSync('git', ['ls-files'], { encoding: 'utf8' })
      .split('\n')
      .filter((f) => SOURCE.test(f) && !f.includes('/dist/') && fs.existsSync(f));
    const found: string[] = [];
    for (const file of files) {
      fs.readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (OUTSIDE_REFERENCES.some((re) => re.test(line))) found.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found, found.join('\n')).to.deep.equal([]);
  });
});
