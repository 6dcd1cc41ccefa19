import { expect } from 'chai';
import pg from 'pg';
import { isDatabaseUnavailable } from '@brokkr/db';
import { freePort, useTestInfra } from '@brokkr/testkit';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('@brokkr/db isDatabaseUnavailable', () => {
  const infra = useTestInfra();

  it('recognises a server that is not listening (real ECONNREFUSED, also through localhost happy eyeballs)', async () => {
    const port = await freePort();
    for (const host of ['127.0.0.1', 'localhost']) {
      const client = new pg.Client({ connectionString: `postgres://postgres@${host}:${port}/postgres` });
      const err = await client.connect().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, host).to.be.instanceOf(Error);
      expect(isDatabaseUnavailable(err), host).to.equal(true);
    }
  });

  it('recognises a backend terminated by the administrator (57P01) and the dead client afterwards', async () => {
    const victim = new pg.Client({ connectionString: infra.db.url });
    victim.on('error', () => undefined);
    await victim.connect();
    const pid = (await victim.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const running = victim.query('SELECT pg_sleep(30)').then(
      () => undefined,
      (e: unknown) => e,
    );
    const admin = new pg.Client({ connectionString: infra.db.url });
    await admin.connect();
    try {
      // Wait until the sleep is really running, so the termination hits a statement in flight.
      for (;;) {
        const { rows } = await admin.query(
          `SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND query LIKE 'SELECT pg_sleep%' AND state = 'active'`,
          [pid],
        );
        if (rows.length > 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    } finally {
      await admin.end();
    }
    const err = await running;
    expect(isDatabaseUnavailable(err), String(err)).to.equal(true);
    const after = await victim.query('SELECT 1').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isDatabaseUnavailable(after), String(after)).to.equal(true);
  });

  it('recognises connection SQLSTATEs, pool and knex messages, and looks into causes and AggregateErrors', () => {
    const yes = [
      withCode('57P01'),
      withCode('57P02'),
      withCode('57P03'),
      withCode('08006'),
      withCode('08001'),
      withCode('53300'),
      withCode('ECONNRESET'),
      withCode('ETIMEDOUT'),
      withCode('EAI_AGAIN'),
      new Error('Connection terminated unexpectedly'),
      new Error('Connection terminated due to connection timeout'),
      new Error('timeout exceeded when trying to connect'),
      new Error('Client has encountered a connection error and is not queryable'),
      Object.assign(new Error('Knex: Timeout acquiring a connection. The pool is probably full.'), { name: 'KnexTimeoutError' }),
      new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]),
      new Error('wrapped', { cause: withCode('57P03') }),
    ];
    for (const err of yes)
      expect(isDatabaseUnavailable(err), `${(err as Error).message} ${(err as { code?: string }).code}`).to.equal(true);
  });

  it('leaves statement errors and bugs alone', () => {
    const no = [
      withCode('23505'),
      withCode('22001'),
      withCode('42P01'),
      withCode('40001'),
      withCode('57014'),
      new Error('boom'),
      new TypeError('x is undefined'),
      undefined,
      null,
      'ECONNREFUSED',
    ];
    for (const err of no) expect(isDatabaseUnavailable(err), String(err)).to.equal(false);
  });
});
