import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { trace } from '@opentelemetry/api';
import { startWebhookReceiver } from '@brokkr/testkit';
import { createMetricsRegistry, metricsFor, startTelemetry, tracesUrl } from '@brokkr/telemetry';

describe('@brokkr/telemetry metrics', () => {
  it('renders registered metrics with the service label', async () => {
    const registry = createMetricsRegistry({ service: 'unit-test' });
    const jobs = metricsFor(registry).counter({ name: 'brokkr_test_jobs_total', help: 'Jobs seen', labelNames: ['outcome'] });
    jobs.inc({ outcome: 'ok' }, 3);
    const text = await registry.metrics();
    expect(text).to.contain('# TYPE brokkr_test_jobs_total counter');
    expect(text).to.match(/brokkr_test_jobs_total\{outcome="ok",service="unit-test"\} 3/);
    expect(text).to.contain('process_cpu_user_seconds_total');
    expect(registry.contentType).to.contain('text/plain');
  });

  it('leaves process metrics out when asked', async () => {
    const registry = createMetricsRegistry({ service: 'bare', defaultMetrics: false });
    metricsFor(registry).histogram({ name: 'brokkr_test_seconds', help: 'Durations' }).observe(0.02);
    const text = await registry.metrics();
    expect(text).to.not.contain('process_cpu_user_seconds_total');
    expect(text).to.contain('brokkr_test_seconds_bucket{le="0.025",service="bare"} 1');
  });

  it('keeps registries of different services apart', async () => {
    const a = createMetricsRegistry({ service: 'a', defaultMetrics: false });
    const b = createMetricsRegistry({ service: 'b', defaultMetrics: false });
    metricsFor(a).gauge({ name: 'brokkr_test_depth', help: 'Depth' }).set(1);
    metricsFor(b).gauge({ name: 'brokkr_test_depth', help: 'Depth' }).set(2);
    expect(await a.metrics()).to.contain('brokkr_test_depth{service="a"} 1');
    expect(await b.metrics()).to.contain('brokkr_test_depth{service="b"} 2');
  });
});

describe('@brokkr/telemetry tracing', () => {
  it('starts nothing when disabled', async () => {
    const telemetry = startTelemetry({ serviceName: 'off', enabled: false, otlpEndpoint: 'http://127.0.0.1:1', samplingRate: 1 });
    await telemetry.ready;
    const span = trace.getTracer('test').startSpan('noop');
    expect(span.isRecording()).to.equal(false);
    span.end();
    await telemetry.shutdown();
  });

  it('does not even load the OpenTelemetry SDK when disabled', async () => {
    // A fresh process records every module it loads: the SDK (~40 MiB of RSS) must not be among them.
    const script = `
      import { registerHooks } from 'node:module';
      const loaded = [];
      registerHooks({ load: (url, context, next) => (loaded.push(url), next(url, context)) });
      const { startTelemetry } = await import('@brokkr/telemetry');
      await startTelemetry({ serviceName: 'off', enabled: false, otlpEndpoint: 'http://127.0.0.1:1', samplingRate: 1 }).ready;
      console.log(JSON.stringify(loaded));`;
    const cwd = fileURLToPath(new URL('..', import.meta.url));
    const args = ['--conditions=development', '--import', 'tsx', '--input-type=module', '-e', script];
    const { stdout } = await promisify(execFile)(process.execPath, args, { cwd });
    const loaded = JSON.parse(stdout) as string[];
    expect(loaded.some((url) => url.includes('prom-client'))).to.equal(true);
    expect(loaded.filter((url) => url.includes('@opentelemetry/sdk-'))).to.deep.equal([]);
  });

  it('builds the OTLP traces URL from a base endpoint', () => {
    expect(tracesUrl('http://collector:4318')).to.equal('http://collector:4318/v1/traces');
    expect(tracesUrl('http://collector:4318/')).to.equal('http://collector:4318/v1/traces');
    expect(tracesUrl('http://collector:4318/v1/traces')).to.equal('http://collector:4318/v1/traces');
  });

  it('exports spans over OTLP/HTTP when enabled and flushes them on shutdown', async () => {
    // An OTLP/HTTP collector is an HTTP endpoint taking POSTs: the testkit's receiver records them.
    const collector = await startWebhookReceiver(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{}' }));
    try {
      const telemetry = startTelemetry({
        serviceName: 'otel-test',
        enabled: true,
        otlpEndpoint: `http://127.0.0.1:${collector.port}`,
        samplingRate: 1,
      });
      await telemetry.ready;
      const span = trace.getTracer('test').startSpan('recorded-operation');
      expect(span.isRecording()).to.equal(true);
      span.end();
      await telemetry.shutdown();
      await telemetry.shutdown();
      expect(collector.requests.map((r) => r.path)).to.include('/v1/traces');
      const body = collector.requests.map((r) => r.body).join('\n');
      expect(body).to.contain('recorded-operation');
      expect(body).to.contain('otel-test');
      // After shutdown the API is back to its no-op state.
      expect(trace.getTracer('test').startSpan('after').isRecording()).to.equal(false);
    } finally {
      await collector.close();
    }
  });
});
