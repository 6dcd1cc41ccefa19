import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { apiSrc as src, sourceFiles } from './support/source-files.ts';

/**
 * Every wire code is defined by one `errorKind` in src/, and a code that several places raise is
 * defined in errors/catalogue.ts (its header has the rule). These checks read the source, so a
 * second definition of a code cannot come back unnoticed with a message of its own.
 */

const files = sourceFiles(src).map((file) => ({ file: path.relative(src, file), text: readFileSync(file, 'utf8') }));

interface Definition {
  /** The code as written: a literal, or a template such as `${kind}_label_not_found`. */
  code: string;
  status: string;
  /** The constant it is assigned to, when it is one. */
  name: string | undefined;
  exported: boolean;
  place: string;
}

// `[export] const name = errorKind(status, 'code'` (any quotes, across lines), or the call alone; not its declaration.
const DEFINITION = /(?<!function\s+)(?:(export\s+)?const\s+(\w+)\s*=\s*)?\berrorKind\(\s*([^,]*),\s*([^,]*),/g;
const LITERAL = /^(['"`])([^'"`]*)\1$/;

const definitions: Definition[] = files.flatMap(({ file, text }) =>
  [...text.matchAll(DEFINITION)].map((m) => ({
    code: LITERAL.exec(m[4]?.trim() ?? '')?.[2] ?? `(not a literal: ${m[4]?.trim()})`,
    status: m[3]?.trim() ?? '',
    name: m[2],
    exported: m[1] !== undefined,
    place: `${file}:${text.slice(0, m.index).split('\n').length}`,
  })),
);

/** Brokkr answers invalid_webhook with 400 (blank name, no event types) and 422 (a number out of range). */
const ONE_CODE_TWO_STATUSES: Record<string, string[]> = { invalid_webhook: ['400', '422'] };

/** The folder whose code a file is: a resource's, or the top folder (console, domain, http, …). */
const areaOf = (file: string) => /^resources\/([^/]+)\//.exec(file)?.[1] ?? file.split('/')[0] ?? file;

/** The files importing `name` from `file` (a relative import that names it). */
function importersOf(name: string, file: string): string[] {
  return files
    .filter(({ file: from, text }) =>
      [...text.matchAll(/import\s*\{([^}]*)\}\s*from\s*'(\.[^']+)'/g)].some(
        (m) =>
          path.relative(src, path.resolve(src, path.dirname(from), m[2] ?? '')) === file &&
          (m[1] ?? '').split(',').some((item) => item.trim().split(/\s+as\s+/)[0] === name),
      ),
    )
    .map(({ file: from }) => from);
}

describe('api error catalogue', () => {
  it('reads the definitions: the catalogue’s, a resource’s, the label routes’ template', () => {
    expect(definitions.map((d) => d.code)).to.include.members(['agent_not_found', 'invalid_webhook', '${kind}_label_not_found']);
    expect(definitions.find((d) => d.code === 'agent_not_found')?.place).to.match(/^errors\/catalogue\.ts:/);
  });

  it('writes every code as a literal, so it can be checked', () => {
    expect(definitions.filter((d) => d.code.startsWith('(not a literal')).map((d) => `${d.place} ${d.code}`)).to.deep.equal([]);
  });

  it('defines every code once (one code with two statuses: once per status)', () => {
    const places = new Map<string, Definition[]>();
    for (const d of definitions) places.set(d.code, [...(places.get(d.code) ?? []), d]);
    const repeated = [...places].filter(([, defs]) => defs.length > 1);
    const statuses = Object.fromEntries(repeated.map(([code, defs]) => [code, defs.map((d) => d.status).sort()]));
    const where = repeated.flatMap(([code, defs]) => defs.map((d) => `${code} ${d.status} at ${d.place}`));
    expect(statuses, where.join('\n')).to.deep.equal(ONE_CODE_TWO_STATUSES);
  });

  it('no literal code is one a template already makes (agent_label_not_found is the labels’)', () => {
    const templates = definitions
      .filter((d) => d.code.includes('${'))
      .map((d) => ({ d, pattern: new RegExp(`^${d.code.replace(/\$\{[^}]*\}/g, '[a-z_]+')}$`) }));
    const clashes = definitions
      .filter((d) => !d.code.includes('${'))
      .flatMap((d) => templates.filter((t) => t.pattern.test(d.code)).map((t) => `${d.code} at ${d.place} ~ ${t.d.place}`));
    expect(clashes).to.deep.equal([]);
  });

  it('a kind that several areas raise is in the catalogue, and each kind there is raised by several', () => {
    const shared = definitions.filter((d) => d.exported && d.name !== undefined);
    const areasRaising = (d: Definition) => {
      const file = d.place.split(':')[0] ?? '';
      return new Set([file, ...importersOf(d.name ?? '', file)].filter((f) => f !== 'errors/catalogue.ts').map(areaOf));
    };
    // The plumbing's codes (http/, auth/, limits/, errors/api-error.ts) are declared by every route they apply to.
    const plumbing = /^(http|auth|limits|errors)$/;
    // A domain/ rule's own code may serve the one resource that applies the rule beside it.
    const most = (d: Definition) => (d.place.startsWith('resources/') ? 1 : 2);
    const outside = shared
      .filter((d) => !plumbing.test(areaOf(d.place)) && areasRaising(d).size > most(d))
      .map((d) => `${d.name} (${d.place}): ${[...areasRaising(d)].join(', ')}`);
    expect(outside, 'raised by several areas, so it belongs in errors/catalogue.ts').to.deep.equal([]);
    const lonely = shared
      .filter((d) => d.place.startsWith('errors/catalogue.ts:') && areasRaising(d).size < 2)
      .map((d) => `${d.name}: ${[...areasRaising(d)].join(', ')}`);
    expect(lonely, 'raised by one area only, so it belongs with that area').to.deep.equal([]);
  });
});
