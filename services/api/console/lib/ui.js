// Small shared pieces of every page.
import { html } from './html.js';

/** A failed read: 403 is "not permitted" (the API decides what a PAK may read), anything else an error. */
export function Failure({ error }) {
  if (error?.status === 403) {
    return html`<div class="notice denied" data-testid="not-permitted">
      <strong>Not permitted.</strong> This PAK may not read this (<code>${error.code}</code>).
    </div>`;
  }
  if (error?.status === 404) return html`<div class="notice error" data-testid="not-found">Not found (<code>${error.code}</code>).</div>`;
  return html`<div class="notice error" data-testid="error">Could not load: ${error?.message ?? String(error)}</div>`;
}

/**
 * A refused write, in the API's own words: its message and code (403s included — for a write,
 * "not permitted" alone would hide why, e.g. `approval_by_submitter`). `children` adds to it.
 */
export function Refusal({ error, children }) {
  return html`<div class="notice error" data-testid="refusal" data-code=${error?.code}>
    ${error?.message ?? String(error)} ${error?.code ? html`<code>${error.code}</code>` : ''} ${children}
  </div>`;
}

/** Renders `children(data)` once loaded, the failure, or a loading line. */
export function Loaded({ result, children }) {
  if (result.error) return html`<${Failure} error=${result.error} />`;
  if (result.data === undefined) return html`<p class="muted">Loading…</p>`;
  return children(result.data);
}

export function Pager({ offset, limit, total, onChange }) {
  const last = Math.min(offset + limit, total);
  return html`<div class="pager">
    <button disabled=${offset === 0} onClick=${() => onChange(Math.max(0, offset - limit))}>← Previous</button>
    <span class="muted" data-testid="pager">${total === 0 ? 0 : offset + 1}–${last} of ${total}</span>
    <button disabled=${last >= total} onClick=${() => onChange(offset + limit)}>Next →</button>
  </div>`;
}

const TONES = {
  healthy: 'ok',
  ACTIVE: 'ok',
  success: 'ok',
  SUCCESS: 'ok',
  applied: 'ok',
  degraded: 'warn',
  pending: 'warn',
  failing: 'bad',
  failed: 'bad',
  FAILURE: 'bad',
  dead: 'bad',
  // rollouts and previews
  succeeded: 'ok',
  promoted: 'ok',
  released: 'ok',
  clean: 'ok',
  completed: 'ok',
  progressing: 'warn',
  paused: 'warn',
  changes: 'warn',
  changed: 'warn',
  rolled_back: 'bad',
  aborted: 'bad',
  error: 'bad',
  // order and consent
  served: 'ok',
  waiting: 'warn',
  'waiting for approvals': 'warn',
};
export const Badge = ({ value }) => html`<span class="badge ${TONES[value] ?? ''}">${value ?? '—'}</span>`;

export function HealthCounts({ health }) {
  if (!health) return '—';
  const parts = [];
  if (health.healthy) parts.push(html`<span class="ok">${health.healthy} healthy</span>`);
  if (health.degraded) parts.push(html`<span class="warn">${health.degraded} degraded</span>`);
  if (health.failing) parts.push(html`<span class="bad">${health.failing} failing</span>`);
  if (health.unknown) parts.push(html`<span class="muted">${health.unknown} unknown</span>`);
  if (parts.length === 0) return html`<span class="muted">no reports</span>`;
  return parts.flatMap((p, i) => (i === 0 ? [p] : [', ', p]));
}

export const Card = ({ n, label, tone = '' }) =>
  html`<div class="card">
    <div class="n ${tone}">${n}</div>
    <div class="l">${label}</div>
  </div>`;
