import { expect } from 'chai';
import { parse } from 'yaml';
import { useTestInfra } from '@brokkr/testkit';
import {
  buildCli,
  configMap,
  createActiveAgent,
  createGenerator,
  manifestDir,
  runCli,
  startHub,
  uniqueName,
  type TestHub,
} from './support.ts';

describe('brokkr get / describe / windows (built CLI against a real hub)', () => {
  const infra = useTestInfra({ nats: true });
  let hub: TestHub;
  let agent: { id: string; name: string };
  let stack: { id: string; name: string };
  let objectId: string;
  let workOrderId: string;

  before(async function () {
    this.timeout(180_000);
    await buildCli();
    hub = await startHub(infra);
    const generator = await createGenerator(hub);
    agent = await createActiveAgent(hub, generator.id);
    const name = uniqueName('shop');
    const dir = await manifestDir(name, { 'cm.yaml': configMap('shop', '1') });
    const applied = await runCli(['apply', '-f', dir, '--target', agent.id, '-o', 'json'], { env: hub.env(generator.pak) });
    expect(applied.code, applied.stderr).to.equal(0);
    const summary = JSON.parse(applied.stdout);
    stack = summary.stack;
    objectId = summary.deployment_object.id;
    const wo = await hub.admin.post('/work-orders', {
      work_type: 'custom',
      yaml_content: configMap('job', '1'),
      targeting: { agent_ids: [agent.id] },
    });
    expect(wo.status).to.equal(201);
    workOrderId = wo.body.id;
  });

  after(async () => {
    await hub?.stop();
  });

  const cli = (...args: string[]) => runCli(args, { env: hub.env() });

  it('get agents: a table with a header row and the agent', async () => {
    const res = await cli('get', 'agents');
    expect(res.code, res.stderr).to.equal(0);
    const [header, ...rows] = res.stdout.trimEnd().split('\n');
    expect(header).to.match(/^NAME\s+CLUSTER\s+STATUS\s+HEARTBEAT\s+K8S\s+ID$/);
    expect(rows.find((r) => r.startsWith(agent.name)))
      .to.match(/ACTIVE/)
      .and.include(agent.id);
  });

  it('get agents -o json and -o yaml: the hub objects unchanged', async () => {
    const json = JSON.parse((await cli('get', 'agents', '-o', 'json')).stdout);
    const fromApi = (await hub.admin.get('/agents')).body;
    expect(json).to.deep.equal(fromApi);
    const yaml = parse((await cli('-o', 'yaml', 'get', 'agents')).stdout);
    expect(yaml).to.deep.equal(fromApi);
  });

  it('get one agent and one stack by name or id', async () => {
    expect(JSON.parse((await cli('get', 'agent', agent.name, '-o', 'json')).stdout).id).to.equal(agent.id);
    expect(JSON.parse((await cli('get', 'stack', stack.id, '-o', 'json')).stdout).name).to.equal(stack.name);
    const table = (await cli('get', 'stacks')).stdout;
    expect(table).to.match(/^NAME\s+GENERATOR\s+AGE\s+DESCRIPTION\s+ID/);
    expect(table).to.include(stack.name);
  });

  it('get deployment-objects --stack: sequence and checksum', async () => {
    const res = await cli('get', 'do', '--stack', stack.name);
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stdout).to.match(/^SEQUENCE\s+CHECKSUM\s+MARKER\s+AGE\s+ID/);
    expect(res.stdout).to.include(objectId);
    const yaml = parse((await cli('get', 'deployment-object', objectId, '-o', 'yaml')).stdout);
    expect(yaml.id).to.equal(objectId);
    expect(yaml.yaml_content).to.include('name: shop');
  });

  it('get work-orders, filtered by status', async () => {
    const res = await cli('get', 'wo', '--status', 'PENDING');
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stdout).to.match(/^TYPE\s+STATUS\s+CLAIMED BY\s+RETRIES\s+AGE\s+ID/);
    expect(res.stdout).to.include(workOrderId);
    const none = await cli('get', 'work-orders', '--status', 'CLAIMED');
    expect(none.stdout).to.equal('No work-orders found.\n');
  });

  it('describe agent: fields, stacks and recent events', async () => {
    const ev = { agent_id: agent.id, deployment_object_id: objectId, event_type: 'APPLIED', status: 'SUCCESS', message: 'ok' };
    expect((await hub.admin.post(`/agents/${agent.id}/events`, ev)).status).to.equal(201);
    const res = await cli('describe', 'agent', agent.name);
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stdout)
      .to.match(/^Name:\s+\S+/m)
      .and.include(`Status:`);
    expect(res.stdout).to.include(`${stack.name} (${stack.id})`);
    expect(res.stdout).to.match(/APPLIED\s+SUCCESS\s+ok/);
    const json = JSON.parse((await cli('describe', 'agent', agent.id, '-o', 'json')).stdout);
    expect(json.agent.id).to.equal(agent.id);
    expect(json.stacks.map((s: { id: string }) => s.id)).to.include(stack.id);
    expect(json.events[0].status).to.equal('SUCCESS');
  });

  it('describe stack and deployment-object (with health) and work-order', async () => {
    const stackText = (await cli('describe', 'stack', stack.name)).stdout;
    expect(stackText).to.include(`ID:`).and.include(stack.id).and.include(objectId);
    const health = { deployment_objects: [{ id: objectId, status: 'degraded', checked_at: new Date().toISOString() }] };
    expect((await hub.admin.patch(`/agents/${agent.id}/health-status`, health)).status).to.equal(200);
    const objText = (await cli('describe', 'do', objectId)).stdout;
    expect(objText).to.match(/Health:\s+degraded/);
    expect(objText).to.include('name: shop');
    const objYaml = parse((await cli('describe', 'do', objectId, '-o', 'yaml')).stdout);
    expect(objYaml.health.health_records[0].agent_id).to.equal(agent.id);
    const wo = (await cli('describe', 'wo', workOrderId)).stdout;
    expect(wo)
      .to.match(/Type:\s+custom/)
      .and.match(/Status:\s+PENDING/);
  });

  it('bad input: unknown resource kind, unknown name, malformed id, unknown -o', async () => {
    const kind = await cli('get', 'pods');
    expect(kind.code).to.equal(1);
    expect(kind.stderr).to.include('unknown resource "pods"');
    const missing = await cli('describe', 'stack', 'no-such-stack');
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.include('stack "no-such-stack" not found');
    const badId = await cli('get', 'do', 'not-a-uuid');
    expect(badId.code).to.equal(1);
    expect(badId.stderr).to.include('is not a deployment object id');
    const noStack = await cli('get', 'do');
    expect(noStack.stderr).to.include('--stack');
    const format = await cli('get', 'agents', '-o', 'xml');
    expect(format.code).to.equal(1);
    expect(format.stderr).to.include('xml');
    const unknownId = await cli('get', 'wo', '00000000-0000-4000-8000-000000000000');
    expect(unknownId.code).to.equal(1);
    expect(unknownId.stderr).to.match(/^work_order_not_found: /m);
  });

  // Maintenance windows by name on the same hub: no window selects this file's agent (it has no env=prod label).
  describe('brokkr windows', () => {
    it('creates a window, lists it, refuses a bad rule with the hub’s reason, and deletes it by name', async () => {
      const name = uniqueName('freeze');
      const rrule = 'DTSTART;TZID=Europe/Berlin:20260103T020000\\nRRULE:FREQ=WEEKLY;BYDAY=SA';
      const created = await cli(
        'windows',
        'create',
        name,
        '--type',
        'deny',
        '--rrule',
        rrule,
        '--duration',
        'PT2H',
        '--agent-label',
        'env=prod',
        '-o',
        'json',
      );
      expect(created.code, created.stderr).to.equal(0);
      const window = JSON.parse(created.stdout);
      expect(window).to.deep.include({ name, type: 'deny', duration_seconds: 7200, agent_labels: ['env=prod'] });
      expect(window.rrule).to.equal(rrule.replace('\\n', '\n'));

      const listed = await cli('windows', 'list');
      expect(listed.code, listed.stderr).to.equal(0);
      const [header, ...rows] = listed.stdout.trimEnd().split('\n');
      expect(header).to.match(/^NAME\s+TYPE\s+DURATION\s+AGENTS\s+GATES\s+BYPASSED-UNTIL\s+ID$/);
      expect(rows.find((r) => r.startsWith(name)))
        .to.include('deny')
        .and.include('7200s')
        .and.include('env=prod')
        .and.include(window.id);

      const bad = await cli(
        'windows',
        'create',
        uniqueName('bad'),
        '--type',
        'deny',
        '--rrule',
        'DTSTART:20260103T020000\\nRRULE:FREQ=DAILY',
        '--duration',
        '60',
      );
      expect(bad.code).to.not.equal(0);
      expect(bad.stderr).to.include('TZID');

      const deleted = await cli('windows', 'delete', name);
      expect(deleted.code, deleted.stderr).to.equal(0);
      expect((await hub.admin.get(`/maintenance-windows/${window.id}`)).status).to.equal(404);
    });
  });
});
