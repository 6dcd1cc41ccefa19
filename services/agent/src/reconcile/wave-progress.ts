import type { DeploymentObject } from '../broker/types.ts';
import { ReconcileError } from './errors.ts';
import type { PlannedObject } from './plan.ts';
import { judgeWave, type WaveHealthContext } from './wave-health.ts';

/** How soon the reconciler comes back to a stack whose wave is not healthy yet. */
export const WAVE_RECHECK_MS = 2000;

/** A stack's apply stopped after `wave`: it is not healthy yet (and not failed, and not out of time). */
export interface WaveWait {
  wave: number;
  notReady: string[];
  /** The first pass that found this wave not healthy (the one worth an info line). */
  first: boolean;
}

/** Between two waves of one stack's apply: go on (undefined), or stop and come back later. */
export interface WaveGate {
  /** Throws (a FAILURE of the stack) when the wave failed, or stayed not healthy past the deadline. */
  afterWave(wave: number, planned: PlannedObject[]): Promise<WaveWait | undefined>;
}

interface Clock {
  /** The deployment object (id and checksum) the times are of: a new one starts every wave's deadline again. */
  version: string;
  /** When each wave was first found not healthy. */
  since: Map<number, number>;
}

/**
 * Per stack, since when its waves wait (in memory: after a restart the deadline starts again). The
 * time is kept across failed passes of the same deployment object, so once a wave ran out of time
 * each retry (with the usual backoff) fails at once until the wave is healthy or a new object comes.
 */
export class WaveProgress {
  private readonly clocks = new Map<string, Clock>();

  constructor(private readonly ctx: WaveHealthContext & { timeoutMs: number }) {}

  gate(d: DeploymentObject): WaveGate {
    return { afterWave: (wave, planned) => this.afterWave(d, wave, planned) };
  }

  /** The stack's last wave applied (or it is gone): its deadlines are over. */
  done(stackId: string): void {
    this.clocks.delete(stackId);
  }

  retain(stackIds: Set<string>): void {
    for (const id of this.clocks.keys()) if (!stackIds.has(id)) this.clocks.delete(id);
  }

  private clockOf(d: DeploymentObject): Clock {
    const version = `${d.id}:${d.yaml_checksum}`;
    let clock = this.clocks.get(d.stack_id);
    if (clock?.version !== version) {
      clock = { version, since: new Map() };
      this.clocks.set(d.stack_id, clock);
    }
    return clock;
  }

  private async afterWave(d: DeploymentObject, wave: number, planned: PlannedObject[]): Promise<WaveWait | undefined> {
    const clock = this.clockOf(d);
    const verdict = await judgeWave(this.ctx, planned);
    if (verdict.status === 'healthy') {
      clock.since.delete(wave);
      return undefined;
    }
    if (verdict.status === 'failed') {
      throw new ReconcileError(verdict.notReady, `wave ${wave} failed; later waves were not applied:`);
    }
    const now = Date.now();
    const first = !clock.since.has(wave);
    const since = clock.since.get(wave) ?? now;
    clock.since.set(wave, since);
    if (now - since >= this.ctx.timeoutMs) {
      const seconds = Math.round(this.ctx.timeoutMs / 1000);
      throw new ReconcileError(verdict.notReady, `wave ${wave} not healthy within ${seconds} s; later waves were not applied:`);
    }
    return { wave, notReady: verdict.notReady, first };
  }
}
