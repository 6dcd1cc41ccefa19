import { PassThrough } from 'node:stream';
import { Log, type KubeConfig } from '@kubernetes/client-node';

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
 * (`<RFC3339Nano> <text>`), following until the container stops. This is the test seam of the log
 * path: a kubelet-less apiserver (the tests' envtest) serves no logs, so tests hand the streamer a
 * source of their own; in a cluster it is `kubeletLogs`.
 */
export type LogSource = (req: LogStreamRequest) => AsyncIterable<string>;

/** client-node's `Log` (GET …/pods/{pod}/log?follow=true&timestamps=true), split into lines. */
export function kubeletLogs(kc: KubeConfig): LogSource {
  return async function* (req) {
    const stream = new PassThrough();
    const controller = await new Log(kc).log(req.namespace, req.pod, req.container, stream, {
      follow: true,
      timestamps: true,
      ...(req.sinceTime ? { sinceTime: req.sinceTime } : {}),
    });
    const abort = () => controller.abort();
    req.signal.addEventListener('abort', abort, { once: true });
    try {
      let rest = '';
      for await (const chunk of stream) {
        const parts = (rest + (chunk as Buffer).toString('utf8')).split('\n');
        rest = parts.pop() ?? '';
        yield* parts;
      }
      if (rest) yield rest;
    } finally {
      req.signal.removeEventListener('abort', abort);
      controller.abort();
    }
  };
}
