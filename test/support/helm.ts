import { execFile } from 'node:child_process';
import https from 'node:https';
import path from 'node:path';
import { promisify } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '@brokkr/infra';

const exec = promisify(execFile);

/** A rendered object, loosely typed: tests read the fields they check. */
export interface K8sObject extends KubernetesObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  rules?: unknown[];
  spec?: Record<string, unknown>;
}

export const chartDir = (chart: string) => path.join(repoRoot, 'deploy/helm', chart);

export function parseObjects(text: string, origin: string): K8sObject[] {
  return parseAllDocuments(text).flatMap((doc) => {
    if (doc.errors.length) throw new Error(`${origin}: ${doc.errors[0]!.message}`);
    const object = doc.toJS() as K8sObject | null;
    return object ? [object] : [];
  });
}

export interface TemplateOptions {
  release: string;
  namespace: string;
  values?: string[];
}

/** `helm template` of a chart in deploy/helm, parsed. */
export async function helmTemplate(helm: string, chart: string, options: TemplateOptions): Promise<K8sObject[]> {
  const args = ['template', options.release, chartDir(chart), '--namespace', options.namespace];
  for (const v of options.values ?? []) args.push('--values', v);
  const { stdout } = await exec(helm, args, { maxBuffer: 16 * 1024 * 1024 });
  return parseObjects(stdout, `helm template ${chart}`);
}

/** Runs helm with arguments; resolves with stdout+stderr, rejects with them on a non-zero exit. */
export async function runHelm(helm: string, args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await exec(helm, args, { maxBuffer: 16 * 1024 * 1024 });
    return stdout + stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`helm ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? e.message}`, { cause: err });
  }
}

/** Where and how the test kube-apiserver is reached (testkit's KubeApiServer has these fields). */
export interface KubeEndpoint {
  server: string;
  token: string;
  caPem: string;
}

interface KubeReply {
  status: number;
  body: string;
}

function kubeRequest(kube: KubeEndpoint, method: string, urlPath: string, body?: unknown): Promise<KubeReply> {
  const url = new URL(urlPath, kube.server);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method,
        ca: kube.caPem,
        headers: {
          authorization: `Bearer ${kube.token}`,
          accept: 'application/json',
          // Server-side apply takes YAML, and JSON is YAML.
          ...(payload ? { 'content-type': 'application/apply-patch+yaml' } : {}),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

/** kind -> resource of an apiVersion, from the server's discovery documents. */
async function resourceOf(kube: KubeEndpoint, cache: Map<string, ApiResource[]>, apiVersion: string, kind: string) {
  let list = cache.get(apiVersion);
  if (!list) {
    const reply = await kubeRequest(kube, 'GET', apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`);
    list = reply.status === 200 ? (JSON.parse(reply.body) as { resources: ApiResource[] }).resources : [];
    cache.set(apiVersion, list);
  }
  return list.find((r) => r.kind === kind && !r.name.includes('/'));
}

/**
 * Server-side applies every object with dryRun=All and fieldValidation=Strict: admission,
 * defaulting and schema validation run, unknown or duplicate fields are errors, nothing is stored.
 * Raw requests on purpose: a typed client would drop fields its model does not know before sending.
 * Namespaces the objects live in are created for real first (a dry run into a missing namespace is
 * refused). Returns one line per refused object.
 */
export async function serverSideDryRun(kube: KubeEndpoint, objects: K8sObject[]): Promise<string[]> {
  const cache = new Map<string, ApiResource[]>();
  const namespaces = new Set(objects.flatMap((o) => (o.metadata.namespace ? [o.metadata.namespace] : [])));
  for (const name of namespaces) {
    const reply = await kubeRequest(kube, 'PATCH', `/api/v1/namespaces/${name}?fieldManager=brokkr-tests`, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name },
    });
    if (reply.status >= 300) throw new Error(`cannot create namespace ${name}: ${reply.body}`);
  }
  const errors: string[] = [];
  for (const object of objects) {
    const what = `${object.kind}/${object.metadata.name}`;
    const resource = await resourceOf(kube, cache, object.apiVersion, object.kind);
    if (!resource) {
      errors.push(`${what}: the server knows no ${object.apiVersion} ${object.kind}`);
      continue;
    }
    const base = object.apiVersion.includes('/') ? `/apis/${object.apiVersion}` : `/api/${object.apiVersion}`;
    const scope = resource.namespaced ? `/namespaces/${object.metadata.namespace ?? 'default'}` : '';
    const query = 'dryRun=All&fieldValidation=Strict&fieldManager=brokkr-tests&force=true';
    const reply = await kubeRequest(kube, 'PATCH', `${base}${scope}/${resource.name}/${object.metadata.name}?${query}`, object);
    if (reply.status >= 300)
      errors.push(`${what}: ${reply.status} ${(JSON.parse(reply.body) as { message?: string }).message ?? reply.body}`);
  }
  return errors;
}
