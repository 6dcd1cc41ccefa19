/** A stacks row as the API serializes it (the v1 Stack). */
export interface StackRow {
  id: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  name: string;
  description: string | null;
  generator_id: string;
  /** When maintenance deletes the stack (expiring preview stacks); absent from the JSON when null. */
  expires_at?: Date | null;
}

export const STACK_COLUMNS = 'id, created_at, updated_at, deleted_at, name, description, generator_id, expires_at';

/** What a stack write takes from the request. */
export interface StackFields {
  name: string;
  description: string | null;
  generatorId: string;
  /** Only on create; PUT /stacks/{id} keeps Brokkr's shape and leaves it alone (use /stacks/{id}/expiry). */
  expiresAt?: Date | null;
}
