import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The api's src/, for the tests that read its source (layers, the error catalogue). */
export const apiSrc = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../src');

/** Every .ts file below `dir`, as full paths. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}
