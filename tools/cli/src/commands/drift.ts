import fs from 'node:fs';
import type { Command } from 'commander';
import { parse } from 'yaml';
import { formatFor, hubFor, print, sayFor } from '../context.ts';
import { CliError } from '../errors.ts';
import type { Hub } from '../http.ts';
import { age, render, renderTable, short, truncate } from '../output.ts';
import { findAgent, findStack } from '../resolve.ts';
import type { DriftGroups, DriftPage, DriftRecord } from '../types.ts';

const GROUPINGS = ['field', 'manager', 'agent', 'stack', 'kind', 'stack_agent'] as const;

interface ListOptions {
  stack?: string;
  agent?: string;
  state?: string;
  since?: string;
  path?: string;
  manager?: string;
  groupBy?: string;
  limit?: string;
}

/** One table row per drifted field (a deleted object is one row). */
interface FieldRow {
  record: DriftRecord;
  path: string;
  values: string;
  manager: string | null;
}

const valueText = (v: unknown): string => (v === null || v === undefined ? '∅' : typeof v === 'string' ? v : JSON.stringify(v));

function rowsOf(records: readonly DriftRecord[]): FieldRow[] {
  return records.flatMap((record) =>
    record.missing || record.fields.length === 0
      ? [{ record, path: '(object deleted)', values: '-', manager: null }]
      : record.fields.map((f) => ({
          record,
          path: f.path,
          values: f.withheld ? '(withheld)' : `${truncate(valueText(f.desired), 30) ?? '∅'} → ${truncate(valueText(f.live), 30) ?? '∅'}`,
          manager: f.manager,
        })),
  );
}

const objectName = (r: DriftRecord) => `${r.object.kind} ${r.object.namespace ? `${r.object.namespace}/` : ''}${r.object.name}`;

export function renderDrift(records: readonly DriftRecord[], now = Date.now()): string {
  if (!records.length) return 'no drift\n';
  return renderTable(rowsOf(records), [
    { header: 'ID', value: (r) => short(r.record.id) },
    { header: 'STATE', value: (r) => r.record.state },
    { header: 'STACK', value: (r) => r.record.stack_name },
    { header: 'AGENT', value: (r) => r.record.agent_name },
    { header: 'OBJECT', value: (r) => objectName(r.record) },
    { header: 'FIELD', value: (r) => r.path },
    { header: 'DESIRED → LIVE', value: (r) => r.values },
    { header: 'MANAGER', value: (r) => r.manager },
    { header: 'SEEN', value: (r) => `${age(r.record.last_seen, now)} ago` },
  ]);
}

export function renderGroups(g: DriftGroups): string {
  const header = `${g.records} record(s) on ${g.agents} of ${g.agents_total} cluster(s), by ${g.by}\n`;
  return (
    header +
    renderTable(g.groups, [
      { header: g.by.toUpperCase(), value: (x) => (x.label ? `${x.label}` : x.key === '' ? '(whole object)' : x.key) },
      { header: 'RECORDS', value: (x) => x.records },
      { header: 'CLUSTERS', value: (x) => `${x.agents} of ${g.agents_total}` },
      { header: 'STACKS', value: (x) => x.stacks },
      { header: 'BY', value: (x) => x.managers.map((m) => `${m.manager ?? '?'} (${m.records})`).join(', ') },
    ])
  );
}

async function filtersOf(hub: Hub, o: ListOptions): Promise<Record<string, string | undefined>> {
  return {
    stack_id: o.stack ? (await findStack(hub, o.stack)).id : undefined,
    agent_id: o.agent ? (await findAgent(hub, o.agent)).id : undefined,
    state: o.state,
    since: o.since,
    path: o.path,
    manager: o.manager,
  };
}

/** Every record matching (the hub pages them; there is no cap), or the first `limit`. */
async function allRecords(hub: Hub, filters: Record<string, string | undefined>, limit: number | undefined): Promise<DriftRecord[]> {
  const records: DriftRecord[] = [];
  let cursor: string | null = null;
  do {
    const page: DriftPage = await hub.get<DriftPage>('/drift', { ...filters, limit: '1000', ...(cursor ? { cursor } : {}) });
    records.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor && (limit === undefined || records.length < limit));
  return limit === undefined ? records : records.slice(0, limit);
}

function positive(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new CliError(`--limit must be a positive whole number, not "${raw}"`);
  return n;
}

/** A policy file: YAML or JSON, validated by the hub (422 with the reason). */
function readPolicy(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    return parse(text) as unknown;
  } catch (err) {
    throw new CliError(`${file} is not YAML: ${(err as Error).message.split('\n')[0]}`);
  }
}

function registerPolicy(drift: Command): void {
  const policy = drift.command('policy').description("A stack's drift policy: set, get, delete (docs/drift.md)");
  policy
    .command('set <stack>')
    .description('Set the policy from a YAML/JSON file ({mode, comparison, ignore, overrides}); the stack’s agents follow it at once')
    .requiredOption('-f, --file <path>', 'the policy file')
    .action(async (ref: string, options: { file: string }, cmd: Command) => {
      const hub = hubFor(cmd);
      const stack = await findStack(hub, ref);
      const stored = await hub.put<{ policy: { mode: string; comparison: string; ignore: unknown[] } }>(
        `/stacks/${stack.id}/drift-policy`,
        readPolicy(options.file),
      );
      const { mode, comparison, ignore } = stored.policy;
      sayFor(formatFor(cmd))(`stack "${stack.name}": drift policy set (${mode}, ${comparison} fields, ${ignore.length} ignore rule(s))`);
      print(render(stored, formatFor(cmd), () => ''));
    });
  policy
    .command('get <stack>')
    .description("Show the stack's drift policy")
    .action(async (ref: string, _options: unknown, cmd: Command) => {
      const hub = hubFor(cmd);
      const stack = await findStack(hub, ref);
      const stored = await hub.get(`/stacks/${stack.id}/drift-policy`);
      print(render(stored, formatFor(cmd) === 'table' ? 'yaml' : formatFor(cmd), () => ''));
    });
  policy
    .command('delete <stack>')
    .description('Remove the policy: back to the default (correct, owned fields, nothing ignored)')
    .action(async (ref: string, _options: unknown, cmd: Command) => {
      const hub = hubFor(cmd);
      const stack = await findStack(hub, ref);
      await hub.request('DELETE', `/stacks/${stack.id}/drift-policy`);
      sayFor(formatFor(cmd))(`stack "${stack.name}": drift policy deleted`);
    });
}

export function registerDrift(program: Command): void {
  const drift = program
    .command('drift')
    .description('Changes made behind the agents’ backs, per object and field, with who made them (docs/drift.md)')
    .option('--stack <stack>', 'one stack (name or id)')
    .option('--agent <agent>', 'one agent (name or id)')
    .option('--state <states>', 'comma-separated: open, corrected, resolved, accepted (default: all)')
    .option('--since <time>', 'seen at or after this RFC 3339 time')
    .option('--path <pointer>', 'only records with drift at this JSON pointer, e.g. /spec/replicas')
    .option('--manager <name>', 'only records with a field owned by this field manager')
    .option('--group-by <what>', `count instead of list: ${GROUPINGS.join(', ')}`)
    .option('--limit <n>', 'at most this many records (default: every one)')
    .action(async (options: ListOptions, cmd: Command) => {
      const hub = hubFor(cmd);
      const format = formatFor(cmd);
      const filters = await filtersOf(hub, options);
      if (options.groupBy !== undefined) {
        if (!(GROUPINGS as readonly string[]).includes(options.groupBy))
          throw new CliError(`--group-by must be one of ${GROUPINGS.join(', ')}, not "${options.groupBy}"`);
        const groups = await hub.get<DriftGroups>('/drift/groups', { ...filters, by: options.groupBy });
        print(render(groups, format, () => renderGroups(groups)));
        return;
      }
      const records = await allRecords(hub, filters, positive(options.limit));
      print(render(records, format, () => renderDrift(records)));
    });
  drift
    .command('accept <record>')
    .description(
      'Accept an open drift: the stack ignores it from now on (an ignore rule in its policy), or, with --override, keeps its live values on that cluster (an override layer)',
    )
    .option('--object', 'ignore the whole object, not only the drifted fields')
    .option('--override', "keep the live values: an override layer for the record's agent that sets each drifted path to its live value")
    .option('--note <text>', 'why (kept with the rule, or in the audit log)')
    .action(async (id: string, options: { object?: boolean; override?: boolean; note?: string }, cmd: Command) => {
      const hub = hubFor(cmd);
      const scope = options.override ? 'override' : options.object ? 'object' : 'fields';
      const body = { scope, ...(options.note ? { note: options.note } : {}) };
      const answer = await hub.post<{ stack_id: string; rules?: number; override?: string }>(`/drift/${id}/accept`, body);
      sayFor(formatFor(cmd))(
        answer.override
          ? `drift ${short(id)} accepted: stack ${short(answer.stack_id)} keeps the live values in override layer ${answer.override}`
          : `drift ${short(id)} accepted: stack ${short(answer.stack_id)} now has ${answer.rules} ignore rule(s)`,
      );
      print(render(answer, formatFor(cmd), () => ''));
    });
  registerPolicy(drift);
}
