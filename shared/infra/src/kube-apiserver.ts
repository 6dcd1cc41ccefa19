/**
 * A real kube-apiserver + etcd on loopback (envtest-style: no kubelet, no controllers), both under
 * the guard so nothing outlives the process that started them: the bare cluster, for tests that
 * need only the API. kube-cluster.ts adds controllers, a scheduler and KWOK's simulated nodes on
 * top, for everything that depends on pods.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Agent, request } from 'undici';
import { findKubeAssets } from './kube-assets.ts';
import { freePort } from './ports.ts';
import { startGuarded, type GuardedProcess } from './guarded-process.ts';

const exec = promisify(execFile);

export interface KubeApiServerHandle {
  /** The server's temporary directory: its PKI (ca.crt, sa.key) and kubeconfigs; removed at stop. */
  dir: string;
  /** A kubeconfig (admin, group system:masters, bearer token) written for this server. */
  kubeconfigPath: string;
  /** https://127.0.0.1:<port> */
  server: string;
  /** The admin bearer token, for raw requests. */
  token: string;
  /** PEM of the CA that signed the serving certificate. */
  caPem: string;
  /** Bearer tokens of the extra users, by name. */
  userTokens: ReadonlyMap<string, string>;
  /** Writes a kubeconfig that authenticates with this bearer token. */
  kubeconfigWithToken(name: string, token: string): Promise<string>;
  /** Resolves when kube-apiserver has exited, for whatever reason. */
  exited: Promise<void>;
  stop(): Promise<void>;
}

export interface KubeUser {
  name: string;
  groups?: string[];
}

export interface StartKubeApiServerOptions {
  /** Users besides the admin, authenticated by token (for RBAC tests). */
  users?: KubeUser[];
  log?: (line: string) => void;
  /** Parent of the server's temporary directory (default: the OS temp directory). */
  tmpDir?: string;
}

async function openssl(dir: string, args: string[]): Promise<void> {
  await exec('openssl', args, { cwd: dir });
}

/** A throwaway CA, a serving certificate for 127.0.0.1 signed by it, and a service-account key. */
async function writePki(dir: string): Promise<void> {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl(dir, ['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=brokkr-local-ca']);
  await openssl(dir, ['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=kube-apiserver']);
  await fs.writeFile(
    path.join(dir, 'san.cnf'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\n',
  );
  await openssl(dir, [
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.crt',
    '-days',
    '2',
    '-extfile',
    'san.cnf',
  ]);
  await openssl(dir, ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'sa.key']);
}

function kubeconfigYaml(server: string, caPem: string, user: string, token: string): string {
  const ca = Buffer.from(caPem).toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: brokkr-local`,
    `  cluster: {server: "${server}", certificate-authority-data: "${ca}"}`,
    'users:',
    `- name: ${user}`,
    `  user: {token: "${token}"}`,
    'contexts:',
    `- name: ${user}@brokkr-local`,
    `  context: {cluster: brokkr-local, user: ${user}}`,
    `current-context: ${user}@brokkr-local`,
    '',
  ].join('\n');
}

async function startEtcd(bin: string, dir: string, log?: (line: string) => void): Promise<{ url: string; proc: GuardedProcess }> {
  const [client, peer] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${client}`;
  const peerUrl = `http://127.0.0.1:${peer}`;
  const proc = startGuarded({
    command: path.join(bin, 'etcd'),
    args: [
      '--name',
      'default',
      '--data-dir',
      path.join(dir, 'etcd'),
      '--listen-client-urls',
      url,
      '--advertise-client-urls',
      url,
      '--listen-peer-urls',
      peerUrl,
      '--initial-advertise-peer-urls',
      peerUrl,
      '--initial-cluster',
      `default=${peerUrl}`,
      '--unsafe-no-fsync=true',
      '--log-level',
      'error',
    ],
    // etcd stops last, so its guard removes the whole directory.
    dir,
    ...(log ? { onOutput: log } : {}),
  });
  await until(async () => (await request(`${url}/health`)).statusCode === 200, proc, 'etcd', 30_000);
  return { url, proc };
}

async function until(check: () => Promise<boolean>, proc: GuardedProcess, what: string, timeoutMs: number): Promise<void> {
  let exited = false;
  void proc.exited.then(() => (exited = true));
  const deadline = Date.now() + timeoutMs;
  while (!exited && Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not become ready${exited ? ' (it exited)' : ` within ${timeoutMs} ms`}`);
}

function apiServerArgs(dir: string, etcdUrl: string, port: number): string[] {
  const f = (name: string) => path.join(dir, name);
  return [
    `--etcd-servers=${etcdUrl}`,
    `--secure-port=${port}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--cert-dir=${f('certs')}`,
    `--tls-cert-file=${f('server.crt')}`,
    `--tls-private-key-file=${f('server.key')}`,
    `--token-auth-file=${f('tokens.csv')}`,
    '--authorization-mode=RBAC',
    '--service-cluster-ip-range=10.0.0.0/24',
    `--service-account-key-file=${f('sa.key')}`,
    `--service-account-signing-key-file=${f('sa.key')}`,
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    '--allow-privileged=true',
    // No controller manager creates the `default` service account in new namespaces.
    '--disable-admission-plugins=ServiceAccount',
    '--enable-priority-and-fairness=false',
    '--endpoint-reconciler-type=none',
    '--v=0',
  ];
}

/** Starts etcd and kube-apiserver on free ports; resolves once the apiserver is ready and `default` exists. */
export async function startKubeApiServer(options: StartKubeApiServerOptions = {}): Promise<KubeApiServerHandle> {
  const bin = findKubeAssets();
  if (!bin) throw new Error('kube-apiserver and etcd not found: ensureKubeAssets() (scripts/build-k8s-assets.sh) builds them');
  const dir = await fs.mkdtemp(path.join(options.tmpDir ?? os.tmpdir(), 'brokkr-kube-'));
  await writePki(dir);
  const token = randomBytes(24).toString('hex');
  const userTokens = new Map((options.users ?? []).map((u) => [u.name, randomBytes(24).toString('hex')]));
  const tokenLines = [
    `${token},admin,admin,"system:masters"`,
    ...(options.users ?? []).map((u) => `${userTokens.get(u.name)},${u.name},${u.name},"${(u.groups ?? []).join(',')}"`),
  ];
  await fs.writeFile(path.join(dir, 'tokens.csv'), `${tokenLines.join('\n')}\n`, { mode: 0o600 });
  const etcd = await startEtcd(bin, dir, options.log);
  const port = await freePort();
  const tail: string[] = [];
  const apiserver = startGuarded({
    command: path.join(bin, 'kube-apiserver'),
    args: apiServerArgs(dir, etcd.url, port),
    onOutput: (line) => {
      tail.push(line);
      if (tail.length > 40) tail.shift();
      options.log?.(line);
    },
  });
  const server = `https://127.0.0.1:${port}`;
  const caPem = await fs.readFile(path.join(dir, 'ca.crt'), 'utf8');
  const dispatcher = new Agent({ connect: { ca: caPem } });
  const stop = async () => {
    await apiserver.stop();
    await etcd.proc.stop();
    await dispatcher.close();
  };
  try {
    const get = async (p: string) => {
      const res = await request(`${server}${p}`, { dispatcher, headers: { authorization: `Bearer ${token}` } });
      await res.body.dump();
      return res.statusCode === 200;
    };
    await until(async () => (await get('/readyz')) && (await get('/api/v1/namespaces/default')), apiserver, 'kube-apiserver', 90_000);
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n${tail.join('\n')}`, { cause: err });
  }
  const kubeconfigWithToken = async (name: string, userToken: string) => {
    const safe = name.replace(/[^a-zA-Z0-9_.-]/g, '_');
    const file = path.join(dir, safe === 'admin' ? 'kubeconfig' : `kubeconfig-${safe}`);
    await fs.writeFile(file, kubeconfigYaml(server, caPem, safe, userToken), { mode: 0o600 });
    return file;
  };
  const kubeconfigPath = await kubeconfigWithToken('admin', token);
  return { dir, kubeconfigPath, server, token, caPem, userTokens, kubeconfigWithToken, exited: apiserver.exited, stop };
}
