import type { CompleteWorkOrder, WorkOrder } from '@brokkr/contracts';
import { BrokerError, BrokerHttp } from '../broker/http.ts';

const CLAIM_TIMEOUT_MS = 10_000;
const COMPLETE_TIMEOUT_MS = 10_000;
/** Room above the long-poll hold for the answer itself. */
const WAIT_MARGIN_MS = 10_000;

/** The broker's work-order endpoints, on a connection pool of their own (a held long-poll never blocks a completion). */
export class WorkOrderBrokerApi {
  private readonly http: BrokerHttp;

  constructor(brokerUrl: string, pak: string) {
    this.http = new BrokerHttp(brokerUrl, pak);
  }

  /**
   * PENDING orders targeted at this agent, oldest first. `waitSeconds` > 0 asks our broker to hold
   * the request until an order is pending (or the wait ends); Brokkr's broker ignores it and answers at once.
   */
  async pending(agentId: string, waitSeconds: number, signal: AbortSignal): Promise<WorkOrder[]> {
    const query = waitSeconds > 0 ? `?wait=${waitSeconds}` : '';
    const res = await this.http.call<unknown>('GET', `/api/v1/agents/${agentId}/work-orders/pending${query}`, {
      timeoutMs: waitSeconds * 1000 + WAIT_MARGIN_MS,
      signal,
    });
    return Array.isArray(res.body) ? (res.body as unknown[]).filter(isWorkOrder) : [];
  }

  /** The claimed order, or undefined when it is no longer claimable (404: another agent got it, or it went away). */
  async claim(orderId: string, agentId: string): Promise<WorkOrder | undefined> {
    try {
      const res = await this.http.call<WorkOrder>('POST', `/api/v1/work-orders/${orderId}/claim`, {
        body: { agent_id: agentId },
        timeoutMs: CLAIM_TIMEOUT_MS,
      });
      return res.body;
    } catch (err) {
      if (err instanceof BrokerError && err.status === 404) return undefined;
      throw err;
    }
  }

  /** 200 (moved to the log) or 202 (retry scheduled): both mean the broker took the result. */
  async complete(orderId: string, result: CompleteWorkOrder): Promise<'logged' | 'retry_scheduled'> {
    const res = await this.http.call('POST', `/api/v1/work-orders/${orderId}/complete`, { body: result, timeoutMs: COMPLETE_TIMEOUT_MS });
    return res.status === 202 ? 'retry_scheduled' : 'logged';
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

function isWorkOrder(value: unknown): value is WorkOrder {
  const o = value as Partial<WorkOrder> | null;
  return typeof o?.id === 'string' && typeof o.work_type === 'string' && typeof o.yaml_content === 'string';
}
