import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { freePort, useTestInfra } from '@brokkr/testkit';
import { buildCli, runCli, startHub, type TestHub } from './support.ts';

describe('brokkr connection settings: flags, then BROKKR_URL/BROKKR_PAK, then the config file', () => {
  const infra = useTestInfra({ nats: true });
  let hub: TestHub;
  let deadUrl: string;
  let dir: string;
  const badPak = 'brokkr_BRbad000_thisIsNotTheAdminPak';

  before(async function () {
    this.timeout(180_000);
    await buildCli();
    hub = await startHub(infra);
    deadUrl = `http://127.0.0.1:${await freePort()}`; // nothing listens there
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'brokkr-cli-config-'));
  });

  after(async () => {
    await hub?.stop();
  });

  async function configFile(name: string, content: string): Promise<string> {
    const file = path.join(dir, name);
    await fs.writeFile(file, content);
    return file;
  }

  const getAgents = (args: string[], env: Record<string, string>) => runCli(['get', 'agents', '-o', 'json', ...args], { env });

  it('flags win over the environment, which wins over the config file', async () => {
    const file = await configFile('all-wrong.yaml', `url: ${deadUrl}\npak: ${badPak}\n`);
    const viaFlags = await getAgents(['--url', hub.url, '--pak', hub.adminPak], {
      BROKKR_URL: deadUrl,
      BROKKR_PAK: badPak,
      BROKKR_CONFIG: file,
    });
    expect(viaFlags.code, viaFlags.stderr).to.equal(0);
    const viaEnv = await getAgents([], { ...hub.env(), BROKKR_CONFIG: file });
    expect(viaEnv.code, viaEnv.stderr).to.equal(0);
    // The environment's wrong PAK is used, not the file's right one.
    const right = await configFile('right.yaml', `url: ${hub.url}\npak: ${hub.adminPak}\n`);
    const envPakWins = await getAgents([], { BROKKR_PAK: badPak, BROKKR_CONFIG: right });
    expect(envPakWins.code).to.equal(1);
    expect(envPakWins.stderr).to.match(/^unauthorized: /m);
  });

  it('--pak on the command line works but warns (ps and shell history show it); BROKKR_PAK and the config file do not warn', async () => {
    const viaFlag = await getAgents(['--url', hub.url, '--pak', hub.adminPak], {});
    expect(viaFlag.code, viaFlag.stderr).to.equal(0);
    expect(JSON.parse(viaFlag.stdout)).to.deep.equal((await hub.admin.get('/agents')).body);
    expect(viaFlag.stderr).to.match(/^warning: --pak shows the PAK to other users of this machine \(ps\)/m);
    expect(viaFlag.stderr).to.include('set BROKKR_PAK or put "pak: …" in');
    expect(viaFlag.stderr, 'the warning never repeats the PAK').to.not.include(hub.adminPak);
    const viaEnv = await getAgents([], hub.env());
    expect(viaEnv.code, viaEnv.stderr).to.equal(0);
    expect(viaEnv.stderr).to.equal('');
    const file = await configFile('pak-only.yaml', `pak: ${hub.adminPak}\n`);
    const viaFile = await getAgents(['--url', hub.url], { BROKKR_CONFIG: file });
    expect(viaFile.code, viaFile.stderr).to.equal(0);
    expect(viaFile.stderr).to.equal('');
  });

  it('reads the config file from BROKKR_CONFIG, and from ~/.config/brokkr/config.yaml by default', async () => {
    const file = await configFile('config.yaml', `# brokkr CLI\nurl: ${hub.url}/api/v1\npak: ${hub.adminPak}\n`);
    expect((await getAgents([], { BROKKR_CONFIG: file })).code).to.equal(0);
    const home = await fs.mkdtemp(path.join(os.tmpdir(), 'brokkr-cli-home-'));
    await fs.mkdir(path.join(home, '.config', 'brokkr'), { recursive: true });
    await fs.copyFile(file, path.join(home, '.config', 'brokkr', 'config.yaml'));
    const res = await runCli(['get', 'stacks', '-o', 'json'], { env: { HOME: home } });
    expect(res.code, res.stderr).to.equal(0);
    expect(JSON.parse(res.stdout)).to.deep.equal((await hub.admin.get('/stacks')).body);
  });

  it('says what is missing and where it may come from', async () => {
    const noUrl = await getAgents([], { BROKKR_PAK: hub.adminPak });
    expect(noUrl.code).to.equal(1);
    expect(noUrl.stderr).to.include('no hub URL: pass --url, set BROKKR_URL, or put "url: http://…" in');
    const noPak = await getAgents([], { BROKKR_URL: hub.url });
    expect(noPak.code).to.equal(1);
    expect(noPak.stderr).to.include('no PAK: pass --pak, set BROKKR_PAK');
  });

  it('rejects a missing BROKKR_CONFIG file, a malformed one, a bad URL, and an unreachable hub', async () => {
    const missing = await getAgents([], { BROKKR_CONFIG: path.join(dir, 'nope.yaml') });
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.include('cannot read the config file');
    const malformed = await getAgents([], { BROKKR_CONFIG: await configFile('bad.yaml', 'url: [\n') });
    expect(malformed.stderr).to.include('is not valid YAML');
    const wrongType = await getAgents([], { BROKKR_CONFIG: await configFile('num.yaml', 'url: 3000\n') });
    expect(wrongType.stderr).to.include('url must be a string');
    const badUrl = await getAgents([], { BROKKR_URL: 'ftp://example', BROKKR_PAK: hub.adminPak });
    expect(badUrl.stderr).to.include('use http:// or https://');
    const down = await getAgents([], { BROKKR_URL: deadUrl, BROKKR_PAK: hub.adminPak });
    expect(down.code).to.equal(1);
    expect(down.stderr).to.include(`cannot reach the hub at ${deadUrl}`);
  });
});
