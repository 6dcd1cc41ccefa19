import { parseAllDocuments } from 'yaml';

/** A Kubernetes object as parsed from a manifest (only the fields the agent reads are typed). */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** A deployment object's YAML cannot be turned into objects; the whole object fails. */
export class ManifestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ManifestError';
  }
}

/** Aliases are legal YAML but a few nested ones expand exponentially ("billion laughs"). */
const MAX_ALIAS_COUNT = 50;
const MAX_DOCUMENTS = 5000;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function checkObject(value: unknown, index: number): KubeObject {
  const where = `document ${index + 1}`;
  if (!isRecord(value)) throw new ManifestError(`${where} is not a mapping (a Kubernetes object)`);
  if (typeof value.apiVersion !== 'string' || !value.apiVersion) throw new ManifestError(`${where} has no apiVersion`);
  if (typeof value.kind !== 'string' || !value.kind) throw new ManifestError(`${where} has no kind`);
  checkMetadata(value.metadata, `${where} (${value.kind})`);
  return value as KubeObject;
}

function checkMetadata(meta: unknown, where: string): void {
  if (!isRecord(meta) || typeof meta.name !== 'string' || !meta.name) {
    throw new ManifestError(`${where} has no metadata.name (generateName cannot be server-side applied)`);
  }
  if (meta.namespace !== undefined && typeof meta.namespace !== 'string')
    throw new ManifestError(`${where} '${meta.name}' has a non-string metadata.namespace`);
  for (const field of ['labels', 'annotations'] as const) {
    const map = meta[field];
    if (map === undefined || map === null) continue;
    if (!isRecord(map) || Object.values(map).some((v) => typeof v !== 'string')) {
      throw new ManifestError(`${where} '${meta.name}' metadata.${field} must map strings to strings`);
    }
  }
}

/**
 * Multi-document YAML → objects, in document order. Empty and null documents are skipped; any
 * syntax error, alias bomb, duplicate key or non-object document fails the whole manifest.
 */
export function parseManifests(source: string): KubeObject[] {
  // An empty stream is an empty array too.
  const list = [...parseAllDocuments(source, { uniqueKeys: true, merge: true, prettyErrors: false })];
  if (list.length > MAX_DOCUMENTS) throw new ManifestError(`too many YAML documents (${list.length} > ${MAX_DOCUMENTS})`);
  const objects: KubeObject[] = [];
  list.forEach((doc, i) => {
    const error = doc.errors[0];
    if (error) throw new ManifestError(`YAML error in document ${i + 1}: ${error.message}`);
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (err) {
      throw new ManifestError(`document ${i + 1}: ${(err as Error).message}`);
    }
    if (value === null || value === undefined) return;
    objects.push(checkObject(value, i));
  });
  return objects;
}
