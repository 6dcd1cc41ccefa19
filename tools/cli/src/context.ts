import type { Command } from 'commander';
import { configPath, resolveConnection } from './config.ts';
import { Hub } from './http.ts';
import { parseFormat, type Format } from './output.ts';
import { writeErr, writeOut } from './terminal.ts';

/** The program-wide options (`--url`, `--pak`, `-o`), accepted before or after the subcommand. */
interface GlobalOptions {
  url?: string;
  pak?: string;
  output?: string;
}

const globals = (cmd: Command): GlobalOptions => cmd.optsWithGlobals<GlobalOptions>();

/**
 * A PAK on the command line is readable by every user of the machine while the command runs (ps,
 * /proc/<pid>/cmdline) and stays in the shell's history: it still works, with a warning on stderr.
 */
const warnPakFlag = () =>
  writeErr(
    `warning: --pak shows the PAK to other users of this machine (ps) and leaves it in your shell history; ` +
      `set BROKKR_PAK or put "pak: …" in ${configPath().path} instead\n`,
  );

export function hubFor(cmd: Command): Hub {
  const { url, pak } = globals(cmd);
  const connection = resolveConnection({ url, pak });
  if (connection.sources.pak === '--pak') warnPakFlag();
  return new Hub(connection);
}

export function formatFor(cmd: Command): Format {
  return parseFormat(globals(cmd).output);
}

/** Human output goes to stdout; with -o json|yaml stdout carries only the document, so progress goes to stderr. */
export function sayFor(format: Format): (line: string) => void {
  const write = format === 'table' ? writeOut : writeErr;
  return (line) => write(`${line}\n`);
}

export const print = (text: string): void => writeOut(text);
