import fs from 'node:fs';
import type { Command } from 'commander';
import { formatFor, hubFor, print, sayFor } from '../context.ts';
import { CliError, HubError } from '../errors.ts';
import type { Hub } from '../http.ts';
import { render, renderTable, truncate, type Format } from '../output.ts';
import { findAgent, findGenerator, findStackOrUndefined } from '../resolve.ts';
import { followRollout, rolloutOf, type RolloutWaitResult } from './follow-rollout.ts';
import {
  UUID_RE,
  type Agent,
  type AuthPayload,
  type DeploymentObject,
  type NewOverride,
  type Stack,
  type StackLabel,
  type StackRolloutPolicy,
} from '../types.ts';
import { readManifests, SETTINGS_FILE, type Manifests } from './manifests.ts';
import { chartContent, kustomizeContent, type ChartOptions, type SourceContent } from './sources.ts';

/** What `apply` sends: a directory's YAML, or a chart or an overlay the hub renders for each agent. */
type Content = ({ kind: 'yaml' } & Manifests) | ({ kind: 'source' } & SourceContent);

async function readContent(options: ApplyOptions): Promise<Content> {
  const given = [options.file, options.chart, options.kustomize].filter((o) => o !== undefined);
  if (given.length !== 1) throw new CliError('give exactly one of -f <dir|file>, --chart <name> or -k <overlay dir>');
  if (options.file) return { kind: 'yaml', ...readManifests(options.file) };
  if (options.chart)
    return {
      kind: 'source',
      ...chartContent({ chart: options.chart, repo: options.repo, chartVersion: options.chartVersion, values: options.values }),
    };
  return { kind: 'source', ...(await kustomizeContent(options.kustomize!, options.kustomizeRoot)) };
}
import { ensureDependencies, resolveDependsOn } from './dependencies.ts';
import { renderRollout } from './rollout.ts';
import { signContent, signRenderInputs, storeSignature, type SignOptions } from './signing.ts';
import { readLayers, refuseUnsignedLayers, replaceLayers } from './overrides.ts';
import { LAYERS_ENGINE_VERSION, type SignedLayer } from '@brokkr/overrides';
import { renderInputsContent, sha256Hex, type RenderInputValues } from '@brokkr/trust';
import { parseDuration, waitForRollout, type WaitResult } from './wait.ts';

interface ApplyOptions extends Partial<SignOptions>, Partial<ChartOptions> {
  file?: string;
  kustomize?: string;
  kustomizeRoot?: string;
  values: string[];
  /** A generator key (PEM): the content is signed with it and the signature stored before the content. */
  sign?: string;
  /** A signature made elsewhere (e.g. keyless by cosign or sigstore-js), stored as given. */
  signature?: string;
  /** With --sign and a chart or an overlay: the brokkr-render version the agents render with. */
  renderer?: string;
  /** The stack's override layers become exactly this file's (signed with the render inputs under --sign). */
  layers?: string;
  stack?: string;
  generator?: string;
  target: string[];
  label: string[];
  dependsOn: string[];
  wait?: boolean;
  timeout: string;
  interval: string;
}

/** The hub and where progress lines go. */
interface Io {
  hub: Hub;
  say: (line: string) => void;
}

const collect = (value: string, previous: string[]) => [...previous, value];

export function registerApply(program: Command): void {
  program
    .command('apply')
    .summary('Apply a directory of Kubernetes YAML as one stack; --wait follows the rollout')
    .description(
      'Apply a directory (or file) of Kubernetes YAML as one stack: creates the stack if missing, adds the given ' +
        'targets and labels, and creates a deployment object only when the content changed (checksum of the newest one).',
    )
    .addHelpText(
      'after',
      `\nOptional ${SETTINGS_FILE} in the directory (not part of the manifests; flags win):\n` +
        '  stack: name      description: text      generator: name|id (admin PAK)\n' +
        '  targets: [agent names or ids]           labels: [stack labels]\n' +
        "\nWith a rollout policy on the stack, --wait follows the rollout wave by wave (the stack owner's PAK is enough):\n" +
        '  exit 0 when it succeeded (or was promoted), 1 when it was rolled back, failed, aborted or superseded.\n' +
        'Exit codes with --wait: 0 every agent applied, 1 an agent reported a failure (or any error), 2 timeout.',
    )
    .option('-f, --file <path>', 'a directory (its *.yaml / *.yml files, sorted by name) or one YAML file')
    .option('--chart <name>', 'a Helm chart (with --repo and --chart-version), rendered by the hub for each agent')
    .option('--repo <url>', "the chart's repository: https://… (a classic repository) or oci://… (a registry)")
    .option('--chart-version <version>', "the chart's version")
    .option('--values <file>', "a YAML file of the chart's values; repeatable, later files win", collect, [])
    .option('-k, --kustomize <dir>', 'a kustomize overlay, packed with everything it reaches and built by the hub for each agent')
    .option('--kustomize-root <dir>', 'pack this directory (default: the common directory of the overlay and what it reaches)')
    .option('--stack <name|id>', 'the stack (default: the directory name, or the file name without .yaml)')
    .option('--generator <name|id>', 'owner of a new stack when using an admin PAK (default: admin-generator)')
    .option('--target <agent>', 'target the stack at this agent (name or id); repeatable', collect, [])
    .option('--label <label>', 'add this label to the stack (agents with the label receive it); repeatable', collect, [])
    .option(
      '--depends-on <stack[:applied|healthy]>',
      'the stack waits on each agent until this one is healthy there (or applied); repeatable (docs/dependencies.md)',
      collect,
      [],
    )
    .option('--wait', 'follow the rollout until every agent applied it or one failed (admin PAK; any owner PAK with a rollout policy)')
    .option('--timeout <duration>', 'how long --wait waits (e.g. 90s, 5m)', '5m')
    .option('--interval <duration>', 'how often --wait asks the hub', '2s')
    .option(
      '--sign <key>',
      'sign the content with this generator key (PEM) before posting it: agents with a trust policy apply only signed content',
    )
    .option('--signer <name>', "with --sign: the generator's name in the trust root (default: BROKKR_SIGNER, else the key file's name)")
    .option('--signature-version <n>', 'with --sign: the monotonic version signed (default: the current time in seconds)')
    .option('--sign-for <agent>', 'with --sign: only this agent (name, or cluster/name) may apply it; repeatable', collect, [])
    .option('--sign-for-label <label>', 'with --sign: agents configured with this label may apply it; repeatable', collect, [])
    .option('--allow-rollback-to <n>', 'with --sign: an automatic rollback may return to this earlier version; repeatable', collect, [])
    .option('--expires <duration>', 'with --sign: the signature is good for this long (e.g. 720h)')
    .option(
      '--renderer <version>',
      'with --sign and --chart or -k: the brokkr-render version the agents render with (`brokkr-render --version`; default: BROKKR_RENDERER)',
    )
    .option('--signature <file>', 'store this signature (a Sigstore bundle or DSSE envelope made elsewhere, e.g. keyless) with the content')
    .option(
      '--layers <file>',
      "the stack's override layers become exactly this file's (one layer per YAML document; others are deleted); with --sign they are signed with the content (plain YAML: kind yaml) or the render inputs",
    )
    .action(async (options: ApplyOptions, cmd: Command) => {
      process.exitCode = await apply(cmd, options);
    });
}

async function apply(cmd: Command, options: ApplyOptions): Promise<number> {
  const format = formatFor(cmd);
  const say = sayFor(format);
  const timeoutMs = parseDuration(options.timeout);
  const intervalMs = parseDuration(options.interval);
  const manifests = await readContent(options);
  const hub = hubFor(cmd);
  const me = await hub.post<AuthPayload>('/auth/pak');
  if (me.agent) throw new CliError('an agent PAK cannot apply stacks: use a generator or admin PAK');
  // Checked before anything changes: only admins may read agents' events and health; a rollout
  // (the stack has a policy) is readable by the stack's owner too.
  if (options.wait && !me.admin && !(await hasRolloutPolicy(hub, stackRef(manifests, options))))
    throw new CliError('--wait needs an admin PAK (only admins may read agent events and health), or a rollout policy on the stack');

  const io: Io = { hub, say };
  // Every name is resolved before the first write, so a typo changes nothing.
  const targets = await Promise.all([...new Set([...(manifests.settings.targets ?? []), ...options.target])].map((t) => findAgent(hub, t)));
  const labels = [...(manifests.settings.labels ?? []), ...options.label].map(checkLabel);
  const dependsOn = await resolveDependsOn(hub, options.dependsOn);
  const layers = layersOf(options);
  const stack = await ensureStack(io, me, manifests, options);
  // Before the targets: an agent the stack newly reaches must not get it ahead of what it waits for.
  await ensureDependencies(hub, say, stack, dependsOn);
  await ensureLabels(io, stack, labels);
  await ensureTargets(io, stack, targets);
  const signedAt = await ensureSignature(io, stack, manifests, { ...options, signedLayers: await ensureLayers(io, stack, layers) });
  const { object, created } =
    manifests.kind === 'yaml' ? await ensureDeploymentObject(io, stack, manifests) : await postSource(io, stack, manifests);

  const { yaml_content: _content, ...deploymentObject } = object;
  const applied: Applied = { stack, deploymentObject, created, sequence: object.sequence_id };
  if (!options.wait) {
    print(render({ stack, deployment_object: deploymentObject, created }, format, () => ''));
    return 0;
  }
  // A re-signature of unchanged content: the agents' verdicts from before it (a refusal) do not count.
  const waitOptions = { timeoutMs, intervalMs, say, ...(signedAt ? { since: signedAt } : {}) };
  const progressive = await rolloutOf(hub, stack, object);
  if (progressive) return followWaves(format, applied, await followRollout(hub, progressive, waitOptions), options.timeout);
  // A stack's first object, or one published before its policy, goes to every agent at once:
  // following that needs the agents' events, which only an admin may read.
  if (!me.admin)
    throw new CliError(
      `deployment object ${object.id} (sequence ${object.sequence_id}) has no rollout to follow (the stack's first object, ` +
        'or published before its rollout policy): following every agent at once needs an admin PAK',
    );
  return followAgents(format, applied, await waitForRollout(hub, stack, object, waitOptions), options.timeout);
}

/** What apply did, for the summary it prints. */
interface Applied {
  stack: Stack;
  deploymentObject: Omit<DeploymentObject, 'yaml_content'>;
  created: boolean;
  sequence: number;
}

const summaryOf = (a: Applied) => ({ stack: a.stack, deployment_object: a.deploymentObject, created: a.created });

/** A progressive rollout followed to its end: the verdict, then the rollout document or its waves as a table. */
function followWaves(format: Format, applied: Applied, followed: RolloutWaitResult, timeout: string): number {
  const verdict = followed.outcome === 'timeout' ? `timed out after ${timeout} (${followed.verdict})` : followed.verdict;
  sayFor(format)(`rollout of stack "${applied.stack.name}" sequence ${applied.sequence}: ${verdict}`);
  print(render({ ...summaryOf(applied), rollout: followed.rollout }, format, () => renderRollout(followed.rollout)));
  return followed.exitCode;
}

/** Every agent at once (no rollout policy): the verdict, then per agent its state and health. */
function followAgents(format: Format, applied: Applied, rollout: WaitResult, timeout: string): number {
  const verdict = { applied: 'applied by every agent', failed: 'FAILED', timeout: `timed out after ${timeout}` }[rollout.outcome];
  sayFor(format)(`rollout of stack "${applied.stack.name}" sequence ${applied.sequence}: ${verdict}`);
  print(
    render({ ...summaryOf(applied), rollout }, format, () =>
      renderTable(rollout.agents, [
        { header: 'AGENT', value: (p) => p.name },
        { header: 'CLUSTER', value: (p) => p.cluster_name },
        { header: 'STATE', value: (p) => p.state },
        { header: 'HEALTH', value: (p) => p.health },
        { header: 'MESSAGE', value: (p) => truncate(p.message) },
      ]),
    ),
  );
  return rollout.exitCode;
}

const stackRef = (manifests: Pick<Manifests, 'settings' | 'defaultStackName'>, options: ApplyOptions): string =>
  options.stack ?? manifests.settings.stack ?? manifests.defaultStackName;

async function hasRolloutPolicy(hub: Hub, ref: string): Promise<boolean> {
  const stack = await findStackOrUndefined(hub, ref);
  if (!stack) return false;
  try {
    await hub.get<StackRolloutPolicy>(`/stacks/${stack.id}/rollout-policy`);
    return true;
  } catch (err) {
    if (err instanceof HubError && err.status === 404) return false;
    throw err;
  }
}

async function ensureStack({ hub, say }: Io, me: AuthPayload, manifests: Content, options: ApplyOptions): Promise<Stack> {
  const ref = stackRef(manifests, options);
  const existing = await findStackOrUndefined(hub, ref);
  if (existing) return existing;
  if (UUID_RE.test(ref)) throw new CliError(`stack ${ref} not found`);
  const generatorRef = options.generator ?? manifests.settings.generator;
  let generatorId = me.generator;
  if (!generatorId) generatorId = (await findGenerator(hub, generatorRef ?? 'admin-generator')).id;
  else if (generatorRef) say(`note: a generator PAK owns the stacks it creates; ignoring generator "${generatorRef}"`);
  const stack = await hub.post<Stack>('/stacks', { name: ref, description: manifests.settings.description, generator_id: generatorId });
  say(`stack "${stack.name}" created (${stack.id})`);
  return stack;
}

/** The hub's rule for stack labels (400 invalid_label), checked before anything is written. */
function checkLabel(label: string): string {
  if (!label.trim() || label.length > 64 || /\s/.test(label))
    throw new CliError(`invalid label "${label}": 1-64 characters, no whitespace`);
  return label;
}

async function ensureLabels({ hub, say }: Io, stack: Stack, labels: string[]): Promise<void> {
  if (labels.length === 0) return;
  const existing = new Set((await hub.get<StackLabel[]>(`/stacks/${stack.id}/labels`)).map((l) => l.label));
  for (const label of new Set(labels)) {
    if (existing.has(label)) continue;
    await hub.post(`/stacks/${stack.id}/labels`, label);
    say(`stack "${stack.name}": label "${label}" added`);
  }
}

/** Adds each target; one that exists already (409) is fine. Targets are never removed here. */
async function ensureTargets({ hub, say }: Io, stack: Stack, agents: Agent[]): Promise<void> {
  for (const agent of agents) {
    try {
      await hub.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stack.id });
      say(`stack "${stack.name}": targeted at agent ${agent.name} (cluster ${agent.cluster_name})`);
    } catch (err) {
      if (!(err instanceof HubError && err.status === 409)) throw err;
    }
  }
}

/**
 * With --sign or --signature: the signature of the content, stored before the content (also when it
 * is unchanged: a re-signature); resolves with when the hub stored it.
 */
async function ensureSignature(
  { hub, say }: Io,
  stack: Stack,
  manifests: Content,
  options: ApplyOptions & { signedLayers: SignedLayer[] | undefined },
): Promise<string | undefined> {
  if (options.sign && options.signature) throw new CliError('--sign and --signature exclude each other');
  let signature: unknown;
  let signed: string;
  if (options.signature) {
    signature = readSignatureFile(options.signature);
    signed = manifests.kind === 'yaml' ? `content sha256 ${manifests.checksum.slice(0, 12)}…` : 'render inputs';
  } else if (options.sign) ({ signature, signed } = await signedBy(hub, stack, manifests, { ...options, key: options.sign }));
  else return undefined;
  const storedAt = await storeSignature(hub, stack.id, signature);
  say(`stack "${stack.name}": signature stored (${signed})`);
  return storedAt;
}

/**
 * The signature --sign makes: plain YAML by its content (kind raw), or with --layers by its content
 * and the layers (kind yaml, the agents apply the layers); a chart or an overlay by its render
 * inputs and layers. Without --layers, a stack that has layers is refused: they would go unsigned.
 */
async function signedBy(
  hub: Hub,
  stack: Stack,
  manifests: Content,
  options: ApplyOptions & { key: string; signedLayers: SignedLayer[] | undefined },
): Promise<{ signature: unknown; signed: string }> {
  const signOptions = { signFor: [], signForLabel: [], allowRollbackTo: [], ...options };
  const layers = options.signedLayers;
  if (!layers) await refuseUnsignedLayers(hub, stack);
  if (manifests.kind === 'yaml' && !layers)
    return {
      signature: signContent(signOptions, stack.id, manifests.content, false),
      signed: `content sha256 ${manifests.checksum.slice(0, 12)}…`,
    };
  const inputs: RenderInputValues =
    manifests.kind === 'yaml'
      ? { kind: 'yaml', content: manifests.content, renderer: LAYERS_ENGINE_VERSION, layers }
      : { ...(await manifests.inputs(stack.name)), renderer: rendererOf(options), layers };
  return {
    signature: signRenderInputs(signOptions, stack.id, inputs),
    signed: `${manifests.kind === 'yaml' ? 'content and layers' : 'render inputs'} sha256 ${sha256Hex(renderInputsContent(inputs)).slice(0, 12)}…, ${manifests.kind === 'yaml' ? 'layers applied' : 'rendered'} by each agent`,
  };
}

function rendererOf(options: ApplyOptions): string {
  const renderer = options.renderer ?? (process.env.BROKKR_RENDERER || undefined);
  if (!renderer) throw new CliError('--sign with --chart or -k needs --renderer <brokkr-render version> (or BROKKR_RENDERER)');
  return renderer;
}

/** With --layers: the stack's layers replaced by the file's, and the set as signed. */
async function ensureLayers({ hub, say }: Io, stack: Stack, layers: NewOverride[] | undefined): Promise<SignedLayer[] | undefined> {
  return layers ? replaceLayers(hub, stack, layers, say) : undefined;
}

/** The --layers file's layers, read before anything changes. */
const layersOf = (options: ApplyOptions): NewOverride[] | undefined => (options.layers ? readLayers(options.layers) : undefined);

function readSignatureFile(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new CliError(`${file}: not a JSON signature (${(err as Error).message.split('\n')[0]})`);
  }
}

/**
 * Posts a chart or an overlay. Always a new object: its YAML is rendered by the hub, so there is no
 * checksum to compare here; the same inputs again cost the hub no render and the agents no change.
 */
async function postSource({ hub, say }: Io, stack: Stack, content: SourceContent): Promise<{ object: DeploymentObject; created: boolean }> {
  const object = await hub.post<DeploymentObject>(`/stacks/${stack.id}/deployment-objects`, content.body);
  say(
    `stack "${stack.name}": deployment object ${object.id} created (sequence ${object.sequence_id}) from ${content.describe}, rendered for each agent`,
  );
  return { object, created: true };
}

/** Posts the content unless the stack's newest deployment object already has the same checksum. */
async function ensureDeploymentObject(
  { hub, say }: Io,
  stack: Stack,
  manifests: Manifests,
): Promise<{ object: DeploymentObject; created: boolean }> {
  const objects = await hub.get<DeploymentObject[]>(`/stacks/${stack.id}/deployment-objects`);
  const latest = objects.filter((o) => !o.is_deletion_marker).sort((a, b) => b.sequence_id - a.sequence_id)[0];
  if (latest && latest.yaml_checksum === manifests.checksum) {
    say(`stack "${stack.name}": unchanged (deployment object ${latest.id}, sequence ${latest.sequence_id})`);
    return { object: latest, created: false };
  }
  const object = await hub.request<DeploymentObject>('POST', `/stacks/${stack.id}/deployment-objects`, {
    raw: { body: manifests.content, contentType: 'application/yaml' },
  });
  say(`stack "${stack.name}": deployment object ${object.id} created (sequence ${object.sequence_id}, ${manifests.files.length} file(s))`);
  return { object, created: true };
}
