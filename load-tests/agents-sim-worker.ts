/**
 * A simulator process of `npm run bench:agents` and `bench:signatures` (forked by agents-sim.ts): runs the agents it is
 * given and answers the parent's requests about them over IPC, one reply per request.
 */
import { request } from 'undici';
import { checkIntent, rootSchema, type TrustView } from '@brokkr/trust';
import { epochNow, eventuallyAll, fetchDispatcher, LongPollSimAgent, WsSimAgent, type SimAgent } from './agents-support.ts';
import type { Collected, SimAgentSpec, SimRequest, SimVerify } from './agents-sim.ts';

interface Simulated {
  index: number;
  spec: SimAgentSpec;
  sim: SimAgent;
  /** With `verify`: when (epoch ms) each object's signature was fetched and checked. */
  verified: Map<string, number>;
}

const agents: Simulated[] = [];
let cpuAtArm = process.cpuUsage();
let verifying: { spec: SimVerify; view: TrustView } | undefined;
let refused = 0;
let fallbacks = 0;

/** The object's signature as the hub relays it on request: our agent's fallback when none came with the object. */
async function askSignature(agent: Simulated, objectId: string): Promise<unknown> {
  fallbacks++;
  const headers = { authorization: `Bearer ${agent.spec.pak}` };
  const url = `${agent.spec.url}/api/v1/agents/${agent.spec.id}/signatures?deployment_object_ids=${objectId}`;
  const res = await request(url, { dispatcher: fetchDispatcher, headers });
  const body = (await res.body.json()) as { deployment_objects?: { deployment_object_id: string; signature: unknown }[] };
  return body.deployment_objects?.find((o) => o.deployment_object_id === objectId)?.signature;
}

/**
 * What our agent's trust gate does with a new target state (bench:signatures): the new object's
 * signature, the one carried with it (asked for only when none came), checked. The trust metadata
 * is not read per change: the agent reads it on its own signal (and the bench's root has no
 * timestamp role to keep fresh).
 */
async function verify(agent: Simulated, objectId: string, carried: unknown): Promise<void> {
  const { spec, view } = verifying!;
  try {
    const signed = carried ?? (await askSignature(agent, objectId));
    const verdict = checkIntent(
      { ...view, now: new Date() },
      { stackId: spec.stackId, content: spec.content, deletion: false, signed },
      undefined,
    );
    if (verdict.ok) agent.verified.set(objectId, epochNow());
    else refused++;
  } catch {
    refused++;
  }
}

function arm(verifySpec: SimVerify | undefined): void {
  refused = 0;
  fallbacks = 0;
  verifying = verifySpec
    ? {
        spec: verifySpec,
        view: {
          root: rootSchema.parse(verifySpec.root),
          revocations: undefined,
          stale: undefined,
          keyless: undefined,
          identity: { name: 'bench', cluster: 'bench', labels: [] },
          now: new Date(),
        },
      }
    : undefined;
  for (const a of agents) {
    a.sim.arm();
    a.verified.clear();
    a.sim.onReceived = verifying ? (id, signature) => void verify(a, id, signature) : undefined;
  }
  cpuAtArm = process.cpuUsage();
}

function simulate(spec: SimAgentSpec, resyncMs: number): SimAgent {
  const agent = { id: spec.id, pak: spec.pak };
  if (spec.kind === 'long-poll') return new LongPollSimAgent(spec.url, agent);
  return new WsSimAgent(spec.url, agent, resyncMs, { patches: spec.kind === 'ws', signatures: spec.signatures ?? false });
}

/** Waits until each agent holds `ids[index % ids.length]` (or the timeout), then reports. */
async function collect(ids: string[], timeoutMs: number): Promise<Collected> {
  const expected = (index: number) => ids[index % ids.length]!;
  const at = (a: Simulated) => (verifying ? a.verified.get(expected(a.index)) : a.sim.heldAt(expected(a.index)));
  await eventuallyAll(() => agents.every((a) => at(a) !== undefined), timeoutMs);
  // Measured before the report is built, as the in-process simulator measured it.
  const cpu = process.cpuUsage(cpuAtArm);
  const held = agents.flatMap((a) => at(a) ?? []);
  return {
    held,
    refused,
    fallbacks,
    missed: agents.length - held.length,
    told: agents.flatMap((a) => a.sim.hintedAt ?? []),
    answers: agents.reduce((n, a) => n + a.sim.answers, 0),
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
  };
}

async function handle(request: SimRequest): Promise<unknown> {
  switch (request.type) {
    case 'start':
      for (const spec of request.agents) {
        const sim = simulate(spec, request.resyncMs);
        agents.push({ index: spec.index, spec, sim, verified: new Map() });
        sim.start();
      }
      return null;
    case 'connected':
      return agents.filter((a) => a.sim.connected).length;
    case 'arm':
      arm(request.verify);
      return null;
    case 'collect':
      return collect(request.ids, request.timeoutMs);
    case 'disconnected':
      for (const a of agents) if (a.sim instanceof LongPollSimAgent) a.sim.markDisconnected();
      return null;
    case 'stop':
      for (const a of agents) a.sim.stop();
      return null;
  }
}

process.on('message', (message: { seq: number; request: SimRequest }) => {
  handle(message.request).then(
    (result) => process.send!({ seq: message.seq, result }),
    (err: Error) => process.send!({ seq: message.seq, error: err.message }),
  );
});
// The parent is done (or gone): nothing here outlives it.
process.on('disconnect', () => process.exit(0));
