import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { hubNatsServer, natsInboxPrefix, newNatsPasswords, STREAMS, SUBJECTS, type HubNatsUser, type NatsUser } from '@brokkr/bus';
import { startNats, type NatsHandle } from '@brokkr/infra';
import { eventually, freePort, spawnService, useTestInfra, type RunningService } from '@brokkr/testkit';

/** An audit entry as the api publishes it: on `brokkr.audit.<action>`, Nats-Msg-Id = its id. */
function entry(action: string) {
  return {
    id: randomUUID(),
    timestamp: new Date().toISOString(),
    actor_type: 'admin',
    actor_id: null,
    action,
    resource_type: 'stack',
    resource_id: randomUUID(),
    details: { forged: true },
    ip_address: null,
    user_agent: null,
  };
}

/**
 * The attacks of a network neighbour on the hub's NATS, against nats-server configured exactly as
 * `npm start` configures it (@brokkr/bus's hubNatsServer: each service its own user and
 * permissions, no anonymous access) and the real audit-writer: nobody without credentials gets in,
 * and no user can write an audit entry, an event or a hint its service never sends.
 */
describe('NATS users and permissions (npm start, compose and the chart run them)', function () {
  this.timeout(60_000);
  const infra = useTestInfra({ db: true });
  const passwords = newNatsPasswords();
  const connections: NatsConnection[] = [];
  let nats: NatsHandle;
  let writer: RunningService;
  let pool: pg.Pool;

  async function as(user: NatsUser): Promise<NatsConnection> {
    const inbox = user === 'integration' ? {} : { inboxPrefix: natsInboxPrefix(user) };
    const nc = await connect({ servers: nats.url, user, pass: passwords[user], ...inbox });
    connections.push(nc);
    return nc;
  }

  const stored = async (id: string) => (await pool.query('SELECT 1 FROM audit_logs WHERE id = $1', [id])).rowCount === 1;

  /** Publishes an entry as the api does; resolves once the audit-writer stored it (so it has read everything before it). */
  async function apiAudits(): Promise<void> {
    const real = entry('stack.created');
    await jetstream(await as('api')).publish(SUBJECTS.audit(real.action), JSON.stringify(real), { msgID: real.id });
    await eventually(() => stored(real.id), { what: 'the api entry in audit_logs' });
  }

  before(async () => {
    nats = await startNats(hubNatsServer(passwords));
    pool = new pg.Pool({ connectionString: infra.db.url, max: 2 });
    const port = await freePort();
    writer = await spawnService({
      service: 'audit-writer',
      env: {
        BROKKR__DATABASE__URL: infra.db.url,
        BROKKR__NATS__URL: nats.url,
        BROKKR__NATS__USER: 'audit-writer',
        BROKKR__NATS__PASSWORD: passwords['audit-writer'],
        BROKKR__HEALTH__PORT: String(port),
      },
      readyUrl: `http://127.0.0.1:${port}/readyz`,
    });
  });
  after(async () => {
    await Promise.allSettled(connections.map((nc) => nc.close()));
    await writer?.stop();
    await pool?.end();
    await nats?.stop();
  });

  it('refuses a client without credentials: it cannot connect, so nothing it sends on brokkr.audit.x is stored', async () => {
    const forged = entry('x');
    const refused = await connect({ servers: nats.url }).then(
      async (nc) => {
        // Today's open server: the forged entry goes out as the review showed.
        await jetstream(nc).publish(SUBJECTS.audit(forged.action), JSON.stringify(forged), { msgID: forged.id });
        await nc.close();
        return undefined;
      },
      (err: Error) => err,
    );
    expect(refused?.message).to.equal('Authorization Violation');
    const wrongPassword = await connect({ servers: nats.url, user: 'api', pass: 'p-not-the-password' }).then(
      (nc) => nc.close().then(() => undefined),
      (err: Error) => err,
    );
    expect(wrongPassword?.message).to.equal('Authorization Violation');
    await apiAudits();
    expect(await stored(forged.id)).to.equal(false);
  });

  it("refuses brokkr.audit.> to every other service's user (and integration) beyond the actions it audits", async () => {
    const forged: Record<string, string> = {};
    for (const user of ['webhook-dispatcher', 'maintenance', 'audit-writer', 'integration'] as const) {
      const attempt = entry('stack.deleted');
      forged[user] = attempt.id;
      const err = await jetstream(await as(user))
        .publish(SUBJECTS.audit(attempt.action), JSON.stringify(attempt), { msgID: attempt.id })
        .then(
          () => undefined,
          (e: Error) => e,
        );
      expect(err?.message, user).to.equal('Permissions Violation for Publish to "brokkr.audit.stack.deleted"');
    }
    await apiAudits();
    for (const [user, id] of Object.entries(forged)) expect(await stored(id), user).to.equal(false);
  });

  it('stores nothing a permitted subject carries for another action: the dispatcher can only ever audit a dead delivery', async () => {
    // The dispatcher may publish brokkr.audit.webhook.delivery_failed; the body claims a stack deletion.
    const smuggled = entry('stack.deleted');
    const ack = await jetstream(await as('webhook-dispatcher')).publish(
      SUBJECTS.audit('webhook.delivery_failed'),
      JSON.stringify(smuggled),
      {
        msgID: smuggled.id,
      },
    );
    expect(ack.stream).to.equal(STREAMS.audit);
    await apiAudits();
    expect(await stored(smuggled.id)).to.equal(false);
    expect(writer.output()).to.include('dropping a malformed audit message').and.include('the subject is not brokkr.audit.stack.deleted');
  });

  it('keeps the read-only integration user from publishing events and hints, and from the hub durables', async () => {
    const integration = await as('integration');
    const js = jetstream(integration);
    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => 'accepted',
        (e: Error) => e.message,
      );
    const event = { id: randomUUID(), event_type: 'stack.created', timestamp: new Date().toISOString(), data: {} };
    expect(await refusal(js.publish(SUBJECTS.event('stack.created'), JSON.stringify(event), { msgID: event.id }))).to.equal(
      'Permissions Violation for Publish to "brokkr.events.stack.created"',
    );
    expect(await refusal(js.consumers.get(STREAMS.audit, 'audit-writer'))).to.match(
      /^Permissions Violation for Publish to "\$JS\.API\.CONSUMER\./,
    );
    const api = await as('api');
    const events = await (await jetstreamManager(api)).streams.info(STREAMS.events);
    expect(events.state.messages, 'no event reached BROKKR_EVENTS').to.equal(0);

    // Core hints: the api's replicas listen on brokkr.notify.agent.*; only the api's own arrives.
    const heard: string[] = [];
    api.subscribe(SUBJECTS.notifyAgentAll, { callback: (_err, m) => void heard.push(m.string()) });
    await api.flush();
    const violations: string[] = [];
    void (async () => {
      for await (const s of integration.status()) if (s.type === 'error') violations.push(s.error.message);
    })();
    integration.publish(SUBJECTS.notifyAgent('forged'), '{"agent_id":"forged"}');
    integration.publish(SUBJECTS.notifyDeliveries, '{}');
    await integration.flush();
    api.publish(SUBJECTS.notifyAgent('real'), '{"agent_id":"real"}');
    await api.flush();
    await eventually(() => heard.length > 0 && violations.length === 2, { what: "the api's hint and two refusals" });
    expect(heard).to.deep.equal(['{"agent_id":"real"}']);
    expect(violations).to.deep.equal([
      'Permissions Violation for Publish to "brokkr.notify.agent.forged"',
      'Permissions Violation for Publish to "brokkr.notify.deliveries"',
    ]);
  });

  it('lets the integration user read both streams with consumers of its own (docs/nats-subjects.md §6)', async () => {
    const integration = await as('integration');
    const jsm = await jetstreamManager(integration);
    await jsm.consumers.add(STREAMS.events, {
      durable_name: 'billing-sync',
      filter_subject: 'brokkr.events.workorder.>',
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
    });
    const event = { id: randomUUID(), event_type: 'workorder.created', timestamp: new Date().toISOString(), data: {} };
    await jetstream(await as('api')).publish(SUBJECTS.event(event.event_type), JSON.stringify(event), { msgID: event.id });
    const durable = await jetstream(integration).consumers.get(STREAMS.events, 'billing-sync');
    const received = await durable.next({ expires: 5000 });
    expect(received?.json<{ id: string }>().id).to.equal(event.id);
    expect(await received!.ackAck()).to.equal(true);
    // nats:tail's way: an ordered consumer, nothing left on the server.
    const ordered = await jetstream(integration).consumers.get(STREAMS.audit, { filter_subjects: SUBJECTS.auditAll });
    const first = await ordered.next({ expires: 5000 });
    expect(first?.subject).to.match(/^brokkr\.audit\./);
  });

  it("keeps each hub service to its own replies: another service's inbox cannot be subscribed", async () => {
    const users: HubNatsUser[] = ['webhook-dispatcher', 'maintenance', 'audit-writer'];
    for (const user of users) {
      const nc = await as(user);
      const errors: string[] = [];
      nc.subscribe(`${natsInboxPrefix('api')}.>`, { callback: (e) => void (e && errors.push(e.message)) });
      // The server answers the SUB (with -ERR) before the PING of the flush.
      await nc.flush();
      expect(errors, user).to.deep.equal(['Permissions Violation for Subscription to "_INBOX_api.>"']);
    }
  });
});
