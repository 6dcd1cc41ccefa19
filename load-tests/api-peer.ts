/**
 * Brokkr 0.9.1's broker for bench:api's side-by-side figures (BROKKR_PEER_BROKER = the binary,
 * e.g. ~/.cache/brokkr/peer/brokkr-0.9.1/brokkr-broker after `bash /work/shared/peer/unpack.sh`).
 * It always listens on 0.0.0.0:3000, so it runs in a network namespace of its own (`unshare -n`,
 * loopback up): it reaches PostgreSQL over the server's Unix socket, and k6 joins its namespace
 * (`nsenter -n`, see api-k6.ts) to reach 127.0.0.1:3000. Needs root (or CAP_SYS_ADMIN).
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import type { ApiProcess } from './api-env.ts';

const exec = promisify(execFile);

/** Brokkr's development admin PAK: its default config's pak_hash matches it. */
export const PEER_ADMIN_PAK = 'brokkr_BR3rVsDa_GK3QN7CDUzYc6iKgMkJ98M2WSimM5t6U8';
export const PEER_URL = 'http://127.0.0.1:3000';

export interface PeerProcess extends ApiProcess {
  /** A pid in the broker's network namespace: `nsenter -t <pid> -n` reaches PEER_URL. */
  netnsPid: number;
}

/** GET `path` from inside the broker's namespace; the HTTP status, or 0 when nothing answered. */
export async function peerStatus(pid: number, path: string, pak?: string): Promise<number> {
  const args = ['-t', String(pid), '-n', 'curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '5'];
  if (pak) args.push('-H', `Authorization: Bearer ${pak}`);
  try {
    const { stdout } = await exec('nsenter', [...args, `${PEER_URL}${path}`]);
    return Number(stdout.trim()) || 0;
  } catch {
    return 0;
  }
}

export async function spawnPeer(binary: string, socketDatabaseUrl: string): Promise<PeerProcess> {
  // `unshare -n` and `sh -c exec` keep the pid: child.pid is the broker's.
  const child = spawn('unshare', ['-n', 'sh', '-c', 'ip link set lo up && exec "$0" serve', binary], {
    env: { ...process.env, BROKKR__DATABASE__URL: socketDatabaseUrl, BROKKR__LOG__LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.on('data', (c: Buffer) => (log = (log + c.toString()).slice(-50_000)));
  child.stderr.on('data', (c: Buffer) => (log = (log + c.toString()).slice(-50_000)));
  let exited = false;
  const done = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  const stop = async () => {
    if (!exited) child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await done;
    clearTimeout(timer);
  };
  const pid = child.pid!;
  const deadline = Date.now() + 60_000;
  // Migrations run before it listens: /healthz answering means the schema is there.
  while (!exited && Date.now() < deadline && (await peerStatus(pid, '/healthz')) !== 200) await new Promise((r) => setTimeout(r, 200));
  if (exited || Date.now() >= deadline) {
    await stop();
    throw new Error(`Brokkr's broker did not become ready:\n${log.slice(-4000)}`);
  }
  return { url: PEER_URL, pid, netnsPid: pid, child, output: () => log, stop };
}
