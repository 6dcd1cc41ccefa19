import type { Command } from 'commander';
import { hubFor, print, sayFor, formatFor } from '../context.ts';
import { CliError } from '../errors.ts';
import { findStackOrUndefined } from '../resolve.ts';
import { readManifests } from './manifests.ts';
import { signContent, storeSignature, type SignOptions } from './signing.ts';

interface SignCommandOptions extends SignOptions {
  file?: string;
  stack: string;
  deletion?: boolean;
  store?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function registerSign(program: Command): void {
  program
    .command('sign')
    .summary("Sign a directory of YAML (or a deletion) for a stack with a generator's key; prints the Sigstore bundle")
    .description(
      'Signs exactly the content `brokkr apply -f` would post (an in-toto statement in a DSSE envelope, as a Sigstore bundle): ' +
        'agents with a trust policy apply only content signed by a generator their trust root names. ' +
        '`cosign verify-blob-attestation --key <pub> --type https://brokkr.dev/intent/v1` checks it (docs/signatures.md).',
    )
    .option('-f, --file <path>', 'a directory (its *.yaml / *.yml files, sorted by name) or one YAML file')
    .requiredOption('--stack <name|id>', 'the stack (a name is looked up on the hub; an id needs no hub)')
    .requiredOption('--key <path>', 'the generator key (PEM: Ed25519 or ECDSA P-256)')
    .option('--signer <name>', "the generator's name in the trust root (default: BROKKR_SIGNER, else the key file's name)")
    .option('--signature-version <n>', 'the monotonic version signed (default: the current time in seconds)')
    .option('--sign-for <agent>', 'only this agent (name, or cluster/name) may apply it; repeatable', collect, [])
    .option('--sign-for-label <label>', 'agents configured with this label may apply it; repeatable', collect, [])
    .option('--allow-rollback-to <n>', 'an automatic rollback may return to this earlier version; repeatable', collect, [])
    .option('--expires <duration>', 'the signature is good for this long (e.g. 720h)')
    .option('--deletion', "sign the stack's deletion (a deletion marker) instead of content")
    .option('--store', 'store the signature on the hub too (POST /stacks/{id}/signatures)')
    .action(async (options: SignCommandOptions, cmd: Command) => {
      process.exitCode = await sign(cmd, options);
    });
}

async function sign(cmd: Command, options: SignCommandOptions): Promise<number> {
  if (!options.deletion && !options.file) throw new CliError('-f is required (or --deletion)');
  const content = options.deletion ? '' : readManifests(options.file!).content;
  const needsHub = options.store || !UUID.test(options.stack);
  const hub = needsHub ? hubFor(cmd) : undefined;
  const stackId = hub ? (await findStackOrUndefined(hub, options.stack))?.id : options.stack;
  if (!stackId) throw new CliError(`stack ${options.stack} not found (create it first, e.g. with brokkr apply)`);
  const bundle = signContent(options, stackId, content, options.deletion === true);
  if (hub && options.store) {
    await storeSignature(hub, stackId, bundle);
    sayFor(formatFor(cmd))(`signature stored for stack ${stackId}`);
  }
  print(`${JSON.stringify(bundle)}\n`);
  return 0;
}
