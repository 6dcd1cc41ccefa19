import type { StackRow } from '../../domain/stack-row.ts';

/**
 * The v1 Stack as Brokkr serializes it, plus `expires_at` only when the stack has one: a stack
 * that never expires keeps Brokkr's exact shape, so its SDKs see nothing new.
 */
export function stackJson(row: StackRow): StackRow {
  const { expires_at, ...stack } = row;
  return expires_at ? { ...stack, expires_at } : stack;
}
