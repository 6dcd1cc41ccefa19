import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { eventually, freePort, spawnService, useTestInfra, type RunningService } from '@brokkr/testkit';
import { createGenerator, startTestApi, type TestApi } from './support/index.ts';

interface ReloadBody {
  reloaded_at: string;
  changes: { key: string; old_value: string; new_value: string }[];
  success: boolean;
  message: string;
}

/** One series of a Prometheus text exposition, e.g. `brokkr_maintenance_setting{key="X"`. */
async function scrape(url: string, series: string): Promise<number | undefined> {
  const text = await (await fetch(url)).text();
  const line = text.split('\n').find((l) => l.startsWith(series));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('api POST /admin/config/reload', () => {
  const infra = useTestInfra({ nats: true });
  let dir: string;
  let file: string;
  let api: TestApi;
  let maintenance: RunningService;
  let auditWriter: RunningService;
  let metricsUrl: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'brokkr-reload-'));
    file = path.join(dir, 'brokkr.toml');
    await writeFile(file, '[broker]\naudit_log_retention_days = 60\n');
    api = await startTestApi(infra, { env: { BROKKR_CONFIG_FILE: file } });
    const base = { BROKKR__DATABASE__URL: api.database.url, BROKKR__NATS__URL: api.natsUrl };
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    // The watcher is off: maintenance learns about the change only through the api's broadcast.
    maintenance = await spawnService({
      service: 'maintenance',
      env: { ...base, BROKKR__HEALTH__PORT: String(port), BROKKR_CONFIG_FILE: file, BROKKR_CONFIG_WATCHER_ENABLED: 'false' },
      readyUrl: `http://127.0.0.1:${port}/readyz`,
    });
    const auditPort = await freePort();
    auditWriter = await spawnService({
      service: 'audit-writer',
      env: { ...base, BROKKR__HEALTH__PORT: String(auditPort) },
      readyUrl: `http://127.0.0.1:${auditPort}/readyz`,
    });
  });
  after(async () => {
    await maintenance?.stop();
    await auditWriter?.stop();
    await api?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('is admin only', async () => {
    const { client } = await createGenerator(api.admin);
    const denied = await client.post('/admin/config/reload');
    expect(denied.status).to.equal(403);
    expect(denied.body).to.include({ code: 'admin_required' });
    expect((await api.anonymous.post('/admin/config/reload')).status).to.equal(401);
  });

  it('reports "No changes detected" when the sources did not change', async () => {
    const res = await api.admin.post<ReloadBody>('/admin/config/reload');
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({ success: true, message: 'No changes detected' });
    expect(res.body.changes).to.deep.equal([]);
    expect(Date.parse(res.body.reloaded_at)).to.be.a('number').and.not.NaN;
  });

  it('applies file changes in maintenance at once and audits them', async () => {
    const setting = `brokkr_maintenance_setting{key="BROKKR__BROKER__AUDIT_LOG_RETENTION_DAYS"`;
    expect(await scrape(metricsUrl, setting)).to.equal(60, 'maintenance read the file at start-up');
    await writeFile(
      file,
      '[log]\nlevel = "debug"\n[broker]\naudit_log_retention_days = 45\ndiagnostic_max_age_hours = 2\n[maintenance]\nwork_order_interval_seconds = 30\n',
    );

    const res = await api.admin.post<ReloadBody>('/admin/config/reload');
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({ success: true, message: '3 setting(s) updated' });
    // The file's log level is not among them: the environment (BROKKR__LOG__LEVEL=info) wins.
    const changes = [
      { key: 'broker.diagnostic_max_age_hours', old_value: '1', new_value: '2' },
      { key: 'broker.audit_log_retention_days', old_value: '60', new_value: '45' },
      { key: 'maintenance.work_order_interval_seconds', old_value: '10', new_value: '30' },
    ];
    expect(res.body.changes).to.deep.equal(changes);

    await eventually(async () => (await scrape(metricsUrl, setting)) === 45, { what: 'maintenance to apply the new retention' });
    expect(await scrape(metricsUrl, 'brokkr_maintenance_interval_seconds{task="work-orders"')).to.equal(30);
    expect(maintenance.output()).to.contain('configuration applied: 3 setting(s) changed');

    const entry = await eventually(
      async () => {
        const logs = await api.admin.get<{ logs: { actor_type: string; resource_type: string; details: { changes: unknown[] } }[] }>(
          '/admin/audit-logs',
          {
            query: { action: 'config.reloaded' },
          },
        );
        return logs.body.logs.find((l) => l.details.changes.length === 3);
      },
      { what: 'the config.reloaded audit entry' },
    );
    expect(entry).to.include({ actor_type: 'admin', resource_type: 'config' });
    expect(entry.details).to.deep.equal({ changes });
  });

  it('answers 500 and changes nothing when the file is invalid', async () => {
    await writeFile(file, '[broker\naudit_log_retention_days = ');
    const res = await api.admin.post('/admin/config/reload');
    expect(res.status).to.equal(500);
    expect(res.body).to.include({ code: 'internal_error' });

    await writeFile(
      file,
      '[log]\nlevel = "debug"\n[broker]\naudit_log_retention_days = 45\ndiagnostic_max_age_hours = 2\n[maintenance]\nwork_order_interval_seconds = 30\n',
    );
    const again = await api.admin.post<ReloadBody>('/admin/config/reload');
    expect(again.body).to.include({ message: 'No changes detected' });
  });
});
