import fs from 'node:fs/promises';
import type http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createLogger } from '@brokkr/logger';
import type { KubeApiServer } from '@brokkr/testkit';
import { Discovery } from '../../src/kube/discovery.ts';
import { KubeObjects } from '../../src/kube/objects.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { LiveChannel } from '../../src/live/channel.ts';
import { agentChannelUrl } from '../../src/live/url.ts';
import { startTelemetry, type RunningTelemetry } from '../../src/telemetry/index.ts';
import type { Kubectl } from './kubectl.ts';

/**
 * The kubelet's container-log endpoint, played by the test for a kubelet-less apiserver. A Node
 * whose address and kubelet port point here (`registerNode`) makes the real apiserver proxy
 * GET …/pods/{pod}/log for pods bound to it, so the agent reads logs exactly as in a cluster. The
 * test says what each `namespace/pod/container` has printed (`<RFC3339Nano> <text>` lines, as the
 * kubelet writes them with timestamps=true). A request gets the lines at or after its `sinceTime`
 * (the kubelet rounds it down to the second), then stays open, like `follow`, until the reader goes.
 */
export class KubeletLogEndpoint {
  readonly requests: LogRequest[] = [];
  private readonly lines = new Map<string, string[]>();
  private readonly open = new Set<LogRequest>();

  private constructor(private readonly server: https.Server) {}

  /** Serves TLS with the apiserver's own certificate (the apiserver does not verify its kubelets'). */
  static async start(kube: KubeApiServer): Promise<KubeletLogEndpoint> {
    const [cert, key] = await Promise.all(['server.crt', 'server.key'].map((f) => fs.readFile(path.join(kube.dir, f))));
    const server = https.createServer({ cert, key });
    const endpoint = new KubeletLogEndpoint(server);
    server.on('request', (req, res) => endpoint.serve(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return endpoint;
  }

  /** A Node (no kubelet behind it but this endpoint) for the test's pods to be bound to. */
  async registerNode(kubectl: Kubectl, name: string): Promise<void> {
    const port = (this.server.address() as AddressInfo).port;
    await kubectl.create('/api/v1/nodes', { metadata: { name } });
    await kubectl.mergePatch(`/api/v1/nodes/${name}/status`, {
      status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: port } } },
    });
  }

  print(namespace: string, pod: string, container: string, ...lines: string[]): void {
    const key = `${namespace}/${pod}/${container}`;
    this.lines.set(key, [...(this.lines.get(key) ?? []), ...lines]);
  }

  /** Log streams of this pod still open (a reader that went away has closed its stream). */
  openStreams(pod: string): number {
    return [...this.open].filter((r) => r.pod === pod).length;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** GET /containerLogs/{namespace}/{pod}/{container}?follow&timestamps&sinceTime */
  private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'https://kubelet');
    const [, kind, namespace = '', pod = '', container = ''] = url.pathname.split('/');
    if (kind !== 'containerLogs') {
      res.writeHead(404).end();
      return;
    }
    const request: LogRequest = { namespace, pod, container, sinceTime: url.searchParams.get('sinceTime') ?? undefined };
    this.requests.push(request);
    this.open.add(request);
    res.on('close', () => this.open.delete(request));
    const since = request.sinceTime ? Math.floor(Date.parse(request.sinceTime) / 1000) * 1000 : undefined;
    const all = this.lines.get(`${namespace}/${pod}/${container}`) ?? [];
    const lines = since === undefined ? all : all.filter((l) => Date.parse(l.slice(0, l.indexOf(' '))) >= since);
    res.writeHead(200, { 'content-type': 'text/plain' });
    for (const line of lines) res.write(`${line}\n`);
  }
}

export interface LogRequest {
  namespace: string;
  pod: string;
  container: string;
  sinceTime: string | undefined;
}

/** A kubelet-style line: `<RFC3339Nano> <text>`. */
export const stamped = (at: Date, text: string, nanos = '000001') => `${at.toISOString().replace('Z', '')}${nanos}Z ${text}`;

export interface InProcessTelemetryOptions {
  hubUrl: string;
  agent: { id: string; pak: string };
  kube: KubeApiServer;
  client: KubeClient;
  /** Where the resume cursor lives. */
  stateNamespace: string;
}

/**
 * The agent's telemetry streamers and its own live channel, dialled to the real api, run in the
 * test's process so that a test can stop and restart them (the cursor survives in the cluster).
 */
export class InProcessTelemetry {
  private readonly logger = createLogger({ service: 'agent-test', level: 'warn' });
  private channel: LiveChannel | undefined;
  private telemetry: RunningTelemetry | undefined;

  constructor(private readonly options: InProcessTelemetryOptions) {}

  async start(): Promise<void> {
    const { hubUrl, agent, kube, client, stateNamespace } = this.options;
    const channel = new LiveChannel({
      url: agentChannelUrl(hubUrl, undefined),
      pak: agent.pak,
      userAgent: 'brokkr-ts-agent/test',
      forceRest: false,
      logger: this.logger,
    });
    this.channel = channel;
    const up = new Promise<void>((resolve) => channel.on('state', (state: string) => state === 'up' && resolve()));
    channel.start();
    await up;
    this.telemetry = await startTelemetry({
      kube: client,
      objects: new KubeObjects(client),
      discovery: new Discovery(client, 4),
      live: channel,
      agentId: agent.id,
      kubeconfig: kube.kubeconfigPath,
      watchNamespace: undefined,
      stateNamespace,
      logger: this.logger,
    });
  }

  async stop(): Promise<void> {
    await this.telemetry?.stop();
    this.telemetry = undefined;
    await this.channel?.stop();
  }
}
