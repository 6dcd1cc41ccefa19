import { EXIT } from '../errors.ts';
import type { Hub } from '../http.ts';
import type { DeploymentObject, Rollout, RolloutStatus, Stack } from '../types.ts';
import { waveLine } from './rollout.ts';
import type { WaitOptions } from './wait.ts';

/** How each final status ends `apply --wait`: only a rollout that reached every wave (or was promoted) is a success. */
const FINAL: Partial<Record<RolloutStatus, { verdict: string; exitCode: number }>> = {
  succeeded: { verdict: 'succeeded: every wave applied and healthy', exitCode: EXIT.ok },
  promoted: { verdict: 'promoted: every agent is served the new object', exitCode: EXIT.ok },
  rolled_back: { verdict: 'ROLLED BACK: every agent is served the previous object again', exitCode: EXIT.failed },
  failed: { verdict: 'FAILED: a gate failed and the rollout stopped (no automatic rollback)', exitCode: EXIT.failed },
  aborted: { verdict: 'ABORTED: every agent is served the previous object again', exitCode: EXIT.failed },
  superseded: { verdict: 'superseded by a newer deployment object', exitCode: EXIT.failed },
};

export interface RolloutWaitResult {
  outcome: RolloutStatus | 'timeout';
  verdict: string;
  exitCode: number;
  rollout: Rollout;
}

/** The rollout the hub opened for this deployment object (the stack has a policy), if any. */
export async function rolloutOf(hub: Hub, stack: Stack, object: DeploymentObject): Promise<Rollout | undefined> {
  const rollouts = await hub.get<Rollout[]>(`/stacks/${stack.id}/rollouts`, { limit: '100' });
  return rollouts.find((r) => r.deployment_object_id === object.id);
}

/**
 * Follows a progressive rollout wave by wave (the gates are the hub's: docs/rollouts.md), printing
 * a line whenever its status or a wave's progress changes, until it succeeds or is promoted (exit
 * 0), is rolled back, fails, is aborted or superseded (exit 1), or the timeout passes (exit 2).
 * Needs only read access to the stack's rollouts, so the stack's own generator PAK is enough.
 */
export async function followRollout(hub: Hub, first: Rollout, options: WaitOptions): Promise<RolloutWaitResult> {
  const started = Date.now();
  const seen = new Map<string, string>();
  const say = (key: string, line: string) => {
    if (seen.get(key) === line) return;
    seen.set(key, line);
    options.say(`[${Math.round((Date.now() - started) / 1000)}s] ${line}`);
  };
  options.say(`following rollout ${first.id} (${first.waves.length} wave(s))…`);
  let rollout = first;
  for (;;) {
    say('status', `rollout ${rollout.status}${rollout.message ? ` — ${rollout.message}` : ''}`);
    for (const wave of rollout.waves) say(`wave ${wave.index}`, `wave ${wave.index + 1}/${rollout.waves.length} ${waveLine(wave)}`);
    const final = FINAL[rollout.status];
    if (final) return { outcome: rollout.status, ...final, rollout };
    if (Date.now() - started >= options.timeoutMs)
      return { outcome: 'timeout', verdict: `still ${rollout.status}`, exitCode: EXIT.timeout, rollout };
    await new Promise((r) => setTimeout(r, options.intervalMs));
    rollout = await hub.get<Rollout>(`/rollouts/${rollout.id}`);
  }
}
