import { post } from '../lib/api.js';
import { ago, short, time } from '../lib/format.js';
import { html, useMemo, useState } from '../lib/html.js';
import { link } from '../lib/router.js';
import { session } from '../lib/session.js';
import { Badge, Failure, Loaded } from '../lib/ui.js';
import { useApi, useNow } from '../lib/use-api.js';
import { WaveApprovals } from './approvals.js';

/** The hub's transitions (POST /rollouts/{id}/{action}): which statuses each applies to, and what it does. */
const ACTIONS = [
  { action: 'pause', from: ['pending', 'progressing'], says: 'No further wave is released until you resume.' },
  { action: 'resume', from: ['paused'], says: "The wave's deadline and soak restart." },
  { action: 'abort', from: ['pending', 'progressing', 'paused', 'failed'], says: 'Every agent is served the previous object again.' },
  { action: 'promote', from: ['pending', 'progressing', 'paused', 'failed'], says: 'Every agent is served the new object now.' },
];

/** "4 min 10 s" until `deadlineMs`, or "passed". */
function countdown(deadlineMs, now) {
  const s = Math.round((deadlineMs - now) / 1000);
  if (s <= 0) return 'passed';
  if (s < 120) return `${s} s`;
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** applied / healthy / failed of a wave's agents as one stacked bar. */
function ProgressBar({ wave }) {
  const pct = (n) => (wave.agents ? (100 * n) / wave.agents : 0);
  const healthy = Math.min(wave.healthy, wave.applied);
  return html`<div class="bar" title="${wave.applied}/${wave.agents} applied, ${wave.healthy} healthy, ${wave.failed} failed">
    <span class="seg ok" style="width:${pct(healthy)}%"></span>
    <span class="seg applied" style="width:${pct(wave.applied - healthy)}%"></span>
    <span class="seg bad" style="width:${pct(wave.failed)}%"></span>
  </div>`;
}

/** The soak or deadline clock of the wave being gated (the newest released one), while the rollout moves on. */
function WaveClock({ detail, wave, now }) {
  const { rollout } = detail;
  if (rollout.status !== 'progressing' || wave.index !== rollout.released_wave) return '';
  const spec = rollout.policy.waves[wave.index];
  const parts = [];
  if (detail.wave_healthy_since && spec.soak_seconds > 0)
    parts.push(
      html`<span data-testid="soak"
        >soak ends in ${countdown(Date.parse(detail.wave_healthy_since) + spec.soak_seconds * 1000, now)}</span
      >`,
    );
  else if (detail.wave_started_at)
    parts.push(
      html`<span data-testid="deadline"
        >deadline in ${countdown(Date.parse(detail.wave_started_at) + spec.progress_deadline_seconds * 1000, now)}</span
      >`,
    );
  return html`<div class="muted clock">${parts}</div>`;
}

function agentState(a) {
  if (!a.last_event) return 'pending';
  return String(a.last_event.status).toUpperCase() === 'SUCCESS' ? 'applied' : 'failed';
}

/** Wave by wave approvals: the counts in the head, the list and the Approve form under it. */
function WaveApprovalHead({ wave }) {
  if (!wave.required_approvals) return '';
  return html`<span data-testid="wave-approvals-count">approvals ${wave.approvals}/${wave.required_approvals}</span>
    ${wave.awaiting_approval ? html`<${Badge} value="waiting for approvals" />` : ''}`;
}

function Wave({ detail, wave, now, onApproved }) {
  const spec = detail.rollout.policy.waves[wave.index];
  const agents = detail.agents.filter((a) => a.wave === wave.index);
  const selects = spec.selector ? `agents labelled ${spec.selector.labels.join(', ')}` : `${spec.percent}% of the agents (cumulative)`;
  return html`<div class="wave" data-testid="wave" data-wave=${wave.name}>
    <div class="wave-head">
      <strong>${wave.index + 1}. ${wave.name}</strong>
      <${Badge} value=${wave.released ? 'released' : 'held'} />
      <${WaveApprovalHead} wave=${wave} />
      <span class="muted"
        >${selects}; max ${spec.max_failures} failure(s), soak ${spec.soak_seconds} s, deadline ${spec.progress_deadline_seconds} s</span
      >
    </div>
    <${ProgressBar} wave=${wave} />
    <div class="muted" data-testid="wave-counts">
      ${wave.applied}/${wave.agents} applied, ${wave.healthy} healthy, ${wave.failed} failed
    </div>
    <${WaveClock} detail=${detail} wave=${wave} now=${now} />
    ${
      wave.required_approvals > 0 &&
      html`<${WaveApprovals}
        rolloutId=${detail.rollout.id}
        wave=${wave.index}
        rolloutStatus=${detail.rollout.status}
        onApproved=${onApproved}
        withCounts=${false}
      />`
    }
    ${
      agents.length > 0 &&
      html`<ul class="agents">
        ${agents.map(
          (a) =>
            html`<li key=${a.agent_id}>
              <a href=${link('agents', a.agent_id)}>${a.name}</a> <span class="muted">(${a.cluster_name})</span>
              <${Badge} value=${agentState(a)} />${a.health ? html` <${Badge} value=${a.health} />` : ''}
              ${a.last_event?.message ? html` <span class="muted">${a.last_event.message}</span>` : ''}
            </li>`,
        )}
      </ul>`
    }
  </div>`;
}

/** Pause / resume / abort / promote, each behind a confirmation; shown to the stack's owner or an admin (whoever may read the rollout). */
function Actions({ rollout, onDone }) {
  const [asking, setAsking] = useState(null);
  const [error, setError] = useState(null);
  const who = session.identity;
  if (!who || (!who.admin && !who.generator)) return '';
  const possible = ACTIONS.filter((a) => a.from.includes(rollout.status));
  if (possible.length === 0) return '';
  const run = async (action) => {
    setError(null);
    try {
      await post(`rollouts/${rollout.id}/${action}`);
      setAsking(null);
      onDone();
    } catch (err) {
      setError(err);
    }
  };
  return html`<div class="actions" data-testid="rollout-actions">
    ${possible.map(
      (a) =>
        html`<button key=${a.action} data-action=${a.action} onClick=${() => setAsking(a)}>
          ${a.action[0].toUpperCase() + a.action.slice(1)}
        </button>`,
    )}
    ${
      asking &&
      html`<div class="confirm notice" data-testid="confirm">
        <strong>${asking.action[0].toUpperCase() + asking.action.slice(1)} this rollout?</strong> ${asking.says}
        <button class="primary" data-testid="confirm-yes" onClick=${() => run(asking.action)}>Yes, ${asking.action}</button>
        <button data-testid="confirm-no" onClick=${() => setAsking(null)}>Cancel</button>
      </div>`
    }
    ${error && html`<${Failure} error=${error} />`}
  </div>`;
}

export function Timeline({ events, now }) {
  if (events.length === 0) return html`<p class="muted">No recent events.</p>`;
  return html`<ol class="timeline" data-testid="timeline">
    ${events.map(
      (e) =>
        html`<li key=${e.id} data-event=${e.event_type}>
          <span class="muted" title=${e.timestamp}>${ago(e.timestamp, now)}</span>
          <code>${e.event_type}</code>
          ${e.data?.wave !== undefined ? html` <span>wave ${e.data.wave + 1}${e.data.name ? ` (${e.data.name})` : ''}</span>` : ''}
          ${e.data?.reason ? html` <span class="bad">${e.data.reason}</span>` : ''}
          ${e.data?.expires_at ? html` <span>expires ${time(e.data.expires_at)}</span>` : ''}
        </li>`,
    )}
  </ol>`;
}

/**
 * One rollout, live: its waves (agents, applied/healthy/failed, the gated wave's soak or deadline
 * clock), the operator's actions and its event timeline. Re-read on every event about its stack
 * (rollout steps, agents' reports) and every few seconds for health reports, which announce none.
 */
export function RolloutDetail({ id, stackId }) {
  const live = useMemo(
    () => (kind, e) => kind === 'event' && (e.data?.rollout_id === id || (stackId && e.data?.stack_id === stackId)),
    [id, stackId],
  );
  const result = useApi(`/ui/api/rollouts/${id}`, { live, everyMs: 5000 });
  const now = useNow(1000);
  return html`<${Loaded} result=${result}>
    ${(detail) =>
      html`<section class="rollout" data-testid="rollout" data-status=${detail.rollout.status}>
        <div class="rollout-head">
          <span>Rollout <a class="mono" href=${link('rollouts', detail.rollout.id)}>${short(detail.rollout.id)}</a></span>
          <span data-testid="rollout-status"><${Badge} value=${detail.rollout.status} /></span>
          <span class="muted"
            >of object${' '}<a class="mono" href=${link('deployment-objects', detail.rollout.deployment_object_id)}
              >${short(detail.rollout.deployment_object_id)}</a
            >, previous${' '}<a class="mono" href=${link('deployment-objects', detail.rollout.baseline_object_id)}
              >${short(detail.rollout.baseline_object_id)}</a
            >, started ${ago(detail.rollout.created_at, now)}</span
          >
        </div>
        ${detail.rollout.message && html`<p data-testid="rollout-message">${detail.rollout.message}</p>`}
        <${Actions} rollout=${detail.rollout} onDone=${result.reload} />
        ${detail.rollout.waves.map((w) => html`<${Wave} key=${w.index} detail=${detail} wave=${w} now=${now} onApproved=${result.reload} />`)}
        <h3>Events</h3>
        <${Timeline} events=${detail.events} now=${now} />
      </section>`}
  <//>`;
}

/** A rollout on a page of its own (from the fleet-wide list). */
export function RolloutPage({ id }) {
  const result = useApi(`rollouts/${id}`);
  return html`<${Loaded} result=${result}>
    ${(r) =>
      html`<p><a href=${link('rollouts')}>← Rollouts</a> · <a href=${link('stacks', r.stack_id)}>Stack</a></p>
        <h1>Rollout <span class="mono">${short(r.id)}</span></h1>
        <${RolloutDetail} id=${id} stackId=${r.stack_id} />`}
  <//>`;
}
