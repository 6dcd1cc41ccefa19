import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import {
  buildTimestamp,
  countersign,
  envelopeSchema,
  generateSigningKey,
  keyIdOf,
  privateKeyPem,
  publicKeyFromPem,
  publicKeyPem,
  readDocument,
  revocationsSchema,
  rootSchema,
  signDocument,
  timestampSchema,
} from '@brokkr/trust';
import type { TrustMetadata } from '@brokkr/contracts';
import { hubFor, print } from '../context.ts';
import { CliError } from '../errors.ts';
import { readSigningKey } from './signing.ts';
import { parseDuration } from './wait.ts';

const collect = (value: string, previous: string[]) => [...previous, value];

function readJson(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new CliError(`${file}: ${(err as Error).message.split('\n')[0]}`);
  }
}

/**
 * `brokkr trust …`: what the holders of the trust root do (docs/signatures.md): make keys, sign a
 * root, revocation list or timestamp (one holder after another, until the threshold is reached), and
 * publish it on the hub, which relays it to the agents and can change none of it.
 */
export function registerTrust(program: Command): void {
  const trust = program.command('trust').summary('Signed intent: keys, the trust root, revocations and timestamps (docs/signatures.md)');
  trust
    .command('keygen <name>')
    .summary('Make a key pair: <name>.key (private, mode 0600) and <name>.pub; prints the key id')
    .option('--ecdsa', 'ECDSA P-256 instead of Ed25519')
    .option('--dir <dir>', 'where to write them', '.')
    .action((name: string, options: { ecdsa?: boolean; dir: string }) => keygen(name, options));
  trust
    .command('key-id <file>')
    .summary('The key id (SHA-256 of the public key) of a PEM public or private key: how a root names it')
    .action((file: string) => print(`${keyIdOf(readPublicKey(file))}\n`));
  trust
    .command('sign <document>')
    .summary('Sign a root or revocation-list document (JSON) with one or more root keys; prints the envelope')
    .requiredOption('--key <path>', 'a key to sign with; repeatable', collect, [])
    .option('--envelope <file>', 'add the signatures to this envelope (another holder signed it already) instead')
    .action((document: string, options: { key: string[]; envelope?: string }) => signTrustDocument(document, options));
  trust
    .command('publish <envelope>')
    .summary('Publish a signed root, revocation list or timestamp on the hub (admin PAK)')
    .action(async (file: string, _o: unknown, cmd: Command) => {
      const filed = await hubFor(cmd).put<{ kind: string; version: number }>('/trust-metadata', { envelope: readJson(file) });
      print(`published ${filed.kind} v${filed.version}\n`);
    });
  trust
    .command('timestamp')
    .summary("Sign and publish a timestamp naming the hub's newest root and revocation list (run it on a schedule)")
    .requiredOption('--key <path>', 'the timestamp key (a timestamp signer of the root)')
    .option('--valid-for <duration>', 'how long agents take it as fresh', '24h')
    .option('--root-version <n>', 'the newest root version (default: the newest the hub relays)')
    .option('--revocations-version <n>', 'the newest revocation list version (default: the newest the hub relays)')
    .action(async (options: TimestampOptions, cmd: Command) => timestamp(cmd, options));
}

function readPublicKey(file: string) {
  const pem = fs.readFileSync(file, 'utf8');
  return pem.includes('PRIVATE KEY') ? readSigningKey(file) : publicKeyFromPem(pem);
}

function keygen(name: string, options: { ecdsa?: boolean; dir: string }): void {
  const key = generateSigningKey(options.ecdsa ? 'ecdsa-p256' : 'ed25519');
  const base = path.join(options.dir, name);
  if (fs.existsSync(`${base}.key`)) throw new CliError(`${base}.key exists already`);
  fs.writeFileSync(`${base}.key`, privateKeyPem(key.privateKey), { mode: 0o600 });
  fs.writeFileSync(`${base}.pub`, publicKeyPem(key.publicKey));
  print(`${key.keyId}\n`);
}

function signTrustDocument(file: string, options: { key: string[]; envelope?: string }): void {
  const keys = options.key.map(readSigningKey);
  if (options.envelope) {
    const envelope = envelopeSchema.safeParse(readJson(options.envelope));
    if (!envelope.success) throw new CliError(`${options.envelope}: not a DSSE envelope`);
    print(`${JSON.stringify(countersign(envelope.data, keys))}\n`);
    return;
  }
  const json = readJson(file) as { _type?: string };
  const root = rootSchema.safeParse(json);
  const revocations = revocationsSchema.safeParse(json);
  const document = root.success ? root.data : revocations.success ? revocations.data : undefined;
  if (!document) throw new CliError(`${file}: neither a root nor a revocation list (${root.error?.issues[0]?.message ?? ''})`);
  print(`${JSON.stringify(signDocument(document, keys))}\n`);
}

interface TimestampOptions {
  key: string;
  validFor: string;
  rootVersion?: string;
  revocationsVersion?: string;
}

/** The newest versions the hub relays (read, not trusted: a timestamp signer who keeps the metadata itself passes them). */
function relayedVersions(metadata: TrustMetadata): { root: number; revocations: number } {
  const roots = metadata.roots.map((r) => readDocument(r, rootSchema).document.version);
  const revocations = metadata.revocations ? readDocument(metadata.revocations, revocationsSchema).document.version : 0;
  return { root: Math.max(1, ...roots), revocations };
}

async function timestamp(cmd: Command, options: TimestampOptions): Promise<void> {
  const hub = hubFor(cmd);
  const metadata = await hub.get<TrustMetadata>('/trust-metadata');
  const relayed = relayedVersions(metadata);
  const previous = metadata.timestamp ? readDocument(metadata.timestamp, timestampSchema).document.version : 0;
  const doc = buildTimestamp({
    version: previous + 1,
    root: options.rootVersion ? Number(options.rootVersion) : relayed.root,
    revocations: options.revocationsVersion ? Number(options.revocationsVersion) : relayed.revocations,
    validForMs: parseDuration(options.validFor),
  });
  await hub.put('/trust-metadata', { envelope: signDocument(doc, [readSigningKey(options.key)]) });
  print(`published timestamp v${doc.version} (root v${doc.root}, revocations v${doc.revocations}), valid until ${doc.expires}\n`);
}
