import { expect } from 'chai';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { AppsV1Api, CoreV1Api, KubeConfig, VersionApi } from '@kubernetes/client-node';
import { eventually } from '@brokkr/testkit';

const run = promisify(execFile);
const cli = path.resolve(import.meta.dirname, '..', '..', 'tools', 'cli', 'src', 'bin.ts');

/** What npm start printed that the docs/renders.md walkthrough uses. */
export interface LocalHub {
  /** `…/api/v1`, as printed (the CLI takes it as it is). */
  apiUrl: string;
  adminPak: string;
  agentId: string;
  chartRepository: string;
  kubeconfigPath: string;
}

/** `brokkr <args>` from the CLI's sources, as the admin (only an admin may follow every agent with --wait). */
export async function brokkr(hub: LocalHub, args: string[]): Promise<string> {
  // The environment wins over a config file the machine may have.
  const env = { ...process.env, BROKKR_URL: hub.apiUrl, BROKKR_PAK: hub.adminPak };
  const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', '--conditions=development', cli, ...args], {
    env,
    timeout: 180_000,
  });
  return stdout + stderr;
}

/** An admin sets an agent's annotation: a key/value pair that values may read as `{{ agent.annotations.<key> }}`. */
export async function annotateAgent(hub: LocalHub, key: string, value: string): Promise<void> {
  const res = await fetch(`${hub.apiUrl}/agents/${hub.agentId}/annotations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${hub.adminPak}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: hub.agentId, key, value }),
  });
  expect(res.status, await res.clone().text()).to.equal(201);
}

/** A values file in a directory of its own, removed with the test's. */
export async function valuesFile(text: string): Promise<{ file: string; remove: () => Promise<void> }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'local-renders-'));
  const file = path.join(dir, 'values.yaml');
  await fs.writeFile(file, text);
  return { file, remove: () => fs.rm(dir, { recursive: true, force: true }) };
}

export function kubeClients(kubeconfigPath: string) {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  return { core: kc.makeApiClient(CoreV1Api), apps: kc.makeApiClient(AppsV1Api), version: kc.makeApiClient(VersionApi) };
}

/**
 * The chart examples/charts/hello as the agent applied it for stack `release`: its ConfigMap holds
 * the greeting (from the values, here from the agent's annotation) and `.Capabilities.KubeVersion`,
 * which must be the local cluster's own version once the agent has reported its facts (a render made
 * before them used the default and is rendered again, so this waits for it).
 */
export async function chartConfigMapData(kubeconfigPath: string, release: string): Promise<Record<string, string>> {
  const kube = kubeClients(kubeconfigPath);
  const { gitVersion } = await kube.version.getCode();
  return eventually(
    async () => {
      const cm = await kube.core.readNamespacedConfigMap({ name: `${release}-hello`, namespace: 'default' });
      return cm.data?.kubeVersion === gitVersion ? cm.data : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 500, what: `ConfigMap ${release}-hello with kubeVersion ${gitVersion}` },
  );
}
