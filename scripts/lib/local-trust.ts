/**
 * `npm start -- --require-signatures`: the local agent gets a trust policy, as an installation would
 * give it one: a root (one key, threshold 1) delegating every stack and work orders to the generator
 * `local-dev`, whose key npm start makes and prints (`signing key: PATH`), so that
 * `brokkr apply --sign PATH` signs as `local-dev` (the key file's name) and anything unsigned is
 * refused. No timestamp signer: freshness is not enforced locally (docs/signatures.md says how).
 * Everything is in the start's temporary directory, gone at Ctrl-C.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { buildRoot, generateSigningKey, privateKeyPem, publicKeyPem, signDocument } from '@brokkr/trust';

export interface LocalTrust {
  /** The generator `local-dev`'s private key (PEM, mode 0600). */
  signingKey: string;
  /** The policy file the local agent reads (BROKKR__AGENT__TRUST_POLICY_FILE). */
  policyFile: string;
}

export async function makeLocalTrust(workDir: string): Promise<LocalTrust> {
  const dir = path.join(workDir, 'signing');
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const rootKey = generateSigningKey();
  const generatorKey = generateSigningKey();
  const root = buildRoot({
    version: 1,
    rootKeys: [rootKey.privateKey],
    threshold: 1,
    generators: [{ name: 'local-dev', keys: [generatorKey.privateKey], stacks: ['*'], workOrders: true }],
  });
  const signingKey = path.join(dir, 'local-dev.key');
  await fs.writeFile(signingKey, privateKeyPem(generatorKey.privateKey), { mode: 0o600 });
  await fs.writeFile(path.join(dir, 'local-dev.pub'), publicKeyPem(generatorKey.publicKey));
  // The root key signs rotations and revocations; kept beside it to try them (never like this in production).
  await fs.writeFile(path.join(dir, 'root.key'), privateKeyPem(rootKey.privateKey), { mode: 0o600 });
  const policyFile = path.join(dir, 'trust-policy.json');
  const policy = { requireSignatures: true, root: signDocument(root, [rootKey.privateKey]) };
  await fs.writeFile(policyFile, JSON.stringify(policy, null, 2), { mode: 0o600 });
  return { signingKey, policyFile };
}

/** The agent's namespace, where a trust-checking agent keeps what it took (an installed agent runs in it already). */
export async function ensureAgentNamespace(kubeconfigPath: string, name: string): Promise<void> {
  const { CoreV1Api, KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  await kc
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name } } })
    .catch((err: unknown) => {
      if ((err as { code?: number }).code !== 409) throw err;
    });
}
