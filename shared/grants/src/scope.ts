import type { AgentGrants } from '@brokkr/contracts';
import type { PlacementScope } from './placement.ts';

/**
 * The placement scope of one generator's stacks on the agent whose grants these are; undefined
 * when the generator has no grant there (its stacks may then place nothing).
 */
export function placementScopeOf(grants: AgentGrants, generatorId: string, agentNamespace: string | undefined): PlacementScope | undefined {
  const own = grants.generators.find((g) => g.generator_id === generatorId);
  if (!own) return undefined;
  return {
    generatorId: own.generator_id,
    generatorName: own.generator_name,
    grant: own.grant,
    wholeCluster: own.whole_cluster_in_effect,
    agentNamespace,
    others: grants.generators
      .filter((g) => g.generator_id !== generatorId && !g.is_system)
      .map((g) => ({ generatorName: g.generator_name, grant: g.grant })),
  };
}
