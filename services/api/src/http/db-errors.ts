import { PG_ERRORS, pgErrorCode } from '@brokkr/db';
import { ApiError, errorKind, type ErrorKind } from '../errors/api-error.ts';

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

/** The constraint errors a route declares where its writes can break one (a unique name, a reference). */
export const uniqueViolation = errorKind(409, 'unique_violation', 'A record with these values already exists');
export const foreignKeyViolation = errorKind(422, 'foreign_key_violation', 'A referenced record does not exist');
export const checkViolation = errorKind(422, 'check_violation', 'A value violates a check constraint');
export const notNullViolation = errorKind(422, 'not_null_violation', 'A required value is missing');
/** Any route whose client input reaches SQL can get this one (derived, see route-errors.ts). */
export const invalidInput = errorKind(400, 'invalid_input', 'A value is not valid for its field');

const CONSTRAINT_ERRORS: Record<string, ErrorKind> = {
  [PG_ERRORS.uniqueViolation]: uniqueViolation,
  [PG_ERRORS.foreignKeyViolation]: foreignKeyViolation,
  [PG_ERRORS.checkViolation]: checkViolation,
};

function isInputError(code: string): boolean {
  return code === PROGRAM_LIMIT_EXCEEDED || INPUT_CLASSES.some((c) => code.startsWith(c));
}

/**
 * Brokkr's `from_diesel` mapping, except that value errors (a string longer than
 * its column, an invalid literal) are the client's fault and give 400 `invalid_input` instead of
 * a 500. Returns undefined for errors that are genuinely ours.
 */
export function apiErrorFromDatabase(err: unknown): ApiError | undefined {
  const code = pgErrorCode(err);
  if (!code || code.length !== 5) return undefined;
  const { constraint, column } = fields(err);
  const mapped = CONSTRAINT_ERRORS[code];
  if (mapped) return mapped({ constraint: constraint ?? null });
  if (code === PG_ERRORS.notNullViolation) return notNullViolation({ column: column ?? null });
  if (!isInputError(code)) return undefined;
  if (code === PG_ERRORS.stringTooLong) return invalidInput.with('A value is longer than its field allows', { sqlstate: code });
  return invalidInput({ sqlstate: code });
}
