import { headerValueProblem } from '@brokkr/crypto';
import { errorKind, raising, type ApiError } from '../../errors/api-error.ts';
import { invalidRequestBody, validatePart } from '../../http/validate.ts';
import { createWebhookBodySchema, updateWebhookBodySchema, type CreateWebhookBody, type UpdateWebhookBody } from './schemas.ts';

/**
 * Brokkr's validation order for subscription writes, which the generic route
 * validation cannot express: removed fields are rejected on the raw body before its shape is
 * checked, and the semantic 400s come before the range 422s.
 */

const unsupportedField = errorKind(422, 'unsupported_field', 'The field is not supported');
const urlRequired = errorKind(400, 'url_required', 'URL is required');
const invalidUrlScheme = errorKind(400, 'invalid_url_scheme', 'URL must start with http:// or https://');
const invalidWebhook = errorKind(400, 'invalid_webhook', 'Invalid webhook subscription');
// Brokkr answers out-of-range numbers with the same code, but 422.
const webhookOutOfRange = errorKind(422, 'invalid_webhook', 'A value is out of range');
const semanticErrors = [urlRequired, invalidUrlScheme, invalidWebhook, webhookOutOfRange];

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function removedField(field: string, useInstead: string, message: string): ApiError {
  return unsupportedField.with(message, { field, use_instead: useInstead });
}

/** A key counts even when its value is null: the caller wrote it, so they think it means something. */
function rejectRemovedFields(raw: unknown, kind: 'create' | 'update'): void {
  if (!isObject(raw)) return;
  if (kind === 'create' && 'validate' in raw) {
    throw removedField(
      'validate',
      'POST /webhooks/{id}/test',
      '`validate` is not supported: create the subscription, then call POST /webhooks/{id}/test',
    );
  }
  if (isObject(raw.filters) && 'labels' in raw.filters) {
    throw removedField(
      'filters.labels',
      'target_labels',
      '`filters.labels` is not supported: use `target_labels` for label-based delivery, or filters.agent_id / filters.stack_id',
    );
  }
}

/** 400 url_required / invalid_url_scheme / invalid_webhook for a URL that cannot be delivered to. */
function checkUrl(url: string): void {
  if (url.trim() === '') throw urlRequired();
  if (!url.startsWith('http://') && !url.startsWith('https://')) throw invalidUrlScheme();
  try {
    new URL(url);
  } catch {
    throw invalidWebhook.with('URL is not a valid URL');
  }
}

function checkName(name: string): void {
  if (name.trim() === '') throw invalidWebhook.with('name must not be blank');
  if (name.length > 255) throw invalidWebhook.with('name must be at most 255 characters');
}

function checkEventTypes(eventTypes: readonly string[]): void {
  if (eventTypes.length === 0) throw invalidWebhook.with('event_types must not be empty');
}

/**
 * The auth header is sent verbatim as `Authorization`: a value no HTTP client can send (line
 * break, NUL, U+202E, an emoji) is refused here instead of failing every delivery later.
 */
function checkAuthHeader(authHeader: string | null | undefined): void {
  if (authHeader === undefined || authHeader === null) return;
  const problem = headerValueProblem(authHeader);
  if (problem) throw invalidWebhook.with(`auth_header ${problem}`, { field: 'auth_header' });
}

function checkRanges(body: { max_retries?: number | null | undefined; timeout_seconds?: number | null | undefined }): void {
  const retries = body.max_retries;
  if (retries !== undefined && retries !== null && (retries < 0 || retries > 10)) {
    throw webhookOutOfRange.with('max_retries must be between 0 and 10');
  }
  const timeout = body.timeout_seconds;
  if (timeout !== undefined && timeout !== null && (timeout < 1 || timeout > 300)) {
    throw webhookOutOfRange.with('timeout_seconds must be between 1 and 300');
  }
}

/**
 * 422 unsupported_field → 422 invalid_request_body → 400 url_required → 400 invalid_url_scheme →
 * 400 invalid_webhook (name, event types, then auth header) → 422 invalid_webhook.
 */
export const parseCreateWebhook = raising(
  (raw: unknown): CreateWebhookBody => {
    rejectRemovedFields(raw, 'create');
    const body = validatePart('body', createWebhookBodySchema, raw);
    checkUrl(body.url);
    checkName(body.name);
    checkEventTypes(body.event_types);
    checkAuthHeader(body.auth_header);
    checkRanges(body);
    return body;
  },
  unsupportedField,
  invalidRequestBody,
  ...semanticErrors,
);

/** The shape part of an update (before the 404 check); `validate` is just an unknown key here. */
export const parseUpdateWebhook = raising(
  (raw: unknown): UpdateWebhookBody => {
    rejectRemovedFields(raw, 'update');
    return validatePart('body', updateWebhookBodySchema, raw);
  },
  unsupportedField,
  invalidRequestBody,
);

/**
 * The rest of an update, after the 404 check. Brokkr checks only the ranges here; we also refuse
 * a URL, name, event-type list or auth header that create would refuse (a stored `ftp://` URL could only ever
 * produce dead deliveries) — same codes as create.
 */
export const checkUpdateWebhook = raising(
  (body: UpdateWebhookBody): void => {
    if (body.url !== undefined && body.url !== null) checkUrl(body.url);
    if (body.name !== undefined && body.name !== null) checkName(body.name);
    if (body.event_types !== undefined && body.event_types !== null) checkEventTypes(body.event_types);
    checkAuthHeader(body.auth_header);
    checkRanges(body);
  },
  ...semanticErrors,
);
