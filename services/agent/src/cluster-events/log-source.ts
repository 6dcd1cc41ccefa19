import type { KubeClient } from '../kube/client.ts';

export interface LogStreamRequest {
  namespace: string;
  pod: string;
  container: string;
  /** RFC 3339: only lines from then on (the kubelet rounds it down to the second). */
  sinceTime?: string | undefined;
  signal: AbortSignal;
}

/**
 * Where container logs come from: lines as the kubelet writes them with `timestamps=true`
 * (`<RFC3339Nano> <text>`), following until the container stops or `signal` aborts.
 */
export type LogSource = (req: LogStreamRequest) => AsyncIterable<string>;

/**
 * GET …/pods/{pod}/log?follow=true&timestamps=true through the agent's own client, split into
 * lines. Not client-node's `Log`: it pipes the response into the caller's stream without handling
 * the response's errors, so aborting a tail (the pod deleted or opted out, the agent stopping)
 * threw an uncaught AbortError and took the agent down.
 */
export function kubeletLogs(kube: KubeClient): LogSource {
  return async function* (req) {
    const path = `/api/v1/namespaces/${encodeURIComponent(req.namespace)}/pods/${encodeURIComponent(req.pod)}/log`;
    const query = { container: req.container, follow: 'true', timestamps: 'true', sinceTime: req.sinceTime };
    const decoder = new TextDecoder();
    let rest = '';
    for await (const chunk of kube.stream(path, query, req.signal)) {
      const parts = (rest + decoder.decode(chunk, { stream: true })).split('\n');
      rest = parts.pop() ?? '';
      yield* parts;
    }
    rest += decoder.decode();
    if (rest) yield rest;
  };
}
