import type { z } from 'zod';
import { ApiError } from './api-error.ts';

export interface IssueSummary {
  path: string;
  code: string;
  message: string;
}

export function summarizeIssues(error: z.ZodError): IssueSummary[] {
  return error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), code: issue.code, message: issue.message }));
}

type Part = 'params' | 'query' | 'body';

const FAILURE: Record<Part, { status: number; code: string; message: string }> = {
  params: { status: 400, code: 'invalid_id', message: 'Invalid path parameter' },
  query: { status: 400, code: 'invalid_query', message: 'Invalid query parameter' },
  body: { status: 422, code: 'invalid_request_body', message: 'Request body does not match the expected schema' },
};

/** Parses one part of the request; a failure becomes the part's JSON error with `details.issues`. */
export function validatePart<S extends z.ZodType>(part: Part, schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const failure = FAILURE[part];
  const issues = summarizeIssues(result.error);
  const first = issues[0];
  const message = first ? `${failure.message}: ${first.path ? `${first.path}: ` : ''}${first.message}` : failure.message;
  throw new ApiError(failure.status, failure.code, message, { issues });
}
