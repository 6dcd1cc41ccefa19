import type { Logger } from '@brokkr/logger';
import type { StateStep } from '../target-state/answer-cache.ts';
import type { DeploymentObjectRow } from '../../domain/deployment-object-row.ts';
import type { Carried } from '../target-state/signatures.ts';
import type { AgentSocket } from './socket.ts';

/**
 * A step whose objects serialise to more than this goes as a plain hint and the agent fetches:
 * frames wait in memory until each agent's socket takes them, so a large object pushed to a whole
 * fleet at once would be held once per agent, where fetches arrive spread out.
 */
export const MAX_STEP_BYTES = 64 * 1024;

/**
 * The agent's full answer moved forward by what was noticed since it was read
 * (TargetStateCache.stepFull; `signed`: with the objects' signatures, for an agent that checks
 * them), and the JSON of a row, with its signature when it carries one (TargetStateCache.bytes).
 */
export interface StepSource {
  step(agentId: string, signed: boolean): Promise<StateStep | undefined>;
  rowJson(row: DeploymentObjectRow, carried: Carried | undefined): string;
}

/**
 * `target_state_patch` frames: the new object travels in the hint, so an agent that holds the
 * step's base needs no request at all — a change to a stack held by 10,000 agents costs 10,000
 * frames, not 10,000 HTTP requests (docs/scale.md). The rows of one stack are shared by every
 * agent, so each row is serialised once (target-state/answer-bytes.ts).
 *
 * One step at a time per agent: notices that arrive while a step is being worked out make one
 * more step after it, so the frames chain (base → etag → next etag) in the order they are sent.
 */
export class StepSender {
  private readonly running = new Map<AgentSocket, { again: boolean }>();

  constructor(
    private readonly source: StepSource,
    private readonly logger: Logger,
  ) {}

  /** `hint`: what to send instead when no step can be made (the agent then fetches). */
  send(connection: AgentSocket, hint: () => void): void {
    const running = this.running.get(connection);
    if (running) {
      running.again = true;
      return;
    }
    const state = { again: true };
    this.running.set(connection, state);
    void this.run(connection, state, hint).finally(() => this.running.delete(connection));
  }

  private async run(connection: AgentSocket, state: { again: boolean }, hint: () => void): Promise<void> {
    while (state.again) {
      state.again = false;
      try {
        const step = await this.source.step(connection.agentId, connection.takesSignatures);
        // The same ETag at both ends: the agent already holds what the step leads to.
        if (step && step.base === step.etag) continue;
        const frame = step && this.encode(step);
        if (frame) connection.sendEncoded('control', 'target_state_patch', frame);
        else hint();
      } catch (err) {
        this.logger.warn({ err, agentId: connection.agentId }, 'target-state step not worked out: hinted instead');
        hint();
      }
    }
  }

  /** The frame's text; undefined when its objects are too large to push (MAX_STEP_BYTES). */
  private encode(step: StateStep): string | undefined {
    const objects = step.objects.map((row, i) => this.source.rowJson(row, step.carried?.[i]));
    if (objects.reduce((bytes, json) => bytes + json.length, 0) > MAX_STEP_BYTES) return undefined;
    const head = JSON.stringify({ base_etag: step.base, etag: step.etag });
    return `{"type":"target_state_patch","body":${head.slice(0, -1)},"objects":[${objects.join(',')}]}}`;
  }
}
