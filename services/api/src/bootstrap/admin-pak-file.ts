import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Writes a minted admin PAK where the operator (and the start script) can pick it up; owner-only. */
export async function writeAdminPakFile(file: string, pak: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, pak, { mode: 0o600 });
  // writeFile's mode only applies to a new file; an existing one keeps its permissions otherwise.
  await chmod(file, 0o600);
}
