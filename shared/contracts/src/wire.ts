import { z } from 'zod';

/** UUIDs in any version (the database's check is the 8-4-4-4-12 hex form). */
export const uuid = () => z.guid();

/** Timestamps are RFC 3339 strings on the wire (pg Dates serialize to `...Z`). */
export const timestamp = () => z.string().meta({ format: 'date-time' });

/** The id and timestamps every soft-deletable Brokkr row serializes (spread into an object). */
export const softDeletableRow = () => ({
  id: uuid(),
  created_at: timestamp(),
  updated_at: timestamp(),
  deleted_at: timestamp().nullable(),
});

/** 32-bit integers, as Brokkr's columns hold them. */
export const int32 = () => z.number().int().min(-2147483648).max(2147483647);
