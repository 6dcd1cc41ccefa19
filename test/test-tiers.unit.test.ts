import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { expect } from 'chai';

/**
 * The two tiers select their files by name (docs/adr/0042-fast-test-tier.md): `npm test` runs every
 * *.test.ts, each in its package's run; `npm run test:fast` runs the *.unit.test.ts among them.
 * Whether a file is named right is checked where it runs (the full tier fails a run that meets a
 * file in the wrong tier, the fast tier refuses infrastructure); this checks that the selections
 * themselves leave no file out and take none twice.
 */
const root = path.resolve(import.meta.dirname, '..');
const require = createRequire(import.meta.url);

// Fixtures are files a test hands to mocha itself (shared/testkit/fixtures/tiers/), not tests of the suite.
const NOT_SOURCE = new Set(['node_modules', 'dist', '.git', 'fixtures']);
const glob = (pattern: string, cwd: string) =>
  fs
    .globSync(pattern, { cwd, exclude: (name) => NOT_SOURCE.has(path.basename(String(name))) })
    .map((f) => path.relative(root, path.join(cwd, f)));

/** Every *.test.ts of the repository (dependencies and build output aside). */
function everyTestFile(): string[] {
  return glob('**/*.test.ts', root).sort();
}

/** The globs of one package's `npm run test` (`mocha --config ../../.mocharc.cjs 'test/**\/*.test.ts'`). */
function packageGlobs(dir: string): string[] {
  const script = (JSON.parse(fs.readFileSync(path.join(root, dir, 'package.json'), 'utf8')) as { scripts?: { test?: string } }).scripts
    ?.test;
  if (!script) return [];
  expect(script, `${dir}'s test script`).to.match(/^mocha --config \.\.\/\.\.\/\.mocharc\.cjs /);
  return [...script.matchAll(/'([^']+)'/g)].map((m) => m[1]!);
}

/** What scripts/test.sh runs: each package's test script, then the repository's own test/ files. */
function filesNpmTestRuns(): string[] {
  const packages = glob('{shared,services,tools}/*/package.json', root).map((f) => path.dirname(f));
  const fromPackages = packages.flatMap((dir) => packageGlobs(dir).flatMap((g) => glob(g, path.join(root, dir))));
  const testSh = fs.readFileSync(path.join(root, 'scripts/test.sh'), 'utf8');
  const repository = [...testSh.matchAll(/mocha --config \.mocharc\.cjs '([^']+)'/g)].map((m) => m[1]!);
  expect(repository, 'the repository-level mocha run in scripts/test.sh').to.have.length(1);
  return [...fromPackages, ...repository.flatMap((g) => glob(g, root))].sort();
}

function filesTestFastRuns(): string[] {
  const config = require(path.join(root, '.mocharc.fast.cjs')) as { UNIT_TEST_GLOBS: string[] };
  return config.UNIT_TEST_GLOBS.flatMap((g) => glob(g, root)).sort();
}

describe('test tiers: which files npm test and npm run test:fast select', () => {
  it('npm test runs every test file, each once', () => {
    expect(filesNpmTestRuns()).to.deep.equal(everyTestFile());
  });

  it('npm run test:fast runs exactly the *.unit.test.ts files', () => {
    expect(filesTestFastRuns()).to.deep.equal(everyTestFile().filter((f) => f.endsWith('.unit.test.ts')));
  });

  it('no file under a test directory holds tests without being named *.test.ts (no runner would load it)', () => {
    const dirs = ['test', ...glob('{shared,services,tools}/*/test', root)];
    const stray = dirs
      .flatMap((dir) => glob('**/*.ts', path.join(root, dir)))
      .filter((f) => !f.endsWith('.test.ts'))
      .filter((f) => /^\s*(describe|it)\(/m.test(fs.readFileSync(path.join(root, f), 'utf8')));
    expect(stray).to.deep.equal([]);
  });
});
