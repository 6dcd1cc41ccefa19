import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { parseTrustPolicy, type TrustPolicy } from '@brokkr/trust';

/**
 * The trust policy from the file the agent's installation mounts (the chart's `trustPolicy` value,
 * a Secret in the agent's own namespace): YAML or JSON. Never fetched from the hub, which is what
 * it guards against. A policy that cannot be read stops the agent at start-up: an agent meant to
 * require signatures must not run without them.
 */
export async function loadTrustPolicy(path: string | undefined): Promise<TrustPolicy | undefined> {
  if (!path) return undefined;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new Error(`the trust policy ${path} (BROKKR__AGENT__TRUST_POLICY_FILE) cannot be read: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return parseTrustPolicy(parse(text, { maxAliasCount: 0 }));
}
