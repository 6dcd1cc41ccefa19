/**
 * A simulator process of `npm run bench:agents` (forked by agents-sim.ts): runs the agents it is
 * given and answers the parent's requests about them over IPC, one reply per request.
 */
import { eventuallyAll, LongPollSimAgent, WsSimAgent, type SimAgent } from './agents-support.ts';
import type { Collected, SimAgentSpec, SimRequest } from './agents-sim.ts';

const agents: { index: number; sim: SimAgent }[] = [];
let cpuAtArm = process.cpuUsage();

function simulate(spec: SimAgentSpec, resyncMs: number): SimAgent {
  const agent = { id: spec.id, pak: spec.pak };
  return spec.kind === 'long-poll' ? new LongPollSimAgent(spec.url, agent) : new WsSimAgent(spec.url, agent, resyncMs, spec.kind === 'ws');
}

/** Waits until each agent holds `ids[index % ids.length]` (or the timeout), then reports. */
async function collect(ids: string[], timeoutMs: number): Promise<Collected> {
  const expected = (index: number) => ids[index % ids.length]!;
  await eventuallyAll(() => agents.every((a) => a.sim.heldAt(expected(a.index)) !== undefined), timeoutMs);
  // Measured before the report is built, as the in-process simulator measured it.
  const cpu = process.cpuUsage(cpuAtArm);
  const held = agents.flatMap((a) => a.sim.heldAt(expected(a.index)) ?? []);
  return {
    held,
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
        agents.push({ index: spec.index, sim });
        sim.start();
      }
      return null;
    case 'connected':
      return agents.filter((a) => a.sim.connected).length;
    case 'arm':
      for (const a of agents) a.sim.arm();
      cpuAtArm = process.cpuUsage();
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
