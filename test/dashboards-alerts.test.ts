import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { stringify } from 'yaml';
import { repoRoot } from '@brokkr/infra';
import { generatePak } from '@brokkr/pak';
import {
  eventually,
  freePort,
  spawnService,
  startKubeApiServer,
  TestClient,
  useTestInfra,
  type KubeApiServer,
  type RunningService,
} from '@brokkr/testkit';
import { opsTool } from '../scripts/lib/ops-tools.ts';
import {
  alertExprs,
  dashboardExprs,
  dashboardPanels,
  familyOf,
  loadDashboard,
  metricTypes,
  metricsIn,
  withoutGrafanaVariables,
  type Dashboard,
} from './support/promql.ts';

/**
 * deploy/grafana/brokkr.json and deploy/prometheus/brokkr-alerts.yaml: the rules pass
 * `promtool check rules` and their unit tests (`promtool test rules`), every dashboard query parses
 * as PromQL, and every metric either of them reads is exported by a running Brokkr process: the four
 * hub services on a real PostgreSQL and NATS, and an agent against the test kube-apiserver.
 * promtool is built from the Go module proxy on first use (scripts/build-ops-tools.sh).
 */

const exec = promisify(execFile);
const dashboardFile = path.join(repoRoot, 'deploy/grafana/brokkr.json');
const alertsFile = path.join(repoRoot, 'deploy/prometheus/brokkr-alerts.yaml');
const alertTestsFile = path.join(repoRoot, 'deploy/prometheus/brokkr-alerts.test.yaml');
const HUB = ['webhook-dispatcher', 'audit-writer', 'maintenance'];

async function promtool(binary: string, args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await exec(binary, args, { maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('Grafana dashboard and Prometheus alerts (deploy/)', function () {
  this.timeout(20 * 60_000); // a cold promtool build takes several minutes
  let tool: string;
  let dashboard: Dashboard;

  before(async () => {
    dashboard = await loadDashboard(dashboardFile);
  });

  describe('promtool', () => {
    before(async () => {
      tool = await opsTool('promtool');
    });

    it('promtool check rules accepts the alert rules', async () => {
      const { code, out } = await promtool(tool, ['check', 'rules', alertsFile]);
      expect(code, out).to.equal(0);
      expect(out).to.match(/SUCCESS: \d+ rules found/);
    });

    it('the alert rules pass their unit tests (promtool test rules: they fire on bad series, stay silent on good ones)', async () => {
      const { code, out } = await promtool(tool, ['test', 'rules', alertTestsFile]);
      expect(code, out).to.equal(0);
      expect(out).to.include('SUCCESS');
    });

    it('every dashboard query is valid PromQL (checked by promtool as recording rules)', async () => {
      const exprs = dashboardExprs(dashboard);
      expect(exprs.length).to.be.greaterThan(20);
      const rules = exprs.map((e, i) => ({ record: `brokkr:dashboard_query:${i}`, expr: withoutGrafanaVariables(e.expr) }));
      const dir = await mkdtemp(path.join(os.tmpdir(), 'brokkr-dashboard-'));
      try {
        const file = path.join(dir, 'dashboard-queries.yaml');
        await writeFile(file, stringify({ groups: [{ name: 'dashboard', rules }] }));
        const { code, out } = await promtool(tool, ['check', 'rules', file]);
        expect(code, out).to.equal(0);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });

  it('the dashboard is well-formed: unique panel ids, a templated Prometheus data source, panels inside the 24-column grid', () => {
    const panels = dashboardPanels(dashboard);
    const ids = panels.map((p) => p.id);
    expect(new Set(ids).size).to.equal(ids.length);
    expect(dashboard.templating.list.map((v) => v.name)).to.include('datasource');
    for (const p of panels) {
      expect(p.gridPos.x + p.gridPos.w, p.title).to.be.at.most(24);
      if (p.type !== 'row') expect(p.datasource?.uid, p.title).to.equal('${datasource}');
    }
    const titles = panels.map((p) => p.title.toLowerCase()).join('\n');
    for (const topic of ['heartbeat age', 'reconcile duration', 'reconcile failures', 'target-state', 'webhook', 'audit', 'latency']) {
      expect(titles, `a panel about ${topic}`).to.include(topic.split(' ')[0]);
    }
  });

  describe('on running services', () => {
    const infra = useTestInfra({ nats: true });
    const services: RunningService[] = [];
    let kube: KubeApiServer;
    let types: Map<string, string>;
    let expositions: Record<string, string>;
    const urls: Record<string, string> = {};

    before(async () => {
      kube = await startKubeApiServer();
      const { pak, hash } = generatePak();
      const apiPort = await freePort();
      const apiMetricsPort = await freePort();
      const api = `http://127.0.0.1:${apiPort}`;
      const common = {
        BROKKR__DATABASE__URL: infra.db.url,
        BROKKR__NATS__URL: infra.nats.url,
        BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: 'c'.repeat(64),
      };
      const env = {
        ...common,
        BROKKR__BROKER__PAK_HASH: hash,
        BROKKR__BROKER__HOST: '127.0.0.1',
        BROKKR__BROKER__PORT: String(apiPort),
        BROKKR__BROKER__METRICS_PORT: String(apiMetricsPort),
      };
      services.push(await spawnService({ service: 'api', env, readyUrl: `${api}/readyz` }));
      // What Prometheus scrapes (the chart's annotations): the metrics port, with the per-agent series.
      urls.api = `http://127.0.0.1:${apiMetricsPort}/metrics`;
      for (const service of HUB) {
        const port = await freePort();
        const url = `http://127.0.0.1:${port}`;
        services.push(await spawnService({ service, env: { ...common, BROKKR__HEALTH__PORT: String(port) }, readyUrl: `${url}/readyz` }));
        urls[service] = `${url}/metrics`;
      }
      // An ACTIVE agent against the test kube-apiserver: it heartbeats and long-polls its target state.
      const admin = new TestClient(api, pak);
      const generators = await admin.get<{ id: string; name: string }[]>('/generators');
      const generator = generators.body.find((g) => g.name === 'admin-generator')!.id;
      const created = await admin.post('/agents', { name: 'metrics-agent', cluster_name: 'metrics-cluster', generator_ids: [generator] });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect((await admin.put(`/agents/${created.body.agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
      const agentPort = await freePort();
      const agentEnv = {
        BROKKR__AGENT__BROKER_URL: api,
        BROKKR__AGENT__PAK: created.body.initial_pak as string,
        BROKKR__AGENT__AGENT_NAME: 'metrics-agent',
        BROKKR__AGENT__CLUSTER_NAME: 'metrics-cluster',
        BROKKR__AGENT__KUBECONFIG: kube.kubeconfigPath,
        BROKKR__AGENT__HEALTH_PORT: String(agentPort),
        BROKKR__AGENT__POLLING_INTERVAL: '1',
        BROKKR__AGENT__LONG_POLL_WAIT_SECONDS: '1',
      };
      services.push(await spawnService({ service: 'agent', env: agentEnv, readyUrl: `http://127.0.0.1:${agentPort}/readyz` }));
      urls.agent = `http://127.0.0.1:${agentPort}/metrics`;
      // The agent is ready once it heartbeated and fetched its target state; scrape after that.
      expositions = {};
      for (const [service, url] of Object.entries(urls)) {
        const res = await fetch(url);
        expect(res.status, url).to.equal(200);
        expositions[service] = await res.text();
      }
      types = new Map(Object.values(expositions).flatMap((text) => [...metricTypes(text)]));
    });

    after(async () => {
      await Promise.allSettled(services.map((s) => s.stop()));
      await kube?.stop();
    });

    afterEach(function () {
      if (this.currentTest?.state === 'failed') for (const s of services) console.log(s.output().slice(-3000));
    });

    const sources = async () => [
      ...dashboardExprs(dashboard).map((e) => ({ where: `dashboard panel "${e.panel}"`, expr: e.expr })),
      ...(await alertExprs(alertsFile)).map((a) => ({ where: `alert ${a.alert}`, expr: a.expr })),
    ];

    it('every metric the dashboard and the alerts read is exported by a running service (histogram series by a histogram)', async () => {
      const missing: string[] = [];
      let checked = 0;
      for (const { where, expr } of await sources()) {
        const { names, selectors } = metricsIn(expr);
        for (const other of selectors.filter((s) => !names.includes(s))) missing.push(`${where}: ${other} is not a Brokkr metric`);
        for (const name of names) {
          const { family, type } = familyOf(name, types);
          checked++;
          if (!type) missing.push(`${where}: ${name}`);
          else if (family !== name && type !== 'histogram') missing.push(`${where}: ${name} but ${family} is a ${type}`);
        }
      }
      expect(missing).to.deep.equal([]);
      expect(checked).to.be.greaterThan(50);
    });

    it('each service exports its own families (the dashboard covers all five processes)', () => {
      const owner = (family: string) => Object.keys(expositions).filter((s) => metricTypes(expositions[s]!).has(family));
      expect(owner('brokkr_http_request_duration_seconds')).to.deep.equal(['api']);
      expect(owner('brokkr_webhook_delivery_attempts_total')).to.deep.equal(['webhook-dispatcher']);
      expect(owner('brokkr_audit_entries_written_total')).to.deep.equal(['audit-writer']);
      expect(owner('brokkr_maintenance_runs_total')).to.deep.equal(['maintenance']);
      expect(owner('brokkr_agent_reconcile_duration_seconds')).to.deep.equal(['agent']);
      expect(owner('process_cpu_seconds_total')).to.have.members(['api', ...HUB, 'agent']);
    });

    it("the target-state selectors match the api's real endpoint label; the agent's and the hub's heartbeat series are set", async () => {
      const { api, agent } = await eventually(
        async () => {
          const [apiText, agentText] = await Promise.all([fetch(urls.api!), fetch(urls.agent!)].map(async (r) => (await r).text()));
          const heartbeat = /^brokkr_agent_last_heartbeat_timestamp\{[^}]*\} (\S+)$/m.exec(agentText!);
          return Number(heartbeat?.[1]) > 0 && apiText!.includes('target-state') ? { api: apiText!, agent: agentText! } : undefined;
        },
        { timeoutMs: 60_000, what: 'a heartbeat and a target-state request' },
      );
      const endpoints = [...new Set([...api.matchAll(/^brokkr_http_requests_total\{[^}]*endpoint="([^"]+)"/gm)].map((m) => m[1]!))];
      // The same (anchored) regexes as the dashboard's and the alerts' matchers.
      const targetState = endpoints.filter((e) => /^.*\/target-state$/.test(e));
      expect(targetState, `endpoints seen: ${endpoints.join(', ')}`).to.not.be.empty;
      expect(
        targetState.filter((e) => !/^.*\/(target-state|pending)$/.test(e)),
        'left out of the latency alert',
      ).to.deep.equal([]);
      const heartbeat = /^brokkr_agent_last_heartbeat_timestamp\{[^}]*\} (\S+)$/m.exec(agent);
      expect(Number(heartbeat?.[1]), 'seconds since the epoch of an accepted heartbeat').to.be.greaterThan(1_600_000_000);
      // The hub's fleet-wide view of the same heartbeat (the dashboard's and BrokkrAgentHeartbeatAgeHigh's series).
      const age = await eventually(
        async () =>
          /^brokkr_agent_heartbeat_age_seconds\{[^}]*agent_name="metrics-agent"[^}]*\} (\S+)$/m.exec(await (await fetch(urls.api!)).text()),
        { timeoutMs: 30_000, what: "the api's heartbeat-age series of the agent" },
      );
      expect(Number(age[1])).to.be.at.least(0);
    });
  });
});
