import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { scriptsDir } from '@brokkr/infra';

const exec = promisify(execFile);

export type OpsTool = 'helm' | 'promtool';

/**
 * The path of helm or promtool, built from the Go module proxy by scripts/build-ops-tools.sh the
 * first time (minutes; its progress lines go to our stderr) and cached under ~/.cache/brokkr/bin.
 */
export async function opsTool(tool: OpsTool): Promise<string> {
  const script = path.join(scriptsDir, 'build-ops-tools.sh');
  const child = exec('bash', [script, tool], { maxBuffer: 16 * 1024 * 1024 });
  child.child.stderr?.pipe(process.stderr);
  const { stdout } = await child;
  const line = stdout.split('\n').find((l) => l.startsWith(`${tool.toUpperCase()}=`));
  if (!line) throw new Error(`${script} ${tool} printed no ${tool.toUpperCase()}= line`);
  return line.slice(tool.length + 1);
}
