/**
 * µs per deployment-object YAML validation, without and with the fast path (ADR 0025), for the
 * body bench:api posts, a ~1 KiB Deployment and a ~50 KiB multi-document stream. Prints the
 * median of several rounds. Run (under the heavy lock, the machine is shared):
 *   cd services/api && flock /tmp/brokkr-heavy.lock bash ../../scripts/with-node.sh node --import tsx --conditions=development test/yaml-validate.bench.ts
 */
import { fastPathProvesValid } from '../src/yaml/fast-path.ts';
import { DEFAULT_YAML_LIMITS } from '../src/yaml/limits.ts';
import { validateDeploymentYaml, validateWithoutFastPath, type ValidateOptions, type YamlVerdict } from '../src/yaml/validate.ts';
import { BENCH_CONFIGMAP, DEPLOYMENT, manifestStream } from './yaml-corpus.ts';

type Validate = (content: string, options: ValidateOptions) => YamlVerdict;

const plain = { isDeletionMarker: false };
const ROUNDS = 7;

/** Median µs per call over ROUNDS rounds of about 200 ms each. */
function microseconds(validate: Validate, content: string): number {
  if (!validate(content, plain).ok) throw new Error('the benchmark content must be valid');
  const calls = Math.max(5, Math.round(2_000_000 / Math.max(content.length, 100)));
  for (let i = 0; i < calls; i++) validate(content, plain); // warm up
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) validate(content, plain);
    rounds.push(Number(process.hrtime.bigint() - started) / 1000 / calls);
  }
  return rounds.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)] as number;
}

const inputs: [string, string][] = [
  ['bench:api ConfigMap', BENCH_CONFIGMAP],
  ['Deployment', DEPLOYMENT],
  ['multi-doc stream', manifestStream(50 * 1024)],
];

console.log('input                  bytes   before µs   after µs   speed-up   fast path');
for (const [name, content] of inputs) {
  const before = microseconds(validateWithoutFastPath, content);
  const after = microseconds(validateDeploymentYaml, content);
  const taken = fastPathProvesValid(content, DEFAULT_YAML_LIMITS) ? 'proves valid' : 'declines';
  console.log(
    `${name.padEnd(20)} ${String(content.length).padStart(7)} ${before.toFixed(1).padStart(11)} ${after.toFixed(1).padStart(10)} ${`${(before / after).toFixed(0)}×`.padStart(10)}   ${taken}`,
  );
}
