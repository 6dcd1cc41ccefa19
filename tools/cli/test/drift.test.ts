import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import { buildCli, createActiveAgent, createGenerator, manifestDir, runCli, startHub, uniqueName, type TestHub } from './support.ts';

/**
 * `brokkr drift` against a real hub: records an agent reported over REST (as our agent does),
 * listed per field with both values and the manager, counted by field across clusters, accepted
 * (an ignore rule, or an override layer keeping the live value), and a stack's drift policy set and
 * read from a file.
 */
describe('brokkr drift', function () {
  this.timeout(120_000);
  const infra = useTestInfra({ nats: true });
  let hub: TestHub;
  let generator: { id: string; name: string; pak: string };
  let stack: { id: string; name: string };

  before(async function () {
    this.timeout(180_000);
    await buildCli();
    hub = await startHub(infra);
    generator = await createGenerator(hub);
    const created = await hub.admin.post('/stacks', { name: uniqueName('shop'), generator_id: generator.id });
    stack = created.body;
    for (const live of [5, 7]) {
      const agent = await createActiveAgent(hub, generator.id);
      expect((await hub.admin.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stack.id })).status).to.equal(201);
      const report = {
        id: randomUUID(),
        stack_id: stack.id,
        deployment_object_id: null,
        object: { api_version: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' },
        state: 'open',
        fields: [{ path: '/spec/replicas', desired: 2, live, manager: 'kubectl', operation: 'Update', time: null }],
        observed_at: new Date().toISOString(),
      };
      expect((await agent.client.post(`/agents/${agent.id}/drift`, { reports: [report] })).status).to.equal(200);
    }
  });

  after(() => hub?.stop());

  const cli = (args: string[]) => runCli(args, { env: hub.env(generator.pak) });

  it('lists every record of a stack, one row per field: path, desired → live, manager', async () => {
    const out = await cli(['drift', '--stack', stack.name]);
    expect(out.code, out.stderr).to.equal(0);
    const lines = out.stdout.trim().split('\n');
    expect(lines[0]).to.match(/^ID\s+STATE\s+STACK\s+AGENT\s+OBJECT\s+FIELD\s+DESIRED → LIVE\s+MANAGER\s+SEEN$/);
    expect(lines).to.have.length(3);
    expect(out.stdout).to.include('Deployment shop/web').and.include('/spec/replicas').and.include('2 → 5').and.include('2 → 7');
    expect(out.stdout).to.include('kubectl');
    const json = await cli(['drift', '--stack', stack.id, '--state', 'open', '-o', 'json']);
    expect((JSON.parse(json.stdout) as unknown[]).length).to.equal(2);
  });

  it('counts by field: on how many of the stack’s clusters, and by whom', async () => {
    const out = await cli(['drift', '--stack', stack.name, '--group-by', 'field']);
    expect(out.code, out.stderr).to.equal(0);
    expect(out.stdout).to.include('2 record(s) on 2 of 2 cluster(s), by field');
    expect(out.stdout).to.match(/\/spec\/replicas\s+2\s+2 of 2\s+1\s+kubectl \(2\)/);
    expect((await cli(['drift', '--group-by', 'nonsense'])).stderr).to.include('--group-by must be one of');
  });

  it('accepts a record (an ignore rule in the stack’s policy, or an override layer keeping the live value) and sets and reads a policy from a file', async () => {
    const [record, other] = JSON.parse((await cli(['drift', '--stack', stack.id, '-o', 'json'])).stdout) as { id: string }[];
    const accepted = await cli(['drift', 'accept', record!.id, '--note', 'hotfix']);
    expect(accepted.code, accepted.stderr).to.equal(0);
    expect(accepted.stdout + accepted.stderr).to.include('now has 1 ignore rule(s)');
    const kept = await cli(['drift', 'accept', other!.id, '--override']);
    expect(kept.code, kept.stderr).to.equal(0);
    expect(kept.stdout + kept.stderr).to.include(`keeps the live values in override layer drift-${other!.id.slice(0, 8)}`);
    expect((await hub.admin.get(`/stacks/${stack.id}/overrides`)).body.map((l: { name: string }) => l.name)).to.deep.equal([
      `drift-${other!.id.slice(0, 8)}`,
    ]);

    const file = path.join(await manifestDir(uniqueName('policy'), {}), 'drift.yaml');
    await fs.writeFile(file, 'mode: report\ncomparison: full\nignore:\n  - paths: [/spec/replicas]\n    managers: ["^hpa$"]\n');
    const set = await cli(['drift', 'policy', 'set', stack.name, '-f', file]);
    expect(set.code, set.stderr).to.equal(0);
    expect(set.stdout + set.stderr).to.include('drift policy set (report, full fields, 1 ignore rule(s))');
    const got = await cli(['drift', 'policy', 'get', stack.name]);
    expect(got.stdout).to.include('mode: report').and.include('^hpa$');
    expect((await cli(['drift', 'policy', 'delete', stack.name])).code).to.equal(0);
  });
});
