import type { Grant } from '@brokkr/contracts';
import { resolveGrant } from '@brokkr/grants';
import type { RegistrationRow } from './sql/queries.ts';

/** A registration as the API shows it: Brokkr's fields and its grant with the defaults filled in. */
export function registrationView(row: RegistrationRow): Omit<RegistrationRow, 'registration_grant'> & { grant: Grant } {
  const { registration_grant: stored, ...rest } = row;
  return { ...rest, grant: resolveGrant(stored, row.generator_id) };
}
