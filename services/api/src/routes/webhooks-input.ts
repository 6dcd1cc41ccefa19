import { headerValueProblem } from '@brokkr/crypto';
import { ApiError, badRequest, unprocessable } from '../http/api-error.ts';
import { validatePart } from '../http/validate.ts';
import { createWebhookBodySchema, updateWebhookBodySchema, type CreateWebhookBody, type UpdateWebhookBody } from './webhooks-schemas.ts';

/**
 * Brokkr's validation order for subscription writes (contract §2.8), which the generic route
 * validation cannot express: removed fields are rejected on the raw body before its shape is
 * checked, and the semantic 400s come before the range 422s.
 */

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function removedField(field: string, useInstead: string, message: string): ApiError {
  return unprocessable('unsupported_field', message, { field, use_instead: useInstead });
}

/** A key counts even when its value is null: the caller wrote it, so they think it means something. */
function rejectRemovedFields(raw: unknown, kind: 'create' | 'update'): void {
  if (!isObject(raw)) return;
  if (kind === 'create' && 'validate' in raw) {
    throw removedField('validate', 'POST /webhooks/{id}/test', '`validate` is not supported: create the subscription, then call POST /webhooks/{id}/test');
  }
  if (isObject(raw.filters) && 'labels' in raw.filters) {
    throw removedField('filters.labels', 'target_labels', '`filters.labels` is not supported: use `target_labels` for label-based delivery, or filters.agent_id / filters.stack_id');
  }
}

/** 400 url_required / invalid_url_scheme / invalid_webhook for a URL that cannot be delivered to. */
function checkUrl(url: string): void {
  if (url.trim() === '') throw badRequest('url_required', 'URL is required');
  if (!url.startsWith('http://') && !url.startsWith('https://')) throw badRequest('invalid_url_scheme', 'URL must start with http:// or https://');
  try {
    new URL(url);
  } catch {
    throw badRequest('invalid_webhook', 'URL is not a valid URL');
  }
}

function checkName(name: string): void {
  if (name.trim() === '') throw badRequest('invalid_webhook', 'name must not be blank');
  if (name.length > 255) throw badRequest('invalid_webhook', 'name must be at most 255 characters');
}

function checkEventTypes(eventTypes: readonly string[]): void {
  if (eventTypes.length === 0) throw badRequest('invalid_webhook', 'event_types must not be empty');
}

/**
 * The auth header is sent verbatim as `Authorization`: a value no HTTP client can send (line
 * break, NUL, U+202E, an emoji) is refused here instead of failing every delivery later.
 */
function checkAuthHeader(authHeader: string | null | undefined): void {
  if (authHeader === undefined || authHeader === null) return;
  const problem = headerValueProblem(authHeader);
  if (problem) throw badRequest('invalid_webhook', `auth_header ${problem}`, { field: 'auth_header' });
}

function checkRanges(body: { max_retries?: number | null | undefined; timeout_seconds?: number | null | undefined }): void {
  const retries = body.max_retries;
  if (retries !== undefined && retries !== null && (retries < 0 || retries > 10)) {
    throw unprocessable('invalid_webhook', 'max_retries must be between 0 and 10');
  }
  const timeout = body.timeout_seconds;
  if (timeout !== undefined && timeout !== null && (timeout < 1 || timeout > 300)) {
    throw unprocessable('invalid_webhook', 'timeout_seconds must be between 1 and 300');
  }
}

/**
 * 422 unsupported_field → 422 invalid_request_body → 400 url_required → 400 invalid_url_scheme →
 * 400 invalid_webhook (name, event types, then auth header) → 422 invalid_webhook.
 */
export function parseCreateWebhook(raw: unknown): CreateWebhookBody {
  rejectRemovedFields(raw, 'create');
  const body = validatePart('body', createWebhookBodySchema, raw);
  checkUrl(body.url);
  checkName(body.name);
  checkEventTypes(body.event_types);
  checkAuthHeader(body.auth_header);
  checkRanges(body);
  return body;
}

/** The shape part of an update (before the 404 check); `validate` is just an unknown key here. */
export function parseUpdateWebhook(raw: unknown): UpdateWebhookBody {
  rejectRemovedFields(raw, 'update');
  return validatePart('body', updateWebhookBodySchema, raw);
}

/**
 * The rest of an update, after the 404 check. Brokkr checks only the ranges here; we also refuse
 * a URL, name, event-type list or auth header that create would refuse (a stored `ftp://` URL could only ever
 * produce dead deliveries) — same codes as create.
 */
export function checkUpdateWebhook(body: UpdateWebhookBody): void {
  if (body.url !== undefined && body.url !== null) checkUrl(body.url);
  if (body.name !== undefined && body.name !== null) checkName(body.name);
  if (body.event_types !== undefined && body.event_types !== null) checkEventTypes(body.event_types);
  checkAuthHeader(body.auth_header);
  checkRanges(body);
}
