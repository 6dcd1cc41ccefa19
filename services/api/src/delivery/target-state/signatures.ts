import { createHash } from 'node:crypto';
import type { Queryable } from '@brokkr/db';
import type { DeploymentObjectRow } from '../../domain/deployment-object-row.ts';
import { queryServedSignatures } from './sql/served-signatures.ts';

/** A stored signature as it is carried with an object: its JSON text, and the SHA-256 that names it. */
export interface Carried {
  sha: string;
  json: string;
}

interface Kept {
  at: number;
  value: Promise<Carried | null>;
}

/** Contents whose signature is kept; beyond it everything is forgotten (a burst of distinct contents). */
const MAX_KEPT = 100_000;

const keyOf = (stackId: string, digest: string) => `${stackId}:${digest}`;

/**
 * The signatures carried with the objects an agent that checks them is served (docs/signatures.md):
 * the newest stored for each served content (stack and yaml_checksum), read once per content for
 * every agent that holds it, as the answers' rows are (answer-cache.ts). A change to a stack held
 * by 10,000 such agents costs one read of its new object's signature, where each agent used to ask
 * GET /agents/{id}/signatures.
 *
 * What is kept changes only when a signature is stored for content a stack already holds (a
 * re-signing): that write sends its agents a `signature` notice, which every replica hears
 * (TargetStateCache.noticed) and which forgets the stack's signatures here. A signature stored
 * before its content (the usual order) needs nothing: no content had it yet, so none was kept.
 * While notices may be lost nothing is kept (distrust), and an entry older than `ttlMs` is read again.
 */
export class ServedSignatures {
  private readonly kept = new Map<string, Kept>();
  private trusted = true;

  constructor(
    private readonly db: Queryable,
    private readonly ttlMs: number,
  ) {}

  /** Whether nothing is kept: a notice then has nothing here to forget. */
  get empty(): boolean {
    return this.kept.size === 0;
  }

  /** The signature of each row (undefined: none stored), in the rows' order. */
  async of(rows: readonly DeploymentObjectRow[], now = Date.now()): Promise<(Carried | undefined)[]> {
    const values = new Map<string, Promise<Carried | null>>();
    const missing: { stackId: string; digest: string }[] = [];
    for (const row of rows) {
      const key = keyOf(row.stack_id, row.yaml_checksum);
      if (values.has(key)) continue;
      const kept = this.kept.get(key);
      if (kept && now - kept.at < this.ttlMs) values.set(key, kept.value);
      else missing.push({ stackId: row.stack_id, digest: row.yaml_checksum });
    }
    if (missing.length) this.read(missing, values, now);
    const found = await Promise.all(rows.map((row) => values.get(keyOf(row.stack_id, row.yaml_checksum))!));
    return found.map((carried) => carried ?? undefined);
  }

  /** One query for every content not kept; kept for the next answers when notices can be trusted. */
  private read(missing: { stackId: string; digest: string }[], values: Map<string, Promise<Carried | null>>, now: number): void {
    const read = queryServedSignatures(this.db, missing).then(
      (rows) => new Map(rows.map((r) => [keyOf(r.stack_id, r.content_digest), { sha: r.bundle_sha256, json: r.bundle }])),
    );
    if (this.kept.size + missing.length > MAX_KEPT) this.kept.clear();
    for (const { stackId, digest } of missing) {
      const key = keyOf(stackId, digest);
      const value = read.then((found) => found.get(key) ?? null);
      values.set(key, value);
      if (this.trusted) this.kept.set(key, { at: now, value });
    }
    // A failed read is not kept: the next answer reads again.
    read.catch(() => {
      for (const { stackId, digest } of missing) {
        const key = keyOf(stackId, digest);
        if (this.kept.get(key)?.value === values.get(key)) this.kept.delete(key);
      }
    });
  }

  /** A signature was stored for content of the stack that may be served already (a `signature` notice). */
  forgetStack(stackId: string): void {
    const prefix = `${stackId.toLowerCase()}:`;
    for (const key of this.kept.keys()) if (key.toLowerCase().startsWith(prefix)) this.kept.delete(key);
  }

  /** Notices may be lost from now on: keep nothing. */
  distrust(): void {
    this.trusted = false;
    this.kept.clear();
  }

  trust(): void {
    this.kept.clear();
    this.trusted = true;
  }
}

/**
 * The ETag of an answer with its signatures: the plain answer's ETag (targetStateEtag) and each
 * object's signature, so a signature stored for an object already served moves it.
 */
export function signedEtag(etag: string, carried: readonly (Carried | undefined)[]): string {
  const hash = createHash('sha256').update(`signed:${etag}`);
  for (const c of carried) hash.update(`\n${c?.sha ?? '-'}`);
  return `"tss-${hash.digest('base64url').slice(0, 32)}"`;
}
