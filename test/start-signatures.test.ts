import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { eventually, freePort, TestClient } from '@brokkr/testkit';
import { repoRoot } from '@brokkr/infra';
import { runStart } from './support/start-process.ts';

interface AgentEvent {
  deployment_object_id: string;
  status: string;
  message: string | null;
}

/**
 * `npm start -- --require-signatures` end to end: the local agent applies only what the generator
 * `local-dev` signed with the key npm start printed. An unsigned object posted to a `local-dev`
 * stack is refused with an event naming the reason and nothing reaches the cluster; the same
 * directory applied with `brokkr apply --sign PATH` is applied.
 */
describe('npm start --require-signatures', () => {
  it('refuses unsigned content on the local agent, and applies the same directory with brokkr apply --sign', async function () {
    this.timeout(600_000); // includes building kube-apiserver on a machine that has never done so
    const port = await freePort();
    const start = runStart(['--require-signatures'], { BROKKR__BROKER__PORT: String(port) });
    const pak = (await start.waitFor(/admin PAK: (brokkr_\S+)/, 60_000))[1] ?? '';
    const key = (await start.waitFor(/signing key: (\S+)/, 540_000))[1] ?? '';
    const kubeconfigPath = (await start.waitFor(/kubeconfig: (\S+)/, 60_000))[1] ?? '';
    const admin = new TestClient(`http://127.0.0.1:${port}`, pak);
    const generator = ((await admin.get('/generators')).body as { id: string; name: string }[]).find((g) => g.name === 'local-dev')!;
    const agent = ((await admin.get('/agents')).body as { id: string; name: string }[]).find((a) => a.name === 'local')!;

    const stack = await admin.post('/stacks', { name: 'signed-hello', generator_id: generator.id });
    expect(stack.status).to.equal(201);
    expect((await admin.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stack.body.id })).status).to.equal(201);
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'brokkr-signed-'));
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: signed-hello\n  namespace: default\ndata:\n  greeting: "signed"\n';
    await fs.writeFile(path.join(dir, 'hello.yaml'), yaml);

    const cli = path.join(repoRoot, 'tools', 'cli', 'src', 'bin.ts');
    const env = { ...process.env, BROKKR_URL: `http://127.0.0.1:${port}`, BROKKR_PAK: pak };
    const brokkr = (...args: string[]) =>
      JSON.parse(
        execFileSync(process.execPath, ['--import', 'tsx', '--conditions=development', cli, ...args, '-o', 'json'], {
          env,
          encoding: 'utf8',
        }),
      );

    const unsigned = brokkr('apply', '-f', dir, '--stack', 'signed-hello').deployment_object as { id: string };
    const events = async () => (await admin.get(`/agents/${agent.id}/events`)).body as AgentEvent[];
    const refused = await eventually(async () => (await events()).find((e) => e.deployment_object_id === unsigned.id), {
      timeoutMs: 60_000,
      what: 'the local agent refusing the unsigned object',
    });
    expect(refused).to.include({ status: 'FAILURE', message: 'refused: signature_invalid: the hub relayed no signature for it' });
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    const missing = await core
      .readNamespacedConfigMap({ name: 'signed-hello', namespace: 'default' })
      .catch((err: { code?: number }) => err.code);
    expect(missing, 'nothing changed in the cluster').to.equal(404);

    // The same directory signed: the content is unchanged (no new object), its signature makes it
    // acceptable; --wait counts the agent's verdicts from the signature on, not its earlier refusal.
    const signed = brokkr('apply', '-f', dir, '--stack', 'signed-hello', '--sign', key, '--wait', '--timeout', '60s');
    expect(signed).to.deep.include({ created: false, deployment_object: { ...signed.deployment_object, id: unsigned.id } });
    expect(signed.rollout).to.include({ outcome: 'applied', exitCode: 0 });
    await eventually(async () => (await events()).find((e) => e.deployment_object_id === unsigned.id && e.status === 'SUCCESS'), {
      timeoutMs: 60_000,
      what: 'the local agent applying the signed content',
    });
    expect((await core.readNamespacedConfigMap({ name: 'signed-hello', namespace: 'default' })).data).to.deep.equal({ greeting: 'signed' });

    await fs.rm(dir, { recursive: true, force: true });
    const { code, leaked } = await start.interrupt();
    expect(code).to.equal(0);
    expect(leaked, 'temporary directories left behind').to.deep.equal([]);
  });
});
