import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fixtureChartDir, packChart, startChartRepository, type ChartRepository, type PackagedChart } from '@brokkr/testkit';
import { fetchSource, hostAllowed, type SourcePolicy } from '../src/index.ts';
import { localPolicy, publicOnlyPolicy, sourceError } from './support/policy.ts';

const demoSpec = (repository: string) => ({ helm: { repository, chart: 'demo', version: '0.1.0' } });

/** A server that never answers: only a deadline ends a request to it. */
async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(() => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("@brokkr/sources: the outbound-address rules (the webhooks' SSRF rule, the allowed hosts)", () => {
  let demo: PackagedChart;
  let repo: ChartRepository;
  /** The same chart on another loopback address: a second "internal" host. */
  let internal: ChartRepository;

  before(async () => {
    demo = await packChart(fixtureChartDir('demo'));
    repo = await startChartRepository([demo]);
    internal = await startChartRepository([demo], { host: '127.0.0.2' });
  });
  after(async () => {
    await repo.close();
    await internal.close();
  });

  it('refuses loopback and private addresses unless allowed: IP literals, names that resolve to them, https or http; nothing is requested', async () => {
    const before = repo.requests.length;
    const port = new URL(repo.url).port;
    for (const url of [
      repo.url,
      `https://127.0.0.1:${port}/charts`,
      `http://localhost:${port}/charts`,
      `https://localhost:${port}/charts`,
      'https://169.254.169.254/charts',
    ]) {
      const err = await sourceError(fetchSource(demoSpec(url), publicOnlyPolicy()), 'source_address_not_allowed');
      expect(err.message, url).to.match(/private or reserved address|plain http reaches only private addresses/);
    }
    expect(repo.requests.length).to.equal(before);
    const allowed = await fetchSource(demoSpec(repo.url), localPolicy());
    expect(allowed.digest).to.equal(demo.digest);
  });

  it("names neither the address a host name resolved to nor anything else of the hub's network in a refusal", async () => {
    const port = new URL(repo.url).port;
    const err = await sourceError(
      fetchSource(demoSpec(`http://localhost:${port}/charts`), publicOnlyPolicy()),
      'source_address_not_allowed',
    );
    expect(err.details).to.deep.equal({ host: 'localhost' });
    expect(err.message).not.to.match(/127\.0\.0\.1|::1/);
  });

  it('speaks plain http to no public address, even with private networks allowed', async () => {
    const err = await sourceError(fetchSource(demoSpec('http://8.8.8.8/charts'), localPolicy()), 'source_address_not_allowed');
    expect(err.message).to.match(/plain http reaches only private addresses/);
  });

  it('opens exactly the addresses of BROKKR__BROKER__SOURCE_ALLOWED_PRIVATE_CIDRS, not their neighbours', async () => {
    const policy: SourcePolicy = publicOnlyPolicy({ allowedPrivateCidrs: ['127.0.0.1/32'] });
    expect((await fetchSource(demoSpec(repo.url), policy)).digest).to.equal(demo.digest);
    await sourceError(fetchSource(demoSpec(internal.url), policy), 'source_address_not_allowed');
    expect(internal.requests).to.deep.equal([]);
  });

  it('refuses a redirect to a private address: every hop is checked again', async () => {
    const redirecting = await startChartRepository([demo]);
    redirecting.override('/charts/index.yaml', (_req, res) => void res.writeHead(302, { location: `${internal.url}/index.yaml` }).end());
    try {
      const err = await sourceError(
        fetchSource(demoSpec(redirecting.url), publicOnlyPolicy({ allowedPrivateCidrs: ['127.0.0.1'] })),
        'source_address_not_allowed',
      );
      expect(err.details).to.deep.equal({ host: '127.0.0.2', address: '127.0.0.2' });
      expect(internal.requests).to.deep.equal([]);
      // The same redirect where the target is allowed: it is followed, so the refusal above was the rule's.
      const followed = await fetchSource(demoSpec(redirecting.url), publicOnlyPolicy({ allowedPrivateCidrs: ['127.0.0.1', '127.0.0.2'] }));
      expect(followed.digest).to.equal(demo.digest);
      expect(internal.requests).to.deep.equal(['/charts/index.yaml']);
    } finally {
      await redirecting.close();
    }
  });

  it('refuses a host off BROKKR__BROKER__SOURCE_ALLOWED_HOSTS, first or after a redirect', async () => {
    const before = repo.requests.length;
    const err = await sourceError(
      fetchSource(demoSpec(repo.url), localPolicy({ allowedHosts: ['charts.example.com'] })),
      'source_host_not_allowed',
    );
    expect(err.details).to.deep.equal({ host: '127.0.0.1' });
    expect(repo.requests.length).to.equal(before);

    const port = new URL(repo.url).port;
    const redirecting = await startChartRepository([demo]);
    redirecting.override(
      '/charts/index.yaml',
      (_req, res) => void res.writeHead(301, { location: `http://localhost:${port}/charts/index.yaml` }).end(),
    );
    try {
      await sourceError(fetchSource(demoSpec(redirecting.url), localPolicy({ allowedHosts: ['127.0.0.1'] })), 'source_host_not_allowed');
      expect(repo.requests.length).to.equal(before);
    } finally {
      await redirecting.close();
    }
  });

  it('matches allowed hosts exactly, or as subdomains of a *. entry', () => {
    expect(hostAllowed('charts.example.com', [])).to.equal(true);
    expect(hostAllowed('Charts.Example.com', ['charts.example.com'])).to.equal(true);
    expect(hostAllowed('a.b.example.com', ['*.example.com'])).to.equal(true);
    expect(hostAllowed('example.com', ['*.example.com'])).to.equal(false);
    expect(hostAllowed('evilexample.com', ['*.example.com'])).to.equal(false);
    expect(hostAllowed('charts.example.com.evil.io', ['charts.example.com'])).to.equal(false);
  });

  it('gives up after five redirects, and when the deadline passes (source_unreachable)', async () => {
    const looping = await startChartRepository([demo]);
    looping.override('/charts/index.yaml', (_req, res) => void res.writeHead(302, { location: '/charts/index.yaml' }).end());
    const silent = await silentServer();
    try {
      const loop = await sourceError(fetchSource(demoSpec(looping.url), localPolicy()), 'source_unreachable');
      expect(loop.details).to.deep.include({ reason: 'more than 5 redirects' });
      expect(looping.requests).to.have.length(6);
      const late = await sourceError(fetchSource(demoSpec(silent.url), localPolicy({ timeoutMs: 300 })), 'source_unreachable');
      expect(late.details).to.deep.include({ reason: 'timed out' });
    } finally {
      await looping.close();
      await silent.close();
    }
  });
});
