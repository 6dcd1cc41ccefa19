import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { eventually, freePort, TestClient } from '@brokkr/testkit';
import { runStart } from './support/start-process.ts';

interface DriftRecord {
  state: string;
  object: { kind: string; namespace: string; name: string };
  fields: { path: string; desired: unknown; live: unknown; manager: string | null; operation: string | null }[];
}

const deployment = `apiVersion: v1
kind: Namespace
metadata:
  name: drift-demo
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: drift-demo
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: main
          image: shop/web:1.0
`;

/** Whoever owns `/spec/replicas` in the live object's managedFields, as the cluster itself says it. */
function replicasOwner(kubeconfig: string): string | undefined {
  const live = JSON.parse(
    execFileSync(
      'kubectl',
      ['--kubeconfig', kubeconfig, '-n', 'drift-demo', 'get', 'deployment', 'web', '-o', 'json', '--show-managed-fields'],
      {
        encoding: 'utf8',
      },
    ),
  ) as { metadata: { managedFields: { manager: string; fieldsV1?: { 'f:spec'?: Record<string, unknown> } }[] } };
  return live.metadata.managedFields.find((m) => m.fieldsV1?.['f:spec']?.['f:replicas'] !== undefined)?.manager;
}

/**
 * Drift against `npm start`, as an operator meets it: the local agent applies a Deployment, someone
 * runs `kubectl scale` on it in the local cluster (kubectl's own field manager, not the agent's),
 * and `GET /api/v1/stacks/{id}/drift` shows the path, both values and that manager. The policy is
 * `report`, so the record stays open and the live value is what kubectl left.
 */
describe('npm start: drift on the local cluster', () => {
  it('a Deployment the local agent applied, scaled with kubectl, shows up in GET /stacks/{id}/drift with the path, both values and kubectl’s manager', async function () {
    this.timeout(600_000); // includes building kube-apiserver on a machine that has never done so
    const port = await freePort();
    const start = runStart([], { BROKKR__BROKER__PORT: String(port) });
    try {
      const pak = (await start.waitFor(/admin PAK: (brokkr_\S+)/, 60_000))[1] ?? '';
      const kubeconfig = (await start.waitFor(/kubeconfig: (\S+)/, 540_000))[1] ?? '';
      const admin = new TestClient(`http://127.0.0.1:${port}`, pak);

      const local = (await admin.must<{ id: string; name: string }[]>('GET', '/agents')).find((a) => a.name === 'local');
      const generator = (await admin.must<{ id: string; name: string }[]>('GET', '/generators')).find((g) => g.name === 'local-dev');
      expect(local, 'npm start registers the agent "local"').to.not.equal(undefined);
      const stack = await admin.must<{ id: string }>('POST', '/stacks', { name: 'drift-demo', generator_id: generator!.id });
      await admin.must('PUT', `/stacks/${stack.id}/drift-policy`, { mode: 'report' });
      await admin.must('POST', `/agents/${local!.id}/targets`, { agent_id: local!.id, stack_id: stack.id });
      const object = await admin.must<{ id: string }>('POST', `/stacks/${stack.id}/deployment-objects`, { yaml_content: deployment });
      await eventually(
        async () =>
          (await admin.must<{ deployment_object_id: string; status: string }[]>('GET', `/agents/${local!.id}/events`)).some(
            (e) => e.deployment_object_id === object.id && e.status === 'SUCCESS',
          ),
        { timeoutMs: 120_000, what: 'the local agent applying the Deployment' },
      );

      execFileSync('kubectl', ['--kubeconfig', kubeconfig, '-n', 'drift-demo', 'scale', 'deployment', 'web', '--replicas=5']);
      const manager = replicasOwner(kubeconfig);
      expect(manager, 'kubectl owns /spec/replicas now, under a field manager of its own').to.match(/^kubectl/);

      const record = await eventually(
        async () => (await admin.must<{ items: DriftRecord[] }>('GET', `/stacks/${stack.id}/drift`)).items[0],
        { timeoutMs: 60_000, what: 'a drift record of the scaled Deployment' },
      );
      expect(record.state).to.equal('open');
      expect(record.object).to.deep.include({ kind: 'Deployment', namespace: 'drift-demo', name: 'web' });
      expect(record.fields).to.have.length(1);
      expect(record.fields[0]).to.deep.include({ path: '/spec/replicas', desired: 2, live: 5, manager });
    } finally {
      const { code } = await start.interrupt();
      expect(code).to.equal(0);
    }
  });
});
