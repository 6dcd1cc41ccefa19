/** Generator JSON; pak_hash is never selected into it. */
export interface GeneratorRow {
  id: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  name: string;
  description: string | null;
  last_active_at: Date | null;
  is_active: boolean;
  is_system: boolean;
}

export const GENERATOR_COLUMNS = 'id, created_at, updated_at, deleted_at, name, description, last_active_at, is_active, is_system';
