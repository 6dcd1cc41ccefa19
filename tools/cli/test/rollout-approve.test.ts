import fs from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import { eventually, useTestInfra, type RunningService, type TestClient } from '@brokkr/testkit';
import {
  buildCli,
  configMap,
  createActiveAgent,
  createGenerator,
  manifestDir,
  runCli,
  startHub,
  startMaintenance,
  uniqueName,
  type TestHub,
} from './support.ts';

/**
 * `brokkr rollout approve` against a started hub and maintenance: the approvers of a wave are
 * generators that do not own the stack, so the command finds the wave through the hub's
 * /approval-requests; the submitter finds nothing to approve.
 */
describe('brokkr rollout approve', function () {
  this.timeout(120_000);
  const infra = useTestInfra({ nats: true });
  let hub: TestHub;
  let maintenance: RunningService;
  let owner: { id: string; name: string; pak: string };
  let alice: { id: string; name: string; pak: string };
  let bob: { id: string; name: string; pak: string };

  before(async function () {
    this.timeout(180_000);
    await buildCli();
    hub = await startHub(infra);
    maintenance = await startMaintenance(infra);
    owner = await createGenerator(hub);
    alice = await createGenerator(hub);
    bob = await createGenerator(hub);
  });

  after(async () => {
    await maintenance?.stop();
    await hub?.stop();
  });

  const cli = (pak: string, args: string[]) => runCli(args, { env: hub.env(pak) });

  async function servedIds(agent: { id: string; client: TestClient }): Promise<string[]> {
    const res = await agent.client.get(`/agents/${agent.id}/target-state`, { query: { mode: 'full' } });
    return (res.body as { id: string }[]).map((o) => o.id);
  }

  it('approves the wave the rollout waits at; the submitter finds nothing to approve; the second approval releases the wave', async () => {
    const canary = await createActiveAgent(hub, owner.id);
    expect((await hub.admin.post(`/agents/${canary.id}/labels`, { agent_id: canary.id, label: 'canary' })).status).to.equal(201);
    const other = await createActiveAgent(hub, owner.id);
    const name = uniqueName('shop');
    const dir = await manifestDir(name, { 'app.yaml': configMap('app', '1') });
    expect((await cli(owner.pak, ['apply', '-f', dir, '--target', canary.name, '--target', other.name])).code).to.equal(0);
    const policyFile = path.join(path.dirname(dir), 'policy.yaml');
    await fs.writeFile(
      policyFile,
      `waves:\n  - {name: canary, selector: {labels: [canary]}, soak_seconds: 0}\n` +
        `  - {name: prod, percent: 100, soak_seconds: 0, required_approvals: 2, approvers: [${alice.id}, ${bob.id}]}\n`,
    );
    const set = await cli(owner.pak, ['rollout', 'policy', 'set', name, '-f', policyFile]);
    expect(set.code, set.stderr).to.equal(0);
    await fs.writeFile(path.join(dir, 'app.yaml'), configMap('app', '2'));
    expect((await cli(owner.pak, ['apply', '-f', dir])).code).to.equal(0);

    const stack = (await hub.admin.get('/stacks')).body.find((s: { name: string }) => s.name === name);
    const v2 = await eventually(
      async () => {
        const objects = (await hub.admin.get(`/stacks/${stack.id}/deployment-objects`)).body as { id: string; sequence_id: number }[];
        return objects.length === 2 ? objects.sort((a, b) => b.sequence_id - a.sequence_id)[0]!.id : undefined;
      },
      { what: 'v2 stored' },
    );
    await eventually(async () => (await servedIds(canary)).includes(v2), { what: 'the canary served v2' });
    const event = { agent_id: canary.id, deployment_object_id: v2, event_type: 'DEPLOY', status: 'SUCCESS', message: 'ok' };
    expect((await canary.client.post(`/agents/${canary.id}/events`, event)).status).to.equal(201);
    const health = { deployment_objects: [{ id: v2, status: 'healthy', checked_at: new Date().toISOString() }] };
    expect((await canary.client.patch(`/agents/${canary.id}/health-status`, health)).status).to.equal(200);
    await eventually(
      async () => {
        const status = await cli(owner.pak, ['rollout', 'status', name]);
        return /prod\s+no\s+1\s+0\s+0\s+0\s+0\/2 \(waiting\)/.test(status.stdout) || undefined;
      },
      { what: 'rollout status to show the prod wave waiting for 0/2 approvals' },
    );

    const bySubmitter = await cli(owner.pak, ['rollout', 'approve', name]);
    expect(bySubmitter.code).to.equal(1);
    expect(bySubmitter.stderr).to.include(`nothing of stack "${name}" waits for your approval`);

    const first = await cli(alice.pak, ['rollout', 'approve', name, '--comment', 'checked the diff']);
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stdout).to.match(
      new RegExp(`approved wave 2 prod of stack "${name}" .*sha256:[0-9a-f]{64}\\): 1/2 approvals, waiting for more`),
    );
    expect(await servedIds(other)).to.not.include(v2);

    const unknownWave = await cli(bob.pak, ['rollout', 'approve', name, '--wave', 'canary']);
    expect(unknownWave.code).to.equal(1);
    expect(unknownWave.stderr).to.include('is not one you may approve now (open: 2 prod)');

    const second = await cli(bob.pak, ['rollout', 'approve', name, '--wave', '2', '-o', 'json']);
    expect(second.code, second.stderr).to.equal(0);
    const answer = JSON.parse(second.stdout);
    expect(answer).to.include({ name: 'prod', approvals_counted: 2, released: true });
    expect(answer.approvals.map((a: { approver_id: string }) => a.approver_id)).to.have.members([alice.id, bob.id]);
    await eventually(async () => (await servedIds(other)).includes(v2), { what: 'the prod wave served v2' });
  });
});
