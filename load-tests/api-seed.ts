/**
 * Seeds the api benchmark's fleet straight with SQL (seconds instead of the ~25,000 HTTP calls the
 * same rows would take): AGENTS ACTIVE agents, each registered with one generator and associated
 * with 5 stacks of its own owned by that generator:
 *   s0, s1  label match       (stack label  = the agent's label),
 *   s2, s3  annotation match  (stack annotation bench-owner=<agent name> = the agent's annotation),
 *   s4      explicit target   (agent_targets row),
 * and 3 deployment objects per stack (a ~1 KiB ConfigMap each). The api process must have run the
 * migrations first. PAKs are minted here in Brokkr's format; only the SHA-256 of the long token
 * is stored, as the api does.
 */
import { randomUUID } from 'node:crypto';
import { generatePak } from '@brokkr/pak';
import pg from 'pg';

export interface BenchPak {
  pak: string;
  hash: string;
}

export interface SeededFleet {
  /** `object`: a deployment object of the agent's explicitly targeted stack (events and health reports name it). */
  agents: { id: string; pak: string; object: string }[];
  stacks: string[];
  generatorPak: string;
  objects: number;
  seconds: number;
}

export const STACKS_PER_AGENT = 5;
export const OBJECTS_PER_STACK = 3;

/** Brokkr-format PAKs, as the api mints them. */
export const mintPak: () => BenchPak = generatePak;

// ~1 KiB: a realistic small manifest, so target-state answers (5 objects) weigh ~6 KiB of JSON.
const objectYaml = (version: number) => `format(
  E'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: %s\\n  namespace: bench\\n  labels:\\n    app.kubernetes.io/managed-by: brokkr\\ndata:\\n  version: "%s"\\n  payload: "%s"\\n',
  s.name, ${version}, repeat('x', 800))`;

const SEED_SQL = [
  `INSERT INTO agent_labels (agent_id, label) SELECT id, 'lbl-' || name FROM agents WHERE cluster_name = 'bench'`,
  `INSERT INTO agent_annotations (agent_id, key, value) SELECT id, 'bench-owner', name FROM agents WHERE cluster_name = 'bench'`,
  `INSERT INTO agent_generator_registrations (agent_id, generator_id) SELECT id, $1 FROM agents WHERE cluster_name = 'bench'`,
  `INSERT INTO stacks (name, generator_id)
     SELECT a.name || '-s' || k, $1 FROM agents a, generate_series(0, ${STACKS_PER_AGENT - 1}) k WHERE a.cluster_name = 'bench'`,
  `INSERT INTO stack_labels (stack_id, label)
     SELECT s.id, 'lbl-' || a.name
       FROM agents a CROSS JOIN generate_series(0, 1) k JOIN stacks s ON s.name = a.name || '-s' || k
      WHERE a.cluster_name = 'bench'`,
  `INSERT INTO stack_annotations (stack_id, key, value)
     SELECT s.id, 'bench-owner', a.name
       FROM agents a CROSS JOIN generate_series(2, 3) k JOIN stacks s ON s.name = a.name || '-s' || k
      WHERE a.cluster_name = 'bench'`,
  `INSERT INTO agent_targets (agent_id, stack_id)
     SELECT a.id, s.id FROM agents a JOIN stacks s ON s.name = a.name || '-s4' WHERE a.cluster_name = 'bench'`,
  // One version at a time so each stack's objects get increasing sequence_ids, as real submissions would.
  ...Array.from({ length: OBJECTS_PER_STACK }, (_, i) => i + 1).map(
    (v) => `INSERT INTO deployment_objects (stack_id, yaml_content, yaml_checksum)
       SELECT s.id, y.yaml, encode(sha256(convert_to(y.yaml, 'UTF8')), 'hex')
         FROM stacks s CROSS JOIN LATERAL (SELECT ${objectYaml(v)} AS yaml) y
        WHERE s.generator_id = $1 ORDER BY s.name`,
  ),
];

async function insertFleet(
  client: pg.Client,
  count: number,
): Promise<{ generatorId: string; generatorPak: string; agents: { id: string; pak: string }[] }> {
  const generator = mintPak();
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO generators (name, description, pak_hash) VALUES ('bench-generator', 'api benchmark', $1) RETURNING id`,
    [generator.hash],
  );
  const agents = Array.from({ length: count }, () => ({ id: randomUUID(), ...mintPak() }));
  await client.query(
    `INSERT INTO agents (id, name, cluster_name, status, pak_hash)
       SELECT t.id, 'bench-agent-' || lpad(t.n::text, 4, '0'), 'bench', 'ACTIVE', t.hash
         FROM unnest($1::uuid[], $2::text[]) WITH ORDINALITY AS t(id, hash, n)`,
    [agents.map((a) => a.id), agents.map((a) => a.hash)],
  );
  return { generatorId: rows[0]!.id, generatorPak: generator.pak, agents: agents.map(({ id, pak }) => ({ id, pak })) };
}

export async function seedFleet(databaseUrl: string, count: number): Promise<SeededFleet> {
  const started = performance.now();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    const fleet = await insertFleet(client, count);
    for (const sql of SEED_SQL) await client.query(sql, sql.includes('$1') ? [fleet.generatorId] : []);
    await client.query('COMMIT');
    // VACUUM too: otherwise the insert-triggered autovacuum of 15,000 fresh rows runs in the first
    // measured step and is counted as that side's PostgreSQL CPU.
    await client.query('VACUUM (ANALYZE)');
    const stacks = await client.query<{ id: string }>('SELECT id FROM stacks WHERE generator_id = $1 ORDER BY name', [fleet.generatorId]);
    const objects = await client.query<{ n: string }>('SELECT count(*) AS n FROM deployment_objects');
    const targeted = await client.query<{ agent_id: string; object_id: string }>(
      `SELECT DISTINCT ON (t.agent_id) t.agent_id, d.id AS object_id
         FROM agent_targets t JOIN deployment_objects d ON d.stack_id = t.stack_id
        ORDER BY t.agent_id, d.sequence_id DESC`,
    );
    const objectOf = new Map(targeted.rows.map((r) => [r.agent_id, r.object_id]));
    return {
      agents: fleet.agents.map((a) => ({ ...a, object: objectOf.get(a.id)! })),
      stacks: stacks.rows.map((r) => r.id),
      generatorPak: fleet.generatorPak,
      objects: Number(objects.rows[0]!.n),
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await client.end();
  }
}
