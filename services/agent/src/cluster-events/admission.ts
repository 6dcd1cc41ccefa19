import type { Placement } from '@brokkr/grants';

/**
 * Whether what the cluster says about an object (its events, a pod's log) may go to the stack it
 * names: the grant book's question (grants/book.ts), as cluster events ask it.
 */
export interface StackAdmission {
  admits(stackId: string, placement: Placement): boolean;
}
