import { ago, short, time } from '../lib/format.js';
import { html } from '../lib/html.js';
import { prefixes } from '../lib/live.js';
import { link } from '../lib/router.js';
import { Loaded } from '../lib/ui.js';
import { useApi, useNow } from '../lib/use-api.js';

// Template changes announce no domain event; an admin sees their audit entries.
const LIVE = prefixes('audit');
const RENDERED_LIVE = prefixes('deployment.created');
const owner = (t) => (t.generator_id ? short(t.generator_id) : 'system');
const key = (t) => `${t.generator_id ?? ''}/${t.name}`;

/** Newest version per (owner, name), with how many versions it has. */
function latestVersions(all) {
  const byKey = new Map();
  for (const t of all) {
    const seen = byKey.get(key(t));
    byKey.set(key(t), { latest: !seen || t.version > seen.latest.version ? t : seen.latest, versions: (seen?.versions ?? 0) + 1 });
  }
  return [...byKey.values()].sort((a, b) => a.latest.name.localeCompare(b.latest.name));
}

/** The templates this PAK may read (system templates and a generator's own), one row per template. */
export function TemplatesPage() {
  const result = useApi('templates', { live: LIVE });
  const now = useNow(10_000);
  return html`<h1>Templates</h1>
    <${Loaded} result=${result}>
      ${(all) =>
        all.length === 0
          ? html`<p class="muted">No templates.</p>`
          : html`<table data-testid="templates-table">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Owner</th>
                  <th class="num">Latest version</th>
                  <th class="num">Versions</th>
                  <th>Description</th>
                  <th>Updated</th>
                </tr>
              </thead>
              <tbody>
                ${latestVersions(all).map(
                  ({ latest: t, versions }) =>
                    html`<tr key=${t.id}>
                      <td><a href=${link('templates', t.id)}>${t.name}</a></td>
                      <td class="mono">${owner(t)}</td>
                      <td class="num">${t.version}</td>
                      <td class="num">${versions}</td>
                      <td>${t.description ?? ''}</td>
                      <td title=${t.created_at}>${ago(t.created_at, now)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`}
    <//>`;
}

function prettySchema(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** One template version: its versions, parameter schema, content, and the stacks rendered from it. */
export function TemplatePage({ id }) {
  const result = useApi(`templates/${id}`);
  const all = useApi('templates');
  const stacks = useApi(`/ui/api/templates/${id}/stacks`, { live: RENDERED_LIVE });
  const now = useNow(10_000);
  return html`<p><a href=${link('templates')}>← Templates</a></p>
    <${Loaded} result=${result}>
      ${(t) => html`
        <h1>Template ${t.name} <span class="muted">v${t.version}</span></h1>
        <dl class="facts">
          <dt>Id</dt>
          <dd class="mono">${t.id}</dd>
          <dt>Owner</dt>
          <dd class="mono">${t.generator_id ?? 'system (admin)'}</dd>
          <dt>Description</dt>
          <dd>${t.description ?? '—'}</dd>
          <dt>Checksum</dt>
          <dd class="mono">${t.checksum}</dd>
        </dl>
        <h2>Versions</h2>
        <${Loaded} result=${all}>
          ${(list) =>
            html`<ul data-testid="template-versions">
              ${list
                .filter((v) => key(v) === key(t))
                .sort((a, b) => b.version - a.version)
                .map(
                  (v) =>
                    html`<li key=${v.id}>
                      ${v.id === t.id ? html`<strong>v${v.version}</strong>` : html`<a href=${link('templates', v.id)}>v${v.version}</a>`}
                      <span class="muted">${time(v.created_at)}</span>
                    </li>`,
                )}
            </ul>`}
        <//>
        <h2>Stacks rendered from it</h2>
        <${Loaded} result=${stacks}>
          ${({ stacks: rendered }) =>
            rendered.length === 0
              ? html`<p class="muted">No stack was rendered from this template yet.</p>`
              : html`<table data-testid="template-stacks">
                  <thead>
                    <tr>
                      <th>Stack</th>
                      <th class="num">Version</th>
                      <th>Object</th>
                      <th>Rendered</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${rendered.map(
                      (s) =>
                        html`<tr key=${s.stack_id}>
                          <td><a href=${link('stacks', s.stack_id)}>${s.stack_name}</a></td>
                          <td class="num">v${s.template_version}</td>
                          <td>
                            <a class="mono" href=${link('deployment-objects', s.deployment_object_id)}
                              >#${s.sequence_id} ${short(s.deployment_object_id)}</a
                            >
                          </td>
                          <td>${ago(s.rendered_at, now)}</td>
                        </tr>`,
                    )}
                  </tbody>
                </table>`}
        <//>
        <h2>Parameters schema</h2>
        <pre class="yaml" data-testid="template-schema">${prettySchema(t.parameters_schema)}</pre>
        <h2>Template</h2>
        <pre class="yaml">${t.template_content}</pre>
      `}
    <//>`;
}
