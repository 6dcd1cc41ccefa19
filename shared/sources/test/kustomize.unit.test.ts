import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { fixtureKustomizeDir, packDirectory, startChartRepository, type ChartRepository } from '@brokkr/testkit';
import { fetchSource } from '../src/index.ts';
import { localPolicy, publicOnlyPolicy, sourceError } from './support/policy.ts';

const sha256 = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

describe('@brokkr/sources: kustomize archives, inline and by URL', () => {
  let archive: Buffer;
  let server: ChartRepository;

  before(async () => {
    archive = await packDirectory(fixtureKustomizeDir('demo'));
    server = await startChartRepository([]);
    server.override('/overlays.tar.gz', (_req, res) => void res.end(archive));
  });
  after(() => server.close());

  it('takes an inline base64 archive and pins its digest and path', async () => {
    const fetched = await fetchSource({ kustomize: { archive: archive.toString('base64'), path: 'overlays/prod' } }, publicOnlyPolicy());
    expect(fetched.kind).to.equal('kustomize-archive');
    expect(fetched.bytes.equals(archive)).to.equal(true);
    expect(fetched.digest).to.equal(sha256(archive));
    expect(fetched.pinned).to.deep.equal({ kustomize: { path: 'overlays/prod', digest: sha256(archive) } });
  });

  it('fetches an archive by URL under the same rules, and records the URL', async () => {
    const url = `${server.origin}/overlays.tar.gz`;
    const fetched = await fetchSource({ kustomize: { url, path: 'overlays/prod' } }, localPolicy());
    expect(fetched.digest).to.equal(sha256(archive));
    expect(fetched.pinned).to.deep.equal({ kustomize: { url, path: 'overlays/prod', digest: sha256(archive) } });
    await sourceError(fetchSource({ kustomize: { url, path: '.' } }, publicOnlyPolicy()), 'source_address_not_allowed');
    await sourceError(fetchSource({ kustomize: { url: `${server.origin}/missing.tar.gz`, path: '.' } }, localPolicy()), 'source_not_found');
  });

  it('refuses an inline archive over maxBytes from its length, before decoding it', async () => {
    const err = await sourceError(
      fetchSource(
        { kustomize: { archive: archive.toString('base64'), path: 'base' } },
        publicOnlyPolicy({ maxBytes: archive.length - 10 }),
      ),
      'source_too_large',
    );
    expect(err.details).to.deep.equal({ max_bytes: archive.length - 10 });
  });

  it('refuses what is not a gzip archive, inline or by URL', async () => {
    const text = Buffer.from('kind: Kustomization\n').toString('base64');
    await sourceError(fetchSource({ kustomize: { archive: text, path: '.' } }, publicOnlyPolicy()), 'invalid_source');
    server.override('/plain.yaml', (_req, res) => void res.end('kind: Kustomization\n'));
    await sourceError(fetchSource({ kustomize: { url: `${server.origin}/plain.yaml`, path: '.' } }, localPolicy()), 'invalid_source');
  });
});
