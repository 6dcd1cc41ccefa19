import {
  agentConfigSchema,
  apiConfigSchema,
  auditWriterConfigSchema,
  maintenanceConfigSchema,
  parseEnv,
  rendererConfigSchema,
  webhookDispatcherConfigSchema,
} from '@brokkr/config';
import type { K8sObject } from './helm.ts';

/** Each service's config schema, by the folder its container command runs from. */
const SCHEMAS = {
  api: apiConfigSchema,
  'webhook-dispatcher': webhookDispatcherConfigSchema,
  'audit-writer': auditWriterConfigSchema,
  maintenance: maintenanceConfigSchema,
  renderer: rendererConfigSchema,
  agent: agentConfigSchema,
} as const;

export type ServiceName = keyof typeof SCHEMAS;

/** Valid stand-ins for values that come from a Secret the test does not have. */
const SECRET_STAND_INS: Record<string, string> = {
  BROKKR__DATABASE__URL: 'postgres://brokkr:secret@db.example.com:5432/brokkr',
  BROKKR__BROKER__PAK_HASH: 'a'.repeat(64),
  BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: 'b'.repeat(64),
  BROKKR__AGENT__PAK: 'agent-pak',
};

interface EnvEntry {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } };
}

export interface Container {
  name: string;
  image: string;
  command: string[];
  env?: EnvEntry[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  ports?: { name: string; containerPort: number }[];
  livenessProbe?: { httpGet?: { path: string; port: string } };
  readinessProbe?: { httpGet?: { path: string; port: string } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}

export interface PodSpec {
  serviceAccountName?: string;
  containers: Container[];
  nodeSelector?: Record<string, string>;
  tolerations?: unknown[];
  imagePullSecrets?: { name: string }[];
}

export function podSpec(deployment: K8sObject): PodSpec {
  return (deployment.spec as { template: { spec: PodSpec } }).template.spec;
}

export interface ContainerSettings {
  service: ServiceName;
  /** The environment the container starts with (secret values replaced by valid stand-ins). */
  env: Record<string, string>;
  /** Secret references, by variable name. */
  secretRefs: Record<string, { name: string; key: string }>;
  /** Variables the service's config schema does not define. */
  unknown: string[];
  /** The service's parsed config, or the error that parsing raised. */
  parsed: Record<string, unknown> | Error;
}

/** The container's environment: its ConfigMaps, then its own entries (secret values replaced by stand-ins). */
function environment(objects: K8sObject[], deployment: K8sObject, container: Container) {
  const env: Record<string, string> = {};
  const secretRefs: Record<string, { name: string; key: string }> = {};
  for (const from of container.envFrom ?? []) {
    const name = from.configMapRef?.name;
    const map = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === name);
    if (!map) throw new Error(`${deployment.metadata.name}: envFrom ConfigMap ${name} is not rendered`);
    Object.assign(env, map.data);
  }
  for (const entry of container.env ?? []) {
    const ref = entry.valueFrom?.secretKeyRef;
    if (ref) secretRefs[entry.name] = ref;
    env[entry.name] = valueOf(deployment, entry);
  }
  return { env, secretRefs };
}

/**
 * What the container sees for one entry: a Secret's stand-in, the downward API's value of a
 * `fieldRef` as the kubelet fills it in (the namespace only), or the literal value.
 */
function valueOf(deployment: K8sObject, entry: EnvEntry): string {
  if (entry.valueFrom?.secretKeyRef) return SECRET_STAND_INS[entry.name] ?? 'stand-in';
  if (entry.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace') return deployment.metadata.namespace ?? '';
  return entry.value ?? '';
}

function tryParse(schema: (typeof SCHEMAS)[ServiceName], env: Record<string, string>): Record<string, unknown> | Error {
  try {
    return parseEnv(schema, env) as Record<string, unknown>;
  } catch (err) {
    return err as Error;
  }
}

/** What a Deployment's container would see at start, checked against its service's config schema. */
export function containerSettings(objects: K8sObject[], deployment: K8sObject): ContainerSettings {
  const container = podSpec(deployment).containers[0]!;
  // `node [flags…] services/<name>/dist/main.js` (the api runs with its start script's node flags).
  const service = /^services\/([a-z-]+)\/dist\/main\.js$/.exec(container.command.at(-1) ?? '')?.[1] as ServiceName;
  const schema = SCHEMAS[service];
  if (!schema) throw new Error(`${deployment.metadata.name}: unknown service command ${container.command.join(' ')}`);
  const { env, secretRefs } = environment(objects, deployment, container);
  const known = Object.keys(schema.shape);
  return { service, env, secretRefs, unknown: Object.keys(env).filter((k) => !known.includes(k)), parsed: tryParse(schema, env) };
}
