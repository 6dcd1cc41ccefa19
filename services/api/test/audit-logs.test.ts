import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import { createGenerator, insertAgentRow, startTestApi, type TestApi } from './support/index.ts';

interface Seed {
  actor_type: string;
  actor_id?: string | null;
  action: string;
  resource_type: string;
  resource_id?: string | null;
  timestamp: string;
  ip_address?: string | null;
  user_agent?: string | null;
}

describe('api GET /admin/audit-logs', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let agent: { id: string; pak: string };
  let generator: { id: string; name: string };
  let generatorPak: string;
  const resource = randomUUID();

  before(async () => {
    api = await startTestApi(infra);
    agent = await insertAgentRow(api.sql, { name: 'audited-agent' });
    const created = await createGenerator(api.admin, { name: 'audited-gen' });
    generator = created.generator;
    generatorPak = created.pak;
    const seeds: Seed[] = [
      { actor_type: 'admin', action: 'agent.created', resource_type: 'agent', resource_id: agent.id, timestamp: '2030-01-01T00:00:00Z' },
      { actor_type: 'admin', action: 'agent.updated', resource_type: 'agent', resource_id: agent.id, timestamp: '2030-01-01T00:00:01Z' },
      {
        actor_type: 'agent',
        actor_id: agent.id,
        action: 'agent.registered',
        resource_type: 'agent',
        resource_id: agent.id,
        timestamp: '2030-01-01T00:00:02Z',
      },
      {
        actor_type: 'generator',
        actor_id: generator.id,
        action: 'stack.created',
        resource_type: 'stack',
        resource_id: resource,
        timestamp: '2030-01-01T00:00:03Z',
      },
      {
        actor_type: 'system',
        action: 'auth.failed',
        resource_type: 'system',
        timestamp: '2030-01-01T00:00:04Z',
        ip_address: '198.51.100.1',
        user_agent: 'curl/8',
      },
      { actor_type: 'agent', actor_id: randomUUID(), action: 'agent_x', resource_type: 'agent', timestamp: '2030-01-01T00:00:05Z' },
    ];
    for (const s of seeds) {
      await api.sql.query(
        `INSERT INTO audit_logs ("timestamp", actor_type, actor_id, action, resource_type, resource_id, details, ip_address, user_agent)
         VALUES ($1, $2, $3, $4, $5, $6, '{"k":1}', $7, $8)`,
        [
          s.timestamp,
          s.actor_type,
          s.actor_id ?? null,
          s.action,
          s.resource_type,
          s.resource_id ?? null,
          s.ip_address ?? null,
          s.user_agent ?? null,
        ],
      );
    }
  });

  after(async () => {
    await api?.stop();
  });

  const inWindow = { from: '2030-01-01T00:00:00Z', to: '2030-01-02T00:00:00Z' };
  const actions = (body: { logs: { action: string }[] }) => body.logs.map((l) => l.action);

  it('returns the envelope, newest first, with actor names and without null ip/user agent', async () => {
    const res = await api.admin.get('/admin/audit-logs', { query: inWindow });
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ total: 6, count: 6, limit: 100, offset: 0 });
    expect(actions(res.body)).to.deep.equal([
      'agent_x',
      'auth.failed',
      'stack.created',
      'agent.registered',
      'agent.updated',
      'agent.created',
    ]);
    const byAction = Object.fromEntries(res.body.logs.map((l: { action: string }) => [l.action, l]));
    expect(byAction['agent.created'].actor_name).to.equal('admin');
    expect(byAction['auth.failed'].actor_name).to.equal('system');
    expect(byAction['auth.failed']).to.include({ ip_address: '198.51.100.1', user_agent: 'curl/8' });
    expect(byAction['agent.registered'].actor_name).to.equal('audited-agent');
    expect(byAction['agent.registered']).to.not.have.any.keys('ip_address', 'user_agent');
    expect(byAction['stack.created'].actor_name).to.equal('audited-gen');
    expect(byAction['agent_x'].actor_name).to.equal(null);
    expect(byAction['agent.created'].details).to.deep.equal({ k: 1 });
    expect(byAction['agent.created'].timestamp).to.equal('2030-01-01T00:00:00.000Z');
  });

  it('filters by actor, action (exact and prefix*), resource and time window', async () => {
    const q = async (query: Record<string, string>) =>
      actions((await api.admin.get('/admin/audit-logs', { query: { ...inWindow, ...query } })).body);
    expect(await q({ actor_type: 'agent' })).to.deep.equal(['agent_x', 'agent.registered']);
    expect(await q({ actor_id: generator.id })).to.deep.equal(['stack.created']);
    expect(await q({ action: 'agent.created' })).to.deep.equal(['agent.created']);
    // `agent.*` is a prefix on "agent." — `agent_x` must not match through LIKE's `_` wildcard.
    expect(await q({ action: 'agent.*' })).to.deep.equal(['agent.registered', 'agent.updated', 'agent.created']);
    expect(await q({ resource_type: 'stack' })).to.deep.equal(['stack.created']);
    expect(await q({ resource_id: agent.id })).to.deep.equal(['agent.registered', 'agent.updated', 'agent.created']);
    expect(await q({ from: '2030-01-01T00:00:01Z', to: '2030-01-01T00:00:03Z' })).to.deep.equal(['agent.registered', 'agent.updated']);
    expect(await q({ from: '2030-01-01T01:00:01+01:00', to: '2030-01-01T00:00:02Z' })).to.deep.equal(['agent.updated']);
  });

  it('paginates with clamped limit and offset; total counts all matches', async () => {
    const page = await api.admin.get('/admin/audit-logs', { query: { ...inWindow, limit: 2, offset: 1 } });
    expect(page.body).to.include({ total: 6, count: 2, limit: 2, offset: 1 });
    expect(actions(page.body)).to.deep.equal(['auth.failed', 'stack.created']);
    const clamped = await api.admin.get('/admin/audit-logs', { query: { ...inWindow, limit: 5000, offset: -3 } });
    expect(clamped.body).to.include({ limit: 1000, offset: 0, count: 6 });
    const min = await api.admin.get('/admin/audit-logs', { query: { ...inWindow, limit: 0 } });
    expect(min.body).to.include({ limit: 1, count: 1 });
    const past = await api.admin.get('/admin/audit-logs', { query: { ...inWindow, offset: 50 } });
    expect(past.body).to.include({ total: 6, count: 0 });
  });

  it('rejects bad query values with 400 and non-admins with 403 admin_required', async () => {
    for (const query of [{ actor_id: 'x' }, { limit: 'ten' }, { from: 'yesterday' }, { resource_id: '1' }]) {
      const res = await api.admin.get('/admin/audit-logs', { query });
      expect(res.status, JSON.stringify(query)).to.equal(400);
      expect(res.body.code).to.equal('invalid_query');
    }
    for (const pak of [generatorPak, agent.pak]) {
      const res = await api.admin.as(pak).get('/admin/audit-logs');
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('admin_required');
    }
  });

  it('still names a deleted agent', async () => {
    await api.sql.query('UPDATE agents SET deleted_at = now() WHERE id = $1', [agent.id]);
    const res = await api.admin.get('/admin/audit-logs', { query: { ...inWindow, actor_id: agent.id } });
    expect(res.body.logs[0].actor_name).to.equal('audited-agent');
  });
});
