import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { eventually, freePort, spawnService, useTestInfra, type RunningService } from '@brokkr/testkit';
import { launchChromium, screenshot } from './console-browser.ts';
import { createAgent, createGenerator, createStack, startTestApi, uniqueName, type ApiClient, type TestApi } from './support/index.ts';

interface TestAgent {
  id: string;
  name: string;
  client: ApiClient;
}
interface Tenant {
  id: string;
  pak: string;
  client: ApiClient;
}

const configMap = (name: string, version: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  version: "${version}"\n`;

/**
 * Order and consent in the console, in a real browser (headless Chromium driven by playwright-core)
 * against a real api and the real maintenance service (which moves rollouts to the wave that waits
 * for approvals): a dependency added on a stack's page, a cycle refused naming its stacks, an agent
 * shown waiting on the dependency and then served once it is healthy there; a wave waiting for
 * approvals, the submitter's approval refused in the API's words, another generator's approval from
 * its "Approvals" page releasing the wave. Agents are driven through REST (apply events, health
 * reports). Screenshots: test-artifacts/console/.
 */
describe('console dependencies and approvals in a browser', function () {
  this.timeout(120_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let maintenance: RunningService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let owner: Tenant;
  let approver: Tenant;

  async function tenant(): Promise<Tenant> {
    const { generator, pak, client } = await createGenerator(api.admin);
    return { id: generator.id, pak, client };
  }

  async function activeAgent(labels: string[], stacks: string[]): Promise<TestAgent> {
    const { agent, client } = await createAgent(api.admin, { name: uniqueName('edge'), generator_ids: [owner.id] });
    expect((await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
    for (const label of labels)
      expect((await api.admin.post(`/agents/${agent.id}/labels`, { agent_id: agent.id, label })).status).to.equal(201);
    for (const stack of stacks)
      expect((await api.admin.post(`/agents/${agent.id}/targets`, { agent_id: agent.id, stack_id: stack })).status).to.equal(201);
    return { id: agent.id, name: agent.name, client };
  }

  async function publish(stackId: string, version: string): Promise<string> {
    const res = await owner.client.post(`/stacks/${stackId}/deployment-objects`, { yaml_content: configMap(`cm-${version}`, version) });
    expect(res.status, res.text).to.equal(201);
    return res.body.id as string;
  }

  /** The agent applied the object and reports it healthy. */
  async function appliedHealthy(a: TestAgent, objectId: string): Promise<void> {
    const event = { agent_id: a.id, deployment_object_id: objectId, event_type: 'DEPLOY', status: 'SUCCESS', message: 'applied' };
    expect((await a.client.post(`/agents/${a.id}/events`, event)).status).to.equal(201);
    const health = { deployment_objects: [{ id: objectId, status: 'healthy', checked_at: new Date().toISOString() }] };
    expect((await a.client.patch(`/agents/${a.id}/health-status`, health)).status).to.equal(200);
  }

  async function served(a: TestAgent): Promise<string[]> {
    const res = await a.client.get<{ id: string }[]>(`/agents/${a.id}/target-state`, { query: { mode: 'full' } });
    expect(res.status, res.text).to.equal(200);
    return res.body.map((o) => o.id);
  }

  before(async function () {
    // The first run on a machine without Chromium installs Debian's package (minutes).
    this.timeout(15 * 60_000);
    api = await startTestApi(infra);
    const port = await freePort();
    maintenance = await spawnService({
      service: 'maintenance',
      env: {
        BROKKR__DATABASE__URL: infra.db.url,
        BROKKR__NATS__URL: infra.nats.url,
        BROKKR__HEALTH__PORT: String(port),
        BROKKR__MAINTENANCE__ROLLOUT_INTERVAL_SECONDS: '1',
      },
      readyUrl: `http://127.0.0.1:${port}/readyz`,
    });
    owner = await tenant();
    approver = await tenant();
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await maintenance?.stop();
    await api?.stop();
  });

  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
  });
  afterEach(() => context?.close());

  /** A browser context of its own, so that the next sign-in is another identity's. */
  async function freshPage(): Promise<void> {
    await context.close();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
  }

  async function signIn(pak: string): Promise<void> {
    await page.goto(`${api.url}/ui`);
    await page.fill('input[name=pak]', pak);
    await page.click('button[type=submit]');
    await page.locator('[data-testid=live-status]', { hasText: 'live' }).waitFor();
  }

  /** Picks `on` in the stack page's "waits for" form and submits it. */
  async function addDependency(on: { name: string }): Promise<void> {
    const form = page.locator('[data-testid=add-dependency]');
    await form.locator('[data-testid=dependency-stack] option', { hasText: on.name }).waitFor({ state: 'attached' });
    await form.locator('[data-testid=dependency-stack]').selectOption({ label: on.name });
    await form.locator('[data-testid=dependency-ready-when]').selectOption('healthy');
    await form.locator('[data-testid=dependency-add]').click();
  }

  it('a dependency added on the page, a cycle refused naming it, an agent waiting on it and then served', async () => {
    const db = await createStack(owner.client, { generator_id: owner.id, name: uniqueName('db') });
    const app = await createStack(owner.client, { generator_id: owner.id, name: uniqueName('app') });
    const edge = await activeAgent([], [db.id, app.id]);
    const dbObject = await publish(db.id, 'db-1');
    const appObject = await publish(app.id, 'app-1');

    await signIn(owner.pak);
    await page.goto(`${api.url}/ui#/stacks/${app.id}`);
    await page.locator('[data-testid=no-dependencies]').waitFor();
    await addDependency(db);
    const row = () => page.locator(`[data-testid=dependencies-table] tr[data-dependency="${db.id}"]`);
    await row().waitFor();
    expect(await row().textContent())
      .to.contain(db.name)
      .and.contain('healthy')
      .and.contain('on the same agent')
      .and.contain('you');
    const listed = await owner.client.get<{ stack_id: string; ready_when: string }[]>(`/stacks/${app.id}/dependencies`);
    expect(listed.body.map((d) => [d.stack_id, d.ready_when])).to.deep.equal([[db.id, 'healthy']]);

    // The agent has not reported db healthy: app waits there, and the page says on what.
    const line = () => page.locator(`[data-testid=agents-why] tr[data-agent="${edge.id}"]`);
    await page.locator(`[data-testid=agents-why] tr[data-agent="${edge.id}"][data-reason=dependency]`).waitFor();
    expect(await line().locator('[data-testid=agent-why]').textContent()).to.contain(`waiting: stack ${db.name} not healthy on this agent`);
    expect(await served(edge))
      .to.include(dbObject)
      .and.not.include(appObject);
    await screenshot(page, 'order-waiting-on-dependency');

    // db waiting for app would close a cycle: refused, the cycle shown by name in order.
    await page.goto(`${api.url}/ui#/stacks/${db.id}`);
    await page.locator('[data-testid=no-dependencies]').waitFor();
    await addDependency(app);
    const refusal = page.locator('[data-testid=refusal][data-code=dependency_cycle]');
    await refusal.locator('[data-testid=cycle]', { hasText: `${db.name} → ${app.name} → ${db.name}` }).waitFor();
    expect(await refusal.textContent()).to.contain('The dependency would close a cycle');
    expect((await owner.client.get(`/stacks/${db.id}/dependencies`)).body).to.deep.equal([]);
    await screenshot(page, 'order-cycle-refused');

    // An admin's page adds the stack's health summary: every agent waiting on a dependency, in one read.
    await freshPage();
    await signIn(api.adminPak);
    await page.goto(`${api.url}/ui#/stacks/${app.id}`);
    const summary = page.locator('[data-testid=waiting-summary]', { hasText: edge.name });
    await summary.waitFor();
    expect(await summary.textContent())
      .to.contain('1 agent(s) wait on a dependency')
      .and.contain(`${edge.name} (stack ${db.name} not healthy)`);

    // db becomes healthy on the agent while app's page is open: app is served there, and the page
    // shows it on its next read of the status (a health report announces no event: Refresh reads now).
    await page.goto(`${api.url}/ui#/stacks/${app.id}`);
    await page.locator(`[data-testid=agents-why] tr[data-agent="${edge.id}"][data-reason=dependency]`).waitFor();
    await appliedHealthy(edge, dbObject);
    await page.click('[data-testid=agents-why-refresh]');
    await page.locator(`[data-testid=agents-why] tr[data-agent="${edge.id}"][data-state=served]`).waitFor();
    expect(await line().locator('[data-testid=agent-why]').textContent()).to.equal('served');
    expect(await served(edge)).to.include(appObject);
    await screenshot(page, 'order-served');

    // Removing it from the page: the stack waits for nothing.
    await row().locator('[data-testid=dependency-remove]').click();
    await page.locator('[data-testid=no-dependencies]').waitFor();
    expect((await owner.client.get(`/stacks/${app.id}/dependencies`)).body).to.deep.equal([]);

    // A dependency by selector (added through the API) reads as the labels it selects and is removed by its own id.
    const bySelector = await owner.client.post(`/stacks/${app.id}/dependencies`, { selector: { labels: ['crds'] }, ready_when: 'applied' });
    expect(bySelector.status, bySelector.text).to.equal(201);
    await page.reload();
    const selectorRow = page.locator(`[data-testid=dependencies-table] tr[data-dependency="${bySelector.body.id}"]`);
    expect(await selectorRow.locator('td').first().innerText()).to.equal('every stack of its owner labelled crds');
    await selectorRow.locator('[data-testid=dependency-remove]').click();
    await page.locator('[data-testid=no-dependencies]').waitFor();
    expect((await owner.client.get(`/stacks/${app.id}/dependencies`)).body).to.deep.equal([]);
  });

  it('a wave waiting for approvals: the submitter refused in the API’s words, another generator’s approval releases it', async () => {
    const shop = await createStack(owner.client, { generator_id: owner.id, name: uniqueName('shop') });
    const canary = await activeAgent(['canary'], [shop.id]);
    const prod = await activeAgent([], [shop.id]);
    const v1 = await publish(shop.id, '1');
    for (const a of [canary, prod]) await appliedHealthy(a, v1);
    const policy = {
      waves: [
        { name: 'canary', selector: { labels: ['canary'] }, soak_seconds: 0, progress_deadline_seconds: 3600 },
        { name: 'prod', percent: 100, soak_seconds: 0, required_approvals: 1, approvers: [approver.id], approval_ttl_seconds: 3600 },
      ],
      auto_rollback: true,
    };
    expect((await owner.client.put(`/stacks/${shop.id}/rollout-policy`, policy)).status).to.equal(200);
    const v2 = await publish(shop.id, '2');
    await eventually(async () => ((await served(canary)).includes(v2) ? true : undefined), { what: 'the canary served v2' });
    await appliedHealthy(canary, v2);
    const rollout = await eventually(
      async () => {
        const [r] = (await owner.client.get<{ id: string; waves: { awaiting_approval: boolean }[] }[]>(`/stacks/${shop.id}/rollouts`)).body;
        return r?.waves[1]?.awaiting_approval ? r : undefined;
      },
      { what: 'the rollout waiting at the prod wave' },
    );

    // The owner (who submitted v2) sees the wave wait, and its approval is refused.
    await signIn(owner.pak);
    await page.goto(`${api.url}/ui#/stacks/${shop.id}`);
    const prodWave = () => page.locator('[data-testid=wave][data-wave=prod]');
    await prodWave().locator('[data-testid=wave-approvals-count]', { hasText: 'approvals 0/1' }).waitFor();
    expect(await prodWave().locator('.wave-head').textContent()).to.contain('waiting for approvals');
    await prodWave().locator('[data-testid=no-approvals]').waitFor();
    await page.locator(`[data-testid=agents-why] tr[data-agent="${prod.id}"][data-reason=approval]`).waitFor();
    expect(await page.locator(`[data-testid=agents-why] tr[data-agent="${prod.id}"] [data-testid=agent-why]`).textContent()).to.contain(
      'waiting: wave 2 needs approvals',
    );
    await prodWave().locator('[data-testid=approve]').click();
    const refused = prodWave().locator('[data-testid=refusal][data-code=approval_by_submitter]');
    await refused.waitFor();
    expect(await refused.textContent()).to.contain('Whoever submitted the deployment object may not approve its rollout');
    await screenshot(page, 'approval-submitter-refused');
    expect(await served(prod))
      .to.include(v1)
      .and.not.include(v2);

    // The approver finds the wave under Approvals and approves it with a comment: the wave goes.
    await freshPage();
    await signIn(approver.pak);
    await page.click('[data-nav=approvals]');
    const request = page.locator(`[data-testid=approval-request][data-rollout="${rollout.id}"][data-wave="1"]`);
    await request.locator('[data-testid=approval-counts]', { hasText: 'approvals 0/1' }).waitFor();
    expect(await request.textContent())
      .to.contain(shop.name)
      .and.contain('the rollout waits at this wave');
    await screenshot(page, 'approval-requests');
    await request.locator('input[name=comment]').fill('diff reviewed');
    await request.locator('[data-testid=approve]').click();
    await page.locator('[data-testid=no-approval-requests]').waitFor();
    const wave = (await owner.client.get(`/rollouts/${rollout.id}/waves/1/approvals`)).body;
    expect(wave).to.include({ approvals_counted: 1, released: true });
    expect(wave.approvals[0]).to.include({ approver_id: approver.id, comment: 'diff reviewed', counts: true });
    await eventually(async () => ((await served(prod)).includes(v2) ? true : undefined), { what: 'the prod agent served v2' });

    // The owner's page shows the wave released, who approved it, and the agent served.
    await freshPage();
    await signIn(owner.pak);
    await page.goto(`${api.url}/ui#/stacks/${shop.id}`);
    await prodWave().locator('[data-testid=wave-approvals-count]', { hasText: 'approvals 1/1' }).waitFor();
    expect(await prodWave().locator('.wave-head').textContent()).to.contain('released');
    expect(await prodWave().locator('[data-testid=approvals-table]').textContent()).to.contain('diff reviewed');
    await page.locator(`[data-testid=agents-why] tr[data-agent="${prod.id}"][data-state=served]`).waitFor();
    await screenshot(page, 'approval-released');
  });
});
