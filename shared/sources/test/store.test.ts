import { expect } from 'chai';
import pg from 'pg';
import { fixtureChartDir, packChart, useTestInfra } from '@brokkr/testkit';
import { loadSourceBlob, sha256Digest, storeSourceBlob } from '../src/index.ts';

describe('@brokkr/sources: the content-addressed store (source_blobs, real PostgreSQL)', () => {
  const infra = useTestInfra();
  let db: pg.Pool;

  before(() => {
    db = new pg.Pool({ connectionString: infra.db.url, max: 2 });
  });
  after(() => db.end());

  it('keeps bytes under their digest, once however often they are stored, and gives them back exactly', async () => {
    const chart = await packChart(fixtureChartDir('demo'));
    const fetched = { kind: 'helm-chart' as const, digest: chart.digest, bytes: chart.tgz };
    await storeSourceBlob(db, fetched);
    await storeSourceBlob(db, fetched);
    await storeSourceBlob(db, { ...fetched, kind: 'kustomize-archive' });
    const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM source_blobs WHERE digest = $1', [chart.digest]);
    expect(rows[0]?.n).to.equal(1);
    const loaded = await loadSourceBlob(db, chart.digest);
    expect(loaded?.kind).to.equal('helm-chart');
    expect(loaded?.size).to.equal(chart.tgz.length);
    expect(loaded?.bytes.equals(chart.tgz)).to.equal(true);
    expect(await loadSourceBlob(db, sha256Digest(Buffer.from('absent')))).to.equal(undefined);
  });

  it('never stores bytes under a digest that is not theirs', async () => {
    const bytes = Buffer.from('one');
    let refused: unknown;
    await storeSourceBlob(db, { kind: 'helm-chart', digest: sha256Digest(Buffer.from('two')), bytes }).catch(
      (err: unknown) => (refused = err),
    );
    expect(refused).to.be.instanceOf(Error);
    expect(await loadSourceBlob(db, sha256Digest(Buffer.from('two')))).to.equal(undefined);
    // The table's own checks, for writers other than storeSourceBlob.
    let violated: unknown;
    await db
      .query("INSERT INTO source_blobs (digest, kind, bytes, size) VALUES ('md5:x', 'helm-chart', '\\x00'::bytea, 1)")
      .catch((err: unknown) => (violated = err));
    expect((violated as { code?: string })?.code).to.equal('23514');
  });
});
