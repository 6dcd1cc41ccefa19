/**
 * `npm start`'s embedded default cluster: a local kube-apiserver + etcd with the controllers, the
 * scheduler and KWOK's simulated nodes, so pods run and Deployments become Available (the same
 * cached binaries the agent's tests use; built on first use while the hub is already serving), a
 * generator and an ACTIVE agent named `local` registered through the api, and our agent running
 * against it.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { ensureKubeAssets, findKubeAssets, freePort, startKubeCluster, type KubeClusterHandle } from '@brokkr/infra';
import { startChild, type Child } from './child.ts';
import { firstDeploymentScript, BEGIN_MARKER, END_MARKER } from './first-deployment.ts';
import { ensureActiveAgent, ensureGenerator, HubClient } from './hub-client.ts';
import { ensureAgentNamespace, makeLocalTrust } from './local-trust.ts';

export interface LocalClusterOptions {
  apiUrl: string;
  adminPak: string;
  /** The services' temporary directory (the kube-apiserver's own goes inside it). */
  workDir: string;
  say: (line: string) => void;
  /** Called if our agent exits on its own. */
  onAgentExit: (code: number | null) => void;
  /** `--require-signatures`: the agent gets a trust policy and applies only what `local-dev`'s key signed (local-trust.ts). */
  requireSignatures?: boolean;
}

export interface LocalCluster {
  stop(): Promise<void>;
}

/** Starts the cluster and the agent; `stop()` may be called at any moment, even mid-build. */
export function startLocalCluster(options: LocalClusterOptions): LocalCluster {
  const abort = new AbortController();
  let kube: KubeClusterHandle | undefined;
  let agent: Child | undefined;
  const { say } = options;
  const running = (async () => {
    const started = Date.now();
    if (!findKubeAssets('full'))
      say(
        'local cluster: building kube-apiserver, etcd, the controllers, the scheduler and KWOK from the Go module proxy (first run only, about 10 minutes; the hub is usable meanwhile)…',
      );
    await ensureKubeAssets({ signal: abort.signal, onProgress: (line) => say(`local cluster: ${line}`) });
    if (abort.signal.aborted) return;
    say('local cluster: starting etcd, kube-apiserver, the controllers, the scheduler and 2 simulated nodes (KWOK)…');
    kube = await startKubeCluster({ tmpDir: options.workDir, nodes: 2 });
    if (abort.signal.aborted) return;
    const hub = new HubClient(options.apiUrl, options.adminPak);
    const generator = await ensureGenerator(hub, 'local-dev', 'npm start: owns the stacks of the first deployment');
    const local = await ensureActiveAgent(hub, 'local', generator.id);
    const trust = options.requireSignatures ? await makeLocalTrust(options.workDir) : undefined;
    if (trust) await ensureAgentNamespace(kube.kubeconfigPath, 'brokkr-agent');
    if (trust)
      say(`signing key: ${trust.signingKey}   (the local agent applies only what it signed: brokkr apply --sign ${trust.signingKey})`);
    agent = startChild({
      service: 'agent',
      env: {
        BROKKR__AGENT__BROKER_URL: new URL(options.apiUrl).origin,
        BROKKR__AGENT__PAK: local.pak,
        BROKKR__AGENT__AGENT_NAME: 'local',
        BROKKR__AGENT__CLUSTER_NAME: 'local',
        BROKKR__AGENT__KUBECONFIG: kube.kubeconfigPath,
        BROKKR__AGENT__HEALTH_PORT: String(await freePort()),
        BROKKR__AGENT__POLLING_INTERVAL: '5',
        // Where the agent chart would install it: no stack may place anything there.
        BROKKR__AGENT__NAMESPACE: 'brokkr-agent',
        BROKKR__LOG__FORMAT: process.env.BROKKR__LOG__FORMAT ?? 'text',
        ...(trust ? { BROKKR__AGENT__TRUST_POLICY_FILE: trust.policyFile } : {}),
      },
      onExit: options.onAgentExit,
    });
    const caFile = path.join(path.dirname(kube.kubeconfigPath), 'ca.crt');
    await fs.access(caFile);
    say(
      `local cluster ready in ${((Date.now() - started) / 1000).toFixed(1)} s: kube-apiserver ${kube.server}, nodes ${kube.nodeNames.join(', ')} (simulated: pods run and become Ready, no container runs), agent "local" (${local.id})`,
    );
    say(`kubeconfig: ${kube.kubeconfigPath}`);
    const script = firstDeploymentScript({
      apiUrl: options.apiUrl,
      adminPak: options.adminPak,
      generator,
      agent: local,
      kube: { server: kube.server, token: kube.token, caFile, kubeconfigPath: kube.kubeconfigPath },
    });
    process.stdout.write(`\n${BEGIN_MARKER}\n${script}\n${END_MARKER}\n\n`);
  })().catch((err: unknown) => {
    if (!abort.signal.aborted) say(`local cluster failed (the hub keeps running): ${err instanceof Error ? err.message : String(err)}`);
  });
  return {
    async stop() {
      abort.abort();
      await running;
      await agent?.stop();
      await kube?.stop();
    },
  };
}
