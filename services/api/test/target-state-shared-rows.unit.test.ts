import { expect } from 'chai';
import type { DeploymentObjectRow } from '../src/domain/deployment-object-row.ts';
import { SharedRows } from '../src/delivery/target-state/shared-rows.ts';

/** The target-state cache keeps one copy of each object for every agent's answer (shared-rows.ts). */
describe('target-state cache: one copy of each object', () => {
  const row = (id: string, deletedAt: Date | null = null): DeploymentObjectRow => ({
    id,
    created_at: new Date(0),
    updated_at: new Date(0),
    deleted_at: deletedAt,
    sequence_id: 1,
    stack_id: 's',
    yaml_content: 'a: 1\n',
    yaml_checksum: 'c',
    submitted_at: new Date(0),
    is_deletion_marker: false,
  });

  it('gives every read of the same object the first copy read', () => {
    const shared = new SharedRows();
    const first = shared.share(row('a'));
    expect(shared.share(row('a'))).to.equal(first);
    expect(shared.share(row('b'))).to.not.equal(first);
  });

  it('keeps a retired copy apart from the live one', () => {
    const shared = new SharedRows();
    const live = shared.share(row('a'));
    const retired = shared.share(row('a', new Date(1)));
    expect(retired).to.not.equal(live);
    expect(retired.deleted_at).to.deep.equal(new Date(1));
  });

  it('forgets the oldest object beyond its bound', () => {
    const shared = new SharedRows(2);
    const a = shared.share(row('a'));
    shared.share(row('b'));
    shared.share(row('c'));
    expect(shared.size).to.equal(2);
    expect(shared.share(row('a'))).to.not.equal(a);
  });
});
