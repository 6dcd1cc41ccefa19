import type { Command } from 'commander';
import { formatFor, hubFor, print } from '../context.ts';
import { render, renderTable } from '../output.ts';
import { KIND_HELP, kindNamed, type GetFilters } from './resources.ts';

export function registerGet(program: Command): void {
  program
    .command('get')
    .description(`List ${KIND_HELP}, or show one by name or id`)
    .argument('<resource>', KIND_HELP)
    .argument('[name-or-id]', 'one item (agents and stacks by name or id; the others by id)')
    .option('--stack <name|id>', 'deployment objects, previews, rollouts: the stack whose items to list')
    .option('--status <status>', 'work orders: only this status (e.g. PENDING, CLAIMED); rollouts: e.g. progressing,rolled_back')
    .option('--work-type <type>', 'work orders: only this work type')
    .action(async (resource: string, ref: string | undefined, filters: GetFilters, cmd: Command) => {
      const kind = kindNamed(resource);
      const format = formatFor(cmd);
      const hub = hubFor(cmd);
      const items = ref ? [await kind.one(hub, ref)] : await kind.list(hub, filters);
      const data = ref ? items[0] : items;
      print(render(data, format, () => (items.length === 0 ? `No ${kind.names[0]} found.\n` : renderTable(items, kind.columns))));
    });
}
