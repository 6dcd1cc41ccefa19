import { z } from 'zod';
import { unknownPakThrottled } from '../auth/unknown-paks.ts';
import { adminRequired, raisesOf, type ErrorSpec, type Raises } from '../errors/api-error.ts';
import { unauthorized } from './authenticate.ts';
import { jsonBody, payloadTooLarge, unreadableBody, unsupportedEncoding } from './body.ts';
import { invalidInput } from './db-errors.ts';
import { serviceUnavailable } from './db-unavailable.ts';
import type { AnyRoute } from './route.ts';
import { invalidPathParameter, invalidQuery, invalidRequestBody } from './validate.ts';

/**
 * The error responses of a route: those its declaration implies, in the order mount-routes.ts
 * checks them, then the route's own `errors`. The OpenAPI document lists exactly these, so a
 * new guard or validator on the declaration documents itself.
 */

/** Reading any body (mount-routes.ts puts the size-limited reader in front of such routes). */
const BODY_READ: readonly Raises[] = [payloadTooLarge, unsupportedEncoding, unreadableBody];

export function takesBody(route: AnyRoute): boolean {
  return route.body !== undefined || route.bodyMode === 'raw';
}

const isId = (schema: unknown) => schema instanceof z.ZodGUID || schema instanceof z.ZodUUID;

/** Path parameters that are all UUIDs are checked before SQL sees them; other strings reach it as sent. */
function onlyIds(params: z.ZodType): boolean {
  return params instanceof z.ZodObject && Object.values(params.shape).every(isId);
}

/** Client values that reach SQL unchecked can be refused by the database: 400 `invalid_input`. */
function reachesSql(route: AnyRoute): boolean {
  return (route.params !== undefined && !onlyIds(route.params)) || route.query !== undefined || takesBody(route);
}

function routeErrorSources(route: AnyRoute): Raises[] {
  const sources: Raises[] = [unauthorized, unknownPakThrottled, serviceUnavailable];
  if (route.access === 'admin') sources.push(adminRequired);
  if (route.params) sources.push(invalidPathParameter);
  if (route.query) sources.push(invalidQuery);
  if (takesBody(route)) sources.push(...BODY_READ);
  if (route.body && route.bodyMode !== 'raw') sources.push(jsonBody, invalidRequestBody);
  if (reachesSql(route)) sources.push(invalidInput);
  return [...sources, ...(route.errors ?? [])];
}

export function routeErrors(route: AnyRoute): ErrorSpec[] {
  return raisesOf(...routeErrorSources(route));
}

/** The route's error codes grouped by status, statuses ascending. */
export function errorsByStatus(route: AnyRoute): Map<number, string[]> {
  const byStatus = new Map<number, string[]>();
  for (const { status, code } of routeErrors(route).sort((a, b) => a.status - b.status)) {
    const codes = byStatus.get(status) ?? [];
    if (!codes.includes(code)) codes.push(code);
    byStatus.set(status, codes);
  }
  return byStatus;
}
