import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Isolation, RenderLimits } from './types.ts';

const exec = promisify(execFile);

/** The nobody user and group: a renderer process started by root runs as them. */
const NOBODY = 65534;
/** Go reserves about 600 MiB of address space before it allocates (its page summaries): the address-space cap sits this far above the memory cap. */
const GO_RESERVATIONS = 1024 * 1024 * 1024;

/** util-linux's tools, by absolute path: the processes start with an empty environment, so no PATH. */
interface Tools {
  unshare?: string;
  prlimit: string;
  setpriv?: string;
}

/** How every renderer process of this hub is started: probed once (`probeSandbox`), then the same command line each time. */
export interface Sandbox {
  isolation: Isolation;
  /** The program and arguments that run `binary` walled in under `limits`. */
  command(binary: string, limits: RenderLimits): { file: string; args: string[] };
}

function findTool(name: string): string | undefined {
  const dirs = (process.env.PATH ?? '/usr/bin:/bin').split(path.delimiter).concat(['/usr/bin', '/bin', '/usr/sbin', '/sbin']);
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

async function succeeds(file: string, args: string[]): Promise<boolean> {
  try {
    await exec(file, args, { env: {}, timeout: 5_000 });
    return true;
  } catch {
    return false;
  }
}

/**
 * Which network wall this machine allows: a new network namespace (root, or CAP_SYS_ADMIN), else
 * one inside a new user namespace (an unprivileged hub where the kernel and the container runtime
 * allow user namespaces), else none — then the renderer's own refusals (brokkr-render opens no
 * connection and refuses every HTTP request) are the only wall, and the log says so.
 */
async function probeNetwork(tools: Tools): Promise<{ network: Isolation['network']; prefix: string[] }> {
  const { unshare } = tools;
  if (!unshare) return { network: 'none', prefix: [] };
  const works = (flags: string[]) => succeeds(unshare, [...flags, '--', tools.prlimit, '--version']);
  const own = ['--net', '--ipc'];
  if (await works(own)) return { network: 'namespace', prefix: [unshare, ...own, '--'] };
  const user = ['--user', '--net', '--ipc'];
  if (await works(user)) return { network: 'user-namespace', prefix: [unshare, ...user, '--'] };
  return { network: 'none', prefix: [] };
}

/** Finds util-linux's tools and what this machine lets them do; fails when resources cannot be capped at all. */
export async function probeSandbox(): Promise<Sandbox> {
  const prlimit = findTool('prlimit');
  if (!prlimit) throw new Error("prlimit (util-linux) is needed to cap the renderer processes' CPU time and memory");
  const tools: Tools = { prlimit, unshare: findTool('unshare'), setpriv: findTool('setpriv') };
  const asRoot = process.getuid?.() === 0;
  if (asRoot && !tools.setpriv) throw new Error('setpriv (util-linux) is needed to run the renderer processes as nobody rather than root');
  const { network, prefix } = await probeNetwork(tools);
  // In a user namespace the process already runs as the overflow user (nobody) inside it.
  const dropUser = asRoot && network !== 'user-namespace';
  const user = dropUser
    ? [tools.setpriv!, `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--no-new-privs', '--']
    : tools.setpriv
      ? [tools.setpriv, '--no-new-privs', '--']
      : [];
  return {
    isolation: { network, user: asRoot ? 'nobody' : 'own' },
    command(binary, limits) {
      const caps = [
        prlimit,
        // SIGXCPU at the soft limit (brokkr-render answers "limit"), SIGKILL a second later.
        `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
        `--data=${limits.memoryBytes}`,
        `--as=${limits.memoryBytes + GO_RESERVATIONS}`,
        '--nofile=64',
        // Counted per user, across processes: room for the Go runtime's threads of a few renders.
        '--nproc=256',
        '--fsize=0',
        '--core=0',
        '--',
      ];
      const [file, ...args] = [...prefix, ...caps, ...user, binary];
      return { file: file!, args };
    },
  };
}
