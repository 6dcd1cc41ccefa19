import { PG_ERRORS, pgErrorCode } from '@brokkr/db';
import { ApiError } from './api-error.ts';

interface PgErrorFields {
  constraint?: string;
  column?: string;
  table?: string;
}

function fields(err: unknown): PgErrorFields {
  return typeof err === 'object' && err !== null ? (err as PgErrorFields) : {};
}

/** SQLSTATE classes caused by the client's input rather than by us. */
const INPUT_CLASSES = ['22']; // data exceptions: too long, invalid text representation, out of range, bad encoding …
const PROGRAM_LIMIT_EXCEEDED = '54000'; // e.g. a value too large for an index row

const CONSTRAINT_ERRORS: Record<string, { status: number; code: string; message: string }> = {
  [PG_ERRORS.uniqueViolation]: { status: 409, code: 'unique_violation', message: 'A record with these values already exists' },
  [PG_ERRORS.foreignKeyViolation]: { status: 422, code: 'foreign_key_violation', message: 'A referenced record does not exist' },
  [PG_ERRORS.checkViolation]: { status: 422, code: 'check_violation', message: 'A value violates a check constraint' },
};

function isInputError(code: string): boolean {
  return code === PROGRAM_LIMIT_EXCEEDED || INPUT_CLASSES.some((c) => code.startsWith(c));
}

/**
 * Brokkr's `from_diesel` mapping (contract §2.0), except that value errors (a string longer than
 * its column, an invalid literal) are the client's fault and give 400 `invalid_input` instead of
 * a 500. Returns undefined for errors that are genuinely ours.
 */
export function apiErrorFromDatabase(err: unknown): ApiError | undefined {
  const code = pgErrorCode(err);
  if (!code || code.length !== 5) return undefined;
  const { constraint, column } = fields(err);
  const mapped = CONSTRAINT_ERRORS[code];
  if (mapped) return new ApiError(mapped.status, mapped.code, mapped.message, { constraint: constraint ?? null });
  if (code === PG_ERRORS.notNullViolation) {
    return new ApiError(422, 'not_null_violation', 'A required value is missing', { column: column ?? null });
  }
  if (!isInputError(code)) return undefined;
  const message = code === PG_ERRORS.stringTooLong ? 'A value is longer than its field allows' : 'A value is not valid for its field';
  return new ApiError(400, 'invalid_input', message, { sqlstate: code });
}
