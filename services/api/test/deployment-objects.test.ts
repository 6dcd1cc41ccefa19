import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import {
  RFC3339_Z,
  collectCore,
  createGenerator,
  createStack,
  insertAgentRow,
  readStream,
  startTestApi,
  type ApiClient,
  type ApiResponse,
  type TestApi,
} from './support/index.ts';

const DO_FIELDS = [
  'created_at',
  'deleted_at',
  'id',
  'is_deletion_marker',
  'sequence_id',
  'stack_id',
  'submitted_at',
  'updated_at',
  'yaml_checksum',
  'yaml_content',
];
const sha256 = (content: string | Buffer) => createHash('sha256').update(content).digest('hex');

const MULTI_DOC = `apiVersion: v1
kind: Namespace
metadata:
  name: demo
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: demo
data:
  greeting: "héllo ✓"
`;

/** The classic "billion laughs": nine levels of nine-fold alias expansion. */
const BILLION_LAUGHS = [
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  ...'bcdefghi'.split('').map((name, i) => {
    const prev = 'abcdefghi'[i]!;
    return `${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`;
  }),
].join('\n');

describe('api deployment objects', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let owner: { id: string; client: ApiClient };
  let stackId: string;

  const countObjects = async (id: string) =>
    Number((await api.sql.query<{ n: string }>('SELECT count(*) AS n FROM deployment_objects WHERE stack_id = $1', [id])).rows[0]!.n);

  const postYaml = (id: string, yaml: string | Buffer, contentType = 'application/yaml', query?: Record<string, string>) =>
    owner.client.request('POST', `/stacks/${id}/deployment-objects`, { raw: yaml, contentType, ...(query ? { query } : {}) });

  async function insertAgent(targets: string[]) {
    const { id, pak } = await insertAgentRow(api.sql, { status: 'ACTIVE', targets });
    return { id, client: api.admin.as(pak) };
  }

  function expectInvalid(res: ApiResponse, what: string) {
    expect(res.status, `${what}: ${res.text}`).to.equal(400);
    expect(res.body.code, what).to.equal('invalid_deployment_object');
  }

  before(async () => {
    api = await startTestApi(infra);
    const gen = await createGenerator(api.admin);
    owner = { id: gen.generator.id, client: gen.client };
    stackId = (await createStack(owner.client, { generator_id: owner.id })).id;
  });

  after(async () => {
    await api?.stop();
  });

  describe('POST /stacks/{id}/deployment-objects', () => {
    it('stores a multi-document JSON submission: 201 DeploymentObject with checksum = sha256', async () => {
      const res = await owner.client.post(`/stacks/${stackId}/deployment-objects`, { yaml_content: MULTI_DOC });
      expect(res.status, res.text).to.equal(201);
      expect(Object.keys(res.body).sort()).to.deep.equal(DO_FIELDS);
      expect(res.body).to.include({ stack_id: stackId, yaml_content: MULTI_DOC, is_deletion_marker: false, deleted_at: null });
      expect(res.body.yaml_checksum)
        .to.equal(sha256(MULTI_DOC))
        .and.match(/^[0-9a-f]{64}$/);
      expect(res.body.sequence_id).to.be.a('number');
      for (const field of ['created_at', 'updated_at', 'submitted_at']) expect(res.body[field]).to.match(RFC3339_Z);
    });

    it('accepts a raw YAML body for each YAML content type and ?deletion_marker=true', async () => {
      for (const type of ['application/yaml', 'text/yaml', 'application/x-yaml', 'application/yaml; charset=utf-8']) {
        const res = await postYaml(stackId, MULTI_DOC, type);
        expect(res.status, type).to.equal(201);
        expect(res.body.yaml_content).to.equal(MULTI_DOC);
        expect(res.body.is_deletion_marker).to.equal(false);
      }
      const marker = await postYaml(stackId, 'kind: Marker\n', 'text/yaml', { deletion_marker: 'true' });
      expect(marker.status).to.equal(201);
      expect(marker.body.is_deletion_marker).to.equal(true);
      const blankMarker = await postYaml(stackId, '', 'application/yaml', { deletion_marker: 'true' });
      expect(blankMarker.status).to.equal(201);
      expect(blankMarker.body).to.include({ is_deletion_marker: true, yaml_content: '', yaml_checksum: sha256('') });
    });

    it('accepts a blank deletion marker in JSON and ignores the query on the JSON path', async () => {
      const res = await owner.client.post(`/stacks/${stackId}/deployment-objects`, { yaml_content: '', is_deletion_marker: true });
      expect(res.status).to.equal(201);
      expect(res.body.is_deletion_marker).to.equal(true);
      const ignored = await owner.client.post(
        `/stacks/${stackId}/deployment-objects`,
        { yaml_content: 'a: 1\n' },
        { query: { deletion_marker: 'true' } },
      );
      expect(ignored.status).to.equal(201);
      expect(ignored.body.is_deletion_marker).to.equal(false);
    });

    it('reads bodies without a YAML content type as JSON', async () => {
      const res = await owner.client.request('POST', `/stacks/${stackId}/deployment-objects`, {
        raw: JSON.stringify({ yaml_content: 'x: 1\n' }),
      });
      expect(res.status, res.text).to.equal(201);
      const yamlAsText = await owner.client.request('POST', `/stacks/${stackId}/deployment-objects`, {
        raw: 'x: 1\n',
        contentType: 'text/plain',
      });
      expectInvalid(yamlAsText, 'YAML sent as text/plain');
    });

    it('gives increasing sequence ids', async () => {
      const ids: number[] = [];
      for (let i = 0; i < 3; i++) ids.push((await postYaml(stackId, `n: ${i}\n`)).body.sequence_id);
      expect(ids[1]).to.be.greaterThan(ids[0]!);
      expect(ids[2]).to.be.greaterThan(ids[1]!);
    });

    it('rejects malformed, blank, null-only, alias-bomb, non-UTF-8 and bad JSON bodies with 400, storing nothing', async () => {
      const stack = (await createStack(owner.client, { generator_id: owner.id })).id;
      const yamlCases: [string, string | Buffer][] = [
        ['malformed', 'a: [1, 2\nb: }'],
        ['bad indentation', 'a:\n  b: 1\n c: 2\n'],
        ['duplicate keys', 'a: 1\na: 2\n'],
        ['unresolved alias', 'a: *nowhere\n'],
        ['blank', '  \n\t\n'],
        ['empty', ''],
        ['comments only', '# nothing here\n'],
        ['null only', '~\n---\nnull\n---\n'],
        ['billion laughs', BILLION_LAUGHS],
        ['alias bomb in a later document', `ok: true\n---\n${BILLION_LAUGHS}`],
        ['deep nesting', '['.repeat(100_000)],
        ['NUL character', 'a: "\u0000"\n'],
        ['non-UTF-8', Buffer.from([0x61, 0x3a, 0x20, 0xff, 0xfe, 0x0a])],
      ];
      for (const [what, body] of yamlCases) expectInvalid(await postYaml(stack, body), what);

      const path = `/stacks/${stack}/deployment-objects`;
      const jsonCases: [string, Parameters<ApiClient['request']>[2]][] = [
        ['malformed JSON', { raw: '{"yaml_content": ', contentType: 'application/json' }],
        ['missing yaml_content', { json: { is_deletion_marker: false } }],
        ['mistyped yaml_content', { json: { yaml_content: 42 } }],
        ['mistyped marker', { json: { yaml_content: 'a: 1', is_deletion_marker: 'yes' } }],
        ['not an object', { json: ['a: 1'] }],
        ['blank content without marker', { json: { yaml_content: '   ' } }],
        ['null-only content', { json: { yaml_content: 'null' } }],
        ['lone surrogate', { raw: '{"yaml_content": "a: \\ud800"}', contentType: 'application/json' }],
        [
          'non-UTF-8 JSON',
          {
            raw: Buffer.concat([Buffer.from('{"yaml_content": "a: '), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]),
            contentType: 'application/json',
          },
        ],
      ];
      for (const [what, options] of jsonCases) expectInvalid(await owner.client.request('POST', path, options), what);

      expect(await countObjects(stack)).to.equal(0);
    });

    it('answers 413 for a body over the limit and 400 for a bad deletion_marker value', async () => {
      const big = await postYaml(stackId, `a: "${'x'.repeat(3 * 1024 * 1024)}"\n`);
      expect(big.status).to.equal(413);
      expect(big.body.code).to.equal('payload_too_large');
      const badQuery = await postYaml(stackId, 'a: 1\n', 'application/yaml', { deletion_marker: 'maybe' });
      expect(badQuery.status).to.equal(400);
    });

    it('checks the stack (404, 403) before the body (400)', async () => {
      const unknown = await postYaml(crypto.randomUUID(), '');
      expect(unknown.status).to.equal(404);
      expect(unknown.body.code).to.equal('stack_not_found');
      const other = await createGenerator(api.admin);
      const foreign = await other.client.request('POST', `/stacks/${stackId}/deployment-objects`, {
        raw: '',
        contentType: 'application/yaml',
      });
      expect(foreign.status).to.equal(403);
      expect(foreign.body.code).to.equal('stack_not_owned');
    });

    it('publishes deployment.created to BROKKR_EVENTS with Nats-Msg-Id = event id', async () => {
      const created = (await postYaml(stackId, 'event: test\n')).body;
      const message = await eventually(async () => {
        const all = await readStream<{ id: string; event_type: string; timestamp: string; data: Record<string, unknown> }>(
          api.natsUrl,
          'BROKKR_EVENTS',
        );
        return all.find((m) => m.data.event_type === 'deployment.created' && m.data.data.deployment_object_id === created.id);
      });
      expect(message.subject).to.equal('brokkr.events.deployment.created');
      expect(message.msgId).to.equal(message.data.id);
      expect(message.data.timestamp).to.match(RFC3339_Z);
      expect(message.data.data).to.deep.equal({
        deployment_object_id: created.id,
        stack_id: stackId,
        sequence_id: created.sequence_id,
        created_at: created.created_at,
      });
    });

    it('wakes every agent associated with the stack', async () => {
      const agent = await insertAgent([stackId]);
      const notes = await collectCore(api.natsUrl, `brokkr.notify.agent.${agent.id}`);
      try {
        expect((await postYaml(stackId, 'wake: up\n')).status).to.equal(201);
        await eventually(() => notes.messages.length > 0, { what: 'a wake-up for the targeted agent' });
      } finally {
        await notes.close();
      }
    });
  });

  describe('GET /stacks/{id}/deployment-objects', () => {
    it('lists the live objects newest first', async () => {
      const stack = (await createStack(owner.client, { generator_id: owner.id })).id;
      const first = (await postYaml(stack, 'n: 1\n')).body;
      const second = (await postYaml(stack, 'n: 2\n')).body;
      const res = await owner.client.get(`/stacks/${stack}/deployment-objects`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal([second, first]);
    });

    it('answers 404 for an unknown or deleted stack', async () => {
      const stack = (await createStack(owner.client, { generator_id: owner.id })).id;
      await owner.client.delete(`/stacks/${stack}`);
      for (const id of [stack, crypto.randomUUID()]) {
        const res = await owner.client.get(`/stacks/${id}/deployment-objects`);
        expect(res.status).to.equal(404);
        expect(res.body.code).to.equal('stack_not_found');
      }
    });
  });

  describe('GET /deployment-objects/{id}', () => {
    it('returns JSON by default and the exact stored bytes for YAML Accept headers', async () => {
      const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('# bom and CRLF\r\nkey: "välue"\r\n---\n- 1\n- 2   \n')]);
      const created = await postYaml(stackId, bytes);
      expect(created.status, created.text).to.equal(201);
      expect(created.body.yaml_checksum).to.equal(sha256(bytes));

      const asJson = await owner.client.get(`/deployment-objects/${created.body.id}`);
      expect(asJson.status).to.equal(200);
      expect(asJson.body).to.deep.equal(created.body);

      for (const accept of ['application/yaml', 'text/yaml', 'application/x-yaml', 'application/json, application/yaml;q=0.5']) {
        const res = await fetch(`${api.url}/api/v1/deployment-objects/${created.body.id}`, {
          headers: { authorization: `Bearer ${api.adminPak}`, accept },
        });
        expect(res.status, accept).to.equal(200);
        expect(res.headers.get('content-type')).to.equal('application/yaml');
        expect(Buffer.from(await res.arrayBuffer()).equals(bytes), accept).to.equal(true);
      }
    });

    it('answers 404 deployment_object_not_found for unknown and retired objects, 400 for bad ids', async () => {
      const unknown = await api.admin.get(`/deployment-objects/${crypto.randomUUID()}`);
      expect(unknown.status).to.equal(404);
      expect(unknown.body.code).to.equal('deployment_object_not_found');
      const stack = (await createStack(owner.client, { generator_id: owner.id })).id;
      const retired = (await postYaml(stack, 'a: 1\n')).body;
      await owner.client.delete(`/stacks/${stack}`);
      const gone = await api.admin.get(`/deployment-objects/${retired.id}`);
      expect(gone.status).to.equal(404);
      expect(gone.body.code).to.equal('deployment_object_not_found');
      const bad = await api.admin.get('/deployment-objects/not-a-uuid');
      expect(bad.status).to.equal(400);
    });

    it("answers 404 stack_not_found for the deleted stack's marker, after the access check", async () => {
      const stack = (await createStack(owner.client, { generator_id: owner.id })).id;
      const agent = await insertAgent([stack]);
      const stranger = await insertAgent([]);
      await owner.client.delete(`/stacks/${stack}`);
      const { rows } = await api.sql.query<{ id: string }>(
        'SELECT id FROM deployment_objects WHERE stack_id = $1 AND is_deletion_marker AND deleted_at IS NULL',
        [stack],
      );
      const markerId = rows[0]!.id;
      for (const client of [api.admin, owner.client, agent.client]) {
        const res = await client.get(`/deployment-objects/${markerId}`);
        expect(res.status).to.equal(404);
        expect(res.body.code).to.equal('stack_not_found');
      }
      const denied = await stranger.client.get(`/deployment-objects/${markerId}`);
      expect(denied.status).to.equal(403);
      expect(denied.body.code).to.equal('agent_not_associated');
    });
  });
});
