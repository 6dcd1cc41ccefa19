import { expect } from 'chai';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  fixtureChartDir,
  packChart,
  pushArtifact,
  pushChart,
  startOciRegistry,
  type OciRegistry,
  type PackagedChart,
} from '@brokkr/testkit';
import { fetchSource } from '../src/index.ts';
import { localPolicy, publicOnlyPolicy, sourceError } from './support/policy.ts';

interface Listening {
  server: Server;
  origin: string;
}

async function listen(server: Server, host: string): Promise<Listening> {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, origin: `http://${host}:${(server.address() as AddressInfo).port}` };
}

async function close({ server }: Listening): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/**
 * A registry as big ones are deployed: the distribution API in front (here a pass-through to the
 * real registry) and blob downloads redirected to object storage on another host, which serves
 * the blob (fetched from the registry) and records the headers it was sent.
 */
async function registryWithBlobStorage(
  registry: OciRegistry,
): Promise<{ front: Listening; storage: Listening; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const storage = await listen(
    createServer((req, res) => {
      seen.push(req.headers);
      // Storage has its own access to the registry's blobs (here: a token of its own).
      void fetch(`${registry.origin}/token`)
        .then(async (t) => ((await t.json()) as { token: string }).token)
        .then((token) => fetch(`${registry.origin}${req.url ?? '/'}`, { headers: { authorization: `Bearer ${token}` } }))
        .then(async (up) => res.writeHead(up.status).end(Buffer.from(await up.arrayBuffer())))
        .catch(() => res.writeHead(502).end());
    }),
    '127.0.0.2',
  );
  const front = await listen(
    createServer((req, res) => {
      if (req.method === 'GET' && /\/blobs\/sha256:/.test(req.url ?? '') && req.headers.authorization) {
        return void res.writeHead(307, { location: `${storage.origin}${req.url}` }).end();
      }
      const upstream = new URL(req.url ?? '/', registry.origin);
      const proxied = request(upstream, { method: req.method, headers: { ...req.headers, host: upstream.host } }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      req.pipe(proxied);
    }),
    '127.0.0.1',
  );
  return { front, storage, seen };
}

describe('@brokkr/sources: charts in an OCI registry (go-containerregistry, served locally)', () => {
  let demo: PackagedChart;
  let registry: OciRegistry;
  let tokenRegistry: OciRegistry;

  before(async function () {
    this.timeout(300_000); // the first run builds tools/oci-registry
    demo = await packChart(fixtureChartDir('demo'));
    registry = await startOciRegistry();
    tokenRegistry = await startOciRegistry({ token: true });
  });
  after(async () => {
    await registry?.stop();
    await tokenRegistry?.stop();
  });

  it('pulls oci://host/path + chart + version: the manifest, its Helm chart layer, pinned to both digests', async () => {
    const pushed = await pushChart(registry, demo.tgz, 'demo', '0.1.0');
    const fetched = await fetchSource({ helm: { repository: pushed.repository, chart: 'demo', version: '0.1.0' } }, localPolicy());
    expect(fetched.kind).to.equal('helm-chart');
    expect(fetched.bytes.equals(demo.tgz)).to.equal(true);
    expect(fetched.digest).to.equal(demo.digest);
    expect(fetched.pinned).to.deep.equal({
      helm: { repository: pushed.repository, chart: 'demo', version: '0.1.0', digest: demo.digest, manifest_digest: pushed.manifestDigest },
    });
  });

  it("does a public registry's token dance: 401 with a Bearer challenge, an anonymous token, the pull again", async () => {
    const pushed = await pushArtifact(tokenRegistry, { tgz: demo.tgz, name: 'demo', version: '0.1.0', path: 'team/charts' });
    const anonymous = await fetch(`${tokenRegistry.origin}/v2/team/charts/demo/manifests/0.1.0`);
    expect(anonymous.status).to.equal(401);
    expect(anonymous.headers.get('www-authenticate')).to.match(/^Bearer realm="http:\/\/127\.0\.0\.1:\d+\/token"/);
    const fetched = await fetchSource({ helm: { repository: pushed.repository, chart: 'demo', version: '0.1.0' } }, localPolicy());
    expect(fetched.digest).to.equal(demo.digest);
    expect(fetched.pinned).to.have.nested.property('helm.manifest_digest', pushed.manifestDigest);
  });

  it("sends the registry's token to the registry only, never to the blob storage a download redirects to", async () => {
    await pushChart(tokenRegistry, demo.tgz, 'demo', '0.1.0');
    const { front, storage, seen } = await registryWithBlobStorage(tokenRegistry);
    try {
      const host = new URL(front.origin).host;
      const fetched = await fetchSource({ helm: { repository: `oci://${host}/charts`, chart: 'demo', version: '0.1.0' } }, localPolicy());
      expect(fetched.digest).to.equal(demo.digest);
      expect(seen).to.have.length(1);
      expect(seen[0]).not.to.have.property('authorization');
    } finally {
      await close(front);
      await close(storage);
    }
  });

  it('writes a version\'s "+" as "_" in the tag, as Helm does', async () => {
    const build = await packChart(fixtureChartDir('demo'), '0.3.0+build.7');
    const pushed = await pushChart(registry, build.tgz, 'demo', '0.3.0+build.7');
    expect((await fetch(`${registry.origin}/v2/charts/demo/manifests/0.3.0_build.7`)).status).to.equal(200);
    const fetched = await fetchSource({ helm: { repository: pushed.repository, chart: 'demo', version: '0.3.0+build.7' } }, localPolicy());
    expect(fetched.digest).to.equal(build.digest);
  });

  it('answers source_not_found for a version or chart the registry does not have', async () => {
    await pushChart(registry, demo.tgz, 'demo', '0.1.0');
    await sourceError(
      fetchSource({ helm: { repository: registry.repository(), chart: 'demo', version: '9.9.9' } }, localPolicy()),
      'source_not_found',
    );
    await sourceError(
      fetchSource({ helm: { repository: registry.repository(), chart: 'absent', version: '0.1.0' } }, localPolicy()),
      'source_not_found',
    );
    await sourceError(
      fetchSource({ helm: { repository: tokenRegistry.repository(), chart: 'absent', version: '0.1.0' } }, localPolicy()),
      'source_not_found',
    );
  });

  it('refuses an artifact that is not a Helm chart (no chart layer)', async () => {
    const pushed = await pushArtifact(registry, {
      tgz: demo.tgz,
      name: 'image',
      version: '1.0.0',
      layerMediaType: 'application/vnd.oci.image.layer.v1.tar+gzip',
    });
    const err = await sourceError(
      fetchSource({ helm: { repository: pushed.repository, chart: 'image', version: '1.0.0' } }, localPolicy()),
      'invalid_source',
    );
    expect(err.message).to.match(/has no Helm chart layer/);
  });

  it('refuses a chart larger than maxBytes from the size its manifest gives, before downloading it', async () => {
    const pushed = await pushChart(registry, demo.tgz, 'demo', '0.1.0');
    await sourceError(
      fetchSource(
        { helm: { repository: pushed.repository, chart: 'demo', version: '0.1.0' } },
        localPolicy({ maxBytes: demo.tgz.length - 1 }),
      ),
      'source_too_large',
    );
  });

  it('refuses the registry on 127.0.0.1 when private networks are not allowed', async () => {
    const pushed = await pushChart(registry, demo.tgz, 'demo', '0.1.0');
    const err = await sourceError(
      fetchSource({ helm: { repository: pushed.repository, chart: 'demo', version: '0.1.0' } }, publicOnlyPolicy()),
      'source_address_not_allowed',
    );
    expect(err.details).to.deep.equal({ host: '127.0.0.1', address: '127.0.0.1' });
  });
});
