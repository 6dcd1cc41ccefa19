import type { Command } from 'commander';
import { resolveConnection } from './config.ts';
import { Hub } from './http.ts';
import { parseFormat, type Format } from './output.ts';

/** The program-wide options (`--url`, `--pak`, `-o`), accepted before or after the subcommand. */
interface GlobalOptions {
  url?: string;
  pak?: string;
  output?: string;
}

const globals = (cmd: Command): GlobalOptions => cmd.optsWithGlobals<GlobalOptions>();

export function hubFor(cmd: Command): Hub {
  const { url, pak } = globals(cmd);
  return new Hub(resolveConnection({ url, pak }));
}

export function formatFor(cmd: Command): Format {
  return parseFormat(globals(cmd).output);
}

/** Human output goes to stdout; with -o json|yaml stdout carries only the document, so progress goes to stderr. */
export function sayFor(format: Format): (line: string) => void {
  const stream = format === 'table' ? process.stdout : process.stderr;
  return (line) => void stream.write(`${line}\n`);
}

export const print = (text: string): void => void process.stdout.write(text);
