import { expect } from 'chai';
import { fixtureChartDir, packChart, startChartRepository, type ChartRepository, type PackagedChart } from '@brokkr/testkit';
import { fetchSource } from '../src/index.ts';
import { FULL_PARSE_MAX_BYTES, SLICE_MAX_CHARS } from '../src/helm/chart-index.ts';
import { INDEX_PARSER_LIMITS } from '../src/helm/index-parser.ts';
import { localPolicy, sourceError } from './support/policy.ts';

const spec = (repo: ChartRepository) => ({ helm: { repository: repo.url, chart: 'demo', version: '0.1.0' } });

/** The classic exponential alias expansion, nine levels of nine. */
function billionLaughs(indent: string, flow: boolean): string {
  const lines = [`${indent}- &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]`];
  for (let i = 1; i < 9; i += 1)
    lines.push(
      `${indent}- &l${i} [${Array(9)
        .fill(`*l${i - 1}`)
        .join(', ')}]`,
    );
  return flow ? `[${lines.map((l) => l.trim().slice(2)).join(', ')}]` : lines.join('\n');
}

describe('@brokkr/sources: a hostile index.yaml is refused', () => {
  let demo: PackagedChart;
  let repo: ChartRepository;

  before(async () => {
    demo = await packChart(fixtureChartDir('demo'));
    repo = await startChartRepository([demo]);
  });
  after(() => repo.close());

  const serve = (text: string) => repo.override('/charts/index.yaml', (_req, res) => void res.end(text));

  it("refuses an alias bomb in the chart's own entries (invalid_source, nothing downloaded)", async () => {
    serve(`apiVersion: v1\nentries:\n  demo:\n${billionLaughs('  ', false)}\n  - version: 0.1.0\n    urls: [demo-0.1.0.tgz]\n`);
    const before = repo.requests.length;
    const err = await sourceError(fetchSource(spec(repo), localPolicy()), 'invalid_source');
    expect(err.message).to.equal("the repository's index.yaml is not usable: it uses YAML aliases");
    expect(repo.requests.slice(before)).to.deep.equal(['/charts/index.yaml']);
  });

  it('refuses an alias bomb in an index of another layout (parsed whole)', async () => {
    serve(`{"apiVersion": "v1", "entries": {"demo": ${billionLaughs('', true)}}}`);
    const err = await sourceError(fetchSource(spec(repo), localPolicy()), 'invalid_source');
    expect(err.message).to.equal("the repository's index.yaml is not usable: it uses YAML aliases");
  });

  it('refuses an index of another layout larger than it may cost to parse whole', async () => {
    const padding = JSON.stringify('x'.repeat(FULL_PARSE_MAX_BYTES));
    serve(`{"apiVersion": "v1", "padding": ${padding}, "entries": {"demo": [{"version": "0.1.0", "urls": ["demo-0.1.0.tgz"]}]}}`);
    const err = await sourceError(fetchSource(spec(repo), localPolicy()), 'invalid_source');
    expect(err.message).to.match(/not in the block layout chart repositories write, and larger than 1048576 bytes/);
  });

  it('refuses a chart whose entries alone are larger than the slice limit', async () => {
    const description = 'x'.repeat(1000);
    const entries = Array.from(
      { length: Math.ceil(SLICE_MAX_CHARS / 1000) + 10 },
      (_, i) => `  - version: 1.0.${i}\n    description: ${description}`,
    );
    serve(`apiVersion: v1\nentries:\n  demo:\n${entries.join('\n')}\n`);
    const err = await sourceError(fetchSource(spec(repo), localPolicy()), 'invalid_source');
    expect(err.message).to.match(/the entries of demo exceed/);
  });

  it('refuses absurd nesting and malformed YAML with a message, never a crash', async () => {
    serve(`apiVersion: v1\nentries:\n  demo:\n  - version: ${'['.repeat(20_000)}\n`);
    await sourceError(fetchSource(spec(repo), localPolicy()), 'invalid_source');
    serve('apiVersion: v1\nentries:\n  demo:\n  - version: "0.1.0\n    urls: [\n');
    await sourceError(fetchSource(spec(repo), localPolicy()), 'invalid_source');
  });

  it('parses on a thread of its own with a heap cap and a time budget: an index past either is refused', async () => {
    const versions = Array.from(
      { length: 1500 },
      (_, i) => `  - version: 1.0.${i}\n    keywords: [${Array(60).fill('k').join(', ')}]\n    urls: [x.tgz]`,
    );
    const saved = { ...INDEX_PARSER_LIMITS };
    try {
      INDEX_PARSER_LIMITS.memoryMb = 16;
      // A thread with that heap reads a small index: what the big one is refused for is its parse.
      serve(repo.index);
      expect((await fetchSource(spec(repo), localPolicy())).digest).to.equal(demo.digest);
      serve(`apiVersion: v1\nentries:\n  demo:\n${versions.join('\n')}\n`);
      const greedy = await sourceError(fetchSource(spec(repo), localPolicy()), 'invalid_source');
      expect(greedy.message).to.equal("the repository's index.yaml is not usable: parsing it needs more than 16 MB");
      Object.assign(INDEX_PARSER_LIMITS, saved, { budgetMs: 1 });
      const slow = await sourceError(fetchSource(spec(repo), localPolicy()), 'invalid_source');
      expect(slow.message).to.equal("the repository's index.yaml is not usable: parsing it took longer than 1 ms");
    } finally {
      Object.assign(INDEX_PARSER_LIMITS, saved);
    }
    // Within the limits the same index is read: it was the limits that refused it.
    await sourceError(fetchSource(spec(repo), localPolicy()), 'source_not_found');
  });

  it('finds its chart in a large index without parsing the other charts, even when they are hostile', async () => {
    const others = Array.from(
      { length: 3000 },
      (_, i) => `  chart${i}:\n  - version: 1.0.0\n    description: ${'d'.repeat(1500)}\n    urls: [x.tgz]`,
    );
    const bomb = `  bomb:\n${billionLaughs('  ', false)}`;
    const demoEntry = `  demo:\n  - version: 0.1.0\n    digest: ${demo.digest.slice(7)}\n    urls: [demo-0.1.0.tgz]`;
    const index = `apiVersion: v1\nentries:\n${others.join('\n')}\n${bomb}\n${demoEntry}\ngenerated: "2026-01-01T00:00:00Z"\n`;
    expect(index.length).to.be.above(4 * 1024 * 1024);
    serve(index);
    const fetched = await fetchSource(spec(repo), localPolicy());
    expect(fetched.digest).to.equal(demo.digest);
  });
});
