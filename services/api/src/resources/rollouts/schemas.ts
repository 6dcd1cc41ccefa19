/** The policy and the rollouts the api serves are @brokkr/contracts' (rollouts.ts). */
export {
  approvalRequestSchema,
  fleetRolloutSchema,
  rolloutApprovalRequestSchema,
  rolloutApprovalSchema,
  rolloutPolicySchema,
  rolloutSchema,
  rolloutWaveStatusSchema,
  stackRolloutPolicySchema,
  waveApprovalsSchema,
} from '@brokkr/contracts';
