import type { Targeting } from './statement.ts';

/** An agent as its own installation describes it (its settings and trust policy), not as the hub reports it. */
export interface LocalIdentity {
  name: string;
  cluster: string;
  labels: readonly string[];
}

/** No targeting: every agent trusting the signer; else the agent by name (`name` or `cluster/name`), or by carrying every label. */
export function targets(targeting: Targeting | undefined, me: LocalIdentity): boolean {
  if (!targeting || (targeting.agents === undefined && targeting.labels === undefined)) return true;
  const named = targeting.agents?.some((a) => a === me.name || a === `${me.cluster}/${me.name}`) ?? false;
  const labelled = targeting.labels !== undefined && targeting.labels.length > 0 && targeting.labels.every((l) => me.labels.includes(l));
  return named || labelled;
}
