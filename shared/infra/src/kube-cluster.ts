/**
 * A cluster where pods run, without a kubelet: the bare kube-apiserver + etcd (kube-apiserver.ts)
 * plus kube-controller-manager (Deployments → ReplicaSets → Pods, Jobs, service accounts, events),
 * kube-scheduler, and KWOK, which keeps simulated nodes Ready and moves pods through their
 * lifecycle (docs/adr/0033). Pods become Running and Ready, a Job's pods complete, and a test can
 * ask for failure through the image tag or an annotation (shared/infra/kwok/pod-stages.yaml:
 * `…:never-ready`, `…:crashloop`, `brokkr.io/kwok-fail: "true"`). Everything runs under the guard.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { Agent, request } from 'undici';
import { parseAllDocuments, stringify } from 'yaml';
import { startGuarded, type GuardedProcess } from './guarded-process.ts';
import { startKubeApiServer, type KubeApiServerHandle, type StartKubeApiServerOptions } from './kube-apiserver.ts';
import { findKubeAssets } from './kube-assets.ts';
import { freePort } from './ports.ts';
import { repoRoot } from './paths.ts';

export interface StartKubeClusterOptions extends StartKubeApiServerOptions {
  /** Simulated nodes (default 2), named kwok-node-0, kwok-node-1, … */
  nodes?: number;
  /**
   * false: the failures a test can ask for are left out, and every pod becomes Ready whatever its
   * image (a cluster where a release works that fails elsewhere). Default true.
   */
  failures?: boolean;
}

export interface KubeClusterHandle extends KubeApiServerHandle {
  nodeNames: string[];
  /**
   * What every container of the cluster "prints": KWOK serves this file as each container's log
   * (`GET …/pods/{name}/log`, following it), one line per entry in the container runtime's format,
   * `<RFC 3339 time> stdout F <text>` — appendPodLog writes one.
   */
  podLogFile: string;
  appendPodLog(text: string): Promise<void>;
}

// KWOK's own node stages and pod deletion, copied beside the binaries by scripts/build-k8s-assets.sh;
// the pod lifecycles are ours.
const KWOK_STAGES = ['node-initialize.yaml', 'node-heartbeat-with-lease.yaml', 'pod-delete.yaml'];
const OWN_POD_STAGES = path.join(repoRoot, 'shared', 'infra', 'kwok', 'pod-stages.yaml');
// Only the nodes carrying this annotation are KWOK's (a test may add real-looking nodes of its own).
const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';

const FAILURE_STAGES = new Set(['brokkr-pod-never-ready', 'brokkr-pod-crashloop', 'brokkr-pod-fail']);
// The selector terms that keep the on-request failures away from the ordinary stages.
const mentionsFailure = (key: string) => /never-ready|crashloop|kwok-fail/.test(key);

interface StageDocument {
  metadata: { name: string };
  spec: { selector: { matchExpressions: { key: string }[] } };
}

/** Our pod stages, without the failures when the cluster is to run every image. */
async function ownPodStages(failures: boolean): Promise<string> {
  const text = await fs.readFile(OWN_POD_STAGES, 'utf8');
  if (failures) return text;
  const stages = parseAllDocuments(text)
    .map((doc) => doc.toJS() as StageDocument)
    .filter((stage) => !FAILURE_STAGES.has(stage.metadata.name));
  for (const stage of stages)
    stage.spec.selector.matchExpressions = stage.spec.selector.matchExpressions.filter((e) => !mentionsFailure(e.key));
  return stages.map((stage) => stringify(stage)).join('---\n');
}

/** Every container's log is the one file (KWOK's ClusterLogs), followed while it grows. */
function clusterLogs(logFile: string): string {
  return stringify({
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'ClusterLogs',
    metadata: { name: 'every-container' },
    spec: { selector: {}, logs: [{ logsFile: logFile, follow: true }] },
  });
}

async function writeStages(bin: string, dir: string, failures: boolean): Promise<string> {
  const kwokOwn = await Promise.all(KWOK_STAGES.map((name) => fs.readFile(path.join(bin, '..', 'kwok-stages', name), 'utf8')));
  const logFile = path.join(dir, 'pod.log');
  await fs.writeFile(logFile, '');
  const documents = [...kwokOwn, await ownPodStages(failures), clusterLogs(logFile)];
  const stages = path.join(dir, 'kwok-stages.yaml');
  await fs.writeFile(stages, documents.map((d) => d.trim()).join('\n---\n') + '\n');
  return stages;
}

function controlPlane(
  bin: string,
  api: KubeApiServerHandle,
  kwok: { stages: string; port: number },
  log?: (line: string) => void,
): GuardedProcess[] {
  const kubeconfig = `--kubeconfig=${api.kubeconfigPath}`;
  const start = (name: string, args: string[], stopSignal?: 'SIGTERM') =>
    startGuarded({
      command: path.join(bin, name),
      args,
      ...(stopSignal ? { stopSignal } : {}),
      ...(log ? { onOutput: (line) => log(`[${name}] ${line}`) } : {}),
    });
  return [
    // It does not stop on SIGINT (the guard's default): SIGTERM, or every cluster's stop waits 10 s for the SIGKILL.
    start(
      'kube-controller-manager',
      [
        kubeconfig,
        '--leader-elect=false',
        '--secure-port=0',
        `--service-account-private-key-file=${path.join(api.dir, 'sa.key')}`,
        `--root-ca-file=${path.join(api.dir, 'ca.crt')}`,
        '--use-service-account-credentials=false',
        // The node-lifecycle controller stays on: it lifts the not-ready taint every new Node starts with.
        '--controllers=*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-route',
        '--v=0',
      ],
      'SIGTERM',
    ),
    // No authentication/authorization kubeconfigs: with --secure-port=0 they stall the scheduler.
    start('kube-scheduler', [kubeconfig, '--leader-elect=false', '--secure-port=0', '--v=0']),
    start('kwok', [
      kubeconfig,
      `--config=${kwok.stages}`,
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
      // The nodes' kubelet endpoint is KWOK's own server: the apiserver proxies pod logs to it
      // (it does not verify a kubelet's serving certificate, so KWOK's self-signed one does).
      '--node-ip=127.0.0.1',
      `--server-address=127.0.0.1:${kwok.port}`,
      `--node-port=${kwok.port}`,
      '--cidr=10.0.0.0/24',
    ]),
  ];
}

function nodeManifest(name: string): object {
  const resources = { cpu: '32', memory: '256Gi', pods: '110' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', [KWOK_NODE_ANNOTATION]: 'fake' },
      labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', type: 'kwok' },
    },
    status: { allocatable: resources, capacity: resources },
  };
}

interface Api {
  call(method: 'GET' | 'POST', p: string, body?: object): Promise<{ status: number; json: unknown }>;
  close(): Promise<void>;
}

function apiClient(api: KubeApiServerHandle): Api {
  const dispatcher = new Agent({ connect: { ca: api.caPem } });
  return {
    async call(method, p, body) {
      const res = await request(`${api.server}${p}`, {
        method,
        dispatcher,
        headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.statusCode, json: await res.body.json().catch(() => null) };
    },
    close: () => dispatcher.close(),
  };
}

/** Ready: every node Ready and untainted, and the service-account controller at work (`default` exists). */
async function clusterReady(api: Api, nodeNames: string[]): Promise<boolean> {
  const sa = await api.call('GET', '/api/v1/namespaces/default/serviceaccounts/default');
  if (sa.status !== 200) return false;
  const nodes = (await api.call('GET', '/api/v1/nodes')).json as { items?: NodeStatus[] } | null;
  const ready = (nodes?.items ?? []).filter(
    (n) =>
      nodeNames.includes(n.metadata.name) &&
      (n.spec?.taints ?? []).length === 0 &&
      (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
  );
  return ready.length === nodeNames.length;
}

interface NodeStatus {
  metadata: { name: string };
  spec?: { taints?: unknown[] };
  status?: { conditions?: { type: string; status: string }[] };
}

async function waitUntil(check: () => Promise<boolean>, processes: GuardedProcess[], timeoutMs: number): Promise<void> {
  let exited: string | undefined;
  processes.forEach((p, i) => void p.exited.then(() => (exited ??= ['kube-controller-manager', 'kube-scheduler', 'kwok'][i])));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`${exited} exited while the cluster was starting`);
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the cluster's nodes were not Ready within ${timeoutMs} ms`);
}

/** Starts the full cluster; resolves once its nodes are Ready and pods can be scheduled. */
export async function startKubeCluster(options: StartKubeClusterOptions = {}): Promise<KubeClusterHandle> {
  const bin = findKubeAssets('full');
  if (!bin)
    throw new Error(
      'kube-controller-manager, kube-scheduler or kwok not found: ensureKubeAssets() (scripts/build-k8s-assets.sh) builds them',
    );
  const api = await startKubeApiServer(options);
  const kwok = { stages: await writeStages(bin, api.dir, options.failures ?? true), port: await freePort() };
  const processes = controlPlane(bin, api, kwok, options.log);
  const client = apiClient(api);
  const stop = async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await client.close();
    await api.stop();
  };
  const nodeNames = Array.from({ length: options.nodes ?? 2 }, (_v, i) => `kwok-node-${i}`);
  try {
    for (const name of nodeNames) {
      const created = await client.call('POST', '/api/v1/nodes', nodeManifest(name));
      if (created.status !== 201) throw new Error(`creating node ${name}: HTTP ${created.status} ${JSON.stringify(created.json)}`);
    }
    await waitUntil(() => clusterReady(client, nodeNames), processes, 90_000);
  } catch (err) {
    await stop();
    throw err;
  }
  const podLogFile = path.join(api.dir, 'pod.log');
  const appendPodLog = (text: string) => fs.appendFile(podLogFile, `${new Date().toISOString()} stdout F ${text}\n`);
  return { ...api, nodeNames, podLogFile, appendPodLog, stop };
}
