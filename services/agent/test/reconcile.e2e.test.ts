import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Preview } from '@brokkr/contracts';
import { eventually, startKubeApiServer, useTestInfra, type KubeApiServer } from '@brokkr/testkit';
import { spawnAgent, type RunningAgentProcess } from './support/agent.ts';
import {
  agentEvents,
  createStack,
  deploy,
  adminGeneratorId,
  registerAgent,
  startBroker,
  target,
  type AgentEvent,
  type Broker,
  type DeploymentObject,
  type RegisteredAgent,
} from './support/broker.ts';
import { Kubectl } from './support/kubectl.ts';
import { configMap, crd, deployment, namespace, stream, widget } from './support/manifests.ts';
import { ScheduleProxy } from './support/schedule-proxy.ts';

/** RFC 5545 UTC form of an instant, to the second: 20261128T133000Z. */
const icalUtc = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/[-:]/g, '').replace('.000', '');

/**
 * The agent end to end: the real api (Postgres + NATS), a real kube-apiserver, and the agent's
 * real main as a child process. Every assertion polls for an outcome; nothing is timed. Last,
 * maintenance windows, by two agents of their own against the same hub and kube-apiserver.
 */
describe('agent reconciliation (end to end)', function () {
  this.timeout(180_000);
  const infra = useTestInfra({ nats: true });
  let broker: Broker;
  let kube: KubeApiServer;
  let kubectl: Kubectl;
  let agent: RegisteredAgent;
  let proc: RunningAgentProcess | undefined;
  const logs: (() => string)[] = [];

  const cm = (ns: string, name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
  const events = () => agentEvents(broker.admin, agent.id);
  const eventFor = (d: DeploymentObject, status: string, type?: string) =>
    eventually(
      async () => (await events()).find((e) => e.deployment_object_id === d.id && e.status === status && (!type || e.event_type === type)),
      {
        timeoutMs: 60_000,
        what: `${type ?? ''} ${status} event for ${d.id}`,
      },
    );

  async function startAgentProcess(env: Record<string, string> = {}) {
    proc = await spawnAgent(broker.url, agent, kube.kubeconfigPath, { env: { BROKKR__AGENT__RESYNC_INTERVAL_SECONDS: '2', ...env } });
    logs.push(proc.output);
  }

  before(async () => {
    [broker, kube] = await Promise.all([startBroker(infra), startKubeApiServer()]);
    kubectl = new Kubectl(kube);
    agent = await registerAgent(broker.admin);
    await startAgentProcess();
  });

  after(async () => {
    await proc?.stop();
    if (process.env.SHOW_AGENT_LOG) for (const log of logs) console.log(log());
    await kubectl?.close();
    await Promise.allSettled([broker?.stop(), kube?.stop()]);
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed' && proc) console.log(proc.output().slice(-6000));
  });

  it('applies a stack with a Namespace, a CRD, a custom resource, a ConfigMap and a Deployment', async () => {
    const stack = await createStack(broker.admin);
    await target(broker.admin, agent.id, stack);
    const d = await deploy(
      broker.admin,
      stack,
      stream(
        widget('shop', 'w1', 3),
        configMap('shop', 'settings', { color: 'blue' }),
        deployment('shop', 'web'),
        crd(),
        namespace('shop'),
      ),
    );
    await eventFor(d, 'SUCCESS', 'APPLIED');
    const config = await kubectl.get(cm('shop', 'settings'));
    expect(config.data).to.deep.equal({ color: 'blue' });
    expect(config.metadata.labels).to.include({ 'k8s.brokkr.io/stack': stack, 'brokkr.io/owner-id': agent.id, app: 'demo' });
    expect(config.metadata.annotations).to.include({
      'k8s.brokkr.io/deployment-checksum': d.yaml_checksum,
      'brokkr.io/deployment-object-id': d.id,
      'k8s.brokkr.io/last-config-applied': d.yaml_checksum,
    });
    const w = await kubectl.get('/apis/demo.brokkr.io/v1/namespaces/shop/widgets/w1');
    expect(w.spec).to.deep.equal({ size: 3 });
    expect(await kubectl.get('/apis/apps/v1/namespaces/shop/deployments/web')).to.have.nested.property('spec.replicas', 1);
    const managers = config.metadata.managedFields.map((f: { manager: string }) => f.manager);
    expect(managers).to.deep.equal(['brokkr-agent']);
  });

  describe('updates', () => {
    let stack: string;
    let d2: DeploymentObject;

    before(async () => {
      const web = await kubectl.get('/apis/apps/v1/namespaces/shop/deployments/web');
      stack = web.metadata.labels['k8s.brokkr.io/stack'];
    });

    it('applies a new deployment object: changes what changed, prunes what it no longer lists', async () => {
      const before = await kubectl.get(cm('shop', 'settings'));
      // Carries our labels and a stale checksum, but something owns it: never ours to prune.
      const w1 = await kubectl.get('/apis/demo.brokkr.io/v1/namespaces/shop/widgets/w1');
      await kubectl.create('/api/v1/namespaces/shop/configmaps', {
        metadata: {
          name: 'dependent',
          labels: { 'k8s.brokkr.io/stack': stack, 'brokkr.io/owner-id': agent.id },
          annotations: { 'k8s.brokkr.io/deployment-checksum': 'old' },
          ownerReferences: [{ apiVersion: 'demo.brokkr.io/v1', kind: 'Widget', name: 'w1', uid: w1.metadata.uid }],
        },
      });
      d2 = await deploy(
        broker.admin,
        stack,
        stream(
          namespace('shop'),
          crd(),
          widget('shop', 'w1', 4),
          configMap('shop', 'settings', { color: 'green' }),
          configMap('shop', 'extra', { a: '1' }),
        ),
      );
      await eventFor(d2, 'SUCCESS', 'UPDATED');
      const after = await kubectl.get(cm('shop', 'settings'));
      expect(after.data).to.deep.equal({ color: 'green' });
      expect(after.metadata.uid).to.equal(before.metadata.uid);
      expect(after.metadata.annotations['brokkr.io/deployment-object-id']).to.equal(d2.id);
      expect(await kubectl.get(cm('shop', 'extra'))).to.have.nested.property('data.a', '1');
      expect((await kubectl.get('/apis/demo.brokkr.io/v1/namespaces/shop/widgets/w1')).spec.size).to.equal(4);
      await eventually(async () => !(await kubectl.get('/apis/apps/v1/namespaces/shop/deployments/web')), {
        timeoutMs: 60_000,
        what: 'web pruned',
      });
      expect(await kubectl.get(cm('shop', 'dependent')), 'owner references protect it').to.not.equal(undefined);
    });

    it('reverts a hand edit and re-creates a deleted object within the resync interval', async () => {
      await kubectl.mergePatch(cm('shop', 'settings'), { data: { color: 'red' } });
      expect(await kubectl.remove(cm('shop', 'extra'))).to.equal(200);
      await eventually(async () => (await kubectl.get(cm('shop', 'settings')))?.data.color === 'green', {
        timeoutMs: 60_000,
        what: 'drift reverted',
      });
      await eventually(async () => (await kubectl.get(cm('shop', 'extra')))?.data.a === '1', {
        timeoutMs: 60_000,
        what: 'extra re-created',
      });
      // A resync that changes nothing reports nothing new.
      const forD2 = (await events()).filter((e) => e.deployment_object_id === d2.id);
      expect(forD2.map((e) => `${e.event_type}:${e.status}`)).to.deep.equal(['UPDATED:SUCCESS']);
    });

    it('reports an invalid deployment object as FAILURE, changes nothing, and applies the fixed one', async () => {
      const broken = `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: broken\n  namespace: shop\nspec:\n  replicas: 1\n`;
      const d3 = await deploy(broker.admin, stack, stream(namespace('shop'), configMap('shop', 'settings', { color: 'yellow' }), broken));
      const failure = await eventFor(d3, 'FAILURE');
      expect(failure.message).to.match(/Validation failed for Deployment 'shop\/broken'/);
      const settings = await kubectl.get(cm('shop', 'settings'));
      expect(settings.data.color).to.equal('green');
      expect(settings.metadata.annotations['brokkr.io/deployment-object-id']).to.equal(d2.id);
      expect(await kubectl.get(cm('shop', 'extra'))).to.not.equal(undefined);
      const notYaml = await deploy(broker.admin, stack, 'just a string\n');
      expect((await eventFor(notYaml, 'FAILURE')).message).to.match(/not a mapping/);
      const fixed = await deploy(
        broker.admin,
        stack,
        stream(namespace('shop'), crd(), widget('shop', 'w1', 4), configMap('shop', 'settings', { color: 'yellow' })),
      );
      await eventFor(fixed, 'SUCCESS', 'UPDATED');
      expect((await kubectl.get(cm('shop', 'settings'))).data.color).to.equal('yellow');
      await eventually(async () => !(await kubectl.get(cm('shop', 'extra'))), { timeoutMs: 60_000, what: 'extra pruned' });
      const failures = (await events()).filter((e) => e.deployment_object_id === d3.id);
      expect(failures, 'one event per object and outcome, however often it is retried').to.have.length(1);
    });

    it('retries a failed object with backoff and succeeds once the cluster allows it, without a new deployment object', async () => {
      const d = await deploy(
        broker.admin,
        stack,
        stream(
          namespace('shop'),
          crd(),
          widget('shop', 'w1', 4),
          configMap('shop', 'settings', { color: 'yellow' }),
          configMap('later', 'waiting', { x: 'y' }),
        ),
      );
      await eventFor(d, 'FAILURE');
      await kubectl.create('/api/v1/namespaces', { metadata: { name: 'later' } });
      await eventFor(d, 'SUCCESS');
      expect(await kubectl.get(cm('later', 'waiting'))).to.have.nested.property('data.x', 'y');
    });

    it('deletes the namespaces a failing pass created, and spares existing ones', async () => {
      const broken = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n  namespace: fresh\ndata:\n  n: 1\n`;
      const d = await deploy(
        broker.admin,
        stack,
        stream(namespace('shop'), namespace('fresh'), configMap('fresh', 'fine', { ok: 'yes' }), broken),
      );
      await eventFor(d, 'FAILURE');
      await eventually(() => kubectl.goneOrTerminating('/api/v1/namespaces/fresh'), { timeoutMs: 60_000, what: 'fresh rolled back' });
      const shop = await kubectl.get('/api/v1/namespaces/shop');
      expect(shop.metadata.deletionTimestamp).to.equal(undefined);
    });
  });

  describe('ownership (shared clusters)', () => {
    const STACK = 'k8s.brokkr.io/stack';
    const OWNER = 'brokkr.io/owner-id';
    /** A document of the manifest that opts in to adopting the live object of its name. */
    const adopting = (doc: string) =>
      doc.replace('  labels: {app: demo}', '  labels: {app: demo}\n  annotations: {brokkr.io/adopt-existing: "true"}');
    const secret = (name: string, labels: Record<string, string>, password: string) =>
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\n  namespace: default\n  labels: ${JSON.stringify(labels)}\nstringData:\n  password: ${password}\n`;

    async function newStack(): Promise<string> {
      const stack = await createStack(broker.admin);
      await target(broker.admin, agent.id, stack);
      return stack;
    }

    /** The admin-generator's grant on this agent (the stacks here are its). */
    async function grant(body: Record<string, unknown>): Promise<void> {
      const res = await broker.admin.put(`/generators/${await adminGeneratorId(broker.admin)}/registered-agents/${agent.id}/grant`, {
        grant: body,
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
    }

    it("refuses an object another stack's label claims (a FAILURE naming that stack), leaves it untouched, never prunes or deletes it", async () => {
      const [a, b] = [await newStack(), await newStack()];
      const dA = await deploy(broker.admin, a, stream(configMap('default', 'held-by-a', { who: 'a' })));
      await eventFor(dA, 'SUCCESS');
      const held = await kubectl.get(cm('default', 'held-by-a'));

      const takeover = await deploy(
        broker.admin,
        b,
        stream(configMap('default', 'held-by-a', { who: 'b' }), configMap('default', 'held-by-b', { who: 'b' })),
      );
      const failure = await eventFor(takeover, 'FAILURE', 'APPLIED');
      expect(failure.message).to.include(`ConfigMap 'default/held-by-a' belongs to stack ${a} (label ${STACK})`);
      expect(await kubectl.get(cm('default', 'held-by-b')), 'nothing of the refused pass is written').to.equal(undefined);

      // Stack B drops the object, then is deleted: neither its prune nor its deletion reaches A's object.
      const dropped = await deploy(broker.admin, b, stream(configMap('default', 'held-by-b', { who: 'b' })));
      await eventFor(dropped, 'SUCCESS');
      const marker = await deploy(broker.admin, b, '', true);
      await eventFor(marker, 'SUCCESS', 'DELETED');
      expect(await kubectl.get(cm('default', 'held-by-b'))).to.equal(undefined);
      const after = await kubectl.get(cm('default', 'held-by-a'));
      expect(after.metadata.resourceVersion, 'never written').to.equal(held.metadata.resourceVersion);
      expect(after.data).to.deep.equal({ who: 'a' });
      expect(after.metadata.labels).to.include({ [STACK]: a, [OWNER]: agent.id });
    });

    it('refuses an object no stack manages unless the grant allows adoption and the manifest adopts it; a pruned adopted object is given back, not deleted', async () => {
      await kubectl.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'unclaimed' }, data: { color: 'theirs' } });
      const off = await deploy(broker.admin, await newStack(), stream(adopting(configMap('default', 'unclaimed', { color: 'ours' }))));
      expect((await eventFor(off, 'FAILURE')).message).to.include('adoption is off for this stack here');
      await grant({ adoption: true });
      for (const name of ['shared', 'found']) {
        await kubectl.create('/api/v1/namespaces/default/configmaps', {
          metadata: { name, labels: { team: 'ops' } },
          data: { color: 'theirs', note: 'kept' },
        });
      }
      const [shared, found] = [await kubectl.get(cm('default', 'shared')), await kubectl.get(cm('default', 'found'))];
      const stack = await newStack();
      const d1 = await deploy(
        broker.admin,
        stack,
        stream(
          configMap('default', 'shared', { color: 'ours' }),
          configMap('default', 'found', { color: 'ours' }),
          configMap('default', 'mine', { a: '1' }),
        ),
      );
      const failure = await eventFor(d1, 'FAILURE');
      for (const name of ['shared', 'found']) {
        expect(failure.message).to.include(`ConfigMap 'default/${name}' already exists and no stack manages it`);
      }
      expect(failure.message).to.include('brokkr.io/adopt-existing: "true"');
      expect((await kubectl.get(cm('default', 'found'))).metadata.resourceVersion).to.equal(found.metadata.resourceVersion);
      expect(await kubectl.get(cm('default', 'mine'))).to.equal(undefined);

      const d2 = await deploy(
        broker.admin,
        stack,
        stream(adopting(configMap('default', 'found', { color: 'ours' })), configMap('default', 'mine', { a: '1' })),
      );
      await eventFor(d2, 'SUCCESS');
      const adopted = await kubectl.get(cm('default', 'found'));
      expect(adopted.data).to.deep.equal({ color: 'ours', note: 'kept' });
      expect(adopted.metadata.labels).to.include({ team: 'ops', [STACK]: stack, [OWNER]: agent.id });

      const d3 = await deploy(broker.admin, stack, stream(configMap('default', 'mine', { a: '2' })));
      await eventFor(d3, 'SUCCESS');
      const released = await eventually(
        async () => {
          const live = await kubectl.get(cm('default', 'found'));
          return live && !live.metadata.labels?.[STACK] ? live : undefined;
        },
        { timeoutMs: 60_000, what: 'the adopted object given back' },
      );
      expect(released.data, 'given back as it was last applied').to.deep.equal({ color: 'ours', note: 'kept' });
      expect(released.metadata.labels).to.include({ team: 'ops' }).and.not.have.any.keys(STACK, OWNER);
      expect(released.metadata.annotations ?? {}).to.not.have.any.keys('brokkr.io/adopted', 'k8s.brokkr.io/deployment-checksum');
      const untouched = await kubectl.get(cm('default', 'shared'));
      expect(untouched.metadata.resourceVersion, 'never adopted, never written').to.equal(shared.metadata.resourceVersion);
      expect(untouched.metadata.labels).to.deep.equal({ team: 'ops' });
    });

    it("previews an object the stack may not apply over as a conflict, with none of the live object's values", async () => {
      const other = randomUUID();
      const live = [
        { name: 'db-creds', labels: { [STACK]: other, team: 'payments' }, password: 'hunter2' },
        { name: 'legacy-creds', labels: { team: 'treasury' }, password: 'swordfish' },
        { name: 'adopt-creds', labels: { team: 'finance' }, password: 'opensesame' },
      ];
      for (const s of live) {
        await kubectl.create('/api/v1/namespaces/default/secrets', {
          metadata: { name: s.name, labels: s.labels, annotations: { rotated: `by-vault-${s.name}` } },
          stringData: { password: s.password },
        });
      }
      const stack = await newStack();
      const yaml = stream(
        secret('db-creds', { team: 'web' }, 'mine'),
        secret('legacy-creds', { team: 'web' }, 'mine'),
        secret('adopt-creds', { team: 'web' }, 'mine').replace('  labels:', '  annotations: {brokkr.io/adopt-existing: "true"}\n  labels:'),
      );
      const created = await broker.admin.post<Preview>(`/stacks/${stack}/previews`, { yaml_content: yaml });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const preview = await eventually(
        async () => {
          const p = (await broker.admin.get<Preview>(`/previews/${created.body.id}`)).body;
          return p.status === 'completed' ? p : undefined;
        },
        { timeoutMs: 60_000, what: 'the preview result' },
      );
      const result = preview.agents.find((r) => r.agent_id === agent.id)!;
      const byName = (name: string) => result.objects.find((o) => o.name === name)!;
      expect(byName('db-creds')).to.deep.include({ action: null, diff: [] });
      expect(byName('db-creds').error).to.equal(
        `conflict: Secret 'default/db-creds' belongs to stack ${other} (label ${STACK}): a stack never applies over another stack's object`,
      );
      expect(byName('legacy-creds')).to.deep.include({ action: null, diff: [] });
      expect(byName('legacy-creds').error).to.match(/^conflict: Secret 'default\/legacy-creds' already exists and no stack manages it/);
      const adopt = byName('adopt-creds');
      expect(adopt.action).to.equal('changed');
      expect(adopt.note).to.match(/adopted into this stack/);
      expect(adopt.diff.map((c) => c.path)).to.include.members(['data.password', 'metadata.labels.team']);
      expect(adopt.diff.every((c) => c.before === null)).to.equal(true);
      const text = JSON.stringify(result);
      for (const s of live) {
        for (const value of [s.password, Buffer.from(s.password).toString('base64'), s.labels.team, `by-vault-${s.name}`]) {
          expect(text, 'a live value in the preview').to.not.include(value);
        }
      }
      expect(await kubectl.get('/api/v1/namespaces/default/secrets/adopt-creds')).to.have.nested.property(
        'metadata.labels.team',
        'finance',
      );
    });
  });

  describe('removal', () => {
    it('deletes the objects of a stack that is no longer targeted', async () => {
      const stack = await createStack(broker.admin);
      await target(broker.admin, agent.id, stack);
      const d = await deploy(
        broker.admin,
        stack,
        stream(namespace('gone-soon'), configMap('gone-soon', 'a', { x: '1' }), configMap('default', 'untargeted', { x: '1' })),
      );
      await eventFor(d, 'SUCCESS');
      expect((await broker.admin.delete(`/agents/${agent.id}/targets/${stack}`)).status).to.equal(204);
      await eventFor(d, 'SUCCESS', 'DELETED');
      expect(await kubectl.get(cm('default', 'untargeted'))).to.equal(undefined);
      expect(await kubectl.goneOrTerminating('/api/v1/namespaces/gone-soon')).to.equal(true);
    });

    it('deletes the objects of a deleted stack (its deletion marker) and acknowledges the marker', async () => {
      const stack = await createStack(broker.admin);
      await target(broker.admin, agent.id, stack);
      const d = await deploy(broker.admin, stack, stream(configMap('default', 'doomed', { x: '1' })));
      await eventFor(d, 'SUCCESS');
      const known = new Set((await events()).map((e) => `${e.deployment_object_id}:${e.event_type}`));
      expect((await broker.admin.delete(`/stacks/${stack}`)).status).to.equal(204);
      await eventually(async () => !(await kubectl.get(cm('default', 'doomed'))), { timeoutMs: 60_000, what: 'doomed deleted' });
      const acknowledged = await eventually(
        async () =>
          (await events()).find(
            (e) => e.event_type === 'DELETED' && e.status === 'SUCCESS' && !known.has(`${e.deployment_object_id}:DELETED`),
          ),
        { timeoutMs: 60_000, what: 'DELETED event on the marker' },
      );
      expect(acknowledged.deployment_object_id, 'reported on the marker, not on the deleted object').to.not.equal(d.id);
      const state = await agent.client.get(`/agents/${agent.id}/target-state?mode=full`);
      expect(state.body.map((o: DeploymentObject) => o.stack_id)).to.not.include(stack);
    });

    it('deletes what an explicit deletion marker covers', async () => {
      const stack = await createStack(broker.admin);
      await target(broker.admin, agent.id, stack);
      const d = await deploy(broker.admin, stack, stream(configMap('default', 'marked', { x: '1' })));
      await eventFor(d, 'SUCCESS');
      const marker = await deploy(broker.admin, stack, '', true);
      await eventFor(marker, 'SUCCESS', 'DELETED');
      expect(await kubectl.get(cm('default', 'marked'))).to.equal(undefined);
    });
  });

  describe('restart', () => {
    it('converges after a SIGKILL without deleting anything it should keep', async () => {
      const stack = await createStack(broker.admin);
      await target(broker.admin, agent.id, stack);
      const d1 = await deploy(
        broker.admin,
        stack,
        stream(configMap('default', 'keep', { v: '1' }), configMap('default', 'drop', { v: '1' })),
      );
      await eventFor(d1, 'SUCCESS');
      const keep = await kubectl.get(cm('default', 'keep'));
      await proc!.kill();
      const d2 = await deploy(
        broker.admin,
        stack,
        stream(configMap('default', 'keep', { v: '1' }), configMap('default', 'new', { v: '2' })),
      );
      const before = await events();
      await startAgentProcess();
      await eventFor(d2, 'SUCCESS', 'UPDATED');
      await eventually(async () => !(await kubectl.get(cm('default', 'drop'))), { timeoutMs: 60_000, what: 'drop pruned' });
      const kept = await kubectl.get(cm('default', 'keep'));
      expect(kept.metadata.uid, 'never deleted and re-created').to.equal(keep.metadata.uid);
      expect(kept.metadata.annotations['brokkr.io/deployment-object-id']).to.equal(d2.id);
      expect(await kubectl.get(cm('default', 'shared')), "someone else's object survives restarts").to.not.equal(undefined);
      expect(await kubectl.get(cm('shop', 'settings'))).to.have.nested.property('data.color', 'yellow');
      // Nothing reported before the restart is reported again.
      await eventually(async () => (await proc!.output()).includes('deployment object applied'), {
        timeoutMs: 60_000,
        what: 'first pass after restart',
      });
      const after = await events();
      const repeated = after.filter((e) => e.deployment_object_id !== d2.id).length - before.length;
      expect(repeated).to.equal(0);
    });
  });

  /**
   * Maintenance windows enforced by the agent (docs/maintenance-windows.md), on this file's
   * kube-apiserver, shared by two agents of their own (each owns only its own objects; the agent
   * above owns none of theirs and carries no label a window selects): a deny window selects the
   * `env=prod` agent, which then neither applies nor reports an apply while the `env=dev` agent
   * goes ahead; a hub that keeps serving the versions and stops serving the schedule changes no
   * object; and the held version goes out once the window closes. Every wait is for an event or a
   * state, never for a time.
   */
  describe('maintenance windows (two agents of their own)', function () {
    this.timeout(240_000);
    let proxy: ScheduleProxy;
    let prod: RegisteredAgent;
    let dev: RegisteredAgent;
    let prodStack: string;
    let devStack: string;
    const procs: RunningAgentProcess[] = [];

    const PROD_AGENT_NS = 'brokkr-agent-prod';
    const spawnProd = () => spawnAgent(proxy.url, prod, kube.kubeconfigPath, { env: { BROKKR__AGENT__NAMESPACE: PROD_AGENT_NS } });
    const manifest = (ns: string, version: string) => stream(namespace(ns), configMap(ns, 'settings', { version }));
    const cmPath = (ns: string) => `/api/v1/namespaces/${ns}/configmaps/settings`;
    const eventOf = (agent: RegisteredAgent, d: DeploymentObject, match: (e: AgentEvent) => boolean, what: string) =>
      eventually(async () => (await agentEvents(broker.admin, agent.id)).find((e) => e.deployment_object_id === d.id && match(e)), {
        timeoutMs: 90_000,
        what,
      });
    const applied = (e: AgentEvent) => (e.event_type === 'APPLIED' || e.event_type === 'UPDATED') && e.status === 'SUCCESS';
    const blocked = (e: AgentEvent) => e.event_type === 'window_blocked' && e.status === 'BLOCKED';

    before(async () => {
      proxy = await ScheduleProxy.start(broker.url);
      [prod, dev] = [await registerAgent(broker.admin), await registerAgent(broker.admin)];
      for (const [agent, label] of [
        [prod, 'env=prod'],
        [dev, 'env=dev'],
      ] as const)
        expect((await broker.admin.post(`/agents/${agent.id}/labels`, { agent_id: agent.id, label })).status).to.equal(201);
      [prodStack, devStack] = [await createStack(broker.admin), await createStack(broker.admin)];
      await target(broker.admin, prod.id, prodStack);
      await target(broker.admin, dev.id, devStack);
      // The prod agent reaches the hub through the proxy (HTTP only), which can withhold its schedule;
      // it keeps the schedule in a ConfigMap of its own namespace.
      expect(
        (await kubectl.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: PROD_AGENT_NS } }))
          .status,
      ).to.equal(201);
      procs.push(await spawnProd(), await spawnAgent(broker.url, dev, kube.kubeconfigPath));
    });

    after(async () => {
      await Promise.allSettled(procs.map((p) => p.stop()));
      await proxy?.close();
    });

    afterEach(function () {
      if (this.currentTest?.state === 'failed') for (const p of procs) console.log(p.output().slice(-6000));
    });

    it('holds every version on the prod agent during its deny window, also from a hub that stops serving the schedule and across a restart, and applies it when the window closes', async () => {
      const first = await deploy(broker.admin, prodStack, manifest('shop-prod', 'v1'));
      await eventOf(prod, first, applied, 'prod applies v1 before any window');
      const before = (await kubectl.get<{ metadata: { resourceVersion: string } }>(cmPath('shop-prod')))!.metadata.resourceVersion;

      // A deny window open now (it started a minute ago) for a day, on the agents labelled env=prod.
      const start = Date.now() - 60_000;
      const window = await broker.admin.post('/maintenance-windows', {
        name: 'prod freeze',
        type: 'deny',
        rrule: `DTSTART:${icalUtc(start)}\nRRULE:FREQ=DAILY`,
        duration: 'PT1H',
        agent_labels: ['env=prod'],
      });
      expect(window.status, window.text).to.equal(201);

      const second = await deploy(broker.admin, prodStack, manifest('shop-prod', 'v2'));
      const devVersion = await deploy(broker.admin, devStack, manifest('shop-dev', 'v2'));
      await eventOf(dev, devVersion, applied, 'dev applies v2 (no window selects it)');
      const held = await eventOf(prod, second, blocked, 'prod reports v2 held by the window');
      expect(held.message).to.include(window.body.id).and.include(prodStack);

      // The hub goes on serving versions but withholds the schedule: the agent keeps the last one it got.
      proxy.withholdSchedule = true;
      const third = await deploy(broker.admin, prodStack, manifest('shop-prod', 'v3'));
      await eventOf(prod, third, blocked, 'prod reports v3 held, from a hub that served no schedule');
      const events = await agentEvents(broker.admin, prod.id);
      expect(events.filter((e) => e.deployment_object_id !== first.id && applied(e))).to.deep.equal([]);
      // Once per held version, however many passes and schedule reads came between.
      expect(events.filter((e) => e.deployment_object_id === second.id && blocked(e))).to.have.length(1);
      const during = (await kubectl.get<{ metadata: { resourceVersion: string }; data: { version: string } }>(cmPath('shop-prod')))!;
      expect([during.metadata.resourceVersion, during.data.version]).to.deep.equal([before, 'v1']);

      // Restarted while the hub still withholds the schedule: the agent holds the schedule it kept in its cluster.
      await procs[0]!.stop();
      procs[0] = await spawnProd();
      const fourth = await deploy(broker.admin, prodStack, manifest('shop-prod', 'v4'));
      await eventOf(prod, fourth, blocked, 'the restarted prod agent reports v4 held');
      const restarted = (await kubectl.get<{ metadata: { resourceVersion: string } }>(cmPath('shop-prod')))!;
      expect(restarted.metadata.resourceVersion).to.equal(before);

      // The window now closes a few seconds after this change reaches the agent; the agent applies v4 at that boundary by itself.
      proxy.withholdSchedule = false;
      const closesAt = Math.ceil((Date.now() + 5000) / 1000) * 1000;
      const patched = await broker.admin.patch(`/maintenance-windows/${window.body.id}`, {
        duration: Math.round((closesAt - Math.floor(start / 1000) * 1000) / 1000),
      });
      expect(patched.status, patched.text).to.equal(200);
      const done = await eventOf(prod, fourth, applied, 'prod applies v4 once the window closed');
      expect(Date.parse(done.created_at)).to.be.at.least(closesAt);
      expect((await kubectl.get<{ data: { version: string } }>(cmPath('shop-prod')))!.data.version).to.equal('v4');
      // v2 and v3 were superseded while held: they were never applied.
      const superseded = (await agentEvents(broker.admin, prod.id)).filter((e) => [second.id, third.id].includes(e.deployment_object_id));
      expect(superseded.filter(applied)).to.deep.equal([]);
    });

    it('claims no work order on the prod agent while a window for the whole agent holds them; an emergency bypass lets it run', async () => {
      const window = await broker.admin.post('/maintenance-windows', {
        name: 'no jobs',
        type: 'deny',
        rrule: `DTSTART:${icalUtc(Date.now() - 60_000)}\nRRULE:FREQ=DAILY`,
        duration: 'PT1H',
        agent_labels: ['env=prod'],
        gates: ['work_orders'],
      });
      expect(window.status, window.text).to.equal(201);
      // The prod agent holds the window once it has kept it in its cluster.
      await eventually(
        async () => {
          const cm = await kubectl.get<{ data?: { schedule?: string } }>(
            `/api/v1/namespaces/${PROD_AGENT_NS}/configmaps/brokkr-agent-schedule-${prod.id}`,
          );
          return cm?.data?.schedule?.includes(window.body.id);
        },
        { timeoutMs: 60_000, what: 'the prod agent kept the window' },
      );
      const orderFor = async (agent: RegisteredAgent, ns: string) => {
        const res = await broker.admin.post('/work-orders', {
          work_type: 'custom',
          yaml_content: stream(namespace(ns), configMap(ns, 'job-input', { run: '1' })),
          max_retries: 0,
          backoff_seconds: 1,
          targeting: { agent_ids: [agent.id] },
        });
        expect(res.status, res.text).to.equal(201);
        return res.body.id as string;
      };
      const finished = (id: string) =>
        eventually(async () => ((await broker.admin.get(`/work-order-log/${id}`)).status === 200 ? true : undefined), {
          timeoutMs: 60_000,
          what: `work order ${id} in the log`,
        });
      const [prodOrder, devOrder] = [await orderFor(prod, 'wo-prod'), await orderFor(dev, 'wo-dev')];
      await finished(devOrder);
      expect((await broker.admin.get(`/work-orders/${prodOrder}`)).body.status).to.equal('PENDING');
      expect(await kubectl.get('/api/v1/namespaces/wo-prod')).to.equal(undefined);

      const bypass = await broker.admin.post(`/maintenance-windows/${window.body.id}/bypasses`, {
        reason: 'urgent job',
        expires_at: new Date(Date.now() + 3600_000).toISOString(),
      });
      expect(bypass.status, bypass.text).to.equal(201);
      await finished(prodOrder);
      expect(await kubectl.get('/api/v1/namespaces/wo-prod')).to.not.equal(undefined);
    });

    it('reports drift on the prod agent but corrects it only once its drift-correction window closes', async () => {
      const start = Date.now() - 60_000;
      const window = await broker.admin.post('/maintenance-windows', {
        name: 'hands off',
        type: 'deny',
        rrule: `DTSTART:${icalUtc(start)}\nRRULE:FREQ=DAILY`,
        duration: 'PT1H',
        agent_labels: ['env=prod'],
        gates: ['drift_correction'],
      });
      expect(window.status, window.text).to.equal(201);
      await eventually(
        async () => {
          const cm = await kubectl.get<{ data?: { schedule?: string } }>(
            `/api/v1/namespaces/${PROD_AGENT_NS}/configmaps/brokkr-agent-schedule-${prod.id}`,
          );
          return cm?.data?.schedule?.includes(window.body.id);
        },
        { timeoutMs: 60_000, what: 'the prod agent kept the window' },
      );
      const edit = await kubectl.call(
        'PATCH',
        `${cmPath('shop-prod')}?fieldManager=hotfix`,
        { data: { version: 'hand-made' } },
        'application/merge-patch+json',
      );
      expect(edit.status, JSON.stringify(edit.body)).to.equal(200);
      interface Record {
        state: string;
        closed_at: string | null;
        fields: { path: string }[];
      }
      const records = async () => (await broker.admin.get<{ items: Record[] }>(`/stacks/${prodStack}/drift`)).body.items;
      await eventually(async () => (await records()).find((r) => r.state === 'open' && r.fields.some((f) => f.path === '/data/version')), {
        timeoutMs: 60_000,
        what: 'the hand edit reported as drift',
      });
      expect((await kubectl.get<{ data: { version: string } }>(cmPath('shop-prod')))!.data.version).to.equal('hand-made');

      // The window closes a few seconds after this change reaches the agent: then, and not before, it corrects.
      const closesAt = Math.ceil((Date.now() + 5000) / 1000) * 1000;
      const patched = await broker.admin.patch(`/maintenance-windows/${window.body.id}`, {
        duration: Math.round((closesAt - Math.floor(start / 1000) * 1000) / 1000),
      });
      expect(patched.status, patched.text).to.equal(200);
      const corrected = await eventually(async () => (await records()).find((r) => r.state === 'corrected'), {
        timeoutMs: 60_000,
        what: 'the drift corrected once the window closed',
      });
      expect(Date.parse(corrected.closed_at!)).to.be.at.least(closesAt);
      expect((await kubectl.get<{ data: { version: string } }>(cmPath('shop-prod')))!.data.version).to.equal('v4');
    });
  });
});
