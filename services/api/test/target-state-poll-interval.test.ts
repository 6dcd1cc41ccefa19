import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import { ApiClient, createAgent, startTestApi, type TestApi } from './support/index.ts';

/**
 * BROKKR__BROKER__AGENT_POLL_SECONDS: the hub tells agents that poll how often to ask, with every
 * target-state answer (`Brokkr-Poll-Interval`), so a fleet can be slowed down without touching
 * each agent. Unset: the header is not sent and Brokkr's answer is unchanged.
 */
describe('api target state: the poll interval the hub tells agents', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;

  before(async () => {
    api = await startTestApi(infra, { env: { BROKKR__BROKER__AGENT_POLL_SECONDS: '45' } });
  });
  after(() => api?.stop());

  it('sends Brokkr-Poll-Interval on 200 and 304 when set, and nothing when not', async () => {
    const { agent, client } = await createAgent(api.admin);
    const first = await client.get(`/agents/${agent.id}/target-state`);
    expect(first.status).to.equal(200);
    expect(first.headers.get('brokkr-poll-interval')).to.equal('45');
    const again = await client.get(`/agents/${agent.id}/target-state`, { headers: { 'if-none-match': first.headers.get('etag')! } });
    expect(again.status).to.equal(304);
    expect(again.headers.get('brokkr-poll-interval')).to.equal('45');

    const unset = await api.spawnReplica({ BROKKR__BROKER__AGENT_POLL_SECONDS: '0' });
    const plain = await new ApiClient(unset.url, client.pak).get(`/agents/${agent.id}/target-state`);
    expect(plain.status).to.equal(200);
    expect(plain.headers.get('brokkr-poll-interval')).to.equal(null);
  });
});
