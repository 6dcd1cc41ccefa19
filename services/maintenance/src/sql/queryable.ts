import type pg from 'pg';

/** The connection a task runs on (the one holding its advisory lock); every statement autocommits. */
export type TaskClient = Pick<pg.ClientBase, 'query'>;
