/**
 * A real kube-apiserver + etcd for tests (envtest-style, no kubelet, no controllers), both under
 * the infra guard so nothing outlives the test process. Binaries come from KUBEBUILDER_ASSETS or
 * the cache that scripts/build-k8s-assets.sh fills. Pods and Jobs never run here: tests patch
 * their status to play the kubelet.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { KubeConfig } from '@kubernetes/client-node';
import { cacheDir, freePort, startGuarded, type GuardedProcess } from '@brokkr/infra';

const exec = promisify(execFile);

export interface KubeApiServer {
  /** A kubeconfig (admin, group system:masters, bearer token) written for this server. */
  kubeconfigPath: string;
  kubeConfig: KubeConfig;
  /** https://127.0.0.1:<port> */
  server: string;
  /** The admin bearer token, for raw requests. */
  token: string;
  /** PEM of the CA that signed the serving certificate. */
  caPem: string;
  /** Writes a kubeconfig for one of the extra users given to startKubeApiServer. */
  kubeconfigFor(user: string): Promise<string>;
  /** Writes a kubeconfig that authenticates with this bearer token (e.g. a service account's, from a TokenRequest). */
  kubeconfigWithToken(name: string, token: string): Promise<string>;
  stop(): Promise<void>;
}

export interface TestKubeUser {
  name: string;
  groups?: string[];
}

export interface StartKubeApiServerOptions {
  /** Users besides the admin, authenticated by token (for RBAC tests). */
  users?: TestKubeUser[];
  log?: (line: string) => void;
}

/** The directory holding kube-apiserver and etcd. */
export function findKubeAssets(): string {
  const fromEnv = process.env.KUBEBUILDER_ASSETS;
  if (fromEnv && hasAssets(fromEnv)) return fromEnv;
  const root = path.join(cacheDir, 'k8s');
  const versions = existsSync(root) ? readdirSync(root).sort().reverse() : [];
  for (const v of versions) {
    const dir = path.join(root, v, 'bin');
    if (hasAssets(dir)) return dir;
  }
  throw new Error(
    `kube-apiserver and etcd not found (KUBEBUILDER_ASSETS=${fromEnv ?? ''}, ${root}); build them with scripts/build-k8s-assets.sh`,
  );
}

function hasAssets(dir: string): boolean {
  return existsSync(path.join(dir, 'kube-apiserver')) && existsSync(path.join(dir, 'etcd'));
}

/** True when the binaries are there, so a suite can skip itself with a clear reason otherwise. */
export function kubeAssetsAvailable(): boolean {
  try {
    findKubeAssets();
    return true;
  } catch {
    return false;
  }
}

async function openssl(dir: string, args: string[]): Promise<void> {
  await exec('openssl', args, { cwd: dir });
}

/** A throwaway CA, a serving certificate for 127.0.0.1 signed by it, and a service-account key. */
async function writePki(dir: string): Promise<void> {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl(dir, ['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=brokkr-test-ca']);
  await openssl(dir, ['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=kube-apiserver']);
  await fs.writeFile(
    path.join(dir, 'san.cnf'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\n',
  );
  await openssl(dir, ['x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial',
    '-out', 'server.crt', '-days', '2', '-extfile', 'san.cnf']);
  await openssl(dir, ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'sa.key']);
}

function kubeconfigYaml(server: string, caPem: string, user: string, token: string): string {
  const ca = Buffer.from(caPem).toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: test`,
    `  cluster: {server: "${server}", certificate-authority-data: "${ca}"}`,
    'users:',
    `- name: ${user}`,
    `  user: {token: "${token}"}`,
    'contexts:',
    `- name: ${user}@test`,
    `  context: {cluster: test, user: ${user}}`,
    `current-context: ${user}@test`,
    '',
  ].join('\n');
}

async function startEtcd(bin: string, dir: string, log?: (line: string) => void): Promise<{ url: string; proc: GuardedProcess }> {
  const [client, peer] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${client}`;
  const peerUrl = `http://127.0.0.1:${peer}`;
  const proc = startGuarded({
    command: path.join(bin, 'etcd'),
    args: ['--name', 'default', '--data-dir', path.join(dir, 'etcd'), '--listen-client-urls', url,
      '--advertise-client-urls', url, '--listen-peer-urls', peerUrl, '--initial-advertise-peer-urls', peerUrl,
      '--initial-cluster', `default=${peerUrl}`, '--unsafe-no-fsync=true', '--log-level', 'error'],
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
    `--etcd-servers=${etcdUrl}`, `--secure-port=${port}`, '--bind-address=127.0.0.1', '--advertise-address=127.0.0.1',
    `--cert-dir=${f('certs')}`, `--tls-cert-file=${f('server.crt')}`, `--tls-private-key-file=${f('server.key')}`,
    `--token-auth-file=${f('tokens.csv')}`, '--authorization-mode=RBAC', '--service-cluster-ip-range=10.0.0.0/24',
    `--service-account-key-file=${f('sa.key')}`, `--service-account-signing-key-file=${f('sa.key')}`,
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local', '--allow-privileged=true',
    // No controller manager creates the `default` service account in new namespaces.
    '--disable-admission-plugins=ServiceAccount', '--enable-priority-and-fairness=false', '--endpoint-reconciler-type=none', '--v=0',
  ];
}

/** Starts etcd and kube-apiserver on free ports; resolves once the apiserver is ready and `default` exists. */
export async function startKubeApiServer(options: StartKubeApiServerOptions = {}): Promise<KubeApiServer> {
  const bin = findKubeAssets();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'brokkr-kube-'));
  await writePki(dir);
  const token = randomBytes(24).toString('hex');
  const users = new Map((options.users ?? []).map((u) => [u.name, { ...u, token: randomBytes(24).toString('hex') }]));
  const tokenLines = [`${token},admin,admin,"system:masters"`,
    ...[...users.values()].map((u) => `${u.token},${u.name},${u.name},"${(u.groups ?? []).join(',')}"`)];
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
  const kubeconfigPath = path.join(dir, 'kubeconfig');
  await fs.writeFile(kubeconfigPath, kubeconfigYaml(server, caPem, 'admin', token), { mode: 0o600 });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const kubeconfigWithToken = async (name: string, userToken: string) => {
    const safe = name.replace(/[^a-zA-Z0-9_.-]/g, '_');
    const file = path.join(dir, `kubeconfig-${safe}`);
    await fs.writeFile(file, kubeconfigYaml(server, caPem, safe, userToken), { mode: 0o600 });
    return file;
  };
  return {
    kubeconfigPath,
    kubeConfig,
    server,
    token,
    caPem,
    async kubeconfigFor(name) {
      const user = users.get(name);
      if (!user) throw new Error(`unknown test user ${name}`);
      return kubeconfigWithToken(name, user.token);
    },
    kubeconfigWithToken,
    stop,
  };
}
