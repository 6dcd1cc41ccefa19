import { session } from './session.js';

/**
 * A non-2xx answer; `status` 403 means the PAK may not read this (shown as "not permitted").
 * `details` is the error's `details` (e.g. `cycle` of a 422 `dependency_cycle`), if any.
 */
export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

const listeners = new Set();
/** Called with no arguments when any request answers 401 (the PAK was rotated or deleted). */
export function onUnauthorized(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/**
 * Every request carries the PAK as `Authorization: Bearer …`, the header /api/v1 accepts.
 * `path` starting with `/` is used as is (`/ui/api/fleet`); otherwise it is under /api/v1.
 */
export async function request(path, { method = 'GET', body, pak = session.pak } = {}) {
  const url = path.startsWith('/') ? path : `/api/v1/${path}`;
  const headers = { Accept: 'application/json' };
  if (pak) headers.Authorization = `Bearer ${pak}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let data;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = text;
  }
  if (!res.ok) {
    if (res.status === 401 && pak === session.pak) for (const fn of listeners) fn();
    throw new ApiError(res.status, data?.code ?? 'error', data?.message ?? `HTTP ${res.status}`, data?.details);
  }
  return data;
}

export const get = (path) => request(path);
export const post = (path, body) => request(path, { method: 'POST', body });
export const del = (path) => request(path, { method: 'DELETE' });

/** Builds `path?k=v` from the defined, non-empty values. */
export function withQuery(path, query) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}
