import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import {
  createAgent,
  createGenerator,
  createStack,
  startTestApi,
  type ApiClient,
  type ApiResponse,
  type TestApi,
} from './support/index.ts';

/**
 * An agent reports events and health only on deployment objects it is, or was, served
 * (docs/security.md, "Agents report only on what they are served"): anything else is answered as
 * an unknown object is (422 foreign_key_violation) and leaves no row, no event and no outbox row, so
 * no `deployment.failed` reaches another tenant's webhooks or console.
 */
describe('api agent reports: only on objects the agent is served', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;

  before(async () => {
    api = await startTestApi(infra);
  });
  after(() => api?.stop());

  /** A generator, an agent registered with it and targeted at one of its stacks, and an object on that stack. */
  async function tenant() {
    const gen = await createGenerator(api.admin);
    const { agent, client } = await createAgent(api.admin, { generator_ids: [gen.generator.id] });
    const stack = await createStack(gen.client, { generator_id: gen.generator.id });
    expect((await gen.client.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stack.id })).status).to.equal(201);
    return { gen: gen.client, agentId: agent.id, client, stackId: stack.id, objectId: await newObject(gen.client, stack.id) };
  }

  async function newObject(client: ApiClient, stackId: string): Promise<string> {
    const res = await client.post<{ id: string }>(`/stacks/${stackId}/deployment-objects`, { yaml_content: 'kind: ConfigMap\n' });
    expect(res.status, res.text).to.equal(201);
    return res.body.id;
  }

  /** `outcome`: the status and event type, FAILURE of a DEPLOY unless given. */
  const postEvent = (client: ApiClient, agentId: string, objectId: string, outcome: { status?: string; eventType?: string } = {}) =>
    client.post(`/agents/${agentId}/events`, {
      agent_id: agentId,
      deployment_object_id: objectId,
      event_type: outcome.eventType ?? 'DEPLOY',
      status: outcome.status ?? 'FAILURE',
      message: 'reported',
    });

  const postHealth = (client: ApiClient, agentId: string, objectIds: string[]) =>
    client.patch(`/agents/${agentId}/health-status`, {
      deployment_objects: objectIds.map((id) => ({ id, status: 'failing', checked_at: '2026-01-01T00:00:00Z' })),
    });

  const DELETED = { status: 'SUCCESS', eventType: 'DELETED' };

  function expectUnknownObject(res: ApiResponse): void {
    expect(res.status, res.text).to.equal(422);
    expect(res.body.code).to.equal('foreign_key_violation');
  }

  /** What an object has: agent events, health rows, and the outbox rows of their webhook events. */
  async function storedFor(objectId: string): Promise<{ events: number; health: number; outbox: number }> {
    const { rows } = await api.sql.query<{ events: number; health: number; outbox: number }>(
      `SELECT (SELECT count(*)::int FROM agent_events WHERE deployment_object_id = $1) AS events,
              (SELECT count(*)::int FROM deployment_health WHERE deployment_object_id = $1) AS health,
              (SELECT count(*)::int FROM outbox WHERE event_type IN ('deployment.applied', 'deployment.failed')
                 AND payload->'data'->>'deployment_object_id' = $1::text) AS outbox`,
      [objectId],
    );
    return rows[0]!;
  }

  it("refuses agent A's FAILURE event and health report for an object of a stack only agent B is served: nothing stored, no deployment.failed; A's own object still works", async () => {
    const a = await tenant();
    const b = await tenant();

    expectUnknownObject(await postEvent(a.client, a.agentId, b.objectId));
    expectUnknownObject(await postHealth(a.client, a.agentId, [b.objectId]));
    // A batch with one object not served stores nothing, its own object included.
    expectUnknownObject(await postHealth(a.client, a.agentId, [a.objectId, b.objectId]));
    // An admin reporting for agent A is held to the same rule.
    expectUnknownObject(await postEvent(api.admin, a.agentId, b.objectId));
    expect(await storedFor(b.objectId)).to.deep.equal({ events: 0, health: 0, outbox: 0 });
    expect(await storedFor(a.objectId)).to.deep.equal({ events: 0, health: 0, outbox: 0 });

    expect((await postEvent(a.client, a.agentId, a.objectId)).status).to.equal(201);
    expect((await postHealth(a.client, a.agentId, [a.objectId])).status).to.equal(200);
    expect(await storedFor(a.objectId)).to.deep.equal({ events: 1, health: 1, outbox: 1 });
    // B reports on its own object as before.
    expect((await postEvent(b.client, b.agentId, b.objectId, { status: 'SUCCESS' })).status).to.equal(201);
    expect((await postHealth(b.client, b.agentId, [b.objectId])).status).to.equal(200);
    expect(await storedFor(b.objectId)).to.deep.equal({ events: 1, health: 1, outbox: 1 });
  });

  it('serves by label only with the registration: a label match on an unregistered generator’s stack is refused', async () => {
    const a = await tenant();
    const b = await tenant();
    expect((await a.gen.post(`/stacks/${a.stackId}/labels`, 'shared-label')).status).to.equal(201);
    const labelled = await newObject(a.gen, a.stackId);
    expect((await api.admin.post(`/agents/${b.agentId}/labels`, { agent_id: b.agentId, label: 'shared-label' })).status).to.equal(201);
    expectUnknownObject(await postEvent(b.client, b.agentId, labelled));
    expect(await storedFor(labelled)).to.deep.equal({ events: 0, health: 0, outbox: 0 });

    // Registered with A's generator, B is served the labelled stack and may report on it.
    expect((await api.admin.post(`/generators/${await generatorOf(a.stackId)}/register`, { agent_id: b.agentId })).status).to.equal(201);
    expect((await postEvent(b.client, b.agentId, labelled)).status).to.equal(201);
  });

  it("accepts a deleted stack's marker and the DELETED event of an object applied before its stack was untargeted; not a newer object", async () => {
    const a = await tenant();
    expect((await postEvent(a.client, a.agentId, a.objectId, { status: 'SUCCESS' })).status).to.equal(201);
    expect((await a.gen.delete(`/agents/${a.agentId}/targets/${a.stackId}`)).status).to.equal(204);
    expect((await postEvent(a.client, a.agentId, a.objectId, DELETED)).status).to.equal(201);
    const never = await newObject(a.gen, a.stackId);
    expectUnknownObject(await postEvent(a.client, a.agentId, never, DELETED));

    const d = await tenant();
    expect((await d.gen.delete(`/stacks/${d.stackId}`)).status).to.equal(204);
    const { rows } = await api.sql.query<{ id: string }>(
      'SELECT id FROM deployment_objects WHERE stack_id = $1 AND is_deletion_marker AND deleted_at IS NULL',
      [d.stackId],
    );
    expect(rows).to.have.length(1);
    expect((await postEvent(d.client, d.agentId, rows[0]!.id, DELETED)).status).to.equal(201);
  });

  async function generatorOf(stackId: string): Promise<string> {
    const { rows } = await api.sql.query<{ generator_id: string }>('SELECT generator_id FROM stacks WHERE id = $1', [stackId]);
    return rows[0]!.generator_id;
  }
});
