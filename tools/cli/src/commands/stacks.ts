import type { Command } from 'commander';
import { formatFor, hubFor, print, sayFor } from '../context.ts';
import { CliError } from '../errors.ts';
import { render } from '../output.ts';
import { findStack } from '../resolve.ts';
import type { StackExpiry } from '../types.ts';
import { parseDuration } from './wait.ts';

interface ExpireOptions {
  in?: string;
  at?: string;
  never?: boolean;
}

/** The body of PUT /stacks/{id}/expiry, or null for DELETE (keep the stack). */
function expiryBody(options: ExpireOptions): { ttl_seconds: number } | { expires_at: string } | null {
  const given = [options.in, options.at, options.never].filter((o) => o !== undefined);
  if (given.length !== 1) throw new CliError('give exactly one of --in <duration>, --at <time> or --never');
  if (options.never) return null;
  if (options.at !== undefined) return { expires_at: options.at };
  const seconds = Math.round(parseDuration(options.in!) / 1000);
  if (seconds < 1) throw new CliError(`--in ${options.in}: the expiry must be at least 1s away`);
  return { ttl_seconds: seconds };
}

export function registerStacks(program: Command): void {
  const stacks = program.command('stacks').description('Manage stacks');
  stacks
    .command('expire <stack>')
    .description(
      'Set, move or clear the instant the hub deletes the stack (its resources are pruned from every cluster); ' +
        '`stack.expiring` is announced ahead of it',
    )
    .option('--in <duration>', 'from now, e.g. 90m, 2h')
    .option('--at <time>', 'an RFC 3339 instant, e.g. 2026-12-01T18:00:00Z')
    .option('--never', 'clear the expiry: the stack stays until deleted')
    .action(async (ref: string, options: ExpireOptions, cmd: Command) => {
      const format = formatFor(cmd);
      const body = expiryBody(options);
      const hub = hubFor(cmd);
      const stack = await findStack(hub, ref);
      const expiry = body
        ? await hub.put<StackExpiry>(`/stacks/${stack.id}/expiry`, body)
        : await hub.request<StackExpiry>('DELETE', `/stacks/${stack.id}/expiry`);
      sayFor(format)(
        expiry.expires_at ? `stack "${stack.name}" expires at ${expiry.expires_at}` : `stack "${stack.name}" no longer expires`,
      );
      print(render(expiry, format, () => ''));
    });
}
