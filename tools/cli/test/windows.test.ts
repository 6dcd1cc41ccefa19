import { expect } from 'chai';
import { useTestInfra } from '@brokkr/testkit';
import { buildCli, runCli, startHub, uniqueName, type TestHub } from './support.ts';

describe('brokkr windows (built CLI against a real hub)', () => {
  const infra = useTestInfra({ nats: true });
  let hub: TestHub;

  before(async function () {
    this.timeout(180_000);
    await buildCli();
    hub = await startHub(infra);
  });
  after(() => hub?.stop());

  const cli = (...args: string[]) => runCli(args, { env: hub.env() });

  it('creates a window, lists it, refuses a bad rule with the hub’s reason, and deletes it by name', async () => {
    const name = uniqueName('freeze');
    const rrule = 'DTSTART;TZID=Europe/Berlin:20260103T020000\\nRRULE:FREQ=WEEKLY;BYDAY=SA';
    const created = await cli(
      'windows',
      'create',
      name,
      '--type',
      'deny',
      '--rrule',
      rrule,
      '--duration',
      'PT2H',
      '--agent-label',
      'env=prod',
      '-o',
      'json',
    );
    expect(created.code, created.stderr).to.equal(0);
    const window = JSON.parse(created.stdout);
    expect(window).to.deep.include({ name, type: 'deny', duration_seconds: 7200, agent_labels: ['env=prod'] });
    expect(window.rrule).to.equal(rrule.replace('\\n', '\n'));

    const listed = await cli('windows', 'list');
    expect(listed.code, listed.stderr).to.equal(0);
    const [header, ...rows] = listed.stdout.trimEnd().split('\n');
    expect(header).to.match(/^NAME\s+TYPE\s+DURATION\s+AGENTS\s+GATES\s+BYPASSED-UNTIL\s+ID$/);
    expect(rows.find((r) => r.startsWith(name)))
      .to.include('deny')
      .and.include('7200s')
      .and.include('env=prod')
      .and.include(window.id);

    const bad = await cli(
      'windows',
      'create',
      uniqueName('bad'),
      '--type',
      'deny',
      '--rrule',
      'DTSTART:20260103T020000\\nRRULE:FREQ=DAILY',
      '--duration',
      '60',
    );
    expect(bad.code).to.not.equal(0);
    expect(bad.stderr).to.include('TZID');

    const deleted = await cli('windows', 'delete', name);
    expect(deleted.code, deleted.stderr).to.equal(0);
    expect((await hub.admin.get(`/maintenance-windows/${window.id}`)).status).to.equal(404);
  });
});
