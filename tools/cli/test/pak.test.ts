import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { parse } from 'yaml';
import { useTestInfra } from '@brokkr/testkit';
import { buildCli, createGenerator, runCli, startHub, uniqueName, type TestHub } from './support.ts';

describe('brokkr generate-pak, agents create / rotate-pak, admin rotate-pak', () => {
  const infra = useTestInfra({ nats: true });
  let hub: TestHub;

  before(async function () {
    this.timeout(180_000);
    await buildCli();
    // The hub's admin hash comes from the CLI's offline generate-pak: if the CLI minted it any
    // other way than the hub hashes it, nothing below could authenticate.
    const minted = await runCli(['generate-pak', '-o', 'json']);
    expect(minted.code, minted.stderr).to.equal(0);
    const { pak, hash } = JSON.parse(minted.stdout) as { pak: string; hash: string };
    hub = await startHub(infra, { pak, hash });
  });

  after(async () => {
    await hub?.stop();
  });

  it('generate-pak prints a PAK in Brokkr format and the SHA-256 of its long token (no hub needed)', async () => {
    const res = await runCli(['generate-pak']);
    expect(res.code).to.equal(0);
    const pak = /^PAK:\s+(\S+)$/m.exec(res.stdout)?.[1];
    const hash = /^Hash:\s+(\S+)$/m.exec(res.stdout)?.[1];
    expect(pak).to.match(/^brokkr_BR[1-9A-HJ-NP-Za-km-z]{6}_[1-9A-HJ-NP-Za-km-z]{30,34}$/);
    expect(hash).to.equal(createHash('sha256').update(pak!.split('_')[2]!).digest('hex'));
    expect((await hub.admin.post('/auth/pak')).body.admin).to.equal(true);
  });

  it('agents create prints the PAK once; it authenticates as that agent; --activate sets ACTIVE', async () => {
    const name = uniqueName('edge');
    const gen = await createGenerator(hub);
    const res = await runCli(['agents', 'create', name, '--cluster', 'eu-1', '--generator', gen.name, '--activate'], { env: hub.env() });
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stdout).to.include('shown only now');
    const pak = /^PAK:\s+(\S+)$/m.exec(res.stdout)![1]!;
    const who = await hub.admin.as(pak).post('/auth/pak');
    expect(who.status).to.equal(200);
    const agent = (await hub.admin.get(`/agents/${who.body.agent}`)).body;
    expect(agent).to.include({ name, cluster_name: 'eu-1', status: 'ACTIVE' });
    const registered = (await hub.admin.get(`/generators/${gen.id}/registered-agents`)).body;
    expect(registered.map((r: { agent_id: string }) => r.agent_id)).to.include(agent.id);
    const dup = await runCli(['agents', 'create', name, '--cluster', 'eu-1'], { env: hub.env() });
    expect(dup.code).to.equal(1);
    expect(dup.stderr).to.match(/^unique_violation: /m);
  });

  it('agents rotate-pak: the old PAK stops working, the new one works', async () => {
    const name = uniqueName('rot');
    const created = parse((await runCli(['agents', 'create', name, '--cluster', name, '-o', 'yaml'], { env: hub.env() })).stdout);
    const oldPak = created.initial_pak as string;
    const res = await runCli(['agents', 'rotate-pak', name, '-o', 'json'], { env: hub.env() });
    expect(res.code, res.stderr).to.equal(0);
    const { pak, agent } = JSON.parse(res.stdout);
    expect(agent.id).to.equal(created.agent.id);
    expect((await hub.admin.as(oldPak).post('/auth/pak')).status).to.equal(401);
    expect((await hub.admin.as(pak).post('/auth/pak')).body.agent).to.equal(agent.id);
  });

  it('admin rotate-pak needs an admin PAK', async () => {
    const gen = await createGenerator(hub);
    const res = await runCli(['admin', 'rotate-pak'], { env: hub.env(gen.pak) });
    expect(res.code).to.equal(1);
    expect(res.stderr).to.match(/^admin_required: /m);
  });

  it('admin rotate-pak: the old admin PAK is rejected at once, the new one accepted', async () => {
    const res = await runCli(['admin', 'rotate-pak'], { env: hub.env() });
    expect(res.code, res.stderr).to.equal(0);
    const newPak = /^New admin PAK:\s+(\S+)$/m.exec(res.stdout)?.[1];
    expect(newPak).to.match(/^brokkr_/);
    const withOld = await runCli(['get', 'agents'], { env: hub.env() });
    expect(withOld.code).to.equal(1);
    expect(withOld.stderr).to.match(/^unauthorized: /m);
    const withNew = await runCli(['get', 'agents'], { env: hub.env(newPak) });
    expect(withNew.code, withNew.stderr).to.equal(0);
  });
});
