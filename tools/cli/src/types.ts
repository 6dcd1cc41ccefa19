/**
 * The hub's wire shapes, as @brokkr/contracts declares them (the api serves with the same
 * schemas). Type-only: nothing of the contracts' runtime reaches the CLI's bundle. Fields the CLI
 * does not show still pass through to -o json|yaml.
 */
export type {
  Agent,
  ApprovalRequest,
  AgentEvent,
  AgentLabel,
  AuthPayload,
  CreateAgentResponse,
  DeploymentObject,
  DeploymentObjectHealth,
  DriftGroups,
  DriftPage,
  DriftRecord,
  Explanation,
  FleetRollout,
  Generator,
  NewOverride,
  Override,
  Preview,
  PreviewSummary,
  RotateAdminPakResponse,
  RotateAgentPakResponse,
  Rollout,
  RolloutStatus,
  RolloutWaveStatus,
  Stack,
  StackAgentStatus,
  StackDependency,
  StackExpiry,
  StackLabel,
  StackRolloutPolicy,
  StackTemplate,
  WaveApprovals,
  MaintenanceWindow,
  WorkOrder,
} from '@brokkr/contracts';

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
