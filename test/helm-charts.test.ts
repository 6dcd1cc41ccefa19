import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { CoreV1Api } from '@kubernetes/client-node';
import { connect } from '@nats-io/transport-node';
import { parse } from 'yaml';
import { NATS_USERS, natsPasswordEnv, natsPasswordVariable, type NatsUser } from '@brokkr/bus';
import { natsSettingsFrom, type NatsConfig } from '@brokkr/config';
import { pinnedNatsVersion, startNats } from '@brokkr/infra';
import { startKubeApiServer, type KubeApiServer } from '@brokkr/testkit';
import { parseTrustPolicy } from '@brokkr/trust';
import { opsTool } from '../scripts/lib/ops-tools.ts';
import { currentK8s, differences, renderK8s, RENDERINGS } from '../scripts/render-k8s.ts';
import { renderNatsConfig, staleNatsConfigFiles } from '../scripts/render-nats-config.ts';
import { containerSettings, podSpec } from './support/chart-settings.ts';
import { chartDir, helmTemplate, parseObjects, runHelm, serverSideDryRun, type K8sObject } from './support/helm.ts';

/**
 * deploy/helm: both charts lint, render with their defaults and with ci/options-values.yaml (every
 * option changed) into objects a real kube-apiserver accepts (server-side apply, dryRun=All), hand
 * every service only settings its config schema knows and accepts, and k8s/ is their rendering.
 * helm is built from the Go module proxy on first use (scripts/build-ops-tools.sh).
 */

const HUB_SERVICES = ['api', 'webhook-dispatcher', 'audit-writer', 'maintenance'];
/** The hub services that use NATS: all but the renderer, which talks to PostgreSQL only (docs/adr/0046). */
const usesNats = (deployment: K8sObject) => !deployment.metadata.name.endsWith('-renderer');
const natsSettingsOf = (env: Record<string, string>) => Object.keys(env).filter((k) => k.startsWith('BROKKR__NATS__'));
const options = (chart: string) => path.join(chartDir(chart), 'ci/options-values.yaml');
const of = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
/** Paths of every leaf (scalars, lists, empty maps) of a values document. */
function leafPaths(node: unknown, prefix: string[] = []): string[][] {
  if (node === null || typeof node !== 'object' || Array.isArray(node) || !Object.keys(node).length) return [prefix];
  return Object.entries(node).flatMap(([key, value]) => leafPaths(value, [...prefix, key]));
}
const named = (objects: K8sObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);

describe('Helm charts (deploy/helm)', function () {
  this.timeout(15 * 60_000); // a cold helm build takes minutes
  let helm: string;
  let kube: KubeApiServer;

  before(async () => {
    helm = await opsTool('helm');
    kube = await startKubeApiServer();
  });
  after(() => kube?.stop());

  for (const chart of ['brokkr-hub', 'brokkr-agent']) {
    it(`${chart}: every value in values.yaml is documented in the chart's README`, async () => {
      const values = parse(await readFile(path.join(chartDir(chart), 'values.yaml'), 'utf8')) as Record<string, unknown>;
      const readme = await readFile(path.join(chartDir(chart), 'README.md'), 'utf8');
      // A value is documented when it, or a map holding it (e.g. `api.resources`), is named in backticks.
      const undocumented = leafPaths(values).filter((p) => !p.some((_, i) => readme.includes(`\`${p.slice(0, i + 1).join('.')}\``)));
      expect(undocumented.map((p) => p.join('.'))).to.deep.equal([]);
    });

    it(`${chart}: helm lint --strict passes with the default values and with ci/options-values.yaml`, async () => {
      const out = await runHelm(helm, ['lint', '--strict', chartDir(chart)]);
      expect(out).to.include('1 chart(s) linted, 0 chart(s) failed');
      const withOptions = await runHelm(helm, ['lint', '--strict', chartDir(chart), '--values', options(chart)]);
      expect(withOptions).to.include('1 chart(s) linted, 0 chart(s) failed');
    });
  }

  it('values.schema.json refuses a misspelt or invalid value and names its path', async () => {
    const refused = async (chart: string, ...sets: string[]) => {
      const args = ['template', 'x', chartDir(chart), ...sets.flatMap((s) => ['--set', s])];
      return runHelm(helm, args).then(
        () => '',
        (err: Error) => err.message,
      );
    };
    const hub = await refused('brokkr-hub', 'log.level=loud', 'databse.url=postgres://x', 'secrets.webhookEncryptionKey=abc');
    expect(hub).to.include("at '/log/level'").and.include("'databse' not allowed").and.include("at '/secrets/webhookEncryptionKey'");
    const agent = await refused('brokkr-agent', 'longPollWaitSeconds=90', 'env.NOT_BROKKR=1', 'watchNamespace.name=Team_A');
    expect(agent).to.include("at '/longPollWaitSeconds'").and.include('NOT_BROKKR').and.include("at '/watchNamespace/name'");
  });

  describe('brokkr-hub', () => {
    it('default values: every object passes a server-side dry run; each service gets settings its schema accepts', async () => {
      const objects = await helmTemplate(helm, 'brokkr-hub', { release: 'brokkr', namespace: 'brokkr' });
      expect(await serverSideDryRun(kube, objects)).to.deep.equal([]);
      const deployments = of(objects, 'Deployment');
      expect(deployments.map((d) => d.metadata.name).sort()).to.deep.equal([...HUB_SERVICES, 'renderer'].map((s) => `brokkr-${s}`).sort());
      for (const deployment of deployments) {
        const settings = containerSettings(objects, deployment);
        expect(settings.unknown, `${settings.service}: variables its schema does not define`).to.deep.equal([]);
        expect(settings.parsed, settings.service).to.not.be.instanceOf(Error);
        expect(settings.secretRefs).to.have.property('BROKKR__DATABASE__URL');
        const container = podSpec(deployment).containers[0]!;
        expect(container.readinessProbe?.httpGet).to.deep.equal({ path: '/readyz', port: 'http' });
        expect(deployment.spec?.template).to.have.nested.property('metadata.annotations.prometheus\\.io/scrape', 'true');
      }
      // The webhook key is generated (64 hex) when none is given; api and dispatcher read the same Secret key.
      const secret = named(objects, 'Secret', 'brokkr')!;
      expect(secret.stringData?.BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY).to.match(/^[0-9a-f]{64}$/);
      expect(secret.stringData?.BROKKR__BROKER__PAK_HASH, 'empty = the api mints an admin PAK').to.equal('');
      const api = containerSettings(objects, named(objects, 'Deployment', 'brokkr-api')!);
      expect(api.env.BROKKR__BROKER__PORT).to.equal('3000');
      expect(named(objects, 'Service', 'brokkr-api')?.spec).to.have.nested.property('ports[0].port', 3000);
      expect(of(objects, 'PodDisruptionBudget')).to.have.length(1);
      expect(of(objects, 'Ingress')).to.have.length(0);
    });

    it("the hub's own plumbing: agent names only on the api's metrics port (not in the Service), NetworkPolicies around every hub pod", async () => {
      const objects = await helmTemplate(helm, 'brokkr-hub', { release: 'brokkr', namespace: 'brokkr' });
      const apiDeployment = named(objects, 'Deployment', 'brokkr-api')!;
      const api = containerSettings(objects, apiDeployment);
      expect(api.env.BROKKR__BROKER__METRICS_PORT).to.equal('9100');
      expect(apiDeployment.spec?.template).to.have.nested.property('metadata.annotations.prometheus\\.io/port', '9100');
      // The Service (and so the Ingress, which routes to it) has the http port only, not the metrics port.
      expect(
        (named(objects, 'Service', 'brokkr-api')?.spec as { ports: { targetPort: string }[] }).ports.map((p) => p.targetPort),
      ).to.deep.equal(['http']);
      const monitoring = [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }];
      const policies = of(objects, 'NetworkPolicy');
      expect(policies.map((p) => p.metadata.name).sort()).to.deep.equal(
        [...HUB_SERVICES, 'renderer', 'nats', 'postgres'].map((s) => `brokkr-${s}`).sort(),
      );
      expect(named(objects, 'NetworkPolicy', 'brokkr-api')?.spec).to.deep.include({
        policyTypes: ['Ingress'],
        ingress: [{ ports: [{ port: 3000, protocol: 'TCP' }] }, { from: monitoring, ports: [{ port: 9100, protocol: 'TCP' }] }],
      });
      expect(named(objects, 'NetworkPolicy', 'brokkr-audit-writer')?.spec).to.deep.include({
        ingress: [{ from: monitoring, ports: [{ port: 9102, protocol: 'TCP' }] }],
      });
      // The renderer runs tenants' charts: nothing reaches it but monitoring, and it reaches PostgreSQL and DNS only.
      expect(named(objects, 'NetworkPolicy', 'brokkr-renderer')?.spec).to.deep.include({
        policyTypes: ['Ingress', 'Egress'],
        ingress: [{ from: monitoring, ports: [{ port: 9104, protocol: 'TCP' }] }],
        egress: [
          { to: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'postgresql' } } }], ports: [{ port: 5432, protocol: 'TCP' }] },
          {
            to: [
              {
                namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
                podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
              },
            ],
            ports: [
              { port: 53, protocol: 'UDP' },
              { port: 53, protocol: 'TCP' },
            ],
          },
        ],
      });
    });

    it('safe by default: its own NATS (the pinned release) requires a user per hub service, each allowed only its own subjects', async () => {
      const objects = await helmTemplate(helm, 'brokkr-hub', { release: 'brokkr', namespace: 'brokkr' });
      const nats = named(objects, 'StatefulSet', 'brokkr-nats')!;
      const container = podSpec(nats).containers[0]!;
      expect(container.image).to.equal(`nats:${pinnedNatsVersion()}-alpine`);
      // The authorization is the rendering of shared/bus/src/permissions.ts; no anonymous user.
      expect(await staleNatsConfigFiles(), 'npm run render:nats').to.deep.equal([]);
      const config = named(objects, 'ConfigMap', 'brokkr-nats')!.data!['nats.conf']!;
      expect(config)
        .to.include(renderNatsConfig())
        .and.not.match(/no_auth_user/);
      // A password per user, made by the chart, each handed to nats-server and to that service only.
      const users = named(objects, 'Secret', 'brokkr-nats-users')!.stringData!;
      expect(Object.keys(users)).to.deep.equal([...NATS_USERS]);
      for (const password of Object.values(users)) expect(password).to.match(/^p[A-Za-z0-9]{47}$/);
      expect(new Set(Object.values(users)).size).to.equal(NATS_USERS.length);
      const serverEnv = Object.fromEntries((container.env ?? []).map((e) => [e.name, e.valueFrom?.secretKeyRef] as const));
      for (const user of NATS_USERS) {
        expect(serverEnv[natsPasswordVariable(user)], user).to.deep.equal({ name: 'brokkr-nats-users', key: user });
      }
      for (const deployment of of(objects, 'Deployment').filter(usesNats)) {
        const settings = containerSettings(objects, deployment);
        expect(settings.env.BROKKR__NATS__URL).to.equal('nats://brokkr-nats:4222');
        expect(settings.env.BROKKR__NATS__USER, deployment.metadata.name).to.equal(settings.service);
        expect(settings.secretRefs.BROKKR__NATS__PASSWORD).to.deep.equal({ name: 'brokkr-nats-users', key: settings.service });
      }
      // The renderer, where tenants' charts run, holds no NATS setting and no NATS credential.
      const renderer = containerSettings(objects, named(objects, 'Deployment', 'brokkr-renderer')!);
      expect(natsSettingsOf(renderer.env)).to.deep.equal([]);
      expect(Object.values(renderer.secretRefs).map((r) => r.name)).to.deep.equal(['brokkr']);
      // NetworkPolicies: NATS's client port only from the hub's pods; PostgreSQL's likewise.
      const natsPods = (nats.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
      const natsPolicy = named(objects, 'NetworkPolicy', 'brokkr-nats')?.spec as {
        podSelector: { matchLabels: object };
        ingress: unknown[];
      };
      expect(natsPods).to.deep.include(natsPolicy.podSelector.matchLabels);
      expect(natsPolicy.ingress[0]).to.deep.equal({
        from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'brokkr-hub', 'app.kubernetes.io/instance': 'brokkr' } } }],
        ports: [{ port: 4222, protocol: 'TCP' }],
      });
      const postgresPolicy = named(objects, 'NetworkPolicy', 'brokkr-postgres')?.spec as { podSelector: unknown; ingress: unknown[] };
      expect(postgresPolicy.podSelector).to.deep.equal({ matchLabels: { 'app.kubernetes.io/name': 'postgresql' } });
      expect(postgresPolicy.ingress[0]).to.deep.include({ ports: [{ port: 5432, protocol: 'TCP' }] });

      // The pinned nats-server runs the chart's configuration: no client without a password, each user in with the chart's.
      const passwords = users as Record<NatsUser, string>;
      // (Its port, store and monitoring port are the test's: startNats sets them.)
      const local = config.replace(/^http_port: .*$/m, '').replace(/^\s*store_dir: .*$/m, '');
      const server = await startNats({ config: local, env: natsPasswordEnv(passwords) });
      try {
        const anonymous = await connect({ servers: server.url }).then(
          (nc) => nc.close().then(() => 'admitted'),
          (err: Error) => err.message,
        );
        expect(anonymous).to.equal('Authorization Violation');
        for (const user of NATS_USERS) await (await connect({ servers: server.url, user, pass: passwords[user] })).close();
      } finally {
        await server.stop();
      }
    });

    it('refuses a NATS setup that cannot work, or that would run without authentication by accident, and says why', async () => {
      const refusal = (...sets: string[]) =>
        runHelm(helm, ['template', 'x', chartDir('brokkr-hub'), ...sets.flatMap((s) => ['--set', s])]).then(
          () => 'rendered',
          (err: Error) => err.message,
        );
      expect(await refusal('nats.deploy=false')).to.include('nats.url is required with nats.deploy=false');
      expect(await refusal('nats.deploy=false', 'nats.url=nats://n:4222')).to.include('nats.users.existingSecret is required');
      expect(await refusal('nats.deploy=false', 'nats.url=nats://n:4222', 'nats.auth.method=token')).to.include(
        'nats.auth.existingSecret is required for nats.auth.method token',
      );
      expect(await refusal('nats.auth.method=none')).to.include('nats.auth.method must be users');
      expect(await refusal('nats.tls.enabled=true')).to.include('nats.tls is for your own NATS');
      expect(await refusal('nats.deploy=false', 'nats.url=nats://n:4222', 'nats.users.existingSecret=mine')).to.equal('rendered');
    });

    it('ci/options-values.yaml: existing Secret, ingress, per-service settings and scheduling all land where they belong', async () => {
      const objects = await helmTemplate(helm, 'brokkr-hub', {
        release: 'brokkr',
        namespace: 'brokkr-options',
        values: [options('brokkr-hub')],
      });
      expect(await serverSideDryRun(kube, objects)).to.deep.equal([]);
      expect(of(objects, 'Secret'), 'no Secret of its own with existingSecret').to.deep.equal([]);
      expect(
        of(objects, 'Deployment')
          .map((d) => d.metadata.name)
          .sort(),
      ).to.deep.equal(['fleet-api', 'fleet-maintenance', 'fleet-renderer', 'fleet-webhook-dispatcher']);
      for (const deployment of of(objects, 'Deployment')) {
        const settings = containerSettings(objects, deployment);
        expect(settings.unknown, settings.service).to.deep.equal([]);
        expect(settings.parsed, settings.service).to.not.be.instanceOf(Error);
        expect(settings.secretRefs.BROKKR__DATABASE__URL).to.deep.equal({ name: 'brokkr-credentials', key: 'database-url' });
        expect(settings.env).to.include({ BROKKR__DATABASE__SCHEMA: 'brokkr', BROKKR__LOG__LEVEL: 'debug' });
        if (usesNats(deployment)) expect(settings.env).to.include({ BROKKR__NATS__URL: 'nats://nats.messaging.svc:4222' });
        const pod = podSpec(deployment);
        expect(pod.serviceAccountName).to.equal('brokkr-hub-sa');
        expect(pod.nodeSelector).to.deep.equal({ 'kubernetes.io/os': 'linux' });
        expect(pod.imagePullSecrets).to.deep.equal([{ name: 'regcred' }]);
        expect(pod.containers[0]!.image).to.equal('registry.example.com/brokkr/hub:1.2.3');
        expect(deployment.spec?.template).to.not.have.nested.property('metadata.annotations.prometheus\\.io/scrape');
      }
      const api = containerSettings(objects, named(objects, 'Deployment', 'fleet-api')!);
      expect(api.parsed).to.include({
        BROKKR__BROKER__PORT: 8000,
        BROKKR__BROKER__LONG_POLL_MAX_SECONDS: 45,
        BROKKR__BROKER__TRUST_PROXY: true,
        BROKKR__CORS__ALLOWED_ORIGINS: 'https://console.example.com,https://ops.example.com',
        BROKKR__BROKER__WEBHOOK_MAX_BACKOFF_SECONDS: 600,
      });
      expect(api.secretRefs.BROKKR__BROKER__PAK_HASH).to.deep.equal({ name: 'brokkr-credentials', key: 'admin-pak-hash' });
      const dispatcher = containerSettings(objects, named(objects, 'Deployment', 'fleet-webhook-dispatcher')!);
      expect(dispatcher.parsed).to.include({ BROKKR__HEALTH__PORT: 9201, BROKKR__BROKER__WEBHOOK_CONCURRENCY: 128 });
      expect(dispatcher.secretRefs.BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY).to.deep.equal({
        name: 'brokkr-credentials',
        key: 'webhook-key',
      });
      const ingress = named(objects, 'Ingress', 'fleet-api')!;
      expect(ingress.spec).to.deep.include({
        ingressClassName: 'nginx',
        tls: [{ hosts: ['brokkr.internal.example.com'], secretName: 'brokkr-tls' }],
      });
      // NATS credentials from their own Secret, TLS files from a mounted one, for every service that uses NATS.
      for (const deployment of of(objects, 'Deployment').filter(usesNats)) {
        const settings = containerSettings(objects, deployment);
        expect(settings.secretRefs.BROKKR__NATS__PASSWORD).to.deep.equal({ name: 'nats-credentials', key: 'nats-password' });
        expect(natsSettingsFrom(settings.parsed as NatsConfig)).to.deep.include({
          auth: { user: 'stand-in', password: 'stand-in' },
          tls: { caFile: '/etc/brokkr/nats-tls/ca.crt', certFile: '/etc/brokkr/nats-tls/tls.crt', keyFile: '/etc/brokkr/nats-tls/tls.key' },
        });
        expect((podSpec(deployment) as { volumes?: unknown[] }).volumes).to.deep.include({
          name: 'nats-tls',
          secret: { secretName: 'nats-client-tls' },
        });
      }
      expect(api.parsed).to.include({ BROKKR__BROKER__METRICS_PORT: 9200, BROKKR__BROKER__TRUSTED_PROXIES: '10.0.0.0/8, fd00::/8' });
      const natsPolicy = named(objects, 'NetworkPolicy', 'fleet-nats')?.spec as { podSelector: unknown; ingress: unknown[] };
      expect(natsPolicy.podSelector).to.deep.equal({ matchLabels: { 'app.kubernetes.io/name': 'nats' } });
      expect(natsPolicy.ingress[0]).to.deep.equal({
        from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'brokkr-hub', 'app.kubernetes.io/instance': 'brokkr' } } }],
        ports: [{ port: 4223, protocol: 'TCP' }],
      });
      expect(named(objects, 'NetworkPolicy', 'fleet-postgres')).to.not.equal(undefined);
      const rendererDeployment = named(objects, 'Deployment', 'fleet-renderer')!;
      const renderer = containerSettings(objects, rendererDeployment);
      expect(renderer.parsed).to.include({
        BROKKR__HEALTH__PORT: 9204,
        BROKKR__RENDERER__CONCURRENCY: 4,
        BROKKR__RENDERER__TIMEOUT_SECONDS: 20,
        BROKKR__RENDERER__OUTPUT_MAX_MIB: 32,
        BROKKR__RENDERER__MEMORY_MIB: 256,
        BROKKR__RENDERER__BINARY: '/opt/brokkr/bin/brokkr-render',
      });
      expect(natsSettingsOf(renderer.env)).to.deep.equal([]);
      expect((podSpec(rendererDeployment) as { volumes?: { name: string }[] }).volumes?.map((v) => v.name)).to.deep.equal(['tmp']);
      expect(rendererDeployment.spec).to.have.property('replicas', 2);
      // A managed PostgreSQL by address, no DNS: the renderer may connect to that address only.
      expect((named(objects, 'NetworkPolicy', 'fleet-renderer')?.spec as { egress: unknown[] }).egress).to.deep.equal([
        {
          to: [
            { podSelector: { matchLabels: { app: 'postgres', 'app.kubernetes.io/name': 'postgresql' } } },
            { ipBlock: { cidr: '10.0.12.5/32' } },
          ],
          ports: [{ port: 5433, protocol: 'TCP' }],
        },
      ]);
      expect(named(objects, 'PodDisruptionBudget', 'fleet-api')?.spec).to.have.property('minAvailable', 2);
      expect(named(objects, 'Service', 'fleet-api')?.spec).to.deep.include({ type: 'LoadBalancer' });
    });

    it('helm install, then upgrade, against the kube-apiserver keeps the generated webhook key and NATS passwords', async () => {
      const args = (verb: string) => [
        verb,
        'keep-key',
        chartDir('brokkr-hub'),
        '-n',
        'brokkr-upgrade',
        '--kubeconfig',
        kube.kubeconfigPath,
      ];
      await runHelm(helm, [...args('install'), '--create-namespace']);
      const core = kube.kubeConfig.makeApiClient(CoreV1Api);
      const key = async () =>
        Buffer.from(
          (await core.readNamespacedSecret({ name: 'keep-key', namespace: 'brokkr-upgrade' })).data!
            .BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY!,
          'base64',
        ).toString();
      const natsPasswords = async () =>
        (await core.readNamespacedSecret({ name: 'keep-key-nats-users', namespace: 'brokkr-upgrade' })).data!;
      const first = await key();
      expect(first).to.match(/^[0-9a-f]{64}$/);
      const firstPasswords = await natsPasswords();
      expect(Object.keys(firstPasswords).sort()).to.deep.equal([...NATS_USERS].sort());
      await runHelm(helm, [...args('upgrade'), '--set', 'log.level=debug']);
      expect(await key()).to.equal(first);
      expect(await natsPasswords()).to.deep.equal(firstPasswords);
    });
  });

  describe('brokkr-agent', () => {
    it('default values: a cluster-wide install that passes a server-side dry run, settings the agent accepts', async () => {
      const objects = await helmTemplate(helm, 'brokkr-agent', { release: 'brokkr-agent', namespace: 'brokkr-agent' });
      expect(await serverSideDryRun(kube, objects)).to.deep.equal([]);
      expect(objects.map((o) => o.kind).sort()).to.deep.equal([
        'ClusterRole',
        'ClusterRoleBinding',
        'ConfigMap',
        'Deployment',
        'Secret',
        'ServiceAccount',
      ]);
      const settings = containerSettings(objects, of(objects, 'Deployment')[0]!);
      expect(settings.unknown).to.deep.equal([]);
      expect(settings.parsed).to.not.be.instanceOf(Error);
      expect(settings.secretRefs.BROKKR__AGENT__PAK).to.deep.equal({ name: 'brokkr-agent-pak', key: 'BROKKR__AGENT__PAK' });
      const binding = named(objects, 'ClusterRoleBinding', 'brokkr-agent')!;
      expect(binding).to.deep.include({ subjects: [{ kind: 'ServiceAccount', name: 'brokkr-agent', namespace: 'brokkr-agent' }] });
      const rules = named(objects, 'ClusterRole', 'brokkr-agent')?.rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
      expect(
        rules.filter((r) => r.apiGroups.includes('*') || r.resources.includes('*')),
        'not every group by default',
      ).to.deep.equal([]);
      expect(rules.flatMap((r) => r.apiGroups)).to.not.include.members(['apiextensions.k8s.io']);
      expect(settings.parsed).to.include({ BROKKR__AGENT__ADOPTION_ENABLED: true });
      expect(objects.find((o) => o.kind === 'Deployment')?.spec).to.deep.include({ replicas: 1, strategy: { type: 'Recreate' } });
    });

    it('default values render secure: the agent knows its namespace, tenants get Pod Security baseline, the token reaches the agent pod only', async () => {
      const objects = await helmTemplate(helm, 'brokkr-agent', { release: 'brokkr-agent', namespace: 'brokkr-agent' });
      const deployment = of(objects, 'Deployment')[0]!;
      const settings = containerSettings(objects, deployment);
      expect(settings.parsed).to.include({ BROKKR__AGENT__NAMESPACE: 'brokkr-agent', BROKKR__AGENT__TENANT_POD_SECURITY: 'baseline' });
      expect(named(objects, 'ServiceAccount', 'brokkr-agent')).to.deep.include({ automountServiceAccountToken: false });
      const pod = podSpec(deployment) as unknown as {
        automountServiceAccountToken: boolean;
        volumes: { name: string; projected?: { sources: Record<string, unknown>[] } }[];
        containers: { volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[] }[];
      };
      expect(pod.automountServiceAccountToken).to.equal(false);
      const token = pod.volumes.find((v) => v.name === 'kube-api-access')!;
      expect(token.projected!.sources.map((source) => Object.keys(source)[0])).to.deep.equal([
        'serviceAccountToken',
        'configMap',
        'downwardAPI',
      ]);
      expect(pod.containers[0]!.volumeMounts).to.deep.include({
        name: 'kube-api-access',
        mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
        readOnly: true,
      });
    });

    it('ci/options-values.yaml: one watched namespace (Role there, no ClusterRole), existing Secret, extra settings', async () => {
      const objects = await helmTemplate(helm, 'brokkr-agent', {
        release: 'edge',
        namespace: 'brokkr-edge',
        values: [options('brokkr-agent')],
      });
      expect(await serverSideDryRun(kube, objects)).to.deep.equal([]);
      expect(objects.map((o) => o.kind).sort()).to.deep.equal([
        'ConfigMap',
        'Deployment',
        'Role',
        'Role',
        'RoleBinding',
        'RoleBinding',
        'Secret',
        'ServiceAccount',
      ]);
      const role = named(objects, 'Role', 'edge-agent')!;
      expect(role.metadata.namespace).to.equal('team-a');
      expect(role.rules, 'rbac.allResources: every verb on every group in front of the 2 rules').to.have.length(3);
      expect(role.rules?.[0]).to.deep.equal({ apiGroups: ['*'], resources: ['*'], verbs: ['*'] });
      expect(named(objects, 'RoleBinding', 'edge-agent')).to.deep.include({
        subjects: [{ kind: 'ServiceAccount', name: 'edge-agent-sa', namespace: 'brokkr-edge' }],
      });
      const settings = containerSettings(objects, of(objects, 'Deployment')[0]!);
      expect(settings.unknown).to.deep.equal([]);
      expect(settings.parsed).to.include({
        BROKKR__AGENT__WATCH_NAMESPACE: 'team-a',
        BROKKR__AGENT__AGENT_NAME: 'edge-1',
        BROKKR__AGENT__CLUSTER_NAME: 'edge-cluster-1',
        BROKKR__AGENT__BROKER_URL: 'https://brokkr.internal.example.com',
        BROKKR__AGENT__HEALTH_PORT: 9090,
        BROKKR__AGENT__APPLY_CONCURRENCY: 4,
        BROKKR__AGENT__WORK_ORDER_CONCURRENCY: 0,
        BROKKR__AGENT__LONG_POLL_WAIT_SECONDS: 50,
        BROKKR__AGENT__ADOPTION_ENABLED: false,
        BROKKR__AGENT__TENANT_POD_SECURITY: 'restricted',
        BROKKR__AGENT__NAMESPACE: 'brokkr-edge',
      });
      expect(settings.secretRefs.BROKKR__AGENT__PAK).to.deep.equal({ name: 'edge-agent-credentials', key: 'pak' });
    });

    it('trustPolicy: the policy from a Secret of its own namespace (never the hub), mounted readable; its state ConfigMap reachable there only', async () => {
      const objects = await helmTemplate(helm, 'brokkr-agent', {
        release: 'edge',
        namespace: 'brokkr-edge',
        values: [options('brokkr-agent')],
      });
      const deployment = of(objects, 'Deployment')[0]!;
      const settings = containerSettings(objects, deployment);
      expect(settings.parsed).to.include({
        BROKKR__AGENT__TRUST_POLICY_FILE: '/etc/brokkr/trust/trust-policy.json',
        BROKKR__AGENT__TRUST_STATE_CONFIGMAP: 'edge-trust-state',
      });
      // The chart's Secret holds the value as the agent reads it: a policy it accepts, as given.
      const secret = named(objects, 'Secret', 'edge-agent-trust-policy')!;
      expect(secret.metadata.namespace).to.equal('brokkr-edge');
      const policy = JSON.parse(secret.stringData!['trust-policy.json']!) as unknown;
      const values = parse(await readFile(options('brokkr-agent'), 'utf8')) as { trustPolicy: { policy: unknown } };
      expect(policy).to.deep.equal(values.trustPolicy.policy);
      expect(parseTrustPolicy(policy)).to.include({ requireSignatures: true, maxMetadataAgeMs: 12 * 3_600_000 });
      const pod = podSpec(deployment) as unknown as {
        volumes: { name: string; secret?: { secretName: string; defaultMode: number } }[];
        containers: { volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[] }[];
      };
      // Readable by all: root owns the file and the agent runs as uid 1000 without an fsGroup. The
      // template's `0444` is octal to helm and the API server (YAML 1.1); this parser reads YAML 1.2.
      expect(pod.volumes.find((v) => v.name === 'trust-policy')?.secret).to.deep.include({
        secretName: 'edge-agent-trust-policy',
        defaultMode: 444,
      });
      expect(pod.containers[0]!.volumeMounts).to.deep.include({ name: 'trust-policy', mountPath: '/etc/brokkr/trust', readOnly: true });
      // The state ConfigMap: create (no name can be given to create) and get/update of that one, in the release's namespace.
      const role = named(objects, 'Role', 'edge-agent-trust-state')!;
      expect(role.metadata.namespace).to.equal('brokkr-edge');
      expect(role.rules).to.deep.equal([
        { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
        { apiGroups: [''], resources: ['configmaps'], resourceNames: ['edge-trust-state'], verbs: ['get', 'update'] },
      ]);
      expect(named(objects, 'RoleBinding', 'edge-agent-trust-state')).to.deep.include({
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'edge-agent-trust-state' },
        subjects: [{ kind: 'ServiceAccount', name: 'edge-agent-sa', namespace: 'brokkr-edge' }],
      });
    });

    it('trustPolicy.existingSecret: the admin’s Secret is mounted and the chart makes none; without a policy nothing of it renders', async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'brokkr-agent-trust-'));
      const values = path.join(dir, 'values.yaml');
      await writeFile(values, 'trustPolicy: { existingSecret: cluster-trust, policy: { requireSignatures: true } }\n');
      try {
        const objects = await helmTemplate(helm, 'brokkr-agent', { release: 'brokkr-agent', namespace: 'brokkr-agent', values: [values] });
        expect(await serverSideDryRun(kube, objects)).to.deep.equal([]);
        expect(of(objects, 'Secret').map((o) => o.metadata.name)).to.deep.equal(['brokkr-agent-pak']);
        const pod = podSpec(of(objects, 'Deployment')[0]!) as unknown as { volumes: { name: string; secret?: { secretName: string } }[] };
        expect(pod.volumes.find((v) => v.name === 'trust-policy')?.secret).to.deep.include({ secretName: 'cluster-trust' });
        expect(named(objects, 'Role', 'brokkr-agent-trust-state')).to.not.equal(undefined);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
      const plain = await helmTemplate(helm, 'brokkr-agent', { release: 'brokkr-agent', namespace: 'brokkr-agent' });
      const settings = containerSettings(plain, of(plain, 'Deployment')[0]!);
      expect(Object.keys(settings.env).filter((name) => name.includes('TRUST'))).to.deep.equal([]);
      expect(of(plain, 'Role')).to.deep.equal([]);
    });
  });

  describe('k8s/ (the plain manifests)', () => {
    it('is exactly the rendering of the charts with deploy/helm/render/*.yaml (npm run render:k8s)', async () => {
      expect(differences(await renderK8s(helm), await currentK8s())).to.deep.equal([]);
    });

    for (const r of RENDERINGS) {
      it(`${r.out}/ passes a server-side dry run and holds settings each service's schema defines`, async () => {
        const objects: K8sObject[] = [];
        for (const [file, text] of await currentK8s()) {
          if (path.dirname(file) === r.out) objects.push(...parseObjects(text, file));
        }
        expect(await serverSideDryRun(kube, objects)).to.deep.equal([]);
        for (const deployment of of(objects, 'Deployment')) {
          expect(containerSettings(objects, deployment).unknown).to.deep.equal([]);
        }
      });
    }
  });
});
