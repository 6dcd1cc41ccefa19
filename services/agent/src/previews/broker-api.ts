import type { PendingPreview, SubmitPreviewResult } from '@brokkr/contracts';
import { BrokerHttp } from '../broker/http.ts';

const CALL_TIMEOUT_MS = 10_000;
/** Room above the long-poll hold for the answer itself. */
const WAIT_MARGIN_MS = 10_000;

/** The hub's preview endpoints, on a connection pool of their own (a held long-poll never blocks a result). */
export class PreviewBrokerApi {
  private readonly http: BrokerHttp;

  constructor(brokerUrl: string, pak: string) {
    this.http = new BrokerHttp(brokerUrl, pak);
  }

  /** Previews this agent has not reported on; `waitSeconds` > 0 holds the request until one is created (or the wait ends). */
  async pending(agentId: string, waitSeconds: number, signal: AbortSignal): Promise<PendingPreview[]> {
    const query = waitSeconds > 0 ? `?wait=${waitSeconds}` : '';
    const res = await this.http.call<unknown>('GET', `/api/v1/agents/${agentId}/previews/pending${query}`, {
      timeoutMs: waitSeconds * 1000 + WAIT_MARGIN_MS,
      signal,
    });
    return Array.isArray(res.body) ? (res.body as unknown[]).filter(isPreview) : [];
  }

  /** 201 with the verdict; a refusal (409: already reported or expired) is thrown like any other. */
  async submit(previewId: string, result: SubmitPreviewResult): Promise<void> {
    await this.http.call('POST', `/api/v1/previews/${previewId}/results`, { body: result, timeoutMs: CALL_TIMEOUT_MS });
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

function isPreview(value: unknown): value is PendingPreview {
  const o = value as Partial<PendingPreview> | null;
  return typeof o?.id === 'string' && typeof o.stack_id === 'string' && typeof o.yaml_content === 'string';
}
