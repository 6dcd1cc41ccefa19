// The least a Node process can do for `POST /api/v1/agents/{id}/events` (bench:floor): no
// framework, no authentication, no validation. FLOOR_MODE says how much of our write path it
// keeps: `http` (read the JSON body, answer 201 with a JSON row), `pg` (+ one prepared INSERT …
// RETURNING on a pool, as our one-statement writes are), `nats` (+ a JetStream publish whose ack
// is awaited in the background, as the outbox publisher does). Plain JavaScript on purpose:
// nothing is loaded that the measured path does not use.
import { Buffer } from 'node:buffer';
import http from 'node:http';
import process from 'node:process';
import pg from 'pg';
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';

const mode = process.env.FLOOR_MODE ?? 'http';
const pool = mode === 'http' ? undefined : new pg.Pool({ connectionString: process.env.FLOOR_DATABASE_URL, max: 20 });
let js;
if (mode === 'nats') {
  const nc = await connect({ servers: process.env.FLOOR_NATS_URL });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'FLOOR', subjects: ['floor.>'], storage: 'file' });
  js = jetstream(nc);
}
await pool?.query(
  'CREATE TABLE IF NOT EXISTS floor_events (id bigserial PRIMARY KEY, agent_id text, deployment_object_id text, event_type text, status text, message text, created_at timestamptz DEFAULT now())',
);

const insert = {
  name: 'floor_insert',
  text: 'INSERT INTO floor_events (agent_id, deployment_object_id, event_type, status, message) VALUES ($1, $2, $3, $4, $5) RETURNING *',
};

async function answer(body) {
  if (!pool) return { id: 1, ...body, created_at: new Date().toISOString() };
  const { rows } = await pool.query({
    ...insert,
    values: [body.agent_id, body.deployment_object_id, body.event_type, body.status, body.message],
  });
  const row = rows[0];
  if (js) js.publish('floor.event', JSON.stringify({ event_type: 'deployment.applied', data: row })).catch(() => undefined);
  return row;
}

http
  .createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      answer(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}')).then(
        (row) => {
          const json = JSON.stringify(row);
          res.writeHead(201, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json) });
          res.end(json);
        },
        () => {
          res.writeHead(500);
          res.end();
        },
      );
    });
  })
  .listen(Number(process.env.FLOOR_PORT), '127.0.0.1', () => process.stdout.write('listening\n'));
