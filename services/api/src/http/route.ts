import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { Identity } from '../auth/identity.ts';
import type { ApiContext } from '../context.ts';
import type { Raises } from '../errors/api-error.ts';
import type { BodyMode, RawBody } from './body.ts';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * `any`: any valid PAK (the handler decides further); `admin`: 403 `admin_required` for everyone
 * else, checked before the input is validated.
 */
export type Access = 'any' | 'admin';

export interface ResponseSpec {
  description: string;
  /** JSON body schema (documentation only: responses are not validated at run time). */
  schema?: z.ZodType;
  /** Other media types, e.g. `{ 'application/yaml': z.string() }`. */
  content?: Record<string, z.ZodType>;
}

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** Only for `bodyMode: 'raw'`. */
  raw: RawBody | undefined;
  identity: Identity;
  ctx: ApiContext;
  /** The socket's address, or behind a trusted proxy the hop it forwarded for (auth/client-info.ts). */
  clientIp: string | null;
  userAgent: string | null;
  req: Request;
  res: Response;
}

/** What a handler returns; `undefined` means it wrote the response itself through `res`. */
export interface Reply {
  status: number;
  body?: unknown;
  /** When set, `body` (string or Buffer) is sent as is with this content type. */
  contentType?: string;
  headers?: Record<string, string>;
}

export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  method: HttpMethod;
  /** Express path relative to /api/v1, e.g. `/generators/:id`. Trailing slashes are significant. */
  path: string;
  summary: string;
  description?: string;
  tags?: string[];
  access: Access;
  params?: P;
  query?: Q;
  /** The JSON body schema; with `bodyMode: 'raw'` it only documents the JSON variant. */
  body?: B;
  bodyMode?: BodyMode;
  /** Extra request media types for the OpenAPI document (raw routes). */
  requestContent?: Record<string, z.ZodType>;
  /** Success (and other non-error) responses; error responses come from `errors` and the declaration. */
  responses: Record<number, ResponseSpec>;
  /**
   * What the handler raises beyond what the declaration implies (route-errors.ts derives 401 and
   * 503 everywhere, `admin` 403, validation 400/422, body 400/413/415): error kinds, and helpers
   * (guards, lookups, parsers) that carry the kinds they throw. Documented as the operation's responses.
   */
  errors?: readonly Raises[];
  // Method syntax on purpose: routes with different schemas must fit in one array.
  handler(input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>): Promise<Reply | undefined> | Reply | undefined;
}

export type AnyRoute = RouteSpec<z.ZodType, z.ZodType, z.ZodType>;

type EmptyObject = z.ZodObject<Record<string, never>>;

/** Identity function that infers the handler's input types from the schemas. */
export function defineRoute<P extends z.ZodType = EmptyObject, Q extends z.ZodType = EmptyObject, B extends z.ZodType = z.ZodUndefined>(
  spec: RouteSpec<P, Q, B>,
): RouteSpec<P, Q, B> {
  return spec;
}

export const json = (status: number, body: unknown): Reply => ({ status, body });
export const noContent = (): Reply => ({ status: 204 });
