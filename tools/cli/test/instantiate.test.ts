import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { generatePak } from '@brokkr/pak';
import type { RenderInputs } from '@brokkr/contracts';
import { TEMPLATE_ENGINE_VERSION } from '@brokkr/templates';
import { buildRoot, checkIntent, publicKeyFromPem, renderInputsContent, type TrustView } from '@brokkr/trust';
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

const TEMPLATE = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ name }}\ndata:\n  greeting: "{{ greeting }}"\n';
const SCHEMA = JSON.stringify({ type: 'object', properties: { name: { type: 'string' }, greeting: { type: 'string' } } });

describe('brokkr instantiate (built CLI against a real hub)', function () {
  this.timeout(5 * 60_000);
  const infra = useTestInfra({ nats: true });
  let hub: TestHub;

  before(async () => {
    await buildCli();
    hub = await startHub(infra, generatePak());
  });

  after(async () => {
    await hub?.stop();
  });

  it('--sign signs the template’s inputs: the hub relays them with that signature, and an agent’s checks take it', async () => {
    const generator = await createGenerator(hub);
    const agent = await createActiveAgent(hub, generator.id);
    const env = hub.env(generator.pak);
    const stack = uniqueName('signed-template');
    const dir = await manifestDir(stack, { 'a.yaml': configMap('first', 'v1') });
    expect((await runCli(['apply', '-f', dir, '--stack', stack, '--target', agent.name], { env })).code).to.equal(0);
    const created = await hub.admin
      .as(generator.pak)
      .post('/templates', { name: uniqueName('tpl'), template_content: TEMPLATE, parameters_schema: SCHEMA });
    expect(created.status, created.text).to.equal(201);
    const keys = await fs.mkdtemp(path.join(os.tmpdir(), 'brokkr-keys-'));
    expect((await runCli(['trust', 'keygen', 'ci', '--dir', keys])).code).to.equal(0);

    const parameters = { name: 'greeter', greeting: 'hello' };
    const args = ['instantiate', created.body.id as string, '--stack', stack, '-p', JSON.stringify(parameters)];
    const res = await runCli([...args, '--sign', path.join(keys, 'ci.key'), '-o', 'json'], { env });
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stderr).to.match(/signature stored \(template inputs sha256 [0-9a-f]{12}…, rendered by each agent\)/);
    const object = JSON.parse(res.stdout).deployment_object as { id: string; stack_id: string; yaml_content: string };
    expect(object.yaml_content).to.contain('greeting: "hello"');

    const relayed = await agent.client.get(`/agents/${agent.id}/render-inputs/${object.id}`);
    expect(relayed.status, JSON.stringify(relayed.body)).to.equal(200);
    const body = relayed.body as RenderInputs;
    expect(body).to.deep.include({
      kind: 'template',
      template: { content: TEMPLATE, parameters_schema: SCHEMA, parameters },
      not_signable: null,
    });
    const content = renderInputsContent({
      kind: 'template',
      template: body.template!.content,
      parametersSchema: body.template!.parameters_schema,
      parameters: body.template!.parameters,
      renderer: TEMPLATE_ENGINE_VERSION,
    });
    const pub = publicKeyFromPem(await fs.readFile(path.join(keys, 'ci.pub'), 'utf8'));
    const view: TrustView = {
      root: buildRoot({ version: 1, rootKeys: [pub], threshold: 1, generators: [{ name: 'ci', keys: [pub], stacks: ['*'] }] }),
      revocations: undefined,
      stale: undefined,
      keyless: undefined,
      identity: { name: agent.name, cluster: 'c', labels: [] },
      now: new Date(),
    };
    const verdict = checkIntent(
      view,
      { stackId: object.stack_id, content, deletion: false, signed: body.signature, rendered: 'template' },
      undefined,
    );
    expect(verdict.ok, JSON.stringify(verdict)).to.equal(true);
    expect(verdict.ok && verdict.statement.predicate).to.deep.include({ kind: 'template', renderer: TEMPLATE_ENGINE_VERSION });

    // Without --sign: the object is made, and no signature names its inputs.
    const unsigned = await runCli([...args.slice(0, -1), JSON.stringify({ ...parameters, greeting: 'unsigned' }), '-o', 'json'], { env });
    expect(unsigned.code, unsigned.stderr).to.equal(0);
    const other = JSON.parse(unsigned.stdout).deployment_object as { id: string };
    const otherInputs = await agent.client.get(`/agents/${agent.id}/render-inputs/${other.id}`);
    expect((otherInputs.body as RenderInputs).template?.parameters).to.deep.equal({ ...parameters, greeting: 'unsigned' });
    await fs.rm(keys, { recursive: true, force: true });
  });
});
