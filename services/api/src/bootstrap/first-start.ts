import { DEFAULT_ADMIN_PAK_HASH } from '@brokkr/config';
import { ConfigError } from '@brokkr/errors';
import type { Db } from '@brokkr/db';
import type { Logger } from '@brokkr/logger';
import { generatePak } from '@brokkr/pak';
import {
  lockBootstrap,
  markInitialized,
  provisionSystemGenerator,
  storedAdminHash,
  upsertAdminGenerator,
  upsertAdminRole,
} from './sql/first-start.ts';
import { removeAdminPakFile, writeAdminPakFile } from './admin-pak-file.ts';

export interface BootstrapOptions {
  db: Db;
  logger: Logger;
  /** 64 hex characters, or '' to mint a new admin PAK on the first start. */
  configuredHash: string;
  /** Where a minted admin PAK is written (never logged: docs/security.md, "The hub's own plumbing"). */
  pakFile: string;
}

export interface BootstrapResult {
  firstRun: boolean;
  /** Set only when this start minted the admin PAK. */
  mintedPak?: string;
  defaultAdminHashInUse: boolean;
}

/**
 * Idempotent start-up: the first run stores the admin hash and the
 * `admin-generator`; every run provisions `__system__` and registers all agents with it.
 * Later runs never touch admin_role, whatever BROKKR__BROKER__PAK_HASH says.
 */
export async function bootstrap(options: BootstrapOptions): Promise<BootstrapResult> {
  const { db, logger } = options;
  const minted = options.configuredHash === '' ? generatePak() : undefined;
  const adminHash = minted?.hash ?? options.configuredHash.toLowerCase();
  let written = false;
  const firstRun = await db
    .transaction(async (tx) => {
      await lockBootstrap(tx);
      const first = await markInitialized(tx);
      if (first) {
        await upsertAdminRole(tx, adminHash);
        await upsertAdminGenerator(tx, adminHash);
        // The file is the only copy of the PAK, so it is written before the hash is committed: a
        // file that cannot be written rolls the first start back, and the next start mints again.
        if (minted) written = await writeMintedPak(options.pakFile, minted.pak);
      }
      await provisionSystemGenerator(tx);
      return first;
    })
    .catch(async (err: unknown) => {
      if (written) await removeAdminPakFile(options.pakFile);
      throw err;
    });

  if (firstRun && minted) logger.info({ file: options.pakFile }, 'admin PAK minted and written to its file (mode 0600)');
  if (firstRun) logger.info({ minted: Boolean(minted) }, 'first start: admin role and admin-generator created');

  const defaultAdminHashInUse = (await storedAdminHash(db.pool)) === DEFAULT_ADMIN_PAK_HASH;
  if (defaultAdminHashInUse) {
    logger.warn(
      "SECURITY WARNING: the admin PAK is Brokkr's publicly documented default. Anyone can administer this broker. " +
        "Set BROKKR__BROKER__PAK_HASH (or '' to mint one) on a fresh database, or rotate the admin PAK.",
    );
  }
  return { firstRun, ...(firstRun && minted ? { mintedPak: minted.pak } : {}), defaultAdminHashInUse };
}

async function writeMintedPak(file: string, pak: string): Promise<true> {
  try {
    await writeAdminPakFile(file, pak);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'EEXIST' ? 'it already exists (remove it, or choose another path)' : `it cannot be written (${code ?? String(err)})`;
    throw new ConfigError(`BROKKR__BROKER__PAK_FILE ${file}: the minted admin PAK was not stored because ${why}`);
  }
}
