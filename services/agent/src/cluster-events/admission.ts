import type { Placement } from '@brokkr/grants';

/**
 * Whether what the cluster says about an object (its events, a pod's log) may go to the stack it
 * names: the grant book's question (grants/book.ts), as cluster events ask it.
 */
export interface StackAdmission {
  /** `unknown`: the stack is not one the agent knows yet (its grants are being read): ask again after onRefresh. */
  judge(stackId: string, placement: Placement): 'admit' | 'refuse' | 'unknown';
  /** Called after each read of the grants; the tailers then retry what they held back. */
  onRefresh(listener: () => void): void;
}
