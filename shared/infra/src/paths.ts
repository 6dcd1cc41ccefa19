import path from 'node:path';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The repository root (this file sits at shared/infra/{src,dist}/paths.*). */
export const repoRoot = path.resolve(here, '../../..');
export const scriptsDir = path.join(repoRoot, 'scripts');
export const cacheDir = process.env.BROKKR_CACHE ?? path.join(os.homedir(), '.cache', 'brokkr');
