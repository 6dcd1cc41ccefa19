import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

/**
 * The api's folders are layers (ADR 0037, src/README.md "Layout"): rules that several resources
 * apply live in domain/, and a resource reads only its own sql/. These checks read the import
 * statements of src/, so a shared rule cannot slip back into one resource unnoticed.
 */
const src = path.join(path.dirname(fileURLToPath(import.meta.url)), '../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** `[importing file, imported file]`, both relative to src/, for every relative import. */
function imports(): [string, string][] {
  return sourceFiles(src).flatMap((file) => {
    const text = readFileSync(file, 'utf8');
    return [...text.matchAll(/from\s+'(\.[^']+)'/g)].map((m): [string, string] => [
      path.relative(src, file),
      path.relative(src, path.resolve(path.dirname(file), m[1] ?? '')),
    ]);
  });
}

const resourceOf = (file: string) => /^resources\/([^/]+)\//.exec(file)?.[1];

describe('api layers', () => {
  it('no resource imports another resource’s sql/', () => {
    const crossing = imports().filter(([from, to]) => {
      const owner = resourceOf(to);
      return owner !== undefined && to.startsWith(`resources/${owner}/sql/`) && resourceOf(from) !== owner;
    });
    expect(crossing.filter(([from]) => from.startsWith('resources/'))).to.deep.equal([]);
  });

  it('domain/ imports no http/, resources/, live/ or console/', () => {
    const upward = imports().filter(([from, to]) => from.startsWith('domain/') && /^(http|resources|live|console)\//.test(to));
    expect(upward).to.deep.equal([]);
  });

  it('context.ts imports nothing from resources/, live/ or console/ (their services add their own fields)', () => {
    const upward = imports().filter(([from, to]) => from === 'context.ts' && /^(resources|live|console)\//.test(to));
    expect(upward).to.deep.equal([]);
  });
});
