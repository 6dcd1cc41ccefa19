import type { DiagnosticRequest, DiagnosticResult, SubmitDiagnosticResult } from '@brokkr/contracts';
import { BrokerError, BrokerHttp } from '../broker/http.ts';

const CALL_TIMEOUT_MS = 10_000;
/** Room above the long-poll hold for the answer itself. */
const WAIT_MARGIN_MS = 10_000;

/** The broker's diagnostics endpoints, on a connection pool of their own (a held long-poll never blocks a result). */
export class DiagnosticsBrokerApi {
  private readonly http: BrokerHttp;

  constructor(brokerUrl: string, pak: string) {
    this.http = new BrokerHttp(brokerUrl, pak);
  }

  /**
   * Pending, unexpired requests for this agent, oldest first. `waitSeconds` > 0 asks our broker to
   * hold the request until one is created (or the wait ends); Brokkr's broker ignores it and answers at once.
   */
  async pending(agentId: string, waitSeconds: number, signal: AbortSignal): Promise<DiagnosticRequest[]> {
    const query = waitSeconds > 0 ? `?wait=${waitSeconds}` : '';
    const res = await this.http.call<unknown>('GET', `/api/v1/agents/${agentId}/diagnostics/pending${query}`, {
      timeoutMs: waitSeconds * 1000 + WAIT_MARGIN_MS,
      signal,
    });
    return Array.isArray(res.body) ? (res.body as unknown[]).filter(isRequest) : [];
  }

  /** The claimed request, or undefined when it is no longer pending (409: another process got it, or it expired) or gone (404). */
  async claim(requestId: string): Promise<DiagnosticRequest | undefined> {
    try {
      return (await this.http.call<DiagnosticRequest>('POST', `/api/v1/diagnostics/${requestId}/claim`, { timeoutMs: CALL_TIMEOUT_MS }))
        .body;
    } catch (err) {
      if (err instanceof BrokerError && (err.status === 409 || err.status === 404)) return undefined;
      throw err;
    }
  }

  /** 201: stored. A 409 (no longer claimed: maintenance failed it at expiry) or 404 is thrown like any refusal. */
  async submit(requestId: string, result: SubmitDiagnosticResult): Promise<DiagnosticResult> {
    const res = await this.http.call<DiagnosticResult>('POST', `/api/v1/diagnostics/${requestId}/result`, {
      body: result,
      timeoutMs: CALL_TIMEOUT_MS,
    });
    return res.body;
  }

  /** The deployment object's YAML (Brokkr's agent reads it for the namespaces); undefined when this agent may not read it. */
  async deploymentObjectYaml(objectId: string): Promise<string | undefined> {
    try {
      const res = await this.http.call<{ yaml_content?: unknown }>('GET', `/api/v1/deployment-objects/${objectId}`, {
        timeoutMs: CALL_TIMEOUT_MS,
      });
      return typeof res.body?.yaml_content === 'string' ? res.body.yaml_content : undefined;
    } catch (err) {
      // 403: targeted by labels only (the endpoint wants an explicit target); 404: deleted since.
      if (err instanceof BrokerError && (err.status === 403 || err.status === 404)) return undefined;
      throw err;
    }
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

function isRequest(value: unknown): value is DiagnosticRequest {
  const o = value as Partial<DiagnosticRequest> | null;
  return typeof o?.id === 'string' && typeof o.deployment_object_id === 'string';
}
