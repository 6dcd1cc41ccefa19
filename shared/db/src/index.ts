export { createDb, ensureSchema, prepared, type Db, type DbSettings, type Queryable } from './db.ts';
export { migrateLatest, migrationsDirectory } from './migrate.ts';
export { isUniqueViolation, pgErrorCode, PG_ERRORS } from './pg-errors.ts';
export { isDatabaseUnavailable } from './connection-errors.ts';
export { withAdvisoryLock, type LockedOutcome } from './advisory-lock.ts';
