/**
 * Diagnostic for the target-state query (bench:api's closing diagnosis): the api sends it as an unnamed
 * statement, so PostgreSQL parses and plans it on every request; a named (prepared) statement is
 * planned once per connection. One connection, sequential, no other load from us: the difference
 * is the planning cost each target-state request pays in database CPU.
 */
import pg from 'pg';
import { TARGET_STATE_SQL } from '../services/api/src/delivery/target-state/sql/target-state.ts';

const ROUNDS = 300;

async function averageMs(run: (i: number) => Promise<unknown>): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < ROUNDS; i++) await run(i);
  return (performance.now() - started) / ROUNDS;
}

export async function probeTargetStateSql(databaseUrl: string, agentIds: string[]): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const agent = (i: number) => agentIds[i % agentIds.length]!;
    const unnamed = (i: number) => client.query(TARGET_STATE_SQL, [agent(i), false]);
    const prepared = (i: number) => client.query({ name: 'bench-target-state', text: TARGET_STATE_SQL, values: [agent(i), false] });
    await averageMs(unnamed);
    await averageMs(prepared);
    const plain = await averageMs(unnamed);
    const named = await averageMs(prepared);
    const trivial = await averageMs(() => client.query('SELECT 1'));
    return (
      `target-state SQL, one connection, sequential: ${plain.toFixed(2)} ms unnamed (parsed and planned each time), ` +
      `${named.toFixed(2)} ms as a named prepared statement; SELECT 1 round trip ${trivial.toFixed(2)} ms`
    );
  } finally {
    await client.end();
  }
}
