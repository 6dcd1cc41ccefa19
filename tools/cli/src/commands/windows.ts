import type { Command } from 'commander';
import { formatFor, hubFor, print, sayFor } from '../context.ts';
import { CliError } from '../errors.ts';
import { render, renderTable, type Column } from '../output.ts';
import type { MaintenanceWindow } from '../types.ts';

interface CreateOptions {
  type: string;
  rrule: string;
  duration: string;
  agentLabel: string[];
  stack: string[];
  generator: string[];
  gate: string[];
}

const collect = (value: string, previous: string[]) => [...previous, value];

const columns: Column<MaintenanceWindow>[] = [
  { header: 'NAME', value: (w) => w.name },
  { header: 'TYPE', value: (w) => w.type },
  { header: 'DURATION', value: (w) => `${w.duration_seconds}s` },
  { header: 'AGENTS', value: (w) => (w.agent_labels.length ? w.agent_labels.join(',') : 'all') },
  { header: 'GATES', value: (w) => w.gates.join(',') },
  {
    header: 'BYPASSED-UNTIL',
    value: (w) =>
      w.bypasses
        .map((b) => b.expires_at)
        .sort()
        .at(-1),
  },
  { header: 'ID', value: (w) => w.id },
];

/** A window by id, or by name when exactly one has it (the list is the caller's own windows). */
async function findWindow(hub: ReturnType<typeof hubFor>, ref: string): Promise<MaintenanceWindow> {
  const windows = await hub.get<MaintenanceWindow[]>('/maintenance-windows');
  const found = windows.filter((w) => w.id === ref.toLowerCase() || w.name === ref);
  if (found.length !== 1)
    throw new CliError(found.length ? `${found.length} windows are named "${ref}": use the id` : `no window "${ref}"`);
  return found[0]!;
}

/** A seconds count stays a number; anything else goes as the ISO 8601 duration it should be. */
const durationOf = (raw: string): number | string => (/^\d+$/.test(raw) ? Number(raw) : raw);

export function registerWindows(program: Command): void {
  const windows = program
    .command('windows')
    .description('Maintenance windows: when the selected clusters may change (docs/maintenance-windows.md)');

  windows
    .command('list')
    .description('List maintenance windows (a generator PAK: its own), with their bypasses in force')
    .action(async (_options: unknown, cmd: Command) => {
      const format = formatFor(cmd);
      const list = await hubFor(cmd).get<MaintenanceWindow[]>('/maintenance-windows');
      print(render(list, format, () => renderTable(list, columns)));
    });

  windows
    .command('create <name>')
    .description('Create a maintenance window')
    .requiredOption('--type <allow|deny>', 'allow: changes only while open; deny: no changes while open')
    .requiredOption(
      '--rrule <rule>',
      'RFC 5545: "DTSTART;TZID=Europe/Berlin:20260103T020000\\nRRULE:FREQ=WEEKLY;BYDAY=SA" (\\n or a newline between the lines)',
    )
    .requiredOption('--duration <d>', 'how long each occurrence is open: seconds or ISO 8601 (PT2H)')
    .option('--agent-label <label>', 'select agents carrying this label; repeatable (none: every agent)', collect, [])
    .option('--stack <id>', 'only this stack; repeatable', collect, [])
    .option('--generator <id>', "only this generator's stacks; repeatable", collect, [])
    .option('--gate <gate>', 'new_versions, drift_correction, prune or work_orders; repeatable (default: all)', collect, [])
    .action(async (name: string, options: CreateOptions, cmd: Command) => {
      const format = formatFor(cmd);
      const created = await hubFor(cmd).post<MaintenanceWindow>('/maintenance-windows', {
        name,
        type: options.type,
        rrule: options.rrule.replaceAll('\\n', '\n'),
        duration: durationOf(options.duration),
        agent_labels: options.agentLabel,
        stack_ids: options.stack,
        generator_ids: options.generator,
        ...(options.gate.length ? { gates: options.gate } : {}),
      });
      sayFor(format)(`maintenance window "${created.name}" created (${created.id})`);
      print(render(created, format, () => renderTable([created], columns)));
    });

  windows
    .command('delete <name-or-id>')
    .description('Delete a maintenance window and its bypasses')
    .action(async (ref: string, _options: unknown, cmd: Command) => {
      const hub = hubFor(cmd);
      const window = await findWindow(hub, ref);
      await hub.request('DELETE', `/maintenance-windows/${window.id}`);
      sayFor(formatFor(cmd))(`maintenance window "${window.name}" deleted`);
    });
}
