import type { IncomingMessage } from 'node:http';
import { expect } from 'chai';
import { connectBus, type Bus } from '@brokkr/bus';
import { createDb, type Db, type Queryable } from '@brokkr/db';
import { createLogger } from '@brokkr/logger';
import { generatePak } from '@brokkr/pak';
import { serviceBusSettings, useTestInfra } from '@brokkr/testkit';
import { createAuthenticator, type Authenticator } from '../src/auth/authenticator.ts';
import { ApiError } from '../src/errors/api-error.ts';

const logger = createLogger({ service: 'api-unknown-paks-test', level: 'silent' });
const request = {} as IncomingMessage;

/**
 * What PAKs from an address past its unknown-PAK budget cost the database (docs/security.md, "Denial
 * of service by an authenticated tenant"): they are still looked up, so a valid one is answered, but
 * all of them share one statement at a time. The authenticator runs against the real database
 * through a gate that counts the statements and can hold them.
 */
describe('api authentication: lookups of an address past its unknown-PAK budget', () => {
  const infra = useTestInfra({ nats: true });
  let db: Db;
  let bus: Bus;
  let auth: Authenticator;
  const statements: string[] = [];
  let gate: Promise<void> | undefined;

  before(async () => {
    db = createDb({ url: infra.db.url, poolSize: 8 });
    bus = await connectBus({ ...serviceBusSettings(infra.nats, 'api'), name: 'unknown-paks-test', logger });
    const counted: Queryable = {
      query: (async (statement: string | { name?: string }, values?: unknown[]) => {
        statements.push(typeof statement === 'string' ? 'text' : (statement.name ?? 'text'));
        if (gate) await gate;
        return db.pool.query(statement as string, values);
      }) as Queryable['query'],
    };
    auth = createAuthenticator({
      db: counted,
      nc: bus.nc,
      ttlSeconds: 60,
      logger,
      clientAddress: () => '198.51.100.7',
      unknownPaks: { burst: 2, perMinute: 1, negativeTtlMs: 60_000 },
    });
  });

  after(async () => {
    auth?.close();
    await bus?.close();
    await db?.close();
  });

  const randomHash = () => generatePak().hash;

  it('answers a valid PAK among 40 unknown ones, each unknown one 429, with two shared statements', async () => {
    const { hash: agentHash } = generatePak();
    const { rows } = await db.pool.query<{ id: string }>(
      "INSERT INTO agents (name, cluster_name, status, pak_hash) VALUES ('gate-agent', 'c', 'ACTIVE', $1) RETURNING id",
      [agentHash],
    );
    // The budget of two lookups of the address's own.
    for (let i = 0; i < 2; i++) expect(await auth.resolveRequest(randomHash(), request)).to.equal(undefined);
    expect(statements).to.deep.equal(['brokkr_resolve_pak', 'brokkr_resolve_pak']);
    statements.length = 0;

    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    // The first over-budget lookup starts its statement at once and waits at the gate; the rest queue behind it.
    const unknown = Array.from({ length: 40 }, () => auth.resolveRequest(randomHash(), request).then(() => 'answered', refusal));
    const valid = auth.resolveRequest(agentHash, request);
    expect(statements).to.deep.equal(['brokkr_resolve_paks']);
    gate = undefined;
    open();

    expect(await valid).to.deep.include({ agent: rows[0]!.id });
    expect(new Set(await Promise.all(unknown))).to.deep.equal(new Set(['429 too_many_unknown_paks']));
    expect(statements).to.deep.equal(['brokkr_resolve_paks', 'brokkr_resolve_paks']);
    // The valid PAK is cached now, and a refused hash is remembered: neither costs a statement.
    expect(await auth.resolveRequest(agentHash, request)).to.deep.include({ agent: rows[0]!.id });
    expect(statements).to.have.length(2);
  });
});

function refusal(err: unknown): string {
  if (err instanceof ApiError) return `${err.status} ${err.code}`;
  throw err;
}
