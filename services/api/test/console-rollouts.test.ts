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

const configMap = (version: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shop\ndata:\n  version: "${version}"\n`;

/**
 * The console's rollout, preview, template and expiry pages in a real browser (headless Chromium
 * driven by playwright-core) against a real api and the real maintenance service, which moves
 * rollouts on and announces expiring stacks. Agents are driven through the REST API: their apply
 * events and health reports are what the rollout gates read. Screenshots: test-artifacts/console/.
 */
describe('console rollouts, previews, templates and expiry in a browser', function () {
  this.timeout(120_000);
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let maintenance: RunningService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let tenant: { generator: { id: string }; pak: string; client: ApiClient };
  let canary: TestAgent;
  let other: TestAgent;
  let stack: { id: string; name: string };

  const POLICY = {
    waves: [
      { name: 'canary', selector: { labels: ['canary'] }, soak_seconds: 0, progress_deadline_seconds: 3600 },
      { name: 'everyone', percent: 100, soak_seconds: 0 },
    ],
    auto_rollback: true,
  };

  async function activeAgent(labels: string[]): Promise<TestAgent> {
    const { agent, client } = await createAgent(api.admin, { name: uniqueName('edge'), generator_ids: [tenant.generator.id] });
    expect((await api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' })).status).to.equal(200);
    for (const label of labels)
      expect((await api.admin.post(`/agents/${agent.id}/labels`, { agent_id: agent.id, label })).status).to.equal(201);
    return { id: agent.id, name: agent.name, client };
  }

  async function publish(version: string): Promise<string> {
    const res = await tenant.client.post(`/stacks/${stack.id}/deployment-objects`, { yaml_content: configMap(version) });
    expect(res.status, res.text).to.equal(201);
    return res.body.id as string;
  }

  async function report(a: TestAgent, objectId: string, status: 'SUCCESS' | 'FAILURE'): Promise<void> {
    const message = status === 'SUCCESS' ? 'applied 1 object' : 'admission webhook "policy.example" denied the request';
    const event = { agent_id: a.id, deployment_object_id: objectId, event_type: 'DEPLOY', status, message };
    expect((await a.client.post(`/agents/${a.id}/events`, event)).status).to.equal(201);
    const health = {
      deployment_objects: [{ id: objectId, status: status === 'SUCCESS' ? 'healthy' : 'failing', checked_at: new Date().toISOString() }],
    };
    expect((await a.client.patch(`/agents/${a.id}/health-status`, health)).status).to.equal(200);
  }

  async function rolloutOf(objectId: string, status?: string) {
    return eventually(
      async () => {
        const list = (await tenant.client.get(`/stacks/${stack.id}/rollouts`)).body as {
          id: string;
          status: string;
          deployment_object_id: string;
        }[];
        const found = list.find((r) => r.deployment_object_id === objectId);
        return found && (!status || found.status === status) ? found : undefined;
      },
      { what: `the rollout of ${objectId}${status ? ` ${status}` : ''}` },
    );
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
        BROKKR__MAINTENANCE__STACK_EXPIRY_INTERVAL_SECONDS: '1',
      },
      readyUrl: `http://127.0.0.1:${port}/readyz`,
    });
    tenant = await createGenerator(api.admin);
    canary = await activeAgent(['canary']);
    other = await activeAgent([]);
    stack = await createStack(tenant.client, { generator_id: tenant.generator.id, name: uniqueName('shop') });
    for (const a of [canary, other])
      expect((await api.admin.post(`/agents/${a.id}/targets`, { agent_id: a.id, stack_id: stack.id })).status).to.equal(201);
    const v1 = await publish('1');
    await report(canary, v1, 'SUCCESS');
    await report(other, v1, 'SUCCESS');
    expect((await tenant.client.put(`/stacks/${stack.id}/rollout-policy`, POLICY)).status).to.equal(200);
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

  async function signIn(pak: string): Promise<void> {
    await page.goto(`${api.url}/ui`);
    await page.fill('input[name=pak]', pak);
    await page.click('button[type=submit]');
    await page.locator('[data-testid=live-status]', { hasText: 'live' }).waitFor();
  }

  const rolloutBox = () => page.locator('[data-testid=rollout]');

  it('a stack page shows the policy and the rollout wave by wave, and the rollback as it happens', async () => {
    const v2 = await publish('2-broken');
    await rolloutOf(v2, 'progressing');
    await signIn(tenant.pak);
    await page.goto(`${api.url}/ui#/stacks/${stack.id}`);
    await page.locator('[data-testid=policy]').getByText('labelled canary').waitFor();
    await page.locator('[data-testid=rollout][data-status=progressing]').waitFor();
    const canaryWave = page.locator('[data-testid=wave][data-wave=canary]');
    await canaryWave.getByText('released').waitFor();
    expect(await page.locator('[data-testid=wave][data-wave=everyone]').textContent()).to.contain('held');
    await canaryWave.locator('[data-testid=deadline]').waitFor();
    expect(await canaryWave.textContent()).to.contain(canary.name);
    await screenshot(page, 'rollout-progressing');

    // The canary fails while the page is open: maintenance's gate fails, every agent is served v1
    // again, and the page follows over the live stream without a reload.
    await report(canary, v2, 'FAILURE');
    await page.locator('[data-testid=rollout][data-status=rolled_back]').waitFor();
    await page.locator('[data-testid=timeline] li[data-event="rollout.rolled_back"]').first().waitFor();
    expect(await canaryWave.locator('[data-testid=wave-counts]').textContent()).to.contain('1 failed');
    expect(await canaryWave.textContent()).to.contain('admission webhook');
    // A rolled-back rollout is settled: no action applies to it any more.
    expect(await rolloutBox().locator('[data-testid=rollout-actions]').count()).to.equal(0);
    await screenshot(page, 'rollout-rolled-back');
    const served = await other.client.get(`/agents/${other.id}/target-state`, { query: { mode: 'full' } });
    expect((served.body as { id: string }[]).map((o) => o.id)).to.not.include(v2);
  });

  it('pause, resume and abort from the page, each after a confirmation', async () => {
    const v3 = await publish('3');
    const rollout = await rolloutOf(v3, 'progressing');
    await signIn(tenant.pak);
    await page.goto(`${api.url}/ui#/stacks/${stack.id}`);
    await page.locator('[data-testid=rollout][data-status=progressing]').waitFor();

    await rolloutBox().locator('button[data-action=pause]').click();
    await page.locator('[data-testid=confirm]', { hasText: 'Pause this rollout?' }).waitFor();
    await screenshot(page, 'rollout-confirm-pause', false);
    expect((await tenant.client.get(`/rollouts/${rollout.id}`)).body.status).to.equal('progressing');
    await page.click('[data-testid=confirm-yes]');
    await page.locator('[data-testid=rollout][data-status=paused]').waitFor();
    expect((await tenant.client.get(`/rollouts/${rollout.id}`)).body.status).to.equal('paused');

    await rolloutBox().locator('button[data-action=resume]').click();
    await page.click('[data-testid=confirm-yes]');
    await page.locator('[data-testid=rollout][data-status=progressing]').waitFor();

    await rolloutBox().locator('button[data-action=abort]').click();
    await page.locator('[data-testid=confirm]', { hasText: 'previous object again' }).waitFor();
    await page.click('[data-testid=confirm-yes]');
    await page.locator('[data-testid=rollout][data-status=aborted]').waitFor();
    expect((await tenant.client.get(`/rollouts/${rollout.id}`)).body.status).to.equal('aborted');
    expect(await rolloutBox().locator('[data-testid=rollout-actions]').count()).to.equal(0);
  });

  it('the rollouts page lists the fleet’s rollouts and filters them by status', async () => {
    await signIn(api.adminPak);
    await page.click('[data-nav=rollouts]');
    await page.locator('[data-testid=rollouts-table]').getByText(stack.name).first().waitFor();
    await page.selectOption('[data-testid=rollouts-status]', 'rolled_back');
    await page.locator('[data-testid=rollouts-table] tbody tr', { hasText: 'rolled_back' }).first().waitFor();
    await eventually(
      async () => ((await page.locator('[data-testid=rollouts-table] tbody tr', { hasText: 'aborted' }).count()) === 0 ? true : undefined),
      {
        what: 'the aborted rollout filtered out',
      },
    );
    expect(await page.textContent('[data-testid=rollouts-table] tbody')).to.contain('canary 0/1 (1 failed)');
    await screenshot(page, 'rollouts');
  });

  it('a preview page shows per agent created / changed / pruned with the field diff, and errors', async () => {
    const created = await tenant.client.post(`/stacks/${stack.id}/previews`, { yaml_content: configMap('4') });
    expect(created.status, created.text).to.equal(201);
    const previewId = created.body.id as string;
    const object = { api_version: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'shop' };
    const results = {
      [canary.id]: { objects: [{ ...object, action: 'changed', diff: [{ path: 'data.version', before: '"1"', after: '"4"' }] }] },
      [other.id]: {
        objects: [
          { ...object, action: null, diff: [], error: 'admission webhook "policy.example" denied the request: version 4 is frozen' },
          { ...object, name: 'old', action: 'pruned', diff: [] },
        ],
      },
    };
    for (const a of [canary, other]) {
      const res = await a.client.post(`/previews/${previewId}/results`, results[a.id]);
      expect(res.status, res.text).to.equal(201);
    }
    await signIn(tenant.pak);
    await page.goto(`${api.url}/ui#/stacks/${stack.id}`);
    await page.locator(`[data-testid=previews] a[href="#/previews/${previewId}"]`).click();
    const canaryBox = page.locator(`[data-testid=preview-agent][data-agent="${canary.id}"]`);
    await canaryBox.locator('[data-testid=diff]').getByText('data.version').waitFor();
    expect(await canaryBox.textContent())
      .to.contain('"1"')
      .and.contain('"4"')
      .and.contain('1 changed');
    const otherBox = page.locator(`[data-testid=preview-agent][data-agent="${other.id}"]`);
    expect(await otherBox.locator('[data-testid=object-error]').textContent()).to.contain('version 4 is frozen');
    expect(await otherBox.locator('li[data-action=pruned]').textContent()).to.contain('ConfigMap default/old');
    expect(await page.textContent('[data-testid=preview-counts]')).to.contain('with errors');
    await screenshot(page, 'preview');
  });

  it('templates: the list, a template’s versions and schema, and the stacks rendered from it', async () => {
    const name = uniqueName('web-tpl');
    const body = (v: string) => ({
      description: 'a config map per environment',
      template_content: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ env }}-web\ndata:\n  v: "${v}"\n`,
      parameters_schema: JSON.stringify({ type: 'object', required: ['env'], properties: { env: { type: 'string' } } }),
    });
    const v1 = await tenant.client.post('/templates', { name, ...body('1') });
    expect(v1.status, v1.text).to.equal(201);
    const v2 = await tenant.client.put(`/templates/${v1.body.id}`, body('2'));
    expect(v2.status, v2.text).to.equal(200);
    const rendered = await createStack(tenant.client, { generator_id: tenant.generator.id, name: uniqueName('from-tpl') });
    const inst = await tenant.client.post(`/stacks/${rendered.id}/deployment-objects/from-template`, {
      template_id: v2.body.id,
      parameters: { env: 'staging' },
    });
    expect(inst.status, inst.text).to.equal(201);

    await signIn(tenant.pak);
    await page.click('[data-nav=templates]');
    const row = page.locator('[data-testid=templates-table] tr', { hasText: name });
    await row.waitFor();
    const [, , latest, versions] = await row.locator('td').allTextContents();
    expect([latest, versions]).to.deep.equal(['2', '2']);
    await screenshot(page, 'templates');
    await row.getByText(name).click();
    await page.locator('[data-testid=template-stacks]').getByText(rendered.name).waitFor();
    expect(await page.locator('[data-testid=template-versions] li').count()).to.equal(2);
    expect(await page.textContent('[data-testid=template-schema]')).to.contain('"required"');
    await screenshot(page, 'template');
  });

  it('a stack with an expiry shows it, and stack.expiring in its timeline', async () => {
    const set = await tenant.client.put(`/stacks/${stack.id}/expiry`, { ttl_seconds: 300 });
    expect(set.status, set.text).to.equal(200);
    await signIn(tenant.pak);
    await page.goto(`${api.url}/ui#/stacks/${stack.id}`);
    await page.locator('[data-testid=expiry]', { hasText: /expires in \d+ min/ }).waitFor();
    // maintenance announces it (the warning window is 10 minutes): the timeline shows it live.
    await page.locator('[data-testid=timeline] li[data-event="stack.expiring"]').first().waitFor();
    await screenshot(page, 'stack-expiring');
    expect((await tenant.client.delete(`/stacks/${stack.id}/expiry`)).status).to.equal(200);
  });
});
