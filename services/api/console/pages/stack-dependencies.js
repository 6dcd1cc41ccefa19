import { del, get, post, withQuery } from '../lib/api.js';
import { ago, short } from '../lib/format.js';
import { html, useEffect, useMemo, useRef, useState } from '../lib/html.js';
import { link } from '../lib/router.js';
import { session } from '../lib/session.js';
import { Loaded, Refusal } from '../lib/ui.js';
import { useApi, useNow } from '../lib/use-api.js';

/**
 * The stacks this one waits for (docs/dependencies.md): GET/POST/DELETE /stacks/{id}/dependencies.
 * The API decides who may change them (the admin, the stack's owner): the form is offered to both
 * and a refusal is shown in the API's words.
 */

/** How many stacks the "waits for" picker offers: one page of /ui/api/stacks, narrowed on the server by its filter box. */
const PICKER_LIMIT = 100;

/** `created_by` ("admin" | "generator:<id>") as a person reads it. */
export function creatorText(createdBy) {
  if (createdBy === 'admin') return 'admin';
  const id = String(createdBy ?? '').replace(/^generator:/, '');
  return session.identity?.generator === id ? 'you' : `generator ${short(id)}`;
}

/**
 * Names of stacks by id: those the picker page already holds, and one GET /stacks/{id} for each other
 * id asked (a dependency or cycle names a handful). A stack this PAK may not read keeps its short id.
 */
export function useStackNames(known, ids) {
  const [fetched, setFetched] = useState({});
  const asked = useRef(new Set());
  const key = [...new Set(ids.filter((id) => id && !known[id] && !asked.current.has(id)))].sort().join(',');
  useEffect(() => {
    if (!key) return;
    for (const id of key.split(',')) {
      asked.current.add(id);
      get(`stacks/${id}`).then(
        (s) => setFetched((f) => ({ ...f, [id]: s.name })),
        () => setFetched((f) => ({ ...f, [id]: null })),
      );
    }
  }, [key]);
  return (id) => known[id] ?? fetched[id] ?? short(id);
}

/** A 422 dependency_cycle's `details.cycle`, in order, as stack names: "db → app → db". */
function CycleLine({ cycle, nameOf }) {
  return html`<div data-testid="cycle">
    Cycle:${' '}
    <strong>${cycle.map((id, i) => html`${i ? ' → ' : ''}<a href=${link('stacks', id)}>${nameOf(id)}</a>`)}</strong>
  </div>`;
}

function AddDependency({ stackId, onAdded }) {
  const [search, setSearch] = useState('');
  const [on, setOn] = useState('');
  const [readyWhen, setReadyWhen] = useState('healthy');
  const [scope, setScope] = useState('agent');
  const [error, setError] = useState(null);
  const picker = useApi(withQuery('/ui/api/stacks', { q: search, limit: PICKER_LIMIT }));
  const stacks = picker.data?.stacks ?? [];
  const known = useMemo(() => Object.fromEntries(stacks.map((s) => [s.id, s.name])), [picker.data]);
  const nameOf = useStackNames(known, error?.details?.cycle ?? []);
  const candidates = stacks.filter((s) => s.id !== stackId);
  const add = async (ev) => {
    ev.preventDefault();
    setError(null);
    try {
      await post(`stacks/${stackId}/dependencies`, { stack_id: on, ready_when: readyWhen, scope });
      setOn('');
      onAdded();
    } catch (err) {
      setError(err);
    }
  };
  return html`<form class="toolbar" data-testid="add-dependency" onSubmit=${add}>
      <label>Waits for <input placeholder="filter stacks" value=${search} onInput=${(e) => setSearch(e.target.value)} /></label>
      <select data-testid="dependency-stack" value=${on} onChange=${(e) => setOn(e.target.value)} required>
        <option value="">choose a stack…</option>
        ${candidates.map((s) => html`<option key=${s.id} value=${s.id}>${s.name}</option>`)}
      </select>
      <label
        >to be
        <select data-testid="dependency-ready-when" value=${readyWhen} onChange=${(e) => setReadyWhen(e.target.value)}>
          <option value="healthy">healthy</option>
          <option value="applied">applied</option>
        </select></label
      >
      <label
        >on
        <select data-testid="dependency-scope" value=${scope} onChange=${(e) => setScope(e.target.value)}>
          <option value="agent">the same agent</option>
          <option value="fleet">every agent it targets</option>
        </select></label
      >
      <button class="primary" type="submit" data-testid="dependency-add" disabled=${!on}>Add dependency</button>
    </form>
    ${error && html`<${Refusal} error=${error}>${error.details?.cycle ? html`<${CycleLine} cycle=${error.details.cycle} nameOf=${nameOf} />` : ''}<//>`}`;
}

/** A dependency on one stack is removed by that stack's id, one by selector by its own id. */
const dependencyKey = (dep) => dep.stack_id ?? dep.id;

function WaitsFor({ dep, nameOf }) {
  if (dep.stack_id) return html`<a href=${link('stacks', dep.stack_id)}>${nameOf(dep.stack_id)}</a>`;
  return html`every stack of its owner labelled <code>${(dep.selector?.labels ?? []).join(', ')}</code>`;
}

function DependencyRow({ stackId, dep, nameOf, now, onRemoved }) {
  const [error, setError] = useState(null);
  const remove = async () => {
    setError(null);
    try {
      await del(`stacks/${stackId}/dependencies/${dependencyKey(dep)}`);
      onRemoved();
    } catch (err) {
      setError(err);
    }
  };
  return html`<tr data-dependency=${dependencyKey(dep)}>
    <td><${WaitsFor} dep=${dep} nameOf=${nameOf} /></td>
    <td>${dep.ready_when}</td>
    <td>${dep.scope === 'fleet' ? 'on every agent it targets' : 'on the same agent'}</td>
    <td>${creatorText(dep.created_by)} <span class="muted" title=${dep.created_at}>${ago(dep.created_at, now)}</span></td>
    <td>
      <button data-testid="dependency-remove" onClick=${remove}>Remove</button>
      ${error && html`<${Refusal} error=${error} />`}
    </td>
  </tr>`;
}

/**
 * The "Dependencies" section of a stack page: `deps` is the read of GET /stacks/{id}/dependencies
 * (its parent shares it with the per-agent view), `nameOf` names stacks by id.
 */
export function StackDependencies({ stackId, deps, nameOf }) {
  const now = useNow(10_000);
  return html`<section data-testid="dependencies">
    <h2>Dependencies</h2>
    <${Loaded} result=${deps}>
      ${(list) =>
        list.length === 0
          ? html`<p class="muted" data-testid="no-dependencies">This stack waits for no other stack.</p>`
          : html`<table data-testid="dependencies-table">
              <thead>
                <tr>
                  <th>Waits for</th>
                  <th>Ready when</th>
                  <th>Where</th>
                  <th>Added by</th>
                  <th></th>
                </tr>
              </thead>
              <tbody>
                ${list.map((d) => html`<${DependencyRow} key=${dependencyKey(d)} stackId=${stackId} dep=${d} nameOf=${nameOf} now=${now} onRemoved=${deps.reload} />`)}
              </tbody>
            </table>`}
    <//>
    ${session.identity?.agent ? '' : html`<${AddDependency} stackId=${stackId} onAdded=${deps.reload} />`}
  </section>`;
}
