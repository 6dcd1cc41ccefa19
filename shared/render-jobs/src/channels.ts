/**
 * The NOTIFY channels of the queue (docs/adr/0046). A notification is delivered at the commit of the
 * statement that sends it, with the row it announces, and to every session listening on the
 * database: channels are per database, not per schema, so hubs sharing one database in different
 * schemas wake each other for nothing (each then finds nothing in its own tables).
 */

/** A job was queued (payload: the renderer version it waits for); renderers claim. */
export const RENDER_JOBS_CHANNEL = 'brokkr_render_jobs';

/** A job's result was written (payload: its job_key); the api replicas waiting on it read it. */
export const RENDER_DONE_CHANNEL = 'brokkr_render_done';
