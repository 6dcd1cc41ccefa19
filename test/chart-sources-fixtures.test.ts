import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import {
  fixtureChartDir,
  packChart,
  pushChart,
  startChartRepository,
  startOciRegistry,
  type ChartRepository,
  type OciRegistry,
  type PackagedChart,
} from '@brokkr/testkit';
import { opsTool } from '../scripts/lib/ops-tools.ts';

const exec = promisify(execFile);

/**
 * The chart sources the tests serve (@brokkr/testkit: startChartRepository, startOciRegistry with
 * pushChart, packChart) are what Helm itself accepts: `helm pull` gets the fixture chart from both,
 * byte for byte, through the registry's token dance, and `helm template` renders it. So the
 * tests of @brokkr/sources pull from real chart sources, not from ones that only our client reads.
 */
describe('chart source fixtures: Helm pulls and renders what the tests serve', function () {
  this.timeout(15 * 60_000); // a cold helm build takes minutes
  let helm: string;
  let demo: PackagedChart;
  let repo: ChartRepository;
  let registry: OciRegistry;
  let dir: string;

  before(async () => {
    helm = await opsTool('helm');
    demo = await packChart(fixtureChartDir('demo'));
    repo = await startChartRepository([demo]);
    registry = await startOciRegistry({ token: true });
    dir = await mkdtemp(path.join(os.tmpdir(), 'brokkr-helm-pull-'));
    await mkdir(path.join(dir, 'classic'));
    await mkdir(path.join(dir, 'oci'));
  });
  after(async () => {
    await repo?.close();
    await registry?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('helm pull --repo gets the chart from startChartRepository, byte for byte', async () => {
    await exec(helm, ['pull', 'demo', '--repo', repo.url, '--version', '0.1.0', '-d', path.join(dir, 'classic')]);
    expect((await readFile(path.join(dir, 'classic', 'demo-0.1.0.tgz'))).equals(demo.tgz)).to.equal(true);
  });

  it("helm pull oci:// gets the chart pushChart pushed, through the registry's token dance, byte for byte", async () => {
    const pushed = await pushChart(registry, demo.tgz, 'demo', '0.1.0');
    const { stdout } = await exec(helm, [
      'pull',
      `${pushed.repository}/demo`,
      '--version',
      '0.1.0',
      '--plain-http',
      '-d',
      path.join(dir, 'oci'),
    ]);
    expect(stdout).to.include(`Digest: ${pushed.manifestDigest}`);
    expect((await readFile(path.join(dir, 'oci', 'demo-0.1.0.tgz'))).equals(demo.tgz)).to.equal(true);
  });

  it('helm template renders the packaged chart with its values and the cluster version', async () => {
    const chart = path.join(dir, 'packaged.tgz');
    await writeFile(chart, demo.tgz);
    const { stdout } = await exec(helm, [
      'template',
      'web',
      chart,
      '--namespace',
      'team-a',
      '--kube-version',
      '1.33.0',
      '--set',
      'greeting=hi',
    ]);
    expect(stdout).to.include('name: web-demo');
    expect(stdout).to.include('greeting: "hi"');
    expect(stdout).to.include('kubeVersion: "v1.33.0"');
    expect(stdout).to.include('demo.brokkr.io/kube: recent');
  });
});
