import { post } from '../lib/api.js';
import { ago, short, time } from '../lib/format.js';
import { html, useMemo, useState } from '../lib/html.js';
import { link } from '../lib/router.js';
import { session } from '../lib/session.js';
import { Badge, Loaded, Refusal } from '../lib/ui.js';
import { useApi, useNow } from '../lib/use-api.js';

/**
 * Approvals of rollout waves (docs/rollouts.md, "Approvals"): who approved a wave, and an Approve
 * button for whoever may try. The hub decides who may (never the object's submitter, otherwise an
 * admin or a generator the wave lists): the button is offered to every admin and generator PAK and
 * a refusal is shown in the API's words (403 approval_by_submitter, approver_not_allowed, …).
 */

/** An approval's approver as a person reads it: "you", "admin" or "generator 1a2b3c4d". */
function approverText(a) {
  if (a.approver_type === 'admin') return session.identity?.admin ? 'admin (you)' : 'admin';
  return session.identity?.generator === a.approver_id ? 'you' : `generator ${short(a.approver_id)}`;
}

/** A rollout that may still release a wave (the hub accepts approvals only then). */
const OPEN = ['pending', 'progressing', 'paused'];

function ApproveForm({ rolloutId, wave, digest, onApproved }) {
  const [comment, setComment] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const who = session.identity;
  if (!who || (!who.admin && !who.generator)) return '';
  const approve = async (ev) => {
    ev.preventDefault();
    setError(null);
    setBusy(true);
    try {
      // The digest shown is the one reviewed: if the wave would ship something else by now, the hub
      // refuses (409 approval_digest_mismatch) instead of counting an approval of other content.
      await post(`rollouts/${rolloutId}/waves/${wave}/approvals`, { digest, ...(comment.trim() ? { comment: comment.trim() } : {}) });
      setComment('');
      onApproved();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="toolbar" data-testid="approve-form" onSubmit=${approve}>
    <input name="comment" placeholder="comment (optional)" value=${comment} onInput=${(e) => setComment(e.target.value)} />
    <button class="primary" type="submit" data-testid="approve" disabled=${busy}>Approve wave ${wave + 1}</button>
    ${error && html`<${Refusal} error=${error} />`}
  </form>`;
}

function ApprovalsTable({ approvals, now }) {
  if (approvals.length === 0) return html`<p class="muted" data-testid="no-approvals">No approvals yet.</p>`;
  return html`<table data-testid="approvals-table">
    <thead>
      <tr>
        <th>Who</th>
        <th>When</th>
        <th>Expires</th>
        <th>Digest</th>
        <th>Counts</th>
        <th>Comment</th>
      </tr>
    </thead>
    <tbody>
      ${approvals.map(
        (a) =>
          html`<tr key=${a.id} data-approver=${a.approver_id ?? 'admin'}>
            <td>${approverText(a)}</td>
            <td title=${a.created_at}>${ago(a.created_at, now)}</td>
            <td title=${a.expires_at}>${time(a.expires_at)}</td>
            <td class="mono" title=${a.digest}>${String(a.digest).slice(0, 19)}…</td>
            <td class=${a.counts ? 'ok' : 'muted'}>${a.counts ? 'yes' : 'no (expired or other content)'}</td>
            <td>${a.comment ?? ''}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/**
 * One wave's approvals (GET /rollouts/{id}/waves/{n}/approvals) and, while the wave may still be
 * approved, the Approve form. `onApproved` lets the page re-read what the approval may have released;
 * `withCounts` false leaves the count to a wave head that shows it already (the rollout page).
 */
export function WaveApprovals({ rolloutId, wave, rolloutStatus, onApproved, withCounts = true }) {
  const live = useMemo(() => (kind, e) => kind === 'event' && e.data?.rollout_id === rolloutId, [rolloutId]);
  const result = useApi(`rollouts/${rolloutId}/waves/${wave}/approvals`, { live, everyMs: 10_000 });
  const now = useNow(10_000);
  const approved = () => {
    result.reload();
    onApproved?.();
  };
  return html`<div class="approvals" data-testid="wave-approvals">
    <${Loaded} result=${result}>
      ${(w) => html`
        <div data-testid="approval-counts">
          ${
            withCounts
              ? html`approvals ${w.approvals_counted}/${w.required_approvals}
                ${w.awaiting_approval ? html` <${Badge} value="waiting for approvals" />` : ''}
                ${w.released ? html` <${Badge} value="released" />` : ''}`
              : ''
          }
          <span class="muted mono" title=${w.digest}>approvals bind to digest ${String(w.digest).slice(0, 19)}…</span>
        </div>
        <${ApprovalsTable} approvals=${w.approvals} now=${now} />
        ${!w.released && OPEN.includes(rolloutStatus) ? html`<${ApproveForm} rolloutId=${rolloutId} wave=${wave} digest=${w.digest} onApproved=${approved} />` : ''}
      `}
    <//>
  </div>`;
}

function RequestBox({ request, onApproved }) {
  const r = request;
  return html`<div class="wave" data-testid="approval-request" data-rollout=${r.rollout_id} data-wave=${r.wave}>
    <div class="wave-head">
      <strong><a href=${link('stacks', r.stack_id)}>${r.stack_name}</a></strong>
      <span>wave ${r.wave + 1} (${r.name})</span>
      <${Badge} value=${r.status} />
      <span class="muted"
        >${r.awaiting_approval ? 'the rollout waits at this wave' : 'the rollout has not reached this wave yet'}; object${' '}
        <a class="mono" href=${link('deployment-objects', r.deployment_object_id)}>${short(r.deployment_object_id)}</a></span
      >
    </div>
    <${WaveApprovals} rolloutId=${r.rollout_id} wave=${r.wave} rolloutStatus=${r.status} onApproved=${onApproved} />
  </div>`;
}

/** "Approvals": the waves waiting for this PAK's approval (GET /approval-requests), newest first. */
export function ApprovalRequestsPage() {
  const live = useMemo(() => (kind, e) => kind === 'event' && String(e.event_type).startsWith('rollout.'), []);
  const result = useApi('approval-requests', { live, everyMs: 15_000 });
  return html`<h1>Approval requests</h1>
    <p class="muted">Waves of open rollouts this PAK may approve. The object's submitter may not approve its own rollout.</p>
    <${Loaded} result=${result}>
      ${(requests) =>
        requests.length === 0
          ? html`<p class="muted" data-testid="no-approval-requests">Nothing waits for your approval.</p>`
          : html`<div data-testid="approval-requests">
              ${requests.map((r) => html`<${RequestBox} key=${`${r.rollout_id}:${r.wave}`} request=${r} onApproved=${result.reload} />`)}
            </div>`}
    <//>`;
}
