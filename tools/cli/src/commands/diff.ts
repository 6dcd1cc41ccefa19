import type { Command } from 'commander';
import { formatFor, hubFor, print, sayFor } from '../context.ts';
import { CliError, EXIT } from '../errors.ts';
import type { Hub } from '../http.ts';
import { render } from '../output.ts';
import { findStackOrUndefined } from '../resolve.ts';
import type { AuthPayload } from '../types.ts';
import { agentLabel, renderPreview, verdictLine, type Preview } from './diff-render.ts';
import { readManifests } from './manifests.ts';
import { parseDuration } from './wait.ts';

/** `brokkr diff` exit codes: 0 no change anywhere, 3 changes (no errors), 1 an error, 2 timed out. */
export const DIFF_EXIT = { clean: EXIT.ok, changes: 3, error: EXIT.failed, timeout: EXIT.timeout } as const;

interface DiffOptions {
  file: string;
  stack?: string;
  timeout: string;
  interval: string;
}

export function registerDiff(program: Command): void {
  program
    .command('diff')
    .summary('Show what applying a directory of YAML would do on every cluster, changing nothing')
    .description(
      'Sends the same YAML `apply` would send to the stack as a preview: every ACTIVE agent the stack targets runs a ' +
        'server-side dry-run apply against its cluster and reports per object created/changed/unchanged/pruned, the ' +
        'changed fields, and any admission or schema error. Nothing is published and nothing changes in any cluster.',
    )
    .addHelpText(
      'after',
      '\nOutput per agent: + created, ~ changed (with the changed fields), - pruned, ! error; unchanged objects are only counted.\n' +
        'Exit codes: 0 no changes anywhere, 3 changes (and no errors), 1 an agent reported an error (or any error),\n' +
        '  2 timed out before every agent reported.',
    )
    .requiredOption('-f, --file <path>', 'a directory (its *.yaml / *.yml files, sorted by name) or one YAML file')
    .option('--stack <name|id>', 'the stack (default: as apply picks it — .brokkr.yaml, the directory or file name)')
    .option('--timeout <duration>', 'how long to wait for every agent (e.g. 90s, 5m)', '2m')
    .option('--interval <duration>', 'how often to ask the hub', '1s')
    .action(async (options: DiffOptions, cmd: Command) => {
      process.exitCode = await diff(cmd, options);
    });
}

function exitCodeOf(preview: Preview): number {
  const c = preview.counts;
  if (c.error > 0 || c.expired > 0) return DIFF_EXIT.error;
  if (c.pending > 0) return DIFF_EXIT.timeout;
  return c.changes > 0 ? DIFF_EXIT.changes : DIFF_EXIT.clean;
}

async function diff(cmd: Command, options: DiffOptions): Promise<number> {
  const format = formatFor(cmd);
  const say = sayFor(format);
  const timeoutMs = parseDuration(options.timeout);
  const intervalMs = parseDuration(options.interval);
  const manifests = readManifests(options.file);
  const hub = hubFor(cmd);
  const me = await hub.post<AuthPayload>('/auth/pak');
  if (me.agent) throw new CliError('an agent PAK cannot preview stacks: use a generator or admin PAK');
  const ref = options.stack ?? manifests.settings.stack ?? manifests.defaultStackName;
  const stack = await findStackOrUndefined(hub, ref);
  if (!stack) throw new CliError(`stack "${ref}" not found: nothing to compare with (brokkr apply creates it)`);

  const created = await hub.request<Preview>('POST', `/stacks/${stack.id}/previews`, {
    raw: { body: manifests.content, contentType: 'application/yaml' },
  });
  if (created.counts.agents === 0) {
    say(`no ACTIVE agent targets stack "${stack.name}": no cluster to compare with`);
    print(render(created, format, () => ''));
    return DIFF_EXIT.clean;
  }
  say(`preview ${created.id} of stack "${stack.name}" (${manifests.files.length} file(s)): asking ${created.counts.agents} agent(s)…`);
  const preview = await follow(hub, created, { timeoutMs, intervalMs, say });
  if (preview.status === 'pending') say(`timed out after ${options.timeout}: ${preview.counts.pending} agent(s) did not report`);
  print(render(preview, format, () => renderPreview(preview)));
  return exitCodeOf(preview);
}

/** Polls the preview until every agent reported (or it expired) or the timeout passed; a progress line per report. */
async function follow(
  hub: Hub,
  preview: Preview,
  o: { timeoutMs: number; intervalMs: number; say: (line: string) => void },
): Promise<Preview> {
  const started = Date.now();
  const reported = new Set<string>();
  let current = preview;
  for (;;) {
    const elapsed = `${Math.round((Date.now() - started) / 1000)}s`;
    for (const a of current.agents) {
      if (a.status === 'pending' || reported.has(a.agent_id)) continue;
      reported.add(a.agent_id);
      o.say(`[${elapsed}] ${verdictLine(a)}`);
    }
    if (current.status === 'completed' || Date.now() - started >= o.timeoutMs) {
      for (const a of current.agents.filter((x) => x.status === 'pending')) o.say(`[${elapsed}] ${agentLabel(a)}: no answer yet`);
      return current;
    }
    await new Promise((r) => setTimeout(r, o.intervalMs));
    current = await hub.get<Preview>(`/previews/${preview.id}`);
  }
}
