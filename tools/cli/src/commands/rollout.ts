import fs from 'node:fs';
import type { Command } from 'commander';
import { parse } from 'yaml';
import { formatFor, hubFor, print, sayFor } from '../context.ts';
import { CliError } from '../errors.ts';
import { isNotFound, type Hub } from '../http.ts';
import { age, render, renderFields, renderTable, short } from '../output.ts';
import { findStack } from '../resolve.ts';
import type { ApprovalRequest, Rollout, RolloutStatus, RolloutWaveStatus, Stack, StackRolloutPolicy, WaveApprovals } from '../types.ts';

/** Statuses in which an operator can still act on a rollout (the hub's transitions start from these). */
const OPEN_STATUSES: readonly RolloutStatus[] = ['pending', 'progressing', 'paused', 'failed'];

const ACTIONS = {
  pause: 'no further wave is released',
  resume: "the wave's deadline and soak restart",
  abort: 'every agent is served the previous deployment object again',
  promote: 'every agent is served the new deployment object now',
} as const;
type Action = keyof typeof ACTIONS;

/** "canary 2/2 applied, 2 healthy, 0 failed" — one wave's progress. */
export function waveLine(wave: RolloutWaveStatus): string {
  const state = wave.released ? 'released' : 'held';
  return `${wave.name} (${state}): ${wave.applied}/${wave.agents} applied, ${wave.healthy} healthy, ${wave.failed} failed`;
}

export function renderRollout(rollout: Rollout, now = Date.now()): string {
  const header = renderFields([
    ['Rollout', rollout.id],
    ['Status', rollout.status],
    ['Object', rollout.deployment_object_id],
    ['Previous', rollout.baseline_object_id],
    ['Released', rollout.released_wave < 0 ? 'no wave yet' : `up to wave ${rollout.released_wave + 1} of ${rollout.waves.length}`],
    ['Message', rollout.message],
    ['Started', `${age(rollout.created_at, now)} ago`],
  ]);
  const waves = renderTable(rollout.waves, [
    { header: 'WAVE', value: (w) => w.name },
    { header: 'RELEASED', value: (w) => (w.released ? 'yes' : 'no') },
    { header: 'AGENTS', value: (w) => w.agents },
    { header: 'APPLIED', value: (w) => w.applied },
    { header: 'HEALTHY', value: (w) => w.healthy },
    { header: 'FAILED', value: (w) => w.failed },
    { header: 'APPROVALS', value: approvalsCell },
  ]);
  return `${header}\n${waves}`;
}

/** "1/2 (waiting)" for a wave that needs approvals, "-" otherwise (older hubs report none). */
function approvalsCell(w: RolloutWaveStatus): string {
  if (!w.required_approvals) return '-';
  return `${w.approvals}/${w.required_approvals}${w.awaiting_approval ? ' (waiting)' : ''}`;
}

export async function stackRollouts(hub: Hub, stack: Stack, limit = 20): Promise<Rollout[]> {
  return hub.get<Rollout[]>(`/stacks/${stack.id}/rollouts`, { limit: String(limit) });
}

/** The stack's newest rollout an operator can still act on (pause, resume, abort, promote). */
async function openRollout(hub: Hub, stack: Stack): Promise<Rollout> {
  const rollouts = await stackRollouts(hub, stack);
  const open = rollouts.find((r) => OPEN_STATUSES.includes(r.status));
  if (open) return open;
  const last = rollouts[0];
  throw new CliError(
    last
      ? `stack "${stack.name}" has no rollout to act on: its newest (${short(last.id)}) is ${last.status}`
      : `stack "${stack.name}" has no rollout (set a policy with "brokkr rollout policy set")`,
  );
}

/** A policy file: YAML or JSON, `{waves: [...], auto_rollback?}`, validated by the hub (400 with the reason). */
function readPolicy(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let policy: unknown;
  try {
    policy = parse(text);
  } catch (err) {
    throw new CliError(`${file} is not YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (typeof policy !== 'object' || policy === null || Array.isArray(policy))
    throw new CliError(`${file} must hold a mapping with "waves" (see docs/rollouts.md)`);
  return policy;
}

function renderPolicy(stored: StackRolloutPolicy): string {
  const { policy } = stored;
  const waves = renderTable(policy.waves, [
    { header: 'WAVE', value: (w) => w.name },
    { header: 'AGENTS', value: (w) => (w.selector ? `labels ${w.selector.labels.join(',')}` : `${w.percent}%`) },
    { header: 'MAX FAILURES', value: (w) => w.max_failures },
    { header: 'SOAK', value: (w) => `${w.soak_seconds}s` },
    { header: 'DEADLINE', value: (w) => `${w.progress_deadline_seconds}s` },
  ]);
  return `auto_rollback: ${policy.auto_rollback}\n${waves}`;
}

function registerAction(rollout: Command, action: Action): void {
  rollout
    .command(`${action} <stack>`)
    .description(`${action[0]!.toUpperCase()}${action.slice(1)} the stack's current rollout: ${ACTIONS[action]}`)
    .action(async (ref: string, _options: unknown, cmd: Command) => {
      const format = formatFor(cmd);
      const hub = hubFor(cmd);
      const stack = await findStack(hub, ref);
      const current = await openRollout(hub, stack);
      const after = await hub.post<Rollout>(`/rollouts/${current.id}/${action}`);
      sayFor(format)(`rollout ${short(after.id)} of stack "${stack.name}": ${current.status} → ${after.status}`);
      print(render(after, format, () => ''));
    });
}

/**
 * The wave to approve: of the stack's newest rollout the caller may approve (the hub's
 * /approval-requests: an approver need not own the stack), `--wave` (its number as the CLI shows
 * it, 1 = the first, or its name), or else the wave the rollout waits at, or else its next one.
 */
function pickRequest(requests: readonly ApprovalRequest[], ref: string, wave: string | undefined): ApprovalRequest {
  const ofStack = requests.filter((r) => r.stack_name === ref || r.stack_id === ref);
  const newest = ofStack[0];
  if (!newest)
    throw new CliError(
      `nothing of stack "${ref}" waits for your approval (no open rollout with a wave that lists you, or you submitted its object: a submitter never approves)`,
    );
  const waves = ofStack.filter((r) => r.rollout_id === newest.rollout_id);
  if (wave !== undefined) {
    const chosen = waves.find((r) => r.name === wave || String(r.wave + 1) === wave);
    if (!chosen)
      throw new CliError(
        `wave "${wave}" of stack "${ref}" is not one you may approve now (open: ${waves.map((r) => `${r.wave + 1} ${r.name}`).join(', ')})`,
      );
    return chosen;
  }
  return waves.find((r) => r.awaiting_approval) ?? [...waves].sort((a, b) => a.wave - b.wave)[0]!;
}

function registerApprove(rollout: Command): void {
  rollout
    .command('approve <stack>')
    .description(
      "Approve what a wave of the stack's open rollout will ship (a generator the wave lists, or an admin; never the object's submitter)",
    )
    .option('--wave <n|name>', 'the wave: its number (1 = the first) or its name; default: the wave the rollout waits at')
    .option('--comment <text>', 'recorded with the approval')
    .action(async (ref: string, options: { wave?: string; comment?: string }, cmd: Command) => {
      const format = formatFor(cmd);
      const hub = hubFor(cmd);
      const request = pickRequest(await hub.get<ApprovalRequest[]>('/approval-requests', { limit: '200' }), ref, options.wave);
      // The digest listed is what the approver approves: the hub refuses (409) if the wave would now ship something else.
      const body = { digest: request.digest, ...(options.comment === undefined ? {} : { comment: options.comment }) };
      const after = await hub.post<WaveApprovals>(`/rollouts/${request.rollout_id}/waves/${request.wave}/approvals`, body);
      const state = after.released ? 'released' : after.awaiting_approval ? 'waiting for more' : 'not reached yet';
      sayFor(format)(
        `approved wave ${request.wave + 1} ${after.name} of stack "${request.stack_name}" (rollout ${short(after.rollout_id)}, ${after.digest}): ` +
          `${after.approvals_counted}/${after.required_approvals} approvals, ${state}`,
      );
      print(render(after, format, () => ''));
    });
}

function registerPolicy(rollout: Command): void {
  const policy = rollout.command('policy').description("A stack's rollout policy: set, get, delete");
  policy
    .command('set <stack>')
    .description('Set the policy from a YAML/JSON file ({waves: [...], auto_rollback}); it applies from the next deployment object')
    .requiredOption('-f, --file <path>', 'the policy file')
    .action(async (ref: string, options: { file: string }, cmd: Command) => {
      const format = formatFor(cmd);
      const body = readPolicy(options.file);
      const hub = hubFor(cmd);
      const stack = await findStack(hub, ref);
      const stored = await hub.put<StackRolloutPolicy>(`/stacks/${stack.id}/rollout-policy`, body);
      sayFor(format)(`stack "${stack.name}": rollout policy set (${stored.policy.waves.length} wave(s))`);
      print(render(stored, format, () => renderPolicy(stored)));
    });
  policy
    .command('get <stack>')
    .description("Show the stack's policy")
    .action(async (ref: string, _options: unknown, cmd: Command) => {
      const hub = hubFor(cmd);
      const stack = await findStack(hub, ref);
      const stored = await hub.get<StackRolloutPolicy>(`/stacks/${stack.id}/rollout-policy`);
      print(render(stored, formatFor(cmd), () => renderPolicy(stored)));
    });
  policy
    .command('delete <stack>')
    .description('Remove the policy: new deployment objects go to every agent at once again')
    .action(async (ref: string, _options: unknown, cmd: Command) => {
      const hub = hubFor(cmd);
      const stack = await findStack(hub, ref);
      await hub.request('DELETE', `/stacks/${stack.id}/rollout-policy`);
      sayFor(formatFor(cmd))(`stack "${stack.name}": rollout policy deleted`);
    });
}

export function registerRollout(program: Command): void {
  const rollout = program
    .command('rollout')
    .description("Follow and steer a stack's progressive rollouts (docs/rollouts.md); the stack's owner or an admin");
  rollout
    .command('status <stack>')
    .description("The stack's newest rollout: status, released wave and per wave agents / applied / healthy / failed")
    .action(async (ref: string, _options: unknown, cmd: Command) => {
      const hub = hubFor(cmd);
      const stack = await findStack(hub, ref);
      const [latest] = await stackRollouts(hub, stack, 1);
      if (!latest) {
        const hasPolicy = await hub.get(`/stacks/${stack.id}/rollout-policy`).then(
          () => true,
          (err: unknown) => (isNotFound(err) ? false : Promise.reject(err)),
        );
        throw new CliError(`stack "${stack.name}" has no rollout yet${hasPolicy ? '' : ' (and no rollout policy)'}`);
      }
      print(render(latest, formatFor(cmd), () => renderRollout(latest)));
    });
  for (const action of Object.keys(ACTIONS) as Action[]) registerAction(rollout, action);
  registerApprove(rollout);
  registerPolicy(rollout);
}
