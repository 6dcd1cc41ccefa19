import type { IncomingHttpHeaders } from 'node:http';
import type { Identity } from '../../auth/identity.ts';

/**
 * Is this Brokkr 0.9.1's own Rust agent asking for its target state? Its generated client sends
 * `api-version: <version>` and no `User-Agent`, and the agent never sends `mode` (recorded from
 * the real binary: `GET /api/v1/agents/{id}/target-state`, headers `accept: application/json`,
 * `api-version: 0.9.1`, `authorization: Bearer …`). Our agent and the Python/TypeScript SDKs send
 * a User-Agent; anyone who names a `mode` gets exactly that mode.
 *
 * Why it matters: that agent deletes a stack's objects as soon as the stack disappears from its
 * target state, and the incremental state drops every object it has reported — so against an
 * incremental answer it deletes what it deployed one poll later (docs/compatibility.md).
 */
export function servesBrokkrRustAgent(headers: IncomingHttpHeaders, identity: Identity, agentId: string, mode: unknown): boolean {
  return mode === undefined && identity.agent !== null && identity.agent === agentId.toLowerCase() && looksLikeBrokkrRustAgent(headers);
}

/** The REST signature of Brokkr's agent (its WebSocket upgrade has no `api-version`: there, no User-Agent is the sign). */
export function looksLikeBrokkrRustAgent(headers: IncomingHttpHeaders): boolean {
  return typeof headers['api-version'] === 'string' && headers['user-agent'] === undefined;
}
