import { expect } from 'chai';
import { eventually, useTestInfra } from '@brokkr/testkit';
import { readStream, startTestApi, type TestApi } from './support/index.ts';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('api trace propagation (telemetry enabled)', () => {
  const infra = useTestInfra({ nats: true });
  let api: TestApi;

  before(async () => {
    // Nothing listens on the OTLP endpoint: exports fail quietly, propagation still works.
    api = await startTestApi(infra, {
      env: {
        BROKKR__TELEMETRY__ENABLED: 'true',
        BROKKR__TELEMETRY__OTLP_ENDPOINT: 'http://127.0.0.1:9',
        BROKKR__TELEMETRY__SAMPLING_RATE: '1',
      },
    });
  });

  after(async () => {
    await api?.stop();
  });

  it("carries the caller's trace from HTTP into the outbox row and the NATS message", async () => {
    const traceparent = `00-${TRACE_ID}-00f067aa0ba902b7-01`;
    const res = await api.admin.post('/agents', { name: 'traced-agent', cluster_name: 'c' }, { headers: { traceparent } });
    expect(res.status, res.text).to.equal(201);
    const row = await eventually(async () => {
      const { rows } = await api.sql.query(
        "SELECT id, headers FROM outbox WHERE event_type = 'agent.registered' AND payload->'data'->>'name' = 'traced-agent' AND published_at IS NOT NULL",
      );
      return rows[0];
    });
    expect(row.headers.traceparent).to.match(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));
    const message = (await readStream(api.natsUrl, 'BROKKR_EVENTS')).find((m) => m.msgId === row.id);
    expect(message?.headers.traceparent).to.equal(row.headers.traceparent);
  });
});
