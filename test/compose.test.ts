// Deployment artefacts checked without a Docker engine or a cluster: the compose file against the
// Compose Specification schema (vendored, see compose/schema/SOURCE.md) and against the services'
// real config schemas, the Dockerfile's shape and COPY sources, and the k8s/hub manifests.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse, parseAllDocuments } from 'yaml';
import { connect } from '@nats-io/transport-node';
import { NATS_USERS, natsPasswordEnv, type NatsUser } from '@brokkr/bus';
import {
  DEFAULT_ADMIN_PAK_HASH,
  apiConfigSchema,
  auditWriterConfigSchema,
  maintenanceConfigSchema,
  natsSettingsFrom,
  parseEnv,
  rendererConfigSchema,
  webhookDispatcherConfigSchema,
  type NatsConfig,
} from '@brokkr/config';
import { pinnedNatsVersion, startNats } from '@brokkr/infra';
import { renderNatsConfig } from '../scripts/render-nats-config.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const composeFile = path.join(root, 'compose/docker-compose.yml');

interface HubService {
  name: string;
  port: number;
  portVar: 'BROKKR__BROKER__PORT' | 'BROKKR__HEALTH__PORT';
  schema: Parameters<typeof parseEnv>[0];
}

/** The node flags of a service's npm start script (the api's keep its young generation small, ADR 0026). */
function startFlags(service: string): string[] {
  const pkg = JSON.parse(readFileSync(path.join(root, 'services', service, 'package.json'), 'utf8')) as { scripts: { start: string } };
  return pkg.scripts.start.split(' ').filter((word) => word.startsWith('--'));
}

/** How a deployment runs a hub service: node with the start script's flags. */
const nodeCommand = (service: string) => ['node', ...startFlags(service), `services/${service}/dist/main.js`];

const HUB: HubService[] = [
  { name: 'api', port: 3000, portVar: 'BROKKR__BROKER__PORT', schema: apiConfigSchema },
  { name: 'webhook-dispatcher', port: 9101, portVar: 'BROKKR__HEALTH__PORT', schema: webhookDispatcherConfigSchema },
  { name: 'audit-writer', port: 9102, portVar: 'BROKKR__HEALTH__PORT', schema: auditWriterConfigSchema },
  { name: 'maintenance', port: 9103, portVar: 'BROKKR__HEALTH__PORT', schema: maintenanceConfigSchema },
];

type EnvValue = string | number | boolean | null;

interface ComposeService {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  environment?: Record<string, EnvValue> | string[];
  healthcheck?: { test?: string | string[]; disable?: boolean };
  depends_on?: string[] | Record<string, { condition?: string }>;
  ports?: (string | number)[];
  volumes?: (string | Record<string, unknown>)[];
}

interface ComposeFile {
  services: Record<string, ComposeService>;
}

function loadCompose(): ComposeFile {
  // Compose honours YAML merge keys (`<<: *anchor`); the yaml package needs them switched on.
  return parse(readFileSync(composeFile, 'utf8'), { merge: true }) as ComposeFile;
}

/** Compose's `${VAR}`, `${VAR-default}`, `${VAR:-default}` and `${VAR:?error}` interpolation. */
function interpolate(value: string, env: Record<string, string | undefined>): string {
  return value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g,
    (_match, name: string, op: string | undefined, fallback: string | undefined) => {
      const set = env[name];
      if (op === ':-') return set ? set : (fallback ?? '');
      if (op === '-') return set ?? fallback ?? '';
      if (op === ':?' && !set) throw new Error(`required variable ${name} is missing a value: ${fallback ?? ''}`);
      return set ?? '';
    },
  );
}

/** The variables compose reads from the operator's environment (or compose/.env). */
function composeVariables(): Set<string> {
  const text = readFileSync(composeFile, 'utf8').replace(/^\s*#.*$/gm, '');
  return new Set([...text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1] ?? ''));
}

/** The BROKKR_* names the Docker Compose section of docs/operations.md tells the operator to set. */
function readmeComposeVariables(): Set<string> {
  const doc = readFileSync(path.join(root, 'docs', 'operations.md'), 'utf8');
  const section = /^## Docker Compose\n([\s\S]*?)^## /m.exec(doc)?.[1] ?? '';
  return new Set([...section.matchAll(/BROKKR_[A-Z0-9_]+/g)].map((m) => m[0]));
}

const TEST_KEY = 'ab'.repeat(32);
/** Stand-ins for the NATS passwords compose requires (one per user of shared/bus's permissions). */
const NATS_PASSWORDS = Object.fromEntries(NATS_USERS.map((user) => [user, `p${user.replace(/-/g, '')}standin`])) as Record<
  NatsUser,
  string
>;
/** Every variable compose requires, set. */
const REQUIRED = { BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY: TEST_KEY, ...natsPasswordEnv(NATS_PASSWORDS) };

function environmentOf(service: ComposeService, env: Record<string, string | undefined> = {}): Record<string, string> {
  const raw = service.environment ?? {};
  const pairs = Array.isArray(raw)
    ? raw.map((entry) => entry.split(/=(.*)/s).slice(0, 2) as [string, string])
    : Object.entries(raw).map(([key, value]) => [key, value === null ? '' : String(value)] as [string, string]);
  return Object.fromEntries(pairs.map(([key, value]) => [key, interpolate(value, env)]));
}

/** Every BROKKR_* name the config package knows about (grepped, so unknown names cannot hide in zod's strip mode). */
function configVariableNames(): Set<string> {
  const names = new Set<string>();
  const dir = path.join(root, 'shared/config/src');
  for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts')) continue;
    for (const match of readFileSync(path.join(dir, file), 'utf8').matchAll(/BROKKR_[A-Z0-9_]+/g)) names.add(match[0]);
  }
  return names;
}

describe('compose/docker-compose.yml', () => {
  const compose = loadCompose();
  const knownNames = configVariableNames();

  it('is valid against the Compose Specification schema', () => {
    const schema = JSON.parse(readFileSync(path.join(root, 'compose/schema/compose-spec.json'), 'utf8')) as object;
    // strictTypes only lints the schema's own style (it omits some `type`s); unknown keywords stay errors.
    const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictRequired: false, allowUnionTypes: true });
    const validate = ajv.compile(schema);
    const valid = validate(compose);
    expect(valid, JSON.stringify(validate.errors, null, 2)).to.equal(true);
    expect(validate({ services: { x: { healthcheck: { bogus: 1 } } } }), 'the schema rejects unknown keys').to.equal(false);
  });

  it('runs postgres, nats, the four hub services on NATS and the renderer', () => {
    expect(Object.keys(compose.services)).to.have.members(['postgres', 'nats', ...HUB.map((s) => s.name), 'renderer']);
  });

  it('publishes PostgreSQL and NATS on the loopback interface only (docs/security.md)', () => {
    for (const name of ['postgres', 'nats']) {
      const ports = compose.services[name]?.ports ?? [];
      expect(ports, name).to.not.be.empty;
      for (const port of ports) expect(String(port), name).to.match(/^127\.0\.0\.1:\d+:\d+$/);
    }
  });

  it('gives every service a health check', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      expect(service.healthcheck?.test, `${name} healthcheck.test`).to.be.an('array').that.is.not.empty;
      expect(service.healthcheck?.disable, `${name} healthcheck.disable`).to.not.equal(true);
    }
  });

  it('only waits for dependencies that are healthy', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      const deps = service.depends_on ?? {};
      expect(deps, `${name}.depends_on must use the long form`).to.not.be.an('array');
      for (const [dep, spec] of Object.entries(deps as Record<string, { condition?: string }>)) {
        expect(spec.condition, `${name} -> ${dep}`).to.equal('service_healthy');
        expect(compose.services, `${name} depends on an unknown service`).to.have.property(dep);
      }
    }
  });

  for (const hub of HUB) {
    describe(hub.name, () => {
      const service = (): ComposeService => compose.services[hub.name] ?? {};

      it('builds from the repository root Dockerfile and runs its own dist/main.js', () => {
        const build = service().build;
        expect(build, 'build').to.be.an('object');
        const { context = '.', dockerfile = 'Dockerfile' } = build as { context?: string; dockerfile?: string };
        expect(path.resolve(path.dirname(composeFile), context)).to.equal(root);
        expect(dockerfile).to.equal('Dockerfile');
        expect(service().command).to.deep.equal(nodeCommand(hub.name));
        expect(existsSync(path.join(root, `services/${hub.name}/src/main.ts`)), 'the service entry point').to.equal(true);
      });

      it('waits for healthy postgres and nats (and the migrating api)', () => {
        const deps = Object.keys(service().depends_on ?? {});
        expect(deps).to.include.members(['postgres', 'nats']);
        if (hub.name !== 'api') expect(deps).to.include('api');
      });

      it('uses only variable names the config package defines', () => {
        for (const key of Object.keys(environmentOf(service(), REQUIRED))) {
          expect(knownNames.has(key), `${key} is not defined in shared/config/src`).to.equal(true);
        }
      });

      it('passes the service config schema with the defaults compose interpolates (and the required key)', () => {
        const env = environmentOf(service(), REQUIRED);
        expect(() => parseEnv(hub.schema, env)).to.not.throw();
        expect(env).to.include.keys('BROKKR__DATABASE__URL', 'BROKKR__NATS__URL', 'BROKKR__LOG__FORMAT', hub.portVar);
        expect(env[hub.portVar]).to.equal(String(hub.port));
      });

      it('health-checks /readyz on the port the service listens on', () => {
        const test = (service().healthcheck?.test ?? []) as string[];
        expect(test.join(' ')).to.include(`http://127.0.0.1:${hub.port}/readyz`);
      });
    });
  }

  describe('renderer', () => {
    const renderer = (): ComposeService => compose.services.renderer ?? {};

    it('builds from the repository root Dockerfile and runs its own dist/main.js', () => {
      expect(renderer().build).to.deep.equal(compose.services.api?.build);
      expect(renderer().command).to.deep.equal(nodeCommand('renderer'));
    });

    it('talks to PostgreSQL only: waits for it and the migrating api, has no NATS setting', () => {
      expect(Object.keys(renderer().depends_on ?? {})).to.have.members(['postgres', 'api']);
      const env = environmentOf(renderer(), REQUIRED);
      for (const key of Object.keys(env)) expect(knownNames.has(key), `${key} is not defined in shared/config/src`).to.equal(true);
      expect(Object.keys(env).filter((k) => k.startsWith('BROKKR__NATS__'))).to.deep.equal([]);
      expect(parseEnv(rendererConfigSchema, env)).to.include({ BROKKR__HEALTH__PORT: 9104 });
      expect(env.BROKKR__DATABASE__URL).to.equal(environmentOf(compose.services.api ?? {}, REQUIRED).BROKKR__DATABASE__URL);
    });

    it('health-checks /readyz on its health port', () => {
      expect(((renderer().healthcheck?.test ?? []) as string[]).join(' ')).to.include('http://127.0.0.1:9104/readyz');
    });
  });

  it('shares one webhook encryption key between api and webhook-dispatcher', () => {
    const env = REQUIRED;
    const key = (name: string) => environmentOf(compose.services[name] ?? {}, env)['BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY'];
    expect(key('api')).to.equal(TEST_KEY);
    expect(key('webhook-dispatcher')).to.equal(TEST_KEY);
  });

  it('refuses to start without a webhook encryption key (no built-in key)', () => {
    expect(() => environmentOf(compose.services.api ?? {}, natsPasswordEnv(NATS_PASSWORDS))).to.throw(
      /BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY/,
    );
  });

  describe('nats', () => {
    const nats = (): ComposeService => compose.services.nats ?? {};
    const configFile = path.join(root, 'compose/nats/authorization.conf');

    it('runs the pinned nats-server release (scripts/lib/nats-server.version), the one npm start and the tests run', () => {
      expect(nats().image).to.equal(`nats:${pinnedNatsVersion()}-alpine`);
    });

    it('requires a user and password: it runs compose/nats/authorization.conf, the rendering of shared/bus/src/permissions.ts', () => {
      const command = nats().command as string[];
      const config = command[command.indexOf('--config') + 1];
      expect(config).to.be.a('string');
      expect(nats().volumes).to.include(`./nats/authorization.conf:${config}:ro`);
      expect(readFileSync(configFile, 'utf8'), 'npm run render:nats').to.equal(renderNatsConfig());
      expect(readFileSync(configFile, 'utf8')).to.not.match(/no_auth_user/);
    });

    it('gives every hub service a NATS user of its own, with the password nats-server has for it; no password has a default', () => {
      expect(environmentOf(nats(), REQUIRED)).to.deep.equal(natsPasswordEnv(NATS_PASSWORDS));
      for (const hub of HUB) {
        const env = environmentOf(compose.services[hub.name] ?? {}, REQUIRED);
        const settings = natsSettingsFrom(parseEnv(hub.schema, env) as NatsConfig);
        expect(settings.auth, hub.name).to.deep.equal({ user: hub.name, password: NATS_PASSWORDS[hub.name as NatsUser] });
      }
      for (const variable of Object.keys(natsPasswordEnv(NATS_PASSWORDS))) {
        const withoutIt = Object.fromEntries(Object.entries(REQUIRED).filter(([name]) => name !== variable));
        expect(() => environmentOf(nats(), withoutIt), variable).to.throw(new RegExp(variable));
      }
    });

    it("the pinned nats-server runs compose's configuration: no client without a password, each user in with its own", async function () {
      this.timeout(60_000);
      const server = await startNats({ config: readFileSync(configFile, 'utf8'), env: natsPasswordEnv(NATS_PASSWORDS) });
      try {
        const anonymous = await connect({ servers: server.url }).then(
          (nc) => nc.close().then(() => 'admitted'),
          (err: Error) => err.message,
        );
        expect(anonymous).to.equal('Authorization Violation');
        for (const user of NATS_USERS) {
          const nc = await connect({ servers: server.url, user, pass: NATS_PASSWORDS[user] });
          await nc.close();
        }
      } finally {
        await server.stop();
      }
    });
  });

  it("never falls back to Brokkr's publicly known admin PAK: unset, the api mints a new one", () => {
    const env = environmentOf(compose.services.api ?? {}, REQUIRED);
    expect(env['BROKKR__BROKER__PAK_HASH']).to.equal('');
    expect(readFileSync(composeFile, 'utf8')).to.not.include(DEFAULT_ADMIN_PAK_HASH);
    const hash = 'cd'.repeat(32);
    const configured = environmentOf(compose.services.api ?? {}, {
      ...REQUIRED,
      BROKKR__BROKER__PAK_HASH: hash,
    });
    expect(configured['BROKKR__BROKER__PAK_HASH']).to.equal(hash);
  });

  it("reads exactly the variables docs/operations.md's Docker Compose section names", () => {
    expect([...readmeComposeVariables()].sort()).to.deep.equal([...composeVariables()].sort());
  });

  it('is accepted by `docker compose config` (when a Docker CLI with compose is present)', function () {
    const probe = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' });
    if (probe.status !== 0) {
      const why = probe.error?.message ?? (probe.stderr || probe.stdout).trim().split('\n')[0];
      console.log(`      (skipped: \`docker compose version\` failed: ${why})`);
      this.skip();
    }
    const result = spawnSync('docker', ['compose', '-f', composeFile, 'config', '-q'], {
      encoding: 'utf8',
      env: { ...process.env, ...REQUIRED },
    });
    expect(result.status, result.stderr).to.equal(0);
  });
});

interface Instruction {
  keyword: string;
  args: string;
}

interface Stage {
  base: string;
  name: string;
  instructions: Instruction[];
}

/** Enough of the Dockerfile grammar for these checks: continuations, comments, global ARG defaults in FROM. */
function parseDockerfile(text: string): Stage[] {
  const logical = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const globalArgs: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const instruction = { keyword: keyword.toUpperCase(), args };
    if (instruction.keyword === 'FROM') stages.push(fromInstruction(args, globalArgs));
    else if (stages.length > 0) stages.at(-1)?.instructions.push(instruction);
    else if (instruction.keyword === 'ARG') {
      const [argName = '', value = ''] = args.split('=');
      globalArgs[argName] = value;
    }
  }
  return stages;
}

function fromInstruction(args: string, globalArgs: Record<string, string>): Stage {
  const expanded = args.replace(/\$\{(\w+)\}/g, (_m, arg: string) => globalArgs[arg] ?? '');
  const [image = '', , name = ''] = expanded.split(/\s+/);
  return { base: image, name, instructions: [] };
}

function copySources(args: string): { from: string | undefined; sources: string[] } {
  const tokens = args.startsWith('[') ? (JSON.parse(args) as string[]) : args.split(/\s+/);
  const from = tokens.find((t) => t.startsWith('--from='))?.slice('--from='.length);
  const paths = tokens.filter((t) => !t.startsWith('--'));
  return { from, sources: paths.slice(0, -1) };
}

describe('Dockerfile', () => {
  const stages = parseDockerfile(readFileSync(path.join(root, 'Dockerfile'), 'utf8'));
  const stage = (name: string): Stage => {
    const found = stages.find((s) => s.name === name);
    expect(found, `stage ${name}`).to.not.equal(undefined);
    return found as Stage;
  };
  const runs = (s: Stage) => s.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);

  it('has a build stage and a runtime stage on node:24-bookworm-slim, and a Go stage for brokkr-render', () => {
    expect(stages.map((s) => s.name)).to.deep.equal(['renderer', 'build', 'runtime']);
    for (const s of stages.slice(1)) expect(s.base).to.equal('node:24-bookworm-slim');
    // The Go the renderer's go.mod asks for (build-renderer.sh builds with GOTOOLCHAIN=local).
    const goVersion = /^go (\d+\.\d+)/m.exec(readFileSync(path.join(root, 'tools/renderer/go.mod'), 'utf8'))?.[1];
    expect(stage('renderer').base).to.equal(`golang:${goVersion}-bookworm`);
  });

  it('builds brokkr-render by the repository recipe and puts it where the renderer looks by default', () => {
    expect(runs(stage('renderer')).join('\n')).to.include('bash scripts/build-renderer.sh');
    const copied = stage('runtime')
      .instructions.filter((i) => i.keyword === 'COPY' && i.args.startsWith('--from=renderer'))
      .map((i) => i.args.split(/\s+/).at(-1));
    expect(copied).to.deep.equal([(parseEnv(rendererConfigSchema, {}) as { BROKKR__RENDERER__BINARY: string }).BROKKR__RENDERER__BINARY]);
  });

  it('copies only paths that exist in the repository and are not dockerignored', () => {
    const ignored = new Set(
      readFileSync(path.join(root, '.dockerignore'), 'utf8')
        .split('\n')
        .map((l) => l.trim().replace(/\/$/, ''))
        .filter((l) => l && !l.startsWith('#')),
    );
    const copies = stages.flatMap((s) => s.instructions).filter((i) => i.keyword === 'COPY');
    expect(copies).to.not.be.empty;
    for (const { from, sources } of copies.map((c) => copySources(c.args))) {
      if (from) {
        expect(
          stages.map((s) => s.name),
          `COPY --from=${from}`,
        ).to.include(from);
        continue;
      }
      for (const source of sources) {
        expect(existsSync(path.join(root, source)), `COPY source ${source}`).to.equal(true);
        expect(ignored.has(source.replace(/\/$/, '')), `${source} is excluded by .dockerignore`).to.equal(false);
      }
    }
  });

  it('builds the way the repository does: npm ci, tsc -b, then prunes dev dependencies', () => {
    const build = runs(stage('build')).join('\n');
    expect(build).to.match(/\bnpm ci\b/);
    expect(build).to.match(/\btsc -b\b/);
    expect(build).to.match(/\bnpm prune --omit=dev\b/);
    const scripts = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['build']).to.match(/\btsc -b\b/);
    expect(existsSync(path.join(root, 'package-lock.json')), 'npm ci needs the lockfile').to.equal(true);
  });

  it('ships node_modules, each package dist, migrations and scripts to the runtime stage', () => {
    const assembled = runs(stage('build')).join('\n');
    for (const part of ['node_modules', 'migrations', 'scripts', 'package.json', '"$pkg/dist"']) expect(assembled).to.include(part);
    const runtimeCopies = stage('runtime')
      .instructions.filter((i) => i.keyword === 'COPY')
      .map((i) => copySources(i.args));
    expect(runtimeCopies.every((c) => c.from === 'build' || c.from === 'renderer')).to.equal(true);
  });

  it('runs as a non-root user in production mode, the api by default', () => {
    const runtime = stage('runtime').instructions;
    const user = runtime.filter((i) => i.keyword === 'USER').at(-1)?.args;
    expect(user, 'USER')
      .to.be.a('string')
      .and.not.match(/^(root|0)(:|$)/);
    expect(runtime.some((i) => i.keyword === 'ENV' && /\bNODE_ENV=production\b/.test(i.args))).to.equal(true);
    const cmd = runtime.filter((i) => i.keyword === 'CMD').at(-1)?.args ?? '[]';
    expect(JSON.parse(cmd)).to.deep.equal(nodeCommand('api'));
  });
});

interface K8sObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  spec?: K8sSpec;
}

interface K8sProbe {
  httpGet?: { path?: string; port?: string | number };
}

interface K8sContainer {
  command?: string[];
  ports?: { name?: string; containerPort?: number }[];
  env?: { name: string }[];
  livenessProbe?: K8sProbe;
  readinessProbe?: K8sProbe;
  resources?: { requests?: Record<string, string> };
}

interface K8sSpec {
  selector?: Record<string, unknown>;
  ports?: { port?: number; targetPort?: string | number }[];
  template?: { metadata?: { labels?: Record<string, string> }; spec?: { containers?: K8sContainer[] } };
}

describe('k8s/hub manifests', () => {
  const dir = path.join(root, 'k8s/hub');
  const knownNames = configVariableNames();
  const objects: K8sObject[] = [];
  for (const file of readdirSync(dir).filter((f) => /\.ya?ml$/.test(f))) {
    for (const doc of parseAllDocuments(readFileSync(path.join(dir, file), 'utf8'))) {
      if ('errors' in doc && doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]?.message}`);
      objects.push(doc.toJS() as K8sObject);
    }
  }
  const find = (kind: string, name: string): K8sObject | undefined => objects.find((o) => o.kind === kind && o.metadata?.name === name);

  it('every document has apiVersion, kind and metadata.name, namespaced in brokkr', () => {
    expect(objects.length).to.be.greaterThan(5);
    for (const o of objects) {
      expect(o.apiVersion, JSON.stringify(o.metadata)).to.be.a('string').and.not.empty;
      expect(o.kind, JSON.stringify(o.metadata)).to.be.a('string').and.not.empty;
      expect(o.metadata?.name, `${o.kind} name`).to.be.a('string').and.not.empty;
      if (o.kind !== 'Namespace') expect(o.metadata?.namespace, `${o.kind}/${o.metadata?.name}`).to.equal('brokkr');
    }
    expect(find('Namespace', 'brokkr')).to.not.equal(undefined);
  });

  it('configures only variable names the config package defines (the hub services; NATS has its own)', () => {
    const hubObjects = objects.filter((o) => o.metadata?.labels?.['app.kubernetes.io/name'] !== 'nats');
    const names = hubObjects.flatMap((o) => [
      ...Object.keys(o.data ?? {}),
      ...Object.keys(o.stringData ?? {}),
      ...(o.spec?.template?.spec?.containers ?? []).flatMap((c) => (c.env ?? []).map((e) => e.name)),
    ]);
    expect(names).to.not.be.empty;
    for (const name of names) expect(knownNames.has(name), `${name} is not defined in shared/config/src`).to.equal(true);
  });

  for (const hub of HUB) {
    it(`deploys ${hub.name} with probes on /healthz and /readyz and resource requests`, () => {
      // k8s/hub is rendered from deploy/helm/brokkr-hub with release "brokkr" (test/helm-charts.test.ts).
      const deployment = find('Deployment', `brokkr-${hub.name}`);
      expect(deployment, `Deployment brokkr-${hub.name}`).to.not.equal(undefined);
      const container = deployment?.spec?.template?.spec?.containers?.[0] ?? {};
      expect(container.command).to.deep.equal(nodeCommand(hub.name));
      expect(container).to.have.nested.property('ports[0].containerPort', hub.port);
      expect(container).to.have.nested.property('livenessProbe.httpGet.path', '/healthz');
      expect(container).to.have.nested.property('readinessProbe.httpGet.path', '/readyz');
      expect(container).to.have.nested.property('resources.requests').that.includes.keys('cpu', 'memory');
    });
  }

  it('exposes the api through a Service on port 3000', () => {
    const service = find('Service', 'brokkr-api');
    expect(service?.spec?.ports?.[0]?.port).to.equal(3000);
    const podLabels = find('Deployment', 'brokkr-api')?.spec?.template?.metadata?.labels;
    expect(podLabels).to.include(service?.spec?.selector as Record<string, string>);
  });
});
