import { Agent, request } from 'undici';
import type { AnyJson, KubeApiServer } from '@brokkr/testkit';

/** Raw admin access to the test apiserver, independent of the agent's own client, for assertions and set-up. */
export class Kubectl {
  private readonly dispatcher: Agent;

  constructor(private readonly kube: KubeApiServer) {
    this.dispatcher = new Agent({ connect: { ca: kube.caPem } });
  }

  async call<T = AnyJson>(
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ) {
    const res = await request(`${this.kube.server}${path}`, {
      method,
      dispatcher: this.dispatcher,
      headers: {
        authorization: `Bearer ${this.kube.token}`,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': contentType }),
      },
      body: body === undefined ? null : JSON.stringify(body),
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: (text ? JSON.parse(text) : undefined) as T };
  }

  /** The object, or undefined on 404. */
  async get<T = AnyJson>(path: string): Promise<T | undefined> {
    const res = await this.call<T>('GET', path);
    if (res.status === 404) return undefined;
    if (res.status >= 400) throw new Error(`GET ${path} → ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** Gone, or being deleted (without controllers, a namespace stays Terminating forever). */
  async goneOrTerminating(path: string): Promise<boolean> {
    const obj = await this.get<{ metadata: { deletionTimestamp?: string } }>(path);
    return !obj || obj.metadata.deletionTimestamp !== undefined;
  }

  async create<T = AnyJson>(collectionPath: string, body: unknown): Promise<T> {
    const res = await this.call<T>('POST', collectionPath, body);
    if (res.status >= 300) throw new Error(`POST ${collectionPath} → ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async mergePatch<T = AnyJson>(path: string, patch: unknown): Promise<T> {
    const res = await this.call<T>('PATCH', path, patch, 'application/merge-patch+json');
    if (res.status >= 300) throw new Error(`PATCH ${path} → ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async remove(path: string): Promise<number> {
    return (await this.call('DELETE', path)).status;
  }

  close(): Promise<void> {
    return this.dispatcher.close();
  }
}
