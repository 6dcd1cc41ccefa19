import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createLogger } from '@brokkr/logger';
import { testOnlyBusSettings, useTestInfra } from '@brokkr/testkit';
import { connectBus, sendAgentNotices, SUBJECTS, type Bus } from '@brokkr/bus';

const logger = createLogger({ service: 'bus-agent-notices-test', level: 'silent' });

/** The one wake-up rule the api and maintenance share, against a real nats-server. */
describe('@brokkr/bus sendAgentNotices', () => {
  const infra = useTestInfra({ db: false, nats: true });
  let bus: Bus;

  before(async () => {
    bus = await connectBus({ ...testOnlyBusSettings(infra.nats), name: 'bus-agent-notices-test', logger });
  });
  after(async () => {
    await bus?.close();
  });

  it('sends one notice per agent on its own subject, with the reason; an id no subject can carry is skipped', async () => {
    const received: { subject: string; body: unknown }[] = [];
    const sub = bus.nc.subscribe(SUBJECTS.notifyAgentAll, {
      callback: (_err, m) => {
        received.push({ subject: m.subject, body: m.json() });
      },
    });
    const [first, second, stack] = [randomUUID(), randomUUID(), randomUUID()];

    sendAgentNotices(bus.nc, [first, 'not.a.token', second], logger, { reason: { stack_id: stack } });
    // Our own subscription gets the messages before the server answers the flush.
    await bus.nc.flush();
    sub.unsubscribe();

    expect(received).to.deep.equal([
      { subject: `brokkr.notify.agent.${first}`, body: { stack_id: stack, agent_id: first } },
      { subject: `brokkr.notify.agent.${second}`, body: { stack_id: stack, agent_id: second } },
    ]);
  });
});
