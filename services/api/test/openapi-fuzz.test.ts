import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import { startTestApi, type TestApi } from './support/index.ts';
import { fuzzConfigToml } from './support/fuzz-config.ts';
import { seedForFuzzing, type FuzzSeed } from './support/fuzz-seed.ts';
import { installSchemathesis, runSchemathesis, type FuzzFailure, type FuzzResult } from './support/schemathesis.ts';

/**
 * Schema-conformance fuzzing of every operation in /docs/openapi.json with schemathesis
 *: no 5xx (`not_a_server_error`) and no status the document does not
 * declare for the operation (`status_code_conformance`). Bounded: a fixed seed and a fixed
 * number of examples per operation, about a minute in all on 2 cores. Runs as an agent, then a
 * generator, then the admin (whose deletes and rotations could otherwise end the others' PAKs);
 * seeded resources give the path ids something real to hit.
 */

const SEED = 20261124;
const CHECKS = ['not_a_server_error', 'status_code_conformance'] as const;
// No stateful phase: the document has no links, and state changes are what the seed is for.
const PHASES = ['examples', 'coverage', 'fuzzing'] as const;
const RUN_TIMEOUT_MS = 5 * 60_000;

interface Identity {
  name: string;
  pak: (api: TestApi, seed: FuzzSeed) => string;
  maxExamples: number;
}

const IDENTITIES: readonly Identity[] = [
  { name: 'agent', pak: (_api, seed) => seed.agent.pak, maxExamples: 5 },
  { name: 'generator', pak: (_api, seed) => seed.generator.pak, maxExamples: 5 },
  { name: 'admin', pak: (api) => api.adminPak, maxExamples: 10 },
];

const KIND: Record<string, string> = { not_a_server_error: 'server error', status_code_conformance: 'undeclared status' };
const KINDS: Record<string, string> = { not_a_server_error: 'server errors', status_code_conformance: 'undeclared statuses' };

function describeFailure(who: string, f: FuzzFailure): string {
  return `[${who}] ${KIND[f.check] ?? f.check}: ${f.operation} → ${f.status ?? '?'} (${f.message})`;
}

function countsLine(who: string, r: FuzzResult): string {
  const byKind = CHECKS.map((c) => `${r.failures.filter((f) => f.check === c).length} ${KINDS[c]}`).join(', ');
  return `[openapi-fuzz] ${who}: ${r.operations} operations, ${r.cases} cases, ${r.failures.length} failures (${byKind}), ${r.errors.length} errors, ${(r.durationMs / 1000).toFixed(1)} s`;
}

describe('OpenAPI conformance fuzzing (schemathesis)', function () {
  this.timeout(15 * 60_000);
  const infra = useTestInfra({ nats: true });
  let st: string;
  let api: TestApi;
  let seed: FuzzSeed;

  before(async () => {
    st = installSchemathesis();
    // Long-polls (target state, the pending lists) hold at most 1 s: schemathesis does not always
    // keep the `wait` binding (extra query parameters in the fuzzing phase), and a request held for
    // its generated wait outlives the 10 s request timeout.
    api = await startTestApi(infra, { env: { BROKKR__BROKER__LONG_POLL_MAX_SECONDS: '1' } });
    seed = await seedForFuzzing(api);
  });

  after(async () => {
    await api?.stop();
  });

  it('answers every operation as agent, generator and admin without a 5xx or an undeclared status', async () => {
    const operations = Object.values((await api.anonymous.get('//docs/openapi.json')).body.paths as Record<string, object>).reduce<number>(
      (n, methods) => n + Object.keys(methods).length,
      0,
    );
    const config = fuzzConfigToml(seed);
    const problems: string[] = [];
    const totals = { cases: 0, failures: 0, ms: 0 };
    for (const identity of IDENTITIES) {
      const pak = identity.pak(api, seed);
      // A run that ended this PAK would leave the next ones testing nothing but 401s.
      expect((await api.admin.as(pak).post('/auth/pak')).status, `${identity.name} PAK before its run`).to.equal(200);
      const result = await runSchemathesis({
        st,
        schemaUrl: `${api.url}/docs/openapi.json`,
        config,
        pak,
        maxExamples: identity.maxExamples,
        seed: SEED,
        checks: CHECKS,
        phases: PHASES,
        timeoutMs: RUN_TIMEOUT_MS,
      });
      console.log(countsLine(identity.name, result));
      totals.cases += result.cases;
      totals.failures += result.failures.length;
      totals.ms += result.durationMs;
      problems.push(
        ...result.failures.map((f) => describeFailure(identity.name, f)),
        ...result.errors.map((e) => `[${identity.name}] ${e}`),
      );
      if (result.operations !== operations || result.cases === 0 || (result.exitCode !== 0 && result.failures.length === 0)) {
        problems.push(
          `[${identity.name}] incomplete run (exit ${result.exitCode}, ${result.operations}/${operations} operations):\n${result.output.slice(-3000)}`,
        );
      }
    }
    console.log(
      `[openapi-fuzz] total: ${operations} operations × ${IDENTITIES.length} identities, ${totals.cases} cases, ${totals.failures} failures, ${(totals.ms / 1000).toFixed(1)} s`,
    );
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });
});
