import { expect } from 'chai';
import { freePort, spawnService, useTestInfra, type RunningService } from '@brokkr/testkit';
import { ApiClient, insertAgentRow, startTestApi, uniqueName, type TestApi } from './support/index.ts';

const ORDERS = 1000;
const AGENTS = 20;
/** Orders an agent tries to claim from one pending list before reading it again. */
const PICK = 20;

interface Agent {
  id: string;
  client: ApiClient;
}

interface Behaviour {
  /** Share of claims the agent "crashes" on (never completes): maintenance must release them. */
  abandon: number;
  /** Share of completions reported as a retryable failure. */
  fail: number;
}

class Tally {
  claims = new Map<string, number>();
  completed = new Map<string, number>();
  retries = new Map<string, number>();
  lostClaims = 0;
  notClaimable = 0;
  done = 0;
  private bump(map: Map<string, number>, id: string) {
    map.set(id, (map.get(id) ?? 0) + 1);
  }
  claimed(id: string) {
    this.bump(this.claims, id);
  }
  finished(id: string) {
    this.bump(this.completed, id);
    this.done++;
  }
  retried(id: string) {
    this.bump(this.retries, id);
  }
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** One agent: reads its pending list (long-poll), claims in random order, completes what it won. */
async function runAgent(agent: Agent, behaviour: Behaviour, tally: Tally, deadline: number): Promise<void> {
  while (tally.done < ORDERS && Date.now() < deadline) {
    const pending = await agent.client.get<{ id: string }[]>(`/agents/${agent.id}/work-orders/pending`, { query: { wait: 1 } });
    expect(pending.status, pending.text).to.equal(200);
    for (const { id } of shuffle(pending.body).slice(0, PICK)) {
      const claim = await agent.client.post(`/work-orders/${id}/claim`, { agent_id: agent.id });
      if (claim.status === 404) {
        tally.notClaimable++;
        continue;
      }
      expect(claim.status, claim.text).to.equal(200);
      tally.claimed(id);
      if (Math.random() < behaviour.abandon) continue;
      const success = Math.random() >= behaviour.fail;
      const res = await agent.client.post(`/work-orders/${id}/complete`, { success, message: success ? 'ok' : 'transient' });
      if (res.status === 200) tally.finished(id);
      else if (res.status === 202) tally.retried(id);
      // The claim ran out and maintenance released it (another agent may even have finished it).
      else if (res.status === 403 || res.status === 404) tally.lostClaims++;
      else expect.fail(`complete: ${res.status} ${res.text}`);
    }
  }
}

/**
 * Exactly once under contention: 20 agent identities race through the HTTP API to claim and
 * complete 1,000 orders targeted at all of them (by label). Every order is completed and logged
 * exactly once; every successful claim is one `workorder.claimed` event. With the maintenance
 * service running (short claim timeouts, abandoned claims, retryable failures) and killed with
 * SIGKILL mid-run, the same holds, and each order was claimed once plus once per release/retry.
 */
describe('api work orders: exactly once under a race', function () {
  this.timeout(300_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;

  before(async () => {
    api = await startTestApi(infra, { env: { BROKKR__DATABASE__POOL_SIZE: '30' } });
  });
  after(() => api?.stop());

  async function setUp(order: Record<string, unknown>): Promise<{ agents: Agent[]; ids: string[]; workType: string }> {
    const label = uniqueName('race');
    const workType = uniqueName('wt').slice(0, 40);
    const agents: Agent[] = [];
    for (let i = 0; i < AGENTS; i++) {
      const row = await insertAgentRow(api.sql, { labels: [label], status: 'ACTIVE' });
      agents.push({ id: row.id, client: api.admin.as(row.pak) });
    }
    const ids: string[] = [];
    const create = async () => {
      while (ids.length < ORDERS) {
        ids.push('');
        const res = await api.admin.post('/work-orders', {
          work_type: workType,
          yaml_content: 'kind: Job',
          targeting: { labels: [label] },
          ...order,
        });
        expect(res.status, res.text).to.equal(201);
        ids[ids.indexOf('')] = res.body.id;
      }
    };
    await Promise.all(Array.from({ length: 10 }, create));
    return { agents, ids, workType };
  }

  async function eventCounts(type: string, field: string, ids: string[]): Promise<Map<string, number>> {
    const { rows } = await api.sql.query<{ id: string; n: number }>(
      `SELECT payload->'data'->>$2 AS id, count(*)::int AS n FROM outbox
        WHERE event_type = $1 AND payload->'data'->>$2 = ANY($3::text[]) GROUP BY 1`,
      [type, field, ids],
    );
    return new Map(rows.map((r) => [r.id, r.n]));
  }

  async function expectExactlyOnce(ids: string[], workType: string, tally: Tally): Promise<void> {
    expect(tally.done, 'successful completions').to.equal(ORDERS);
    expect(tally.completed.size).to.equal(ORDERS);
    expect(
      [...tally.completed.values()].every((n) => n === 1),
      'each order completed once',
    ).to.equal(true);
    const log = await api.sql.query<{ id: string }>('SELECT id FROM work_order_log WHERE work_type = $1', [workType]);
    expect(log.rowCount, 'log rows').to.equal(ORDERS);
    expect(new Set(log.rows.map((r) => r.id))).to.deep.equal(new Set(ids));
    expect((await api.sql.query('SELECT 1 FROM work_orders WHERE work_type = $1', [workType])).rowCount, 'left in the queue').to.equal(0);
    const completedEvents = await eventCounts('workorder.completed', 'work_order_log_id', ids);
    expect(completedEvents.size).to.equal(ORDERS);
    expect(
      [...completedEvents.values()].every((n) => n === 1),
      'one workorder.completed per order',
    ).to.equal(true);
    const claimedEvents = await eventCounts('workorder.claimed', 'work_order_id', ids);
    for (const id of ids) expect(claimedEvents.get(id), `claimed events of ${id}`).to.equal(tally.claims.get(id));
  }

  it(`${AGENTS} agents claim ${ORDERS} orders: each claimed, completed and logged exactly once`, async () => {
    const { agents, ids, workType } = await setUp({});
    const tally = new Tally();
    const started = Date.now();
    await Promise.all(agents.map((a) => runAgent(a, { abandon: 0, fail: 0 }, tally, Date.now() + 240_000)));
    const seconds = (Date.now() - started) / 1000;
    console.log(`      race: ${ORDERS} orders in ${seconds.toFixed(1)} s, ${tally.notClaimable} lost claim races`);
    await expectExactlyOnce(ids, workType, tally);
    expect(
      [...tally.claims.values()].every((n) => n === 1),
      'each order claimed once',
    ).to.equal(true);
    expect(tally.claims.size).to.equal(ORDERS);
  });

  describe('with maintenance killed (SIGKILL) and restarted mid-run', () => {
    let maintenance: RunningService | undefined;
    const start = async () => {
      const port = await freePort();
      maintenance = await spawnService({
        service: 'maintenance',
        env: {
          BROKKR__DATABASE__URL: api.database.url,
          BROKKR__NATS__URL: api.natsUrl,
          BROKKR__HEALTH__PORT: String(port),
          BROKKR__MAINTENANCE__WORK_ORDER_INTERVAL_SECONDS: '1',
        },
        readyUrl: `http://127.0.0.1:${port}/readyz`,
      });
    };
    after(async () => {
      await maintenance?.stop();
    });

    it('every order is still completed and logged exactly once; claims = 1 + releases + retries', async () => {
      const { agents, ids, workType } = await setUp({ claim_timeout_seconds: 1, backoff_seconds: 1, max_retries: 50 });
      await start();
      const tally = new Tally();
      const deadline = Date.now() + 240_000;
      const run = Promise.all(agents.map((a) => runAgent(a, { abandon: 0.03, fail: 0.05 }, tally, deadline)));
      let kills = 0;
      const killer = (async () => {
        for (const at of [ORDERS * 0.3, ORDERS * 0.6]) {
          while (tally.done < at && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
          await maintenance!.kill();
          kills++;
          // Not a proof of absence: maintenance stays down a moment so claims go stale meanwhile.
          await new Promise((r) => setTimeout(r, 500));
          await start();
        }
      })();
      await Promise.all([run, killer]);
      expect(kills).to.equal(2);
      await expectExactlyOnce(ids, workType, tally);
      const { rows } = await api.sql.query<{ id: string; n: number }>(
        `SELECT resource_id AS id, count(*)::int AS n FROM audit_logs
          WHERE action = 'workorder.claim_released' AND resource_id = ANY($1::uuid[]) GROUP BY 1`,
        [ids],
      );
      const released = new Map(rows.map((r) => [r.id, r.n]));
      let releases = 0;
      let retries = 0;
      for (const id of ids) {
        releases += released.get(id) ?? 0;
        retries += tally.retries.get(id) ?? 0;
        expect(tally.claims.get(id), `claims of ${id}`).to.equal(1 + (released.get(id) ?? 0) + (tally.retries.get(id) ?? 0));
      }
      console.log(
        `      kill: ${ORDERS} orders, ${releases} stale claims released, ${retries} retries, ${tally.lostClaims} completions after a release, 2 SIGKILLs`,
      );
      expect(releases, 'stale claims released').to.be.greaterThan(0);
      expect(retries, 'retries').to.be.greaterThan(0);
    });
  });
});
