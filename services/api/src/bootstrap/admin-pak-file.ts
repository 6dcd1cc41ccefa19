import { constants } from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import path from 'node:path';

/**
 * Writes a minted admin PAK where the operator (and the start script) can pick it up: a new file,
 * owner-only. O_EXCL refuses a file that is already there (an older PAK, or something planted to
 * be overwritten) and O_NOFOLLOW a symlink at the path, so the PAK never lands anywhere else.
 */
export async function writeAdminPakFile(file: string, pak: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    await handle.writeFile(pak);
  } finally {
    await handle.close();
  }
}

/** Undoes writeAdminPakFile when the PAK it holds was not stored after all. */
export async function removeAdminPakFile(file: string): Promise<void> {
  await rm(file, { force: true });
}
