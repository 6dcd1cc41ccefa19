/**
 * The console benchmark's data, straight into PostgreSQL (seconds instead of thousands of HTTP
 * calls): AGENTS agents registered with one generator (10% INACTIVE, 3% with Kubernetes
 * unreachable, heartbeats spread over the last two minutes), STACKS stacks with OBJECTS
 * deployment objects in total (~1 KiB ConfigMaps, increasing sequence ids), every agent labelled
 * `fleet` and the first stack carrying that label (so its objects concern every agent), one
 * event per agent on that stack's newest object (10% FAILURE), and health reports on its five
 * newest objects (mostly healthy, some degraded or failing). The api must have migrated first.
 */
import { generatePak } from '@brokkr/pak';
import pg from 'pg';

export interface ConsoleSeed {
  generatorPak: string;
  /** The stack every agent is associated with, and its newest object. */
  bigStack: string;
  bigObject: string;
  agents: number;
  objects: number;
  seconds: number;
}

const manifest = `format(
  E'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: %s-v%s\\n  namespace: bench\\ndata:\\n  payload: "%s"\\n',
  s.name, v, repeat('x', 900))`;

const seedSql = (agents: number, stacks: number, perStack: number) => [
  `INSERT INTO agents (name, cluster_name, status, last_heartbeat, k8s_reachable, k8s_api_latency_ms, k8s_reported_at)
     SELECT 'console-agent-' || lpad(n::text, 4, '0'), 'cluster-' || lpad((n % 25)::text, 2, '0'),
            CASE WHEN n % 10 = 0 THEN 'INACTIVE' ELSE 'ACTIVE' END, now() - (n % 120) * interval '1 second',
            n % 33 <> 0, 5 + n % 40, now()
       FROM generate_series(1, ${agents}) n`,
  `INSERT INTO agent_generator_registrations (agent_id, generator_id) SELECT id, $1 FROM agents WHERE name LIKE 'console-agent-%'`,
  `INSERT INTO agent_labels (agent_id, label) SELECT id, 'fleet' FROM agents WHERE name LIKE 'console-agent-%'`,
  `INSERT INTO stacks (name, description, generator_id)
     SELECT 'console-stack-' || lpad(n::text, 3, '0'), 'benchmark stack ' || n, $1 FROM generate_series(1, ${stacks}) n`,
  `INSERT INTO stack_labels (stack_id, label) SELECT id, 'fleet' FROM stacks WHERE name = 'console-stack-001'`,
  `INSERT INTO deployment_objects (stack_id, yaml_content, yaml_checksum)
     SELECT s.id, y.yaml, encode(sha256(convert_to(y.yaml, 'UTF8')), 'hex')
       FROM generate_series(1, ${perStack}) v CROSS JOIN stacks s CROSS JOIN LATERAL (SELECT ${manifest} AS yaml) y
      WHERE s.generator_id = $1 ORDER BY v, s.name`,
];

const eventsAndHealth = [
  `INSERT INTO agent_events (agent_id, deployment_object_id, event_type, status, message)
     SELECT a.id, $1, 'DEPLOY', CASE WHEN row_number() OVER (ORDER BY a.name) % 10 = 0 THEN 'FAILURE' ELSE 'SUCCESS' END, 'benchmark'
       FROM agents a WHERE a.name LIKE 'console-agent-%'`,
  `INSERT INTO deployment_health (agent_id, deployment_object_id, status, checked_at)
     SELECT a.id, d.id, (ARRAY['healthy','healthy','healthy','healthy','healthy','healthy','degraded','failing'])[1 + (abs(hashtext(a.name || d.id::text)) % 8)], now()
       FROM agents a CROSS JOIN (SELECT id FROM deployment_objects WHERE stack_id = $1 ORDER BY sequence_id DESC LIMIT 5) d
      WHERE a.name LIKE 'console-agent-%'`,
];

export async function seedConsoleData(
  databaseUrl: string,
  options: { agents: number; stacks: number; objects: number },
): Promise<ConsoleSeed> {
  const started = performance.now();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    const generator = generatePak();
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO generators (name, description, pak_hash) VALUES ('console-bench', 'console benchmark', $1) RETURNING id`,
      [generator.hash],
    );
    const generatorId = rows[0]!.id;
    for (const sql of seedSql(options.agents, options.stacks, Math.ceil(options.objects / options.stacks))) {
      await client.query(sql, sql.includes('$1') ? [generatorId] : []);
    }
    const big = await client.query<{ stack: string; object: string }>(
      `SELECT s.id AS stack, d.id AS object FROM stacks s JOIN deployment_objects d ON d.stack_id = s.id
        WHERE s.name = 'console-stack-001' ORDER BY d.sequence_id DESC LIMIT 1`,
    );
    const { stack, object } = big.rows[0]!;
    await client.query(eventsAndHealth[0]!, [object]);
    await client.query(eventsAndHealth[1]!, [stack]);
    await client.query('COMMIT');
    await client.query('ANALYZE');
    const counts = await client.query<{ agents: number; objects: number }>(
      'SELECT (SELECT count(*) FROM agents)::int AS agents, (SELECT count(*) FROM deployment_objects)::int AS objects',
    );
    return {
      generatorPak: generator.pak,
      bigStack: stack,
      bigObject: object,
      ...counts.rows[0]!,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await client.end();
  }
}
