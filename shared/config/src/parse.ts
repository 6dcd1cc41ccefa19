import { z } from 'zod';
import { ConfigError } from '@brokkr/errors';

/**
 * Parses the environment against a service's schema. Every problem is collected so that one
 * start attempt tells the operator about every missing or invalid variable at once.
 */
export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.output<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => {
    const name = issue.path.join('.') || '(environment)';
    return `${name}: ${issue.message}`;
  });
  throw new ConfigError(`invalid configuration:\n  - ${issues.join('\n  - ')}`, issues);
}
