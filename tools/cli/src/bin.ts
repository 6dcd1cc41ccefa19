#!/usr/bin/env node
import { CliError, EXIT, HubError } from './errors.ts';
import { buildProgram } from './program.ts';
import { writeErr } from './terminal.ts';

try {
  await buildProgram().parseAsync(process.argv);
} catch (err) {
  if (err instanceof CliError) {
    // Hub errors read `<code>: <message>`, exactly the hub's error body; the CLI's own start with `error:`.
    writeErr(err instanceof HubError ? `${err.message}\n` : `error: ${err.message}\n`);
    process.exitCode = err.exitCode;
  } else {
    writeErr(`brokkr: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = EXIT.failed;
  }
}
