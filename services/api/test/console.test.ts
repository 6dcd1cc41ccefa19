import { expect } from 'chai';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { eventually, freePort, spawnService, useTestInfra, type RunningService } from '@brokkr/testkit';
import { launchChromium, screenshot } from './console-browser.ts';
import { createAgent, createGenerator, createStack, startTestApi, uniqueName, type ApiClient, type TestApi } from './support/index.ts';

/**
 * The operator console (/ui) in a real browser: headless Chromium (Debian's package) driven by
 * playwright-core, against a real api on PostgreSQL and NATS. The agent is driven through the
 * REST API. Screenshots go to test-artifacts/console/.
 */
describe('console in a browser', function () {
  this.timeout(120_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let browser: Browser;
  let auditWriter: RunningService;
  let context: BrowserContext;
  let page: Page;
  let tenant: { generator: { id: string }; pak: string; client: ApiClient };
  let agent: { agent: { id: string; name: string }; client: ApiClient };
  let outsider: { agent: { id: string; name: string } };
  let stack: { id: string; name: string };
  let otherStack: { id: string; name: string };
  let objectId: string;
  let hookId: string;

  before(async function () {
    // The first run on a machine without Chromium installs Debian's package (minutes).
    this.timeout(15 * 60_000);
    api = await startTestApi(infra);
    // The audit log page reads what the audit-writer stores: run the real one.
    const healthPort = await freePort();
    auditWriter = await spawnService({
      service: 'audit-writer',
      env: { BROKKR__DATABASE__URL: infra.db.url, BROKKR__NATS__URL: infra.nats.url, BROKKR__HEALTH__PORT: String(healthPort) },
      readyUrl: `http://127.0.0.1:${healthPort}/readyz`,
    });
    tenant = await createGenerator(api.admin);
    agent = await createAgent(api.admin, { name: uniqueName('edge'), generator_ids: [tenant.generator.id] });
    outsider = await createAgent(api.admin, { name: uniqueName('outsider') });
    stack = await createStack(tenant.client, { generator_id: tenant.generator.id, name: uniqueName('payments') });
    const other = await createGenerator(api.admin);
    otherStack = await createStack(other.client, { generator_id: other.generator.id, name: uniqueName('hidden') });
    const target = await api.admin.post(`/agents/${agent.agent.id}/targets`, { agent_id: agent.agent.id, stack_id: stack.id });
    expect(target.status, target.text).to.equal(201);
    const created = await tenant.client.post(`/stacks/${stack.id}/deployment-objects`, {
      yaml_content: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: console-demo\ndata:\n  greeting: hello\n',
    });
    expect(created.status, created.text).to.equal(201);
    objectId = created.body.id;
    const hook = await api.admin.post('/webhooks', {
      name: 'console-hook',
      url: 'http://127.0.0.1:9/hook',
      event_types: ['deployment.applied'],
    });
    expect(hook.status, hook.text).to.equal(201);
    hookId = hook.body.id;
    const heartbeat = await agent.client.post(`/agents/${agent.agent.id}/heartbeat`, { k8s_reachable: true, k8s_api_latency_ms: 12 });
    expect(heartbeat.status, heartbeat.text).to.equal(204);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await auditWriter?.stop();
    await api?.stop();
  });

  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
  });
  afterEach(() => context?.close());

  async function signIn(pak: string): Promise<void> {
    await page.goto(`${api.url}/ui`);
    await page.fill('input[name=pak]', pak);
    await page.click('button[type=submit]');
  }

  it('signs in with the admin PAK, keeps it in sessionStorage only, and navigates every page', async () => {
    await signIn(api.adminPak);
    await page.locator('[data-testid=fleet-table]').getByText(agent.agent.name).waitFor();
    await page.locator('[data-testid=live-status]', { hasText: 'live' }).waitFor();
    expect(await page.textContent('[data-testid=who]')).to.equal('admin');
    const row = page.locator(`[data-testid=fleet-table] tr[data-agent="${agent.agent.id}"]`);
    expect(await row.textContent())
      .to.contain('reachable')
      .and.contain('12 ms');
    expect(await page.evaluate(() => sessionStorage.getItem('brokkr.console.pak'))).to.equal(api.adminPak);
    expect(await page.evaluate(() => localStorage.length)).to.equal(0);
    await screenshot(page, 'fleet');
    await page.fill('[data-testid=fleet-search]', outsider.agent.name);
    await page.locator('[data-testid=pager]', { hasText: /^1–1 of 1$/ }).waitFor();
    expect(await page.locator('[data-testid=fleet-table] tbody tr').allTextContents()).to.have.length(1);
    expect(await page.textContent('[data-testid=fleet-table] tbody')).to.contain(outsider.agent.name);

    await page.click('[data-nav=stacks]');
    await page.locator('[data-testid=stacks-table]').getByText(stack.name).waitFor();
    await screenshot(page, 'stacks');
    await page.locator('[data-testid=stacks-table]').getByText(stack.name).click();
    await page.locator(`[data-testid=objects-table] tr[data-object="${objectId}"]`).waitFor();
    await screenshot(page, 'stack');

    await page.locator(`[data-testid=objects-table] tr[data-object="${objectId}"] a`).first().click();
    await page.locator('[data-testid=yaml]', { hasText: 'console-demo' }).waitFor();
    expect(await page.textContent('[data-testid=sequence]')).to.match(/^\d+$/);
    expect(await page.textContent('[data-testid=checksum]')).to.match(/^[0-9a-f]{64}$/);
    await screenshot(page, 'deployment-object');

    await page.click(`a[href="#/agents/${agent.agent.id}"]`);
    await page.locator('[data-testid=agent-facts]').waitFor();
    await screenshot(page, 'agent');

    // A delivery that used up its attempts (seeded: no dispatcher runs here); an admin may send it again.
    const { rows } = await api.sql.query<{ id: string }>(
      `INSERT INTO webhook_deliveries (subscription_id, event_type, event_id, payload, status, attempts, last_error, completed_at)
       VALUES ($1, 'deployment.applied', gen_random_uuid(), '{}', 'dead', 5, 'connection refused', now()) RETURNING id`,
      [hookId],
    );
    const deliveryId = rows[0]!.id;
    await page.click('[data-nav=webhooks]');
    await page.locator('[data-testid=webhooks-table]').getByText('console-hook').click();
    const delivery = page.locator(`[data-testid=deliveries-table] tr[data-delivery="${deliveryId}"]`);
    await delivery.getByText('dead').waitFor();
    await screenshot(page, 'webhooks');
    await delivery.locator('[data-testid=redeliver]').click();
    await page.locator('[data-testid=redeliver-outcome]').waitFor();
    await delivery.getByText('pending').waitFor();
    const after = await api.sql.query('SELECT status, attempts FROM webhook_deliveries WHERE id = $1', [deliveryId]);
    expect(after.rows[0]).to.deep.equal({ status: 'pending', attempts: 0 });

    // The audit-writer stores entries in batches: wait until it has the redelivery.
    await eventually(async () => (await api.admin.get('/admin/audit-logs?action=webhook.redelivered')).body.total === 1, {
      what: 'the webhook.redelivered audit entry',
    });
    await page.click('[data-nav=audit]');
    await page.locator('[data-testid=audit-table]').getByText('agent.created').first().waitFor();
    await page.fill('[data-testid=audit-filters] input[name=action]', 'webhook.*');
    await page.click('[data-testid=audit-filters] button[type=submit]');
    // webhook.created and, from the redelivery above, webhook.redelivered.
    await page.locator('[data-testid=pager]', { hasText: /^1–2 of 2$/ }).waitFor();
    const actions = await page.locator('[data-testid=audit-table] tbody tr td:nth-child(3)').allTextContents();
    expect(actions.sort()).to.deep.equal(['webhook.created', 'webhook.redelivered']);
    await screenshot(page, 'audit');

    await page.click('[data-nav=work-orders]');
    await page.locator('[data-testid=no-work-orders]').waitFor();
    await screenshot(page, 'work-orders');
  });

  it("shows a deployment object's state change live when the agent reports", async () => {
    // The page also re-reads every 15 s (for health reports, which announce nothing). To show the
    // change comes from the live stream, the page's clock is paused and only moved on in 100 ms
    // steps, never as far as that re-read.
    await page.clock.install();
    await signIn(api.adminPak);
    await page.locator('[data-testid=live-status]', { hasText: 'live' }).waitFor();
    await page.clock.pauseAt(Date.now() + 100);
    // Page time advanced since the pause; the 15 s re-read cannot run before 15,000 of it.
    let pageMs = 0;
    const advanceUntilVisible = async (target: Locator) => {
      while (!(await target.isVisible())) {
        expect(pageMs, 'page time moved on without the live update').to.be.lessThan(14_000);
        // Effects and the debounce run on (fake) timers and animation frames.
        await page.clock.runFor(100);
        pageMs += 100;
        await new Promise((r) => setTimeout(r, 100)); // real time for requests to travel
      }
    };
    await page.goto(`${api.url}/ui#/deployment-objects/${objectId}`);
    const state = page.locator(`[data-testid=object-agents] tr[data-agent="${agent.agent.id}"] [data-testid=agent-state]`);
    await advanceUntilVisible(state.getByText('pending'));

    const reported = await agent.client.post(`/agents/${agent.agent.id}/events`, {
      agent_id: agent.agent.id,
      deployment_object_id: objectId,
      event_type: 'DEPLOY',
      status: 'SUCCESS',
      message: 'applied by the test',
    });
    expect(reported.status, reported.text).to.equal(201);
    await advanceUntilVisible(state.getByText('applied'));
    await screenshot(page, 'deployment-object-applied');
  });

  it('a generator PAK sees only its own agents and stacks, and admin pages say "not permitted"', async () => {
    await signIn(tenant.pak);
    await page.locator('[data-testid=fleet-table]').getByText(agent.agent.name).waitFor();
    expect(await page.textContent('[data-testid=who]')).to.match(/^generator /);
    expect(await page.textContent('[data-testid=fleet-table]')).not.to.contain(outsider.agent.name);

    await page.click('[data-nav=stacks]');
    await page.locator('[data-testid=stacks-table]').getByText(stack.name).waitFor();
    expect(await page.textContent('[data-testid=stacks-table]')).not.to.contain(otherStack.name);

    await page.goto(`${api.url}/ui#/stacks/${otherStack.id}`);
    await page.locator('[data-testid=not-permitted]').waitFor();

    for (const nav of ['webhooks', 'audit', 'work-orders']) {
      await page.click(`[data-nav=${nav}]`);
      await page.locator('[data-testid=not-permitted]').first().waitFor();
    }
    await screenshot(page, 'generator-not-permitted');
  });

  it('rejects a bad PAK and stores nothing', async () => {
    await signIn('brokkr_BRnotreal_0000000000000000000000000000');
    await page.locator('[data-testid=sign-in-error]', { hasText: 'rejected' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('brokkr.console.pak'))).to.equal(null);
    await screenshot(page, 'bad-pak');
  });

  it('serves Swagger UI at /docs, and "Try it out" works with a PAK', async () => {
    await page.goto(`${api.url}/docs`);
    await page.locator('.swagger-ui .info .title', { hasText: 'Brokkr API' }).waitFor();
    await page.click('.swagger-ui .btn.authorize');
    await page.fill('.auth-container input', api.adminPak);
    await page.click('.auth-container .modal-btn.auth');
    await page.click('.swagger-ui .btn-done');
    const op = page.locator('#operations-auth-post_api_v1_auth_pak');
    await op.locator('.opblock-summary').click();
    await op.locator('.try-out__btn').click();
    await op.locator('.execute').click();
    await op.locator('.live-responses-table .response-col_status', { hasText: '200' }).waitFor();
    expect(await op.locator('.live-responses-table').textContent()).to.contain('"admin": true');
    await screenshot(page, 'api-docs', false);
  });

  it("shows a stack's override layers and an agent's render with the layer that set each field", async () => {
    const layer = {
      name: 'edge-greeting',
      priority: 3,
      patches: [{ target: { kind: 'ConfigMap', name: 'console-demo' }, merge_patch: { data: { greeting: 'hello {{ agent.name }}' } } }],
    };
    const created = await tenant.client.post(`/stacks/${stack.id}/overrides`, layer);
    expect(created.status, created.text).to.equal(201);
    await signIn(tenant.pak);
    await page.goto(`${api.url}/ui#/stacks/${stack.id}`);
    await page.locator('[data-testid=layers-table] tr[data-layer=edge-greeting]').waitFor();
    await page.selectOption('[data-testid=render-agent]', agent.agent.id);
    await page.locator('[data-testid=render-yaml]', { hasText: `greeting: hello ${agent.agent.name}` }).waitFor();
    expect(await page.locator('[data-testid=field-origins]').textContent())
      .to.contain('/data/greeting')
      .and.to.contain('edge-greeting');
    await screenshot(page, 'stack-renders');
  });
});
