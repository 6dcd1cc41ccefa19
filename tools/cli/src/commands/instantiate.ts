import fs from 'node:fs';
import type { Command } from 'commander';
import type { DeploymentObject, StackTemplate } from '@brokkr/contracts';
import { TEMPLATE_ENGINE_VERSION } from '@brokkr/templates/version';
import { renderInputsContent, sha256Hex, type TemplateInputValues } from '@brokkr/trust';
import { hubFor, print, sayFor, formatFor } from '../context.ts';
import { CliError } from '../errors.ts';
import type { Hub } from '../http.ts';
import { render } from '../output.ts';
import { findStack } from '../resolve.ts';
import { readLayers, refuseUnsignedLayers, replaceLayers } from './overrides.ts';
import { signRenderInputs, storeSignature, type SignOptions } from './signing.ts';

interface InstantiateOptions extends Partial<Omit<SignOptions, 'key'>> {
  stack: string;
  parameters?: string;
  /** A generator key: the template's inputs are signed before the object is made. */
  sign?: string;
  /** The stack's override layers become exactly this file's (signed with the inputs under --sign). */
  layers?: string;
}

const collect = (value: string, previous: string[]) => [...previous, value];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function registerInstantiate(program: Command): void {
  program
    .command('instantiate <template-id>')
    .summary('Render a template version into a new deployment object of a stack (optionally signed by its inputs)')
    .description(
      'POST /stacks/{id}/deployment-objects/from-template with the parameters. With --sign, first signs the template’s ' +
        'inputs (its text, parameters schema and the parameters, for this CLI’s template engine) and stores the signature: ' +
        'agents requiring signatures render the template themselves and apply only their render (docs/signatures.md, "Templates").',
    )
    .requiredOption('--stack <name|id>', 'the stack')
    .option('-p, --parameters <json|@file>', 'the parameters: JSON, or @ and a JSON file (default: {})')
    .option('--sign <key>', 'sign the template’s inputs with this generator key (PEM) before instantiating')
    .option('--signer <name>', "with --sign: the generator's name in the trust root (default: BROKKR_SIGNER, else the key file's name)")
    .option('--signature-version <n>', 'with --sign: the monotonic version signed (default: the current time in seconds)')
    .option('--sign-for <agent>', 'with --sign: only this agent (name, or cluster/name) may apply it; repeatable', collect, [])
    .option('--sign-for-label <label>', 'with --sign: agents configured with this label may apply it; repeatable', collect, [])
    .option('--allow-rollback-to <n>', 'with --sign: an automatic rollback may return to this earlier version; repeatable', collect, [])
    .option('--expires <duration>', 'with --sign: the signature is good for this long (e.g. 720h)')
    .option(
      '--layers <file>',
      "the stack's override layers become exactly this file's (one layer per YAML document; others are deleted); with --sign they are signed with the inputs",
    )
    .action(async (templateId: string, options: InstantiateOptions, cmd: Command) => {
      process.exitCode = await instantiate(cmd, templateId, options);
    });
}

function readParameters(value: string | undefined): unknown {
  if (value === undefined) return {};
  let text = value;
  if (value.startsWith('@')) {
    try {
      text = fs.readFileSync(value.slice(1), 'utf8');
    } catch {
      throw new CliError(`${value.slice(1)}: the parameters file cannot be read`);
    }
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CliError(`--parameters: not JSON (${(err as Error).message.split('\n')[0]})`);
  }
}

/** The template version exactly as the hub will render it: what the signature binds. */
export function templateInputs(template: StackTemplate, parameters: unknown): TemplateInputValues {
  return {
    kind: 'template',
    template: template.template_content,
    parametersSchema: template.parameters_schema,
    parameters,
    renderer: TEMPLATE_ENGINE_VERSION,
  };
}

/** Signs the inputs and stores the signature, before the object is made (agents woken by it find it). */
async function signTemplate(hub: Hub, stackId: string, inputs: TemplateInputValues, options: InstantiateOptions): Promise<string> {
  const signOptions: SignOptions = { signFor: [], signForLabel: [], allowRollbackTo: [], ...options, key: options.sign! };
  await storeSignature(hub, stackId, signRenderInputs(signOptions, stackId, inputs));
  return `signature stored (template inputs sha256 ${sha256Hex(renderInputsContent(inputs)).slice(0, 12)}…, rendered by each agent)`;
}

async function instantiate(cmd: Command, templateId: string, options: InstantiateOptions): Promise<number> {
  if (!UUID.test(templateId)) throw new CliError(`"${templateId}" is not a template id (a UUID)`);
  const parameters = readParameters(options.parameters);
  const hub = hubFor(cmd);
  const format = formatFor(cmd);
  const say = sayFor(format);
  const layers = options.layers ? readLayers(options.layers) : undefined;
  const stack = await findStack(hub, options.stack);
  const signed = layers ? await replaceLayers(hub, stack, layers, say) : undefined;
  if (options.sign) {
    if (!signed) await refuseUnsignedLayers(hub, stack);
    const template = await hub.get<StackTemplate>(`/templates/${templateId}`);
    say(await signTemplate(hub, stack.id, { ...templateInputs(template, parameters), layers: signed }, options));
  }
  const object = await hub.post<DeploymentObject>(`/stacks/${stack.id}/deployment-objects/from-template`, {
    template_id: templateId,
    parameters,
  });
  say(`stack "${stack.name}": deployment object ${object.id} created (sequence ${object.sequence_id}) from template ${templateId}`);
  print(render({ stack, deployment_object: object }, format, () => ''));
  return 0;
}
