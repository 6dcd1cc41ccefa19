import { expect } from 'chai';
import type { ServerResponse } from 'node:http';
import { fixtureChartDir, packChart, startChartRepository, type ChartRepository, type PackagedChart } from '@brokkr/testkit';
import { fetchSource } from '../src/index.ts';
import { localPolicy, sourceError } from './support/policy.ts';

/** Streams `total` bytes in 64 KiB chunks without a Content-Length, as fast as the client reads; resolves with what got out. */
function streamHuge(res: ServerResponse, total: number): Promise<number> {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  let written = 0;
  res.writeHead(200, { 'content-type': 'application/octet-stream' });
  return new Promise((resolve) => {
    res.on('close', () => resolve(written));
    const pump = () => {
      while (written < total) {
        written += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  });
}

describe('@brokkr/sources: classic chart repositories (index.yaml), served locally', () => {
  let demo: PackagedChart;
  let demo2: PackagedChart;
  let repo: ChartRepository;

  before(async () => {
    demo = await packChart(fixtureChartDir('demo'));
    demo2 = await packChart(fixtureChartDir('demo'), '0.2.0+build.1');
    repo = await startChartRepository([demo, demo2]);
  });
  after(() => repo.close());

  it('resolves chart@version in index.yaml, downloads its .tgz (a URL relative to the repository) and pins its digest', async () => {
    const before = repo.requests.length;
    const fetched = await fetchSource({ helm: { repository: repo.url, chart: 'demo', version: '0.1.0' } }, localPolicy());
    expect(fetched.kind).to.equal('helm-chart');
    expect(fetched.bytes.equals(demo.tgz)).to.equal(true);
    expect(fetched.digest).to.equal(demo.digest);
    expect(fetched.pinned).to.deep.equal({ helm: { repository: repo.url, chart: 'demo', version: '0.1.0', digest: demo.digest } });
    expect(repo.requests.slice(before)).to.deep.equal(['/charts/index.yaml', '/charts/demo-0.1.0.tgz']);
  });

  it('picks the exact version among several (a SemVer build suffix included)', async () => {
    const fetched = await fetchSource({ helm: { repository: `${repo.url}/`, chart: 'demo', version: '0.2.0+build.1' } }, localPolicy());
    expect(fetched.digest).to.equal(demo2.digest);
    expect(fetched.digest).not.to.equal(demo.digest);
  });

  it('follows absolute download URLs and reads an index whose lists are indented (another writer), without digests', async () => {
    const other = await startChartRepository([demo], { urls: 'absolute', layout: 'indented', omitDigests: true, basePath: '/' });
    try {
      expect(other.index).to.match(/^ {4}- apiVersion: v2$/m);
      expect(other.index).not.to.match(/digest:/);
      const fetched = await fetchSource({ helm: { repository: other.url, chart: 'demo', version: '0.1.0' } }, localPolicy());
      expect(fetched.digest).to.equal(demo.digest);
      expect(other.requests).to.deep.equal(['/index.yaml', '/demo-0.1.0.tgz']);
    } finally {
      await other.close();
    }
  });

  it('answers source_not_found for a missing chart, a missing version (naming the versions there are) and a missing index', async () => {
    const chart = await sourceError(
      fetchSource({ helm: { repository: repo.url, chart: 'nope', version: '0.1.0' } }, localPolicy()),
      'source_not_found',
    );
    expect(chart.message).to.equal('the repository has no chart named nope');
    const version = await sourceError(
      fetchSource({ helm: { repository: repo.url, chart: 'demo', version: '9.9.9' } }, localPolicy()),
      'source_not_found',
    );
    expect(version.message).to.equal('the repository has no version 9.9.9 of demo');
    expect(version.details).to.deep.include({ available: ['0.1.0', '0.2.0+build.1'] });
    const index = await sourceError(
      fetchSource({ helm: { repository: `${repo.origin}/elsewhere`, chart: 'demo', version: '0.1.0' } }, localPolicy()),
      'source_not_found',
    );
    expect(index.message).to.match(/index\.yaml\) was not found \(404/);
  });

  it('refuses a download whose bytes differ from the digest the index gives (source_digest_mismatch)', async () => {
    const tampered = await startChartRepository([demo]);
    tampered.override('/charts/demo-0.1.0.tgz', (_req, res) => void res.end(demo2.tgz));
    try {
      const err = await sourceError(
        fetchSource({ helm: { repository: tampered.url, chart: 'demo', version: '0.1.0' } }, localPolicy()),
        'source_digest_mismatch',
      );
      expect(err.details).to.deep.equal({ expected: demo.digest, actual: demo2.digest });
    } finally {
      await tampered.close();
    }
  });

  it('refuses a chart larger than maxBytes while streaming it: the download stops at the cap, far from its end', async () => {
    const huge = await startChartRepository([demo]);
    const total = 256 * 1024 * 1024;
    let sent: Promise<number> = Promise.resolve(0);
    huge.override('/charts/demo-0.1.0.tgz', (_req, res) => void (sent = streamHuge(res, total)));
    try {
      const err = await sourceError(
        fetchSource({ helm: { repository: huge.url, chart: 'demo', version: '0.1.0' } }, localPolicy({ maxBytes: 1024 * 1024 })),
        'source_too_large',
      );
      expect(err.details).to.deep.equal({ max_bytes: 1024 * 1024 });
      expect(await sent).to.be.below(total);
    } finally {
      await huge.close();
    }
  });

  it('refuses an index.yaml larger than maxBytes from its Content-Length, before reading it', async () => {
    const big = await startChartRepository([demo]);
    const body = Buffer.alloc(2 * 1024 * 1024, 0x20);
    big.override('/charts/index.yaml', (_req, res) => void res.writeHead(200, { 'content-length': body.length }).end(body));
    try {
      const err = await sourceError(
        fetchSource({ helm: { repository: big.url, chart: 'demo', version: '0.1.0' } }, localPolicy({ maxBytes: 1024 * 1024 })),
        'source_too_large',
      );
      expect(err.message).to.equal('the repository index (index.yaml) is larger than 1048576 bytes');
    } finally {
      await big.close();
    }
  });
});
