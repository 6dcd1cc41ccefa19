import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import { createGenerator, createStack, startTestApi, uniqueName, type ApiClient, type TestApi } from './support/index.ts';
import { corpus } from './fixtures/templates-corpus.ts';

/**
 * Templates in Brokkr's Tera syntax (Brokkr's own e2e service template and how-to examples
 * among them), created and instantiated over HTTP: each renders to exactly the expected YAML,
 * which is what the stack then holds.
 */
describe('api templates: a corpus of Tera templates renders to the expected YAML', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;
  let generator: { id: string; client: ApiClient };

  before(async () => {
    api = await startTestApi(infra);
    const g = await createGenerator(api.admin);
    generator = { id: g.generator.id, client: g.client };
  });

  after(async () => {
    await api?.stop();
  });

  it(`has at least 15 templates`, () => {
    expect(corpus.length).to.be.at.least(15);
  });

  for (const entry of corpus) {
    it(entry.name, async () => {
      const created = await generator.client.post<{ id: string }>('/templates', {
        name: uniqueName('corpus'),
        template_content: entry.template,
        parameters_schema: JSON.stringify(entry.schema),
      });
      expect(created.status, created.text).to.equal(201);
      const stack = await createStack(generator.client, { generator_id: generator.id });
      const res = await generator.client.post<{ id: string; yaml_content: string }>(
        `/stacks/${stack.id}/deployment-objects/from-template`,
        {
          template_id: created.body.id,
          parameters: entry.parameters,
        },
      );
      expect(res.status, res.text).to.equal(201);
      expect(res.body.yaml_content).to.equal(entry.expected);
      const stored = await generator.client.get(`/deployment-objects/${res.body.id}`, { headers: { accept: 'application/yaml' } });
      expect(stored.text).to.equal(entry.expected);
    });
  }
});
