import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { shouldReleaseMemory, startMemoryRelease, type MemoryReleased } from '../src/memory-release.ts';

const MiB = 1024 * 1024;
const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'memory-peak.ts');

describe('memory release after a load peak', () => {
  describe('the decision', () => {
    const options = { thresholdBytes: 128 * MiB, quietBelow: 0.25, regrowthBytes: 32 * MiB };

    it('releases when the process is quiet and above the threshold', () => {
      expect(shouldReleaseMemory({ rssBytes: 200 * MiB, utilisation: 0.01 }, 0, options)).to.equal(true);
    });

    it('waits while the event loop is busy (the pause would land on requests)', () => {
      expect(shouldReleaseMemory({ rssBytes: 200 * MiB, utilisation: 0.25 }, 0, options)).to.equal(false);
      expect(shouldReleaseMemory({ rssBytes: 200 * MiB, utilisation: 0.9 }, 0, options)).to.equal(false);
    });

    it('leaves a process at or below the threshold alone', () => {
      expect(shouldReleaseMemory({ rssBytes: 128 * MiB, utilisation: 0 }, 0, options)).to.equal(false);
    });

    it('does not collect again until RSS has grown since the last release', () => {
      expect(shouldReleaseMemory({ rssBytes: 170 * MiB, utilisation: 0 }, 150 * MiB, options)).to.equal(false);
      expect(shouldReleaseMemory({ rssBytes: 183 * MiB, utilisation: 0 }, 150 * MiB, options)).to.equal(true);
    });

    it('never releases with a threshold of 0', () => {
      expect(shouldReleaseMemory({ rssBytes: 4096 * MiB, utilisation: 0 }, 0, { ...options, thresholdBytes: 0 })).to.equal(false);
    });
  });

  it('gives a peak’s pooled heap pages back to the OS, without putting gc on the global', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--conditions=development', fixture], {
      cwd: path.dirname(fixture),
    });
    const { released, gcOnGlobal } = JSON.parse(stdout) as { released: MemoryReleased | null; gcOnGlobal: string };
    expect(released, 'the release ran').to.not.equal(null);
    // The fixture peaks well above 100 MiB of heap; without the release V8 keeps those pages resident.
    expect(released!.rssBeforeBytes - released!.rssAfterBytes).to.be.greaterThan(60 * MiB);
    expect(gcOnGlobal).to.equal('undefined');
  });

  it('is a no-op when turned off', () => {
    const reasons: string[] = [];
    const release = startMemoryRelease({ thresholdBytes: 0, onUnavailable: (reason) => reasons.push(reason) });
    expect(release.releaseNow()).to.equal(undefined);
    release.stop();
    expect(reasons).to.deep.equal([]);
  });
});
