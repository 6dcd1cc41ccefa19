import type { AgentGrants, DriftReportBatch } from '@brokkr/contracts';
import { BrokerError, BrokerHttp } from './http.ts';
import type { AgentEventBody, AgentEventRecord, AgentRecord, AuthPayload, DeploymentObject, HealthRecord, HeartbeatBody } from './types.ts';

/**
 * `pollSeconds`: how often the hub wants polling agents to ask (its `Brokkr-Poll-Interval`), when
 * it says; `grants`: the digest of the agent's grants the answer was read with (`Brokkr-Grants`),
 * absent from a hub that has none (Brokkr's).
 */
export type TargetStateAnswer = (
  { changed: true; objects: DeploymentObject[]; etag: string | undefined } | { changed: false; etag: string }
) & { pollSeconds?: number; grants?: string };

export interface TargetStateRequest {
  agentId: string;
  /** The ETag of the state we hold; with `waitSeconds` the broker holds the request until it changes. */
  etag: string | undefined;
  waitSeconds: number;
  /** With a trust policy: each object comes with its stored signature (`signatures=true`), so checking it costs no request. */
  signatures?: boolean;
  signal?: AbortSignal;
}

/** The broker's agent-facing endpoints, plus the long-poll extension. */
export class BrokerClient {
  private readonly http: BrokerHttp;

  constructor(brokerUrl: string, pak: string) {
    this.http = new BrokerHttp(brokerUrl, pak);
  }

  ready(): Promise<boolean> {
    return this.http.probe('/readyz');
  }

  async verifyPak(): Promise<AuthPayload> {
    return (await this.http.call<AuthPayload>('POST', '/api/v1/auth/pak')).body;
  }

  /** Brokkr's search (note the trailing slash). */
  async findAgent(name: string, clusterName: string): Promise<AgentRecord> {
    const q = new URLSearchParams({ name, cluster_name: clusterName });
    return (await this.http.call<AgentRecord>('GET', `/api/v1/agents/?${q.toString()}`)).body;
  }

  async heartbeat(agentId: string, body: HeartbeatBody): Promise<void> {
    await this.http.call('POST', `/api/v1/agents/${agentId}/heartbeat`, { body });
  }

  /**
   * The FULL target state (mode=full): the agent is stateless toward the broker, so it needs every
   * stack's latest object each time, not only the ones it has not acknowledged yet.
   */
  async targetState(req: TargetStateRequest): Promise<TargetStateAnswer> {
    const q = new URLSearchParams({ mode: 'full' });
    if (req.etag && req.waitSeconds > 0) q.set('wait', String(req.waitSeconds));
    if (req.signatures) q.set('signatures', 'true');
    const res = await this.http.call<DeploymentObject[]>('GET', `/api/v1/agents/${req.agentId}/target-state?${q.toString()}`, {
      headers: req.etag ? { 'if-none-match': req.etag } : {},
      timeoutMs: (req.waitSeconds + 30) * 1000,
      accept: [304],
      ...(req.signal ? { signal: req.signal } : {}),
    });
    const etag = typeof res.headers.etag === 'string' ? res.headers.etag : undefined;
    const pollSeconds = pollInterval(res.headers['brokkr-poll-interval']);
    const grants = res.headers['brokkr-grants'];
    const told = { ...(pollSeconds === undefined ? {} : { pollSeconds }), ...(typeof grants === 'string' ? { grants } : {}) };
    if (res.status === 304) return { changed: false, etag: etag ?? req.etag ?? '', ...told };
    return { changed: true, objects: res.body, etag, ...told };
  }

  /** What each generator may place on this cluster; undefined from a hub that has no grants (Brokkr's: 404). */
  async grants(agentId: string): Promise<AgentGrants | undefined> {
    try {
      return (await this.http.call<AgentGrants>('GET', `/api/v1/agents/${agentId}/grants`)).body;
    } catch (err) {
      if (err instanceof BrokerError && err.status === 404 && err.code !== 'agent_not_found') return undefined;
      throw err;
    }
  }

  /** Drift found in the cluster (not a Brokkr endpoint: Brokkr's hub answers 404). */
  async reportDrift(agentId: string, batch: DriftReportBatch): Promise<{ closed?: string[] }> {
    return (await this.http.call<{ closed?: string[] }>('POST', `/api/v1/agents/${agentId}/drift`, { body: batch })).body ?? {};
  }

  async postEvent(agentId: string, body: AgentEventBody): Promise<void> {
    await this.http.call('POST', `/api/v1/agents/${agentId}/events`, { body });
  }

  async listEvents(agentId: string): Promise<AgentEventRecord[]> {
    return (await this.http.call<AgentEventRecord[]>('GET', `/api/v1/agents/${agentId}/events`)).body;
  }

  async reportHealth(agentId: string, records: HealthRecord[]): Promise<void> {
    await this.http.call('PATCH', `/api/v1/agents/${agentId}/health-status`, { body: { deployment_objects: records } });
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

/** A positive whole number of seconds, or nothing (absent or malformed: the agent keeps its own interval). */
function pollInterval(header: unknown): number | undefined {
  if (typeof header !== 'string' || !/^\d{1,5}$/.test(header.trim())) return undefined;
  const seconds = Number(header.trim());
  return seconds > 0 ? seconds : undefined;
}
