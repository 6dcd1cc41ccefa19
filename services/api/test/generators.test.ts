import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import { auditMessages, createGenerator, startTestApi, uniqueName, type Generator, type TestApi } from './support/index.ts';

describe('api generators', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;

  before(async () => {
    api = await startTestApi(infra);
  });

  after(async () => {
    await api?.stop();
  });

  describe('GET /generators and /paks', () => {
    it('lists live generators without the system generator (admin only)', async () => {
      const { generator, client } = await createGenerator(api.admin);
      const res = await api.admin.get<Generator[]>('/generators');
      expect(res.status).to.equal(200);
      const names = res.body.map((g) => g.name);
      expect(names).to.include.members(['admin-generator', generator.name]);
      expect(names).to.not.include('__system__');
      expect(res.body[0]).to.have.all.keys(
        'id',
        'created_at',
        'updated_at',
        'deleted_at',
        'name',
        'description',
        'last_active_at',
        'is_active',
        'is_system',
      );
      const denied = await client.get('/generators');
      expect(denied.status).to.equal(403);
      expect(denied.body.code).to.equal('admin_required');
    });

    it('lists tenants as {id, name} (admin only)', async () => {
      const { generator, client } = await createGenerator(api.admin);
      const res = await api.admin.get('/paks');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.include({ id: generator.id, name: generator.name });
      expect(res.body.map((p: { name: string }) => p.name)).to.not.include('__system__');
      expect((await client.get('/paks')).body.code).to.equal('admin_required');
    });
  });

  describe('POST /generators', () => {
    it('creates a generator with a working PAK and audits generator.created + pak.created', async () => {
      const name = uniqueName('gen');
      const res = await api.admin.post('/generators', { name, description: 'ci pipeline' });
      expect(res.status).to.equal(201);
      expect(res.body.pak).to.match(/^brokkr_BR[1-9A-HJ-NP-Za-km-z]{6}_[1-9A-HJ-NP-Za-km-z]{30,34}$/);
      expect(res.body.generator).to.include({ name, description: 'ci pipeline', is_active: true, is_system: false, deleted_at: null });
      expect(res.body.generator).to.not.have.property('pak_hash');
      const who = await api.admin.as(res.body.pak).post('/auth/pak');
      expect(who.body.generator).to.equal(res.body.generator.id);

      const entries = await eventually(async () => {
        const all = (await auditMessages(api.natsUrl)).filter((e) => e.resource_id === res.body.generator.id);
        return all.length >= 2 ? all : undefined;
      });
      const created = entries.find((e) => e.action === 'generator.created')!;
      expect(created).to.include({ actor_type: 'admin', actor_id: null, resource_type: 'generator' });
      expect(created.details).to.deep.equal({ name });
      const pakCreated = entries.find((e) => e.action === 'pak.created')!;
      expect(pakCreated).to.include({ resource_type: 'pak' });
      expect(pakCreated.details).to.deep.equal({ entity: 'generator', name });
    });

    it('rejects duplicates (409 unique_violation), non-admins (403), bad bodies (422) and overlong names (400)', async () => {
      const { generator, client } = await createGenerator(api.admin);
      const dup = await api.admin.post('/generators', { name: generator.name });
      expect(dup.status).to.equal(409);
      expect(dup.body).to.deep.include({ code: 'unique_violation', details: { constraint: 'unique_generator_name' } });
      expect((await client.post('/generators', { name: uniqueName('x') })).body.code).to.equal('admin_required');
      const missing = await api.admin.post('/generators', { description: 'no name' });
      expect(missing.status).to.equal(422);
      expect(missing.body.code).to.equal('invalid_request_body');
      const long = await api.admin.post('/generators', { name: 'x'.repeat(256) });
      expect(long.status).to.equal(400);
      expect(long.body.code).to.equal('invalid_input');
    });

    it('allows reusing the name of a deleted generator', async () => {
      const { generator } = await createGenerator(api.admin);
      expect((await api.admin.delete(`/generators/${generator.id}`)).status).to.equal(204);
      expect((await api.admin.post('/generators', { name: generator.name })).status).to.equal(201);
    });
  });

  describe('GET /generators/:id', () => {
    it('lets the admin and the generator itself read it; checks ownership before existence', async () => {
      const { generator, client } = await createGenerator(api.admin);
      expect((await api.admin.get(`/generators/${generator.id}`)).body).to.deep.equal(generator);
      expect((await client.get(`/generators/${generator.id}`)).status).to.equal(200);
      const other = await createGenerator(api.admin);
      const denied = await other.client.get(`/generators/${generator.id}`);
      expect(denied.status).to.equal(403);
      expect(denied.body.code).to.equal('generator_not_owned');
      const unknownAsGenerator = await client.get(`/generators/${randomUUID()}`);
      expect(unknownAsGenerator.body.code).to.equal('generator_not_owned');
      const unknown = await api.admin.get(`/generators/${randomUUID()}`);
      expect(unknown.status).to.equal(404);
      expect(unknown.body.code).to.equal('generator_not_found');
      expect((await api.admin.get('/generators/123')).body.code).to.equal('invalid_id');
    });
  });

  describe('PUT /generators/:id', () => {
    it('writes name, description and is_active from the full object; ignores is_system and timestamps', async () => {
      const { generator, client } = await createGenerator(api.admin);
      const name = uniqueName('renamed');
      const body = { ...generator, name, description: 'new', is_system: true, created_at: '2000-01-01T00:00:00Z' };
      const res = await client.put(`/generators/${generator.id}`, body);
      expect(res.status).to.equal(200);
      expect(res.body).to.include({
        id: generator.id,
        name,
        description: 'new',
        is_active: true,
        is_system: false,
        created_at: generator.created_at,
      });
      // is_active is the admin's to change (deactivation.test.ts).
      const kept = await api.admin.put(`/generators/${generator.id}`, { ...res.body, description: null, is_active: false });
      expect(kept.body).to.include({ description: 'new', is_active: false });
    });

    it('answers 404 not_found, 403 generator_not_owned, 409 on a name clash and 422 for a partial object', async () => {
      const { generator } = await createGenerator(api.admin);
      const other = await createGenerator(api.admin);
      const id = randomUUID();
      const unknown = await api.admin.put(`/generators/${id}`, { ...generator, id });
      expect(unknown.status).to.equal(404);
      expect(unknown.body.code).to.equal('not_found');
      const denied = await other.client.put(`/generators/${generator.id}`, generator);
      expect(denied.body.code).to.equal('generator_not_owned');
      const clash = await api.admin.put(`/generators/${generator.id}`, { ...generator, name: other.generator.name });
      expect(clash.status).to.equal(409);
      expect(clash.body.details.constraint).to.equal('unique_generator_name');
      const partial = await api.admin.put(`/generators/${generator.id}`, { name: 'only-a-name' });
      expect(partial.status).to.equal(422);
      expect(partial.body.code).to.equal('invalid_request_body');
    });
  });

  describe('DELETE /generators/:id', () => {
    it('soft-deletes the generator, cascades to its stacks and stops its PAK', async () => {
      const { generator, client } = await createGenerator(api.admin);
      const { rows } = await api.sql.query<{ id: string }>('INSERT INTO stacks (name, generator_id) VALUES ($1, $2) RETURNING id', [
        uniqueName('stack'),
        generator.id,
      ]);
      const res = await client.delete(`/generators/${generator.id}`);
      expect(res.status).to.equal(204);
      expect(res.text).to.equal('');
      expect((await client.post('/auth/pak')).status).to.equal(401);
      expect((await api.admin.get(`/generators/${generator.id}`)).status).to.equal(404);
      const stack = await api.sql.query('SELECT deleted_at FROM stacks WHERE id = $1', [rows[0]!.id]);
      expect(stack.rows[0].deleted_at).to.not.equal(null);
      expect((await api.admin.delete(`/generators/${generator.id}`)).body.code).to.equal('generator_not_found');
    });

    it('refuses to delete the system generator and checks ownership first', async () => {
      const { rows } = await api.sql.query<{ id: string }>('SELECT id FROM generators WHERE is_system');
      const system = await api.admin.delete(`/generators/${rows[0]!.id}`);
      expect(system.status).to.equal(403);
      expect(system.body.code).to.equal('cannot_delete_system_generator');
      const { generator } = await createGenerator(api.admin);
      const other = await createGenerator(api.admin);
      expect((await other.client.delete(`/generators/${generator.id}`)).body.code).to.equal('generator_not_owned');
      expect((await api.admin.delete(`/generators/${randomUUID()}`)).status).to.equal(404);
    });
  });

  describe('POST /generators/:id/rotate-pak', () => {
    it('returns 201 with a new PAK; the old one stops working; audits pak.rotated with the real actor', async () => {
      const { generator, pak, client } = await createGenerator(api.admin);
      const res = await client.post(`/generators/${generator.id}/rotate-pak`);
      expect(res.status).to.equal(201);
      expect(res.body.pak).to.not.equal(pak);
      expect(res.body.generator.id).to.equal(generator.id);
      expect((await client.post('/auth/pak')).status).to.equal(401);
      expect((await client.as(res.body.pak).post('/auth/pak')).status).to.equal(200);
      const entry = await eventually(async () =>
        (await auditMessages(api.natsUrl, 'pak.rotated')).find((e) => e.resource_id === generator.id),
      );
      expect(entry).to.include({ actor_type: 'generator', actor_id: generator.id, resource_type: 'generator' });
      expect(entry.details).to.deep.equal({ generator_name: generator.name });
    });

    it('answers 403 for another generator and 404 for an unknown one', async () => {
      const { generator } = await createGenerator(api.admin);
      const other = await createGenerator(api.admin);
      expect((await other.client.post(`/generators/${generator.id}/rotate-pak`)).body.code).to.equal('generator_not_owned');
      const unknown = await api.admin.post(`/generators/${randomUUID()}/rotate-pak`);
      expect(unknown.status).to.equal(404);
      expect(unknown.body.code).to.equal('generator_not_found');
    });
  });
});
