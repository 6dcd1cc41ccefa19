import { createRequire } from 'node:module';
import { Command, Option } from 'commander';
import { registerAgents } from './commands/agents.ts';
import { registerApply } from './commands/apply.ts';
import { registerDependencies } from './commands/dependencies.ts';
import { registerDescribe } from './commands/describe.ts';
import { registerDiff } from './commands/diff.ts';
import { registerDrift } from './commands/drift.ts';
import { registerGet } from './commands/get.ts';
import { registerOverrides } from './commands/overrides.ts';
import { registerPaks } from './commands/paks.ts';
import { registerRollout } from './commands/rollout.ts';
import { registerSign } from './commands/sign.ts';
import { registerInstantiate } from './commands/instantiate.ts';
import { registerTrust } from './commands/trust.ts';
import { registerStacks } from './commands/stacks.ts';
import { registerWindows } from './commands/windows.ts';
import { configPath } from './config.ts';
import { FORMATS } from './output.ts';
import { writeErr, writeOut } from './terminal.ts';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

const HELP_FOOTER = `
Connection (first found wins): --url/--pak, then BROKKR_URL/BROKKR_PAK, then the config file
  ${configPath().path} (or the file named by BROKKR_CONFIG), a YAML mapping:
    url: http://127.0.0.1:3000
    pak: brokkr_…

Exit codes: 0 success (apply --wait: every agent applied, or the rollout succeeded; diff: no changes),
  1 error, an agent reported a failure or the rollout was rolled back, 2 apply --wait / diff timed out,
  3 diff: changes (and no errors).
  Hub errors print as "<code>: <message>".`;

/** The whole command tree; bin.ts runs it. */
export function buildProgram(): Command {
  const program = new Command('brokkr')
    .description('Command-line client for a Brokkr hub: apply stacks, follow rollouts, inspect the fleet')
    .version(version)
    .option('--url <url>', 'hub URL, e.g. http://127.0.0.1:3000 (…/api/v1 is accepted too)')
    .option('--pak <pak>', 'PAK to authenticate with (warns: other users see it in ps; use BROKKR_PAK or the config file)')
    .addOption(new Option('-o, --output <format>', 'output format').choices([...FORMATS]).default('table'))
    .showHelpAfterError()
    // Commander's help and errors echo what was typed (e.g. a pasted name): out through terminal.ts too.
    .configureOutput({ writeOut, writeErr })
    .addHelpText('after', HELP_FOOTER);
  registerApply(program);
  registerDiff(program);
  registerDrift(program);
  registerOverrides(program);
  registerDependencies(program);
  registerGet(program);
  registerDescribe(program);
  registerAgents(program);
  registerPaks(program);
  registerRollout(program);
  registerStacks(program);
  registerSign(program);
  registerInstantiate(program);
  registerTrust(program);
  registerWindows(program);
  return program;
}
