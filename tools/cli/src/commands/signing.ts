import fs from 'node:fs';
import path from 'node:path';
import type { KeyObject } from 'node:crypto';
import {
  KeyError,
  privateKeyFromPem,
  renderInputDigests,
  renderInputsContent,
  signIntent,
  type IntentPredicate,
  type RenderInputValues,
  type SerializedBundle,
} from '@brokkr/trust';
import { CliError } from '../errors.ts';
import type { Hub } from '../http.ts';
import { parseDuration } from './wait.ts';

/** What `apply --sign` and `sign` put in the statement besides the stack and the content (docs/signatures.md). */
export interface SignOptions {
  /** PEM private key (Ed25519 or ECDSA P-256) of a generator of the agents' trust root. */
  key: string;
  /** The generator's name in the trust root; default: BROKKR_SIGNER (unless empty, as CI sets an unset variable), else the key file's name without extension. */
  signer?: string;
  /** Monotonic per stack; default: the current time in seconds. */
  signatureVersion?: string;
  /** Agents (names) the statement is for, beside or instead of the hub's targets. */
  signFor: string[];
  /** Local agent labels the statement is for. */
  signForLabel: string[];
  allowRollbackTo: string[];
  /** How long the signature is good for (e.g. 30d); default: no expiry. */
  expires?: string;
}

const positiveInt = (flag: string, value: string): number => {
  if (!/^\d{1,15}$/.test(value) || Number(value) <= 0) throw new CliError(`${flag} must be a positive whole number, not "${value}"`);
  return Number(value);
};

export function readSigningKey(file: string): KeyObject {
  let pem: string;
  try {
    pem = fs.readFileSync(file, 'utf8');
  } catch {
    throw new CliError(`${file}: the signing key cannot be read`);
  }
  try {
    return privateKeyFromPem(pem);
  } catch (err) {
    if (err instanceof KeyError) throw new CliError(`${file}: ${err.message}`);
    throw err;
  }
}

export const signerName = (options: Pick<SignOptions, 'key' | 'signer'>): string =>
  options.signer ?? (process.env.BROKKR_SIGNER || undefined) ?? path.basename(options.key).replace(/\.(key|pem)$/i, '');

/** The statement of `content` for the stack, signed with the key: a keyed Sigstore bundle. */
export function signContent(options: SignOptions, stackId: string, content: string, deletion: boolean): SerializedBundle {
  return signIntent(content, predicateOf(options, stackId, deletion ? 'deletion' : 'raw'), readSigningKey(options.key));
}

/**
 * A chart's or an overlay's statement: its subject the canonical document of the inputs' digests,
 * its predicate naming each input and the renderer; each agent requiring signatures renders the
 * inputs itself (docs/signatures.md, "Charts and overlays").
 */
export function signRenderInputs(options: SignOptions, stackId: string, inputs: RenderInputValues): SerializedBundle {
  const predicate = { ...predicateOf(options, stackId, inputs.kind), inputs: renderInputDigests(inputs), renderer: inputs.renderer };
  return signIntent(renderInputsContent(inputs), predicate, readSigningKey(options.key));
}

function predicateOf(options: SignOptions, stackId: string, kind: IntentPredicate['kind']): IntentPredicate {
  const now = new Date();
  const agents = options.signFor;
  const labels = options.signForLabel;
  return {
    stack: stackId,
    generator: signerName(options),
    version: options.signatureVersion ? positiveInt('--signature-version', options.signatureVersion) : Math.floor(now.getTime() / 1000),
    kind,
    issuedAt: now.toISOString(),
    ...(agents.length || labels.length
      ? { targeting: { ...(agents.length ? { agents } : {}), ...(labels.length ? { labels } : {}) } }
      : {}),
    ...(options.allowRollbackTo.length
      ? { rollback: { allowTo: options.allowRollbackTo.map((v) => positiveInt('--allow-rollback-to', v)) } }
      : {}),
    ...(options.expires ? { expires: new Date(now.getTime() + parseDuration(options.expires)).toISOString() } : {}),
  };
}

/**
 * Stores the signature on the hub, before the content it signs is posted (agents woken by the
 * content find it); resolves with when the hub stored it (its clock).
 */
export async function storeSignature(hub: Hub, stackId: string, signature: unknown): Promise<string> {
  return (await hub.post<{ created_at: string }>(`/stacks/${stackId}/signatures`, { signature })).created_at;
}
