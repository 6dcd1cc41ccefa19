import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Msg } from '@brokkr/bus';
import { eventually, useTestInfra } from '@brokkr/testkit';
import { stackExpiryTask, type Maintenance } from '../src/index.ts';
import { createReplica, manual, type Replica } from './support.ts';

interface EventRow {
  event_type: string;
  payload: { id: string; event_type: string; timestamp: string; data: Record<string, unknown> };
  published_at: Date | null;
}

/**
 * Expiring stacks: `stack.expiring` once within the warning window, then at expires_at the stack
 * is deleted as DELETE /stacks/{id} does (deletion marker), with `stack.expired` and
 * `stack.deleted`, exactly once across replicas.
 */
describe('maintenance stack expiry', () => {
  const infra = useTestInfra({ nats: true });
  let replicas: Replica[];
  let instances: Maintenance[];

  before(async () => {
    replicas = [await createReplica(infra.db.url, infra.nats.url), await createReplica(infra.db.url, infra.nats.url)];
    instances = await Promise.all(replicas.map((r) => manual(r, { BROKKR__MAINTENANCE__STACK_EXPIRY_WARNING_SECONDS: '600' })));
  });
  after(async () => {
    for (const m of instances ?? []) await m.stop();
    for (const r of replicas ?? []) await r.close();
  });

  const sql = (text: string, values?: unknown[]) => replicas[0]!.db.query(text, values);

  async function stack(expiresIn: string | null): Promise<string> {
    const suffix = randomUUID().slice(0, 8);
    const gen = await sql('INSERT INTO generators (name) VALUES ($1) RETURNING id', [`g-${suffix}`]);
    const { rows } = await sql(`INSERT INTO stacks (name, generator_id, expires_at) VALUES ($1, $2, now() + $3::interval) RETURNING id`, [
      `preview-${suffix}`,
      gen.rows[0]!.id,
      expiresIn,
    ]);
    const id = rows[0]!.id as string;
    await sql(`INSERT INTO deployment_objects (stack_id, yaml_content, yaml_checksum) VALUES ($1, 'kind: ConfigMap', 'x')`, [id]);
    return id;
  }

  async function eventsOf(stackId: string): Promise<EventRow[]> {
    const { rows } = await sql(
      `SELECT event_type, payload, published_at FROM outbox WHERE payload->'data'->>'stack_id' = $1 ORDER BY created_at, event_type DESC`,
      [stackId],
    );
    return rows as EventRow[];
  }

  const tickAll = () => Promise.all(instances.map((m) => m.tick(stackExpiryTask)));

  it('announces a stack expiring within the warning window once, and leaves it live', async () => {
    const soon = await stack('5 minutes');
    const later = await stack('2 hours');
    await tickAll();
    await tickAll();
    const events = await eventsOf(soon);
    expect(events.map((e) => e.event_type)).to.deep.equal(['stack.expiring']);
    expect(events[0]!.payload.data).to.include({ stack_id: soon });
    expect(events[0]!.payload.data.expires_at).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(events[0]!.published_at, 'published at once, not left to the relay').to.not.equal(null);
    expect(await eventsOf(later)).to.deep.equal([]);
    const { rows } = await sql('SELECT deleted_at FROM stacks WHERE id = $1', [soon]);
    expect(rows[0]!.deleted_at).to.equal(null);
  });

  it('deletes an expired stack exactly once across two replicas: deletion marker, events in order, one audit entry', async () => {
    const ids = await Promise.all([stack('-1 second'), stack('-1 second'), stack('-1 second')]);
    await tickAll();
    await tickAll();
    for (const id of ids) {
      const { rows } = await sql('SELECT deleted_at FROM stacks WHERE id = $1', [id]);
      expect(rows[0]!.deleted_at, 'soft-deleted').to.not.equal(null);
      const markers = await sql('SELECT count(*)::int AS n FROM deployment_objects WHERE stack_id = $1 AND is_deletion_marker', [id]);
      expect(markers.rows[0]!.n, 'one deletion marker').to.equal(1);
      const types = (await eventsOf(id)).map((e) => e.event_type).sort();
      expect(types).to.deep.equal(['stack.deleted', 'stack.expired', 'stack.expiring']);
      const audit = await sql("SELECT actor_type FROM audit_logs WHERE action = 'stack.expired' AND resource_id = $1", [id]);
      expect(audit.rows).to.deep.equal([{ actor_type: 'system' }]);
    }
  });

  it('does not announce a stack twice when it expires, and never touches stacks without an expiry', async () => {
    const announced = await stack('1 minute');
    const forever = await stack(null);
    await tickAll();
    await sql("UPDATE stacks SET expires_at = now() - interval '1 second' WHERE id = $1", [announced]);
    await tickAll();
    expect((await eventsOf(announced)).map((e) => e.event_type).sort()).to.deep.equal(['stack.deleted', 'stack.expired', 'stack.expiring']);
    const { rows } = await sql('SELECT deleted_at FROM stacks WHERE id = $1', [forever]);
    expect(rows[0]!.deleted_at).to.equal(null);
    expect(await eventsOf(forever)).to.deep.equal([]);
  });

  async function agent(stackId?: string): Promise<string> {
    const { rows } = await sql("INSERT INTO agents (name, cluster_name, status) VALUES ($1, 'c', 'ACTIVE') RETURNING id", [
      `a-${randomUUID().slice(0, 8)}`,
    ]);
    const id = rows[0]!.id as string;
    if (stackId) await sql('INSERT INTO agent_targets (agent_id, stack_id) VALUES ($1, $2)', [id, stackId]);
    return id;
  }

  it('wakes the agents of an expired stack (they serve its deletion marker now), and only them', async () => {
    const expired = await stack('-1 second');
    const expiring = await stack('5 minutes');
    const target = await agent(expired);
    const notYet = await agent(expiring);
    const bystander = await agent();
    const woken: string[] = [];
    const nc = replicas[0]!.bus.nc;
    const subscription = nc.subscribe('brokkr.notify.agent.*', {
      callback: (_err, msg: Msg) => void woken.push((msg.json() as { agent_id: string }).agent_id),
    });
    await nc.flush();
    await instances[0]!.tick(stackExpiryTask);
    await eventually(() => woken.includes(target), { what: "the expired stack's agent woken" });
    await nc.flush();
    subscription.unsubscribe();
    expect(woken).to.not.include(notYet);
    expect(woken).to.not.include(bystander);
  });

  it('publishes the events on the stream with the envelope the api uses', async () => {
    const id = await stack('-1 second');
    await instances[0]!.tick(stackExpiryTask);
    const msg = await replicas[0]!.bus.jsm.streams.getMessage('BROKKR_EVENTS', { last_by_subj: 'brokkr.events.stack.expired' });
    const envelope = msg!.json<{ id: string; event_type: string; timestamp: string; data: Record<string, unknown> }>();
    expect(Object.keys(envelope)).to.deep.equal(['id', 'event_type', 'timestamp', 'data']);
    expect(envelope.event_type).to.equal('stack.expired');
    expect(envelope.data).to.include({ stack_id: id });
    expect(Object.keys(envelope.data)).to.have.members(['stack_id', 'name', 'expires_at', 'deleted_at']);
  });
});
