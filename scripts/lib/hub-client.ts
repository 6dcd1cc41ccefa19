/**
 * The few admin calls `npm start` makes against its own api to set up the local cluster's agent.
 * Plain fetch: this is a script talking to the public API, exactly as a person with curl would.
 */
export class HubClient {
  constructor(
    private readonly baseUrl: string,
    private readonly pak: string,
  ) {}

  async call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.pak}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  }

  /** The call's body when its status is one of `ok`, else an error naming the call and the api's answer. */
  async expect<T>(ok: number[], method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.call<T>(method, path, body);
    if (!ok.includes(res.status)) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  }
}

interface Named {
  id: string;
  name: string;
}

export interface Credentials {
  id: string;
  pak: string;
}

/**
 * A generator with this name and a fresh PAK for it: created, or (on a database that has it from an
 * earlier run) found and its PAK rotated, so a re-run never fails and never needs an old secret.
 */
export async function ensureGenerator(hub: HubClient, name: string, description: string): Promise<Credentials> {
  const created = await hub.call<{ generator: Named; pak: string }>('POST', '/generators', { name, description });
  if (created.status === 201) return { id: created.body.generator.id, pak: created.body.pak };
  const all = await hub.expect<Named[]>([200], 'GET', '/generators');
  const found = all.find((g) => g.name === name);
  if (!found) throw new Error(`POST /generators answered ${created.status}: ${JSON.stringify(created.body)}`);
  const rotated = await hub.expect<{ pak: string }>([200, 201], 'POST', `/generators/${found.id}/rotate-pak`);
  return { id: found.id, pak: rotated.pak };
}

/** Likewise for an agent, registered with the generator and set ACTIVE (Brokkr's agents start INACTIVE). */
export async function ensureActiveAgent(hub: HubClient, name: string, generatorId: string): Promise<Credentials> {
  const created = await hub.call<{ agent: Named; initial_pak: string }>('POST', '/agents', {
    name,
    cluster_name: name,
    generator_ids: [generatorId],
  });
  let agent: Credentials;
  if (created.status === 201) {
    agent = { id: created.body.agent.id, pak: created.body.initial_pak };
  } else {
    const query = new URLSearchParams({ name, cluster_name: name });
    const found = await hub.expect<Named>([200], 'GET', `/agents/?${query}`);
    const rotated = await hub.expect<{ pak: string }>([200], 'POST', `/agents/${found.id}/rotate-pak`);
    await hub.expect([201, 409], 'POST', `/generators/${generatorId}/register`, { agent_id: found.id });
    agent = { id: found.id, pak: rotated.pak };
  }
  await hub.expect([200], 'PUT', `/agents/${agent.id}`, { status: 'ACTIVE' });
  return agent;
}
