import { expect } from 'chai';
import { eventually, freePort, spawnService, useTestInfra, type RunningService } from '@brokkr/testkit';
import {
  createAgent,
  createGenerator,
  createStack,
  readStream,
  startTestApi,
  type ApiClient,
  type EventEnvelope,
  type TestApi,
} from './support/index.ts';

interface TestAgent {
  id: string;
  client: ApiClient;
}

/**
 * Approvals on rollout waves (docs/rollouts.md, "Approvals") through the API, with the real
 * maintenance service moving rollouts on: a wave that needs approvals waits until enough unexpired
 * approvals of what it will ship exist, never from the object's submitter; the approval that
 * completes the count releases it in its own transaction.
 */
describe('api rollout approvals', function () {
  this.timeout(120_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let maintenance: RunningService;
  let maintenanceUrl: string;
  let owner: { id: string; client: ApiClient };
  let alice: { id: string; client: ApiClient };
  let bob: { id: string; client: ApiClient };
  let mallory: { id: string; client: ApiClient };
  let canary: TestAgent;
  let prod: TestAgent[];

  /** Canary first, then production once two of alice, bob and an admin approved it. */
  const policy = () => ({
    waves: [
      { name: 'canary', selector: { labels: ['canary'] }, soak_seconds: 0 },
      { name: 'prod', percent: 100, soak_seconds: 0, required_approvals: 2, approvers: [alice.id, bob.id], approval_ttl_seconds: 600 },
    ],
  });

  async function generator() {
    const g = await createGenerator(api.admin);
    return { id: g.generator.id, client: g.client };
  }

  async function agent(labels: string[] = []): Promise<TestAgent> {
    const { agent, client } = await createAgent(api.admin, { generator_ids: [owner.id] });
    expect((await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
    for (const label of labels)
      expect((await api.admin.post(`/agents/${agent.id}/labels`, { agent_id: agent.id, label })).status).to.equal(201);
    return { id: agent.id, client };
  }

  async function stackWithPolicy(): Promise<string> {
    const stack = await createStack(owner.client, { generator_id: owner.id });
    for (const a of [canary, ...prod]) {
      const res = await api.admin.post(`/agents/${a.id}/targets`, { agent_id: a.id, stack_id: stack.id });
      expect(res.status, res.text).to.equal(201);
    }
    return stack.id;
  }

  async function publish(stackId: string, version: string, as: ApiClient = owner.client): Promise<string> {
    const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  version: "${version}"\n`;
    const res = await as.post(`/stacks/${stackId}/deployment-objects`, { yaml_content: yaml });
    expect(res.status, res.text).to.equal(201);
    return res.body.id as string;
  }

  async function served(a: TestAgent, stackId: string): Promise<string[]> {
    const res = await a.client.get(`/agents/${a.id}/target-state`, { query: { mode: 'full' } });
    expect(res.status, res.text).to.equal(200);
    return (res.body as { id: string; stack_id: string }[]).filter((o) => o.stack_id === stackId).map((o) => o.id);
  }

  async function reportApplied(a: TestAgent, objectId: string): Promise<void> {
    const event = { agent_id: a.id, deployment_object_id: objectId, event_type: 'DEPLOY', status: 'SUCCESS', message: 'ok' };
    expect((await a.client.post(`/agents/${a.id}/events`, event)).status).to.equal(201);
    const report = { deployment_objects: [{ id: objectId, status: 'healthy', checked_at: new Date().toISOString() }] };
    expect((await a.client.patch(`/agents/${a.id}/health-status`, report)).status).to.equal(200);
  }

  async function latestRollout(stackId: string) {
    const res = await owner.client.get(`/stacks/${stackId}/rollouts`);
    expect(res.status, res.text).to.equal(200);
    return res.body[0];
  }

  /** Completed ticks of maintenance's rollouts task. */
  async function rolloutTicks(): Promise<number> {
    const text = await (await fetch(`${maintenanceUrl}/metrics`)).text();
    const line = text
      .split('\n')
      .find((l) => l.startsWith('brokkr_maintenance_runs_total{') && l.includes('task="rollouts"') && l.includes('outcome="ok"'));
    return line ? Number(line.split(' ').pop()) : 0;
  }

  /** Lets the rollouts task run twice more, so that "still pending" is not merely "not looked at yet". */
  async function twoMoreTicks(): Promise<void> {
    const from = await rolloutTicks();
    await eventually(async () => (await rolloutTicks()) >= from + 2, { what: 'two more rollouts ticks' });
  }

  /** v1 everywhere, the policy, then v2: its canary applied, the rollout waiting at the prod wave for approvals. */
  async function waitingForApprovals(): Promise<{ stackId: string; v1: string; v2: string; rolloutId: string }> {
    const stackId = await stackWithPolicy();
    const v1 = await publish(stackId, '1');
    expect((await owner.client.put(`/stacks/${stackId}/rollout-policy`, policy())).status).to.equal(200);
    const v2 = await publish(stackId, '2');
    await eventually(async () => (await served(canary, stackId)).includes(v2), { what: 'the canary to be served v2' });
    await reportApplied(canary, v2);
    const rollout = await eventually(
      async () => {
        const r = await latestRollout(stackId);
        return r.waves[1].awaiting_approval ? r : undefined;
      },
      { what: 'the rollout to wait at the prod wave' },
    );
    return { stackId, v1, v2, rolloutId: rollout.id as string };
  }

  const approve = (client: ApiClient, rolloutId: string, body?: Record<string, unknown>) =>
    client.post(`/rollouts/${rolloutId}/waves/1/approvals`, body);

  before(async () => {
    api = await startTestApi(infra);
    const port = await freePort();
    maintenanceUrl = `http://127.0.0.1:${port}`;
    maintenance = await spawnService({
      service: 'maintenance',
      env: {
        BROKKR__DATABASE__URL: infra.db.url,
        BROKKR__NATS__URL: infra.nats.url,
        BROKKR__HEALTH__PORT: String(port),
        BROKKR__MAINTENANCE__ROLLOUT_INTERVAL_SECONDS: '1',
      },
      readyUrl: `http://127.0.0.1:${port}/readyz`,
    });
    owner = await generator();
    alice = await generator();
    bob = await generator();
    mallory = await generator();
    canary = await agent(['canary']);
    prod = [await agent(), await agent()];
  });

  after(async () => {
    await maintenance?.stop();
    await api?.stop();
  });

  it('refuses a policy asking for more approvals than its approvers and an admin can give, or naming no generator (422)', async () => {
    const stackId = await stackWithPolicy();
    const bad = { waves: [{ name: 'prod', percent: 100, required_approvals: 3, approvers: [alice.id] }] };
    const res = await owner.client.put(`/stacks/${stackId}/rollout-policy`, bad);
    expect(res.status, res.text).to.equal(422);
    expect(res.body.code).to.equal('invalid_request_body');
    const stranger = '00000000-0000-4000-8000-000000000001';
    const unknown = { waves: [{ name: 'prod', percent: 100, required_approvals: 1, approvers: [alice.id, stranger] }] };
    const refused = await owner.client.put(`/stacks/${stackId}/rollout-policy`, unknown);
    expect(refused.status, refused.text).to.equal(422);
    expect(refused.body).to.deep.include({ code: 'unknown_approver', details: { approvers: [stranger] } });
  });

  it('with two approvals required: the submitter is refused (403), one approval leaves the wave pending, the second starts it', async () => {
    const { stackId, v1, v2, rolloutId } = await waitingForApprovals();
    for (const a of prod) expect(await served(a, stackId), 'held before any approval').to.deep.equal([v1]);

    const events = await eventually(
      async () => {
        const all = await readStream<EventEnvelope>(api.natsUrl, 'BROKKR_EVENTS');
        const mine = all.map((m) => m.data).filter((e) => e.event_type === 'approval.requested' && e.data.rollout_id === rolloutId);
        return mine.length ? mine : undefined;
      },
      { what: 'approval.requested' },
    );
    expect(events).to.have.length(1);
    expect(events[0]!.data).to.include({
      stack_id: stackId,
      deployment_object_id: v2,
      wave: 1,
      name: 'prod',
      required_approvals: 2,
      approvals: 0,
    });
    expect(events[0]!.data.approvers).to.have.members([alice.id, bob.id]);
    expect(events[0]!.data.digest).to.match(/^sha256:[0-9a-f]{64}$/);

    const bySubmitter = await approve(owner.client, rolloutId);
    expect(bySubmitter.status, bySubmitter.text).to.equal(403);
    expect(bySubmitter.body.code).to.equal('approval_by_submitter');

    const first = await approve(alice.client, rolloutId, { comment: 'looks right' });
    expect(first.status, first.text).to.equal(201);
    expect(first.body).to.include({
      wave: 1,
      name: 'prod',
      required_approvals: 2,
      approvals_counted: 1,
      released: false,
      awaiting_approval: true,
    });
    expect(first.body.digest).to.equal(events[0]!.data.digest);
    expect(first.body.approvals[0]).to.include({ approver_type: 'generator', approver_id: alice.id, comment: 'looks right', counts: true });

    await twoMoreTicks();
    for (const a of prod) expect(await served(a, stackId), 'held after one approval').to.deep.equal([v1]);
    expect((await latestRollout(stackId)).released_wave).to.equal(0);
    // The one answer to "why is v2 not on this agent": the approvals its wave waits for; the canary has it.
    const why = await owner.client.get(`/stacks/${stackId}/agents/${prod[0]!.id}/status`);
    expect(why.body).to.deep.include({ state: 'waiting', reason: 'approval', rollout_id: rolloutId, wave: 1, approval_wave: 1 });
    expect((await owner.client.get(`/stacks/${stackId}/agents/${canary.id}/status`)).body).to.deep.include({ state: 'served' });

    const second = await approve(bob.client, rolloutId, { digest: first.body.digest });
    expect(second.status, second.text).to.equal(201);
    // Released by the approval itself, in its transaction: not left to the next rollouts tick.
    expect(second.body).to.include({ approvals_counted: 2, released: true, awaiting_approval: false });
    for (const a of prod) await eventually(async () => (await served(a, stackId)).includes(v2), { what: 'the prod wave to be served v2' });
    expect((await owner.client.get(`/stacks/${stackId}/agents/${prod[0]!.id}/status`)).body).to.deep.include({ state: 'served' });

    const listed = await owner.client.get(`/rollouts/${rolloutId}/waves/1/approvals`);
    expect(listed.status, listed.text).to.equal(200);
    expect(listed.body.approvals.map((a: { approver_id: string }) => a.approver_id)).to.have.members([alice.id, bob.id]);
    for (const a of listed.body.approvals) {
      expect(a.digest).to.equal(first.body.digest);
      expect(Date.parse(a.expires_at) - Date.parse(a.created_at)).to.equal(600_000);
    }
    const rollout = await latestRollout(stackId);
    expect(rollout.waves[1]).to.include({ released: true, required_approvals: 2, approvals: 2, awaiting_approval: false });

    const late = await approve(alice.client, rolloutId);
    expect(late.status).to.equal(409);
    expect(late.body.code).to.be.oneOf(['rollout_wave_released', 'rollout_state_conflict']);
  });

  it('refuses an identity the wave does not list (403 approver_not_allowed) and an agent; lets an admin approve', async () => {
    const { stackId, rolloutId } = await waitingForApprovals();
    // What each may approve: alice and an admin this wave; the owner (its submitter) and mallory nothing of it.
    const asked = await alice.client.get('/approval-requests');
    expect(asked.status, asked.text).to.equal(200);
    const mine = (asked.body as { rollout_id: string }[]).filter((r) => r.rollout_id === rolloutId);
    expect(mine).to.have.length(1);
    expect(mine[0]).to.include({
      stack_id: stackId,
      wave: 1,
      name: 'prod',
      required_approvals: 2,
      approvals_counted: 0,
      awaiting_approval: true,
    });
    expect((await api.admin.get('/approval-requests')).body.map((r: { rollout_id: string }) => r.rollout_id)).to.include(rolloutId);
    for (const c of [owner.client, mallory.client])
      expect((await c.get('/approval-requests')).body.map((r: { rollout_id: string }) => r.rollout_id)).to.not.include(rolloutId);
    expect((await prod[0]!.client.get('/approval-requests')).status).to.equal(403);

    const byStranger = await approve(mallory.client, rolloutId);
    expect(byStranger.status, byStranger.text).to.equal(403);
    expect(byStranger.body.code).to.equal('approver_not_allowed');
    const byAgent = await approve(prod[0]!.client, rolloutId);
    expect(byAgent.status, byAgent.text).to.equal(403);
    expect(byAgent.body.code).to.equal('approver_not_allowed');
    const strangerReads = await mallory.client.get(`/rollouts/${rolloutId}/waves/1/approvals`);
    expect(strangerReads.status).to.equal(403);

    const byAdmin = await approve(api.admin, rolloutId);
    expect(byAdmin.status, byAdmin.text).to.equal(201);
    expect(byAdmin.body.approvals[0]).to.include({ approver_type: 'admin', approver_id: null });
    expect(byAdmin.body.approvals_counted).to.equal(1);
    // Approving again renews the approval; it does not count twice.
    const again = await approve(api.admin, rolloutId);
    expect(again.body).to.include({ approvals_counted: 1, released: false });
    // The approvers see what they are asked to approve.
    expect((await alice.client.get(`/rollouts/${rolloutId}/waves/1/approvals`)).status).to.equal(200);
  });

  it('an admin that submitted the object may not approve it', async () => {
    const stackId = await stackWithPolicy();
    await publish(stackId, '1');
    expect((await owner.client.put(`/stacks/${stackId}/rollout-policy`, policy())).status).to.equal(200);
    await publish(stackId, '2', api.admin);
    const rollout = await eventually(async () => latestRollout(stackId), { what: 'the rollout' });
    const byAdmin = await approve(api.admin, rollout.id);
    expect(byAdmin.status, byAdmin.text).to.equal(403);
    expect(byAdmin.body.code).to.equal('approval_by_submitter');
    // The owner did not submit this one; still, the wave does not list it.
    expect((await approve(owner.client, rollout.id)).body.code).to.equal('approver_not_allowed');
    expect((await approve(alice.client, rollout.id)).status).to.equal(201);
  });

  it('a new deployment object starts the count again; so does a changed override layer; a stale digest is refused (409)', async () => {
    const { stackId, v1, rolloutId } = await waitingForApprovals();
    const first = await approve(alice.client, rolloutId);
    expect(first.body.approvals_counted).to.equal(1);

    // The stack's layers change: the wave would ship something else, the approval stops counting.
    await api.sql.query('UPDATE stacks SET layers_revision = layers_revision + 1 WHERE id = $1', [stackId]);
    const afterLayer = await alice.client.get(`/rollouts/${rolloutId}/waves/1/approvals`);
    expect(afterLayer.body.digest).to.not.equal(first.body.digest);
    expect(afterLayer.body.approvals_counted).to.equal(0);
    expect(afterLayer.body.approvals[0]).to.include({ digest: first.body.digest, counts: false });
    const stale = await approve(bob.client, rolloutId, { digest: first.body.digest });
    expect(stale.status, stale.text).to.equal(409);
    expect(stale.body).to.deep.include({ code: 'approval_digest_mismatch', details: { digest: afterLayer.body.digest } });
    expect((await approve(bob.client, rolloutId)).body).to.include({ approvals_counted: 1, released: false });

    // A new object: a new rollout, whose count starts at zero.
    const v3 = await publish(stackId, '3');
    await eventually(async () => (await served(canary, stackId)).includes(v3), { what: 'the canary to be served v3' });
    await reportApplied(canary, v3);
    const next = await eventually(
      async () => {
        const r = await latestRollout(stackId);
        return r.deployment_object_id === v3 && r.waves[1].awaiting_approval ? r : undefined;
      },
      { what: 'the rollout of v3 to wait at the prod wave' },
    );
    expect(next.id).to.not.equal(rolloutId);
    expect(next.waves[1]).to.include({ approvals: 0, required_approvals: 2 });
    const one = await approve(alice.client, next.id);
    expect(one.body).to.include({ approvals_counted: 1, released: false });
    for (const a of prod) expect(await served(a, stackId)).to.deep.equal([v1]);
  });

  it('an expired approval does not count', async () => {
    const { stackId, v1, v2, rolloutId } = await waitingForApprovals();
    expect((await approve(alice.client, rolloutId)).body.approvals_counted).to.equal(1);
    // approval_ttl_seconds is at least a minute: let this one run out without waiting for it.
    await api.sql.query(`UPDATE rollout_approvals SET expires_at = now() - interval '1 second' WHERE rollout_id = $1`, [rolloutId]);
    const listed = await bob.client.get(`/rollouts/${rolloutId}/waves/1/approvals`);
    expect(listed.body.approvals_counted).to.equal(0);
    expect(listed.body.approvals[0]).to.include({ approver_id: alice.id, counts: false });

    const second = await approve(bob.client, rolloutId);
    expect(second.body).to.include({ approvals_counted: 1, released: false });
    await twoMoreTicks();
    for (const a of prod) expect(await served(a, stackId)).to.deep.equal([v1]);

    // Alice approving again (a fresh expiry) completes the count.
    expect((await approve(alice.client, rolloutId)).body).to.include({ approvals_counted: 2, released: true });
    for (const a of prod) await eventually(async () => (await served(a, stackId)).includes(v2), { what: 'the prod wave to be served v2' });
  });

  it('a first wave that needs approvals holds every agent on the previous object until it has them', async () => {
    const stackId = await stackWithPolicy();
    const v1 = await publish(stackId, '1');
    const gated = { waves: [{ name: 'all', percent: 100, soak_seconds: 0, required_approvals: 1, approvers: [alice.id] }] };
    expect((await owner.client.put(`/stacks/${stackId}/rollout-policy`, gated)).status).to.equal(200);
    const v2 = await publish(stackId, '2');
    const rollout = await eventually(
      async () => {
        const r = await latestRollout(stackId);
        return r.waves[0].awaiting_approval ? r : undefined;
      },
      { what: 'the rollout to wait at its first wave' },
    );
    expect(rollout).to.include({ status: 'progressing', released_wave: -1, approval_wave: 0 });
    for (const a of [canary, ...prod]) expect(await served(a, stackId)).to.deep.equal([v1]);
    const res = await alice.client.post(`/rollouts/${rollout.id}/waves/0/approvals`);
    expect(res.status, res.text).to.equal(201);
    expect(res.body.released).to.equal(true);
    for (const a of [canary, ...prod]) await eventually(async () => (await served(a, stackId)).includes(v2), { what: 'v2 everywhere' });
  });

  it("the stack's owner may not promote past a wave that lacks its approvals (403 approval_required); an admin may", async () => {
    const { stackId, v2, rolloutId } = await waitingForApprovals();
    const byOwner = await owner.client.post(`/rollouts/${rolloutId}/promote`);
    expect(byOwner.status, byOwner.text).to.equal(403);
    expect(byOwner.body).to.deep.include({ code: 'approval_required', details: { waves: [1] } });
    expect((await latestRollout(stackId)).status).to.equal('progressing');
    const byAdmin = await api.admin.post(`/rollouts/${rolloutId}/promote`);
    expect(byAdmin.status, byAdmin.text).to.equal(200);
    for (const a of prod) await eventually(async () => (await served(a, stackId)).includes(v2), { what: 'v2 everywhere' });
  });

  it('answers 404 for a wave the policy does not have and 409 for a wave that needs no approval', async () => {
    const { rolloutId } = await waitingForApprovals();
    const missing = await alice.client.post(`/rollouts/${rolloutId}/waves/5/approvals`);
    expect(missing.status).to.equal(404);
    expect(missing.body.code).to.equal('rollout_wave_not_found');
    const notNeeded = await alice.client.post(`/rollouts/${rolloutId}/waves/0/approvals`);
    expect(notNeeded.status).to.equal(409);
    expect(notNeeded.body.code).to.equal('approval_not_required');
  });
});
