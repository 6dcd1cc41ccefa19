import { DEFAULT_ADMIN_PAK_HASH } from '@brokkr/config';
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
import { writeAdminPakFile } from './admin-pak-file.ts';

export interface BootstrapOptions {
  db: Db;
  logger: Logger;
  /** 64 hex characters, or '' to mint a new admin PAK on the first start. */
  configuredHash: string;
  pakFile: string;
  /** Where the minted PAK line goes (stdout); injectable for tests. */
  print?: (line: string) => void;
}

export interface BootstrapResult {
  firstRun: boolean;
  /** Set only when this start minted the admin PAK. */
  mintedPak?: string;
  defaultAdminHashInUse: boolean;
}

/**
 * Idempotent start-up (contract §10.1): the first run stores the admin hash and the
 * `admin-generator`; every run provisions `__system__` and registers all agents with it.
 * Later runs never touch admin_role, whatever BROKKR__BROKER__PAK_HASH says.
 */
export async function bootstrap(options: BootstrapOptions): Promise<BootstrapResult> {
  const { db, logger } = options;
  const minted = options.configuredHash === '' ? generatePak() : undefined;
  const adminHash = minted?.hash ?? options.configuredHash.toLowerCase();
  const firstRun = await db.transaction(async (tx) => {
    await lockBootstrap(tx);
    const first = await markInitialized(tx);
    if (first) {
      await upsertAdminRole(tx, adminHash);
      await upsertAdminGenerator(tx, adminHash);
    }
    await provisionSystemGenerator(tx);
    return first;
  });

  let mintedPak: string | undefined;
  if (firstRun && minted) {
    mintedPak = minted.pak;
    // Printed raw on stdout, once: the logger would mask it, and scripts grep for this line.
    (options.print ?? ((line) => process.stdout.write(`${line}\n`)))(`Admin PAK: ${minted.pak}`);
    try {
      await writeAdminPakFile(options.pakFile, minted.pak);
      logger.info({ file: options.pakFile }, 'admin PAK written');
    } catch (err) {
      logger.error({ err, file: options.pakFile }, 'could not write the admin PAK file; use the PAK printed above');
    }
  }
  if (firstRun) logger.info({ minted: Boolean(minted) }, 'first start: admin role and admin-generator created');

  const defaultAdminHashInUse = (await storedAdminHash(db.pool)) === DEFAULT_ADMIN_PAK_HASH;
  if (defaultAdminHashInUse) {
    logger.warn(
      "SECURITY WARNING: the admin PAK is Brokkr's publicly documented default. Anyone can administer this broker. " +
        "Set BROKKR__BROKER__PAK_HASH (or '' to mint one) on a fresh database, or rotate the admin PAK.",
    );
  }
  return { firstRun, ...(mintedPak ? { mintedPak } : {}), defaultAdminHashInUse };
}
