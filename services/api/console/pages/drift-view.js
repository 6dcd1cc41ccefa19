import { post, withQuery } from '../lib/api.js';
import { ago, short } from '../lib/format.js';
import { html, useMemo, useState } from '../lib/html.js';
import { link } from '../lib/router.js';
import { Badge, Failure, Loaded } from '../lib/ui.js';
import { useApi, useNow } from '../lib/use-api.js';

/** Re-read on every drift event (of one stack, when given). */
export const driftLive = (stackId) => (kind, e) =>
  kind === 'event' && String(e.event_type).startsWith('drift.') && (!stackId || e.data?.stack_id === stackId);

const shown = (v) => (v === null || v === undefined ? '∅' : typeof v === 'string' ? v : JSON.stringify(v));
const objectName = (o) => `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;

/** "/spec/replicas drifted on 37 of 500 clusters, by kubectl (30), hpa (7)". */
export function GroupLine({ group, total, by }) {
  const key = by === 'field' ? (group.key === '' ? '(whole object deleted)' : group.key) : (group.label ?? (group.key || '(unknown)'));
  const records = `${group.records} record${group.records === 1 ? '' : 's'}`;
  const managers = group.managers.map((m, i) => html`${i ? ', ' : ''}<code>${m.manager ?? 'unknown'}</code> (${m.records})`);
  return html`<li data-testid="drift-group" data-key=${group.key}>
    <code>${key}</code> drifted on <strong>${group.agents} of ${total}</strong>${` cluster${total === 1 ? '' : 's'} (${records})`}${
      group.managers.length ? html`, by ${managers}` : ''
    }
  </li>`;
}

function policySentence(policy) {
  const mode = policy.mode === 'report' ? 'drift is left as it is and stays open' : 'drift is put back at once';
  const comparison =
    policy.comparison === 'full' ? 'every field is compared (also what others added)' : 'fields the stack sets are compared';
  const rules = `${policy.ignore.length} ignore rule${policy.ignore.length === 1 ? '' : 's'}`;
  const overrides = policy.overrides.length ? `, ${policy.overrides.length} cluster-group override(s)` : '';
  return `${mode}; ${comparison}; ${rules}${overrides}.`;
}

/** The stack's policy in one line: what its agents do about drift. */
function PolicyLine({ stackId }) {
  const result = useApi(`stacks/${stackId}/drift-policy`, { live: driftLive(stackId) });
  if (result.error?.status === 404)
    return html`<p class="muted" data-testid="drift-policy">
      Default policy: drift is corrected at once (and recorded); fields the stack sets are compared.
    </p>`;
  return html`<${Loaded} result=${result}>
    ${({ policy }) => html`<p data-testid="drift-policy">Policy: <${Badge} value=${policy.mode} /> ${policySentence(policy)}</p>`}
  <//>`;
}

/** What each way of accepting does, as its confirmation says it. */
const ACCEPTS = {
  ignore: {
    label: 'Accept',
    question: 'Accept this drift?',
    says: (record) => `The stack will ignore ${record.missing ? 'this object' : 'these fields of this object'} from now on.`,
    body: {},
  },
  keep: {
    label: 'Keep live',
    question: 'Keep the live values on this cluster?',
    says: () => 'An override layer for this agent will set these fields to what its cluster holds; the other clusters keep the manifest’s.',
    body: { scope: 'override' },
  },
};

/** The hub holds the live values (it keeps them as an override) unless the object was deleted or they are a Secret's. */
const keepable = (record) => !record.missing && record.fields.length > 0 && !record.fields.some((f) => f.withheld);

function AcceptButton({ record, onDone, kind }) {
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState(null);
  const how = ACCEPTS[kind];
  const accept = async () => {
    setError(null);
    try {
      await post(`drift/${record.id}/accept`, how.body);
      setAsking(false);
      onDone();
    } catch (err) {
      setError(err);
    }
  };
  if (!asking)
    return html`<button data-action=${kind === 'keep' ? 'keep-live' : 'accept'} onClick=${() => setAsking(true)}>${how.label}</button>`;
  return html`<div class="confirm notice" data-testid="confirm">
    <strong>${how.question}</strong> ${how.says(record)}
    <button class="primary" data-testid="confirm-yes" onClick=${accept}>Yes, ${kind === 'keep' ? 'keep them' : 'accept'}</button>
    <button data-testid="confirm-no" onClick=${() => setAsking(false)}>Cancel</button>
    ${error && html`<${Failure} error=${error} />`}
  </div>`;
}

function AcceptButtons({ record, onDone }) {
  return html`<${AcceptButton} record=${record} onDone=${onDone} kind="ignore" />
    ${keepable(record) ? html` <${AcceptButton} record=${record} onDone=${onDone} kind="keep" />` : ''}`;
}

/** One row per drifted field; a deleted object is one row. */
function RecordRows({ record, now, onDone }) {
  const fields = record.missing || record.fields.length === 0 ? [null] : record.fields;
  return fields.map(
    (f, i) =>
      html`<tr key=${`${record.id}-${i}`} data-record=${record.id} data-state=${record.state}>
        <td>${i === 0 ? html`<${Badge} value=${record.state} />` : ''}</td>
        <td><a href=${link('agents', record.agent_id)}>${record.agent_name}</a></td>
        <td>${objectName(record.object)}</td>
        <td class="mono" data-testid="drift-path">${f ? f.path : '(object deleted)'}</td>
        <td class="mono" data-testid="drift-values">${f ? (f.withheld ? '(withheld)' : `${shown(f.desired)} → ${shown(f.live)}`) : '—'}</td>
        <td class="mono" data-testid="drift-manager">
          ${f?.manager ?? '—'}${f?.operation ? html` <span class="muted">${f.operation}</span>` : ''}
        </td>
        <td title=${record.first_seen}>${ago(record.first_seen, now)}</td>
        <td title=${record.last_seen}>${ago(record.last_seen, now)}</td>
        <td>${i === 0 && record.state === 'open' ? html`<${AcceptButtons} record=${record} onDone=${onDone} />` : ''}</td>
      </tr>`,
  );
}

const STATES = ['open', '', 'corrected', 'resolved', 'accepted'];

/**
 * A stack's drift: its policy, the open drift grouped by field ("on N of M clusters, by whom"),
 * and its records, newest first, one row per drifted field, live on drift events.
 */
export function StackDrift({ stackId }) {
  const [state, setState] = useState('open');
  const live = useMemo(() => driftLive(stackId), [stackId]);
  const groups = useApi(withQuery(`stacks/${stackId}/drift/groups`, { by: 'field', state: 'open', limit: 20 }), { live });
  const records = useApi(withQuery(`stacks/${stackId}/drift`, { state, limit: 100 }), { live });
  const now = useNow(5000);
  return html`<section data-testid="drift">
    <h2>Drift</h2>
    <${PolicyLine} stackId=${stackId} />
    <${Loaded} result=${groups}>
      ${(g) =>
        g.groups.length
          ? html`<ul class="drift-groups">
              ${g.groups.map((x) => html`<${GroupLine} key=${x.key} group=${x} total=${g.agents_total} by="field" />`)}
            </ul>`
          : html`<p class="muted" data-testid="no-open-drift">No open drift.</p>`}
    <//>
    <div class="toolbar">
      <label
        >State<select data-testid="drift-state" value=${state} onChange=${(e) => setState(e.target.value)}>
          ${STATES.map((s) => html`<option value=${s}>${s || 'any'}</option>`)}
        </select></label
      >
    </div>
    <${Loaded} result=${records}>
      ${(page) =>
        page.items.length === 0
          ? html`<p class="muted">No ${state || ''} drift records.</p>`
          : html`<table data-testid="drift-table">
                <thead>
                  <tr>
                    <th>State</th>
                    <th>Agent</th>
                    <th>Object</th>
                    <th>Field</th>
                    <th>Desired → live</th>
                    <th>Changed by</th>
                    <th>First seen</th>
                    <th>Last seen</th>
                    <th></th>
                  </tr>
                </thead>
                <tbody>
                  ${page.items.map((r) => html`<${RecordRows} key=${r.id} record=${r} now=${now} onDone=${records.reload} />`)}
                </tbody>
              </table>
              ${page.next_cursor ? html`<p class="muted">Newest 100 shown; <code>brokkr drift --stack ${short(stackId)}</code> lists every one.</p>` : ''}`}
    <//>
  </section>`;
}
