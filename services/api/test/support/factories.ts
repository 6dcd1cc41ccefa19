import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Queryable } from '@brokkr/db';
import { generatePak } from '@brokkr/pak';
import type { ApiClient } from './client.ts';

/** A unique name for test rows: `<prefix>-<8 hex>`. */
export const uniqueName = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

export interface Generator {
  id: string;
  name: string;
  description: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  last_active_at: string | null;
  is_active: boolean;
  is_system: boolean;
}

/** POST /generators as admin; returns the generator and its PAK. */
export async function createGenerator(admin: ApiClient, body: { name?: string; description?: string } = {}) {
  const res = await admin.post<{ generator: Generator; pak: string }>('/generators', { name: body.name ?? uniqueName('gen'), ...body });
  expect(res.status, res.text).to.equal(201);
  return { ...res.body, client: admin.as(res.body.pak) };
}

/** POST /agents as admin; returns the agent and its PAK (needs the agents routes). */
export async function createAgent(admin: ApiClient, body: { name?: string; cluster_name?: string; generator_ids?: string[] } = {}) {
  const res = await admin.post<{ agent: { id: string; name: string; cluster_name: string; status: string }; initial_pak: string }>(
    '/agents',
    {
      name: body.name ?? uniqueName('agent'),
      cluster_name: body.cluster_name ?? 'test-cluster',
      ...body,
    },
  );
  expect(res.status, res.text).to.equal(201);
  return { ...res.body, client: admin.as(res.body.initial_pak) };
}

/** POST /stacks (needs the stacks routes); `client` is an admin or the owning generator. */
export async function createStack(client: ApiClient, body: { generator_id: string; name?: string; description?: string }) {
  const res = await client.post<{ id: string; name: string; generator_id: string }>('/stacks', { name: uniqueName('stack'), ...body });
  expect(res.status, res.text).to.equal(201);
  return res.body;
}

/** The admin-generator's id (created at first start). */
export async function adminGeneratorId(admin: ApiClient): Promise<string> {
  const res = await admin.get<Generator[]>('/generators');
  const found = res.body.find((g) => g.name === 'admin-generator');
  if (!found) throw new Error('admin-generator missing');
  return found.id;
}

/**
 * An agent row inserted straight into the database (with a PAK), for tests that must not depend
 * on the agents routes. Prefer `createAgent` (HTTP) otherwise.
 */
export interface AgentRowOptions {
  name?: string;
  cluster_name?: string;
  status?: string;
  labels?: string[];
  /** Generators the agent is registered with. */
  registeredWith?: string[];
  /** Stacks the agent explicitly targets. */
  targets?: string[];
}

/** An agent row with a PAK, set up in SQL for files that test other endpoints. */
export async function insertAgentRow(sql: Queryable, body: AgentRowOptions = {}) {
  const { pak, hash } = generatePak();
  const { rows } = await sql.query<{ id: string }>(
    'INSERT INTO agents (name, cluster_name, status, pak_hash) VALUES ($1, $2, $3, $4) RETURNING id',
    [body.name ?? uniqueName('agent'), body.cluster_name ?? 'test-cluster', body.status ?? 'INACTIVE', hash],
  );
  const id = rows[0]!.id;
  for (const label of body.labels ?? []) await sql.query('INSERT INTO agent_labels (agent_id, label) VALUES ($1, $2)', [id, label]);
  for (const gen of body.registeredWith ?? []) {
    await sql.query('INSERT INTO agent_generator_registrations (agent_id, generator_id) VALUES ($1, $2)', [id, gen]);
  }
  for (const stack of body.targets ?? []) await sql.query('INSERT INTO agent_targets (agent_id, stack_id) VALUES ($1, $2)', [id, stack]);
  return { id, pak };
}
