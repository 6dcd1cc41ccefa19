import type { AgentSignatures, RenderInputs, TrustMetadata } from '@brokkr/contracts';
import type { RelayedMetadata } from '@brokkr/trust';
import { BrokerHttp } from '../broker/http.ts';

/** The hub asks for at most this many ids of each kind at once. */
const BATCH = 100;

/**
 * What the hub relays for an agent that checks signatures: the signatures of the objects and work
 * orders it was served, and the trust metadata. Nothing it answers is trusted: every piece is
 * checked against the trust policy before it counts.
 */
export class TrustRelay {
  private readonly http: BrokerHttp;

  constructor(
    brokerUrl: string,
    pak: string,
    private readonly agentId: string,
  ) {
    this.http = new BrokerHttp(brokerUrl, pak);
  }

  /** Signatures by deployment object id (objects without one are absent). */
  async objectSignatures(ids: string[]): Promise<Map<string, unknown>> {
    const found = new Map<string, unknown>();
    for (let i = 0; i < ids.length; i += BATCH) {
      const q = new URLSearchParams({ deployment_object_ids: ids.slice(i, i + BATCH).join(',') });
      const { body } = await this.http.call<AgentSignatures>('GET', `/api/v1/agents/${this.agentId}/signatures?${q.toString()}`);
      for (const s of body.deployment_objects) found.set(s.deployment_object_id, s.signature);
    }
    return found;
  }

  async workOrderSignature(id: string): Promise<unknown> {
    const q = new URLSearchParams({ work_order_ids: id });
    const { body } = await this.http.call<AgentSignatures>('GET', `/api/v1/agents/${this.agentId}/signatures?${q.toString()}`);
    return body.work_orders.find((w) => w.work_order_id === id)?.signature;
  }

  /** What a chart or an overlay it is served renders from (undefined: 404, plain YAML or not served to it). */
  async renderInputs(objectId: string): Promise<RenderInputs | undefined> {
    const { status, body } = await this.http.call<RenderInputs>('GET', `/api/v1/agents/${this.agentId}/render-inputs/${objectId}`, {
      accept: [404],
    });
    return status === 404 ? undefined : body;
  }

  async metadata(): Promise<RelayedMetadata> {
    const { body } = await this.http.call<TrustMetadata>('GET', '/api/v1/trust-metadata');
    return { roots: body.roots, revocations: body.revocations, timestamp: body.timestamp };
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
