/**
 * Prints the environment-variable table of docs/configuration.md from the services' zod schemas, so
 * the documentation cannot drift from what the services accept. `--write` updates the file between
 * the `<!-- env:begin -->` / `<!-- env:end -->` markers; test/readme.unit.test.ts fails when it is stale.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import {
  agentConfigSchema,
  apiConfigSchema,
  auditWriterConfigSchema,
  maintenanceConfigSchema,
  rendererConfigSchema,
  webhookDispatcherConfigSchema,
} from '@brokkr/config';

const SERVICES: [string, z.ZodObject][] = [
  ['api', apiConfigSchema],
  ['webhook-dispatcher', webhookDispatcherConfigSchema],
  ['maintenance', maintenanceConfigSchema],
  ['audit-writer', auditWriterConfigSchema],
  ['renderer', rendererConfigSchema],
  ['agent', agentConfigSchema],
];

interface Row {
  services: string[];
  defaults: Set<string>;
  required: boolean;
}

function describeDefault(value: unknown): string {
  if (value === undefined) return '';
  if (value === '') return '`""`';
  return `\`${String(value)}\``;
}

export function envTable(): string {
  const rows = new Map<string, Row>();
  for (const [service, schema] of SERVICES) {
    const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as {
      properties?: Record<string, { default?: unknown }>;
      required?: string[];
    };
    for (const [name, prop] of Object.entries(json.properties ?? {})) {
      const row = rows.get(name) ?? { services: [], defaults: new Set<string>(), required: false };
      row.services.push(service);
      const d = describeDefault(prop.default);
      if (d) row.defaults.add(d);
      if (json.required?.includes(name) && prop.default === undefined) row.required = true;
      rows.set(name, row);
    }
  }
  const lines = ['| Variable | Default | Used by |', '|---|---|---|'];
  for (const [name, row] of [...rows.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const fallback = row.required ? '**required**' : [...row.defaults].join(' / ') || '(unset)';
    lines.push(`| \`${name}\` | ${fallback} | ${row.services.join(', ')} |`);
  }
  return lines.join('\n');
}

const BEGIN = '<!-- env:begin -->';
const END = '<!-- env:end -->';

/** Where the table lives. */
export const ENV_TABLE_FILE = path.resolve(import.meta.dirname, '..', 'docs', 'configuration.md');

export function withEnvTable(readme: string): string {
  const start = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error('docs/configuration.md lacks the env table markers');
  return `${readme.slice(0, start + BEGIN.length)}\n${envTable()}\n${readme.slice(end)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv.includes('--write')) {
    fs.writeFileSync(ENV_TABLE_FILE, withEnvTable(fs.readFileSync(ENV_TABLE_FILE, 'utf8')));
  } else {
    process.stdout.write(`${envTable()}\n`);
  }
}
