/** The policy and the rollouts the api serves are @brokkr/contracts' (rollouts.ts). */
export {
  fleetRolloutSchema,
  rolloutPolicySchema,
  rolloutSchema,
  rolloutWaveStatusSchema,
  stackRolloutPolicySchema,
} from '@brokkr/contracts';
