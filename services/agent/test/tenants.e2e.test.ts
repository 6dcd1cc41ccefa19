import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { expect } from 'chai';
import pg from 'pg';
import type { AgentEvent, DeploymentObject, Preview } from '@brokkr/contracts';
import { eventually, startKubeCluster, useTestInfra, type KubeCluster, type TestClient } from '@brokkr/testkit';
import { spawnAgent, type RunningAgentProcess } from './support/agent.ts';
import { startBroker, type Broker } from './support/broker.ts';
import { Kubectl } from './support/kubectl.ts';
import { deployment, namespace, stream } from './support/manifests.ts';

/**
 * The outside review's attacks on a cluster shared by tenants, as it ran them, against the api, the
 * agent's real main and a cluster where pods run (controllers, scheduler, KWOK). Each attack is
 * refused where it lands: by the api at submit when it can tell, and by the agent before it applies
 * (shown by handing the agent an object the api's check never saw: written into PostgreSQL).
 */
describe('tenants confined in a shared cluster (the review’s attacks, end to end)', function () {
  this.timeout(300_000);
  const infra = useTestInfra({ nats: true });
  const AGENT_NS = 'brokkr-agent';
  let broker: Broker;
  let kube: KubeCluster;
  let kubectl: Kubectl;
  let sql: pg.Pool;
  let proc: RunningAgentProcess | undefined;
  let agent: { id: string; client: TestClient };

  interface Tenant {
    id: string;
    client: TestClient;
    stack: string;
  }
  let attacker: Tenant;
  let victim: Tenant;

  async function tenant(): Promise<Tenant> {
    const created = await broker.admin.post('/generators', { name: `tenant-${randomBytes(3).toString('hex')}` });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const client = broker.admin.as(created.body.pak as string);
    const id = created.body.generator.id as string;
    const stack = await client.post('/stacks', { name: `stack-${randomBytes(3).toString('hex')}`, generator_id: id });
    expect(stack.status).to.equal(201);
    return { id, client, stack: stack.body.id as string };
  }

  async function register(t: Tenant, grant?: Record<string, unknown>): Promise<void> {
    const res = await broker.admin.post(`/generators/${t.id}/register`, { agent_id: agent.id, ...(grant ? { grant } : {}) });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const targeted = await t.client.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: t.stack });
    expect(targeted.status, JSON.stringify(targeted.body)).to.equal(201);
  }

  async function setGrant(t: Tenant, grant: Record<string, unknown>): Promise<void> {
    const res = await broker.admin.put(`/generators/${t.id}/registered-agents/${agent.id}/grant`, { grant });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  }

  async function submit(t: Tenant, yaml: string, marker = false) {
    return t.client.post<DeploymentObject>(`/stacks/${t.stack}/deployment-objects`, { yaml_content: yaml, is_deletion_marker: marker });
  }

  async function deployed(t: Tenant, yaml: string, marker = false): Promise<DeploymentObject> {
    const res = await submit(t, yaml, marker);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  }

  /**
   * A deployment object the api's submit check never saw, as if the hub had been bypassed: written
   * straight into PostgreSQL, and the agent woken (a label change drops the hub's cached answer).
   */
  async function bypassingTheHub(t: Tenant, yaml: string): Promise<DeploymentObject> {
    const checksum = createHash('sha256').update(yaml).digest('hex');
    const { rows } = await sql.query<DeploymentObject>(
      `INSERT INTO deployment_objects (stack_id, yaml_content, yaml_checksum, is_deletion_marker)
       VALUES ($1, $2, $3, false) RETURNING id, stack_id, yaml_checksum`,
      [t.stack, yaml, checksum],
    );
    const label = `wake-${randomBytes(3).toString('hex')}`;
    expect((await broker.admin.post(`/agents/${agent.id}/labels`, { agent_id: agent.id, label })).status).to.equal(201);
    return rows[0]!;
  }

  const eventFor = (d: Pick<DeploymentObject, 'id'>, status: string) =>
    eventually(
      async () =>
        ((await broker.admin.get<AgentEvent[]>(`/agents/${agent.id}/events`)).body ?? []).find(
          (e) => e.deployment_object_id === d.id && e.status === status,
        ),
      { timeoutMs: 90_000, what: `a ${status} event for ${d.id}` },
    );

  const pod = (ns: string, name: string, secret: string, annotations: Record<string, string> = {}) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${ns}
  annotations: ${JSON.stringify(annotations)}
spec:
  containers:
    - name: main
      image: busybox:1.36
      volumeMounts: [{name: loot, mountPath: /loot}]
  volumes: [{name: loot, secret: {secretName: ${secret}}}]
`;
  const zeroPods = (ns: string) =>
    `apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: zero-pods\n  namespace: ${ns}\nspec:\n  hard:\n    pods: "0"\n`;
  const denyAll = (ns: string) =>
    `apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: deny-all\n  namespace: ${ns}\nspec:\n  podSelector: {}\n  policyTypes: [Ingress, Egress]\n`;
  const readyReplicas = async (ns: string, name: string) =>
    ((await kubectl.get(`/apis/apps/v1/namespaces/${ns}/deployments/${name}`))?.status?.readyReplicas as number | undefined) ?? 0;

  before(async () => {
    [broker, kube] = await Promise.all([startBroker(infra), startKubeCluster()]);
    kubectl = new Kubectl(kube);
    sql = new pg.Pool({ connectionString: infra.db.url, max: 2 });
    // The agent chart's shape: the agent's namespace holds its PAK.
    await kubectl.create('/api/v1/namespaces', { metadata: { name: AGENT_NS } });
    await kubectl.create(`/api/v1/namespaces/${AGENT_NS}/secrets`, {
      metadata: { name: 'brokkr-agent-pak' },
      stringData: { BROKKR__AGENT__PAK: 'brokkr_the-agents-own-pak' },
    });
    // An agent registered with no tenant yet (only the system generator).
    const name = `agent-${randomBytes(3).toString('hex')}`;
    const created = await broker.admin.post('/agents', { name, cluster_name: 'shared' });
    expect(created.status).to.equal(201);
    agent = { id: created.body.agent.id as string, client: broker.admin.as(created.body.initial_pak as string) };
    expect((await broker.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
    [attacker, victim] = [await tenant(), await tenant()];
    proc = await spawnAgent(broker.url, { name, clusterName: 'shared', pak: created.body.initial_pak as string }, kube.kubeconfigPath, {
      env: { BROKKR__AGENT__NAMESPACE: AGENT_NS, BROKKR__AGENT__RESYNC_INTERVAL_SECONDS: '2' },
    });
  });

  after(async () => {
    await proc?.stop();
    await sql?.end();
    await kubectl?.close();
    await Promise.allSettled([broker?.stop(), kube?.stop()]);
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed' && proc) console.log(proc.output().slice(-6000));
  });

  it("refuses a Pod in the agent's own namespace mounting its PAK Secret, even to a tenant alone on the cluster", async () => {
    await register(attacker);
    const d = await deployed(attacker, stream(pod(AGENT_NS, 'thief', 'brokkr-agent-pak'), namespace('attacker-own')));
    const failure = await eventFor(d, 'FAILURE');
    expect(failure.message).to.include(`Pod '${AGENT_NS}/thief' is in the agent's own namespace ${AGENT_NS}`);
    expect(await kubectl.get(`/api/v1/namespaces/${AGENT_NS}/pods/thief`), 'no pod in the agent namespace').to.equal(undefined);
    // Alone, the tenant reaches the rest of the cluster (Brokkr's behaviour).
    const fine = await deployed(attacker, stream(namespace('attacker-own')));
    await eventFor(fine, 'SUCCESS');
  });

  describe('once a second tenant is registered', () => {
    before(async () => {
      await setGrant(attacker, { namespaces: ['team-a', 'team-a-*'] });
      await register(victim, { namespaces: ['team-v'] });
      await kubectl.create('/api/v1/namespaces', { metadata: { name: 'team-v' } });
      const d = await deployed(
        victim,
        stream(
          `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: team-v\nstringData:\n  password: victims-password\n`,
          deployment('team-v', 'app'),
        ),
      );
      await eventFor(d, 'SUCCESS');
      await eventually(async () => (await readyReplicas('team-v', 'app')) === 1, { timeoutMs: 90_000, what: "the victim's pod Ready" });
    });

    it("refuses a co-tenant's Pod in the victim's namespace mounting the victim's Secret: 422 at submit, and the agent refuses it too", async () => {
      const theft = pod('team-v', 'thief', 'db');
      const refused = await submit(attacker, theft);
      expect(refused.status, JSON.stringify(refused.body)).to.equal(422);
      expect(refused.body).to.deep.include({ code: 'grant_refused' });
      const d = await bypassingTheHub(attacker, theft);
      const failure = await eventFor(d, 'FAILURE');
      expect(failure.message).to.match(/Pod 'team-v\/thief' is in a namespace outside what generator "tenant-\w+" is granted/);
      expect(await kubectl.get('/api/v1/namespaces/team-v/pods/thief')).to.equal(undefined);
    });

    it("refuses the quota and network-policy denial of service in the victim's namespace; the victim's next Deployment still gets its pods", async () => {
      for (const yaml of [zeroPods('team-v'), denyAll('team-v')]) {
        expect((await submit(attacker, yaml)).status).to.equal(422);
        const failure = await eventFor(await bypassingTheHub(attacker, yaml), 'FAILURE');
        expect(failure.message).to.include('team-v');
      }
      expect(await kubectl.get('/api/v1/namespaces/team-v/resourcequotas/zero-pods')).to.equal(undefined);
      expect(await kubectl.get('/apis/networking.k8s.io/v1/namespaces/team-v/networkpolicies/deny-all')).to.equal(undefined);
      const next = await deployed(victim, stream(deployment('team-v', 'app'), deployment('team-v', 'worker')));
      await eventFor(next, 'SUCCESS');
      await eventually(async () => (await readyReplicas('team-v', 'worker')) === 1, {
        timeoutMs: 90_000,
        what: "the victim's new pod Ready",
      });
    });

    it("confines the tenant to its own namespaces: its default one is created with Pod Security labels, and its own Namespaces can't run privileged pods", async () => {
      const own = `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a-dev\n  labels: {pod-security.kubernetes.io/enforce: privileged}\n`;
      const cfg = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: "1"\n`;
      const d = await deployed(attacker, stream(own, cfg));
      await eventFor(d, 'SUCCESS');
      const created = await kubectl.get('/api/v1/namespaces/team-a-dev');
      expect(created.metadata.labels['pod-security.kubernetes.io/enforce']).to.equal('baseline');
      const grants = (await agent.client.get(`/agents/${agent.id}/grants`)).body as {
        generators: { generator_id: string; grant: { default_namespace: string } }[];
      };
      const home = grants.generators.find((g) => g.generator_id === attacker.id)!.grant.default_namespace;
      const made = await kubectl.get(`/api/v1/namespaces/${home}`);
      expect(made.metadata.labels).to.include({ 'k8s.brokkr.io/generator': attacker.id, 'pod-security.kubernetes.io/enforce': 'baseline' });
      expect((await kubectl.get(`/api/v1/namespaces/${home}/configmaps/settings`)).data).to.deep.equal({ a: '1' });
    });

    it('shows a preview of the theft as a conflict, with the grant’s reason', async () => {
      const created = await attacker.client.post<Preview>(`/stacks/${attacker.stack}/previews`, {
        yaml_content: pod('team-v', 'thief', 'db'),
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const preview = await eventually(
        async () => {
          const p = (await attacker.client.get<Preview>(`/previews/${created.body.id}`)).body;
          return p.status === 'completed' ? p : undefined;
        },
        { timeoutMs: 60_000, what: 'the preview result' },
      );
      const result = preview.agents.find((r) => r.agent_id === agent.id)!;
      expect(result.objects[0]).to.deep.include({ action: null, name: 'thief' });
      expect(result.objects[0]!.error).to.match(/^conflict: Pod 'team-v\/thief' is in a namespace outside what generator/);
    });

    it("streams no log of a pod in the agent's namespace that names the tenant's stack; its own pod's log arrives", async () => {
      const marker = { 'k8s.brokkr.io/stack': attacker.stack, 'brokkr.io/stream-logs': 'true' };
      await kubectl.create(`/api/v1/namespaces/${AGENT_NS}/pods`, {
        metadata: { name: 'planted', annotations: marker },
        spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] },
      });
      const own = deployment('team-a', 'chatty').replace(
        '    metadata:\n      labels: {app: chatty}',
        `    metadata:\n      labels: {app: chatty}\n      annotations: ${JSON.stringify(marker)}`,
      );
      const d = await deployed(attacker, stream(namespace('team-a'), own));
      await eventFor(d, 'SUCCESS');
      const running = (ns: string, prefix: string) =>
        eventually(
          async () => {
            const pods = (await kubectl.get(`/api/v1/namespaces/${ns}/pods`)).items as {
              metadata: { name: string };
              status: { containerStatuses?: { state: { running?: unknown } }[] };
            }[];
            return pods.some((p) => p.metadata.name.startsWith(prefix) && p.status.containerStatuses?.some((c) => c.state.running));
          },
          { timeoutMs: 90_000, what: `a running ${prefix} pod in ${ns}` },
        );
      await running(AGENT_NS, 'planted');
      await running('team-a', 'chatty');
      const line = `secret-${randomBytes(4).toString('hex')}`;
      await kube.appendPodLog(line);
      const logs = async () =>
        ((await attacker.client.get(`/stacks/${attacker.stack}/logs`, { query: { limit: '5000' } })).body.lines ?? []) as {
          namespace: string;
          pod: string;
          line: string;
        }[];
      await eventually(async () => (await logs()).some((l) => l.namespace === 'team-a' && l.line === line), {
        timeoutMs: 90_000,
        what: "the tenant's own pod's line",
      });
      expect((await logs()).filter((l) => l.namespace === AGENT_NS)).to.deep.equal([]);
      expect(await fs.readFile(kube.podLogFile, 'utf8')).to.include(line);
    });

    it('adopts nothing by default; an adopted namespace is given back, not deleted with everyone in it, when the stack goes', async () => {
      await kubectl.create('/api/v1/namespaces', { metadata: { name: 'team-a-tools' } });
      await kubectl.create('/api/v1/namespaces/team-a-tools/configmaps', { metadata: { name: 'someone-elses' }, data: { keep: 'me' } });
      const adopt = `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a-tools\n  annotations: {brokkr.io/adopt-existing: "true"}\n`;
      const refused = await deployed(attacker, adopt);
      expect((await eventFor(refused, 'FAILURE')).message).to.include('adoption is off for this stack here');

      await setGrant(attacker, { namespaces: ['team-a', 'team-a-*'], adoption: true });
      const adopted = await deployed(attacker, adopt);
      await eventFor(adopted, 'SUCCESS');
      expect((await kubectl.get('/api/v1/namespaces/team-a-tools')).metadata.labels).to.include({ 'k8s.brokkr.io/stack': attacker.stack });

      const marker = await deployed(attacker, '', true);
      await eventFor(marker, 'SUCCESS');
      const released = await eventually(
        async () => {
          const ns = await kubectl.get('/api/v1/namespaces/team-a-tools');
          return ns && !ns.metadata.labels?.['k8s.brokkr.io/stack'] ? ns : undefined;
        },
        { timeoutMs: 90_000, what: 'the adopted namespace given back' },
      );
      expect(released.metadata.deletionTimestamp).to.equal(undefined);
      expect((await kubectl.get('/api/v1/namespaces/team-a-tools/configmaps/someone-elses')).data).to.deep.equal({ keep: 'me' });
    });
  });
});
