/** A stacks row as the API serializes it (the v1 Stack). */
export interface StackRow {
  id: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  name: string;
  description: string | null;
  generator_id: string;
}

export const STACK_COLUMNS = 'id, created_at, updated_at, deleted_at, name, description, generator_id';

/** What a stack write takes from the request. */
export interface StackFields {
  name: string;
  description: string | null;
  generatorId: string;
}
