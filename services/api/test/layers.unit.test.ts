import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { apiSrc as src, sourceFiles } from './support/source-files.ts';

/**
 * The api's folders are layers (ADR 0037, src/README.md "Layout"): rules that several resources
 * apply live in domain/, and a resource reads only its own sql/. These checks read the import
 * statements of src/, so a shared rule cannot slip back into one resource unnoticed.
 */

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

/** The layers of ADR 0037, lowest first: a file's layer is its top folder's (or its own, for the composition files). */
const LAYERS: readonly (readonly string[])[] = [
  ['errors', 'auth', 'audit', 'settings', 'limits', 'metrics', 'yaml', 'bootstrap', 'sockets'],
  ['domain', 'compat'],
  ['delivery'],
  ['events'],
  ['feeds', 'rendering'],
  ['context.ts'],
  ['http'],
  ['resources'],
  ['agent-channel', 'console'],
  ['app.ts', 'create-context.ts', 'resources/index.ts', 'upgrade-routes.ts', 'start.ts', 'main.ts'],
];
const layerOf = (file: string) => {
  const top = file === 'resources/index.ts' ? file : (file.split('/')[0] ?? file);
  return LAYERS.findIndex((layer) => layer.includes(top));
};

describe('api layers', () => {
  it('no resource imports another resource’s sql/', () => {
    const crossing = imports().filter(([from, to]) => {
      const owner = resourceOf(to);
      return owner !== undefined && to.startsWith(`resources/${owner}/sql/`) && resourceOf(from) !== owner;
    });
    expect(crossing.filter(([from]) => from.startsWith('resources/'))).to.deep.equal([]);
  });

  it('no resource imports another resource', () => {
    // Template instantiation (templates/from-template-routes.ts) writes its deployment object with
    // that resource's one create function, which takes the WriteScope of events/ and so cannot
    // live in domain/; every other shared piece is in domain/, events/ or http/ (ADR 0037).
    const allowed = [['resources/templates/from-template-routes.ts', 'resources/deployment-objects/store.ts']];
    const crossing = imports().filter(([from, to]) => {
      const owner = resourceOf(from);
      return owner !== undefined && resourceOf(to) !== undefined && resourceOf(to) !== owner;
    });
    expect(crossing).to.deep.equal(allowed);
  });

  it('no import runs up a layer', () => {
    const unplaced = imports().flatMap((pair) => pair.filter((file) => layerOf(file) < 0));
    expect(unplaced, 'files outside every layer').to.deep.equal([]);
    expect(imports().filter(([from, to]) => layerOf(to) > layerOf(from))).to.deep.equal([]);
  });

  it('domain/ imports no http/, resources/, agent-channel/ or console/', () => {
    const upward = imports().filter(([from, to]) => from.startsWith('domain/') && /^(http|resources|agent-channel|console)\//.test(to));
    expect(upward).to.deep.equal([]);
  });

  it('every ApiContext field is declared in context.ts, and no file uses a field whose type lives in a layer above its own', () => {
    const augmenting = sourceFiles(src).filter((file) => /declare module '[^']*context\.ts'/.test(readFileSync(file, 'utf8')));
    expect(
      augmenting.map((file) => path.relative(src, file)),
      'fields added from elsewhere',
    ).to.deep.equal([]);
    const fields = contextFieldLayers();
    expect(fields.size, 'context.ts fields read').to.be.greaterThan(10);
    const above = sourceFiles(src).flatMap((file) => {
      const rel = path.relative(src, file);
      return [...readFileSync(file, 'utf8').matchAll(/\bctx\.([A-Za-z]+)/g)]
        .map((m) => m[1]!)
        .filter((field) => (fields.get(field) ?? -1) > layerOf(rel))
        .map((field) => `${rel}: ctx.${field}`);
    });
    expect([...new Set(above)]).to.deep.equal([]);
  });
});

/** Each ApiContext field and the layer of the module its type is imported from (context.ts's own layer for library types). */
function contextFieldLayers(): Map<string, number> {
  const text = readFileSync(path.join(src, 'context.ts'), 'utf8');
  const typeModule = new Map<string, string>();
  for (const m of text.matchAll(/import type \{ ([^}]+) \} from '(\.[^']+)'/g)) {
    for (const name of m[1]!.split(',').map((n) => n.trim())) typeModule.set(name, path.relative(src, path.resolve(src, m[2]!)));
  }
  const body = text.slice(text.indexOf('export interface ApiContext'));
  const fields = new Map<string, number>();
  for (const m of body.matchAll(/^ {2}([a-zA-Z]+): ([A-Za-z]+)/gm)) {
    const module = typeModule.get(m[2]!);
    fields.set(m[1]!, module ? layerOf(module) : layerOf('context.ts'));
  }
  return fields;
}
