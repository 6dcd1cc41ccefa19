import { generatePak } from '@brokkr/pak';
import type { Command } from 'commander';
import { formatFor, hubFor, print } from '../context.ts';
import { render, renderFields } from '../output.ts';
import type { RotateAdminPakResponse } from '../types.ts';

export function registerPaks(program: Command): void {
  program
    .command('generate-pak')
    .description('Mint a PAK and its hash locally, offline, exactly as the hub does (e.g. for BROKKR__BROKER__PAK_HASH on a fresh hub)')
    .action((_options: unknown, cmd: Command) => {
      const minted = generatePak();
      print(
        render(minted, formatFor(cmd), () =>
          renderFields([
            ['PAK', minted.pak],
            ['Hash', minted.hash],
          ]),
        ),
      );
    });

  const admin = program.command('admin').description('Hub administration (admin PAK)');
  admin
    .command('rotate-pak')
    .description('Replace the admin PAK (POST /api/v1/admin/rotate-pak); the old one stops working on every replica at once')
    .action(async (_options: unknown, cmd: Command) => {
      const hub = hubFor(cmd);
      const rotated = await hub.post<RotateAdminPakResponse>('/admin/rotate-pak', { current_pak: hub.pak });
      print(
        render(
          rotated,
          formatFor(cmd),
          () =>
            renderFields([['New admin PAK', rotated.pak]]) +
            'Shown only now. The old admin PAK no longer works: update BROKKR_PAK or your config file.\n',
        ),
      );
    });
}
