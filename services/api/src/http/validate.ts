import type { z } from 'zod';
import { errorKind, type ErrorKind } from '../errors/api-error.ts';

export interface IssueSummary {
  path: string;
  code: string;
  message: string;
}

export function summarizeIssues(error: z.ZodError): IssueSummary[] {
  return error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), code: issue.code, message: issue.message }));
}

type Part = 'params' | 'query' | 'body';

export const invalidPathParameter = errorKind(400, 'invalid_id', 'Invalid path parameter');
export const invalidQuery = errorKind(400, 'invalid_query', 'Invalid query parameter');
export const invalidRequestBody = errorKind(422, 'invalid_request_body', 'Request body does not match the expected schema');

const FAILURE: Record<Part, { kind: ErrorKind; message: string }> = {
  params: { kind: invalidPathParameter, message: 'Invalid path parameter' },
  query: { kind: invalidQuery, message: 'Invalid query parameter' },
  body: { kind: invalidRequestBody, message: 'Request body does not match the expected schema' },
};

/** Parses one part of the request; a failure becomes the part's JSON error with `details.issues`. */
export function validatePart<S extends z.ZodType>(part: Part, schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const failure = FAILURE[part];
  const issues = summarizeIssues(result.error);
  const first = issues[0];
  const message = first ? `${failure.message}: ${first.path ? `${first.path}: ` : ''}${first.message}` : failure.message;
  throw failure.kind.with(message, { issues });
}
