import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { useTestInfra } from '@brokkr/testkit';
import { launchChromium, screenshot } from './console-browser.ts';
import { createAgent, createGenerator, createStack, startTestApi, uniqueName, type ApiClient, type TestApi } from './support/index.ts';

interface TestAgent {
  id: string;
  name: string;
  client: ApiClient;
}

/**
 * The console's drift views in a real browser (headless Chromium driven by playwright-core)
 * against a real api: a stack's drift (its policy, open drift grouped by field, one row per
 * drifted field with both values and the manager, Accept), updated live when an agent reports,
 * and the fleet heatmap of stacks × clusters. Agents report over REST as ours do.
 * Screenshots: test-artifacts/console/drift-stack.png, drift-heatmap.png.
 */
describe('console drift views in a browser', function () {
  this.timeout(120_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let tenant: { generator: { id: string }; pak: string; client: ApiClient };
  let agents: TestAgent[];
  let stack: { id: string; name: string };
  let quiet: { id: string; name: string };

  async function activeAgent(): Promise<TestAgent> {
    const { agent, client } = await createAgent(api.admin, { name: uniqueName('edge'), generator_ids: [tenant.generator.id] });
    expect((await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
    return { id: agent.id, name: agent.name, client };
  }

  /** `a` reports that `name` of the stack runs `live` replicas instead of 2, written by `manager`. */
  async function report(a: TestAgent, stackId: string, drift: { name: string; live: number; manager?: string }): Promise<void> {
    const { name, live, manager = 'kubectl-scale' } = drift;
    const body = {
      reports: [
        {
          id: randomUUID(),
          stack_id: stackId,
          deployment_object_id: null,
          object: { api_version: 'apps/v1', kind: 'Deployment', namespace: 'shop', name },
          state: 'open',
          fields: [{ path: '/spec/replicas', desired: 2, live, manager, operation: 'Update', time: new Date().toISOString() }],
          observed_at: new Date().toISOString(),
        },
      ],
    };
    const res = await a.client.post(`/agents/${a.id}/drift`, body);
    expect(res.status, res.text).to.equal(200);
  }

  before(async function () {
    // The first run on a machine without Chromium installs Debian's package (minutes).
    this.timeout(15 * 60_000);
    api = await startTestApi(infra);
    tenant = await createGenerator(api.admin);
    agents = [await activeAgent(), await activeAgent()];
    stack = await createStack(tenant.client, { generator_id: tenant.generator.id, name: uniqueName('shop') });
    quiet = await createStack(tenant.client, { generator_id: tenant.generator.id, name: uniqueName('quiet') });
    for (const a of agents)
      for (const s of [stack, quiet])
        expect((await api.admin.post(`/agents/${a.id}/targets`, { agent_id: a.id, stack_id: s.id })).status).to.equal(201);
    await report(agents[0]!, stack.id, { name: 'web', live: 5 });
    await report(agents[1]!, stack.id, { name: 'web', live: 7 });
    await report(agents[1]!, quiet.id, { name: 'api', live: 3, manager: 'hpa' });
    expect((await tenant.client.put(`/stacks/${stack.id}/drift-policy`, { mode: 'report' })).status).to.equal(200);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await api?.stop();
  });

  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
  });
  afterEach(() => context?.close());

  async function signIn(pak: string): Promise<void> {
    await page.goto(`${api.url}/ui`);
    await page.fill('input[name=pak]', pak);
    await page.click('button[type=submit]');
    await page.locator('[data-testid=live-status]', { hasText: 'live' }).waitFor();
  }

  it('a stack page shows its drift: the policy, open drift by field on N of M clusters, each field with both values and its manager; a new report appears live; Accept closes it, and so does Keep live (an override layer for that cluster)', async () => {
    await signIn(tenant.pak);
    await page.goto(`${api.url}/ui#/stacks/${stack.id}`);
    await page.locator('[data-testid=drift-policy]', { hasText: 'report' }).waitFor();
    const group = page.locator('[data-testid=drift-group][data-key="/spec/replicas"]');
    await group.waitFor();
    expect(await group.textContent())
      .to.contain('2 of 2')
      .and.contain('kubectl-scale');
    const rows = page.locator('[data-testid=drift-table] tbody tr');
    expect(await rows.count()).to.equal(2);
    expect(await page.locator('[data-testid=drift-table]').textContent())
      .to.contain('2 → 5')
      .and.contain('2 → 7');

    // An agent reports while the page is open: drift.detected reaches the console's event stream.
    await report(agents[0]!, stack.id, { name: 'worker', live: 9, manager: 'kubectl-edit' });
    await page.locator('[data-testid=drift-table] tbody tr', { hasText: '2 → 9' }).waitFor();
    expect(await page.locator('[data-testid=drift-manager]', { hasText: 'kubectl-edit' }).count()).to.equal(1);
    await screenshot(page, 'drift-stack');

    const row = page.locator('[data-testid=drift-table] tbody tr', { hasText: '2 → 9' });
    const recordId = await row.getAttribute('data-record');
    await row.locator('button[data-action=accept]').click();
    await page.locator('[data-testid=confirm]', { hasText: 'Accept this drift?' }).waitFor();
    await page.click('[data-testid=confirm-yes]');
    await page.locator('[data-testid=drift-table] tbody tr', { hasText: '2 → 9' }).waitFor({ state: 'detached' });
    expect((await tenant.client.get(`/drift/${recordId}`)).body.state).to.equal('accepted');
    const policy = (await tenant.client.get(`/stacks/${stack.id}/drift-policy`)).body.policy;
    expect(policy.ignore[0].target).to.deep.include({ kind: 'Deployment', name: 'worker' });

    // Keep live: an override layer for that one cluster holds the live value instead of an ignore rule.
    await report(agents[0]!, stack.id, { name: 'cache', live: 4, manager: 'kubectl-edit' });
    const kept = page.locator('[data-testid=drift-table] tbody tr', { hasText: '2 → 4' });
    await kept.waitFor();
    const keptId = await kept.getAttribute('data-record');
    await kept.locator('button[data-action=keep-live]').click();
    await page.locator('[data-testid=confirm]', { hasText: 'Keep the live values on this cluster?' }).waitFor();
    await page.click('[data-testid=confirm-yes]');
    await page.locator('[data-testid=drift-table] tbody tr', { hasText: '2 → 4' }).waitFor({ state: 'detached' });
    expect((await tenant.client.get(`/drift/${keptId}`)).body.state).to.equal('accepted');
    const layers = (await tenant.client.get(`/stacks/${stack.id}/overrides`)).body as { selector: unknown }[];
    expect(layers.map((l) => l.selector)).to.deep.equal([{ agent_ids: [agents[0]!.id] }]);
  });

  it('the drift page maps open drift stacks × clusters and groups it across the fleet', async () => {
    await signIn(api.adminPak);
    await page.click('[data-nav=drift]');
    const heatmap = page.locator('[data-testid=heatmap]');
    await heatmap.waitFor();
    const cell = (s: string, a: string) => page.locator(`[data-testid=heat-cell][data-stack="${s}"][data-agent="${a}"]`);
    expect(await cell(stack.id, agents[0]!.id).getAttribute('data-records')).to.equal('1');
    expect(await cell(stack.id, agents[1]!.id).getAttribute('data-records')).to.equal('1');
    expect(await cell(quiet.id, agents[0]!.id).getAttribute('data-records')).to.equal('0');
    expect(await cell(quiet.id, agents[1]!.id).getAttribute('data-records')).to.equal('1');
    expect(await heatmap.textContent())
      .to.contain(stack.name)
      .and.contain(agents[0]!.name);
    await page.locator('[data-testid=drift-group][data-key="/spec/replicas"]').waitFor();
    await page.selectOption('[data-testid=drift-by]', 'manager');
    await page.locator('[data-testid=drift-group][data-key="hpa"]').waitFor();
    await screenshot(page, 'drift-heatmap');
  });
});
