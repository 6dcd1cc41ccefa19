// `npm run migrate`: applies every pending migration in migrations/ to BROKKR__DATABASE__URL
// (into BROKKR__DATABASE__SCHEMA when set). Safe to run concurrently: knex holds a lock table.
import { z } from 'zod';
import { fields, parseEnv } from '@brokkr/config';
import { migrateLatest } from '@brokkr/db';

const migrateEnv = z.object({
  BROKKR__DATABASE__URL: fields.database.BROKKR__DATABASE__URL,
  BROKKR__DATABASE__SCHEMA: fields.database.BROKKR__DATABASE__SCHEMA,
});

/** Never print the password of the database URL. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable url)';
  }
}

async function main(): Promise<void> {
  const env = parseEnv(migrateEnv, process.env);
  const url = env.BROKKR__DATABASE__URL;
  const schema = env.BROKKR__DATABASE__SCHEMA;
  const target = `${redact(url)}${schema ? ` (schema ${schema})` : ''}`;
  const applied = await migrateLatest({ url, schema });
  if (applied.length === 0) {
    console.log(`migrate: ${target} is already up to date`);
    return;
  }
  console.log(`migrate: applied ${applied.length} migration(s) to ${target}:`);
  for (const name of applied) console.log(`  - ${name}`);
}

main().catch((err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  console.error(`migrate: failed: ${message}`);
  process.exitCode = 1;
});
