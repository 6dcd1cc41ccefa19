import type { KubeClient } from '../kube/client.ts';
import { errorMessage } from '../util/async.ts';
import type { DiagnosedPod } from './pod-status.ts';

export interface LogTailLimits {
  /** Last lines per container (`tailLines`). */
  lines: number;
  /** Bytes kept per container: the newest, cut at a line start. */
  bytes: number;
  /** Bytes for all containers together, so a result stays well under the broker's body limit (2 MiB). */
  totalBytes: number;
}

const LOG_TIMEOUT_MS = 15_000;
/** What the apiserver may send at most for one container (memory bound; beyond it the server cuts the newest lines). */
const SERVER_CAP_BYTES = 1_048_576;

/** The newest `max` bytes of a log, starting at a line boundary when one is near, marked as cut. */
export function keepNewest(text: string, max: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return text;
  let tail = bytes
    .subarray(bytes.length - max)
    .toString('utf8')
    .replace(/^\uFFFD+/, '');
  const newline = tail.indexOf('\n');
  if (newline >= 0 && newline < tail.length - 1) tail = tail.slice(newline + 1);
  return `[… ${bytes.length - Buffer.byteLength(tail)} earlier bytes cut]\n${tail}`;
}

/**
 * Log tails per container of each pod (`spec.containers`; init containers are not included, as in
 * Brokkr), keyed `<pod>/<container>`. A failed fetch is that container's value `Error: <message>`
 * (Brokkr's convention): the apiserver refuses when it cannot reach the node's kubelet. A pod not
 * scheduled yet is not asked (the apiserver would answer an empty log).
 * The server sends at most `tailLines` lines and a hard cap of bytes; we keep the newest `bytes`.
 */
export async function collectLogTails(
  kube: KubeClient,
  pods: readonly DiagnosedPod[],
  limits: LogTailLimits,
): Promise<Record<string, string>> {
  const tails: Record<string, string> = {};
  let budget = limits.totalBytes;
  for (const pod of pods) {
    const namespace = pod.metadata.namespace ?? 'default';
    for (const { name: container } of pod.spec?.containers ?? []) {
      const key = `${pod.metadata.name}/${container}`;
      if (!pod.spec?.nodeName) {
        // The apiserver answers an empty 200 for a pod no node runs: say why there is nothing.
        tails[key] = 'Error: the pod is not scheduled to a node yet, so no container has logged';
        continue;
      }
      if (budget <= 0) {
        tails[key] = `Error: not fetched: the result's log budget (${limits.totalBytes} bytes) is spent`;
        continue;
      }
      try {
        const text = await kube.request<string>(
          'GET',
          `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(pod.metadata.name)}/log`,
          {
            query: { container, tailLines: String(limits.lines), limitBytes: String(SERVER_CAP_BYTES) },
            accept: '*/*',
            responseType: 'text',
            timeoutMs: LOG_TIMEOUT_MS,
          },
        );
        tails[key] = keepNewest(text, Math.min(limits.bytes, budget));
      } catch (err) {
        tails[key] = `Error: ${errorMessage(err)}`;
      }
      budget -= Buffer.byteLength(tails[key]!);
    }
  }
  return tails;
}
