/**
 * Keyless signing offline, for tests: a Fulcio and a Rekor of @sigstore/mock (nock intercepts their
 * URLs in this process only), the Sigstore trusted root that verifies what they issue, and an OIDC
 * identity token for any issuer and subject (the mock reads its claims, it checks no signature).
 * Signing goes through sigstore-js's own `attest`, as a CI pipeline signs keyless; in its `intoto` Rekor
 * entry form (legacyCompatibility), the one whose body the mock Rekor records as the real one does.
 */
import { createHash, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { fulcioHandler, initializeCA, initializeCTLog, initializeTLog, rekorHandler, type HandlerFn } from '@sigstore/mock';
import nock from 'nock';
import { attest } from 'sigstore';

export interface KeylessMock {
  /** The trusted_root.json an agent's trust policy carries (`sigstore.trustedRoot`). */
  trustedRoot: Record<string, unknown>;
  /** A Sigstore bundle of `statement`, signed with a certificate for `identity`, logged in the mock Rekor. */
  sign(statement: object, identity: { issuer: string; subject: string }): Promise<Record<string, unknown>>;
  /** Removes the interceptors. */
  close(): void;
}

const FULCIO = 'https://fulcio.mock.brokkr.test';
const REKOR = 'https://rekor.mock.brokkr.test';
const CTFE = 'https://ctfe.mock.brokkr.test';
const VALID_FROM = '2020-01-01T00:00:00Z';

const der = (key: KeyObject) => key.export({ type: 'spki', format: 'der' });
const b64 = (bytes: Uint8Array | ArrayBufferView) => Buffer.from(bytes as Uint8Array).toString('base64');
const pair = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

export async function startKeylessMock(): Promise<KeylessMock> {
  const [caKeys, ctKeys, tlogKeys] = [pair(), pair(), pair()];
  const ctlog = await initializeCTLog(ctKeys);
  const ca = await initializeCA(caKeys, ctlog);
  const tlog = await initializeTLog(REKOR, tlogKeys);
  intercept(FULCIO, fulcioHandler(ca));
  intercept(REKOR, rekorHandler(tlog));
  const trustedRoot = {
    mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
    tlogs: [logEntry(REKOR, der(tlogKeys.publicKey), createHash('sha256').update(der(tlogKeys.publicKey)).digest())],
    certificateAuthorities: [
      {
        subject: { organization: 'sigstore.mock', commonName: 'sigstore' },
        uri: FULCIO,
        certChain: { certificates: [{ rawBytes: b64(ca.rootCertificate) }] },
        validFor: { start: VALID_FROM },
      },
    ],
    ctlogs: [logEntry(CTFE, der(ctKeys.publicKey), Buffer.from(ctlog.logID as Uint8Array))],
    timestampAuthorities: [],
  };
  return {
    trustedRoot,
    async sign(statement, identity) {
      const token = unsignedJwt({ iss: identity.issuer, sub: identity.subject, aud: 'sigstore' });
      const payload = Buffer.from(JSON.stringify(statement));
      return (await attest(payload, 'application/vnd.in-toto+json', {
        fulcioURL: FULCIO,
        rekorURL: REKOR,
        identityToken: token,
        legacyCompatibility: true,
      })) as unknown as Record<string, unknown>;
    },
    close() {
      nock.cleanAll();
    },
  };
}

function intercept(base: string, handler: { path: string; fn: HandlerFn }): void {
  nock(base)
    .persist()
    .post(handler.path)
    .reply(async (_uri, body) => {
      const { statusCode, response, contentType } = await handler.fn(typeof body === 'string' ? body : JSON.stringify(body));
      return [statusCode, response as string, { 'Content-Type': contentType ?? 'text/plain' }];
    });
}

function logEntry(baseUrl: string, publicKey: Buffer, keyId: Buffer) {
  return {
    baseUrl,
    hashAlgorithm: 'SHA2_256',
    publicKey: { rawBytes: b64(publicKey), keyDetails: 'PKIX_ECDSA_P256_SHA_256', validFor: { start: VALID_FROM } },
    logId: { keyId: b64(keyId) },
  };
}

function unsignedJwt(claims: Record<string, unknown>): string {
  const part = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ iat: now, exp: now + 600, ...claims })}.`;
}
