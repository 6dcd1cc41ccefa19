/** A stack_dependencies row as the API shows it: `stack_id` is the stack depended on, `dependent_id` the one that waits. */
export interface DependencyRow {
  stack_id: string;
  dependent_id: string;
  ready_when: 'applied' | 'healthy';
  scope: 'agent' | 'fleet';
  created_at: Date;
  created_by: string;
}

export const DEPENDENCY_COLUMNS = 'depends_on AS stack_id, stack_id AS dependent_id, ready_when, scope, created_at, created_by';
