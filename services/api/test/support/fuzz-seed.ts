import { expect } from 'chai';
import type { ApiClient } from './client.ts';
import { createAgent, createGenerator, createStack, uniqueName } from './factories.ts';
import type { TestApi } from './api.ts';

/**
 * Real resources for the schema fuzzer, so operations with a path id reach their handlers'
 * success and refusal branches, not only the 404 of a random UUID. Destructive operations
 * (delete, PAK rotation) get their own victims, so the identities and the main resources survive
 * the whole run.
 */
export interface FuzzSeed {
  generator: { id: string; pak: string };
  agent: { id: string; pak: string; name: string; clusterName: string };
  stack: string;
  deploymentObject: string;
  agentEvent: string;
  webhook: string;
  delivery: string;
  label: string;
  annotationKey: string;
  victims: { generator: string; agent: string; stack: string; webhook: string };
}

async function ok(res: Promise<{ status: number; text: string }>, status: number): Promise<void> {
  const { status: got, text } = await res;
  expect(got, text).to.equal(status);
}

async function seedAgent(api: TestApi, generatorId: string) {
  const { agent, initial_pak } = await createAgent(api.admin, { generator_ids: [generatorId] });
  await ok(api.admin.put(`/agents/${agent.id}`, { status: 'ACTIVE' }), 200);
  return { id: agent.id, pak: initial_pak, name: agent.name, clusterName: agent.cluster_name };
}

async function seedStackContent(admin: ApiClient, stack: string, agentId: string, names: { label: string; key: string }) {
  await ok(admin.post(`/stacks/${stack}/labels`, names.label), 201);
  await ok(admin.post(`/stacks/${stack}/annotations`, { stack_id: stack, key: names.key, value: 'v' }), 201);
  await ok(admin.post(`/agents/${agentId}/labels`, { agent_id: agentId, label: names.label }), 201);
  await ok(admin.post(`/agents/${agentId}/annotations`, { agent_id: agentId, key: names.key, value: 'v' }), 201);
  await ok(admin.post(`/agents/${agentId}/targets`, { agent_id: agentId, stack_id: stack }), 201);
  const object = await admin.post<{ id: string }>(`/stacks/${stack}/deployment-objects`, {
    yaml_content: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fuzz\n',
    is_deletion_marker: false,
  });
  expect(object.status, object.text).to.equal(201);
  return object.body.id;
}

async function seedWebhook(admin: ApiClient): Promise<string> {
  // A private address: test sends are refused by the SSRF guard instead of leaving the machine.
  const res = await admin.post<{ id: string }>('/webhooks', {
    name: uniqueName('hook'),
    url: 'http://127.0.0.1:9/hook',
    event_types: ['*'],
  });
  expect(res.status, res.text).to.equal(201);
  return res.body.id;
}

/** A delivery leased to the agent (deliveries are made by the dispatcher, which is not running). */
async function seedDelivery(api: TestApi, webhook: string, agentId: string): Promise<string> {
  const { rows } = await api.sql.query<{ id: string }>(
    `INSERT INTO webhook_deliveries (subscription_id, event_type, event_id, payload, status, acquired_by, acquired_until)
     VALUES ($1, 'stack.created', gen_random_uuid(), '{"id":"fuzz"}', 'acquired', $2, now() + interval '1 hour') RETURNING id`,
    [webhook, agentId],
  );
  return rows[0]!.id;
}

export async function seedForFuzzing(api: TestApi): Promise<FuzzSeed> {
  const generator = await createGenerator(api.admin);
  const agent = await seedAgent(api, generator.generator.id);
  const stack = (await createStack(generator.client, { generator_id: generator.generator.id })).id;
  const names = { label: 'fuzz-label', key: 'fuzz-key' };
  const deploymentObject = await seedStackContent(api.admin, stack, agent.id, names);
  const event = await api.admin.as(agent.pak).post<{ id: string }>(`/agents/${agent.id}/events`, {
    agent_id: agent.id,
    deployment_object_id: deploymentObject,
    event_type: 'DEPLOY',
    status: 'SUCCESS',
  });
  expect(event.status, event.text).to.equal(201);
  const webhook = await seedWebhook(api.admin);
  const victimGenerator = await createGenerator(api.admin);
  const victims = {
    generator: victimGenerator.generator.id,
    agent: (await createAgent(api.admin)).agent.id,
    stack: (await createStack(api.admin, { generator_id: victimGenerator.generator.id })).id,
    webhook: await seedWebhook(api.admin),
  };
  return {
    generator: { id: generator.generator.id, pak: generator.pak },
    agent,
    stack,
    deploymentObject,
    agentEvent: event.body.id,
    webhook,
    delivery: await seedDelivery(api, webhook, agent.id),
    label: names.label,
    annotationKey: names.key,
    victims,
  };
}
