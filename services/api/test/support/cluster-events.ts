import { expect } from 'chai';
import { WebSocket } from 'ws';
import type { ApiClient } from './client.ts';
import { createAgent, createGenerator, createStack } from './factories.ts';

/** Helpers of the cluster-events, live-consumer and fleet tests. */

export const now = () => new Date().toISOString();

export function k8sEvent(agentId: string, stackId: string, name: string, extra: Record<string, unknown> = {}) {
  return {
    agent_id: agentId,
    stack_id: stackId,
    observed_at: now(),
    reason: 'BackOff',
    message: `Back-off pulling image for ${name}`,
    event_type: 'Warning',
    source: 'kubelet',
    involved_object: { api_version: 'v1', kind: 'Pod', namespace: 'default', name, uid: '6c1f0d0e-1111-4222-8333-944455556666' },
    ...extra,
  };
}

export function logLine(agentId: string, stackId: string, line: string, container = 'app') {
  return { agent_id: agentId, stack_id: stackId, namespace: 'default', pod: 'web-1', container, ts: now(), line };
}

/** A generator owning a stack, and an agent with an explicit target on it (the agent may stream for it). */
export async function targetedStack(admin: ApiClient) {
  const gen = await createGenerator(admin);
  const stack = await createStack(gen.client, { generator_id: gen.generator.id });
  const agent = await createAgent(admin, { generator_ids: [gen.generator.id] });
  const res = await admin.post(`/agents/${agent.agent.id}/targets`, { agent_id: agent.agent.id, stack_id: stack.id });
  expect(res.status, res.text).to.equal(201);
  return { gen, stack, agent: { id: agent.agent.id, pak: agent.initial_pak, client: agent.client } };
}

/**
 * A browser-style consumer: credential in the subprotocol (`brokkr.v1`, `brokkr.pak.<PAK>`), or an
 * Authorization header. Records what it receives; `protocol` is what the server selected.
 */
export class Consumer {
  readonly frames: { type: string; body: Record<string, unknown> }[] = [];
  closed = false;
  private readonly closing: Promise<void>;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => this.frames.push(JSON.parse(data.toString()) as { type: string; body: Record<string, unknown> }));
    this.closing = new Promise((resolve) => ws.once('close', () => ((this.closed = true), resolve())));
  }

  static open(baseUrl: string, path: string, auth: { subprotocol?: string; header?: string }): Promise<Consumer> {
    const url = baseUrl.replace(/^http/, 'ws') + path;
    const ws = auth.subprotocol
      ? new WebSocket(url, ['brokkr.v1', `brokkr.pak.${auth.subprotocol}`])
      : new WebSocket(url, { headers: auth.header ? { authorization: `Bearer ${auth.header}` } : {} });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new Consumer(ws)));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`status ${res.statusCode}`)));
      ws.once('error', reject);
    });
  }

  /** The status of the upgrade: 101, or the HTTP status it was refused with. */
  static async status(baseUrl: string, path: string, auth: { subprotocol?: string; header?: string }): Promise<number> {
    try {
      (await Consumer.open(baseUrl, path, auth)).close();
      return 101;
    } catch (err) {
      const m = /status (\d+)/.exec(String(err));
      if (m) return Number(m[1]);
      throw err;
    }
  }

  get protocol(): string {
    return this.ws.protocol;
  }

  /** Waits (up to a deadline, for failing only) until `match` finds a frame. */
  async waitFor(match: (f: { type: string; body: Record<string, unknown> }) => boolean, what: string, deadlineMs = 20_000) {
    const end = Date.now() + deadlineMs;
    for (;;) {
      const found = this.frames.find(match);
      if (found) return found;
      if (this.closed) throw new Error(`socket closed while waiting for ${what}`);
      if (Date.now() > end) throw new Error(`no ${what}; got ${JSON.stringify(this.frames.map((f) => f.type))}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async waitClosed(deadlineMs = 10_000): Promise<void> {
    await Promise.race([
      this.closing,
      new Promise((_, reject) => setTimeout(() => reject(new Error('socket still open')), deadlineMs).unref()),
    ]);
  }

  close(): void {
    this.ws.terminate();
  }
}
